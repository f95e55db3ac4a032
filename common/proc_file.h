// Reading /proc files of other processes, which may exit while they are read.
#ifndef AMT_COMMON_PROC_FILE_H_
#define AMT_COMMON_PROC_FILE_H_

#include <string>

namespace amt {

// The whole of the file at `path`, "" when it cannot be opened or read. With read(2), not a
// stream: a /proc/<pid>/ file of a process that exits while it is read fails with ESRCH, which
// libstdc++'s filebuf throws as std::ios_base::failure whatever the stream's exception mask (a
// worker died of it in CI).
std::string ReadProcFile(const std::string& path);

}  // namespace amt

#endif  // AMT_COMMON_PROC_FILE_H_
