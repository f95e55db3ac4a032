#include "worker/job_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <system_error>
#include <utility>

#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/host_network.h"
#include "worker/job_environment.h"

namespace amt::worker {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// ResourceExhausted for a full disk or quota, Internal for other file-system errors.
absl::Status FsError(const std::string& what, const fs::path& path, const std::error_code& ec) {
  const std::string message = what + " " + path.string() + ": " + ec.message();
  if (ec == std::errc::no_space_on_device || ec.value() == EDQUOT) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

absl::Status MakeDirs(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return FsError("cannot create", path, ec);
  return absl::OkStatus();
}

using WriteFn = std::function<ssize_t(int fd, const void* data, size_t size)>;

// With the system's reason on failure (an ofstream loses errno, and "No space left on device"
// is what the user needs to read). A file that exists (a spare folder's config file, JobDirPool)
// is overwritten in place and cut to the new length only when it was longer: O_TRUNC would free
// its block and the write allocate one again, two ext4 journal updates on a launch's path that
// wait behind any journal commit under way (amtd's fdatasync on the same disk), 0.4-0.7 ms per
// file in a trace of bench/orchestrator/end_to_end.py.
absl::Status WriteFile(const fs::path& path, const std::string& content, const WriteFn& write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return FsError("cannot write", path, std::error_code(errno, std::generic_category()));
  const char* data = content.data();
  size_t left = content.size();
  int error = 0;
  while (left > 0) {
    const ssize_t n = write ? write(fd, data, left) : ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;  // a file takes a byte or says why not
      break;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  struct stat st {};
  const off_t size = static_cast<off_t>(content.size());
  if (error == 0 && (::fstat(fd, &st) != 0 || (st.st_size > size && ::ftruncate(fd, size) != 0))) {
    error = errno;
  }
  // Some file systems (NFS) report a full disk only at close.
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    return FsError("cannot write", path, std::error_code(error, std::generic_category()));
  }
  return absl::OkStatus();
}

// SageMaker's training job name pattern ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}: the name becomes a
// directory that is removed and recreated, so nothing path-like may get through.
bool IsValidJobName(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front())) ||
      !std::isalnum(static_cast<unsigned char>(name.back()))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-'; });
}

// SageMaker's ChannelName pattern [A-Za-z0-9\.\-_]+ (max 64), minus the names "." and "..".
bool IsValidChannelName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '-' || c == '_';
  });
}

struct FileEntry {
  fs::path relative;
  fs::path absolute;
};

absl::StatusOr<std::vector<FileEntry>> ListFiles(const fs::path& root) {
  std::vector<FileEntry> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec);
  if (ec) return FsError("cannot list", root, ec);
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return FsError("cannot list", root, ec);
    if (it->is_regular_file(ec)) {
      files.push_back({fs::relative(it->path(), root, ec), it->path()});
    }
  }
  if (ec) return FsError("cannot list", root, ec);
  return files;
}

absl::Status CopyFile(const fs::path& from, const fs::path& to) {
  RETURN_IF_ERROR(MakeDirs(to.parent_path()));
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return FsError("cannot copy to", to, ec);
  return absl::OkStatus();
}

// Removes everything under `dir` but the entries `keep` accepts (a kept directory is emptied the
// same way). Symlinks are removed, never followed: input/data/<channel> points at user data.
void Scrub(const fs::path& dir, const std::function<bool(const fs::path&, bool)>& keep,
           std::error_code& ec) {
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    entries.push_back(it->path());
  }
  for (const auto& entry : entries) {
    if (ec) return;
    const auto status = fs::symlink_status(entry, ec);
    if (ec) return;
    const bool is_dir = fs::is_directory(status);
    if (!fs::is_symlink(status) && keep(entry, is_dir)) {
      if (is_dir) Scrub(entry, keep, ec);
    } else {
      fs::remove_all(entry, ec);
    }
  }
}

}  // namespace

std::vector<fs::path> FailedJobDirs::Keep(const fs::path& root) {
  MutexLock lock(&mu_);
  std::erase(kept_, root);
  kept_.push_back(root);
  std::vector<fs::path> over;
  while (kept_.size() > keep_) {
    const fs::path old = std::move(kept_.front());
    kept_.pop_front();
    fs::path aside = old;
    aside += ".removing-" + std::to_string(++removed_);
    std::error_code ec;
    fs::rename(old, aside, ec);
    if (!ec) over.push_back(std::move(aside));
  }
  return over;
}

void FailedJobDirs::Reused(const fs::path& root) {
  MutexLock lock(&mu_);
  std::erase(kept_, root);
}

JobDirPool::JobDirPool(fs::path dir, size_t capacity) : dir_(std::move(dir)), capacity_(capacity) {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

bool JobDirPool::TakeInto(const fs::path& root) {
  fs::path spare;
  {
    MutexLock lock(&mu_);
    if (spares_.empty()) return false;
    spare = std::move(spares_.back());
    spares_.pop_back();
  }
  std::error_code ec;
  fs::rename(spare, root, ec);
  if (!ec) return true;
  fs::remove_all(spare, ec);
  return false;
}

void JobDirPool::Recycle(const JobPaths& paths) {
  if (const std::optional<Detached> detached = Detach(paths)) Keep(*detached);
}

std::optional<JobDirPool::Detached> JobDirPool::Detach(const JobPaths& paths) {
  uint64_t n = 0;
  {
    MutexLock lock(&mu_);
    n = next_++;
  }
  Detached detached;
  const fs::path to = dir_ / std::to_string(n);
  // The same paths under the new root (a JobPaths member is empty or beneath the root).
  const auto moved = [&](const fs::path& path) {
    return path.empty() ? path : to / path.lexically_relative(paths.root);
  };
  detached.paths = {to,
                    moved(paths.input),
                    moved(paths.input_config),
                    moved(paths.input_data),
                    moved(paths.model),
                    moved(paths.output),
                    moved(paths.output_data),
                    moved(paths.output_intermediate),
                    moved(paths.failure),
                    moved(paths.checkpoints),
                    moved(paths.hosts_file)};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!ec) fs::rename(paths.root, to, ec);
  if (!ec) return detached;
  fs::remove_all(paths.root, ec);
  return std::nullopt;
}

void JobDirPool::Keep(const Detached& detached) {
  const JobPaths& paths = detached.paths;
  std::error_code ec;
  bool full;
  {
    MutexLock lock(&mu_);
    full = spares_.size() >= capacity_;
  }
  if (!full) {
    // The layout's directories and config files; everything else was the job's.
    const std::set<fs::path> dirs = {
        paths.input,  paths.input_config, paths.input_data,         paths.model,
        paths.output, paths.output_data,  paths.output_intermediate};
    const std::set<std::string> configs = {"hyperparameters.json", "resourceconfig.json",
                                           "inputdataconfig.json"};
    Scrub(
        paths.root,
        [&](const fs::path& entry, bool is_dir) {
          if (is_dir) return dirs.count(entry) > 0;  // input/data's channels are not in it
          return entry.parent_path() == paths.input_config &&
                 configs.count(entry.filename().string()) > 0;
        },
        ec);
    if (!ec) {
      MutexLock lock(&mu_);
      spares_.push_back(paths.root);
      return;
    }
  }
  fs::remove_all(paths.root, ec);
}

namespace {

// Counts `entry` (a file, or a folder and everything in it; a link counts nothing and is never
// followed) into `trimmed`, `relative` naming it from the job folder's root.
void CountRemoved(const fs::path& entry, const fs::path& root, TrimmedJobDir& trimmed) {
  std::error_code ec;
  const auto count = [&](const fs::path& file) {
    const uint64_t size = fs::file_size(file, ec);
    if (ec) return;
    trimmed.bytes += size;
    if (size > trimmed.largest_bytes) {
      trimmed.largest_bytes = size;
      trimmed.largest = file.lexically_relative(root);
    }
  };
  const auto status = fs::symlink_status(entry, ec);
  if (ec) return;
  if (fs::is_regular_file(status)) return count(entry);
  if (!fs::is_directory(status)) return;
  for (fs::recursive_directory_iterator it(entry, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) count(it->path());
  }
}

absl::Status TrimFolder(const fs::path& dir, const fs::path& root,
                        const std::set<fs::path>& emptied, TrimmedJobDir& trimmed) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return FsError("cannot list", dir, ec);
  const bool empty_it = emptied.count(dir) > 0;
  for (const fs::path& entry : entries) {
    const auto status = fs::symlink_status(entry, ec);
    if (ec) return FsError("cannot stat", entry, ec);
    bool keep = false;
    if (!empty_it && !fs::is_symlink(status)) {
      if (fs::is_directory(status)) {
        keep = entry != root / "code";
      } else if (fs::is_regular_file(status)) {
        keep = fs::file_size(entry, ec) <= kSmallFileBytes && !ec;
      }
    }
    if (keep) {
      if (fs::is_directory(status)) RETURN_IF_ERROR(TrimFolder(entry, root, emptied, trimmed));
      continue;
    }
    CountRemoved(entry, root, trimmed);
    fs::remove_all(entry, ec);
    if (ec) return FsError("cannot remove", entry, ec);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrimmedJobDir> TrimFailedJobDir(const JobPaths& paths) {
  std::set<fs::path> emptied = {paths.model, paths.output_data, paths.input_data};
  if (!paths.checkpoints.empty()) emptied.insert(paths.checkpoints);
  TrimmedJobDir trimmed;
  RETURN_IF_ERROR(TrimFolder(paths.root, paths.root, emptied, trimmed));
  return trimmed;
}

std::string TruncateFailureReason(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  size_t end = 0;
  for (; end < text.size(); ++end) {
    const bool starts_char = (static_cast<unsigned char>(text[end]) & 0xC0) != 0x80;
    if (starts_char) {
      if (chars == max_chars) break;
      ++chars;
    }
  }
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(0, end);
}

namespace {

// Why a request cannot have a folder: a host index out of range, or a training job or channel
// name that is not a SageMaker name (each becomes a path). The channels, in the request's order.
absl::StatusOr<std::vector<const amt::v1::ChannelAssignment*>> ValidateRequest(
    const amt::v1::StartJob& job, const HostSpec& host) {
  if (host.count < 1 || host.index < 1 || host.index > host.count) {
    return absl::InvalidArgumentError("host " + std::to_string(host.index) + " of " +
                                      std::to_string(host.count));
  }
  if (!IsValidJobName(job.training_job_name())) {
    return absl::InvalidArgumentError("invalid training job name '" + job.training_job_name() +
                                      "'");
  }
  std::vector<const amt::v1::ChannelAssignment*> channels;
  std::set<std::string> channel_names;
  for (const auto& channel : job.channels()) {
    if (!IsValidChannelName(channel.channel_name())) {
      return absl::InvalidArgumentError("invalid channel name '" + channel.channel_name() + "'");
    }
    if (!channel_names.insert(channel.channel_name()).second) {
      return absl::InvalidArgumentError("duplicate channel name '" + channel.channel_name() + "'");
    }
    channels.push_back(&channel);
  }
  return channels;
}

// The folder's paths (job_dir.h's layout) under the absolute `work_dir`; nothing is made.
JobPaths LayOut(const fs::path& work_dir, const amt::v1::StartJob& job, const HostSpec& host) {
  JobPaths p;
  p.root = work_dir / (host.index == 1 ? job.training_job_name()
                                       : job.training_job_name() + "." + HostName(host.index));
  p.input = p.root / "input";
  p.input_config = p.input / "config";
  p.input_data = p.input / "data";
  p.model = p.root / "model";
  p.output = p.root / "output";
  p.output_data = p.output / "data";
  p.output_intermediate = p.output / "intermediate";
  p.failure = p.output / "failure";
  if (!job.checkpoint_local_sync_dir().empty() || !job.checkpoint_container_path().empty()) {
    p.checkpoints = p.root / "checkpoints";
  }
  if (!host.hosts_file_text.empty()) p.hosts_file = p.root / "hosts";
  return p;
}

// A file-system failure says which job folder could not be made: a full disk is the usual one.
absl::Status InFolder(const JobPaths& p, absl::Status status) {
  if (!absl::IsInternal(status) && !absl::IsResourceExhausted(status)) return status;
  return absl::Status(status.code(), "cannot prepare the job folder " + p.root.string() + ": " +
                                         std::string(status.message()));
}

// Writes `name` in input/config/.
absl::Status WriteConfig(const JobPaths& p, const char* name, const json& content,
                         const JobDirOptions& options) {
  return InFolder(p, WriteFile(p.input_config / name, content.dump(), options.write));
}

// Replaces what an earlier attempt left at the folder's root with the layout's empty directories
// (a spare folder's, when the pool has one).
absl::Status MakeLayout(const JobPaths& p, const JobDirOptions& options) {
  std::error_code ec;
  fs::remove_all(p.root, ec);
  if (ec) return InFolder(p, FsError("cannot remove", p.root, ec));
  if (options.spares != nullptr) options.spares->TakeInto(p.root);
  for (const fs::path* d :
       {&p.input_config, &p.input_data, &p.model, &p.output_data, &p.output_intermediate}) {
    RETURN_IF_ERROR(InFolder(p, MakeDirs(*d)));
  }
  return absl::OkStatus();
}

// input/data/<channel> for each channel (a link to its local path, else an empty directory);
// inputdataconfig.json's content, which the caller writes.
absl::StatusOr<json> MakeChannels(const amt::v1::StartJob& job, const JobPaths& p,
                                  const std::vector<const amt::v1::ChannelAssignment*>& channels) {
  std::error_code ec;
  json input_data_config = json::object();
  for (const auto* channel : channels) {
    const std::string& name = channel->channel_name();
    json entry;
    if (channel->input_config_json().empty()) {
      entry = {{"TrainingInputMode", job.input_mode().empty() ? "File" : job.input_mode()},
               {"S3DistributionType", "FullyReplicated"},
               {"RecordWrapperType", "None"}};
    } else {
      entry = json::parse(channel->input_config_json(), nullptr, /*allow_exceptions=*/false);
      if (entry.is_discarded() || !entry.is_object()) {
        return absl::InvalidArgumentError("channel '" + name +
                                          "': input_config_json is not a JSON object");
      }
    }
    input_data_config[name] = std::move(entry);

    const fs::path link = p.input_data / name;
    if (channel->local_path().empty()) {
      RETURN_IF_ERROR(InFolder(p, MakeDirs(link)));
      continue;
    }
    const fs::path target = fs::absolute(channel->local_path(), ec);
    if (ec || !fs::exists(target, ec)) {
      return absl::NotFoundError("channel '" + name + "': local path " + target.string() +
                                 " does not exist");
    }
    fs::create_symlink(target, link, ec);
    if (ec) return InFolder(p, FsError("cannot create symlink", link, ec));
  }
  return input_data_config;
}

// The folder as a container sees it: /opt/ml, its checkpoints at CheckpointConfig.LocalPath.
JobPaths ContainerPaths(const amt::v1::StartJob& job, const JobPaths& p) {
  JobPaths c;
  c.root = kContainerMlRoot;
  const auto rebase = [&](const fs::path& path) {
    return c.root / path.lexically_relative(p.root);
  };
  c.input = rebase(p.input);
  c.input_config = rebase(p.input_config);
  c.input_data = rebase(p.input_data);
  c.model = rebase(p.model);
  c.output = rebase(p.output);
  c.output_data = rebase(p.output_data);
  c.output_intermediate = rebase(p.output_intermediate);
  c.failure = rebase(p.failure);
  if (!p.checkpoints.empty()) {
    c.checkpoints = job.checkpoint_container_path().empty()
                        ? c.root / "checkpoints"
                        : fs::path(job.checkpoint_container_path());
  }
  return c;
}

std::vector<ContainerMount> ContainerMounts(
    const JobPaths& p, const JobPaths& c,
    const std::vector<const amt::v1::ChannelAssignment*>& channels) {
  std::vector<ContainerMount> mounts = {{p.input_config.string(), c.input_config.string(), true}};
  for (const auto* channel : channels) {
    const fs::path link = p.input_data / channel->channel_name();
    std::error_code ec;
    fs::path source = fs::is_symlink(link, ec) ? fs::read_symlink(link, ec) : link;
    if (ec) source = link;
    mounts.push_back({source.string(), (c.input_data / channel->channel_name()).string(), true});
  }
  mounts.push_back({p.model.string(), c.model.string(), false});
  mounts.push_back({p.output.string(), c.output.string(), false});
  if (!p.checkpoints.empty())
    mounts.push_back({p.checkpoints.string(), c.checkpoints.string(), false});
  return mounts;
}

}  // namespace

// The stages, in order: check the request, lay the folder out, write the config files, make the
// channels and checkpoints, then the environment. A new kind of input (a device, a container's
// mounts) gets a stage of its own here and its variables in JobEnvironment (job_environment.h).
absl::StatusOr<JobDir> JobDir::Create(const JobDirOptions& options, const amt::v1::StartJob& job,
                                      const HostSpec& host, bool in_container) {
  ASSIGN_OR_RETURN(const auto channels, ValidateRequest(job, host));
  std::error_code ec;
  const fs::path work_dir = fs::absolute(options.work_dir, ec);
  if (ec) return FsError("cannot resolve", options.work_dir, ec);

  JobDir dir;
  dir.paths_ = LayOut(work_dir, job, host);
  const JobPaths& p = dir.paths_;
  // A retry of a job that failed here: its kept folder is about to be replaced.
  if (options.failed != nullptr) options.failed->Reused(p.root);
  RETURN_IF_ERROR(MakeLayout(p, options));

  // hyperparameters.json: the request's map as is, every value a JSON string.
  json hyperparameters = json::object();
  for (const auto& [name, value] : job.hyperparameters()) hyperparameters[name] = value;
  RETURN_IF_ERROR(WriteConfig(p, "hyperparameters.json", hyperparameters, options));
  if (!p.hosts_file.empty()) {
    RETURN_IF_ERROR(InFolder(p, WriteFile(p.hosts_file, host.hosts_file_text, options.write)));
  }
  const Cluster cluster = ClusterOf(job, host);
  RETURN_IF_ERROR(WriteConfig(p, "resourceconfig.json", cluster.resource_config, options));
  ASSIGN_OR_RETURN(const json input_data_config, MakeChannels(job, p, channels));
  RETURN_IF_ERROR(WriteConfig(p, "inputdataconfig.json", input_data_config, options));
  const JobPaths seen = in_container ? ContainerPaths(job, p) : p;
  if (!p.checkpoints.empty()) RETURN_IF_ERROR(dir.MakeCheckpoints(options, job, seen.checkpoints));
  if (in_container) dir.container_mounts_ = ContainerMounts(p, seen, channels);

  dir.environment_ = JobEnvironment(
      job, {options, host, seen, cluster, channels, input_data_config, in_container});
  return dir;
}

absl::Status JobDir::MakeCheckpoints(const JobDirOptions& options, const amt::v1::StartJob& job,
                                     const fs::path& local_path) {
  const JobPaths& p = paths_;
  RETURN_IF_ERROR(InFolder(p, MakeDirs(p.checkpoints)));
  // As SageMaker writes it for a job with a CheckpointConfig (the built-in XGBoost and framework
  // scripts read LocalPath from it); here LocalPath is where this trainer sees the folder, and
  // S3Uri is left out: amt-worker syncs the folder itself.
  const json checkpoint_config = {{"LocalPath", local_path.string()}};
  RETURN_IF_ERROR(WriteConfig(p, "checkpointconfig.json", checkpoint_config, options));
  if (job.checkpoint_local_sync_dir().empty()) return absl::OkStatus();
  std::error_code ec;
  checkpoint_sync_dir_ = fs::absolute(job.checkpoint_local_sync_dir(), ec);
  if (!fs::is_directory(checkpoint_sync_dir_, ec)) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto files, ListFiles(checkpoint_sync_dir_));
  for (const auto& file : files) {
    const fs::path local = p.checkpoints / file.relative;
    RETURN_IF_ERROR(InFolder(p, CopyFile(file.absolute, local)));
    copied_in_[file.relative.string()] =
        FileStamp{fs::file_size(local, ec), fs::last_write_time(local, ec)};
  }
  return absl::OkStatus();
}

absl::Status JobDir::SyncCheckpointsOut() const {
  if (checkpoint_sync_dir_.empty() || paths_.checkpoints.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(MakeDirs(checkpoint_sync_dir_));
  ASSIGN_OR_RETURN(auto files, ListFiles(paths_.checkpoints));
  std::set<std::string> present;
  std::error_code ec;
  for (const auto& file : files) {
    const std::string key = file.relative.string();
    present.insert(key);
    const auto it = copied_in_.find(key);
    if (it != copied_in_.end() && it->second.size == fs::file_size(file.absolute, ec) &&
        it->second.mtime == fs::last_write_time(file.absolute, ec)) {
      continue;  // unchanged since it was copied in
    }
    RETURN_IF_ERROR(CopyFile(file.absolute, checkpoint_sync_dir_ / file.relative));
  }
  for (const auto& [key, stamp] : copied_in_) {
    if (present.count(key) != 0) continue;
    fs::remove(checkpoint_sync_dir_ / key, ec);
    if (ec) return FsError("cannot remove", checkpoint_sync_dir_ / key, ec);
  }
  return absl::OkStatus();
}

std::string JobDir::ReadFailureReason() const {
  std::ifstream in(paths_.failure, std::ios::binary);
  if (!in) return "";
  // A character is at most 4 bytes in UTF-8.
  std::string text(kMaxFailureReasonChars * 4, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return TruncateFailureReason(text, kMaxFailureReasonChars);
}

bool JobDir::HasOutputData() const {
  std::error_code ec;
  return fs::is_directory(paths_.output_data, ec) &&
         fs::directory_iterator(paths_.output_data, ec) != fs::directory_iterator();
}

}  // namespace amt::worker
