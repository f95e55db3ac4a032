#include "worker/tar_gz.h"

#include <sys/stat.h>
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
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace amt::worker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBlock = 512;
using Header = std::array<char, kBlock>;

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

absl::Status Error(const std::string& what, const fs::path& path, const std::string& why) {
  return absl::InternalError("cannot " + what + " " + path.string() + ": " + why);
}

}  // namespace

absl::Status WriteTarGz(const fs::path& dir, const fs::path& out) {
  return WriteTarGz(std::vector<fs::path>{dir}, out);
}

absl::Status WriteTarGz(const std::vector<fs::path>& dirs, const fs::path& out) {
  if (dirs.empty()) return absl::InvalidArgumentError("no folder to archive");
  Entry root;
  root.name = "./";
  root.type = '5';
  root.path = dirs.front();
  if (::lstat(root.path.c_str(), &root.st) != 0) {
    return Error("read", root.path, std::strerror(errno));
  }
  // By relative path, in fs::path order (a folder's entries right after it); a later folder's
  // entry replaces an earlier one of the same name.
  std::map<fs::path, Entry> members;
  std::error_code ec;
  for (const fs::path& dir : dirs) {
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
  }
  std::vector<Entry> entries;
  entries.reserve(members.size() + 1);
  entries.push_back(std::move(root));
  for (auto& [relative, e] : members) entries.push_back(std::move(e));

  gzFile file = gzopen(out.c_str(), "wb6");
  if (file == nullptr) return Error("write", out, std::strerror(errno));
  Writer writer(file);
  std::vector<char> buffer(1 << 16);
  for (const Entry& e : entries) {
    if (!writer.EntryHeader(e)) {
      gzclose(file);
      return Error("write", out, "compression failed");
    }
    if (e.type != '0') continue;
    std::ifstream in(e.path, std::ios::binary);
    if (!in) {
      gzclose(file);
      return Error("read", e.path, std::strerror(errno));
    }
    uint64_t left = e.size;  // the size in the header: a file growing meanwhile is cut there
    while (left > 0) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
      in.read(buffer.data(), static_cast<std::streamsize>(want));
      const size_t got = static_cast<size_t>(in.gcount());
      if (got == 0) {
        // Shrunk meanwhile: pad with zeros to the size promised in the header.
        std::fill(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(want), 0);
      }
      const size_t n = got == 0 ? want : got;
      if (!writer.Write(buffer.data(), n)) {
        gzclose(file);
        return Error("write", out, "compression failed");
      }
      left -= n;
    }
    if (!writer.Pad(e.size)) {
      gzclose(file);
      return Error("write", out, "compression failed");
    }
  }
  static const char end[2 * kBlock] = {};
  const bool ended = writer.Write(end, sizeof(end));
  if (gzclose(file) != Z_OK || !ended) return Error("write", out, "compression failed");
  return absl::OkStatus();
}

namespace {

// Reads the archive block by block through zlib (which reads plain files as they are too).
class Reader {
 public:
  explicit Reader(gzFile file) : file_(file) {}
  // Exactly `size` bytes, or false at a short read.
  bool Read(void* data, size_t size) {
    size_t done = 0;
    while (done < size) {
      const int n = gzread(file_, static_cast<char*>(data) + done,
                           static_cast<unsigned>(std::min<size_t>(size - done, 1 << 20)));
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  bool Skip(uint64_t size) {
    std::array<char, 1 << 16> buffer{};
    while (size > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, buffer.size()));
      if (!Read(buffer.data(), chunk)) return false;
      size -= chunk;
    }
    return true;
  }

 private:
  gzFile file_;
};

uint64_t Padding(uint64_t size) { return (kBlock - size % kBlock) % kBlock; }

// An octal or base-256 number field; nullopt when it is neither.
std::optional<uint64_t> GetNumber(const char* field, size_t width) {
  if (static_cast<unsigned char>(field[0]) & 0x80) {
    uint64_t value = 0;
    for (size_t i = 1; i < width; ++i) value = (value << 8) | static_cast<unsigned char>(field[i]);
    return value;
  }
  uint64_t value = 0;
  size_t i = 0;
  while (i < width && (field[i] == ' ' || field[i] == '\0')) ++i;
  bool any = false;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i) {
    value = value * 8 + static_cast<uint64_t>(field[i] - '0');
    any = true;
  }
  if (!any) return uint64_t{0};
  return value;
}

std::string GetString(const char* field, size_t width) {
  return std::string(field, strnlen(field, width));
}

bool ChecksumMatches(const Header& header) {
  const std::optional<uint64_t> stored = GetNumber(header.data() + 148, 8);
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
  }
  return stored.has_value() && *stored == sum;
}

// "len key=value\n" records of a pax extended header.
std::map<std::string, std::string> ParsePax(const std::string& data) {
  std::map<std::string, std::string> records;
  size_t at = 0;
  while (at < data.size()) {
    const size_t space = data.find(' ', at);
    if (space == std::string::npos) break;
    size_t length = 0;
    for (size_t i = at; i < space; ++i) {
      if (data[i] < '0' || data[i] > '9') return records;
      length = length * 10 + static_cast<size_t>(data[i] - '0');
    }
    if (length == 0 || at + length > data.size()) break;
    const std::string record = data.substr(space + 1, at + length - space - 2);  // no "\n"
    const size_t equals = record.find('=');
    if (equals != std::string::npos) records[record.substr(0, equals)] = record.substr(equals + 1);
    at += length;
  }
  return records;
}

// The member's path relative to the destination, or nullopt when it would leave it.
std::optional<fs::path> SafeRelative(const std::string& name) {
  if (name.empty() || name.front() == '/') return std::nullopt;
  fs::path relative;
  for (const fs::path& part : fs::path(name)) {
    const std::string piece = part.string();
    if (piece.empty() || piece == ".") continue;
    if (piece == "..") return std::nullopt;
    relative /= part;
  }
  return relative;
}

// True when no folder between `dest` and `path` (exclusive) is a symbolic link: a member must
// not be written through a link an earlier member made.
bool NoLinkOnTheWay(const fs::path& dest, const fs::path& relative) {
  fs::path at = dest;
  for (auto it = relative.begin(); it != relative.end(); ++it) {
    if (std::next(it) == relative.end()) break;
    at /= *it;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(at, ec))) return false;
  }
  return true;
}

}  // namespace

absl::Status ExtractTarGz(const fs::path& archive, const fs::path& dest) {
  gzFile file = gzopen(archive.c_str(), "rb");
  if (file == nullptr) return Error("open", archive, std::strerror(errno));
  struct Closer {
    gzFile file;
    ~Closer() { gzclose(file); }
  } closer{file};
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return Error("create", dest, ec.message());
  const auto refuse = [&](const std::string& why) {
    return absl::InvalidArgumentError("cannot unpack " + archive.string() + ": " + why);
  };

  Reader reader(file);
  std::map<std::string, std::string> pax;  // the next member's extended header
  std::string long_name;
  std::string long_link;
  bool saw_member = false;
  for (;;) {
    Header header{};
    if (!reader.Read(header.data(), kBlock)) {
      if (!saw_member) return refuse("it is not a tar archive (or it is empty)");
      return refuse("the archive ends in the middle (no end-of-archive blocks)");
    }
    if (std::all_of(header.begin(), header.end(), [](char c) { return c == 0; })) break;
    if (!ChecksumMatches(header)) return refuse("a header's checksum is wrong: not a tar archive");
    saw_member = true;
    const char type = header[156] == '\0' ? '0' : header[156];
    uint64_t size = GetNumber(header.data() + 124, 12).value_or(0);
    if (pax.count("size") > 0) size = std::strtoull(pax["size"].c_str(), nullptr, 10);

    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      if (size > (64u << 20)) return refuse("an extended header over 64 MiB");
      std::string data(size, '\0');
      if (!reader.Read(data.data(), size) || !reader.Skip(Padding(size))) {
        return refuse("the archive ends in the middle of a member");
      }
      if (type == 'x') pax = ParsePax(data);
      if (type == 'L') long_name = data.substr(0, strnlen(data.c_str(), data.size()));
      if (type == 'K') long_link = data.substr(0, strnlen(data.c_str(), data.size()));
      continue;  // 'g': global headers carry nothing we use
    }

    std::string name = GetString(header.data(), 100);
    const std::string prefix = GetString(header.data() + 345, 155);
    if (!prefix.empty() && std::memcmp(header.data() + 257, "ustar", 5) == 0) {
      name = prefix + "/" + name;
    }
    if (!long_name.empty()) name = long_name;
    if (pax.count("path") > 0) name = pax["path"];
    std::string link = GetString(header.data() + 157, 100);
    if (!long_link.empty()) link = long_link;
    if (pax.count("linkpath") > 0) link = pax["linkpath"];
    pax.clear();
    long_name.clear();
    long_link.clear();
    const mode_t mode = static_cast<mode_t>(GetNumber(header.data() + 100, 8).value_or(0644));

    const std::optional<fs::path> relative = SafeRelative(name);
    if (!relative.has_value())
      return refuse("member \"" + name + "\" would land outside " + dest.string());
    const fs::path target = dest / *relative;
    if (relative->empty()) {  // "./" itself
      if (!reader.Skip(size + Padding(size))) return refuse("the archive ends in the middle");
      continue;
    }
    if (!NoLinkOnTheWay(dest, *relative)) {
      return refuse("member \"" + name + "\" would be written through a symbolic link");
    }
    fs::create_directories(target.parent_path(), ec);
    if (ec) return Error("create", target.parent_path(), ec.message());

    if (type == '5') {
      fs::create_directories(target, ec);
      if (ec) return Error("create", target, ec.message());
      ::chmod(target.c_str(), (mode & 07777) | S_IRWXU);
    } else if (type == '2') {
      fs::remove(target, ec);
      fs::create_symlink(link, target, ec);
      if (ec) return Error("create", target, ec.message());
    } else if (type == '1') {
      const std::optional<fs::path> source = SafeRelative(link);
      if (!source.has_value() || !NoLinkOnTheWay(dest, *source)) {
        return refuse("hard link \"" + name + "\" points outside " + dest.string());
      }
      fs::remove(target, ec);
      fs::create_hard_link(dest / *source, target, ec);
      if (ec) return Error("create", target, ec.message());
    } else if (type == '0' || type == '7') {
      fs::remove(target, ec);
      std::ofstream out(target, std::ios::binary | std::ios::trunc);
      if (!out) return Error("create", target, std::strerror(errno));
      std::array<char, 1 << 16> buffer{};
      uint64_t left = size;
      while (left > 0) {
        const size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
        if (!reader.Read(buffer.data(), chunk)) return refuse("the archive ends in the middle");
        out.write(buffer.data(), static_cast<std::streamsize>(chunk));
        left -= chunk;
      }
      out.close();
      if (!out) return Error("write", target, std::strerror(errno));
      ::chmod(target.c_str(), (mode & 07777) | S_IRUSR | S_IWUSR);
      if (!reader.Skip(Padding(size))) return refuse("the archive ends in the middle");
      continue;
    }
    // Other types (devices, FIFOs): skipped with their data, if any.
    if (!reader.Skip(size + Padding(size))) return refuse("the archive ends in the middle");
  }
  return absl::OkStatus();
}

}  // namespace amt::worker
