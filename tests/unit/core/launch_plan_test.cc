#include "orchestrator/core/launch_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::core {
namespace {

using ::testing::ElementsAre;

TEST(MapUri, MapsS3UrisUnderTheRootAndKeepsPaths) {
  EXPECT_EQ(MapUri("s3://bucket/a/b/", "/data/s3/"), "/data/s3/bucket/a/b");
  EXPECT_EQ(MapUri("file:///tmp/x", "/data/s3"), "/tmp/x");
  EXPECT_EQ(MapUri("/tmp/y", "/data/s3"), "/tmp/y");
}

TEST(ParseImageMap, ExpandsPlaceholdersAndAcceptsAPathOrAnArgv) {
  auto map =
      ParseImageMap(R"({"a:1": "${AMT_BIN}/trainer", "b:2": ["python3", "${IMAGE_MAP_DIR}/t.py"]})",
                    "/maps", "/bin-dir");
  ASSERT_TRUE(map.ok());
  EXPECT_THAT(map->at("a:1"), ElementsAre("/bin-dir/trainer"));
  EXPECT_THAT(map->at("b:2"), ElementsAre("python3", "/maps/t.py"));
}

TEST(ParseImageMap, RejectsNonObjects) {
  EXPECT_EQ(ParseImageMap("[1]", "", "").status().message(),
            "image map: expected a JSON object of image -> command");
  EXPECT_EQ(ParseImageMap(R"({"a": 3})", "", "").status().message(),
            "image map: 'a': expected a path or a list of arguments");
}

TEST(ResolveCommand, UsesTheImageMapThenExecutablesAndAppendsTrain) {
  LaunchOptions options;
  options.image_map = {{"ecr/img:1", {"/opt/t", "--x"}}};
  options.is_executable = [](const std::string& p) { return p == "/usr/local/bin/mytrainer"; };
  v1::AlgorithmSpecification spec;
  spec.set_training_image("ecr/img:1");
  EXPECT_THAT(*ResolveCommand(spec, options), ElementsAre("/opt/t", "--x", "train"));
  spec.set_training_image("/usr/local/bin/mytrainer");
  EXPECT_THAT(*ResolveCommand(spec, options), ElementsAre("/usr/local/bin/mytrainer", "train"));
  spec.add_container_arguments("fit");
  EXPECT_THAT(*ResolveCommand(spec, options), ElementsAre("/usr/local/bin/mytrainer", "fit"));
  spec.add_container_entrypoint("/bin/sh");
  EXPECT_THAT(*ResolveCommand(spec, options), ElementsAre("/bin/sh", "fit"));
}

TEST(ResolveCommand, UnknownImageIsInvalidArgument) {
  LaunchOptions options;
  options.is_executable = [](const std::string&) { return false; };
  v1::AlgorithmSpecification spec;
  spec.set_training_image("nope:1");
  const auto argv = ResolveCommand(spec, options);
  EXPECT_EQ(argv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(argv.status().message()),
              ::testing::StartsWith("Cannot run the training image 'nope:1'"));
}

TEST(ResolveCommand, RunsFrameworkImagesWithTheScriptRunner) {
  LaunchOptions options;
  options.s3_root = "/data/s3";
  options.script_runner = "/bin-dir/amt-script-runner";
  options.python_for_framework = {{"pytorch", "/venv/bin/python"}};
  v1::AlgorithmSpecification spec;
  spec.set_training_image(
      "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3");
  EXPECT_THAT(*ResolveCommand(spec, options),
              ElementsAre("/bin-dir/amt-script-runner", "--python", "python3", "--s3-root",
                          "/data/s3", "--framework", "sklearn", "train"));
  spec.set_training_image("763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.1");
  EXPECT_THAT(*ResolveCommand(spec, options),
              ElementsAre("/bin-dir/amt-script-runner", "--python", "/venv/bin/python", "--s3-root",
                          "/data/s3", "--framework", "pytorch", "train"));
  // The image map still wins: a user may run a framework image with a command of their own.
  options.image_map = {{spec.training_image(), {"/opt/own"}}};
  EXPECT_THAT(*ResolveCommand(spec, options), ElementsAre("/opt/own", "train"));
}

TEST(PlanLaunch, SendsImagesTheImageMapDoesNotNameToTheWorkersContainerEngine) {
  LaunchOptions options;
  options.containers = true;
  options.script_runner = "/bin-dir/amt-script-runner";
  options.image_map = {{"mapped:1", {"/t"}}};
  options.is_executable = [](const std::string& path) { return path == "/usr/bin/trainer"; };
  v1::TrainingJobRecord job;
  auto* d = job.mutable_describe();
  d->set_training_job_name("j1");
  d->mutable_output_data_config()->set_s3_output_path("s3://b/out");
  auto* algorithm = d->mutable_algorithm_specification();
  algorithm->set_training_image("my-algo:1");
  algorithm->add_container_entrypoint("python3");
  algorithm->add_container_entrypoint("fit.py");
  algorithm->add_container_arguments("--epochs");
  d->set_enable_network_isolation(true);
  // No command to fall back on but the entry point: the worker runs the image, else that.
  auto start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->container().image(), "my-algo:1");
  EXPECT_THAT(start->container().entrypoint(), ElementsAre("python3", "fit.py"));
  EXPECT_THAT(start->container().arguments(), ElementsAre("--epochs"));
  EXPECT_TRUE(start->container().network_isolation());
  EXPECT_THAT(start->command(), ElementsAre("python3", "fit.py", "--epochs"));
  // An image nothing else runs: the worker's engine is the only way, so no command.
  algorithm->clear_container_entrypoint();
  algorithm->clear_container_arguments();
  start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->container().image(), "my-algo:1");
  EXPECT_THAT(start->command(), ElementsAre());
  // A framework image: its image if the engine has it, else the script runner.
  algorithm->set_training_image(
      "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3");
  start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->container().image(), algorithm->training_image());
  EXPECT_EQ(start->command(0), "/bin-dir/amt-script-runner");
  // The image map and executables stay the worker's commands.
  for (const std::string image : {"mapped:1", "/usr/bin/trainer"}) {
    algorithm->set_training_image(image);
    start = PlanLaunch(job, options);
    ASSERT_TRUE(start.ok()) << start.status();
    EXPECT_FALSE(start->has_container()) << image;
  }
}

TEST(PlanLaunch, GivesAContainerItsScriptModeCodeAsALocalPath) {
  LaunchOptions options;
  options.containers = true;
  options.s3_root = "/data/s3";
  v1::TrainingJobRecord job;
  auto* d = job.mutable_describe();
  d->set_training_job_name("j1");
  d->mutable_algorithm_specification()->set_training_image("my-framework:1");
  auto& hps = *d->mutable_hyper_parameters();
  // As the SDK writes it (JSON-encoded), and as a user may (bare).
  hps["sagemaker_submit_directory"] = R"("s3://bucket/j1/source/sourcedir.tar.gz")";
  auto start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->container().code_uri(), "s3://bucket/j1/source/sourcedir.tar.gz");
  EXPECT_EQ(start->container().code_path(), "/data/s3/bucket/j1/source/sourcedir.tar.gz");
  // The toolkit reads the hyperparameter as it was.
  EXPECT_EQ(start->hyperparameters().at("sagemaker_submit_directory"),
            R"("s3://bucket/j1/source/sourcedir.tar.gz")");
  hps["sagemaker_submit_directory"] = "file:///home/me/src";
  start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->container().code_path(), "/home/me/src");
  hps.erase("sagemaker_submit_directory");
  start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok()) << start.status();
  EXPECT_EQ(start->container().code_path(), "");
}

TEST(PlanLaunch, FillsChannelsOutputPathsAndCheckpoints) {
  LaunchOptions options;
  options.s3_root = "/s3";
  options.image_map = {{"img", {"/t"}}};
  v1::TrainingJobRecord job;
  job.set_attempt(2);
  auto* d = job.mutable_describe();
  d->set_training_job_name("j1");
  d->mutable_algorithm_specification()->set_training_image("img");
  d->mutable_output_data_config()->set_s3_output_path("s3://b/out/");
  auto* ch = d->add_input_data_config();
  ch->set_channel_name("train");
  ch->mutable_data_source()->mutable_s3_data_source()->set_s3_uri("s3://b/data/train");
  d->mutable_checkpoint_config()->set_s3_uri("s3://b/ckpt");
  auto start = PlanLaunch(job, options);
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->attempt(), 2);
  EXPECT_EQ(start->model_output_path(), "/s3/b/out/j1/output/model.tar.gz");
  EXPECT_EQ(start->output_data_path(), "/s3/b/out/j1/output/output.tar.gz");
  ASSERT_EQ(start->channels_size(), 1);
  EXPECT_EQ(start->channels(0).local_path(), "/s3/b/data/train");
  EXPECT_EQ(
      start->channels(0).input_config_json(),
      R"({"RecordWrapperType":"None","S3DistributionType":"FullyReplicated","TrainingInputMode":"File"})");
  EXPECT_EQ(start->checkpoint_local_sync_dir(), "/s3/b/ckpt");
  EXPECT_EQ(start->checkpoint_container_path(), "/opt/ml/checkpoints/");
  EXPECT_EQ(ModelArtifactUri(*d), "s3://b/out/j1/output/model.tar.gz");
}

}  // namespace
}  // namespace amt::core
