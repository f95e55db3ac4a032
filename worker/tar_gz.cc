#include "worker/tar_gz.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "worker/tar_internal.h"

// Writing archives (WriteTarGz); ExtractTarGz is in tar_extract.cc.
namespace amt::worker {
namespace {

namespace fs = std::filesystem;
using tar_internal::Error;
using tar_internal::Header;
using tar_internal::kBlock;

// Writes `value` into `field` of `width` bytes: octal digits and a NUL when they fit in
// width - 1 digits, else GNU's base-256 form (first byte 0x80, big-endian value).
void PutNumber(char* field, size_t width, uint64_t value) {
  const uint64_t octal_limit = width - 1 >= 22 ? UINT64_MAX : (uint64_t{1} << (3 * (width - 1)));
  if (value < octal_limit) {
    std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1),
                  static_cast<unsigned long long>(value));
    return;
  }
  std::memset(field, 0, width);
  field[0] = static_cast<char>(0x80);
  for (size_t i = width - 1; i > 0 && value > 0; --i, value >>= 8) {
    field[i] = static_cast<char>(value & 0xFF);
  }
}

void PutString(char* field, size_t width, const std::string& text) {
  std::memcpy(field, text.data(), std::min(width, text.size()));
}

struct Entry {
  std::string name;  // "./a/b", with a trailing '/' for directories
  char type = '0';   // '0' file, '5' directory, '2' symlink
  uint64_t size = 0;
  std::string link;
  struct stat st {};
  fs::path path;
};

// A gzip file written through zlib's deflate with a window no larger than the archive: zlib's
// gzopen always takes a 32 KiB window and about 256 KiB of state, and setting those up (and
// zeroing the hash table) was most of packing a small model folder: one file of 250 bytes took
// 0.14-0.17 ms with gzopen, 0.05-0.06 ms with a window sized to it (measured on this 2-core
// machine at load 5). No match reaches back before the input's start, so the smaller window
// compresses about as well (tar_gz_test: within 2% and 16 bytes of gzip -6). The system's errno
// is kept when a write fails (a full disk: "No space left on device").
class GzipOut {
 public:
  // `input_bytes`: how much will be written (a hint for the window; more is fine).
  GzipOut(const fs::path& out, uint64_t input_bytes) {
    int window_bits = 9;  // zlib's smallest for deflate
    while (window_bits < MAX_WBITS && (uint64_t{1} << window_bits) < input_bytes) ++window_bits;
    const int mem_level = std::clamp(window_bits - 7, 1, 8);  // zlib's 8 at the full window
    constexpr int kGzipHeader = 16;  // windowBits + 16: a gzip wrapper, not zlib's
    if (deflateInit2(&stream_, 6, Z_DEFLATED, window_bits + kGzipHeader, mem_level,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      error_ = "compression failed";
      return;
    }
    initialised_ = true;
    fd_ = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) error_ = std::strerror(errno);
  }
  ~GzipOut() {
    if (initialised_) deflateEnd(&stream_);
    if (fd_ >= 0) ::close(fd_);
  }
  GzipOut(const GzipOut&) = delete;
  GzipOut& operator=(const GzipOut&) = delete;

  // Why the file cannot be written, empty while it can.
  const std::string& error() const { return error_; }

  bool Write(const void* data, size_t size) { return Deflate(data, size, Z_NO_FLUSH); }
  // Ends the gzip stream and closes the file.
  bool Close() {
    if (!Deflate(nullptr, 0, Z_FINISH)) return false;
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) error_ = std::strerror(errno);
    return error_.empty();
  }

 private:
  bool Deflate(const void* data, size_t size, int flush) {
    if (!error_.empty()) return false;
    stream_.next_in = static_cast<Bytef*>(const_cast<void*>(data));
    stream_.avail_in = static_cast<uInt>(size);
    int result = Z_OK;
    do {
      stream_.next_out = buffer_.data() + used_;
      stream_.avail_out = static_cast<uInt>(buffer_.size() - used_);
      result = deflate(&stream_, flush);
      if (result == Z_STREAM_ERROR) {
        error_ = "compression failed";
        return false;
      }
      used_ = buffer_.size() - stream_.avail_out;
      if ((used_ == buffer_.size() || (flush == Z_FINISH && result == Z_STREAM_END)) && !Drain()) {
        return false;
      }
    } while (stream_.avail_in > 0 || (flush == Z_FINISH && result != Z_STREAM_END));
    return true;
  }
  // Writes the compressed bytes buffered so far.
  bool Drain() {
    size_t done = 0;
    while (done < used_) {
      const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? std::strerror(errno) : std::string("compression failed");
        return false;
      }
      done += static_cast<size_t>(n);
    }
    used_ = 0;
    return true;
  }

  z_stream stream_{};
  bool initialised_ = false;
  int fd_ = -1;
  std::array<Bytef, 1 << 14> buffer_{};
  size_t used_ = 0;
  std::string error_;
};

class Writer {
 public:
  explicit Writer(GzipOut& file) : file_(file) {}

  bool Write(const void* data, size_t size) { return size == 0 || file_.Write(data, size); }
  // `size` bytes of `in` (a file's content, as much as its header promised): a file grown
  // meanwhile is cut there, one shrunk is padded with zeros.
  bool Content(std::istream& in, uint64_t size, std::vector<char>& buffer) {
    uint64_t left = size;
    while (left > 0) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
      in.read(buffer.data(), static_cast<std::streamsize>(want));
      const size_t got = static_cast<size_t>(in.gcount());
      if (got == 0) {
        std::fill(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(want), 0);
      }
      const size_t n = got == 0 ? want : got;
      if (!Write(buffer.data(), n)) return false;
      left -= n;
    }
    return true;
  }
  bool Pad(uint64_t size) {
    static const char zeros[kBlock] = {};
    const size_t rest = size % kBlock;
    return rest == 0 || Write(zeros, kBlock - rest);
  }

  // A GNU long-name ('L') or long-link ('K') record carrying `text` for the next header.
  bool LongRecord(char type, const std::string& text) {
    Header h{};
    PutString(h.data(), 100, "././@LongLink");
    PutNumber(h.data() + 100, 8, 0644);
    PutNumber(h.data() + 108, 8, 0);
    PutNumber(h.data() + 116, 8, 0);
    PutNumber(h.data() + 124, 12, text.size() + 1);
    PutNumber(h.data() + 136, 12, 0);
    h[156] = type;
    Finish(h);
    return Write(h.data(), kBlock) && Write(text.c_str(), text.size() + 1) && Pad(text.size() + 1);
  }

  bool EntryHeader(const Entry& e) {
    Header h{};
    // ustar splits a long name at a '/' into prefix (155) and name (100); else GNU 'L'.
    std::string name = e.name;
    std::string prefix;
    if (name.size() > 100) {
      const size_t cut = name.rfind('/', name.size() - 2);  // not the directory's trailing '/'
      if (cut != std::string::npos && cut <= 155 && name.size() - cut - 1 <= 100 && cut > 0) {
        prefix = name.substr(0, cut);
        name = name.substr(cut + 1);
      } else {
        if (!LongRecord('L', e.name)) return false;
        name = e.name.substr(0, 100);
      }
    }
    if (e.link.size() > 100 && !LongRecord('K', e.link)) return false;
    PutString(h.data(), 100, name);
    PutNumber(h.data() + 100, 8, e.st.st_mode & 07777);
    PutNumber(h.data() + 108, 8, e.st.st_uid);
    PutNumber(h.data() + 116, 8, e.st.st_gid);
    PutNumber(h.data() + 124, 12, e.size);
    PutNumber(h.data() + 136, 12, static_cast<uint64_t>(std::max<int64_t>(0, e.st.st_mtime)));
    h[156] = e.type;
    PutString(h.data() + 157, 100, e.link);
    std::memcpy(h.data() + 257, "ustar", 6);  // magic with its NUL
    std::memcpy(h.data() + 263, "00", 2);
    PutString(h.data() + 345, 155, prefix);
    Finish(h);
    return Write(h.data(), kBlock);
  }

 private:
  // The checksum: the sum of the header's bytes with the checksum field read as spaces.
  static void Finish(Header& h) {
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (char c : h) sum += static_cast<unsigned char>(c);
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    h[155] = ' ';
  }

  GzipOut& file_;
};

// Adds `dir`'s files, folders and links to `members`, by path relative to `dir` (replacing an
// earlier folder's entry of the same name).
absl::Status AddMembers(const fs::path& dir, std::map<fs::path, Entry>& members) {
  std::error_code ec;
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    paths.push_back(it->path());
  }
  if (ec) return Error("list", dir, ec.message());
  for (const fs::path& path : paths) {
    Entry e;
    e.path = path;
    const fs::path relative = path.lexically_relative(dir);
    e.name = "./" + relative.generic_string();
    if (::lstat(path.c_str(), &e.st) != 0) return Error("read", path, std::strerror(errno));
    if (S_ISDIR(e.st.st_mode)) {
      e.type = '5';
      e.name += '/';
    } else if (S_ISLNK(e.st.st_mode)) {
      e.type = '2';
      e.link = fs::read_symlink(path, ec).string();
      if (ec) return Error("read the link", path, ec.message());
    } else if (S_ISREG(e.st.st_mode)) {
      e.size = static_cast<uint64_t>(e.st.st_size);
    } else {
      continue;  // sockets, FIFOs, devices: not archived
    }
    members.insert_or_assign(relative, std::move(e));
  }
  return absl::OkStatus();
}

// The archive's entries: "./" (the first folder's attributes), then every folder's members by
// relative path, in fs::path order (a folder's entries right after it).
absl::StatusOr<std::vector<Entry>> CollectEntries(const std::vector<fs::path>& dirs) {
  Entry root;
  root.name = "./";
  root.type = '5';
  root.path = dirs.front();
  if (::lstat(root.path.c_str(), &root.st) != 0) {
    return Error("read", root.path, std::strerror(errno));
  }
  std::map<fs::path, Entry> members;
  for (const fs::path& dir : dirs) RETURN_IF_ERROR(AddMembers(dir, members));
  std::vector<Entry> entries;
  entries.reserve(members.size() + 1);
  entries.push_back(std::move(root));
  for (auto& [relative, e] : members) entries.push_back(std::move(e));
  return entries;
}

// What the archive of `entries` holds before compression: a header per entry (and a GNU record
// per long name), the files' padded contents, the two end blocks.
uint64_t ArchiveBytes(const std::vector<Entry>& entries) {
  uint64_t bytes = 2 * kBlock;
  for (const Entry& e : entries) {
    bytes += kBlock + (e.size + kBlock - 1) / kBlock * kBlock;
    if (e.name.size() > 100) bytes += 2 * kBlock + e.name.size();
    if (e.link.size() > 100) bytes += 2 * kBlock + e.link.size();
  }
  return bytes;
}

// Writes each entry's header and a file's content, then the two zero blocks that end an
// archive, into `file` (the archive `out`).
absl::Status WriteEntries(GzipOut& file, const fs::path& out, const std::vector<Entry>& entries) {
  Writer writer(file);
  std::vector<char> buffer(static_cast<size_t>(std::min<uint64_t>(ArchiveBytes(entries), 1 << 16)));
  for (const Entry& e : entries) {
    if (!writer.EntryHeader(e)) return Error("write", out, file.error());
    if (e.type != '0') continue;
    std::ifstream in(e.path, std::ios::binary);
    if (!in) return Error("read", e.path, std::strerror(errno));
    if (!writer.Content(in, e.size, buffer) || !writer.Pad(e.size)) {
      return Error("write", out, file.error());
    }
  }
  static const char end[2 * kBlock] = {};
  if (!writer.Write(end, sizeof(end)) || !file.Close()) return Error("write", out, file.error());
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteTarGz(const fs::path& dir, const fs::path& out) {
  return WriteTarGz(std::vector<fs::path>{dir}, out);
}

absl::Status WriteTarGz(const std::vector<fs::path>& dirs, const fs::path& out) {
  if (dirs.empty()) return absl::InvalidArgumentError("no folder to archive");
  ASSIGN_OR_RETURN(const std::vector<Entry> entries, CollectEntries(dirs));
  GzipOut file(out, ArchiveBytes(entries));
  if (!file.error().empty()) return Error("write", out, file.error());
  return WriteEntries(file, out, entries);
}

}  // namespace amt::worker
