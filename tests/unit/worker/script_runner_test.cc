#include "worker/script_runner/script_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"
#include "tests/unit/worker/tar_builder.h"
#include "worker/script_runner/requirements.h"
#include "worker/tar_gz.h"

namespace amt::worker::script {
namespace {

namespace fs = std::filesystem;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;
using ::amt::worker::testing::TarBuilder;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A job folder laid out as amt-worker lays it out, with the code in a folder of the S3 root.
class ScriptRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = temp_.path() / "job";
    for (const char* dir : {"input/config", "input/data/train", "model", "output"}) {
      fs::create_directories(job_ / dir);
    }
    WriteFile(job_ / "input/data/train/part.csv", "1,2\n");
    env_ = {{"PATH", std::getenv("PATH")},
            {"AMT_JOB_DIR", job_.string()},
            {"SM_INPUT_CONFIG_DIR", (job_ / "input/config").string()},
            {"SM_MODEL_DIR", (job_ / "model").string()},
            {"SM_OUTPUT_DIR", (job_ / "output").string()},
            {"SM_CHANNEL_TRAIN", (job_ / "input/data/train").string()},
            {"SM_HOSTS", "[\"algo-1\"]"},
            {"SM_CURRENT_HOST", "algo-1"},
            {"TRAINING_JOB_NAME", "job-1"}};
    options_.s3_root = (temp_.path() / "s3").string();
    options_.framework = "sklearn";
  }

  // The source folder packed as the SDK's sourcedir.tar.gz under s3://bucket/src/.
  void Sources(const std::map<std::string, std::string>& files) {
    const fs::path src = temp_.path() / "src";
    for (const auto& [name, text] : files) WriteFile(src / name, text);
    fs::create_directories(temp_.path() / "s3/bucket/src");
    ASSERT_TRUE(WriteTarGz(src, temp_.path() / "s3/bucket/src/sourcedir.tar.gz").ok());
  }

  // `archive` as the SDK's sourcedir.tar.gz under s3://bucket/src/.
  void SourcesArchive(const TarBuilder& archive) {
    archive.WriteGz(temp_.path() / "s3/bucket/src/sourcedir.tar.gz");
  }

  void Hyperparameters(const std::map<std::string, std::string>& user) {
    json hps = {{"sagemaker_program", "\"train.py\""},
                {"sagemaker_submit_directory", "\"s3://bucket/src/sourcedir.tar.gz\""},
                {"sagemaker_container_log_level", "20"},
                {"sagemaker_job_name", "\"sk-1\""},
                {"sagemaker_region", "\"us-east-1\""},
                {"sagemaker_estimator_class_name", "\"SKLearn\""},
                {"_tuning_objective_metric", "val_loss"}};
    for (const auto& [name, value] : user) hps[name] = value;
    WriteFile(job_ / "input/config/hyperparameters.json", hps.dump());
  }

  std::string Failure() { return ReadFile(job_ / "output/failure"); }

  TempDir temp_;
  fs::path job_;
  std::map<std::string, std::string> env_;
  ScriptRunnerOptions options_;
};

constexpr char kEchoScript[] = R"(import json, os, sys
from helper import NAME
json.dump({"argv": sys.argv, "cwd": os.getcwd(), "helper": NAME,
           "env": {k: v for k, v in os.environ.items() if k.startswith(("SM_", "SAGEMAKER_"))}},
          open(os.path.join(os.environ["SM_MODEL_DIR"], "seen.json"), "w"))
)";

TEST_F(ScriptRunnerTest, RunsTheEntryPointAsTheToolkitDoes) {
  Sources({{"train.py", kEchoScript}, {"helper.py", "NAME = 'helper'\n"}});
  Hyperparameters({{"epochs", "4"}, {"learning-rate", "0.00001"}, {"optimizer", "\"adam\""}});
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  const json seen = json::parse(ReadFile(job_ / "model/seen.json"));
  EXPECT_EQ(seen["argv"],
            json({"train.py", "--epochs", "4", "--learning-rate", "1e-05", "--optimizer", "adam"}));
  EXPECT_EQ(seen["cwd"], (job_ / "code").string());
  EXPECT_EQ(seen["helper"], "helper");  // the code folder is on PYTHONPATH and is the cwd
  const json& env = seen["env"];
  EXPECT_EQ(env["SM_USER_ENTRY_POINT"], "train.py");
  EXPECT_EQ(env["SM_MODULE_NAME"], "train");
  EXPECT_EQ(env["SM_MODULE_DIR"], "s3://bucket/src/sourcedir.tar.gz");
  EXPECT_EQ(env["SM_HPS"], R"({"epochs":4,"learning-rate":1e-05,"optimizer":"adam"})");
  EXPECT_EQ(env["SM_USER_ARGS"],
            R"(["--epochs","4","--learning-rate","1e-05","--optimizer","adam"])");
  EXPECT_EQ(env["SM_FRAMEWORK_PARAMS"], R"({"sagemaker_estimator_class_name":"SKLearn"})");
  EXPECT_EQ(env["SM_LOG_LEVEL"], "20");
  EXPECT_EQ(env["SAGEMAKER_JOB_NAME"], "sk-1");
  EXPECT_EQ(env["SAGEMAKER_REGION"], "us-east-1");
  const json training_env = json::parse(env["SM_TRAINING_ENV"].get<std::string>());
  EXPECT_EQ(training_env["channel_input_dirs"]["train"], (job_ / "input/data/train").string());
  EXPECT_EQ(training_env["hyperparameters"]["epochs"], 4);
  EXPECT_EQ(training_env["job_name"], "job-1");
  EXPECT_TRUE(training_env["is_master"].get<bool>());
  EXPECT_TRUE(fs::exists(job_ / "output/success"));
}

TEST_F(ScriptRunnerTest, AFailingScriptGetsTheToolkitsExecuteUserScriptError) {
  Sources({{"train.py", "def f():\n    raise ValueError(\"boom: bad value\")\nf()\n"}});
  Hyperparameters({{"alpha", "1"}});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(),
            "ExecuteUserScriptError:\nExitCode 1\nErrorMessage \"raise ValueError(\"boom: bad "
            "value\")\n ValueError: boom: bad value\"\nCommand \"python3 train.py --alpha 1\"");
  EXPECT_FALSE(fs::exists(job_ / "output/success"));
}

TEST_F(ScriptRunnerTest, AFailureTheScriptWroteItselfIsKept) {
  Sources({{"train.py",
            "import os, sys\nopen(os.environ['SM_OUTPUT_DIR'] + '/failure', 'w').write('mine')\n"
            "sys.exit(3)\n"}});
  Hyperparameters({});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(), "mine");
}

TEST_F(ScriptRunnerTest, ABadRequirementsFileFailsBeforeTheScript) {
  Sources({{"train.py", "open('ran', 'w')\n"}, {"requirements.txt", "this is not ==\n"}});
  Hyperparameters({});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_THAT(Failure(), StartsWith("InstallRequirementsError:\nExitCode "));
  EXPECT_THAT(Failure(), HasSubstr("ErrorMessage \"Invalid requirement: 'this is not =='"));
  EXPECT_THAT(Failure(), HasSubstr("Command \"" + (job_ / "venv/bin/python").string() +
                                   " -m pip install -r requirements.txt\""));
  EXPECT_FALSE(fs::exists(job_ / "code/ran"));
  // --no-requirements skips the install.
  options_.install_requirements = false;
  fs::remove(job_ / "output/failure");
  EXPECT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  EXPECT_TRUE(fs::exists(job_ / "code/ran"));
}

// The names in a folder, sorted ("" for one that does not exist).
std::set<std::string> Listing(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) names.insert(entry.path().string());
  return names;
}

constexpr char kWhereScript[] = R"(import json, os, sys, numpy
json.dump({"prefix": sys.prefix, "virtual_env": os.environ.get("VIRTUAL_ENV"),
           "path0": os.environ["PATH"].split(":")[0], "numpy": numpy.__file__},
          open(os.path.join(os.environ["SM_MODEL_DIR"], "where.json"), "w"))
)";

TEST_F(ScriptRunnerTest, RequirementsInstallIntoAnEnvironmentOfTheJobUnderDebiansPython) {
  // Debian's Python is externally managed (PEP 668): pip refuses to install into it, even what
  // it has. numpy is Debian's python3-numpy (scripts/install-deps.sh).
  if (!fs::exists("/usr/lib/python3/dist-packages/numpy")) {
    GTEST_SKIP() << "needs Debian's /usr/bin/python3 with python3-numpy";
  }
  options_.python = "/usr/bin/python3";
  env_["PIP_NO_INDEX"] = "1";  // nothing to download: what is installed satisfies it
  Sources({{"train.py", kWhereScript}, {"requirements.txt", "numpy\n"}});
  Hyperparameters({});
  const auto system_before = Listing("/usr/lib/python3/dist-packages");
  const auto local_before = Listing("/usr/local/lib/python3.11/dist-packages");
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  const json where = json::parse(ReadFile(job_ / "model/where.json"));
  EXPECT_EQ(where["prefix"], (job_ / "venv").string());
  EXPECT_EQ(where["virtual_env"], (job_ / "venv").string());
  EXPECT_EQ(where["path0"], (job_ / "venv/bin").string());
  EXPECT_THAT(where["numpy"].get<std::string>(), StartsWith("/usr/lib/python3/dist-packages/"));
  EXPECT_EQ(Listing("/usr/lib/python3/dist-packages"), system_before);
  EXPECT_EQ(Listing("/usr/local/lib/python3.11/dist-packages"), local_before);
}

TEST_F(ScriptRunnerTest, AMissingRequirementIsNamedInTheFailureReason) {
  env_["PIP_NO_INDEX"] = "1";  // as offline: no index to find it in
  Sources({{"train.py", "open('ran', 'w')\n"},
           {"requirements.txt", "amt-local-no-such-package==1.0\n"}});
  Hyperparameters({});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_THAT(Failure(), StartsWith("InstallRequirementsError:\nExitCode 1\nErrorMessage \""
                                    "Could not find a version that satisfies the requirement "
                                    "amt-local-no-such-package==1.0"));
  EXPECT_THAT(Failure(),
              HasSubstr("\n No matching distribution found for amt-local-no-such-package==1.0"));
  EXPECT_FALSE(fs::exists(job_ / "code/ran"));
}

TEST(PipErrorMessage, TakesPipsErrorLinesOverItsWarnings) {
  EXPECT_EQ(PipErrorMessage("WARNING: Retrying (Retry(total=4)) after connection broken\n"
                            "ERROR: Could not find a version that satisfies the requirement x==1\n"
                            "ERROR: No matching distribution found for x==1\n"),
            "Could not find a version that satisfies the requirement x==1\n No matching "
            "distribution found for x==1");
  EXPECT_EQ(PipErrorMessage("Traceback (most recent call last):\nValueError: bad\n"),
            "ValueError: bad");
  EXPECT_EQ(PipErrorMessage("/venv/bin/python: No module named pip\n\n"),
            "/venv/bin/python: No module named pip");
}

TEST_F(ScriptRunnerTest, ShellEntryPointsRunThroughSh) {
  Sources({{"train.py", ""}, {"run.sh", "#!/bin/sh\necho \"$@\" > \"$SM_MODEL_DIR/args\"\n"}});
  Hyperparameters({{"sagemaker_program", "\"run.sh\""}, {"msg", "\"a b\""}});
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  EXPECT_EQ(ReadFile(job_ / "model/args"), "--msg a b\n");
}

TEST_F(ScriptRunnerTest, MissingOrUnsafeCodeIsAClientError) {
  Hyperparameters({});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);  // no sourcedir.tar.gz uploaded
  EXPECT_THAT(Failure(), HasSubstr("sagemaker_submit_directory s3://bucket/src/sourcedir.tar.gz, "
                                   "does not exist"));

  fs::remove(job_ / "output/failure");
  Sources({{"other.py", ""}});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_THAT(Failure(), HasSubstr("the entry point train.py is not in the job's code"));
}

TEST_F(ScriptRunnerTest, AnInterpreterThatDoesNotExistIsNamed) {
  Sources({{"train.py", ""}});
  Hyperparameters({});
  options_.python = "/no/such/python3";
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(),
            "ClientError: the Python interpreter for sklearn images, /no/such/python3, is not an "
            "executable file (nor found in PATH): give amtd --python sklearn=/path/to/bin/python");
}

// The permission bits of `path`.
unsigned ModeOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A shell script outside the code folder that leaves a mark when it runs.
fs::path OutsideScript(const fs::path& path) {
  WriteFile(path, "#!/bin/sh\ntouch \"$SM_MODEL_DIR/ran\"\n");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  return path;
}

TEST_F(ScriptRunnerTest, AnEntryPointThatIsASymlinkOutOfTheCodeIsRefusedAndNotChmodded) {
  const fs::path outside = OutsideScript(temp_.path() / "outside" / "evil.sh");
  SourcesArchive(TarBuilder().File("train.py", "").Symlink("run.sh", outside.string()));
  Hyperparameters({{"sagemaker_program", "\"run.sh\""}});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  const fs::path code = job_ / "code";
  EXPECT_EQ(Failure(),
            "ClientError: the entry point (sagemaker_program) run.sh is not a file in "
            "the job's code folder " +
                code.string() + ": " + (code / "run.sh").string() + " is a symbolic link");
  EXPECT_EQ(ModeOf(outside), 0600u);
  EXPECT_FALSE(fs::exists(job_ / "model/ran"));
}

TEST_F(ScriptRunnerTest, AnEntryPointUnderASymlinkedFolderIsRefused) {
  const fs::path outside = OutsideScript(temp_.path() / "outside" / "evil.sh");
  SourcesArchive(TarBuilder().File("train.py", "").Symlink("bin", outside.parent_path().string()));
  Hyperparameters({{"sagemaker_program", "\"bin/evil.sh\""}});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_THAT(Failure(), HasSubstr("(sagemaker_program) bin/evil.sh is not a file in the job's "
                                   "code folder"));
  EXPECT_THAT(Failure(), HasSubstr((job_ / "code/bin").string() + " is a symbolic link"));
  EXPECT_EQ(ModeOf(outside), 0600u);
  EXPECT_FALSE(fs::exists(job_ / "model/ran"));
}

TEST_F(ScriptRunnerTest, AnAbsoluteEntryPointIsRefusedAndNotChmodded) {
  const fs::path outside = OutsideScript(temp_.path() / "outside" / "evil.sh");
  Sources({{"train.py", ""}});
  Hyperparameters({{"sagemaker_program", json(outside.string()).dump()}});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(), "ClientError: the entry point (sagemaker_program) " + outside.string() +
                           " is not a file in the job's code folder " + (job_ / "code").string() +
                           ": it is an absolute path");
  EXPECT_EQ(ModeOf(outside), 0600u);
  EXPECT_FALSE(fs::exists(job_ / "model/ran"));
}

TEST_F(ScriptRunnerTest, AnEntryPointWithDotDotIsRefusedAndNotChmodded) {
  // code/../evil.sh is the job folder's evil.sh.
  const fs::path outside = OutsideScript(job_ / "evil.sh");
  Sources({{"train.py", ""}});
  Hyperparameters({{"sagemaker_program", "\"../evil.sh\""}});
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(),
            "ClientError: the entry point (sagemaker_program) ../evil.sh is not a file "
            "in the job's code folder " +
                (job_ / "code").string() + ": it has a \"..\" segment");
  EXPECT_EQ(ModeOf(outside), 0600u);
  EXPECT_FALSE(fs::exists(job_ / "model/ran"));
}

TEST_F(ScriptRunnerTest, ACodeArchiveExpandingPastTheVolumeIsRefused) {
  // A tar bomb's header: 2 GiB promised by a few hundred bytes of gzip.
  SourcesArchive(TarBuilder()
                     .File("train.py", "")
                     .FileHeaderOnly("data.bin", uint64_t{2} << 30, std::string(4096, '\0')));
  Hyperparameters({});
  env_["AMT_VOLUME_SIZE_GB"] = "1";
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_THAT(Failure(), StartsWith("ClientError: sagemaker_submit_directory "
                                    "s3://bucket/src/sourcedir.tar.gz: cannot unpack "));
  EXPECT_THAT(Failure(), HasSubstr(": it expands past the VolumeSizeInGB of 1 GB (member "
                                   "\"data.bin\" of 2147483648 bytes"));
  EXPECT_FALSE(fs::exists(job_ / "code"));  // what was unpacked is gone

  // Without a volume size: SageMaker's default volume.
  fs::remove(job_ / "output/failure");
  SourcesArchive(TarBuilder().FileHeaderOnly("data.bin", uint64_t{31} << 30, ""));
  env_.erase("AMT_VOLUME_SIZE_GB");
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_THAT(Failure(), HasSubstr(": it expands past the default volume of 30 GB (the job gives "
                                   "no VolumeSizeInGB)"));
}

TEST_F(ScriptRunnerTest, AFullDiskWhileUnpackingSaysNoSpaceLeftOnDeviceAndTheJobFolder) {
  Sources({{"train.py", "print(1)\n"}});
  Hyperparameters({});
  env_["AMT_VOLUME_SIZE_GB"] = "5";
  options_.unpack_write = [](int, const void*, size_t) -> ssize_t {
    errno = ENOSPC;
    return -1;
  };
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(), "ClientError: No space left on device in the job folder " + job_.string() +
                           " (the VolumeSizeInGB of 5 GB) while writing the job's code, "
                           "sagemaker_submit_directory s3://bucket/src/sourcedir.tar.gz: cannot "
                           "write " +
                           (job_ / "code/train.py").string() + ": No space left on device");
  EXPECT_FALSE(fs::exists(job_ / "code"));
}

TEST_F(ScriptRunnerTest, AnEntryPointInASubfolderStillRuns) {
  Sources({{"train.py", ""}, {"bin/run.sh", "#!/bin/sh\necho \"$@\" > \"$SM_MODEL_DIR/args\"\n"}});
  Hyperparameters({{"sagemaker_program", "\"./bin/run.sh\""}, {"msg", "\"x\""}});
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  EXPECT_EQ(ReadFile(job_ / "model/args"), "--msg x\n");
  EXPECT_EQ(ModeOf(job_ / "code/bin/run.sh"), 0777u);
}

// The built-in XGBoost algorithm runs with Debian's python3-xgboost (scripts/install-deps.sh).
class BuiltInXgboostTest : public ScriptRunnerTest {
 protected:
  void SetUp() override {
    ScriptRunnerTest::SetUp();
    options_.framework = "xgboost";
    options_.python = "/usr/bin/python3";
    options_.xgboost_algorithm = AMT_XGBOOST_ALGORITHM;
    WriteFile(job_ / "input/config/inputdataconfig.json",
              R"({"train": {"ContentType": "text/csv"}, "validation": {"ContentType": "csv"}})");
    std::string train;
    std::string validation;
    for (int i = 0; i < 200; ++i) {
      const double x = (i % 50) / 10.0;
      const std::string row = std::string(x > 2.4 ? "1" : "0") + "," + std::to_string(x) + "," +
                              std::to_string((i * 7) % 11) + "\n";
      (i % 4 == 0 ? validation : train) += row;
    }
    WriteFile(job_ / "input/data/train/part.csv", train);
    fs::create_directories(job_ / "input/data/validation");
    WriteFile(job_ / "input/data/validation/part.csv", validation);
    env_["SM_CHANNEL_VALIDATION"] = (job_ / "input/data/validation").string();
  }
};

TEST_F(BuiltInXgboostTest, TrainsFromCsvChannelsAndWritesXgboostModel) {
  WriteFile(job_ / "input/config/hyperparameters.json",
            R"({"num_round": "5", "objective": "binary:logistic", "max_depth": "2",
                "_tuning_objective_metric": "validation:auc"})");
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  EXPECT_GT(fs::file_size(job_ / "model/xgboost-model"), 0u);
}

TEST_F(BuiltInXgboostTest, ResumesFromItsNewestCheckpointToTheModelOfAnUninterruptedRun) {
  WriteFile(job_ / "input/config/hyperparameters.json",
            R"({"num_round": "8", "objective": "binary:logistic", "max_depth": "2",
                "eval_metric": "auc"})");
  // Uninterrupted: 8 rounds, a checkpoint after each, the newest 5 kept.
  const fs::path checkpoints = job_ / "checkpoints";
  WriteFile(job_ / "input/config/checkpointconfig.json",
            json({{"LocalPath", checkpoints.string()}}).dump());
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  std::set<std::string> kept;
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    kept.insert(entry.path().filename().string());
  }
  EXPECT_EQ(kept, (std::set<std::string>{"xgboost-checkpoint.3", "xgboost-checkpoint.4",
                                         "xgboost-checkpoint.5", "xgboost-checkpoint.6",
                                         "xgboost-checkpoint.7"}));
  const std::string uninterrupted = ReadFile(job_ / "model/xgboost-model");

  // Interrupted after round 4 was saved (rounds 5-7 lost), with a damaged newest file: the
  // next attempt loads round 4's, trains rounds 5-7 and numbers its lines from 5.
  fs::remove(checkpoints / "xgboost-checkpoint.6");
  fs::remove(checkpoints / "xgboost-checkpoint.7");
  WriteFile(checkpoints / "xgboost-checkpoint.5", "not a model");
  fs::remove(job_ / "model/xgboost-model");
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(RunScriptMode(options_, env_), 0) << Failure();
  const std::string log = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(log, HasSubstr("Checkpoint loaded from " +
                             (checkpoints / "xgboost-checkpoint.4").string() + "\n"));
  EXPECT_THAT(log, HasSubstr("Resuming from iteration 5\n"));
  EXPECT_THAT(log, ::testing::MatchesRegex("(.|\n)*\n\\[5\\]\ttrain-auc:[0-9.]+\tvalidation-auc:"
                                           "[0-9.]+\n(.|\n)*"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("[4]\t")));
  EXPECT_THAT(log, HasSubstr("[7]\t"));
  EXPECT_EQ(ReadFile(job_ / "model/xgboost-model"), uninterrupted);
}

TEST_F(BuiltInXgboostTest, UnknownHyperparametersGetTheContainersError) {
  WriteFile(job_ / "input/config/hyperparameters.json", R"({"num_round": "2", "epochs": "1"})");
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(), "ClientError: Extraneous hyperparameter found: epochs");
  fs::remove(job_ / "output/failure");
  WriteFile(job_ / "input/config/hyperparameters.json", R"({"max_depth": "2"})");
  EXPECT_EQ(RunScriptMode(options_, env_), 1);
  EXPECT_EQ(Failure(), "ClientError: Missing required hyperparameter: num_round");
}

}  // namespace
}  // namespace amt::worker::script
