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

class Writer {
 public:
  explicit Writer(gzFile file) : file_(file) {}

  bool Write(const void* data, size_t size) {
    if (size == 0) return true;
    return gzwrite(file_, data, static_cast<unsigned>(size)) == static_cast<int>(size);
  }
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

  gzFile file_;
};

// Why a write to `file` failed: the system's reason when the file could not be written (a full
// disk: "No space left on device"), else zlib's. `saved_errno` is errno right after the failure.
std::string GzWriteError(gzFile file, int saved_errno) {
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  if (code == Z_ERRNO && saved_errno != 0) return std::strerror(saved_errno);
  if (code != Z_OK && message != nullptr && *message != '\0') return message;
  return "compression failed";
}

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

// Writes each entry's header and a file's content into `file` (the archive `out`); closes `file`
// when it fails.
absl::Status WriteEntries(gzFile file, const fs::path& out, const std::vector<Entry>& entries) {
  Writer writer(file);
  std::vector<char> buffer(1 << 16);
  const auto write_failed = [&] {
    const std::string why = GzWriteError(file, errno);
    gzclose(file);
    return Error("write", out, why);
  };
  for (const Entry& e : entries) {
    if (!writer.EntryHeader(e)) return write_failed();
    if (e.type != '0') continue;
    std::ifstream in(e.path, std::ios::binary);
    if (!in) {
      gzclose(file);
      return Error("read", e.path, std::strerror(errno));
    }
    if (!writer.Content(in, e.size, buffer) || !writer.Pad(e.size)) return write_failed();
  }
  return absl::OkStatus();
}

// The two zero blocks that end an archive, then closes `file`.
absl::Status EndArchive(gzFile file, const fs::path& out) {
  static const char end[2 * kBlock] = {};
  errno = 0;
  const bool ended = Writer(file).Write(end, sizeof(end));
  const std::string why = ended ? std::string() : GzWriteError(file, errno);
  errno = 0;
  if (const int closed = gzclose(file); closed != Z_OK || !ended) {
    // gzclose flushes what is buffered: a full disk shows there first.
    if (!why.empty()) return Error("write", out, why);
    return Error(
        "write", out,
        closed == Z_ERRNO && errno != 0 ? std::strerror(errno) : std::string("compression failed"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteTarGz(const fs::path& dir, const fs::path& out) {
  return WriteTarGz(std::vector<fs::path>{dir}, out);
}

absl::Status WriteTarGz(const std::vector<fs::path>& dirs, const fs::path& out) {
  if (dirs.empty()) return absl::InvalidArgumentError("no folder to archive");
  ASSIGN_OR_RETURN(const std::vector<Entry> entries, CollectEntries(dirs));
  gzFile file = gzopen(out.c_str(), "wb6");
  if (file == nullptr) return Error("write", out, std::strerror(errno));
  RETURN_IF_ERROR(WriteEntries(file, out, entries));
  return EndArchive(file, out);
}

}  // namespace amt::worker
