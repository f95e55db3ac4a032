#include "orchestrator/s3/beneath.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/support/temp_dir.h"

namespace amt::s3 {
namespace {

namespace fs = std::filesystem;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;
using ::testing::UnorderedElementsAre;

// The contents of the open file `fd`.
std::string Contents(const Fd& fd) {
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = ::pread(fd.get(), buffer, sizeof(buffer), out.size())) > 0;) {
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(FdTest, ClosesOnDestructionAndMovesOwnership) {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(raw, 0);
  {
    Fd a(raw);
    Fd b = std::move(a);
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(b.get(), raw);
    Fd c;
    c = std::move(b);
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));

  raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  Fd d(raw);
  EXPECT_EQ(d.release(), raw);
  EXPECT_FALSE(d.valid());
  EXPECT_TRUE(IsOpen(raw));
  ::close(raw);
}

// Every resolver test runs with openat2 (kAuto on this kernel) and with the walk (kWalk).
class BeneathTest : public ::testing::TestWithParam<Resolution> {
 protected:
  void SetUp() override {
    fs::create_directories(base() / "a/b");
    WriteFile(base() / "a/b/file", "inside");
    WriteFile(temp_.path() / "outside/secret", "outside");
    dir_.reset(::open(base().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_.valid());
  }

  fs::path base() const { return temp_.path() / "base"; }
  fs::path outside() const { return temp_.path() / "outside"; }
  Opened Open(std::string_view relative, int flags = O_RDONLY) {
    return OpenBeneath(dir_.get(), relative, flags, GetParam());
  }

  TempDir temp_;
  Fd dir_;
};

TEST_P(BeneathTest, OpensAFileThroughFolders) {
  const Opened opened = Open("a/b/file");
  ASSERT_TRUE(opened.ok()) << opened.error;
  EXPECT_EQ(Contents(opened.fd), "inside");
  const Opened folder = OpenDirBeneath(dir_.get(), "a/b", GetParam());
  ASSERT_TRUE(folder.ok()) << folder.error;
  EXPECT_TRUE(OpenBeneath(folder.fd.get(), "file", O_RDONLY, GetParam()).ok());
  EXPECT_TRUE(OpenDirBeneath(dir_.get(), "", GetParam()).ok());  // the folder itself
}

TEST_P(BeneathTest, MissingAndNotAFolderHaveTheirErrno) {
  EXPECT_EQ(Open("a/nope").error, ENOENT);
  EXPECT_EQ(Open("a/b/file/deeper").error, ENOTDIR);
  EXPECT_EQ(OpenDirBeneath(dir_.get(), "a/b/file", GetParam()).error, ENOTDIR);
  EXPECT_EQ(Open("a/../a/b/file").error, EINVAL);
  EXPECT_EQ(Open("a//b/file").error, EINVAL);
  EXPECT_EQ(Open("/etc/passwd").error, EINVAL);
}

TEST_P(BeneathTest, ALinkAtTheEndIsNeitherFollowedNorOpened) {
  fs::create_symlink(outside() / "secret", base() / "a/leak");
  fs::create_symlink("b/file", base() / "a/inner");  // even one that stays inside
  fs::create_symlink(outside(), base() / "a/dir-leak");
  EXPECT_EQ(Open("a/leak").error, ELOOP);
  EXPECT_EQ(Open("a/inner").error, ELOOP);
  EXPECT_EQ(OpenDirBeneath(dir_.get(), "a/dir-leak", GetParam()).error, ELOOP);
  EXPECT_EQ(Open("a/leak", O_WRONLY | O_TRUNC).error, ELOOP);
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
}

TEST_P(BeneathTest, ALinkOnTheWayIsNotFollowed) {
  fs::create_symlink(outside(), base() / "out");
  fs::create_symlink("a", base() / "same");
  fs::create_symlink(".", base() / "a/loop");
  EXPECT_EQ(Open("out/secret").error, ELOOP);
  EXPECT_EQ(Open("same/b/file").error, ELOOP);
  EXPECT_EQ(Open("a/loop/loop/loop/b/file").error, ELOOP);
}

TEST_P(BeneathTest, PathsLongerThanPathMaxAreWalked) {
  // 25 folders of 200 bytes: 5,024 bytes with the slashes, over PATH_MAX (4,096).
  const std::string name(200, 'd');
  std::string path;
  Opened made;
  for (int i = 0; i < 25; ++i) {
    made = MakeDirsBeneath(made.fd.valid() ? made.fd.get() : dir_.get(), name);
    ASSERT_TRUE(made.ok()) << i << ": " << made.error;
    path += path.empty() ? name : "/" + name;
  }
  ASSERT_EQ(::mkdirat(made.fd.get(), "last", 0755), 0);
  made.fd.reset();
  EXPECT_TRUE(OpenDirBeneath(dir_.get(), path + "/last", GetParam()).ok());
  EXPECT_EQ(OpenDirBeneath(dir_.get(), path + "/nope", GetParam()).error, ENOENT);
  EXPECT_EQ(RemoveTreeBeneath(dir_.get(), name, GetParam()), 0);
  EXPECT_FALSE(fs::exists(base() / name));
}

TEST_P(BeneathTest, RemoveTreeRemovesLinksNotTheirTargets) {
  fs::create_directories(base() / "tree/x/y");
  WriteFile(base() / "tree/x/y/f", "f");
  fs::create_symlink(outside(), base() / "tree/x/out");
  fs::create_symlink(outside() / "secret", base() / "tree/secret-link");
  fs::create_symlink(".", base() / "tree/loop");
  ASSERT_EQ(::mkfifo((base() / "tree/fifo").c_str(), 0644), 0);
  EXPECT_EQ(RemoveTreeBeneath(dir_.get(), "tree", GetParam()), 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(base() / "tree")));
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
  EXPECT_EQ(RemoveTreeBeneath(dir_.get(), "tree", GetParam()), ENOENT);
  // A link as the tree itself: the link goes, the folder it points to stays.
  fs::create_symlink(outside(), base() / "tree-link");
  EXPECT_EQ(RemoveTreeBeneath(dir_.get(), "tree-link", GetParam()), 0);
  EXPECT_TRUE(fs::exists(outside() / "secret"));
}

INSTANTIATE_TEST_SUITE_P(Resolvers, BeneathTest,
                         ::testing::Values(Resolution::kAuto, Resolution::kWalk),
                         [](const ::testing::TestParamInfo<Resolution>& info) {
                           return info.param == Resolution::kAuto ? "Openat2" : "Walk";
                         });

class MakeDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(base());
    dir_.reset(::open(base().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  fs::path base() const { return temp_.path() / "base"; }

  TempDir temp_;
  Fd dir_;
};

TEST_F(MakeDirsTest, CreatesWhatIsMissingAndOpensTheLast) {
  Opened made = MakeDirsBeneath(dir_.get(), "x/y/z");
  ASSERT_TRUE(made.ok()) << made.error;
  EXPECT_TRUE(fs::is_directory(base() / "x/y/z"));
  ASSERT_EQ(::mkdirat(made.fd.get(), "inside", 0755), 0);
  EXPECT_TRUE(fs::is_directory(base() / "x/y/z/inside"));
  EXPECT_TRUE(MakeDirsBeneath(dir_.get(), "x/y/z").ok());  // there already
}

TEST_F(MakeDirsTest, SaysWhereALinkOrAFileIsInTheWay) {
  fs::create_directories(temp_.path() / "outside");
  fs::create_directories(base() / "x");
  fs::create_symlink(temp_.path() / "outside", base() / "x/link");
  WriteFile(base() / "x/file", "f");

  const Opened through_link = MakeDirsBeneath(dir_.get(), "x/link/new");
  EXPECT_EQ(through_link.error, ELOOP);
  EXPECT_EQ(through_link.where, "x/link");
  EXPECT_TRUE(fs::is_empty(temp_.path() / "outside"));

  const Opened through_file = MakeDirsBeneath(dir_.get(), "x/file/new");
  EXPECT_EQ(through_file.error, ENOTDIR);
  EXPECT_EQ(through_file.where, "x/file");
  EXPECT_EQ(MakeDirsBeneath(dir_.get(), "x/../y").error, EINVAL);
}

TEST(ListDirectoryTest, SaysWhatEachEntryIsWithoutFollowingIt) {
  TempDir temp;
  fs::create_directories(temp.path() / "sub");
  WriteFile(temp.path() / "file", "f");
  fs::create_symlink("sub", temp.path() / "link-to-dir");
  fs::create_symlink("file", temp.path() / "link-to-file");
  const Fd dir(::open(temp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::vector<DirEntry> entries;
  ASSERT_EQ(ListDirectory(dir.get(), &entries), 0);
  std::vector<std::string> seen;
  for (const DirEntry& entry : entries) {
    const char* kind = entry.kind == DirEntry::Kind::kFile        ? "file"
                       : entry.kind == DirEntry::Kind::kDirectory ? "dir"
                                                                  : "other";
    seen.push_back(entry.name + ":" + kind);
  }
  EXPECT_THAT(seen, UnorderedElementsAre("sub:dir", "file:file", "link-to-dir:other",
                                         "link-to-file:other"));
  // Listed twice from the same descriptor: the listing does not move the caller's position.
  entries.clear();
  ASSERT_EQ(ListDirectory(dir.get(), &entries), 0);
  EXPECT_EQ(entries.size(), 4u);
}

}  // namespace
}  // namespace amt::s3
