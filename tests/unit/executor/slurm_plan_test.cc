#include "orchestrator/executor/slurm_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "orchestrator/validation/instance_types.h"
#include "tests/support/status_matchers.h"

namespace amt::executor {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(ResourcesOf, ReadsTheSizeAndTheFamily) {
  const auto m5 = ResourcesOf("ml.m5.large");
  ASSERT_TRUE(m5.has_value());
  EXPECT_EQ(m5->vcpus, 2);
  EXPECT_EQ(m5->memory_gib, 8);
  EXPECT_EQ(m5->gpus, 0);
  const auto c5 = ResourcesOf("ml.c5.9xlarge");
  ASSERT_TRUE(c5.has_value());
  EXPECT_EQ(c5->vcpus, 36);
  EXPECT_EQ(c5->memory_gib, 72);
  const auto g5 = ResourcesOf("ml.g5.12xlarge");
  ASSERT_TRUE(g5.has_value());
  EXPECT_EQ(g5->vcpus, 48);
  EXPECT_EQ(g5->gpus, 4);
  EXPECT_EQ(ResourcesOf("ml.p3.2xlarge")->gpus, 1);
  EXPECT_EQ(ResourcesOf("ml.p3.16xlarge")->gpus, 8);
  EXPECT_EQ(ResourcesOf("ml.g6e.xlarge")->memory_gib, 32);
  EXPECT_EQ(ResourcesOf("ml.t3.medium")->memory_gib, 4);
}

TEST(ResourcesOf, KnowsEveryTrainingInstanceTypeSageMakerAccepts) {
  // So no request that passed validation is refused by the executor for its instance type.
  for (const std::string& type : validation::TrainingInstanceTypes()) {
    const auto r = ResourcesOf(type);
    ASSERT_TRUE(r.has_value()) << type;
    EXPECT_GE(r->vcpus, 2) << type;
    EXPECT_GE(r->memory_gib, 4) << type;
  }
}

TEST(ResourcesOf, RefusesWhatIsNotAnInstanceType) {
  EXPECT_FALSE(ResourcesOf("ml.m5").has_value());
  EXPECT_FALSE(ResourcesOf("m5.large.x").has_value());
  EXPECT_FALSE(ResourcesOf("ml.m5.hugexlarge").has_value());
  EXPECT_FALSE(ResourcesOf("ml.m5.0xlarge").has_value());
}

TEST(Comment, RoundTripsAndRefusesOthers) {
  const SlurmJobTag tag{"abc123", "slurm-1-2", "job-007", 3, 2};
  const auto parsed = ParseComment(CommentFor(tag));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->owner, "abc123");
  EXPECT_EQ(parsed->worker_id, "slurm-1-2");
  EXPECT_EQ(parsed->training_job_name, "job-007");
  EXPECT_EQ(parsed->attempt, 3);
  EXPECT_EQ(parsed->instances, 2);
  EXPECT_FALSE(ParseComment("(null)").has_value());
  EXPECT_FALSE(ParseComment("amt-local worker=w").has_value());  // no job, no attempt
  EXPECT_FALSE(ParseComment("amt-local worker=w job=j attempt=x").has_value());
}

amt::v1::StartJob Start(const std::string& type, int instances) {
  amt::v1::StartJob start;
  start.set_training_job_name("tune-001-abc");
  start.set_attempt(2);
  start.set_instance_type(type);
  start.set_instance_count(instances);
  return start;
}

SlurmOptions Options() {
  SlurmOptions o;
  o.partition = "debug";
  o.account = "ml";
  o.extra_sbatch_args = {"--qos=low"};
  o.worker_binary = "/opt/amt/bin/amt-worker";
  o.orchestrator_address = "10.0.0.1:7070";
  o.work_dir = "/shared/amt jobs";
  o.output_dir = "/shared/out";
  o.owner = "own";
  return o;
}

TEST(SbatchArguments, NamesTheJobAndAsksForItsInstancesResources) {
  const auto args = SbatchArguments(Options(), Start("ml.g5.xlarge", 2), "w-1", 90, 30);
  ASSERT_THAT(args, IsOk());
  EXPECT_EQ((*args)[0], "--qos=low");  // extra options first: ours win where the last counts
  EXPECT_THAT(*args, Contains("--parsable"));
  EXPECT_THAT(*args, Contains("--no-requeue"));  // amtd retries; Slurm must not run it again
  EXPECT_THAT(*args, Contains("--job-name=tune-001-abc"));
  EXPECT_THAT(*args, Contains("--comment=amt-local owner=own worker=w-1 job=tune-001-abc attempt=2 "
                              "instances=2"));
  EXPECT_THAT(*args, Contains("--output=/shared/out/%j.out"));
  EXPECT_THAT(*args, Contains("--partition=debug"));
  EXPECT_THAT(*args, Contains("--account=ml"));
  // Two hosts: a node each, with one ml.g5.xlarge's worth (4 vCPUs, 16 GiB, 1 GPU).
  EXPECT_THAT(*args, Contains("--nodes=2"));
  EXPECT_THAT(*args, Contains("--ntasks-per-node=1"));
  EXPECT_THAT(*args, Contains("--cpus-per-task=4"));
  EXPECT_THAT(*args, Contains("--mem=16384M"));
  EXPECT_THAT(*args, Contains("--gres=gpu:1"));
  EXPECT_THAT(*args, Contains("--tmp=30G"));
  EXPECT_THAT(*args, Contains("--time=3"));  // 90 s: 2 minutes, plus one
  const std::string wrap = args->back();
  EXPECT_THAT(wrap, StartsWith("--wrap=exec '/opt/amt/bin/amt-worker' --one-shot "));
  EXPECT_THAT(wrap, HasSubstr(" --orchestrator '10.0.0.1:7070' --worker-id 'w-1' "
                              "--work-dir '/shared/amt jobs' "));
  EXPECT_THAT(wrap, HasSubstr(" --srun-hosts nodes --srun 'srun' --scontrol 'scontrol'"));
}

TEST(SbatchArguments, PutsEveryHostOnOneNodeWhenAsked) {
  SlurmOptions o = Options();
  o.host_per_node = false;
  const auto args = SbatchArguments(o, Start("ml.g5.xlarge", 3), "w-1", 0, 0);
  ASSERT_THAT(args, IsOk());
  EXPECT_THAT(*args, Contains("--nodes=1"));
  EXPECT_THAT(*args, Contains("--ntasks=3"));
  EXPECT_THAT(*args, Contains("--cpus-per-task=4"));
  EXPECT_THAT(*args, Contains("--mem-per-cpu=4096M"));  // each task an instance's 16 GiB
  EXPECT_THAT(*args, Contains("--gres=gpu:3"));
  EXPECT_THAT(args->back(), HasSubstr(" --srun-hosts tasks "));
}

TEST(SbatchArguments, RunsAOneHostJobWithoutSteps) {
  const auto args = SbatchArguments(Options(), Start("ml.m5.large", 1), "w-1", 0, 0);
  ASSERT_THAT(args, IsOk());
  EXPECT_THAT(*args, Contains("--nodes=1"));
  EXPECT_THAT(*args, Contains("--ntasks=1"));
  EXPECT_THAT(*args, Contains("--mem=8192M"));
  EXPECT_THAT(args->back(), Not(HasSubstr("--srun-hosts")));
}

TEST(SbatchArguments, CarriesTheStartJobWhole) {
  amt::v1::StartJob start = Start("ml.m5.large", 1);
  (*start.mutable_hyperparameters())["lr"] = "0.1 'quoted'";
  const auto args = SbatchArguments(Options(), start, "w-1", 0, 0);
  ASSERT_THAT(args, IsOk());
  const std::string wrap = args->back();
  const auto begin = wrap.find("--one-shot ") + 11;
  const std::string encoded = wrap.substr(begin, wrap.find(' ', begin) - begin);
  std::string bytes;
  ASSERT_TRUE(absl::Base64Unescape(encoded, &bytes));
  amt::v1::StartJob back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.hyperparameters().at("lr"), "0.1 'quoted'");
  EXPECT_THAT(*args, Not(Contains(::testing::StartsWith("--time"))));
  EXPECT_THAT(*args, Not(Contains(::testing::StartsWith("--tmp"))));
}

TEST(SbatchArguments, ScalesResourcesAndAsksForAtLeastOneCpu) {
  SlurmOptions o = Options();
  o.resource_scale = 0.25;
  const auto args = SbatchArguments(o, Start("ml.m5.large", 1), "w", 0, 0);
  ASSERT_THAT(args, IsOk());
  EXPECT_THAT(*args, Contains("--cpus-per-task=1"));  // 2 x 0.25 = 0.5, at least 1
  EXPECT_THAT(*args, Contains("--mem=2048M"));
  o.resource_scale = 0;
  const auto none = SbatchArguments(o, Start("ml.g5.xlarge", 1), "w", 0, 0);
  ASSERT_THAT(none, IsOk());
  EXPECT_THAT(*none, Not(Contains(StartsWith("--cpus-per-task"))));
  EXPECT_THAT(*none, Not(Contains(StartsWith("--gres"))));
}

TEST(SbatchArguments, RefusesAnInstanceTypeWithoutResources) {
  EXPECT_THAT(SbatchArguments(Options(), Start("ml.weird", 1), "w", 0, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no resources known for instance type ml.weird")));
}

TEST(ShellQuote, QuotesSingleQuotes) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

TEST(ParseSqueue, ReadsLinesAndKeepsBarsInTheComment) {
  const auto jobs = ParseSqueue(
      "12|RUNNING|None|amt-local worker=w job=j attempt=1\n"
      "garbage\n"
      "13|PENDING|Resources|a|b\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job_id, "12");
  EXPECT_EQ(jobs[0].state, "RUNNING");
  EXPECT_EQ(jobs[0].comment, "amt-local worker=w job=j attempt=1");
  EXPECT_EQ(jobs[1].reason, "Resources");
  EXPECT_EQ(jobs[1].comment, "a|b");
}

TEST(ClassifyEnd, MapsSlurmStatesToSageMakerOutcomes) {
  EXPECT_EQ(ClassifyEnd("7", "NODE_FAIL", "None").kind, core::ProvisionedEnd::Kind::kRetryable);
  EXPECT_EQ(ClassifyEnd("7", "PREEMPTED", "").kind, core::ProvisionedEnd::Kind::kRetryable);
  EXPECT_EQ(ClassifyEnd("7", "BOOT_FAIL", "").kind, core::ProvisionedEnd::Kind::kRetryable);
  const core::ProvisionedEnd oom = ClassifyEnd("7", "OUT_OF_MEMORY", "OutOfMemory");
  EXPECT_EQ(oom.kind, core::ProvisionedEnd::Kind::kOutOfMemory);
  EXPECT_EQ(oom.message,
            "Slurm job 7 ended OUT_OF_MEMORY (OutOfMemory): the training job ran out of memory");
  EXPECT_EQ(ClassifyEnd("7", "CANCELLED", "").kind, core::ProvisionedEnd::Kind::kCancelled);
  EXPECT_EQ(ClassifyEnd("7", "COMPLETED", "None").kind, core::ProvisionedEnd::Kind::kFailed);
  EXPECT_TRUE(IsFinalState("TIMEOUT"));
  EXPECT_FALSE(IsFinalState("COMPLETING"));
  EXPECT_FALSE(IsFinalState("PENDING"));
}

TEST(NeverStartsReason, KnowsTheReasonsAJobWaitsForEver) {
  EXPECT_EQ(NeverStartsReason("PartitionConfig"), "PartitionConfig");
  EXPECT_FALSE(NeverStartsReason("Resources").has_value());
  EXPECT_FALSE(NeverStartsReason("Priority").has_value());
}

}  // namespace
}  // namespace amt::executor
