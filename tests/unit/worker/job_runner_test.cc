// Runs real short /bin/sh trainers through JobRunner with the posix_spawn launcher.
#include "worker/job_runner.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/worker/fake_container_engine.h"
#include "tests/unit/worker/fake_process_launcher.h"
#include "worker/host_network.h"
#include "worker/tar_gz.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;

namespace fs = std::filesystem;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Everything one runner reported, with waits on events (never on the clock).
class Reports {
 public:
  JobRunner::ReportFn Fn() {
    return [this](amt::v1::WorkerMessage message) {
      std::lock_guard<std::mutex> lock(mu_);
      messages_.push_back(std::move(message));
      cv_.notify_all();
    };
  }

  // Waits until `done` holds for the reports so far (fails the test after 20 s).
  std::vector<amt::v1::WorkerMessage> WaitUntil(
      const std::function<bool(const std::vector<amt::v1::WorkerMessage>&)>& done) {
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(20), [&] { return done(messages_); }));
    return messages_;
  }

  std::vector<amt::v1::WorkerMessage> WaitForExit() {
    return WaitUntil(
        [](const auto& messages) { return !messages.empty() && messages.back().has_exited(); });
  }

  // Waits until a log line equal to `text` was shipped.
  void WaitForLine(const std::string& text) {
    WaitUntil([&](const auto& messages) {
      for (const auto& m : messages) {
        for (const auto& line : m.logs().lines()) {
          if (line.text() == text) return true;
        }
      }
      return false;
    });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<amt::v1::WorkerMessage> messages_;
};

std::vector<std::string> LogTexts(const std::vector<amt::v1::WorkerMessage>& messages,
                                  bool want_stderr = false) {
  std::vector<std::string> texts;
  for (const auto& m : messages) {
    for (const auto& line : m.logs().lines()) {
      if (line.stderr() == want_stderr) texts.push_back(line.text());
    }
  }
  return texts;
}

class JobRunnerTest : public ::testing::Test {
 protected:
  JobRunnerTest() : launcher_(NewPosixProcessLauncher()) {
    options_.job_dir.work_dir = (temp_.path() / "work").string();
    options_.base_environment = {{"PATH", "/usr/bin:/bin"}};
  }

  amt::v1::StartJob Job(const std::string& script) {
    amt::v1::StartJob job;
    job.set_training_job_name("job-1");
    job.set_attempt(1);
    job.set_training_job_arn("arn:aws:sagemaker:us-east-1:123456789012:training-job/job-1");
    job.add_command("/bin/sh");
    job.add_command("-c");
    job.add_command(script);
    job.add_command("train");
    return job;
  }

  // Runs `job` to the end and returns its reports.
  std::vector<amt::v1::WorkerMessage> RunToExit(const amt::v1::StartJob& job) {
    JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
    runner.Start();
    return reports_.WaitForExit();
  }

  TempDir temp_;
  FakeClock clock_{1'700'000'000.0};
  std::unique_ptr<ProcessLauncher> launcher_;
  JobRunnerOptions options_;
  Reports reports_;
};

TEST_F(JobRunnerTest, ReportsStartedThenLogsThenExited) {
  const auto messages = RunToExit(Job("echo hello; echo oops >&2"));
  ASSERT_GE(messages.size(), 3u);
  ASSERT_TRUE(messages.front().has_started());
  EXPECT_EQ(messages.front().started().training_job_name(), "job-1");
  EXPECT_EQ(messages.front().started().attempt(), 1);
  EXPECT_EQ(messages.front().started().job_dir(), (temp_.path() / "work" / "job-1").string());
  for (size_t i = 1; i + 1 < messages.size(); ++i) {
    EXPECT_TRUE(messages[i].has_logs());
    EXPECT_EQ(messages[i].logs().training_job_name(), "job-1");
    EXPECT_EQ(messages[i].logs().lines(0).timestamp(), 1'700'000'000.0);
  }
  EXPECT_THAT(LogTexts(messages), ElementsAre("hello"));
  EXPECT_THAT(LogTexts(messages, /*want_stderr=*/true), ElementsAre("oops"));
  const auto& exited = messages.back().exited();
  EXPECT_EQ(exited.training_job_name(), "job-1");
  EXPECT_EQ(exited.attempt(), 1);
  EXPECT_EQ(exited.exit_code(), 0);
  EXPECT_EQ(exited.signal(), 0);
  EXPECT_FALSE(exited.launch_failed());
  EXPECT_FALSE(exited.stop_requested());
  EXPECT_EQ(exited.failure_reason(), "");
}

TEST_F(JobRunnerTest, KeepsTheFailedJobsFoldersUpToTheCapTheOldestGoing) {
  options_.job_dir.failed = std::make_shared<FailedJobDirs>(1);
  const auto run = [&](const std::string& name, int attempt) {
    amt::v1::StartJob job = Job("echo failing; exit 1");
    job.set_training_job_name(name);
    job.set_attempt(attempt);
    Reports reports;
    JobRunner runner(options_, job, *launcher_, clock_, reports.Fn());
    runner.Start();
    EXPECT_EQ(reports.WaitForExit().back().exited().exit_code(), 1);
  };
  const fs::path work = temp_.path() / "work";
  run("job-1", 1);
  EXPECT_TRUE(fs::exists(work / "job-1" / "output"));  // kept for inspection
  run("job-1", 2);  // its retry fails too: one folder, the new one, still within the cap
  EXPECT_TRUE(fs::exists(work / "job-1" / "output"));
  run("job-2", 1);  // over the cap: the oldest failed folder goes
  EXPECT_FALSE(fs::exists(work / "job-1"));
  EXPECT_TRUE(fs::exists(work / "job-2" / "output"));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(work)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(left, ::testing::ElementsAre("job-2"));
}

TEST_F(JobRunnerTest, ShowsTabsAsHash011) {
  const auto messages =
      RunToExit(Job("printf '[0]\\ttrain-rmse:0.47\\tvalidation-rmse:0.48\\r\\n'"));
  EXPECT_THAT(LogTexts(messages), ElementsAre("[0]#011train-rmse:0.47#011validation-rmse:0.48"));
}

TEST_F(JobRunnerTest, LosesNoLinesOfAFastExitingTrainer) {
  const auto messages =
      RunToExit(Job("i=0; while [ $i -lt 500 ]; do echo line$i; i=$((i+1)); done"));
  const auto texts = LogTexts(messages);
  ASSERT_EQ(texts.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(texts[i], "line" + std::to_string(i));
  for (const auto& m : messages) {
    if (m.has_logs()) {
      EXPECT_LE(m.logs().lines_size(), 64);
    }
  }
}

TEST_F(JobRunnerTest, ReportsTheExitCodeAndTheFailureFileCutAt1024Characters) {
  const auto messages =
      RunToExit(Job("head -c 3000 /dev/zero | tr '\\0' x > \"$SM_OUTPUT_DIR/failure\"; exit 3"));
  const auto& exited = messages.back().exited();
  EXPECT_EQ(exited.exit_code(), 3);
  EXPECT_EQ(exited.signal(), 0);
  EXPECT_FALSE(exited.launch_failed());
  EXPECT_EQ(exited.failure_reason(), std::string(1024, 'x'));
}

TEST_F(JobRunnerTest, GivesTheTrainerItsEnvironmentAndJobDirAsCwd) {
  amt::v1::StartJob job =
      Job("echo \"$TRAINING_JOB_NAME $SM_HP_LEARNING_RATE $PATH $0\"; pwd -P; "
          "cat input/config/hyperparameters.json; echo");
  (*job.mutable_hyperparameters())["learning_rate"] = "0.1";
  const auto messages = RunToExit(job);
  EXPECT_THAT(LogTexts(messages),
              ElementsAre("job-1 0.1 /usr/bin:/bin train",
                          fs::weakly_canonical(temp_.path() / "work" / "job-1").string(),
                          R"({"learning_rate":"0.1"})"));
}

LaunchSpec TarSpec(const fs::path& tarball, const fs::path& into) {
  LaunchSpec spec;
  spec.argv = {"tar", "-xzf", tarball.string(), "-C", into.string()};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  return spec;
}

TEST_F(JobRunnerTest, TarsTheModelDirIntoModelOutputPath) {
  amt::v1::StartJob job = Job("echo weights > \"$SM_MODEL_DIR/model.txt\"");
  const fs::path tarball = temp_.path() / "s3" / "out" / "job-1" / "output" / "model.tar.gz";
  job.set_model_output_path(tarball.string());
  job.set_output_data_path(
      (temp_.path() / "s3" / "out" / "job-1" / "output" / "output.tar.gz").string());
  const auto messages = RunToExit(job);
  EXPECT_TRUE(messages.back().exited().model_uploaded());
  ASSERT_TRUE(fs::exists(tarball));
  EXPECT_FALSE(fs::exists(tarball.string() + ".partial"));
  // No output/data files, no output.tar.gz.
  EXPECT_FALSE(fs::exists(tarball.parent_path() / "output.tar.gz"));

  const fs::path unpacked = temp_.path() / "unpacked";
  fs::create_directories(unpacked);
  std::vector<std::string> ignored;
  auto tar = launcher_->Launch(TarSpec(tarball, unpacked),
                               [&](OutputStream, std::string line) { ignored.push_back(line); });
  ASSERT_THAT(tar, IsOk());
  ASSERT_EQ((*tar)->Wait().exit_code, 0);
  EXPECT_EQ(ReadFile(unpacked / "model.txt"), "weights\n");
}

TEST_F(JobRunnerTest, MakesTheModelsOutputFolderWhileTheJobRuns) {
  // Off the way from the job's end to its report: the trainer sees the folder appear (it waits
  // for it, 10 s at most) before it ends.
  const fs::path tarball = temp_.path() / "s3" / "out" / "job-1" / "output" / "model.tar.gz";
  amt::v1::StartJob job =
      Job("for i in $(seq 1000); do if [ -d '" + tarball.parent_path().string() +
          "' ]; then echo made; exit 0; fi; sleep 0.01; done; exit 3");
  job.set_model_output_path(tarball.string());
  const auto messages = RunToExit(job);
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
  EXPECT_THAT(LogTexts(messages), ElementsAre("made"));
  EXPECT_TRUE(messages.back().exited().model_uploaded());
}

TEST_F(JobRunnerTest, RemovesTheFolderOfAJobThatSucceededAndKeepsAFailedOnes) {
  const fs::path folder = temp_.path() / "work" / "job-1";
  const auto run = [this](const amt::v1::StartJob& job) {
    Reports reports;
    JobRunner runner(options_, job, *launcher_, clock_, reports.Fn());
    runner.Start();
    reports.WaitForExit();
  };
  amt::v1::StartJob job = Job("echo weights > \"$SM_MODEL_DIR/model.txt\"");
  const fs::path tarball = temp_.path() / "s3" / "job-1" / "output" / "model.tar.gz";
  job.set_model_output_path(tarball.string());
  run(job);
  EXPECT_TRUE(fs::exists(tarball));
  EXPECT_FALSE(fs::exists(folder));  // only its artifacts are left
  EXPECT_TRUE(fs::exists(folder.parent_path()));

  // A failed job's folder stays, for inspection.
  run(Job("echo broken > \"$SM_OUTPUT_DIR/failure\"; exit 1"));
  EXPECT_TRUE(fs::exists(folder / "output" / "failure"));

  // --keep-job-dirs keeps a successful one too.
  options_.keep_job_dirs = true;
  run(job);
  EXPECT_TRUE(fs::exists(folder / "model" / "model.txt"));
}

// With spare folders (amt-worker's default), a succeeded job's folder has left its place when its
// exit is reported (a later attempt of the job may start at once), and is emptied into a spare
// after the report: the runner is done (WaitForExit) only then.
TEST_F(JobRunnerTest, ASucceededJobsFolderIsGoneWhenItsExitIsReportedAndASpareOnceItIsDone) {
  const fs::path folder = temp_.path() / "work" / "job-1";
  options_.job_dir.spares =
      std::make_shared<JobDirPool>(temp_.path() / "work" / ".spare-folders", 2);
  std::vector<bool> folder_there_at_exit;
  JobRunner runner(options_, Job("echo weights > \"$SM_MODEL_DIR/model.txt\""), *launcher_, clock_,
                   [&](amt::v1::WorkerMessage message) {
                     if (message.has_exited()) folder_there_at_exit.push_back(fs::exists(folder));
                     reports_.Fn()(std::move(message));
                   });
  runner.Start();
  EXPECT_EQ(reports_.WaitForExit().back().exited().exit_code(), 0);
  ASSERT_TRUE(runner.WaitForExit(std::chrono::seconds(20)));
  EXPECT_THAT(folder_there_at_exit, ElementsAre(false));
  const fs::path next = temp_.path() / "work" / "job-2";
  ASSERT_TRUE(options_.job_dir.spares->TakeInto(next));
  EXPECT_TRUE(fs::is_directory(next / "model"));
  EXPECT_FALSE(fs::exists(next / "model" / "model.txt"));  // emptied
}

TEST_F(JobRunnerTest, SaysWhyTheModelCouldNotBeUploaded) {
  amt::v1::StartJob job = Job("echo weights > \"$SM_MODEL_DIR/model.txt\"");
  // Its folder cannot be made: a regular file is in the way (as a full disk, the write fails).
  const fs::path blocker = temp_.path() / "s3";
  {
    std::ofstream file(blocker);
    file << "not a folder";
  }
  job.set_model_output_path((blocker / "out" / "model.tar.gz").string());
  const auto messages = RunToExit(job);
  const auto& exited = messages.back().exited();
  EXPECT_EQ(exited.exit_code(), 0);
  EXPECT_FALSE(exited.model_uploaded());
  EXPECT_THAT(exited.upload_failure(), ::testing::HasSubstr("cannot create " + blocker.string()));
}

TEST_F(JobRunnerTest, TarsOutputDataWhenTheTrainerWroteSome) {
  amt::v1::StartJob job = Job("echo report > \"$SM_OUTPUT_DATA_DIR/report.txt\"");
  const fs::path tarball = temp_.path() / "s3" / "output.tar.gz";
  job.set_output_data_path(tarball.string());
  const auto messages = RunToExit(job);
  EXPECT_TRUE(fs::exists(tarball));
  EXPECT_FALSE(messages.back().exited().model_uploaded());  // no model_output_path given
}

TEST_F(JobRunnerTest, SyncsCheckpointsBackWhenTheJobExits) {
  amt::v1::StartJob job =
      Job("cat \"$SM_CHECKPOINT_DIR/in.ckpt\"; echo 2 > \"$SM_CHECKPOINT_DIR/out.ckpt\"");
  const fs::path sync = temp_.path() / "s3" / "checkpoints";
  WriteFile(sync / "in.ckpt", "resumed\n");
  job.set_checkpoint_local_sync_dir(sync.string());
  const auto messages = RunToExit(job);
  EXPECT_THAT(LogTexts(messages), ElementsAre("resumed"));
  EXPECT_EQ(ReadFile(sync / "out.ckpt"), "2\n");
}

TEST_F(JobRunnerTest, ReportsALaunchFailureForAMissingExecutable) {
  amt::v1::StartJob job = Job("");
  job.clear_command();
  job.add_command("/nonexistent/train");
  job.add_command("train");
  const auto messages = RunToExit(job);
  ASSERT_EQ(messages.size(), 1u);
  const auto& exited = messages[0].exited();
  EXPECT_TRUE(exited.launch_failed());
  EXPECT_EQ(exited.failure_reason(), "/nonexistent/train: No such file or directory");
  EXPECT_EQ(exited.training_job_name(), "job-1");
}

TEST_F(JobRunnerTest, ReportsALaunchFailureForABadJobDirectory) {
  amt::v1::StartJob job = Job("true");
  job.add_channels()->set_channel_name("bad/name");
  const auto messages = RunToExit(job);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages[0].exited().launch_failed());
  EXPECT_EQ(messages[0].exited().failure_reason(), "invalid channel name 'bad/name'");
}

TEST_F(JobRunnerTest, ReportsALaunchFailureThatSaysTheJobFolderIsOnAFullDisk) {
  options_.job_dir.write = [](int, const void*, size_t) -> ssize_t {
    errno = ENOSPC;
    return -1;
  };
  const auto messages = RunToExit(Job("true"));
  ASSERT_EQ(messages.size(), 1u);
  const fs::path root = temp_.path() / "work" / "job-1";
  EXPECT_TRUE(messages[0].exited().launch_failed());
  EXPECT_EQ(messages[0].exited().failure_reason(),
            "cannot prepare the job folder " + root.string() + ": cannot write " +
                (root / "input/config/hyperparameters.json").string() +
                ": No space left on device");
}

TEST_F(JobRunnerTest, AFailedJobWithoutAFailureFileOnAFullDiskSaysSo) {
  std::vector<fs::path> asked;
  uint64_t free = 4096;
  options_.free_bytes = [&](const fs::path& path) -> std::optional<uint64_t> {
    asked.push_back(path);
    return free;
  };
  const fs::path root = temp_.path() / "work" / "job-1";
  auto messages = RunToExit(Job("exit 1"));
  EXPECT_EQ(messages.back().exited().exit_code(), 1);
  EXPECT_EQ(messages.back().exited().failure_reason(),
            "No space left on device in the job folder " + root.string() +
                " (4096 bytes free when the training process exited with code 1, without an "
                "output/failure). Give the job a larger VolumeSizeInGB, or free disk space where "
                "amt-worker keeps job folders (--work-dir)");
  EXPECT_THAT(asked, ElementsAre(root));
}

TEST_F(JobRunnerTest, TheDiskIsNotBlamedWhenItHasRoomOrTheTrainerSaidWhy) {
  int asked = 0;
  options_.free_bytes = [&](const fs::path&) -> std::optional<uint64_t> {
    ++asked;
    return uint64_t{1} << 30;
  };
  EXPECT_EQ(RunToExit(Job("exit 1")).back().exited().failure_reason(), "");
  EXPECT_EQ(asked, 1);
  options_.free_bytes = [&](const fs::path&) -> std::optional<uint64_t> {
    ++asked;
    return 0;
  };
  Reports second;
  JobRunner runner(options_, Job("echo mine > \"$SM_OUTPUT_DIR/failure\"; exit 2"), *launcher_,
                   clock_, second.Fn());
  runner.Start();
  EXPECT_EQ(second.WaitForExit().back().exited().failure_reason(), "mine");
  EXPECT_EQ(asked, 1);  // a failure file, or exit 0, never asks
}

// The names under `dir`, relative to it, sorted ("a/", a folder); links are not followed.
std::vector<std::string> Tree(const fs::path& dir) {
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().lexically_relative(dir).string();
    names.push_back(it->is_directory() && !it->is_symlink() ? name + "/" : name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// What fills a job folder: a model, output data, checkpoints, code (as amt-script-runner
// unpacks it), a big file in the working folder and in output/intermediate, a small log, and
// a file written through the input channel into the user's data.
constexpr char kFillsItsFolder[] =
    "head -c 200000 /dev/zero > \"$SM_MODEL_DIR/fill\"; "
    "echo data > \"$SM_OUTPUT_DATA_DIR/part\"; "
    "echo ckpt > \"$SM_CHECKPOINT_DIR/step.ckpt\"; "
    "mkdir code && echo 'print(1)' > code/train.py; "
    "head -c 100000 /dev/zero > fill; "
    "head -c 70000 /dev/zero > \"$SM_OUTPUT_INTERMEDIATE_DIR/big\"; "
    "echo epoch 1 > \"$SM_OUTPUT_INTERMEDIATE_DIR/train.log\"; "
    "echo mine > \"$SM_CHANNEL_TRAIN/written-by-the-job\"; ";

TEST_F(JobRunnerTest, AJobThatFilledTheDiskKeepsOnlyItsSmallFiles) {
  options_.job_dir.failed = std::make_shared<FailedJobDirs>(20);
  options_.free_bytes = [](const fs::path&) -> std::optional<uint64_t> { return 0; };
  std::vector<std::string> diagnostics;
  options_.diagnostics = [&](const std::string& message) { diagnostics.push_back(message); };
  const fs::path data = temp_.path() / "s3" / "train";
  WriteFile(data / "rows.csv", "1,2\n");
  amt::v1::StartJob job = Job(std::string(kFillsItsFolder) + "exit 1");
  auto* channel = job.add_channels();
  channel->set_channel_name("train");
  channel->set_local_path(data.string());
  job.set_checkpoint_local_sync_dir((temp_.path() / "s3" / "checkpoints").string());
  const auto messages = RunToExit(job);

  const fs::path root = temp_.path() / "work" / "job-1";
  EXPECT_THAT(messages.back().exited().failure_reason(),
              ::testing::StartsWith("No space left on device in the job folder " + root.string()));
  EXPECT_THAT(
      Tree(root),
      ElementsAre("checkpoints/", "input/", "input/config/", "input/config/checkpointconfig.json",
                  "input/config/hyperparameters.json", "input/config/inputdataconfig.json",
                  "input/config/resourceconfig.json", "input/data/", "model/", "output/",
                  "output/data/", "output/intermediate/", "output/intermediate/train.log"));
  // The channel's link went, not what it points at.
  EXPECT_THAT(Tree(data), ElementsAre("rows.csv", "written-by-the-job"));
  EXPECT_THAT(
      diagnostics,
      Contains("job-1: the job ran out of disk space: removed 370019 bytes from its folder " +
               root.string() +
               " (model/, output/data/, checkpoints/, input/data/, code/ and files over "
               "65536 bytes, the largest model/fill of 200000 bytes); kept its config "
               "files, output/failure and small files for inspection"));
}

TEST_F(JobRunnerTest, AFailureFileThatSaysTheDiskIsFullTrimsTheFolderEvenWhenKeepingAll) {
  options_.keep_job_dirs = true;
  int asked = 0;
  options_.free_bytes = [&](const fs::path&) -> std::optional<uint64_t> {
    ++asked;
    return uint64_t{1} << 30;  // the trainer freed some before it wrote why it failed
  };
  const auto messages =
      RunToExit(Job("head -c 100000 /dev/zero > \"$SM_MODEL_DIR/fill\"; "
                    "echo \"OSError: [Errno 28] No space left on device: 'model/more'\" > "
                    "\"$SM_OUTPUT_DIR/failure\"; exit 1"));
  EXPECT_EQ(messages.back().exited().failure_reason(),
            "OSError: [Errno 28] No space left on device: 'model/more'");
  const fs::path root = temp_.path() / "work" / "job-1";
  EXPECT_TRUE(fs::is_empty(root / "model"));
  EXPECT_TRUE(fs::exists(root / "output" / "failure"));
  EXPECT_EQ(asked, 0);
}

TEST_F(JobRunnerTest, AFailedJobWithRoomOnTheDiskKeepsItsWholeFolder) {
  options_.free_bytes = [](const fs::path&) -> std::optional<uint64_t> {
    return uint64_t{1} << 30;
  };
  RunToExit(Job("head -c 100000 /dev/zero > \"$SM_MODEL_DIR/fill\"; mkdir code; exit 1"));
  const fs::path root = temp_.path() / "work" / "job-1";
  EXPECT_EQ(fs::file_size(root / "model" / "fill"), 100000u);
  EXPECT_TRUE(fs::exists(root / "code"));
}

TEST_F(JobRunnerTest, StopSendsSigtermToTheWholeProcessGroup) {
  // The grandchild traps TERM and reports it; the trainer waits for it, then exits 0.
  const std::string grandchild =
      "trap 'echo grandchild got TERM; exit 0' TERM; echo ready; sleep 30 & wait";
  amt::v1::StartJob job = Job("trap 'wait $child; exit 0' TERM; /bin/sh -c \"" + grandchild +
                              "\" & child=$!; wait $child");
  JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
  runner.Start();
  reports_.WaitForLine("ready");
  runner.Stop(/*grace_seconds=*/30);
  const auto messages = reports_.WaitForExit();
  EXPECT_THAT(LogTexts(messages), Contains("grandchild got TERM"));
  const auto& exited = messages.back().exited();
  EXPECT_TRUE(exited.stop_requested());
  EXPECT_FALSE(exited.worker_shutdown());  // amtd asked
  EXPECT_EQ(exited.signal(), 0);
  EXPECT_EQ(exited.exit_code(), 0);
}

TEST_F(JobRunnerTest, AStopForTheWorkersShutdownSaysSo) {
  JobRunner runner(options_, Job("trap 'exit 0' TERM; echo ready; sleep 30 & wait"), *launcher_,
                   clock_, reports_.Fn());
  runner.Start();
  reports_.WaitForLine("ready");
  runner.Stop(/*grace_seconds=*/30, /*worker_shutdown=*/true);
  const auto messages = reports_.WaitForExit();
  EXPECT_TRUE(messages.back().exited().worker_shutdown());
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
}

TEST_F(JobRunnerTest, StopSendsSigkillAfterTheGraceWhenTermIsTrapped) {
  amt::v1::StartJob job = Job(
      "trap 'echo got TERM, ignoring it' TERM; echo ready; while :; do sleep 1 & wait $!; done");
  JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
  runner.Start();
  reports_.WaitForLine("ready");
  runner.Stop(/*grace_seconds=*/0.2);
  const auto messages = reports_.WaitForExit();
  EXPECT_THAT(LogTexts(messages), Contains("got TERM, ignoring it"));
  const auto& exited = messages.back().exited();
  EXPECT_TRUE(exited.stop_requested());
  EXPECT_EQ(exited.signal(), SIGKILL);
  EXPECT_EQ(exited.exit_code(), 128 + SIGKILL);
}

TEST_F(JobRunnerTest, StopAfterExitIsANoOp) {
  JobRunner runner(options_, Job("exit 0"), *launcher_, clock_, reports_.Fn());
  runner.Start();
  const auto messages = reports_.WaitForExit();
  ASSERT_TRUE(runner.WaitForExit(std::chrono::milliseconds(0)));
  runner.Stop(0);
  EXPECT_FALSE(messages.back().exited().stop_requested());
}

// ---------------------------------------------------------------- several hosts (InstanceCount)

std::vector<std::pair<std::string, std::string>> HostLines(
    const std::vector<amt::v1::WorkerMessage>& messages) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& m : messages) {
    for (const auto& line : m.logs().lines()) lines.emplace_back(line.host(), line.text());
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_F(JobRunnerTest, RunsOneProcessPerHostEachWithItsFolderAndMergesTheirModels) {
  amt::v1::StartJob job =
      Job("echo \"$SM_CURRENT_HOST of $SM_HOSTS in $PWD\"; "
          "echo \"$SM_CURRENT_HOST\" > \"$SM_MODEL_DIR/$SM_CURRENT_HOST.txt\"; "
          "echo \"$SM_CURRENT_HOST\" > \"$SM_MODEL_DIR/shared.txt\"");
  job.set_instance_count(2);
  const fs::path tarball = temp_.path() / "s3" / "model.tar.gz";
  job.set_model_output_path(tarball.string());
  const auto messages = RunToExit(job);
  ASSERT_TRUE(messages.front().has_started());
  const fs::path work = temp_.path() / "work";
  EXPECT_EQ(messages.front().started().job_dir(), (work / "job-1").string());
  EXPECT_THAT(
      HostLines(messages),
      ElementsAre(
          std::pair<std::string, std::string>(
              "algo-1", "algo-1 of [\"algo-1\",\"algo-2\"] in " + (work / "job-1").string()),
          std::pair<std::string, std::string>("algo-2", "algo-2 of [\"algo-1\",\"algo-2\"] in " +
                                                            (work / "job-1.algo-2").string())));
  const auto& exited = messages.back().exited();
  EXPECT_EQ(exited.exit_code(), 0);
  EXPECT_TRUE(exited.model_uploaded());

  // Both hosts' files; for the name both wrote, the later host's.
  const fs::path unpacked = temp_.path() / "unpacked";
  ASSERT_THAT(ExtractTarGz(tarball, unpacked), IsOk());
  EXPECT_EQ(ReadFile(unpacked / "algo-1.txt"), "algo-1\n");
  EXPECT_EQ(ReadFile(unpacked / "algo-2.txt"), "algo-2\n");
  EXPECT_EQ(ReadFile(unpacked / "shared.txt"), "algo-2\n");
  // Both folders are gone once the job succeeded.
  EXPECT_FALSE(fs::exists(work / "job-1"));
  EXPECT_FALSE(fs::exists(work / "job-1.algo-2"));
}

TEST_F(JobRunnerTest, AFailingHostFailsTheJobAndTheOthersAreStopped) {
  // algo-2 fails at once; algo-1 would run for ever but for the SIGTERM it gets.
  amt::v1::StartJob job = Job(
      "if [ \"$SM_CURRENT_HOST\" = algo-2 ]; then echo 'algo-2 broke' > \"$SM_OUTPUT_DIR/failure\";"
      " exit 3; fi; while :; do sleep 1 & wait $!; done");
  job.set_instance_count(2);
  job.set_stop_grace_seconds(30);
  const auto messages = RunToExit(job);
  const auto& exited = messages.back().exited();
  EXPECT_FALSE(exited.stop_requested());
  EXPECT_EQ(exited.exit_code(), 3);
  EXPECT_EQ(exited.signal(), 0);
  EXPECT_EQ(exited.failure_reason(), "algo-2 broke");
  // The failed job's folders stay for inspection.
  EXPECT_TRUE(fs::exists(temp_.path() / "work" / "job-1.algo-2" / "output" / "failure"));
}

TEST_F(JobRunnerTest, TheOthersGetSigtermWhenAHostFailsAndSigkillAfterTheGrace) {
  testing::FakeProcessLauncher fake;  // only SIGKILL ends a fake process
  amt::v1::StartJob job = Job("unused");
  job.set_instance_count(3);
  job.set_stop_grace_seconds(0.05);
  JobRunner runner(options_, job, fake, clock_, reports_.Fn());
  runner.Start();
  auto first = fake.WaitForProcess(0);
  auto second = fake.WaitForProcess(1);
  auto third = fake.WaitForProcess(2);
  ASSERT_NE(third, nullptr);
  second->Exit(3);
  // algo-1 exits on SIGTERM; algo-3 ignores it and is killed once the grace is over.
  ASSERT_TRUE(first->WaitForSignals(1));
  EXPECT_EQ(first->signals(), std::vector<int>{SIGTERM});
  first->Exit(0);
  ASSERT_TRUE(third->WaitForSignals(2));
  EXPECT_EQ(third->signals(), (std::vector<int>{SIGTERM, SIGKILL}));
  const amt::v1::JobExited exited = reports_.WaitForExit().back().exited();
  EXPECT_EQ(exited.exit_code(), 3);  // the failed host's
  EXPECT_FALSE(exited.stop_requested());
}

TEST_F(JobRunnerTest, AStopReachesEveryHost) {
  amt::v1::StartJob job = Job(
      "trap 'echo \"$SM_CURRENT_HOST got TERM\"; exit 0' TERM; echo \"$SM_CURRENT_HOST ready\"; "
      "while :; do sleep 1 & wait $!; done");
  job.set_instance_count(3);
  JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
  runner.Start();
  for (const char* line : {"algo-1 ready", "algo-2 ready", "algo-3 ready"}) {
    reports_.WaitForLine(line);
  }
  runner.Stop(/*grace_seconds=*/30);
  const auto messages = reports_.WaitForExit();
  for (const char* line : {"algo-1 got TERM", "algo-2 got TERM", "algo-3 got TERM"}) {
    EXPECT_THAT(LogTexts(messages), Contains(line));
  }
  const auto& exited = messages.back().exited();
  EXPECT_TRUE(exited.stop_requested());
  EXPECT_EQ(exited.exit_code(), 0);
}

TEST_F(JobRunnerTest, AJobThatCannotLaunchGivesItsHostsNetworkBackAtOnce) {
  auto networks = std::make_shared<LoopbackNetworks>();
  options_.networks = networks;
  amt::v1::StartJob job = Job("true");
  job.clear_command();
  job.add_command((temp_.path() / "no-such-trainer").string());
  job.set_instance_count(2);
  JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
  runner.Start();
  EXPECT_TRUE(reports_.WaitForExit().back().exited().launch_failed());
  // The runner is still there; its network is not held.
  const auto next = networks->Take();
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->index(), 0);
}

TEST_F(JobRunnerTest, HostsGetAddressesOfTheirOwnNetworkAndAHostsFileWhenPrivate) {
  options_.private_hosts = true;
  options_.etc_hosts = (temp_.path() / "etc-hosts").string();
  WriteFile(options_.etc_hosts, "127.0.0.1 localhost\n");
  options_.keep_job_dirs = true;
  // Another job holds the first network: this one gets the next.
  auto networks = std::make_shared<LoopbackNetworks>();
  options_.networks = networks;
  const auto held = networks->Take();
  amt::v1::StartJob job = Job("echo \"$AMT_HOST_ADDRESSES\"");
  job.set_instance_count(2);
  // The fake launcher records the specs: the real one would need root for the mount.
  testing::FakeProcessLauncher fake(/*exit_on_signal=*/true);
  JobRunner runner(options_, job, fake, clock_, reports_.Fn());
  runner.Start();
  for (size_t i = 0; i < 2; ++i) {
    auto process = fake.WaitForProcess(i);
    ASSERT_NE(process, nullptr);
    const LaunchSpec& spec = process->spec();
    EXPECT_EQ(spec.hostname, i == 0 ? "algo-1" : "algo-2");
    EXPECT_EQ(spec.env.at("AMT_HOST_ADDRESSES"), R"({"algo-1":"127.1.1.1","algo-2":"127.1.1.2"})");
    EXPECT_EQ(ReadFile(spec.hosts_file),
              "127.0.0.1 localhost\n# The hosts of this training job (amt-worker).\n"
              "127.1.1.1 algo-1\n127.1.1.2 algo-2\n");
    process->Exit(0);
  }
  EXPECT_EQ(reports_.WaitForExit().back().exited().exit_code(), 0);
}

// Two fake GPUs (the allocator is the worker's: gpu_inventory.h).
std::shared_ptr<GpuAllocator> TwoGpus(int share = 1) {
  return std::make_shared<GpuAllocator>(
      std::vector<Gpu>{{0, "GPU-a", 24576, "Fake A10G"}, {1, "GPU-b", 24576, "Fake A10G"}}, share);
}

constexpr char kShowGpus[] =
    "echo \"gpus=[$CUDA_VISIBLE_DEVICES] n=$SM_NUM_GPUS order=$CUDA_DEVICE_ORDER\"";

TEST_F(JobRunnerTest, AGpuJobSeesOnlyTheGpusItHoldsAndFreesThemAsItEnds) {
  options_.gpus = TwoGpus();
  const auto other = options_.gpus->Take(1);  // another job holds GPU 0
  amt::v1::StartJob job = Job(kShowGpus);
  job.set_instance_type("ml.g5.xlarge");
  const auto messages = RunToExit(job);
  EXPECT_THAT(LogTexts(messages), ElementsAre("gpus=[1] n=1 order=PCI_BUS_ID"));
  EXPECT_THAT(LogTexts(messages, /*want_stderr=*/true),
              ElementsAre("amt-worker: runs on GPU 1 (Fake A10G, GPU-b)"));
  EXPECT_EQ(options_.gpus->Holders(1), 0);  // freed before the exit was reported
  EXPECT_EQ(options_.gpus->Holders(0), 1);
  ASSERT_TRUE(messages.front().has_started());
  EXPECT_THAT(messages.front().started().gpus(), ElementsAre("GPU 1 (Fake A10G, GPU-b)"));
}

TEST_F(JobRunnerTest, AStoppedGpuJobAndOneThatCannotStartFreeTheirGpus) {
  options_.gpus = TwoGpus();
  amt::v1::StartJob job = Job("echo ready; while :; do sleep 1 & wait $!; done");
  job.set_instance_type("ml.g5.2xlarge");  // 1 GPU
  {
    JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
    runner.Start();
    reports_.WaitForLine("ready");
    EXPECT_EQ(options_.gpus->Holders(0), 1);
    runner.Stop(/*grace_seconds=*/30);
    EXPECT_TRUE(reports_.WaitForExit().back().exited().stop_requested());
    EXPECT_EQ(options_.gpus->Holders(0), 0);  // before the runner is gone
  }
  // A launch that fails after the GPUs were taken (a trainer that is not there).
  job.set_training_job_name("job-2");
  job.clear_command();
  job.add_command((temp_.path() / "no-such-trainer").string());
  Reports failing;
  JobRunner runner(options_, job, *launcher_, clock_, failing.Fn());
  runner.Start();
  EXPECT_TRUE(failing.WaitForExit().back().exited().launch_failed());
  EXPECT_EQ(options_.gpus->Holders(0), 0);
}

TEST_F(JobRunnerTest, AGpuJobWaitsWhileOtherJobsHoldTheGpusAndAStopEndsTheWait) {
  options_.gpus = TwoGpus();
  auto held = options_.gpus->Take(2);  // other jobs hold both
  amt::v1::StartJob job = Job(kShowGpus);
  job.set_instance_type("ml.g5.xlarge");
  {
    JobRunner runner(options_, job, *launcher_, clock_, reports_.Fn());
    runner.Start();
    held.reset();  // given back: the job gets one (it never fails for want of them)
    const auto messages = reports_.WaitForExit();
    EXPECT_FALSE(messages.back().exited().launch_failed());
    EXPECT_THAT(LogTexts(messages), ElementsAre("gpus=[0] n=1 order=PCI_BUS_ID"));
  }
  // Held for good: a stop ends the wait, and the job is stopped (not failed).
  held = options_.gpus->Take(2);
  Reports stopped;
  JobRunner runner(options_, job, *launcher_, clock_, stopped.Fn());
  runner.Start();
  runner.Stop(/*grace_seconds=*/30);
  const auto exited = stopped.WaitForExit().back().exited();
  EXPECT_FALSE(exited.launch_failed());
  EXPECT_TRUE(exited.stop_requested());
}

TEST_F(JobRunnerTest, EachHostOfAMultiInstanceGpuJobHasItsOwnGpus) {
  options_.gpus = TwoGpus();
  amt::v1::StartJob job = Job(std::string("printf '%s ' \"$SM_CURRENT_HOST\"; ") + kShowGpus);
  job.set_instance_type("ml.g5.xlarge");
  job.set_instance_count(2);
  const auto texts = LogTexts(RunToExit(job));
  EXPECT_THAT(texts, Contains("algo-1 gpus=[0] n=1 order=PCI_BUS_ID"));
  EXPECT_THAT(texts, Contains("algo-2 gpus=[1] n=1 order=PCI_BUS_ID"));
}

TEST_F(JobRunnerTest, ACpuTypeOnAGpuWorkerSeesNoGpu) {
  options_.gpus = TwoGpus();
  amt::v1::StartJob job = Job(kShowGpus);
  job.set_instance_type("ml.m5.xlarge");
  const auto messages = RunToExit(job);
  EXPECT_THAT(LogTexts(messages), ElementsAre("gpus=[] n=0 order="));
  EXPECT_THAT(LogTexts(messages, /*want_stderr=*/true), IsEmpty());
}

TEST_F(JobRunnerTest, AGpuTypeOnAWorkerWithoutGpusRunsOnCpuAndSaysSo) {
  options_.gpus = std::make_shared<GpuAllocator>(std::vector<Gpu>{}, 1);
  amt::v1::StartJob job = Job(kShowGpus);
  job.set_instance_type("ml.g5.xlarge");
  const auto messages = RunToExit(job);
  EXPECT_THAT(LogTexts(messages), ElementsAre("gpus=[] n=0 order="));
  EXPECT_THAT(LogTexts(messages, /*want_stderr=*/true),
              ElementsAre("amt-worker: ml.g5.xlarge has 1 GPU per instance; this worker has no "
                          "GPU (amt-worker --gpus, nvidia-smi), so the job runs on CPU: "
                          "SM_NUM_GPUS=0"));
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
}

TEST_F(JobRunnerTest, AJobOfMoreGpusThanTheWorkerHasFailsSayingSo) {
  options_.gpus = TwoGpus(/*share=*/4);
  amt::v1::StartJob job = Job(kShowGpus);
  job.set_instance_type("ml.p3.8xlarge");
  const auto messages = RunToExit(job);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages.back().exited().launch_failed());
  EXPECT_EQ(messages.back().exited().failure_reason(),
            "The training job asks for 4 GPUs (ml.p3.8xlarge has 4 GPUs per instance, 1 "
            "instance on this worker) and this worker has 2 (amt-worker --gpus): choose an "
            "InstanceType with fewer GPUs");
}

// A job whose image the container engine holds runs as `<engine> run ... <image> train`. The
// engine here answers from fake_container_engine.h; its client is a script that prints what it
// was given, so what reaches the client is checked end to end.
class ContainerJobRunnerTest : public JobRunnerTest {
 protected:
  ContainerJobRunnerTest() {
    client_ = (temp_.path() / "fake-docker").string();
    WriteFile(client_,
              "#!/bin/sh\necho \"client: $*\"\necho \"model dir: $SM_MODEL_DIR\"\n"
              "echo \"checkpoints: $SM_CHECKPOINT_DIR\"\necho \"path: $PATH\"\n"
              "echo \"config: $(cat input/config/checkpointconfig.json)\"\n");
    fs::permissions(client_, fs::perms::owner_all);
    options_.containers =
        ReadyContainerEngine(std::make_shared<ContainerEngine>("docker", client_, commands_));
    options_.container.client_environment = {{"PATH", "/usr/bin:/bin"}};
    options_.container.work_dir = (temp_.path() / "work").string();
    options_.container.resource_scale = 0.5;
    options_.container.machine_cpus = 8;
  }

  amt::v1::StartJob ImageJob() {
    amt::v1::StartJob job;
    job.set_training_job_name("job-1");
    job.set_attempt(2);
    job.set_instance_type("ml.m5.xlarge");
    job.mutable_container()->set_image("my-algo:1");
    job.set_checkpoint_local_sync_dir((temp_.path() / "s3" / "checkpoints").string());
    return job;
  }

  std::string client_;
  testing::FakeEngineCommands commands_;
};

// amt-worker detects its engine in the background (--container-runtime auto): a job that names
// no image runs without waiting for it; one that names an image runs in the engine it finds.
TEST_F(ContainerJobRunnerTest, RunsACommandWhileTheEngineIsStillBeingDetected) {
  std::promise<std::shared_ptr<const ContainerEngine>> detection;
  options_.containers = detection.get_future().share();
  const auto messages = RunToExit(Job("echo plain"));
  EXPECT_THAT(LogTexts(messages), ElementsAre("plain"));
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
  detection.set_value(nullptr);
}

TEST_F(ContainerJobRunnerTest, RunsAnImageInTheEngineThatTheDetectionFinds) {
  commands_.AddImage("my-algo:1");
  std::promise<std::shared_ptr<const ContainerEngine>> detection;
  options_.containers = detection.get_future().share();
  JobRunner runner(options_, ImageJob(), *launcher_, clock_, reports_.Fn());
  runner.Start();
  detection.set_value(std::make_shared<ContainerEngine>("docker", client_, commands_));
  const auto messages = reports_.WaitForExit();
  ASSERT_FALSE(LogTexts(messages).empty());
  EXPECT_THAT(LogTexts(messages).front(), ::testing::StartsWith("client: run --name amt-job-1-2"));
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
}

TEST_F(ContainerJobRunnerTest, RunsAnImageTheEngineHoldsWithOptMlPathsAndTheInstancesResources) {
  commands_.AddImage("my-algo:1");
  const auto messages = RunToExit(ImageJob());
  const fs::path root = temp_.path() / "work" / "job-1";
  const std::string work = (temp_.path() / "work").string();
  EXPECT_THAT(
      LogTexts(messages),
      ElementsAre(
          "client: run --name amt-job-1-2-algo-1 --label amt-local.training-job=job-1 "
          "--label amt-local.work-dir=" +
              work + " --mount type=bind,source=" + (root / "input/config").string() +
              ",target=/opt/ml/input/config,readonly --mount type=bind,source=" +
              (root / "model").string() +
              ",target=/opt/ml/model --mount type=bind,source=" + (root / "output").string() +
              ",target=/opt/ml/output --mount type=bind,source=" + (root / "checkpoints").string() +
              ",target=/opt/ml/checkpoints --cpus 2 --memory 8589934592 --memory-swap "
              "8589934592 --network host --pull never -e AMT_JOB_DIR -e SM_CHANNELS -e "
              "SM_CHECKPOINT_DIR -e SM_CURRENT_HOST -e SM_CURRENT_INSTANCE_TYPE -e "
              "SM_HOSTS -e SM_HPS -e SM_INPUT_CONFIG_DIR -e SM_INPUT_DATA_CONFIG -e "
              "SM_INPUT_DIR -e SM_MODEL_DIR -e SM_NETWORK_INTERFACE_NAME -e SM_NUM_CPUS "
              "-e SM_NUM_GPUS -e SM_OUTPUT_DATA_DIR -e SM_OUTPUT_DIR -e "
              "SM_OUTPUT_INTERMEDIATE_DIR -e SM_RESOURCE_CONFIG -e TRAINING_JOB_ARN -e "
              "TRAINING_JOB_NAME my-algo:1 train",
          "model dir: /opt/ml/model", "checkpoints: /opt/ml/checkpoints", "path: /usr/bin:/bin",
          R"(config: {"LocalPath":"/opt/ml/checkpoints"})"));
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
  EXPECT_FALSE(messages.back().exited().launch_failed());
  EXPECT_THAT(commands_.commands().back(),
              ElementsAre(client_, "rm", "--force", "--volumes", "amt-job-1-2-algo-1"));
}

TEST_F(ContainerJobRunnerTest, RunsItsCommandWhenTheEngineLacksTheImage) {
  amt::v1::StartJob job = Job("echo \"model dir: $SM_MODEL_DIR\"");
  *job.mutable_container() = ImageJob().container();
  const auto messages = RunToExit(job);
  EXPECT_THAT(LogTexts(messages),
              ElementsAre("model dir: " + (temp_.path() / "work/job-1/model").string()));
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
}

TEST_F(ContainerJobRunnerTest, ScriptModeUnpacksTheCodeIntoTheJobFolderMountedAtOptMlCode) {
  commands_.AddImage("my-algo:1");
  const fs::path source = temp_.path() / "source";
  fs::create_directories(source);
  WriteFile((source / "entry.py").string(), "print('hello')\n");
  const fs::path archive = temp_.path() / "sourcedir.tar.gz";
  ASSERT_TRUE(WriteTarGz(source, archive).ok());
  amt::v1::StartJob job = ImageJob();
  job.mutable_container()->set_code_uri("s3://bucket/src/sourcedir.tar.gz");
  job.mutable_container()->set_code_path(archive.string());
  options_.keep_job_dirs = true;
  const auto messages = RunToExit(job);
  const fs::path code = temp_.path() / "work" / "job-1" / "code";
  ASSERT_FALSE(LogTexts(messages).empty());
  EXPECT_THAT(
      LogTexts(messages).front(),
      ::testing::HasSubstr(" --mount type=bind,source=" + code.string() + ",target=/opt/ml/code "));
  EXPECT_EQ(ReadFile((code / "entry.py").string()), "print('hello')\n");
  EXPECT_EQ(messages.back().exited().exit_code(), 0);
}

TEST_F(ContainerJobRunnerTest, ScriptModeCodeThatIsNotThereFailsTheJobNamingIt) {
  commands_.AddImage("my-algo:1");
  amt::v1::StartJob job = ImageJob();
  job.mutable_container()->set_code_uri("s3://bucket/src/sourcedir.tar.gz");
  const std::string missing = (temp_.path() / "s3/bucket/src/sourcedir.tar.gz").string();
  job.mutable_container()->set_code_path(missing);
  const auto messages = RunToExit(job);
  ASSERT_EQ(messages.size(), 1u);  // no container ran: no log
  EXPECT_TRUE(messages.back().exited().launch_failed());
  EXPECT_EQ(messages.back().exited().failure_reason(),
            "the code of the job, sagemaker_submit_directory s3://bucket/src/sourcedir.tar.gz, "
            "does not exist (looked for " +
                missing + ")");
}

// Two hosts on a Podman network without DNS could not find each other (and SageMaker's toolkit
// would wait for them forever): the job fails at launch saying what to install, and the network
// is removed.
TEST_F(ContainerJobRunnerTest, HostsOnANetworkWithoutDnsFailTheJobSayingWhatToInstall) {
  options_.containers =
      ReadyContainerEngine(std::make_shared<ContainerEngine>("podman", client_, commands_));
  commands_.AddImage("my-algo:1");
  commands_.SetNetworkDns(false);
  amt::v1::StartJob job = ImageJob();
  job.set_instance_count(2);
  const auto messages = RunToExit(job);
  ASSERT_EQ(messages.size(), 1u);  // no container ran: no log
  EXPECT_TRUE(messages.back().exited().launch_failed());
  EXPECT_THAT(messages.back().exited().failure_reason(),
              ::testing::AllOf(::testing::StartsWith("podman's network amt-job-1-2 has no DNS, so "
                                                     "the job's hosts could not find each other "
                                                     "as algo-1, algo-2"),
                               ::testing::HasSubstr("apt-get install netavark aardvark-dns")));
  EXPECT_THAT(commands_.commands().back(), ElementsAre(client_, "network", "rm", "amt-job-1-2"));
}

TEST_F(ContainerJobRunnerTest, FailsAnImageThatNeitherTheEngineNorACommandCanRun) {
  const auto messages = RunToExit(ImageJob());
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages.back().exited().launch_failed());
  EXPECT_THAT(messages.back().exited().failure_reason(),
              ::testing::AllOf(::testing::StartsWith("Cannot run the training image 'my-algo:1': "),
                               ::testing::HasSubstr("docker has no image of that name (pull it, "
                                                    "or build and tag it: " +
                                                    client_ + " tag <image> my-algo:1)")));
  options_.containers = ReadyContainerEngine(nullptr);
  Reports reports;
  JobRunner runner(options_, ImageJob(), *launcher_, clock_, reports.Fn());
  runner.Start();
  EXPECT_THAT(reports.WaitForExit().back().exited().failure_reason(),
              ::testing::HasSubstr("this worker has no container engine"));
}

}  // namespace
}  // namespace amt::worker
