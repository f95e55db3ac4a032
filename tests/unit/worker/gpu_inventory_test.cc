// The worker's GPUs: nvidia-smi's answer, --gpus and CUDA_VISIBLE_DEVICES, and the allocator's
// exclusive and shared devices.
#include "worker/gpu_inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace amt::worker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kFourGpus[] =
    "0, GPU-aaaa1111-0000-0000-0000-000000000000, 81559, NVIDIA H100 80GB HBM3\n"
    "1, GPU-bbbb2222-0000-0000-0000-000000000000, 81559, NVIDIA H100 80GB HBM3\n"
    "2, GPU-cccc3333-0000-0000-0000-000000000000, 81559, NVIDIA H100 80GB HBM3\n"
    "3, GPU-dddd4444-0000-0000-0000-000000000000, 81559, NVIDIA H100 80GB HBM3\n";

std::vector<Gpu> FourGpus() { return *ParseGpuQuery(kFourGpus); }

std::vector<int> Indices(const std::vector<Gpu>& gpus) {
  std::vector<int> indices;
  for (const Gpu& gpu : gpus) indices.push_back(gpu.index);
  return indices;
}

// Answers every command with `result`, or NotFound when `missing`.
class FakeNvidiaSmi final : public CommandRunner {
 public:
  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv) override {
    argv_ = argv;
    if (missing) return absl::NotFoundError("cannot start " + argv[0]);
    return result;
  }
  bool missing = false;
  CommandResult result;
  std::vector<std::string> argv_;
};

TEST(ParseGpuQuery, ReadsEveryLineOfTheQuery) {
  const auto gpus = ParseGpuQuery(kFourGpus);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 4u);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].uuid, "GPU-bbbb2222-0000-0000-0000-000000000000");
  EXPECT_EQ((*gpus)[1].memory_mib, 81559);
  EXPECT_EQ((*gpus)[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(ParseGpuQuery("").value().empty());
  const auto bad = ParseGpuQuery("No devices were found\n");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_THAT(bad.status().message(), HasSubstr("No devices were found"));
}

TEST(DetectGpus, AMachineWithoutTheDriverHasNone) {
  FakeNvidiaSmi smi;
  smi.result.out = kFourGpus;
  auto gpus = DetectGpus(smi, "nvidia-smi");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ(gpus->size(), 4u);
  EXPECT_THAT(smi.argv_, ElementsAre("nvidia-smi", "--query-gpu=index,uuid,memory.total,name",
                                     "--format=csv,noheader,nounits"));
  smi.missing = true;
  gpus = DetectGpus(smi, "nvidia-smi");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
  // A driver that is there and fails is said, not taken for no GPU.
  smi.missing = false;
  smi.result = {9, "", "NVIDIA-SMI has failed because it couldn't communicate with the driver"};
  gpus = DetectGpus(smi, "nvidia-smi");
  EXPECT_FALSE(gpus.ok());
  EXPECT_THAT(gpus.status().message(), HasSubstr("exited with 9: NVIDIA-SMI has failed"));
}

TEST(SelectGpus, TakesTheFlagThenTheWorkersOwnVisibleDevices) {
  const std::vector<Gpu> all = FourGpus();
  EXPECT_THAT(Indices(*SelectGpus(all, "all", nullptr)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Indices(*SelectGpus(all, "none", nullptr)), ElementsAre());
  EXPECT_THAT(Indices(*SelectGpus(all, "2,0,2", nullptr)), ElementsAre(2, 0));
  const auto bad = SelectGpus(all, "0,7", nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_THAT(bad.status().message(), HasSubstr("'7' is not the index of a GPU"));
  // A Slurm step's CUDA_VISIBLE_DEVICES: indices, UUIDs or their prefixes, up to an unknown one.
  EXPECT_THAT(Indices(*SelectGpus(all, "all", "1,3")), ElementsAre(1, 3));
  EXPECT_THAT(Indices(*SelectGpus(all, "all", "GPU-cccc3333,GPU-aaaa")), ElementsAre(0, 2));
  EXPECT_THAT(Indices(*SelectGpus(all, "all", "1,9,3")), ElementsAre(1));
  EXPECT_THAT(Indices(*SelectGpus(all, "all", "")), ElementsAre());
  EXPECT_THAT(Indices(*SelectGpus(all, "0,1", "1,2")), ElementsAre(1));
  EXPECT_EQ(GpuIndexList(*SelectGpus(all, "all", "1,3")), "1,3");
}

TEST(GpuAllocator, GivesEachJobDevicesNoOtherJobHolds) {
  GpuAllocator gpus(FourGpus(), /*share=*/1);
  auto first = gpus.Take(1);
  auto second = gpus.Take(2);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_THAT(Indices(first->gpus()), ElementsAre(0));
  EXPECT_THAT(Indices(second->gpus()), ElementsAre(1, 2));
  // One device is left: a job of two waits (null), one of one gets it.
  EXPECT_EQ(gpus.Take(2), nullptr);
  auto third = gpus.Take(1);
  ASSERT_NE(third, nullptr);
  EXPECT_THAT(Indices(third->gpus()), ElementsAre(3));
  EXPECT_EQ(gpus.Take(1), nullptr);
  // A job's end gives its devices back.
  second.reset();
  EXPECT_EQ(gpus.Holders(1), 0);
  auto fourth = gpus.Take(2);
  ASSERT_NE(fourth, nullptr);
  EXPECT_THAT(Indices(fourth->gpus()), ElementsAre(1, 2));
  EXPECT_THAT(Indices(gpus.Take(0)->gpus()), ElementsAre());
}

TEST(GpuAllocator, SharedDevicesGoToTheLeastHeldFirst) {
  std::vector<Gpu> two = FourGpus();
  two.resize(2);
  GpuAllocator gpus(two, /*share=*/2);
  auto a = gpus.Take(1);
  auto b = gpus.Take(1);
  auto c = gpus.Take(1);
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(Indices(a->gpus()), ElementsAre(0));
  EXPECT_THAT(Indices(b->gpus()), ElementsAre(1));
  EXPECT_THAT(Indices(c->gpus()), ElementsAre(0));
  EXPECT_EQ(gpus.Holders(0), 2);
  // A job's devices are distinct: two shares of one device are not two GPUs.
  EXPECT_EQ(gpus.Take(2), nullptr);
  auto d = gpus.Take(1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(gpus.Take(1), nullptr);
  a.reset();
  c.reset();
  EXPECT_EQ(gpus.Holders(0), 0);
  EXPECT_THAT(Indices(gpus.Take(1)->gpus()), ElementsAre(0));
}

TEST(GpuAllocator, TakeWhenFreeWaitsForALeaseToEndOrACancel) {
  GpuAllocator gpus(FourGpus(), /*share=*/1);
  auto all = gpus.Take(4);
  ASSERT_NE(all, nullptr);
  std::atomic<bool> cancelled{false};
  std::unique_ptr<GpuAllocator::Lease> got;
  std::thread waiter([&] { got = gpus.TakeWhenFree(2, [&] { return cancelled.load(); }); });
  all.reset();  // the devices come back: the waiter takes two (whether it waited or not)
  waiter.join();
  ASSERT_NE(got, nullptr);
  EXPECT_THAT(Indices(got->gpus()), ElementsAre(0, 1));
  // Held again: a cancel ends the wait with nothing.
  auto rest = gpus.Take(2);
  std::unique_ptr<GpuAllocator::Lease> none =
      std::make_unique<GpuAllocator::Lease>(nullptr, std::vector<Gpu>{});
  std::thread cancelled_waiter(
      [&] { none = gpus.TakeWhenFree(1, [&] { return cancelled.load(); }); });
  cancelled = true;
  gpus.Wake();
  cancelled_waiter.join();
  EXPECT_EQ(none, nullptr);
  // More than it has at all: null at once.
  EXPECT_EQ(gpus.TakeWhenFree(5, [] { return false; }), nullptr);
}

}  // namespace
}  // namespace amt::worker
