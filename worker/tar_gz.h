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

#include <filesystem>
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

// Unpacks the gzip-compressed (or plain) tar archive `archive` into the folder `dest` (created
// if missing), as `tar -xzf ARCHIVE -C DEST` does for what Python's tarfile, GNU tar and bsdtar
// write: ustar, GNU long names and links, pax extended headers (path, linkpath, size), base-256
// sizes. Regular files (mode bits kept, u+rw at least), directories and symbolic links are made;
// other member types are skipped. A member that would land outside `dest` (an absolute path, a
// ".." segment, a hard link to outside, or one written through a symbolic link) is refused:
// InvalidArgument naming the member, and nothing after it is unpacked. InvalidArgument for an
// archive that is not a tar (bad checksum, truncated), Internal for file-system errors.
absl::Status ExtractTarGz(const std::filesystem::path& archive, const std::filesystem::path& dest);

}  // namespace amt::worker

#endif  // AMT_WORKER_TAR_GZ_H_
