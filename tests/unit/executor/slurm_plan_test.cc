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

TEST(IsSizeReason, KnowsPendingReasonsAndSbatchRefusalsAboutSize) {
  EXPECT_TRUE(IsSizeReason("PartitionConfig"));
  EXPECT_TRUE(IsSizeReason("PartitionNodeLimit"));
  EXPECT_TRUE(IsSizeReason("BadConstraints"));
  EXPECT_TRUE(IsSizeReason(
      "sbatch: error: Batch job submission failed: Requested node configuration is not "
      "available"));
  EXPECT_TRUE(IsSizeReason("sbatch: error: Memory specification can not be satisfied"));
  EXPECT_FALSE(IsSizeReason("PartitionTimeLimit"));
  EXPECT_FALSE(IsSizeReason("InvalidAccount"));
  EXPECT_FALSE(IsSizeReason("sbatch: error: invalid partition specified: gpu"));
  EXPECT_FALSE(IsSizeReason("sbatch: error: Invalid generic resource (gres) specification"));
}

// What Slurm 22.05 printed on the CTest cluster (scripts/slurm-up.sh, 2 nodes of 2 CPUs).
constexpr char kPartitions[] =
    "PartitionName=debug AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
    "Default=YES QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 "
    "Hidden=NO MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED Nodes=amt-n[1-2] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
    "ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=4 "
    "TotalNodes=2 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED "
    "MaxMemPerNode=UNLIMITED TRES=cpu=4,mem=46162M,node=2,billing=4\n";
constexpr char kNodes[] =
    "NodeName=amt-n1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 "
    "CPULoad=1.85 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) "
    "NodeAddr=127.0.0.1 NodeHostName=vm Port=17121 Version=22.05.8 OS=Linux 6.18.44-fc-v1252 "
    "#1 SMP PREEMPT_DYNAMIC @0  RealMemory=23081 AllocMem=0 FreeMem=20078 Sockets=2 Boards=1 "
    "State=IDLE ThreadsPerCore=1 TmpDisk=76333 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=debug  BootTime=2026-12-04T20:30:03 SlurmdStartTime=2026-12-04T21:50:25 "
    "CfgTRES=cpu=2,mem=23081M,billing=2 AllocTRES= CapWatts=n/a\n"
    "NodeName=amt-n2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 "
    "CPULoad=1.85 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) "
    "NodeAddr=127.0.0.2 NodeHostName=vm Port=17122 Version=22.05.8 OS=Linux 6.18.44-fc-v1252 "
    "#1 SMP PREEMPT_DYNAMIC @0  RealMemory=23081 AllocMem=0 FreeMem=20077 Sockets=2 Boards=1 "
    "State=IDLE ThreadsPerCore=1 TmpDisk=76333 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=debug  BootTime=2026-12-04T20:30:03 SlurmdStartTime=2026-12-04T21:50:25 "
    "CfgTRES=cpu=2,mem=23081M,billing=2 AllocTRES= CapWatts=n/a\n";

TEST(ParseOffer, ReadsTheDefaultPartitionsNodesFromScontrol) {
  const auto offer = ParseOffer(kPartitions, kNodes, "");
  ASSERT_THAT(offer, IsOk());
  EXPECT_EQ(offer->partition, "debug");
  EXPECT_EQ(offer->nodes, 2);
  EXPECT_EQ(offer->cpus_per_node, 2);
  EXPECT_EQ(offer->memory_mb_per_node, 23081);
  EXPECT_EQ(offer->gpus_per_node, 0);
  EXPECT_EQ(offer->tmp_mb_per_node, 76333);
  EXPECT_THAT(ParseOffer(kPartitions, kNodes, "debug"), IsOk());
}

TEST(ParseOffer, TakesTheLargestNodeOfThePartitionWithinItsLimits) {
  const std::string partitions =
      "PartitionName=cpu Default=YES MaxNodes=UNLIMITED MaxCPUsPerNode=UNLIMITED "
      "MaxMemPerNode=UNLIMITED TotalNodes=1\n"
      "PartitionName=gpu Default=NO MaxNodes=2 MaxCPUsPerNode=48 MaxMemPerNode=190000 "
      "TotalNodes=3\n";
  // CPUTot where there is no CPUEfctv (before 22.05); a GPU count per type, with sockets.
  const std::string nodes =
      "NodeName=c1 CPUTot=128 RealMemory=512000 Gres=(null) TmpDisk=0 Partitions=cpu\n"
      "NodeName=g1 CPUTot=64 RealMemory=256000 Gres=gpu:a100:4(S:0,1),gpu:v100:2 "
      "TmpDisk=100 Partitions=gpu,all\n"
      "NodeName=g2 CPUTot=32 RealMemory=128000 Gres=gpu:8 TmpDisk=900000 Partitions=all,gpu\n"
      "NodeName=g3 CPUTot=32 RealMemory=128000 Gres=gpu:1 TmpDisk=0 Partitions=gpu\n";
  const auto offer = ParseOffer(partitions, nodes, "gpu");
  ASSERT_THAT(offer, IsOk());
  EXPECT_EQ(offer->partition, "gpu");
  EXPECT_EQ(offer->nodes, 2);                    // 3 nodes, MaxNodes=2
  EXPECT_EQ(offer->cpus_per_node, 48);           // 64 on g1, MaxCPUsPerNode=48
  EXPECT_EQ(offer->memory_mb_per_node, 190000);  // 256000 on g1, MaxMemPerNode=190000
  EXPECT_EQ(offer->gpus_per_node, 8);            // g2's; g1 has 4 + 2 = 6
  EXPECT_EQ(offer->tmp_mb_per_node, 900000);
  const auto cpu = ParseOffer(partitions, nodes, "");
  ASSERT_THAT(cpu, IsOk());
  EXPECT_EQ(cpu->partition, "cpu");
  EXPECT_EQ(cpu->nodes, 1);
  EXPECT_EQ(cpu->cpus_per_node, 128);
}

TEST(ParseOffer, SaysWhenThePartitionIsNotThere) {
  EXPECT_THAT(ParseOffer(kPartitions, kNodes, "gpu"),
              StatusIs(absl::StatusCode::kNotFound, "Slurm has no partition gpu"));
  EXPECT_THAT(ParseOffer("PartitionName=debug Default=NO\n", kNodes, ""),
              StatusIs(absl::StatusCode::kNotFound, "Slurm has no default partition"));
}

TEST(RequestOf, ReadsWhatEachNodeIsAskedFromTheSbatchArguments) {
  SlurmOptions o = Options();
  o.extra_sbatch_args = {"--gres=gpu:2", "--partition=other"};
  // Three hosts, a node each: ml.m5.xlarge's 4 vCPUs and 16 GiB on each of 3 nodes.
  const auto nodes = SbatchArguments(o, Start("ml.m5.xlarge", 3), "w", 0, 30);
  ASSERT_THAT(nodes, IsOk());
  const SlurmRequest r = RequestOf(*nodes);
  EXPECT_EQ(r.partition, "debug");  // ours come after --sbatch-arg's: the last one counts
  EXPECT_EQ(r.nodes, 3);
  EXPECT_EQ(r.hosts, 3);
  EXPECT_EQ(r.cpus_per_node, 4);
  EXPECT_EQ(r.memory_mb_per_node, 16384);
  EXPECT_EQ(r.gpus_per_node, 2);  // from --sbatch-arg: the instance type has none
  EXPECT_EQ(r.tmp_mb_per_node, 30 * 1024);
  // The three on one node: three instances' worth of it.
  o.host_per_node = false;
  const auto one = SbatchArguments(o, Start("ml.m5.xlarge", 3), "w", 0, 0);
  ASSERT_THAT(one, IsOk());
  const SlurmRequest r1 = RequestOf(*one);
  EXPECT_EQ(r1.nodes, 1);
  EXPECT_EQ(r1.hosts, 3);
  EXPECT_EQ(r1.cpus_per_node, 12);
  EXPECT_EQ(r1.memory_mb_per_node, 3 * 16384);
  EXPECT_EQ(r1.tmp_mb_per_node, 0);
  // Nothing asked: Slurm's defaults.
  const SlurmRequest bare = RequestOf({"--parsable", "--nodes=2-4", "--mem=2G"});
  EXPECT_EQ(bare.nodes, 2);
  EXPECT_EQ(bare.cpus_per_node, 0);
  EXPECT_EQ(bare.memory_mb_per_node, 2048);
}

TEST(Exceeds, ComparesEachNeedWithTheLargestNode) {
  SlurmOffer offer{"debug", 2, 2, 23081, 0, 76333};
  EXPECT_FALSE(Exceeds({"", 2, 2, 2, 23081, 0, 76333}, offer));
  EXPECT_TRUE(Exceeds({"", 3, 3, 1, 4096, 0, 0}, offer));
  EXPECT_TRUE(Exceeds({"", 1, 1, 4, 4096, 0, 0}, offer));
  EXPECT_TRUE(Exceeds({"", 1, 1, 1, 23082, 0, 0}, offer));
  EXPECT_TRUE(Exceeds({"", 1, 1, 1, 4096, 1, 0}, offer));
  EXPECT_TRUE(Exceeds({"", 1, 1, 1, 4096, 0, 76334}, offer));
}

TEST(TooBigMessage, SaysWhatTheJobAskedWhatThePartitionHasAndWhatToTurnDown) {
  SlurmOptions o = Options();
  o.resource_scale = 0.5;
  const SlurmOffer offer{"debug", 2, 2, 23081, 0, 76333};
  // InstanceCount 3 on two nodes.
  EXPECT_EQ(TooBigMessage("Slurm job 12 can never start (PartitionNodeLimit)",
                          {"", 3, 3, 1, 4096, 0, 10240}, offer, o),
            "Slurm job 12 can never start (PartitionNodeLimit). The training job asks for 3 "
            "nodes with 1 CPU, 4096 MB of memory and 10240 MB of temporary disk each; partition "
            "debug has 2 nodes with at most 2 CPUs, 23081 MB of memory and 76333 MB of "
            "temporary disk per node. Ask for fewer nodes: a smaller InstanceCount, or amtd "
            "--slurm-hosts one-node to run the 3 hosts as tasks on one node.");
  // An instance type larger than any node.
  EXPECT_EQ(TooBigMessage("Slurm refused the job: sbatch: error: Batch job submission failed: "
                          "Requested node configuration is not available",
                          {"", 1, 1, 8, 16384, 0, 0}, offer, o),
            "Slurm refused the job: sbatch: error: Batch job submission failed: Requested node "
            "configuration is not available. The training job asks for 1 node with 8 CPUs and "
            "16384 MB of memory; partition debug has 2 nodes with at most 2 CPUs and 23081 MB "
            "of memory per node. Ask for less per node: a smaller InstanceType, or amtd "
            "--slurm-resource-scale below 0.5 (it multiplies the instance type's vCPUs and "
            "memory).");
  // Every host on one node, more than it has; and a GPU no node has.
  o.host_per_node = false;
  EXPECT_EQ(TooBigMessage("Slurm job 13 can never start (Resources)", {"", 1, 3, 3, 12288, 3, 0},
                          offer, o),
            "Slurm job 13 can never start (Resources). The training job asks for 1 node with 3 "
            "CPUs, 12288 MB of memory and 3 GPUs; partition debug has 2 nodes with at most 2 "
            "CPUs, 23081 MB of memory and 0 GPUs per node. Ask for less per node: a smaller "
            "InstanceType, or amtd --slurm-resource-scale below 0.5 (it multiplies the instance "
            "type's vCPUs and memory), or a smaller InstanceCount or --slurm-hosts nodes (the 3 "
            "hosts on one node need 3 instances' worth). Ask for fewer GPUs: an InstanceType "
            "with fewer, or a partition with GPU nodes (--slurm-partition).");
  // The partition could not be read: every knob.
  EXPECT_EQ(
      TooBigMessage("Slurm job 14 can never start (PartitionConfig)", {"", 1, 1, 2, 8192, 0, 0},
                    absl::UnavailableError("scontrol show node says: timeout"), Options()),
      "Slurm job 14 can never start (PartitionConfig). The training job asks for 1 node "
      "with 2 CPUs and 8192 MB of memory; what the partition has could not be read "
      "(scontrol show node says: timeout). Ask for less: a smaller InstanceType or "
      "InstanceCount, amtd --slurm-resource-scale below 1, or --slurm-hosts one-node.");
}

}  // namespace
}  // namespace amt::executor
