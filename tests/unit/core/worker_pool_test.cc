#include "orchestrator/core/worker_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/core/fakes.h"

namespace amt::core {
namespace {

TEST(WorkerPool, PlacesOnTheWorkerWithTheMostFreeSlots) {
  WorkerPool pool;
  EXPECT_FALSE(pool.FreeWorker().has_value());
  pool.Connect("a", 1, std::make_shared<FakeWorkerLink>());
  pool.Connect("b", 2, std::make_shared<FakeWorkerLink>());
  EXPECT_EQ(pool.FreeWorker(), "b");
  pool.Assign("b", "j1");
  EXPECT_EQ(pool.FreeWorker(), "a");  // a tie: the first by id
  pool.Assign("a", "j2");
  pool.Assign("b", "j3");
  EXPECT_FALSE(pool.FreeWorker().has_value());
  pool.Release("b", "j3");
  EXPECT_EQ(pool.FreeWorker(), "b");
  EXPECT_TRUE(pool.Runs("b", "j1"));
  EXPECT_FALSE(pool.Runs("b", "j3"));
  EXPECT_FALSE(pool.Runs("nobody", "j1"));
}

TEST(WorkerPool, ZeroSlotsCountAsOne) {
  WorkerPool pool;
  pool.Connect("a", 0, std::make_shared<FakeWorkerLink>());
  EXPECT_EQ(pool.FreeWorker(), "a");
}

TEST(WorkerPool, ALateDisconnectOfAReplacedConnectionIsIgnored) {
  WorkerPool pool;
  auto first = std::make_shared<FakeWorkerLink>();
  auto second = std::make_shared<FakeWorkerLink>();
  pool.Connect("a", 2, first);
  pool.Assign("a", "j1");
  pool.Connect("a", 2, second);  // reconnected: the jobs are re-assigned from its hello
  EXPECT_FALSE(pool.Runs("a", "j1"));
  pool.Assign("a", "j2");
  EXPECT_FALSE(pool.Disconnect("a", first.get()).has_value());
  EXPECT_TRUE(pool.Runs("a", "j2"));
  auto jobs = pool.Disconnect("a", second.get());
  ASSERT_TRUE(jobs.has_value());
  EXPECT_THAT(*jobs, ::testing::ElementsAre("j2"));
  EXPECT_FALSE(pool.FreeWorker().has_value());
}

TEST(WorkerPool, SendReachesOnlyAConnectedWorker) {
  WorkerPool pool;
  auto link = std::make_shared<FakeWorkerLink>();
  pool.Connect("a", 1, link);
  v1::OrchestratorMessage m;
  m.mutable_stop()->set_training_job_name("j");
  EXPECT_TRUE(pool.Send("a", m));
  EXPECT_FALSE(pool.Send("b", m));
  ASSERT_EQ(link->Stops().size(), 1u);
  EXPECT_EQ(link->Stops()[0].training_job_name(), "j");
}

TEST(WorkerPool, AJobTakesASlotPerInstance) {
  WorkerPool pool;
  EXPECT_EQ(pool.MaxSlots(), 0);
  pool.Connect("a", 2, std::make_shared<FakeWorkerLink>());
  pool.Connect("b", 4, std::make_shared<FakeWorkerLink>());
  EXPECT_EQ(pool.MaxSlots(), 4);
  EXPECT_EQ(pool.FreeWorker(3), "b");
  pool.Assign("b", "three-hosts", 3);
  // b has 1 free, a 2: a job of 2 instances fits on a only.
  EXPECT_EQ(pool.FreeWorker(2), "a");
  pool.Assign("a", "two-hosts", 2);
  EXPECT_FALSE(pool.FreeWorker(2).has_value());
  EXPECT_EQ(pool.FreeWorker(1), "b");
  EXPECT_FALSE(pool.FreeWorker(5).has_value());
  // Releasing gives back every instance's slot.
  pool.Release("b", "three-hosts");
  EXPECT_EQ(pool.FreeWorker(4), "b");
}

TEST(WorkerPool, AGpuJobTakesGpusNotSlots) {
  WorkerPool pool;
  // One GPU, two slots: a GPU job runs beside two CPU jobs, and a second GPU job waits.
  pool.Connect("a", 2, std::make_shared<FakeWorkerLink>(), false, "", WorkerGpus{1, 1});
  pool.Assign("a", "cpu1");
  pool.Assign("a", "cpu2");
  EXPECT_FALSE(pool.FreeWorker(WorkerNeed(1, 0)).has_value());
  ASSERT_EQ(pool.FreeWorker(WorkerNeed(1, 1)), "a");
  pool.Assign("a", "gpu1", WorkerNeed(1, 1));
  EXPECT_FALSE(pool.FreeWorker(WorkerNeed(1, 1)).has_value());
  EXPECT_TRUE(pool.Fits(WorkerNeed(1, 1)));  // it waits for the GPU
  pool.Release("a", "gpu1");
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 1)), "a");
  // The slots were never the GPU job's.
  pool.Release("a", "cpu1");
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 0)), "a");
}

TEST(WorkerPool, SharedGpusAndTheWorkerWithTheMostFree) {
  WorkerPool pool;
  pool.Connect("a", 1, std::make_shared<FakeWorkerLink>(), false, "", WorkerGpus{1, 2});
  pool.Connect("b", 1, std::make_shared<FakeWorkerLink>(), false, "", WorkerGpus{2, 1});
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 1)), "a");  // 2 free shares against 2: the first
  pool.Assign("a", "j1", WorkerNeed(1, 1));
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 1)), "b");
  // Two GPUs of one job are two devices: only b has them.
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 2)), "b");
  pool.Assign("b", "j2", WorkerNeed(1, 2));
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 1)), "a");  // a's second share
  pool.Assign("a", "j3", WorkerNeed(1, 1));
  EXPECT_FALSE(pool.FreeWorker(WorkerNeed(1, 1)).has_value());
}

TEST(WorkerPool, AWorkerThatIsGoneHoldsNoGpu) {
  // amt-worker killed with SIGKILL: its connection ends, and the one that replaces it (a new
  // process, its GPUs all free) gets the GPU jobs.
  WorkerPool pool;
  auto first = std::make_shared<FakeWorkerLink>();
  pool.Connect("w", 1, first, false, "process-1", WorkerGpus{1, 1});
  pool.Assign("w", "gpu1", WorkerNeed(1, 1));
  EXPECT_FALSE(pool.FreeWorker(WorkerNeed(1, 1)).has_value());
  ASSERT_TRUE(pool.Disconnect("w", first.get()).has_value());
  pool.Connect("w", 1, std::make_shared<FakeWorkerLink>(), false, "process-2", WorkerGpus{1, 1});
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 1)), "w");
}

TEST(WorkerPool, GpusNoWorkerHasGoToTheBiggestAndGpuTypesRunOnCpuWhereNoneHas) {
  WorkerPool pool;
  pool.Connect("a", 1, std::make_shared<FakeWorkerLink>());
  pool.Connect("b", 1, std::make_shared<FakeWorkerLink>());
  // No worker has a GPU: a GPU type is a CPU job (slots).
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 4)), "a");
  pool.Assign("a", "j1", WorkerNeed(1, 4));
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 4)), "b");
  EXPECT_FALSE(pool.Fits(WorkerNeed(2, 4)));  // two instances need two slots on one worker
  // With a one-GPU worker, a job of four GPUs goes to it, busy or not: its worker fails the job
  // saying what it has, rather than the job waiting for ever.
  pool.Connect("c", 1, std::make_shared<FakeWorkerLink>(), false, "", WorkerGpus{1, 1});
  pool.Assign("c", "j2", WorkerNeed(1, 1));
  EXPECT_TRUE(pool.Fits(WorkerNeed(1, 4)));
  EXPECT_EQ(pool.FreeWorker(WorkerNeed(1, 4)), "c");
}

v1::OrchestratorMessage StartOf(const std::string& job) {
  v1::OrchestratorMessage m;
  m.mutable_start()->set_training_job_name(job);
  return m;
}

v1::OrchestratorMessage StopOf(const std::string& job) {
  v1::OrchestratorMessage m;
  m.mutable_stop()->set_training_job_name(job);
  return m;
}

// What `link` was sent, as "start j1" / "stop j1".
std::vector<std::string> Sent(const FakeWorkerLink& link) {
  std::vector<std::string> out;
  for (const auto& m : link.sent) {
    out.push_back(m.has_start() ? "start " + m.start().training_job_name()
                                : "stop " + m.stop().training_job_name());
  }
  return out;
}

TEST(WorkerPool, AParkedGroupKeepsItsStartJobsAndWhatFollowsThemOnTheirLinkUntilUnpark) {
  using ::testing::ElementsAre;
  WorkerPool pool;
  auto a = std::make_shared<FakeWorkerLink>();
  auto b = std::make_shared<FakeWorkerLink>();
  pool.Connect("a", 2, a);
  pool.Connect("b", 2, b);
  pool.Hold();
  pool.Send("a", StopOf("j0"));  // before the launch on its link: not held up by it
  pool.Send("a", StartOf("j1"));
  pool.Send("b", StopOf("j2"));
  pool.Park();  // the group's commit failed
  EXPECT_THAT(Sent(*a), ElementsAre("stop j0"));
  EXPECT_THAT(Sent(*b), ElementsAre("stop j2"));
  EXPECT_EQ(pool.parked(), 1u);
  pool.Send("a", StopOf("j1"));  // never before its StartJob
  pool.Send("b", StopOf("j3"));
  EXPECT_THAT(Sent(*a), ElementsAre("stop j0"));
  EXPECT_THAT(Sent(*b), ElementsAre("stop j2", "stop j3"));
  pool.Unpark();
  EXPECT_THAT(Sent(*a), ElementsAre("stop j0", "start j1", "stop j1"));
  EXPECT_EQ(pool.parked(), 0u);
  pool.Send("a", StartOf("j4"), /*durable=*/false);  // a launch whose own write failed
  EXPECT_EQ(pool.parked(), 1u);
  ASSERT_TRUE(pool.Disconnect("a", a.get()).has_value());
  EXPECT_EQ(pool.parked(), 0u);  // gone with its connection
  pool.Unpark();
  EXPECT_THAT(Sent(*a), ElementsAre("stop j0", "start j1", "stop j1"));
  pool.Hold();
  pool.Send("b", StartOf("j5"));
  pool.Release();  // committed: out at once
  EXPECT_THAT(Sent(*b), ElementsAre("stop j2", "stop j3", "start j5"));
  EXPECT_EQ(pool.parked(), 0u);
}

TEST(WorkerPool, AWrittenGroupSendsToLinksOnThisMachineAndHoldsTheRestForItsSync) {
  using ::testing::ElementsAre;
  using ::testing::IsEmpty;
  WorkerPool pool;
  auto local = std::make_shared<FakeWorkerLink>();
  local->same_machine = true;
  auto remote = std::make_shared<FakeWorkerLink>();
  pool.Connect("local", 2, local);
  pool.Connect("remote", 2, remote);
  pool.Hold();
  pool.Send("local", StartOf("j1"));
  pool.Send("remote", StartOf("j2"));
  pool.Send("local", StopOf("j0"));
  pool.ReleaseSameMachine();  // written, not yet synced
  EXPECT_THAT(Sent(*local), ElementsAre("start j1", "stop j0"));
  EXPECT_THAT(Sent(*remote), IsEmpty());
  pool.Send("remote", StopOf("j3"));  // still held, behind the group's StartJob
  EXPECT_THAT(Sent(*remote), IsEmpty());
  pool.Release();  // synced
  EXPECT_THAT(Sent(*remote), ElementsAre("start j2", "stop j3"));
  EXPECT_EQ(pool.parked(), 0u);

  // The sync failed: the other links' launches park until the store recovers.
  pool.Hold();
  pool.Send("local", StartOf("j4"));
  pool.Send("remote", StartOf("j5"));
  pool.ReleaseSameMachine();
  pool.Park();
  EXPECT_THAT(Sent(*local), ElementsAre("start j1", "stop j0", "start j4"));
  EXPECT_THAT(Sent(*remote), ElementsAre("start j2", "stop j3"));
  EXPECT_EQ(pool.parked(), 1u);
  pool.Unpark();
  EXPECT_THAT(Sent(*remote), ElementsAre("start j2", "stop j3", "start j5"));
}

}  // namespace
}  // namespace amt::core
