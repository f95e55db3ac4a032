// Integration-test harness: runs the real amtd executable (which starts the real amt-worker) on
// port 0 in a fresh data dir, and talks to it over real gRPC on loopback. Waiting is done on
// server-side events (Watch* streams), never by sleeping.
#ifndef AMT_TESTS_INTEGRATION_HARNESS_H_
#define AMT_TESTS_INTEGRATION_HARNESS_H_

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "amt/v1/tuning.grpc.pb.h"
#include "tests/support/temp_dir.h"

namespace amt::testing {

// Paths baked in by CMake.
std::string BinDir();
std::string SourceDir();

// Temp folders, ReadFile and WriteFile: tests/support/temp_dir.h.

// The examples' image map with real paths, written to <dir>/image-map.json; returns its path.
std::string WriteImageMap(const std::string& dir);

class Amtd {
 public:
  // Starts build/bin/amtd --port 0 --data-dir DIR plus `extra` flags; waits for its
  // "amtd listening on HOST:PORT" line.
  Amtd(const std::string& data_dir, const std::vector<std::string>& extra);
  ~Amtd();

  const std::string& endpoint() const { return endpoint_; }
  // http://HOST:PORT of the AWS JSON gateway ("" when amtd serves none).
  const std::string& http_endpoint() const { return http_endpoint_; }
  // unix:<data-dir>/amtd.sock, for workers on this machine.
  const std::string& worker_socket() const { return worker_socket_; }
  v1::TuningService::Stub& stub() { return *stub_; }
  // Sends `signal` and waits for the process to end.
  void Kill(int signal);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
  std::string endpoint_;
  std::string http_endpoint_;
  std::string worker_socket_;
  std::unique_ptr<v1::TuningService::Stub> stub_;
};

// build/bin/amt-worker started by hand, as on another machine: --orchestrator `endpoint`,
// --work-dir `work_dir`, its output appended to <work_dir>/../worker-ID.log. SIGTERM on
// destruction (it stops its jobs and exits).
class AmtWorker {
 public:
  AmtWorker(const std::string& endpoint, const std::string& work_dir, const std::string& id,
            int slots);
  ~AmtWorker();
  pid_t pid() const { return pid_; }
  // Sends `signal` and waits for the process to end.
  void Kill(int signal);

 private:
  pid_t pid_ = 0;
};

// Runs build/bin/amtd --port 0 --no-local-worker --data-dir DIR plus `extra`, for a start that
// must fail: waits for it to exit and returns its exit code and everything it printed.
struct AmtdExit {
  int exit_code = -1;
  std::string output;
};
AmtdExit RunAmtdToExit(const std::string& data_dir, const std::vector<std::string>& extra);

// Follows WatchHyperParameterTuningJob until the tuning job is terminal; returns the last snapshot.
v1::WatchHyperParameterTuningJobResponse WaitForTuningJob(v1::TuningService::Stub& stub,
                                                          const std::string& name);

// Follows WatchTrainingJob until `done(snapshot)` is true or the job ends; returns that snapshot.
v1::DescribeTrainingJobResponse WaitForTrainingJob(
    v1::TuningService::Stub& stub, const std::string& name,
    const std::function<bool(const v1::DescribeTrainingJobResponse&)>& done);

// Follows a tuning job's watch stream until `done(snapshot)`; returns that snapshot.
v1::WatchHyperParameterTuningJobResponse WaitForTuningSnapshot(
    v1::TuningService::Stub& stub, const std::string& name,
    const std::function<bool(const v1::WatchHyperParameterTuningJobResponse&)>& done);

// CreateTrainingJob of a request body in SageMaker's JSON; fails the test when it does not parse
// or amtd refuses it.
void CreateTrainingJob(Amtd& amtd, const std::string& json);
// CreateHyperParameterTuningJob of a request body in SageMaker's JSON, likewise.
void CreateTuningJob(Amtd& amtd, const std::string& json);

// Whether a training job has ended (Completed, Failed or Stopped), for WaitForTrainingJob.
bool Terminal(const v1::DescribeTrainingJobResponse& job);

// Every log line of a training job so far (GetTrainingJobLogs, not following).
std::vector<std::string> ReadLogs(v1::TuningService::Stub& stub, const std::string& job);

// Follows a training job's log until `seen(lines so far)` holds (or the job ends); the lines read.
std::vector<std::string> FollowLogsUntil(
    Amtd& amtd, const std::string& job,
    const std::function<bool(const std::vector<std::string>&)>& seen);

// Whether `lines` holds every one of `wanted`, for FollowLogsUntil.
bool HasAllLines(const std::vector<std::string>& lines, const std::vector<std::string>& wanted);

// Reads a JSON request body from examples/ (or a string) into a proto; fails the test on error.
v1::CreateHyperParameterTuningJobRequest TuningRequestFromJson(const std::string& json);

}  // namespace amt::testing

#endif  // AMT_TESTS_INTEGRATION_HARNESS_H_
