// Unpacking archives (ExtractTarGz of tar_gz.h); writing them is in tar_gz.cc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "worker/tar_gz.h"
#include "worker/tar_internal.h"

namespace amt::worker {
namespace {

namespace fs = std::filesystem;
using tar_internal::Error;
using tar_internal::Header;
using tar_internal::kBlock;

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

// The member's path relative to the destination as its segments ("." and empty ones dropped),
// or nullopt when it would leave it (absolute, or a ".." segment).
std::optional<std::vector<std::string>> SafeSegments(const std::string& name) {
  if (name.empty() || name.front() == '/') return std::nullopt;
  std::vector<std::string> segments;
  size_t at = 0;
  while (at <= name.size()) {
    const size_t slash = std::min(name.find('/', at), name.size());
    std::string piece = name.substr(at, slash - at);
    at = slash + 1;
    if (piece.empty() || piece == ".") continue;
    if (piece == "..") return std::nullopt;
    segments.push_back(std::move(piece));
  }
  return segments;
}

// A descriptor closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { Reset(); }
  int get() const { return fd_; }
  // Closes the descriptor; the close's errno (0 when it succeeded): on some file systems a
  // full disk is only reported there.
  int Close() {
    if (fd_ < 0) return 0;
    const int rc = ::close(std::exchange(fd_, -1));
    return rc == 0 ? 0 : errno;
  }

 private:
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

// A file-system error: ResourceExhausted for a full disk or quota (callers tell the user to
// make room), Internal otherwise.
absl::Status SystemError(const std::string& what, const fs::path& path, int error) {
  const std::string message = "cannot " + what + " " + path.string() + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

// Makes the members of one archive beneath one open folder. Every path is walked from that
// folder's descriptor a segment at a time and never through a symbolic link, so no member
// (nor any earlier member's link) can make it write, create or chmod anything outside.
class Extractor {
 public:
  Extractor(UniqueFd dest_fd, fs::path dest, const fs::path& archive, const ExtractOptions& options)
      : dest_fd_(std::move(dest_fd)),
        dest_(std::move(dest)),
        archive_(archive),
        options_(options) {}

  absl::Status Refuse(const std::string& why) const {
    return absl::InvalidArgumentError("cannot unpack " + archive_.string() + ": " + why);
  }

  // Counts one member against options.max_members.
  absl::Status CountMember() {
    if (++members_ > options_.max_members) {
      return absl::ResourceExhaustedError("cannot unpack " + archive_.string() +
                                          ": it has more than " +
                                          std::to_string(options_.max_members) + " members");
    }
    return absl::OkStatus();
  }

  // Counts `size` bytes of member `name`'s data against options.max_bytes, before any is written.
  absl::Status CountBytes(const std::string& name, uint64_t size) {
    if (size > options_.max_bytes - written_) {
      const std::string cap = options_.max_bytes_name.empty()
                                  ? std::to_string(options_.max_bytes) + " bytes"
                                  : options_.max_bytes_name;
      return absl::ResourceExhaustedError("cannot unpack " + archive_.string() +
                                          ": it expands past " + cap + " (member \"" + name +
                                          "\" of " + std::to_string(size) + " bytes after " +
                                          std::to_string(written_) + " bytes of earlier members)");
    }
    written_ += size;
    return absl::OkStatus();
  }

  // The folder `segments` (relative to the destination), created when missing and `create`;
  // InvalidArgument when one of them is a symbolic link. The descriptor of the last folder
  // asked for is kept: archives list a folder's files one after the other, and folders are
  // never replaced (a member that would replace one fails), so it stays the same folder.
  absl::StatusOr<int> OpenFolder(const std::string& name, const std::vector<std::string>& segments,
                                 bool create) {
    if (segments.empty()) return dest_fd_.get();
    if (cached_fd_.get() >= 0 && segments == cached_segments_) return cached_fd_.get();
    UniqueFd at;
    int parent = dest_fd_.get();
    fs::path path = dest_;
    for (const std::string& segment : segments) {
      path /= segment;
      int fd = ::openat(parent, segment.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && create) {
        if (::mkdirat(parent, segment.c_str(), 0777) != 0 && errno != EEXIST) {
          return SystemError("create", path, errno);
        }
        fd = ::openat(parent, segment.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (fd < 0) {
        const int error = errno;
        struct stat st {};
        if (::fstatat(parent, segment.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode)) {
          return Refuse("member \"" + name + "\" would be written through the symbolic link " +
                        path.string());
        }
        return SystemError("open the folder", path, error);
      }
      at = UniqueFd(fd);
      parent = fd;
    }
    cached_segments_ = segments;
    cached_fd_ = std::move(at);
    return cached_fd_.get();
  }

  // Clears the way for a new entry `leaf` in `parent`: an earlier file of that name goes (a
  // later member of the same path wins, as with tar); a symbolic link or a folder there fails.
  absl::Status ClearLeaf(const std::string& name, int parent, const std::string& leaf,
                         const fs::path& path) {
    struct stat st {};
    if (::fstatat(parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return absl::OkStatus();
      return SystemError("read", path, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      return Refuse("member \"" + name + "\" would replace the symbolic link " + path.string());
    }
    if (S_ISDIR(st.st_mode)) {
      return Refuse("member \"" + name + "\" would replace the folder " + path.string());
    }
    if (::unlinkat(parent, leaf.c_str(), 0) != 0) return SystemError("replace", path, errno);
    return absl::OkStatus();
  }

  absl::Status MakeFolder(const std::string& name, const std::vector<std::string>& segments,
                          mode_t mode) {
    ASSIGN_OR_RETURN(const int fd, OpenFolder(name, segments, /*create=*/true));
    if (::fchmod(fd, (mode & 07777) | S_IRWXU) != 0) {
      return SystemError("set the mode of", Path(segments), errno);
    }
    return absl::OkStatus();
  }

  absl::Status MakeSymlink(const std::string& name, const std::vector<std::string>& segments,
                           const std::string& link) {
    ASSIGN_OR_RETURN(const int parent, OpenFolder(name, Parent(segments), /*create=*/true));
    const fs::path path = Path(segments);
    RETURN_IF_ERROR(ClearLeaf(name, parent, segments.back(), path));
    if (::symlinkat(link.c_str(), parent, segments.back().c_str()) != 0) {
      return SystemError("create", path, errno);
    }
    return absl::OkStatus();
  }

  absl::Status MakeHardLink(const std::string& name, const std::vector<std::string>& segments,
                            const std::string& link) {
    const std::optional<std::vector<std::string>> source = SafeSegments(link);
    if (!source.has_value() || source->empty()) {
      return Refuse("hard link \"" + name + "\" points outside " + dest_.string());
    }
    // Opened first: OpenFolder keeps only the last folder's descriptor.
    ASSIGN_OR_RETURN(const int source_parent_fd,
                     OpenFolder(name, Parent(*source), /*create=*/false));
    UniqueFd source_parent(::fcntl(source_parent_fd, F_DUPFD_CLOEXEC, 0));
    if (source_parent.get() < 0) return SystemError("open", Path(Parent(*source)), errno);
    ASSIGN_OR_RETURN(const int parent, OpenFolder(name, Parent(segments), /*create=*/true));
    const fs::path path = Path(segments);
    RETURN_IF_ERROR(ClearLeaf(name, parent, segments.back(), path));
    // Flags 0: a source that is a symbolic link is linked itself, never followed.
    if (::linkat(source_parent.get(), source->back().c_str(), parent, segments.back().c_str(), 0) !=
        0) {
      return SystemError("create", path, errno);
    }
    return absl::OkStatus();
  }

  // Makes the file and copies `size` bytes of data into it from `reader` (not its padding).
  absl::Status MakeFile(const std::string& name, const std::vector<std::string>& segments,
                        mode_t mode, uint64_t size, Reader& reader) {
    RETURN_IF_ERROR(CountBytes(name, size));
    ASSIGN_OR_RETURN(const int parent, OpenFolder(name, Parent(segments), /*create=*/true));
    const fs::path path = Path(segments);
    RETURN_IF_ERROR(ClearLeaf(name, parent, segments.back(), path));
    UniqueFd file(::openat(parent, segments.back().c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (file.get() < 0) return SystemError("create", path, errno);
    uint64_t left = size;
    while (left > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, buffer_.size()));
      if (!reader.Read(buffer_.data(), chunk)) return Refuse("the archive ends in the middle");
      RETURN_IF_ERROR(WriteAll(file.get(), buffer_.data(), chunk, path));
      left -= chunk;
    }
    if (::fchmod(file.get(), (mode & 07777) | S_IRUSR | S_IWUSR) != 0) {
      return SystemError("set the mode of", path, errno);
    }
    if (const int error = file.Close(); error != 0) return SystemError("write", path, error);
    return absl::OkStatus();
  }

 private:
  static std::vector<std::string> Parent(const std::vector<std::string>& segments) {
    return std::vector<std::string>(segments.begin(), segments.end() - 1);
  }

  fs::path Path(const std::vector<std::string>& segments) const {
    fs::path path = dest_;
    for (const std::string& segment : segments) path /= segment;
    return path;
  }

  absl::Status WriteAll(int fd, const char* data, size_t size, const fs::path& path) {
    while (size > 0) {
      const ssize_t n = options_.write ? options_.write(fd, data, size) : ::write(fd, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return SystemError("write", path, errno);
      // A regular file takes at least one byte or says why not; zero is a broken writer.
      if (n == 0) return SystemError("write", path, EIO);
      data += n;
      size -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  const UniqueFd dest_fd_;
  const fs::path dest_;
  const fs::path& archive_;
  const ExtractOptions& options_;
  uint64_t members_ = 0;
  uint64_t written_ = 0;
  std::vector<std::string> cached_segments_;
  UniqueFd cached_fd_;
  std::vector<char> buffer_ = std::vector<char>(1 << 16);
};

// Makes `dest` (with its parents) and opens it. `dest` itself is the caller's: it may be reached
// through links. Everything below it is not.
absl::StatusOr<UniqueFd> OpenDestination(const fs::path& dest) {
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) {
    if (ec.value() == ENOSPC || ec.value() == EDQUOT) {
      return SystemError("create", dest, ec.value());
    }
    return Error("create", dest, ec.message());
  }
  UniqueFd dest_fd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dest_fd.get() < 0) return SystemError("open", dest, errno);
  return dest_fd;
}

// What the extended headers before a member say about it.
struct PendingHeaders {
  std::map<std::string, std::string> pax;  // pax 'x'
  std::string long_name;                   // GNU 'L'
  std::string long_link;                   // GNU 'K'
};

bool IsExtendedHeader(char type) {
  return type == 'x' || type == 'g' || type == 'L' || type == 'K';
}

// Reads the `size` bytes of an extended header into `pending` ('g': global headers carry nothing
// we use).
absl::Status ReadExtendedHeader(char type, uint64_t size, Reader& reader,
                                const Extractor& extractor, PendingHeaders& pending) {
  if (size > (64u << 20)) return extractor.Refuse("an extended header over 64 MiB");
  std::string data(size, '\0');
  if (!reader.Read(data.data(), size) || !reader.Skip(Padding(size))) {
    return extractor.Refuse("the archive ends in the middle of a member");
  }
  if (type == 'x') pending.pax = ParsePax(data);
  if (type == 'L') pending.long_name = data.substr(0, strnlen(data.c_str(), data.size()));
  if (type == 'K') pending.long_link = data.substr(0, strnlen(data.c_str(), data.size()));
  return absl::OkStatus();
}

struct Member {
  std::string name;
  std::string link;
  mode_t mode = 0;
};

// A member's name, link and mode from its header and the extended headers before it, which it
// uses up (a pax record wins over a GNU one, which wins over the header's ustar fields).
Member ReadMember(const Header& header, PendingHeaders& pending) {
  Member member;
  member.name = GetString(header.data(), 100);
  const std::string prefix = GetString(header.data() + 345, 155);
  if (!prefix.empty() && std::memcmp(header.data() + 257, "ustar", 5) == 0) {
    member.name = prefix + "/" + member.name;
  }
  if (!pending.long_name.empty()) member.name = pending.long_name;
  if (pending.pax.count("path") > 0) member.name = pending.pax["path"];
  member.link = GetString(header.data() + 157, 100);
  if (!pending.long_link.empty()) member.link = pending.long_link;
  if (pending.pax.count("linkpath") > 0) member.link = pending.pax["linkpath"];
  pending = PendingHeaders();
  member.mode = static_cast<mode_t>(GetNumber(header.data() + 100, 8).value_or(0644));
  return member;
}

// Makes `member` (of `type`, with `size` bytes of data) beneath the destination `dest`, and reads
// past its data.
absl::Status UnpackMember(const Member& member, char type, uint64_t size,
                          const ExtractOptions& options, const fs::path& dest, Extractor& extractor,
                          Reader& reader) {
  const std::string& name = member.name;
  if (name.size() > options.max_member_path_bytes ||
      member.link.size() > options.max_member_path_bytes) {
    return extractor.Refuse("member \"" + name.substr(0, 200) + "...\" has a path of more than " +
                            std::to_string(options.max_member_path_bytes) + " bytes");
  }
  const std::optional<std::vector<std::string>> segments = SafeSegments(name);
  if (!segments.has_value()) {
    return extractor.Refuse("member \"" + name + "\" would land outside " + dest.string());
  }
  const auto skip = [&](uint64_t bytes) {
    if (!reader.Skip(bytes)) return extractor.Refuse("the archive ends in the middle");
    return absl::OkStatus();
  };
  if (segments->empty()) return skip(size + Padding(size));  // "./" itself
  if (type == '0' || type == '7') {
    RETURN_IF_ERROR(extractor.MakeFile(name, *segments, member.mode, size, reader));
    return skip(Padding(size));
  }
  if (type == '5') {
    RETURN_IF_ERROR(extractor.MakeFolder(name, *segments, member.mode));
  } else if (type == '2') {
    RETURN_IF_ERROR(extractor.MakeSymlink(name, *segments, member.link));
  } else if (type == '1') {
    RETURN_IF_ERROR(extractor.MakeHardLink(name, *segments, member.link));
  }
  // Other types (devices, FIFOs): skipped with their data, if any.
  return skip(size + Padding(size));
}

}  // namespace

absl::Status ExtractTarGz(const fs::path& archive, const fs::path& dest,
                          const ExtractOptions& options) {
  gzFile file = gzopen(archive.c_str(), "rb");
  if (file == nullptr) return Error("open", archive, std::strerror(errno));
  struct Closer {
    gzFile file;
    ~Closer() { gzclose(file); }
  } closer{file};
  ASSIGN_OR_RETURN(UniqueFd dest_fd, OpenDestination(dest));
  Extractor extractor(std::move(dest_fd), dest, archive, options);
  const auto refuse = [&](const std::string& why) { return extractor.Refuse(why); };

  Reader reader(file);
  PendingHeaders pending;  // for the next member
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
    if (pending.pax.count("size") > 0)
      size = std::strtoull(pending.pax["size"].c_str(), nullptr, 10);
    if (IsExtendedHeader(type)) {
      RETURN_IF_ERROR(ReadExtendedHeader(type, size, reader, extractor, pending));
      continue;
    }
    RETURN_IF_ERROR(extractor.CountMember());
    const Member member = ReadMember(header, pending);
    RETURN_IF_ERROR(UnpackMember(member, type, size, options, dest, extractor, reader));
  }
  return absl::OkStatus();
}

}  // namespace amt::worker
