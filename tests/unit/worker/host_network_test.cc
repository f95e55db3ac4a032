#include "worker/host_network.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace amt::worker {
namespace {

TEST(HostNetwork, NamesHostsAsSageMakerDoes) {
  EXPECT_EQ(HostName(1), "algo-1");
  EXPECT_EQ(HostName(12), "algo-12");
}

TEST(LoopbackNetworks, HandsOutTheLowestFreeNetworkAndTakesItBack) {
  LoopbackNetworks networks;
  auto first = networks.Take();
  auto second = networks.Take();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->index(), 0);
  EXPECT_EQ(second->index(), 1);
  EXPECT_EQ(first->Address(1), "127.1.0.1");
  EXPECT_EQ(second->Address(2), "127.1.1.2");
  first.reset();
  auto again = networks.Take();
  EXPECT_EQ(again->index(), 0);  // the freed one
  auto third = networks.Take();
  EXPECT_EQ(third->index(), 2);
}

TEST(LoopbackNetworks, AddressesLeave127Dot0AndCarryIntoTheSecondOctet) {
  LoopbackNetworks networks;
  std::vector<std::unique_ptr<LoopbackNetworks::Lease>> leases;
  for (int i = 0; i <= 256; ++i) leases.push_back(networks.Take());
  EXPECT_EQ(leases[255]->Address(3), "127.1.255.3");
  EXPECT_EQ(leases[256]->Address(3), "127.2.0.3");
}

TEST(LoopbackNetworks, WorkersSharingALockFolderNeverHandOutTheSameNetwork) {
  ::amt::testing::TempDir temp;
  // Two workers of one machine (flock conflicts between open files, so two pools in one
  // process stand for two processes).
  LoopbackNetworks a(temp.path().string());
  LoopbackNetworks b(temp.path().string());
  auto a0 = a.Take();
  auto b0 = b.Take();
  auto a1 = a.Take();
  ASSERT_NE(a0, nullptr);
  ASSERT_NE(b0, nullptr);
  ASSERT_NE(a1, nullptr);
  EXPECT_EQ(a0->index(), 0);
  EXPECT_EQ(b0->index(), 1);
  EXPECT_EQ(a1->index(), 2);
  // A network given back is free for the other worker too.
  a0.reset();
  auto b1 = b.Take();
  EXPECT_EQ(b1->index(), 0);
}

TEST(HostsFileText, KeepsTheMachinesLinesThenNamesEveryHost) {
  EXPECT_EQ(HostsFileText("127.0.0.1 localhost", {"algo-1", "algo-2"}, {"127.1.0.1", "127.1.0.2"}),
            "127.0.0.1 localhost\n# The hosts of this training job (amt-worker).\n"
            "127.1.0.1 algo-1\n127.1.0.2 algo-2\n");
  EXPECT_EQ(HostsFileText("", {"algo-1"}, {"127.1.0.1"}),
            "# The hosts of this training job (amt-worker).\n127.1.0.1 algo-1\n");
}

}  // namespace
}  // namespace amt::worker
