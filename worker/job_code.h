// The job's code for script mode: what `sagemaker_submit_directory` names (the SDK's
// sourcedir.tar.gz, or a folder), put in the job's code/ folder, which a framework container
// sees as /opt/ml/code. Two callers: amt-script-runner (a framework image run as a process,
// script_runner.h) and amt-worker's job runner (a framework image run as a container: the
// training toolkit inside skips its own download from S3 when /opt/ml/code already holds files,
// as it does on SageMaker's warm pools; worker/script_runner/TOOLKIT.md).
#ifndef AMT_WORKER_JOB_CODE_H_
#define AMT_WORKER_JOB_CODE_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "worker/tar_gz.h"  // ExtractOptions

namespace amt::worker {

// s3://bucket/key -> <s3_root>/bucket/key; file:///x -> /x; a path as it is.
std::string LocalPathOfUri(const std::string& uri, const std::string& s3_root);

// The cap on what the code may unpack to: the job's volume, as a SageMaker instance's code lands
// on its ML storage volume (ResourceConfig.VolumeSizeInGB); SageMaker's default volume, 30 GB,
// when `volume_size_gb` is 0 or out of range. max_bytes_name says which.
ExtractOptions CodeUnpackLimits(uint64_t volume_size_gb);

// Puts the code at `source` (a local tar.gz archive or folder; `submit`, the hyperparameter's
// value, names it in messages) into `code_dir`, unless `code_dir` already holds files (false: it
// was left as it is; true: it was filled). An archive is unpacked within `limits` (ExtractTarGz:
// nothing outside `code_dir`), a folder copied. On a failure nothing half-written is left in
// `code_dir`, and the status's message says what went wrong and names the job folder `job_dir`
// when the disk is full ("No space left on device"): NotFound (no such file), ResourceExhausted
// (full disk, or the archive is over `limits`), InvalidArgument (not an archive, a member out of
// bounds), Internal (a folder that cannot be copied).
absl::StatusOr<bool> FetchJobCode(const std::filesystem::path& source, const std::string& submit,
                                  const std::filesystem::path& code_dir,
                                  const std::filesystem::path& job_dir, ExtractOptions limits);

}  // namespace amt::worker

#endif  // AMT_WORKER_JOB_CODE_H_
