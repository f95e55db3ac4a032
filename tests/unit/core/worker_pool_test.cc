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

}  // namespace
}  // namespace amt::core
