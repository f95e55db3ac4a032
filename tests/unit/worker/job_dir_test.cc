#include "worker/job_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

namespace fs = std::filesystem;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;
using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

amt::v1::StartJob MakeJob(const fs::path& data_dir) {
  amt::v1::StartJob job;
  job.set_training_job_name("tune-001-abcdef12");
  job.set_attempt(1);
  job.set_training_job_arn(
      "arn:aws:sagemaker:us-east-1:123456789012:training-job/tune-001-abcdef12");
  job.add_command("/bin/true");
  (*job.mutable_hyperparameters())["learning_rate"] = "0.01";
  (*job.mutable_hyperparameters())["optimizer"] = "adam";
  (*job.mutable_hyperparameters())["num-layers"] = "4";
  (*job.mutable_hyperparameters())["_tuning_objective_metric"] = "val_loss";
  (*job.mutable_environment())["MY_VAR"] = "hello";
  (*job.mutable_environment())["SM_NUM_GPUS"] = "8";  // ours win
  amt::v1::ChannelAssignment* train = job.add_channels();
  train->set_channel_name("train");
  train->set_local_path(data_dir.string());
  train->set_input_config_json(
      R"({"TrainingInputMode":"File","S3DistributionType":"FullyReplicated","RecordWrapperType":"None","ContentType":"text/csv"})");
  amt::v1::ChannelAssignment* validation = job.add_channels();
  validation->set_channel_name("validation");
  job.set_instance_type("ml.m5.large");
  job.set_instance_count(1);
  job.set_input_mode("File");
  return job;
}

class JobDirTest : public ::testing::Test {
 protected:
  JobDirTest() {
    data_dir_ = temp_.path() / "data";
    fs::create_directories(data_dir_);
    WriteFile(data_dir_ / "train.csv", "1,2,3\n");
    options_.work_dir = (temp_.path() / "work").string();
    options_.num_cpus = 3;
  }

  TempDir temp_;
  fs::path data_dir_;
  JobDirOptions options_;
};

TEST_F(JobDirTest, CreatesTheOptMlLayout) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  const fs::path root = temp_.path() / "work" / "tune-001-abcdef12";
  EXPECT_EQ(dir->paths().root, root);
  EXPECT_TRUE(fs::is_directory(root / "input" / "config"));
  EXPECT_TRUE(fs::is_directory(root / "model"));
  EXPECT_TRUE(fs::is_directory(root / "output" / "data"));
  EXPECT_TRUE(fs::is_directory(root / "output" / "intermediate"));
  EXPECT_FALSE(fs::exists(root / "output" / "failure"));
  EXPECT_FALSE(fs::exists(root / "checkpoints"));
  EXPECT_FALSE(fs::exists(root / "input" / "config" / "checkpointconfig.json"));
  EXPECT_TRUE(dir->paths().checkpoints.empty());
  ASSERT_TRUE(fs::is_symlink(root / "input" / "data" / "train"));
  EXPECT_EQ(fs::read_symlink(root / "input" / "data" / "train"), data_dir_);
  EXPECT_EQ(ReadFile(root / "input" / "data" / "train" / "train.csv"), "1,2,3\n");
  // A channel without a local path gets an empty directory.
  EXPECT_TRUE(fs::is_directory(root / "input" / "data" / "validation"));
  EXPECT_FALSE(fs::is_symlink(root / "input" / "data" / "validation"));
}

TEST_F(JobDirTest, WritesHyperparametersAsStrings) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  const json hps = json::parse(ReadFile(dir->paths().input_config / "hyperparameters.json"));
  EXPECT_EQ(hps, json({{"learning_rate", "0.01"},
                       {"optimizer", "adam"},
                       {"num-layers", "4"},
                       {"_tuning_objective_metric", "val_loss"}}));
}

TEST_F(JobDirTest, WritesResourceConfigForOneHost) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  const json config = json::parse(ReadFile(dir->paths().input_config / "resourceconfig.json"));
  EXPECT_EQ(config, json::parse(R"({
    "current_host": "algo-1", "hosts": ["algo-1"], "network_interface_name": "eth0",
    "current_instance_type": "ml.m5.large", "current_group_name": "homogeneousCluster",
    "instance_groups": [{"instance_group_name": "homogeneousCluster",
                         "instance_type": "ml.m5.large", "hosts": ["algo-1"]}]})"));
}

TEST_F(JobDirTest, WritesInputDataConfigPerChannel) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  const json config = json::parse(ReadFile(dir->paths().input_config / "inputdataconfig.json"));
  EXPECT_EQ(config, json::parse(R"({
    "train": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated",
              "RecordWrapperType": "None", "ContentType": "text/csv"},
    "validation": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated",
                   "RecordWrapperType": "None"}})"));
}

TEST_F(JobDirTest, BuildsTheSageMakerEnvironment) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  const std::string root = (temp_.path() / "work" / "tune-001-abcdef12").string();
  const auto& env = dir->environment();
  EXPECT_THAT(env, Contains(Pair("MY_VAR", "hello")));
  EXPECT_THAT(env, Contains(Pair("TRAINING_JOB_NAME", "tune-001-abcdef12")));
  EXPECT_THAT(env, Contains(Pair("TRAINING_JOB_ARN",
                                 "arn:aws:sagemaker:us-east-1:123456789012:training-job/"
                                 "tune-001-abcdef12")));
  EXPECT_THAT(env, Contains(Pair("AMT_JOB_DIR", root)));
  EXPECT_THAT(env, Contains(Pair("SM_MODEL_DIR", root + "/model")));
  EXPECT_THAT(env, Contains(Pair("SM_INPUT_DIR", root + "/input")));
  EXPECT_THAT(env, Contains(Pair("SM_INPUT_CONFIG_DIR", root + "/input/config")));
  EXPECT_THAT(env, Contains(Pair("SM_OUTPUT_DIR", root + "/output")));
  EXPECT_THAT(env, Contains(Pair("SM_OUTPUT_DATA_DIR", root + "/output/data")));
  EXPECT_THAT(env, Contains(Pair("SM_OUTPUT_INTERMEDIATE_DIR", root + "/output/intermediate")));
  EXPECT_THAT(env, Contains(Pair("SM_CHANNELS", R"(["train","validation"])")));
  EXPECT_THAT(env, Contains(Pair("SM_CHANNEL_TRAIN", root + "/input/data/train")));
  EXPECT_THAT(env, Contains(Pair("SM_CHANNEL_VALIDATION", root + "/input/data/validation")));
  EXPECT_THAT(env, Contains(Pair("SM_CURRENT_HOST", "algo-1")));
  EXPECT_THAT(env, Contains(Pair("SM_HOSTS", R"(["algo-1"])")));
  EXPECT_THAT(env, Contains(Pair("SM_CURRENT_INSTANCE_TYPE", "ml.m5.large")));
  EXPECT_THAT(env, Contains(Pair("SM_NUM_CPUS", "3")));
  EXPECT_THAT(env, Contains(Pair("SM_NUM_GPUS", "0")));
  // Hyperparameters: JSON-decoded where possible, names upper-cased with dashes kept, the
  // tuning objective left out.
  EXPECT_THAT(
      env, Contains(Pair("SM_HPS", R"({"learning_rate":0.01,"num-layers":4,"optimizer":"adam"})")));
  EXPECT_THAT(env, Contains(Pair("SM_HP_LEARNING_RATE", "0.01")));
  EXPECT_THAT(env, Contains(Pair("SM_HP_NUM-LAYERS", "4")));
  EXPECT_THAT(env, Contains(Pair("SM_HP_OPTIMIZER", "adam")));
  EXPECT_THAT(env, Not(Contains(Key("SM_HP__TUNING_OBJECTIVE_METRIC"))));
  EXPECT_EQ(json::parse(env.at("SM_RESOURCE_CONFIG")),
            json::parse(ReadFile(dir->paths().input_config / "resourceconfig.json")));
  EXPECT_EQ(json::parse(env.at("SM_INPUT_DATA_CONFIG")),
            json::parse(ReadFile(dir->paths().input_config / "inputdataconfig.json")));
  EXPECT_THAT(env, Not(Contains(Key("SM_CHECKPOINT_DIR"))));
  EXPECT_THAT(env, Not(Contains(Key("PATH"))));
}

TEST_F(JobDirTest, GivesEachJobItsShareOfThreadsUnlessItsEnvironmentSetsThem) {
  options_.threads_per_job = 2;
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  EXPECT_THAT(dir->environment(), Contains(Pair("OMP_NUM_THREADS", "2")));
  EXPECT_THAT(dir->environment(), Contains(Pair("MKL_NUM_THREADS", "2")));
  EXPECT_THAT(dir->environment(), Contains(Pair("OPENBLAS_NUM_THREADS", "2")));

  amt::v1::StartJob job = MakeJob(data_dir_);
  job.set_training_job_name("tune-002-abcdef12");
  (*job.mutable_environment())["OMP_NUM_THREADS"] = "8";
  auto own = JobDir::Create(options_, job);
  ASSERT_THAT(own, IsOk());
  EXPECT_THAT(own->environment(), Contains(Pair("OMP_NUM_THREADS", "8")));
  EXPECT_THAT(own->environment(), Not(Contains(Key("MKL_NUM_THREADS"))));

  options_.threads_per_job = 0;
  job.set_training_job_name("tune-003-abcdef12");
  job.mutable_environment()->erase("OMP_NUM_THREADS");
  auto unset = JobDir::Create(options_, job);
  ASSERT_THAT(unset, IsOk());
  EXPECT_THAT(unset->environment(), Not(Contains(Key("OMP_NUM_THREADS"))));
}

TEST_F(JobDirTest, RejectsAJobNameThatIsAPath) {
  amt::v1::StartJob job = MakeJob(data_dir_);
  job.set_training_job_name("../escape");
  auto dir = JobDir::Create(options_, job);
  EXPECT_THAT(
      dir, StatusIs(absl::StatusCode::kInvalidArgument, "invalid training job name '../escape'"));
}

TEST_F(JobDirTest, RejectsAChannelNameThatIsAPath) {
  amt::v1::StartJob job = MakeJob(data_dir_);
  job.mutable_channels(0)->set_channel_name("..");
  auto dir = JobDir::Create(options_, job);
  EXPECT_THAT(dir, StatusIs(absl::StatusCode::kInvalidArgument, "invalid channel name '..'"));
}

TEST_F(JobDirTest, RejectsInputConfigThatIsNotAJsonObject) {
  amt::v1::StartJob job = MakeJob(data_dir_);
  job.mutable_channels(0)->set_input_config_json("[1]");
  auto dir = JobDir::Create(options_, job);
  EXPECT_THAT(dir, StatusIs(absl::StatusCode::kInvalidArgument,
                            "channel 'train': input_config_json is not a JSON object"));
}

TEST_F(JobDirTest, FailsWithNotFoundWhenChannelDataIsMissing) {
  amt::v1::StartJob job = MakeJob(data_dir_);
  job.mutable_channels(0)->set_local_path((temp_.path() / "nope").string());
  auto dir = JobDir::Create(options_, job);
  EXPECT_THAT(dir, StatusIs(absl::StatusCode::kNotFound, "channel 'train': local path " +
                                                             (temp_.path() / "nope").string() +
                                                             " does not exist"));
}

TEST_F(JobDirTest, RemovesWhatAPreviousAttemptLeft) {
  const fs::path stale = temp_.path() / "work" / "tune-001-abcdef12" / "model" / "old.bin";
  WriteFile(stale, "old");
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  EXPECT_FALSE(fs::exists(stale));
}

TEST_F(JobDirTest, CopiesCheckpointsInAndSyncsChangesBack) {
  const fs::path sync = temp_.path() / "s3" / "checkpoints";
  WriteFile(sync / "epoch-1.ckpt", "one");
  WriteFile(sync / "sub" / "keep.ckpt", "keep");
  WriteFile(sync / "delete-me.ckpt", "bye");
  amt::v1::StartJob job = MakeJob(data_dir_);
  job.set_checkpoint_local_sync_dir(sync.string());
  job.set_checkpoint_container_path("/opt/ml/checkpoints");
  auto dir = JobDir::Create(options_, job);
  ASSERT_THAT(dir, IsOk());

  const fs::path local = dir->paths().checkpoints;
  EXPECT_EQ(local, dir->paths().root / "checkpoints");
  EXPECT_THAT(dir->environment(), Contains(Pair("SM_CHECKPOINT_DIR", local.string())));
  // SageMaker's checkpointconfig.json, with the folder as this trainer sees it.
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir->paths().input_config / "checkpointconfig.json")),
            nlohmann::json({{"LocalPath", local.string()}}));
  EXPECT_EQ(ReadFile(local / "epoch-1.ckpt"), "one");
  EXPECT_EQ(ReadFile(local / "sub" / "keep.ckpt"), "keep");

  // The trainer writes a new file, changes one, deletes one.
  WriteFile(local / "epoch-2.ckpt", "two");
  WriteFile(local / "epoch-1.ckpt", "one, longer now");
  fs::remove(local / "delete-me.ckpt");
  // A file that appeared in "S3" after the start is not the trainer's to delete.
  WriteFile(sync / "someone-else.ckpt", "theirs");

  ASSERT_THAT(dir->SyncCheckpointsOut(), IsOk());
  EXPECT_EQ(ReadFile(sync / "epoch-2.ckpt"), "two");
  EXPECT_EQ(ReadFile(sync / "epoch-1.ckpt"), "one, longer now");
  EXPECT_EQ(ReadFile(sync / "sub" / "keep.ckpt"), "keep");
  EXPECT_FALSE(fs::exists(sync / "delete-me.ckpt"));
  EXPECT_EQ(ReadFile(sync / "someone-else.ckpt"), "theirs");
}

TEST_F(JobDirTest, CreatesTheSyncDirWhenTheFirstAttemptHasNoCheckpointsYet) {
  const fs::path sync = temp_.path() / "s3" / "new-checkpoints";
  amt::v1::StartJob job = MakeJob(data_dir_);
  job.set_checkpoint_local_sync_dir(sync.string());
  auto dir = JobDir::Create(options_, job);
  ASSERT_THAT(dir, IsOk());
  EXPECT_THAT(fs::directory_iterator(dir->paths().checkpoints) == fs::directory_iterator(), true);
  WriteFile(dir->paths().checkpoints / "a.ckpt", "a");
  ASSERT_THAT(dir->SyncCheckpointsOut(), IsOk());
  EXPECT_EQ(ReadFile(sync / "a.ckpt"), "a");
}

TEST_F(JobDirTest, ReadsNoFailureReasonWhenTheFileIsAbsent) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  EXPECT_THAT(dir->ReadFailureReason(), IsEmpty());
}

TEST_F(JobDirTest, ReadsTheFirst1024CharactersOfTheFailureFile) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  WriteFile(dir->paths().failure, std::string(3000, 'x'));
  EXPECT_EQ(dir->ReadFailureReason(), std::string(1024, 'x'));
  WriteFile(dir->paths().failure, "AlgorithmError: boom\n");
  EXPECT_EQ(dir->ReadFailureReason(), "AlgorithmError: boom");
}

TEST_F(JobDirTest, ReportsOutputDataOnlyWhenPresent) {
  auto dir = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(dir, IsOk());
  EXPECT_FALSE(dir->HasOutputData());
  WriteFile(dir->paths().output_data / "report.txt", "r");
  EXPECT_TRUE(dir->HasOutputData());
}

TEST(TruncateFailureReason, CountsUtf8CharactersNotBytes) {
  // "é" is two bytes; three characters fit, a fourth would not.
  EXPECT_EQ(TruncateFailureReason("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3),
            "\xC3\xA9\xC3\xA9\xC3\xA9");
  EXPECT_EQ(TruncateFailureReason("abc  \n", 10), "abc");
  EXPECT_EQ(TruncateFailureReason("", 10), "");
}

TEST_F(JobDirTest, AnotherHostOfAMultiInstanceJobHasItsOwnFolderNameAndAddresses) {
  HostSpec host;
  host.index = 2;
  host.count = 2;
  host.addresses = {"127.1.0.1", "127.1.0.2"};
  host.hosts_file_text = "127.1.0.1 algo-1\n127.1.0.2 algo-2\n";
  auto dir = JobDir::Create(options_, MakeJob(data_dir_), host);
  ASSERT_THAT(dir, IsOk());
  const fs::path root = temp_.path() / "work" / "tune-001-abcdef12.algo-2";
  EXPECT_EQ(dir->paths().root, root);
  EXPECT_EQ(ReadFile(root / "hosts"), host.hosts_file_text);
  EXPECT_EQ(dir->paths().hosts_file, root / "hosts");
  const json config = json::parse(ReadFile(root / "input" / "config" / "resourceconfig.json"));
  EXPECT_EQ(config, json::parse(R"({
    "current_host": "algo-2", "hosts": ["algo-1", "algo-2"], "network_interface_name": "lo",
    "current_instance_type": "ml.m5.large", "current_group_name": "homogeneousCluster",
    "instance_groups": [{"instance_group_name": "homogeneousCluster",
                         "instance_type": "ml.m5.large", "hosts": ["algo-1", "algo-2"]}]})"));
  const auto& env = dir->environment();
  EXPECT_EQ(env.at("SM_CURRENT_HOST"), "algo-2");
  EXPECT_EQ(env.at("SM_HOSTS"), R"(["algo-1","algo-2"])");
  EXPECT_EQ(env.at("SM_NETWORK_INTERFACE_NAME"), "lo");
  EXPECT_EQ(env.at("AMT_HOST_ADDRESSES"), R"({"algo-1":"127.1.0.1","algo-2":"127.1.0.2"})");
  EXPECT_EQ(env.at("SM_MODEL_DIR"), (root / "model").string());
}

TEST_F(JobDirTest, RefusesAHostOutsideTheJobsCount) {
  HostSpec host;
  host.index = 3;
  host.count = 2;
  EXPECT_THAT(JobDir::Create(options_, MakeJob(data_dir_), host),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
// A succeeded job's folder becomes the next job's: the same directories (same inodes), emptied of
// everything the job wrote, the user's channel data untouched, the config files rewritten.
TEST_F(JobDirTest, ASpareFolderIsTheNextJobsLayoutWithNothingOfTheLastJobLeft) {
  options_.spares = std::make_shared<JobDirPool>(temp_.path() / "work" / ".spare-folders", 2);
  amt::v1::StartJob first = MakeJob(data_dir_);
  first.set_checkpoint_local_sync_dir((temp_.path() / "sync").string());
  auto a = JobDir::Create(options_, first);
  ASSERT_THAT(a, IsOk());
  const JobPaths& pa = a->paths();
  fs::create_directories(pa.checkpoints);
  WriteFile(pa.model / "model.bin", "weights");
  WriteFile(pa.output_data / "predictions.csv", "1\n");
  WriteFile(pa.failure, "boom");
  WriteFile(pa.root / "scratch.txt", "x");
  fs::create_directories(pa.output_intermediate / "deep" / "er");
  WriteFile(pa.checkpoints / "ckpt-1", "state");
  struct stat before {};
  ASSERT_EQ(::stat(pa.model.c_str(), &before), 0);

  options_.spares->Recycle(pa);
  EXPECT_FALSE(fs::exists(pa.root));
  EXPECT_EQ(ReadFile(data_dir_ / "train.csv"),
            "1,2,3\n");  // the channel's symlink was not followed

  amt::v1::StartJob second = MakeJob(data_dir_);
  second.set_training_job_name("tune-002-abcdef12");
  (*second.mutable_hyperparameters())["learning_rate"] = "0.5";
  second.clear_channels();
  auto b = JobDir::Create(options_, second);
  ASSERT_THAT(b, IsOk());
  const JobPaths& pb = b->paths();
  struct stat after {};
  ASSERT_EQ(::stat(pb.model.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // reused, not made anew
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(pb.root)) {
    left.push_back(fs::relative(e.path(), pb.root).string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_THAT(left, ::testing::ElementsAre(
                        "input", "input/config", "input/config/hyperparameters.json",
                        "input/config/inputdataconfig.json", "input/config/resourceconfig.json",
                        "input/data", "model", "output", "output/data", "output/intermediate"));
  EXPECT_EQ(json::parse(ReadFile(pb.input_config / "hyperparameters.json"))["learning_rate"],
            "0.5");
  EXPECT_EQ(json::parse(ReadFile(pb.input_config / "inputdataconfig.json")), json::object());
}

TEST_F(JobDirTest, ASpareFoldersConfigFilesAreOverwrittenInPlaceAndCutToTheNewLength) {
  options_.spares = std::make_shared<JobDirPool>(temp_.path() / "work" / ".spare-folders", 2);
  const fs::path hyperparameters = "input/config/hyperparameters.json";
  std::string previous;
  ino_t inode = 0;
  // Longer, then shorter, then longer again than the file the spare folder kept.
  for (const std::string value : {"0.012345678901234567890", "1", "0.5000000000"}) {
    amt::v1::StartJob job = MakeJob(data_dir_);
    job.set_training_job_name("tune-" + std::to_string(value.size()) + "-abcdef12");
    (*job.mutable_hyperparameters())["learning_rate"] = value;
    auto dir = JobDir::Create(options_, job);
    ASSERT_THAT(dir, IsOk());
    const fs::path file = dir->paths().root / hyperparameters;
    const std::string text = ReadFile(file);
    EXPECT_EQ(json::parse(text)["learning_rate"], value);
    EXPECT_EQ(fs::file_size(file), text.size());
    EXPECT_NE(text, previous);
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    if (inode != 0) {
      EXPECT_EQ(st.st_ino, inode);  // the spare's file, written over
    }
    inode = st.st_ino;
    previous = text;
    options_.spares->Recycle(dir->paths());
  }
}

TEST_F(JobDirTest, DetachMovesAFolderAwayAtOnceAndKeepMakesItASpare) {
  const fs::path spare_dir = temp_.path() / "work" / ".spare-folders";
  options_.spares = std::make_shared<JobDirPool>(spare_dir, 2);
  auto a = JobDir::Create(options_, MakeJob(data_dir_));
  ASSERT_THAT(a, IsOk());
  WriteFile(a->paths().model / "model.bin", "weights");
  const std::optional<JobDirPool::Detached> detached = options_.spares->Detach(a->paths());
  ASSERT_TRUE(detached.has_value());
  EXPECT_FALSE(fs::exists(a->paths().root));
  EXPECT_EQ(detached->paths.root.parent_path(), spare_dir);
  EXPECT_EQ(ReadFile(detached->paths.model / "model.bin"), "weights");  // not emptied yet
  EXPECT_EQ(detached->paths.input_config, detached->paths.root / "input" / "config");
  const fs::path next = temp_.path() / "work" / "tune-009-abcdef12";
  EXPECT_FALSE(options_.spares->TakeInto(next));  // no spare before Keep
  options_.spares->Keep(*detached);
  EXPECT_FALSE(fs::exists(detached->paths.model / "model.bin"));
  ASSERT_TRUE(options_.spares->TakeInto(next));
  EXPECT_TRUE(fs::is_directory(next / "model"));
  EXPECT_TRUE(fs::exists(next / "input" / "config" / "hyperparameters.json"));
}

TEST_F(JobDirTest, APoolKeepsAtMostItsCapacityAndRemovesWhatAnEarlierWorkerLeft) {
  const fs::path spare_dir = temp_.path() / "work" / ".spare-folders";
  fs::create_directories(spare_dir / "7" / "model");
  options_.spares = std::make_shared<JobDirPool>(spare_dir, 1);
  EXPECT_FALSE(fs::exists(spare_dir / "7"));
  std::vector<JobPaths> paths;
  for (const char* name : {"tune-001-abcdef12", "tune-002-abcdef12"}) {
    amt::v1::StartJob job = MakeJob(data_dir_);
    job.set_training_job_name(name);
    auto dir = JobDir::Create(options_, job);
    ASSERT_THAT(dir, IsOk());
    paths.push_back(dir->paths());
  }
  for (const auto& p : paths) options_.spares->Recycle(p);
  EXPECT_FALSE(fs::exists(paths[0].root));
  EXPECT_FALSE(fs::exists(paths[1].root));
  size_t spares = 0;
  for (const auto& e : fs::directory_iterator(spare_dir)) spares += e.is_directory() ? 1 : 0;
  EXPECT_EQ(spares, 1u);
  EXPECT_TRUE(options_.spares->TakeInto(temp_.path() / "work" / "tune-003-abcdef12"));
  EXPECT_FALSE(options_.spares->TakeInto(temp_.path() / "work" / "tune-004-abcdef12"));
  EXPECT_TRUE(fs::is_directory(temp_.path() / "work" / "tune-003-abcdef12" / "model"));
}

TEST_F(JobDirTest, AFullDiskSaysNoSpaceLeftOnDeviceAndTheJobFolder) {
  options_.write = [](int, const void*, size_t) -> ssize_t {
    errno = ENOSPC;
    return -1;
  };
  const fs::path root = temp_.path() / "work" / "tune-001-abcdef12";
  EXPECT_THAT(JobDir::Create(options_, MakeJob(data_dir_)),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "cannot prepare the job folder " + root.string() + ": cannot write " +
                           (root / "input/config/hyperparameters.json").string() +
                           ": No space left on device"));
}

TEST_F(JobDirTest, GivesTheVolumeSizeToTheTrainerOnlyWhenTheJobHasOne) {
  amt::v1::StartJob job = MakeJob(data_dir_);
  auto without = JobDir::Create(options_, job);
  ASSERT_THAT(without, IsOk());
  EXPECT_THAT(without->environment(), Not(Contains(Key("AMT_VOLUME_SIZE_GB"))));
  job.set_volume_size_gb(7);
  auto with = JobDir::Create(options_, job);
  ASSERT_THAT(with, IsOk());
  EXPECT_THAT(with->environment(), Contains(Pair("AMT_VOLUME_SIZE_GB", "7")));
}

}  // namespace amt::worker
