#include "orchestrator/s3/object_store.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <functional>
#include <string>

#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"

namespace amt::s3 {
namespace {

namespace fs = std::filesystem;
using ::amt::testing::IsOk;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

MATCHER_P(HasS3Code, code, "") {
  *result_listener << "status " << arg.status();
  return CodeOf(arg.status()) == code;
}
MATCHER_P(StatusHasS3Code, code, "") {
  *result_listener << "status " << arg;
  return CodeOf(arg) == code;
}

// Every store test runs twice: paths resolved with openat2 and with the walk (beneath.h).
class ObjectStoreTest : public ::testing::TestWithParam<Resolution> {
 protected:
  void SetUp() override {
    ASSERT_THAT(store_.CreateBucket("data"), IsOk());
    WriteFile(outside() / "secret", "outside");
  }

  std::vector<std::string> Keys(const ListPage& page) {
    std::vector<std::string> keys;
    for (const ObjectInfo& object : page.objects) keys.push_back(object.key);
    return keys;
  }
  fs::path bucket() const { return temp_.path() / "s3/data"; }
  // A folder beside the S3 folder, which links planted in it point to.
  fs::path outside() const { return temp_.path() / "outside"; }

  TempDir temp_;
  // The fault seam: each test may set it; 0 lets the operation happen.
  std::function<int(std::string_view)> fault_;
  ObjectStore store_{temp_.path() / "s3",
                     {GetParam(), [this](std::string_view op) { return fault_ ? fault_(op) : 0; }}};
};

TEST(BucketNameProblemTest, FollowsS3Rules) {
  EXPECT_EQ(BucketNameProblem("my-bucket.2"), "");
  EXPECT_THAT(BucketNameProblem("ab"), HasSubstr("3 to 63"));
  EXPECT_THAT(BucketNameProblem("My_Bucket"), HasSubstr("lower-case"));
  EXPECT_THAT(BucketNameProblem("-abc"), HasSubstr("begin and end"));
  EXPECT_THAT(BucketNameProblem("a..b"), HasSubstr("adjacent periods"));
  EXPECT_THAT(BucketNameProblem("192.168.1.1"), HasSubstr("IP address"));
  EXPECT_THAT(BucketNameProblem("xn--abc"), HasSubstr("xn--"));
  EXPECT_THAT(BucketNameProblem("abc-s3alias"), HasSubstr("-s3alias"));
}

TEST_P(ObjectStoreTest, PutObjectIsAPlainFileUnderTheBucketsFolder) {
  PutOptions options;
  options.content_type = "text/csv";
  options.metadata = {{"origin", "unit-test"}};
  const absl::StatusOr<ObjectInfo> put = store_.Put("data", "train/part-0.csv", "1,2\n", options);
  ASSERT_THAT(put, IsOk());
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/train/part-0.csv"), "1,2\n");
  EXPECT_EQ(put->etag, "3ecfad755fa825f7a17c5526ec44e651");  // md5 of "1,2\n"
  EXPECT_EQ(put->size, 4u);

  const absl::StatusOr<ObjectInfo> head = store_.Head("data", "train/part-0.csv");
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->etag, put->etag);
  EXPECT_EQ(head->content_type, "text/csv");
  EXPECT_EQ(head->metadata.at("origin"), "unit-test");
  EXPECT_EQ(*store_.Read("data", "train/part-0.csv", 2, 100), "2\n");
  // Nothing but buckets beside .amt-s3 in the root; no temporary file is left.
  EXPECT_THAT(*store_.ListBuckets(), ::testing::SizeIs(1));
  EXPECT_TRUE(fs::is_empty(temp_.path() / "s3/.amt-s3/tmp"));
}

TEST_P(ObjectStoreTest, AFileWrittenByAJobGetsItsMd5AsETag) {
  fs::create_directories(temp_.path() / "s3/data/out/job-1/output");
  WriteFile(temp_.path() / "s3/data/out/job-1/output/model.tar.gz", "abc");
  const absl::StatusOr<ObjectInfo> head = store_.Head("data", "out/job-1/output/model.tar.gz");
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->etag, "900150983cd24fb0d6963f7d28e17f72");  // md5("abc")
  EXPECT_EQ(head->content_type, "");

  // Rewritten by the job with other content: the recorded ETag is not trusted.
  WriteFile(temp_.path() / "s3/data/out/job-1/output/model.tar.gz", "abcd");
  EXPECT_EQ(store_.Head("data", "out/job-1/output/model.tar.gz")->etag,
            "e2fc714c4727ee9395f324cd2e7f331f");  // md5("abcd")
}

TEST_P(ObjectStoreTest, MissingThingsGetS3sCodes) {
  EXPECT_THAT(store_.Head("nope", "k"), HasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.Head("data", "k"), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.Read("data", "k", 0, 1), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.CreateBucket("data"), StatusHasS3Code("BucketAlreadyOwnedByYou"));
  EXPECT_THAT(store_.CreateBucket("Bad_Name"), StatusHasS3Code("InvalidBucketName"));
  EXPECT_THAT(store_.HeadBucket(".amt-s3"), StatusHasS3Code("InvalidBucketName"));
  EXPECT_THAT(store_.HeadBucket("nope"), StatusHasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.Delete("data", "never-was"), IsOk());  // as S3's DeleteObject
}

TEST_P(ObjectStoreTest, KeysThatCannotBeFilesAreRefusedWithAReason) {
  for (const std::string key : {"../escape", "a/../b", "a//b", "/lead", "a/./b"}) {
    const absl::StatusOr<ObjectInfo> put = store_.Put("data", key, "x", {});
    EXPECT_THAT(put, HasS3Code("InvalidArgument")) << key;
    EXPECT_THAT(put.status().message(), HasSubstr("empty, \".\" or \"..\"")) << key;
  }
  EXPECT_THAT(store_.Put("data", std::string(1025, 'k'), "x", {}), HasS3Code("KeyTooLongError"));
  EXPECT_FALSE(fs::exists(temp_.path() / "escape"));

  ASSERT_THAT(store_.Put("data", "a", "x", {}), IsOk());
  const absl::StatusOr<ObjectInfo> under = store_.Put("data", "a/b", "y", {});
  EXPECT_THAT(under, HasS3Code("InvalidArgument"));
  EXPECT_THAT(under.status().message(), HasSubstr("\"a\" to be a folder, but that is an object"));
  ASSERT_THAT(store_.Put("data", "c/d", "y", {}), IsOk());
  EXPECT_THAT(store_.Put("data", "c", "x", {}), HasS3Code("InvalidArgument"));
}

TEST_P(ObjectStoreTest, ListsInKeyOrderWithPrefixDelimiterAndPages) {
  for (const std::string key : {"b.txt", "a/2", "a/1", "a/sub/3", "c/4", "a0"}) {
    ASSERT_THAT(store_.Put("data", key, key, {}), IsOk());
  }
  ListOptions all;
  EXPECT_THAT(Keys(*store_.List("data", all)),
              ElementsAre("a/1", "a/2", "a/sub/3", "a0", "b.txt", "c/4"));

  ListOptions folders;
  folders.delimiter = "/";
  const ListPage top = *store_.List("data", folders);
  EXPECT_THAT(Keys(top), ElementsAre("a0", "b.txt"));
  EXPECT_THAT(top.common_prefixes, ElementsAre("a/", "c/"));

  ListOptions in_a;
  in_a.prefix = "a/";
  in_a.delimiter = "/";
  const ListPage a = *store_.List("data", in_a);
  EXPECT_THAT(Keys(a), ElementsAre("a/1", "a/2"));
  EXPECT_THAT(a.common_prefixes, ElementsAre("a/sub/"));

  ListOptions paged;
  paged.max_keys = 2;
  paged.delimiter = "/";
  ListPage first = *store_.List("data", paged);
  EXPECT_TRUE(first.truncated);
  EXPECT_THAT(first.common_prefixes, ElementsAre("a/"));
  EXPECT_THAT(Keys(first), ElementsAre("a0"));
  EXPECT_EQ(first.last, "a0");
  paged.after = first.last;
  ListPage second = *store_.List("data", paged);
  EXPECT_FALSE(second.truncated);
  EXPECT_THAT(Keys(second), ElementsAre("b.txt"));
  EXPECT_THAT(second.common_prefixes, ElementsAre("c/"));

  ListOptions partial;
  partial.prefix = "a/s";
  EXPECT_THAT(Keys(*store_.List("data", partial)), ElementsAre("a/sub/3"));
  partial.prefix = "zz/";
  EXPECT_THAT(Keys(*store_.List("data", partial)), IsEmpty());
}

TEST_P(ObjectStoreTest, DeleteRemovesTheFileAndFoldersLeftEmpty) {
  ASSERT_THAT(store_.Put("data", "x/y/z", "1", {}), IsOk());
  ASSERT_THAT(store_.Put("data", "x/keep", "1", {}), IsOk());
  ASSERT_THAT(store_.Delete("data", "x/y/z"), IsOk());
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/x/y"));
  EXPECT_TRUE(fs::exists(temp_.path() / "s3/data/x/keep"));
  EXPECT_THAT(store_.DeleteBucket("data"), StatusHasS3Code("BucketNotEmpty"));
  ASSERT_THAT(store_.Delete("data", "x/keep"), IsOk());
  EXPECT_THAT(store_.DeleteBucket("data"), IsOk());
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data"));
}

TEST_P(ObjectStoreTest, FolderMarkersAreEmptyObjectsEndingInSlash) {
  ASSERT_THAT(store_.Put("data", "empty/", "", {}), IsOk());
  EXPECT_TRUE(fs::is_directory(temp_.path() / "s3/data/empty"));
  EXPECT_THAT(Keys(*store_.List("data", {})), ElementsAre("empty/"));
  EXPECT_EQ(store_.Head("data", "empty/")->etag, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_THAT(store_.Put("data", "full/", "x", {}), HasS3Code("InvalidArgument"));
  // A folder a job made holds no marker: not an object.
  fs::create_directories(temp_.path() / "s3/data/made-by-job");
  EXPECT_THAT(store_.Head("data", "made-by-job/"), HasS3Code("NoSuchKey"));
  ASSERT_THAT(store_.Delete("data", "empty/"), IsOk());
  EXPECT_FALSE(fs::exists(temp_.path() / "s3/data/empty"));
}

TEST_P(ObjectStoreTest, CopyKeepsOrReplacesMetadata) {
  PutOptions options{"text/plain", {{"a", "1"}}};
  ASSERT_THAT(store_.Put("data", "src", "hello", options), IsOk());
  ASSERT_THAT(store_.CreateBucket("other"), IsOk());
  const absl::StatusOr<ObjectInfo> copy = store_.Copy("data", "src", "other", "dst/copy", nullptr);
  ASSERT_THAT(copy, IsOk());
  EXPECT_EQ(ReadFile(temp_.path() / "s3/other/dst/copy"), "hello");
  EXPECT_EQ(copy->etag, "5d41402abc4b2a76b9719d911017c592");  // md5("hello")
  EXPECT_EQ(copy->content_type, "text/plain");
  EXPECT_EQ(copy->metadata.at("a"), "1");

  PutOptions replace{"application/json", {}};
  EXPECT_EQ(store_.Copy("data", "src", "data", "src", &replace)->content_type, "application/json");
  EXPECT_THAT(store_.Copy("data", "src", "data", "src", nullptr), HasS3Code("InvalidRequest"));
  EXPECT_THAT(store_.Copy("data", "missing", "data", "x", nullptr), HasS3Code("NoSuchKey"));
}

// ---- Links a job planted ---------------------------------------------------------------------

TEST_P(ObjectStoreTest, ALinkLoopListsOnlyTheRealFiles) {
  fs::create_directories(bucket() / "l");
  WriteFile(bucket() / "l/real", "r");
  fs::create_symlink(".", bucket() / "l/a");
  fs::create_symlink(".", bucket() / "l/b");
  ListOptions in_l;
  in_l.prefix = "l/";
  EXPECT_THAT(Keys(*store_.List("data", in_l)), ElementsAre("l/real"));
  EXPECT_THAT(Keys(*store_.List("data", {})), ElementsAre("l/real"));
  in_l.prefix = "l/a/";
  EXPECT_THAT(Keys(*store_.List("data", in_l)), IsEmpty());
  EXPECT_THAT(store_.Head("data", "l/a/real"), HasS3Code("NoSuchKey"));
}

TEST_P(ObjectStoreTest, ALinkToAFileOutsideIsNoObject) {
  fs::create_symlink(outside() / "secret", bucket() / "leak");
  EXPECT_THAT(store_.Head("data", "leak"), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.Read("data", "leak", 0, 100), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.OpenRead("data", "leak"), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.Copy("data", "leak", "data", "copy", nullptr), HasS3Code("NoSuchKey"));
  EXPECT_FALSE(fs::exists(bucket() / "copy"));
  EXPECT_THAT(Keys(*store_.List("data", {})), IsEmpty());
  // DELETE of it is S3's no-op: the link stays, and so does what it points to.
  EXPECT_THAT(store_.Delete("data", "leak"), IsOk());
  EXPECT_TRUE(fs::is_symlink(bucket() / "leak"));
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
}

TEST_P(ObjectStoreTest, ALinkToAFolderOutsideIsNeitherReadNorWrittenThrough) {
  fs::create_symlink(outside(), bucket() / "out");
  EXPECT_THAT(store_.Head("data", "out/secret"), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.Read("data", "out/secret", 0, 100), HasS3Code("NoSuchKey"));
  ListOptions in_out;
  in_out.prefix = "out/";
  EXPECT_THAT(Keys(*store_.List("data", in_out)), IsEmpty());

  const absl::StatusOr<ObjectInfo> put = store_.Put("data", "out/planted", "x", {});
  EXPECT_THAT(put, HasS3Code("InvalidArgument"));
  EXPECT_THAT(put.status().message(), HasSubstr("symbolic link at \"out\""));
  EXPECT_THAT(put.status().message(), ::testing::Not(HasSubstr(temp_.path().string())));
  EXPECT_THAT(store_.Put("data", "out/deeper/planted", "x", {}), HasS3Code("InvalidArgument"));
  EXPECT_THAT(store_.Put("data", "out/folder/", "", {}), HasS3Code("InvalidArgument"));

  EXPECT_THAT(store_.Delete("data", "out/secret"), IsOk());
  ASSERT_THAT(store_.Put("data", "src", "copied", {}), IsOk());
  EXPECT_THAT(store_.Copy("data", "src", "data", "out/copy", nullptr),
              HasS3Code("InvalidArgument"));
  EXPECT_THAT(store_.Copy("data", "out/secret", "data", "stolen", nullptr), HasS3Code("NoSuchKey"));

  const std::string id = *store_.StartUpload("data", "out/big", {});
  const std::string etag = *store_.PutPart("data", "out/big", id, 1, "part");
  EXPECT_THAT(store_.CompleteUpload("data", "out/big", id, {{1, etag}}),
              HasS3Code("InvalidArgument"));

  // Outside: the one file it held, as it was.
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
  EXPECT_EQ(std::distance(fs::directory_iterator(outside()), fs::directory_iterator()), 1);
}

TEST_P(ObjectStoreTest, ALinkedParentDeeperInTheKeyIsRefusedToo) {
  fs::create_directories(bucket() / "a");
  fs::create_symlink(outside(), bucket() / "a/b");
  const absl::StatusOr<ObjectInfo> put = store_.Put("data", "a/b/c/d", "x", {});
  EXPECT_THAT(put, HasS3Code("InvalidArgument"));
  EXPECT_THAT(put.status().message(), HasSubstr("symbolic link at \"a/b\""));
  EXPECT_FALSE(fs::exists(outside() / "c"));
}

TEST_P(ObjectStoreTest, APutWhoseKeyIsALinkReplacesTheLinkNotItsTarget) {
  fs::create_symlink(outside() / "secret", bucket() / "leaf");
  const absl::StatusOr<ObjectInfo> put = store_.Put("data", "leaf", "new", {});
  ASSERT_THAT(put, IsOk());
  EXPECT_FALSE(fs::is_symlink(bucket() / "leaf"));
  EXPECT_EQ(ReadFile(bucket() / "leaf"), "new");
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
  EXPECT_EQ(*store_.Read("data", "leaf", 0, 10), "new");
}

TEST_P(ObjectStoreTest, ABucketThatIsALinkIsNoBucket) {
  fs::create_symlink(outside(), temp_.path() / "s3/linked");
  EXPECT_THAT(store_.HeadBucket("linked"), StatusHasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.Head("linked", "secret"), HasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.Put("linked", "new", "x", {}), HasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.DeleteBucket("linked"), StatusHasS3Code("NoSuchBucket"));
  const std::vector<BucketInfo> buckets = *store_.ListBuckets();
  ASSERT_EQ(buckets.size(), 1u);
  EXPECT_EQ(buckets[0].name, "data");
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
  EXPECT_FALSE(fs::exists(outside() / "new"));
}

TEST_P(ObjectStoreTest, AFifoIsNoObjectAndDoesNotBlock) {
  ASSERT_EQ(::mkfifo((bucket() / "fifo").c_str(), 0644), 0);
  EXPECT_THAT(store_.Head("data", "fifo"), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.Read("data", "fifo", 0, 1), HasS3Code("NoSuchKey"));
  EXPECT_THAT(Keys(*store_.List("data", {})), IsEmpty());
}

TEST_P(ObjectStoreTest, DeleteBucketRemovesLinksButNotWhatTheyPointTo) {
  fs::create_symlink(outside(), bucket() / "out");
  fs::create_symlink(outside() / "secret", bucket() / "leak");
  ASSERT_THAT(store_.DeleteBucket("data"), IsOk());
  EXPECT_FALSE(fs::exists(fs::symlink_status(bucket())));
  EXPECT_EQ(ReadFile(outside() / "secret"), "outside");
}

// ---- Layout -----------------------------------------------------------------------------------

TEST_P(ObjectStoreTest, KeysWhoseRecordsCollidedInTheOldLayoutCoexist) {
  ASSERT_THAT(store_.Put("data", "x", "one", {"text/one", {{"n", "1"}}}), IsOk());
  ASSERT_THAT(store_.Put("data", "x.meta/y", "two", {"text/two", {{"n", "2"}}}), IsOk());
  const absl::StatusOr<ObjectInfo> x = store_.Head("data", "x");
  const absl::StatusOr<ObjectInfo> y = store_.Head("data", "x.meta/y");
  ASSERT_THAT(x, IsOk());
  ASSERT_THAT(y, IsOk());
  EXPECT_EQ(x->content_type, "text/one");
  EXPECT_EQ(x->metadata.at("n"), "1");
  EXPECT_EQ(y->content_type, "text/two");
  EXPECT_EQ(y->metadata.at("n"), "2");
  EXPECT_THAT(Keys(*store_.List("data", {})), ElementsAre("x", "x.meta/y"));
}

TEST_P(ObjectStoreTest, RecordsOfTheOldLayoutAreStillReadAndRemovedOnDelete) {
  WriteFile(bucket() / "old/file", "abc");
  struct stat st {};
  ASSERT_EQ(::stat((bucket() / "old/file").c_str(), &st), 0);
  const int64_t mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
  const fs::path legacy = temp_.path() / "s3/.amt-s3/meta/data/old/file.meta";
  WriteFile(legacy, "{\"size\":3,\"mtime_ns\":" + std::to_string(mtime_ns) +
                        ",\"etag\":\"recorded\",\"content_type\":\"text/old\","
                        "\"metadata\":{\"k\":\"v\"}}");
  const absl::StatusOr<ObjectInfo> head = store_.Head("data", "old/file");
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->etag, "recorded");  // trusted as before: size and mtime match
  EXPECT_EQ(head->content_type, "text/old");
  EXPECT_EQ(head->metadata.at("k"), "v");
  ASSERT_THAT(store_.Delete("data", "old/file"), IsOk());
  EXPECT_FALSE(fs::exists(legacy));
  EXPECT_FALSE(fs::exists(legacy.parent_path()));
}

TEST_P(ObjectStoreTest, APutReplacesTheOldLayoutsRecord) {
  const fs::path legacy = temp_.path() / "s3/.amt-s3/meta/data/k.meta";
  WriteFile(legacy, "{\"size\":1,\"mtime_ns\":1,\"etag\":\"e\",\"content_type\":\"text/old\"}");
  ASSERT_THAT(store_.Put("data", "k", "new", {"text/new", {}}), IsOk());
  EXPECT_FALSE(fs::exists(legacy));
  EXPECT_EQ(store_.Head("data", "k")->content_type, "text/new");
}

TEST_P(ObjectStoreTest, AKeySeventyFoldersDeepIsListed) {
  std::string key;
  for (int i = 0; i < 70; ++i) key += "d/";
  key += "leaf";
  ASSERT_THAT(store_.Put("data", key, "deep", {}), IsOk());
  EXPECT_THAT(Keys(*store_.List("data", {})), ElementsAre(key));
  ListOptions deep;
  deep.prefix = key.substr(0, 100);
  EXPECT_THAT(Keys(*store_.List("data", deep)), ElementsAre(key));
  ASSERT_THAT(store_.Delete("data", key), IsOk());
  EXPECT_FALSE(fs::exists(bucket() / "d"));
}

// ---- Writes that fail --------------------------------------------------------------------------

// A source giving `chunks` one by one.
ChunkSource Chunks(std::vector<std::string> chunks) {
  return [chunks = std::move(chunks), next = size_t{0}](
             char* buffer, size_t capacity) mutable -> absl::StatusOr<size_t> {
    if (next == chunks.size()) return 0;
    const std::string& chunk = chunks[next++];
    EXPECT_LE(chunk.size(), capacity);
    std::copy(chunk.begin(), chunk.end(), buffer);
    return chunk.size();
  };
}

TEST_P(ObjectStoreTest, APutFailingMidWriteLeavesTheOldObject) {
  ASSERT_THAT(store_.Put("data", "k", "old bytes", {"text/old", {}}), IsOk());
  int writes = 0;
  fault_ = [&](std::string_view op) { return op == "write" && ++writes == 2 ? ENOSPC : 0; };
  const absl::StatusOr<ObjectInfo> put =
      store_.PutStream("data", "k", Chunks({"new ", "bytes"}), {"text/new", {}});
  EXPECT_THAT(put, HasS3Code("InternalError"));
  EXPECT_THAT(put.status().message(), HasSubstr("No space left on device"));
  EXPECT_THAT(put.status().message(), ::testing::Not(HasSubstr(temp_.path().string())));
  fault_ = nullptr;
  EXPECT_EQ(ReadFile(bucket() / "k"), "old bytes");
  EXPECT_EQ(store_.Head("data", "k")->content_type, "text/old");
  EXPECT_TRUE(fs::is_empty(temp_.path() / "s3/.amt-s3/tmp"));
}

TEST_P(ObjectStoreTest, APutWhoseRecordCannotBeWrittenLeavesTheOldObject) {
  // The object's bytes fit, its metadata record does not: the record is written before the
  // object is renamed into place, so the old object and its record stay.
  ASSERT_THAT(store_.Put("data", "k", "old bytes", {"text/old", {}}), IsOk());
  int writes = 0;
  fault_ = [&](std::string_view op) { return op == "write" && ++writes == 2 ? ENOSPC : 0; };
  EXPECT_THAT(store_.Put("data", "k", "new bytes", {"text/new", {}}), HasS3Code("InternalError"));
  EXPECT_EQ(writes, 2);
  fault_ = nullptr;
  EXPECT_EQ(ReadFile(bucket() / "k"), "old bytes");
  EXPECT_EQ(store_.Head("data", "k")->content_type, "text/old");
  EXPECT_TRUE(fs::is_empty(temp_.path() / "s3/.amt-s3/tmp"));
}

TEST_P(ObjectStoreTest, APutFailingToSyncOrRenameLeavesTheOldObject) {
  ASSERT_THAT(store_.Put("data", "k", "old bytes", {}), IsOk());
  for (const std::string_view failing : {"sync", "rename"}) {
    fault_ = [&](std::string_view op) { return op == failing ? EIO : 0; };
    EXPECT_THAT(store_.Put("data", "k", "new bytes", {}), HasS3Code("InternalError")) << failing;
    EXPECT_EQ(ReadFile(bucket() / "k"), "old bytes") << failing;
  }
  fault_ = nullptr;
  EXPECT_TRUE(fs::is_empty(temp_.path() / "s3/.amt-s3/tmp"));
}

TEST_P(ObjectStoreTest, APutFailingStreamLeavesTheOldObject) {
  ASSERT_THAT(store_.Put("data", "k", "old bytes", {}), IsOk());
  bool first = true;
  const ChunkSource broken = [&](char* buffer, size_t) -> absl::StatusOr<size_t> {
    if (!first) return absl::DataLossError("the client went away");
    first = false;
    buffer[0] = 'n';
    return 1;
  };
  EXPECT_EQ(store_.PutStream("data", "k", broken, {}).status().message(), "the client went away");
  EXPECT_EQ(ReadFile(bucket() / "k"), "old bytes");
}

TEST_P(ObjectStoreTest, ACrossDeviceRenameCopiesBesideTheObjectFirst) {
  ASSERT_THAT(store_.Put("data", "dir/k", "old bytes", {}), IsOk());
  int renames = 0;
  fault_ = [&](std::string_view op) { return op == "rename" && ++renames == 1 ? EXDEV : 0; };
  const absl::StatusOr<ObjectInfo> put = store_.Put("data", "dir/k", "new bytes", {"text/new", {}});
  ASSERT_THAT(put, IsOk());
  fault_ = nullptr;
  EXPECT_EQ(ReadFile(bucket() / "dir/k"), "new bytes");
  EXPECT_EQ(put->etag, "83afa1ab818370731da1157d27957304");  // md5("new bytes")
  const absl::StatusOr<ObjectInfo> head = store_.Head("data", "dir/k");
  EXPECT_EQ(head->etag, put->etag);
  EXPECT_EQ(head->content_type, "text/new");
  EXPECT_EQ(head->last_modified_ms, put->last_modified_ms);  // the copy kept the mtime recorded
  EXPECT_EQ(std::distance(fs::directory_iterator(bucket() / "dir"), fs::directory_iterator()), 1);
}

TEST_P(ObjectStoreTest, ACrossDeviceCopyFailingLeavesTheOldObjectAndNoCopy) {
  ASSERT_THAT(store_.Put("data", "dir/k", "old bytes", {}), IsOk());
  bool renamed = false;
  fault_ = [&](std::string_view op) {
    if (op == "rename" && !renamed) {
      renamed = true;
      return EXDEV;
    }
    return op == "write" && renamed ? ENOSPC : 0;  // the copy's writes
  };
  EXPECT_THAT(store_.Put("data", "dir/k", "new bytes", {}), HasS3Code("InternalError"));
  fault_ = nullptr;
  EXPECT_EQ(ReadFile(bucket() / "dir/k"), "old bytes");
  EXPECT_EQ(std::distance(fs::directory_iterator(bucket() / "dir"), fs::directory_iterator()), 1);
  EXPECT_TRUE(fs::is_empty(temp_.path() / "s3/.amt-s3/tmp"));
}

TEST_P(ObjectStoreTest, APutOverTheFileSizeLimitLeavesTheOldObject) {
  // A real short write: a child process whose file size limit is 64 KiB PUTs 1 MiB (write(2)
  // then fails with EFBIG, as on a full disk), while the parent only looks.
  ASSERT_THAT(store_.Put("data", "k", "old bytes", {}), IsOk());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {64 << 10, 64 << 10};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const absl::StatusOr<ObjectInfo> put = store_.Put("data", "k", std::string(1 << 20, 'n'), {});
    ::_exit(!put.ok() && CodeOf(put.status()) == "InternalError" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(bucket() / "k"), "old bytes");
  EXPECT_TRUE(fs::is_empty(temp_.path() / "s3/.amt-s3/tmp"));
}

// ---- Streaming --------------------------------------------------------------------------------

TEST_P(ObjectStoreTest, OpenReadStreamsTheFileHeadDescribed) {
  ASSERT_THAT(store_.Put("data", "k", "first version", {"text/plain", {}}), IsOk());
  absl::StatusOr<ReadHandle> handle = store_.OpenRead("data", "k");
  ASSERT_THAT(handle, IsOk());
  EXPECT_EQ(handle->info.size, 13u);
  EXPECT_EQ(handle->info.content_type, "text/plain");
  EXPECT_EQ(handle->info.etag, store_.Head("data", "k")->etag);
  // Replaced meanwhile: the handle still reads the version it described, from offset 0.
  ASSERT_THAT(store_.Put("data", "k", "second", {}), IsOk());
  std::string read(64, '\0');
  const ssize_t n = ::read(handle->fd.get(), read.data(), read.size());
  ASSERT_EQ(n, 13);
  read.resize(n);
  EXPECT_EQ(read, "first version");

  ASSERT_THAT(store_.Put("data", "folder/", "", {}), IsOk());
  const absl::StatusOr<ReadHandle> marker = store_.OpenRead("data", "folder/");
  ASSERT_THAT(marker, IsOk());
  EXPECT_EQ(marker->info.size, 0u);
  EXPECT_FALSE(marker->fd.valid());
}

TEST_P(ObjectStoreTest, PutStreamWritesChunksFromADescriptor) {
  const std::string content = std::string(3 << 20, 'a') + "end";
  WriteFile(outside() / "big", content);
  const Fd source(::open((outside() / "big").c_str(), O_RDONLY | O_CLOEXEC));
  const absl::StatusOr<ObjectInfo> put =
      store_.PutStream("data", "big",
                       [&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
                         const ssize_t n = ::read(source.get(), buffer, capacity);
                         if (n < 0) return absl::InternalError("read");
                         return static_cast<size_t>(n);
                       },
                       {});
  ASSERT_THAT(put, IsOk());
  EXPECT_EQ(put->size, content.size());
  EXPECT_EQ(ReadFile(bucket() / "big"), content);
  EXPECT_EQ(store_.Head("data", "big")->etag, put->etag);

  EXPECT_THAT(store_.PutStream("data", "marker/", Chunks({"x"}), {}), HasS3Code("InvalidArgument"));
  EXPECT_THAT(store_.PutStream("data", "marker/", Chunks({}), {}), IsOk());
}

TEST_P(ObjectStoreTest, PutPartStreamWritesAPartFromChunks) {
  const std::string id = *store_.StartUpload("data", "k", {});
  const absl::StatusOr<std::string> etag =
      store_.PutPartStream("data", "k", id, 1, Chunks({"ta", "il"}));
  ASSERT_THAT(etag, IsOk());
  EXPECT_EQ(*etag, "7aea2552dfe7eb84b9443b6fc9ba6e01");  // md5("tail")
  ASSERT_THAT(store_.CompleteUpload("data", "k", id, {{1, *etag}}), IsOk());
  EXPECT_EQ(ReadFile(bucket() / "k"), "tail");
  EXPECT_THAT(store_.PutPartStream("data", "k", id, 2, Chunks({"x"})), HasS3Code("NoSuchUpload"));
}

INSTANTIATE_TEST_SUITE_P(Resolvers, ObjectStoreTest,
                         ::testing::Values(Resolution::kAuto, Resolution::kWalk),
                         [](const ::testing::TestParamInfo<Resolution>& info) {
                           return info.param == Resolution::kAuto ? "Openat2" : "Walk";
                         });

}  // namespace
}  // namespace amt::s3
