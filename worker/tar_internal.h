// What the two halves of tar_gz.h share, and nothing outside amt_worker_lib includes: the tar
// block and header, and the message of a file that cannot be read or written. tar_gz.cc writes
// archives, tar_extract.cc unpacks them.
#ifndef AMT_WORKER_TAR_INTERNAL_H_
#define AMT_WORKER_TAR_INTERNAL_H_

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>

#include "absl/status/status.h"

namespace amt::worker::tar_internal {

inline constexpr size_t kBlock = 512;
using Header = std::array<char, kBlock>;

inline absl::Status Error(const std::string& what, const std::filesystem::path& path,
                          const std::string& why) {
  return absl::InternalError("cannot " + what + " " + path.string() + ": " + why);
}

}  // namespace amt::worker::tar_internal

#endif  // AMT_WORKER_TAR_INTERNAL_H_
