#include "orchestrator/s3/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <utility>

namespace amt::s3 {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int Fd::release() { return std::exchange(fd_, -1); }

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

namespace {

// openat2(2)'s argument and flags, as <linux/openat2.h> declares them. Declared here because
// glibc 2.36 has neither a wrapper nor a header for openat2, and s3/'s layering rule
// (scripts/check-layering.py) admits POSIX headers, not the kernel's linux/ ones. A stable
// ABI: the kernel takes this 24-byte first version of the struct (OPEN_HOW_SIZE_VER0) forever,
// extensions being recognised by a larger size.
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
static_assert(sizeof(OpenHow) == 24);
constexpr uint64_t kResolveNoMagicLinks = 0x02;  // RESOLVE_NO_MAGICLINKS
constexpr uint64_t kResolveNoSymlinks = 0x04;    // RESOLVE_NO_SYMLINKS
constexpr uint64_t kResolveBeneath = 0x08;       // RESOLVE_BENEATH

// Whether the kernel said it has no openat2: a property of the machine, learnt once, so a kernel
// without it costs one failed system call per process, not one per path.
std::atomic<bool> openat2_missing{false};

// The segments of `relative`, or empty with *valid false when one is "", "." or ".." (or holds
// a NUL): the callers build paths from checked keys, so this is a second line of defence.
std::vector<std::string_view> Segments(std::string_view relative, bool* valid) {
  std::vector<std::string_view> segments;
  *valid = true;
  if (relative.empty()) return segments;
  size_t start = 0;
  for (;;) {
    const size_t slash = relative.find('/', start);
    const std::string_view segment = relative.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty() || segment == "." || segment == ".." ||
        segment.find('\0') != std::string_view::npos) {
      *valid = false;
      return {};
    }
    segments.push_back(segment);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return segments;
}

Opened Failure(int error, std::string where = "") {
  Opened opened;
  opened.error = error;
  opened.where = std::move(where);
  return opened;
}

Opened Success(int fd) {
  Opened opened;
  opened.fd.reset(fd);
  return opened;
}

// openat(2) of a single segment that failed with `error`: ELOOP when the segment is a link, so
// both resolvers answer alike (openat with O_DIRECTORY | O_NOFOLLOW says ENOTDIR on a link).
int Classify(int dir, const std::string& segment, int error) {
  if (error != ENOTDIR && error != ELOOP) return error;
  struct stat st {};
  if (::fstatat(dir, segment.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return error;
  if (S_ISLNK(st.st_mode)) return ELOOP;
  return error == ELOOP ? ELOOP : ENOTDIR;
}

std::string Prefix(const std::vector<std::string_view>& segments, size_t last) {
  std::string prefix;
  for (size_t i = 0; i <= last; ++i) {
    if (i > 0) prefix += '/';
    prefix.append(segments[i]);
  }
  return prefix;
}

Opened Walk(int dir, const std::vector<std::string_view>& segments, int flags) {
  Fd current;  // invalid while at `dir`, which is the caller's
  for (size_t i = 0; i < segments.size(); ++i) {
    const int at = current.valid() ? current.get() : dir;
    const bool last = i + 1 == segments.size();
    const std::string segment(segments[i]);
    // O_PATH for the folders on the way: a descriptor to resolve from, needing no permission to
    // read them.
    const int segment_flags = last ? flags : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd;
    do {
      fd = ::openat(at, segment.c_str(), segment_flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      const int error = errno;
      // Only a folder on the way, or the last segment opened as one, can be "not a folder".
      const bool wants_directory = !last || (flags & O_DIRECTORY) != 0;
      int classified = Classify(at, segment, error);
      if (classified == ENOTDIR && !wants_directory) classified = error;
      return Failure(classified, Prefix(segments, i));
    }
    current.reset(fd);
  }
  return Success(current.release());
}

}  // namespace

Opened OpenBeneath(int dir, std::string_view relative, int flags, Resolution resolution) {
  // O_TMPFILE includes O_DIRECTORY's bit: test it whole.
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) return Failure(EINVAL);
  flags |= O_CLOEXEC | O_NOFOLLOW;
  bool valid = false;
  const std::vector<std::string_view> segments = Segments(relative, &valid);
  if (!valid) return Failure(EINVAL);
  if (segments.empty()) {
    const int fd = ::openat(dir, ".", flags & ~O_NOFOLLOW);
    return fd < 0 ? Failure(errno) : Success(fd);
  }
  // openat2 takes a C string of at most PATH_MAX; longer paths (a deep folder being removed)
  // are walked, each segment being at most NAME_MAX.
  if (resolution == Resolution::kAuto && !openat2_missing.load(std::memory_order_relaxed) &&
      relative.size() < PATH_MAX) {
    const std::string path(relative);
    OpenHow how{};
    // Without O_NOFOLLOW: with it a link at the end of an O_DIRECTORY open says ENOTDIR, not
    // ELOOP; RESOLVE_NO_SYMLINKS refuses a link at the end anyway.
    how.flags = static_cast<uint64_t>(flags & ~O_NOFOLLOW);
    how.resolve = kResolveBeneath | kResolveNoSymlinks | kResolveNoMagicLinks;
    // EAGAIN: the kernel saw a rename race while resolving; trying again is what it asks.
    for (int attempt = 0; attempt < 16; ++attempt) {
      const long fd = ::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof(how));
      if (fd >= 0) return Success(static_cast<int>(fd));
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno != ENOSYS) return Failure(errno);
      openat2_missing.store(true, std::memory_order_relaxed);
      break;
    }
  }
  return Walk(dir, segments, flags);
}

Opened OpenDirBeneath(int dir, std::string_view relative, Resolution resolution) {
  return OpenBeneath(dir, relative, O_RDONLY | O_DIRECTORY, resolution);
}

Opened MakeDirsBeneath(int dir, std::string_view relative, mode_t mode) {
  bool valid = false;
  const std::vector<std::string_view> segments = Segments(relative, &valid);
  if (!valid) return Failure(EINVAL);
  Fd current;
  if (segments.empty()) {
    const int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? Failure(errno) : Success(fd);
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    const int at = current.valid() ? current.get() : dir;
    const std::string segment(segments[i]);
    int fd = -1;
    // Twice at most: open, else create and open again (EEXIST: another writer made it first).
    for (int attempt = 0; attempt < 2; ++attempt) {
      fd = ::openat(at, segment.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 || errno != ENOENT || attempt == 1) break;
      if (::mkdirat(at, segment.c_str(), mode) != 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
      const int error = errno;
      return Failure(Classify(at, segment, error), Prefix(segments, i));
    }
    current.reset(fd);
  }
  return Success(current.release());
}

int ListDirectory(int dir, std::vector<DirEntry>* entries) {
  // A new open file description (not dup, which would share the read position with `dir`).
  const int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    const int error = errno;
    ::close(fd);
    return error;
  }
  int error = 0;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(stream);
    if (entry == nullptr) {
      error = errno;
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    DirEntry out;
    out.name = std::string(name);
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {  // file systems that do not fill d_type
      struct stat st {};
      if (::fstatat(::dirfd(stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_LNK;
      }
    }
    out.kind = type == DT_REG   ? DirEntry::Kind::kFile
               : type == DT_DIR ? DirEntry::Kind::kDirectory
                                : DirEntry::Kind::kOther;
    entries->push_back(std::move(out));
  }
  ::closedir(stream);
  return error;
}

int RemoveTreeBeneath(int dir, std::string_view name, Resolution resolution) {
  bool valid = false;
  if (Segments(name, &valid).size() != 1 || !valid) return EINVAL;
  const std::string top(name);
  struct stat st {};
  if (::fstatat(dir, top.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ::unlinkat(dir, top.c_str(), 0) == 0 ? 0 : errno;

  // Depth first, one folder open at a time: a folder is reopened from `dir` by its path each
  // time it is visited, and removed once a visit finds no folder left in it. A job can make
  // folders deeper than any descriptor limit; this holds two.
  std::vector<std::string> pending{top};
  while (!pending.empty()) {
    const std::string path = pending.back();
    const size_t slash = path.rfind('/');
    const std::string parent_path = slash == std::string::npos ? "" : path.substr(0, slash);
    const std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
    Opened folder = OpenDirBeneath(dir, path, resolution);
    if (!folder.ok()) {
      if (folder.error == ENOENT) {
        pending.pop_back();
        continue;
      }
      if (folder.error != ENOTDIR && folder.error != ELOOP) return folder.error;
      // Replaced by a file or a link since it was listed: remove that, never what it points to.
      Opened parent = OpenDirBeneath(dir, parent_path, resolution);
      if (!parent.ok()) return parent.error;
      if (::unlinkat(parent.fd.get(), leaf.c_str(), 0) != 0 && errno != ENOENT) return errno;
      pending.pop_back();
      continue;
    }
    std::vector<DirEntry> entries;
    if (const int error = ListDirectory(folder.fd.get(), &entries); error != 0) return error;
    bool descended = false;
    for (const DirEntry& entry : entries) {
      if (entry.kind == DirEntry::Kind::kDirectory) {
        pending.push_back(path + "/" + entry.name);
        descended = true;
      } else if (::unlinkat(folder.fd.get(), entry.name.c_str(), 0) != 0 && errno != ENOENT) {
        return errno;
      }
    }
    if (descended) continue;
    folder.fd.reset();
    Opened parent = OpenDirBeneath(dir, parent_path, resolution);
    if (!parent.ok()) return parent.error;
    if (::unlinkat(parent.fd.get(), leaf.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return errno;
    }
    pending.pop_back();
  }
  return 0;
}

}  // namespace amt::s3
