#include "worker/job_code.h"

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "absl/status/status.h"

namespace amt::worker {
namespace {

namespace fs = std::filesystem;

bool IsEmptyFolder(const fs::path& dir) {
  std::error_code ec;
  return !fs::exists(dir, ec) || fs::is_empty(dir, ec);
}

bool IsDiskFull(const absl::Status& status) {
  const std::string message(status.message());
  return absl::IsResourceExhausted(status) &&
         (message.find(std::strerror(ENOSPC)) != std::string::npos ||
          message.find(std::strerror(EDQUOT)) != std::string::npos);
}

}  // namespace

std::string LocalPathOfUri(const std::string& uri, const std::string& s3_root) {
  if (uri.rfind("s3://", 0) == 0) return (fs::path(s3_root) / uri.substr(5)).string();
  if (uri.rfind("file://", 0) == 0) return uri.substr(7);
  return uri;
}

ExtractOptions CodeUnpackLimits(uint64_t volume_size_gb) {
  ExtractOptions options;
  // 1 << 20 GB (a petabyte) is past any disk, and keeps the shift below in range.
  if (volume_size_gb > 0 && volume_size_gb < (uint64_t{1} << 20)) {
    options.max_bytes = volume_size_gb << 30;
    options.max_bytes_name = "the VolumeSizeInGB of " + std::to_string(volume_size_gb) + " GB";
  } else {
    options.max_bytes = kDefaultMaxUnpackedBytes;
    options.max_bytes_name = "the default volume of " +
                             std::to_string(kDefaultMaxUnpackedBytes >> 30) +
                             " GB (the job gives no VolumeSizeInGB)";
  }
  return options;
}

absl::StatusOr<bool> FetchJobCode(const fs::path& source, const std::string& submit,
                                  const fs::path& code_dir, const fs::path& job_dir,
                                  ExtractOptions limits) {
  if (!IsEmptyFolder(code_dir)) return false;
  std::error_code ec;
  fs::create_directories(code_dir, ec);
  // What was copied or unpacked before a failure goes: the job cannot run half its code, and on
  // a full disk that makes room for output/failure.
  const auto discard_code = [&] {
    std::error_code ignored;
    fs::remove_all(code_dir, ignored);
  };
  const std::string disk_full = "No space left on device in the job folder " + job_dir.string() +
                                " (" + limits.max_bytes_name +
                                ") while writing the job's code, sagemaker_submit_directory " +
                                submit + ": ";
  if (fs::is_directory(source, ec)) {
    fs::copy(source, code_dir, fs::copy_options::recursive, ec);
    if (!ec) return true;
    discard_code();
    if (ec.value() == ENOSPC || ec.value() == EDQUOT) {
      return absl::ResourceExhaustedError(disk_full + "cannot copy " + source.string() + ": " +
                                          ec.message());
    }
    return absl::InternalError("cannot copy the code folder " + source.string() + ": " +
                               ec.message());
  }
  if (!fs::is_regular_file(source, ec)) {
    return absl::NotFoundError("the code of the job, sagemaker_submit_directory " + submit +
                               ", does not exist (looked for " + source.string() + ")");
  }
  const absl::Status unpacked = ExtractTarGz(source, code_dir, std::move(limits));
  if (unpacked.ok()) return true;
  discard_code();
  if (IsDiskFull(unpacked)) {
    return absl::ResourceExhaustedError(disk_full + std::string(unpacked.message()));
  }
  return absl::Status(unpacked.code(), "sagemaker_submit_directory " + submit + ": " +
                                           std::string(unpacked.message()));
}

}  // namespace amt::worker
