#include "tests/integration/harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>
#include <utility>

#include "common/json.h"

extern char** environ;

namespace amt::testing {

namespace fs = std::filesystem;

std::string BinDir() { return AMT_BIN_DIR; }
std::string SourceDir() { return AMT_SOURCE_DIR; }

std::string WriteImageMap(const std::string& dir) {
  const std::string path = dir + "/image-map.json";
  WriteFile(path,
            "{\n"
            "  \"amt-local/toy-trainer:latest\": [\"" +
                BinDir() +
                "/amt-toy-trainer\"],\n"
                "  \"amt-local/python-trainer:latest\": [\"" +
                SourceDir() +
                "/examples/python_trainer/train\"],\n"
                "  \"amt-local/failing-trainer:latest\": [\"" +
                SourceDir() +
                "/examples/failing_trainer/train\"],\n"
                "  \"amt-local/distributed-trainer:latest\": [\"" +
                SourceDir() +
                "/examples/distributed_trainer/train\"],\n"
                "  \"amt-local/pytorch-ddp:latest\": [\"" +
                SourceDir() +
                "/examples/pytorch_ddp/train\"]\n"
                "}\n");
  return path;
}

namespace {

// Starts build/bin/amtd --port 0 plus `args`, its stdout (and with `with_stderr` its stderr) on a
// pipe; returns its pid and the pipe's read end.
std::pair<pid_t, int> SpawnAmtd(const std::vector<std::string>& args, bool with_stderr) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> all = {BinDir() + "/amtd", "--port", "0"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  if (with_stderr) posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) throw std::runtime_error("cannot start amtd");
  return {pid, fds[0]};
}

// Sends `signal` to child `pid` (if any), waits for its end and forgets it.
void SignalAndReap(pid_t& pid, int signal) {
  if (pid <= 0) return;
  ::kill(pid, signal);
  int status = 0;
  ::waitpid(pid, &status, 0);
  pid = 0;
}

}  // namespace

Amtd::Amtd(const std::string& data_dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--data-dir", data_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  int out_fd = -1;
  std::tie(pid_, out_fd) = SpawnAmtd(args, /*with_stderr=*/false);
  // Blocks until amtd prints its endpoint (an event, not a sleep).
  FILE* out = ::fdopen(out_fd, "r");
  char line[512];
  const std::string prefix = "amtd listening on ";
  while (std::fgets(line, sizeof line, out) != nullptr) {
    std::string s(line);
    // "amtd listening on HOST:PORT (gRPC)[, http://HOST:PORT (AWS JSON: ...)]"
    if (s.rfind(prefix, 0) == 0) {
      endpoint_ = s.substr(prefix.size(), s.find_first_of(" \r\n", prefix.size()) - prefix.size());
      if (const size_t http = s.find("http://"); http != std::string::npos) {
        http_endpoint_ = s.substr(http, s.find_first_of(" \r\n", http) - http);
      }
      if (const size_t unix_socket = s.find("unix:"); unix_socket != std::string::npos) {
        worker_socket_ = s.substr(unix_socket, s.find_first_of(" \r\n", unix_socket) - unix_socket);
      }
      break;
    }
  }
  std::fclose(
      out);  // amtd's later stdout writes go nowhere (SIGPIPE is not raised: it prints once)
  if (endpoint_.empty()) throw std::runtime_error("amtd did not print its endpoint");
  stub_ = v1::TuningService::NewStub(
      grpc::CreateChannel(endpoint_, grpc::InsecureChannelCredentials()));
}

AmtWorker::AmtWorker(const std::string& endpoint, const std::string& work_dir,
                     const std::string& id, int slots) {
  fs::create_directories(work_dir);
  std::vector<std::string> all = {BinDir() + "/amt-worker",
                                  "--orchestrator",
                                  endpoint,
                                  "--work-dir",
                                  work_dir,
                                  "--worker-id",
                                  id,
                                  "--slots",
                                  std::to_string(slots)};
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = (fs::path(work_dir).parent_path() / ("worker-" + id + ".log")).string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start amt-worker");
}

AmtWorker::~AmtWorker() { Kill(SIGTERM); }

void AmtWorker::Kill(int signal) { SignalAndReap(pid_, signal); }

AmtdExit RunAmtdToExit(const std::string& data_dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--no-local-worker", "--data-dir", data_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto [pid, out_fd] = SpawnAmtd(args, /*with_stderr=*/true);
  AmtdExit result;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(out_fd, buffer, sizeof buffer)) > 0) {
    result.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(out_fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

Amtd::~Amtd() {
  if (pid_ > 0) Kill(SIGTERM);
}

void Amtd::Kill(int signal) { SignalAndReap(pid_, signal); }

namespace {

// Reads a watch stream until `done(snapshot)` or its end; returns the last snapshot read.
template <typename Response, typename Open, typename Done>
Response FollowStream(Open open, const Done& done) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  auto reader = open(&context);
  Response snapshot, last;
  while (reader->Read(&snapshot)) {
    last = snapshot;
    if (done(snapshot)) {
      context.TryCancel();
      break;
    }
  }
  reader->Finish();
  return last;
}

}  // namespace

v1::WatchHyperParameterTuningJobResponse WaitForTuningSnapshot(
    v1::TuningService::Stub& stub, const std::string& name,
    const std::function<bool(const v1::WatchHyperParameterTuningJobResponse&)>& done) {
  v1::WatchHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name(name);
  return FollowStream<v1::WatchHyperParameterTuningJobResponse>(
      [&](grpc::ClientContext* c) { return stub.WatchHyperParameterTuningJob(c, request); }, done);
}

v1::WatchHyperParameterTuningJobResponse WaitForTuningJob(v1::TuningService::Stub& stub,
                                                          const std::string& name) {
  return WaitForTuningSnapshot(stub, name, [](const auto& s) {
    const auto& status = s.tuning_job().hyper_parameter_tuning_job_status();
    return status == "Completed" || status == "Failed" || status == "Stopped";
  });
}

v1::DescribeTrainingJobResponse WaitForTrainingJob(
    v1::TuningService::Stub& stub, const std::string& name,
    const std::function<bool(const v1::DescribeTrainingJobResponse&)>& done) {
  v1::WatchTrainingJobRequest request;
  request.set_training_job_name(name);
  return FollowStream<v1::DescribeTrainingJobResponse>(
      [&](grpc::ClientContext* c) { return stub.WatchTrainingJob(c, request); }, done);
}

void CreateTrainingJob(Amtd& amtd, const std::string& json) {
  v1::CreateTrainingJobRequest request;
  ASSERT_TRUE(JsonToProto(json, &request).ok()) << json;
  grpc::ClientContext ctx;
  v1::CreateTrainingJobResponse response;
  const auto status = amtd.stub().CreateTrainingJob(&ctx, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

void CreateTuningJob(Amtd& amtd, const std::string& json) {
  const v1::CreateHyperParameterTuningJobRequest request = TuningRequestFromJson(json);
  grpc::ClientContext ctx;
  v1::CreateHyperParameterTuningJobResponse response;
  const auto status = amtd.stub().CreateHyperParameterTuningJob(&ctx, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

bool Terminal(const v1::DescribeTrainingJobResponse& job) {
  const auto& s = job.training_job_status();
  return s == "Completed" || s == "Failed" || s == "Stopped";
}

v1::CreateHyperParameterTuningJobRequest TuningRequestFromJson(const std::string& json) {
  v1::CreateHyperParameterTuningJobRequest request;
  const auto status = JsonToProto(json, &request);
  EXPECT_TRUE(status.ok()) << status;
  return request;
}

std::vector<std::string> ReadLogs(v1::TuningService::Stub& stub, const std::string& job) {
  grpc::ClientContext ctx;
  v1::GetTrainingJobLogsRequest request;
  request.set_training_job_name(job);
  auto reader = stub.GetTrainingJobLogs(&ctx, request);
  v1::GetTrainingJobLogsResponse page;
  std::vector<std::string> lines;
  while (reader->Read(&page)) {
    for (const auto& l : page.lines()) lines.push_back(l.message());
  }
  const grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  return lines;
}

std::vector<std::string> FollowLogsUntil(
    Amtd& amtd, const std::string& job,
    const std::function<bool(const std::vector<std::string>&)>& seen) {
  grpc::ClientContext ctx;
  v1::GetTrainingJobLogsRequest request;
  request.set_training_job_name(job);
  request.set_follow(true);
  auto reader = amtd.stub().GetTrainingJobLogs(&ctx, request);
  v1::GetTrainingJobLogsResponse page;
  std::vector<std::string> lines;
  while (!seen(lines) && reader->Read(&page)) {
    for (const auto& l : page.lines()) lines.push_back(l.message());
  }
  ctx.TryCancel();
  (void)reader->Finish();
  return lines;
}

bool HasAllLines(const std::vector<std::string>& lines, const std::vector<std::string>& wanted) {
  for (const std::string& line : wanted) {
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) return false;
  }
  return true;
}

}  // namespace amt::testing
