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

#include "absl/status/status.h"

namespace amt::worker {

// Writes the archive of `dir`'s contents to `out` (replaced if it exists). Internal with the path
// and the system's reason when a file cannot be read or the archive written; `out` may then be
// left incomplete (callers write next to the target and rename).
absl::Status WriteTarGz(const std::filesystem::path& dir, const std::filesystem::path& out);

}  // namespace amt::worker

#endif  // AMT_WORKER_TAR_GZ_H_
