// WriteTarGz: packs a folder into a gzip-compressed tar archive in-process (zlib), as
// `tar -czf OUT -C DIR .` does: a "./" entry, then every directory, regular file and symlink under
// DIR as "./relative/path", in sorted order (the same folder gives the same member order).
// Members are POSIX ustar; paths longer than ustar holds use GNU long-name records, and sizes of
// 8 GiB and more base-256 numbers, as GNU tar writes them (GNU tar, bsdtar and Python's tarfile
// read both). Other file types (sockets, FIFOs, devices) are left out.
//
// This is how amt-worker writes model.tar.gz and output.tar.gz: one process spawn (tar, then
// gzip) less per training job was the largest per-trial cost measured (bench/README.md).
#ifndef AMT_WORKER_TAR_GZ_H_
#define AMT_WORKER_TAR_GZ_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace amt::worker {

// Writes the archive of `dir`'s contents to `out` (replaced if it exists). Internal with the path
// and the system's reason when a file cannot be read or the archive written; `out` may then be
// left incomplete (callers write next to the target and rename).
absl::Status WriteTarGz(const std::filesystem::path& dir, const std::filesystem::path& out);

// The same for several folders merged into one archive, as SageMaker merges the hosts' model/
// folders of a multi-instance training job: every entry of every folder, and where two folders
// have an entry of the same relative path, the later folder's. The "./" entry is the first
// folder's. InvalidArgument for no folder.
absl::Status WriteTarGz(const std::vector<std::filesystem::path>& dirs,
                        const std::filesystem::path& out);

// What ExtractTarGz unpacks at most when the caller knows no better cap: 30 GiB, the volume a
// SageMaker training job gets when its ResourceConfig gives no VolumeSizeInGB.
inline constexpr uint64_t kDefaultMaxUnpackedBytes = uint64_t{30} << 30;
// A sourcedir.tar.gz of a million files is already far past what a training script's code is.
inline constexpr uint64_t kDefaultMaxMembers = 1'000'000;
// Linux's PATH_MAX: a member's path (after long-name and pax records) longer than this is refused.
inline constexpr size_t kDefaultMaxMemberPathBytes = 4096;

// Writes up to `size` bytes of `data` to `fd` as ::write(2) does: the count written, or -1 with
// errno set. A fault seam: tests make it fail with ENOSPC.
using WriteFn = std::function<ssize_t(int fd, const void* data, size_t size)>;

struct ExtractOptions {
  // The most file data the archive may unpack to, counted from the members' headers before
  // anything of a member is written (so at most this much is ever written).
  uint64_t max_bytes = kDefaultMaxUnpackedBytes;
  // How messages name max_bytes ("the VolumeSizeInGB of 1 GB"); empty: "<max_bytes> bytes".
  std::string max_bytes_name;
  uint64_t max_members = kDefaultMaxMembers;
  size_t max_member_path_bytes = kDefaultMaxMemberPathBytes;
  // How file data is written; null: ::write.
  WriteFn write;
};

// Unpacks the gzip-compressed (or plain) tar archive `archive` into the folder `dest` (created
// if missing), as `tar -xzf ARCHIVE -C DEST` does for what Python's tarfile, GNU tar and bsdtar
// write: ustar, GNU long names and links, pax extended headers (path, linkpath, size), base-256
// sizes. Regular files (mode bits kept, u+rw at least), directories (u+rwx at least), symbolic
// links and hard links are made; other member types are skipped.
//
// Nothing is ever made, written or chmodded outside `dest`: `dest` is opened once and every
// member is reached from it one path segment at a time (openat with O_NOFOLLOW), modes are set
// with fchmod on the member's own descriptor, and files are created with O_EXCL. Refused with
// InvalidArgument naming the member, nothing after it unpacked:
//  - an absolute path or a ".." segment (for a hard link, in its target too);
//  - a member whose path passes through a symbolic link (one an earlier member made: symbolic
//    link members are made as they are, pointing anywhere, and never followed afterwards);
//  - a member that would replace a symbolic link;
//  - a path longer than options.max_member_path_bytes.
// ResourceExhausted when the members' data would pass options.max_bytes (the message names the
// cap and the member), for more than options.max_members members, and when the file system says
// ENOSPC or EDQUOT (the message has the path and the system's "No space left on device").
// InvalidArgument for an archive that is not a tar (bad checksum, truncated), Internal for other
// file-system errors. What was unpacked before an error stays in `dest`.
absl::Status ExtractTarGz(const std::filesystem::path& archive, const std::filesystem::path& dest,
                          const ExtractOptions& options = {});

}  // namespace amt::worker

#endif  // AMT_WORKER_TAR_GZ_H_
