// Paths beneath a folder, resolved without following symbolic links: what the local S3 folder
// (object_store.h) does all its I/O through, because training jobs write into that folder and can
// plant links in it (a link to "/etc", a link to "." making a loop). Every function here takes a
// folder's descriptor and a path relative to it, and never reaches a file outside that folder:
// a link met on the way, or at the end, fails the call with ELOOP; it is neither followed nor
// replaced.
//
// Resolution is openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
// one system call per path; where the kernel has no openat2 (ENOSYS: before Linux 5.6, or a
// seccomp filter that does not know it) and for paths longer than PATH_MAX, a walk opens one
// segment at a time with O_NOFOLLOW, each on the descriptor of the folder before it. Both give
// the same answers; Resolution::kWalk forces the walk, so tests cover it on any kernel.
//
// Errors are errno values, not absl::Status: each caller maps ENOENT, ENOTDIR and ELOOP to an
// answer of its own (S3's NoSuchKey, a refused PUT, a no-op DELETE), which a Status would blur.
//
// Thread-compatible: no state but the descriptors a caller owns.
#ifndef AMT_ORCHESTRATOR_S3_BENEATH_H_
#define AMT_ORCHESTRATOR_S3_BENEATH_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace amt::s3 {

// An owned file descriptor, closed on destruction. Movable, not copyable.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes what is returned.
  int release();
  // Closes the descriptor held, if any, and holds `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

enum class Resolution {
  kAuto,  // openat2, and the walk where the kernel has none
  kWalk,  // always the walk (tests of the fallback)
};

// A descriptor, or the errno why there is none. `where` is set by MakeDirsBeneath on failure:
// the part of the path, from its start to the segment that failed ("a/b" of "a/b/c").
struct Opened {
  Fd fd;
  int error = 0;
  std::string where;

  bool ok() const { return error == 0; }
};

// Opens `relative` (segments separated by single '/', none empty, "." or ".."; "" is `dir`
// itself) beneath the folder `dir`. `flags` are open(2)'s (O_CLOEXEC and O_NOFOLLOW are added;
// no O_CREAT: create a file with openat on an opened folder). Errors: ENOENT (missing), ENOTDIR
// (a segment that is not a folder, or the last with O_DIRECTORY), ELOOP (a symbolic link on the
// way or at the end), EINVAL (a segment "", "." or ".."), or what open(2) says.
Opened OpenBeneath(int dir, std::string_view relative, int flags,
                   Resolution resolution = Resolution::kAuto);

// OpenBeneath(dir, relative, O_RDONLY | O_DIRECTORY).
Opened OpenDirBeneath(int dir, std::string_view relative,
                      Resolution resolution = Resolution::kAuto);

// Creates the folders of `relative` beneath `dir` that are missing, one segment at a time
// (mkdirat on the descriptor of the one before, so no link is followed), and opens the last
// one (O_RDONLY | O_DIRECTORY). Errors as OpenBeneath, with `where` saying which segment:
// ENOTDIR where a file (or anything but a folder) is, ELOOP where a link is.
Opened MakeDirsBeneath(int dir, std::string_view relative, mode_t mode = 0755);

// One entry of a folder, by what it is without following it.
struct DirEntry {
  enum class Kind { kFile, kDirectory, kOther };  // kOther: a link, a FIFO, a socket, a device
  std::string name;
  Kind kind = Kind::kOther;
};

// The entries of the open folder `dir` ("." and ".." left out), in no particular order. `dir` is
// not consumed (the listing reads a duplicate). Errors as readdir(3).
int ListDirectory(int dir, std::vector<DirEntry>* entries);

// Removes `name` in the folder `dir` and, when it is a folder, everything in it; links are
// removed, never followed. ENOENT when there is no `name`. Holds a few descriptors at a time
// whatever the depth: each folder is reopened beneath `dir` from its path.
int RemoveTreeBeneath(int dir, std::string_view name, Resolution resolution = Resolution::kAuto);

}  // namespace amt::s3

#endif  // AMT_ORCHESTRATOR_S3_BENEATH_H_
