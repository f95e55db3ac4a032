#include "orchestrator/s3/object_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <string>

#include "tests/support/status_matchers.h"
#include "tests/unit/worker/temp_dir.h"

namespace amt::s3 {
namespace {

namespace fs = std::filesystem;
using ::amt::testing::IsOk;
using ::amt::worker::testing::ReadFile;
using ::amt::worker::testing::TempDir;
using ::amt::worker::testing::WriteFile;
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

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(store_.CreateBucket("data"), IsOk()); }

  std::vector<std::string> Keys(const ListPage& page) {
    std::vector<std::string> keys;
    for (const ObjectInfo& object : page.objects) keys.push_back(object.key);
    return keys;
  }

  TempDir temp_;
  ObjectStore store_{temp_.path() / "s3"};
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

TEST_F(ObjectStoreTest, PutObjectIsAPlainFileUnderTheBucketsFolder) {
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

TEST_F(ObjectStoreTest, AFileWrittenByAJobGetsItsMd5AsETag) {
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

TEST_F(ObjectStoreTest, MissingThingsGetS3sCodes) {
  EXPECT_THAT(store_.Head("nope", "k"), HasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.Head("data", "k"), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.Read("data", "k", 0, 1), HasS3Code("NoSuchKey"));
  EXPECT_THAT(store_.CreateBucket("data"), StatusHasS3Code("BucketAlreadyOwnedByYou"));
  EXPECT_THAT(store_.CreateBucket("Bad_Name"), StatusHasS3Code("InvalidBucketName"));
  EXPECT_THAT(store_.HeadBucket(".amt-s3"), StatusHasS3Code("InvalidBucketName"));
  EXPECT_THAT(store_.HeadBucket("nope"), StatusHasS3Code("NoSuchBucket"));
  EXPECT_THAT(store_.Delete("data", "never-was"), IsOk());  // as S3's DeleteObject
}

TEST_F(ObjectStoreTest, KeysThatCannotBeFilesAreRefusedWithAReason) {
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

TEST_F(ObjectStoreTest, ListsInKeyOrderWithPrefixDelimiterAndPages) {
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

TEST_F(ObjectStoreTest, DeleteRemovesTheFileAndFoldersLeftEmpty) {
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

TEST_F(ObjectStoreTest, FolderMarkersAreEmptyObjectsEndingInSlash) {
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

TEST_F(ObjectStoreTest, CopyKeepsOrReplacesMetadata) {
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

TEST_F(ObjectStoreTest, MultipartUploadConcatenatesPartsWithS3sETag) {
  const std::string big(kMinPartBytes, 'a');
  const absl::StatusOr<std::string> id = store_.StartUpload("data", "big.bin", {"x/y", {}});
  ASSERT_THAT(id, IsOk());
  const absl::StatusOr<std::string> e1 = store_.PutPart("data", "big.bin", *id, 1, big);
  const absl::StatusOr<std::string> e2 = store_.PutPart("data", "big.bin", *id, 2, "tail");
  ASSERT_THAT(e1, IsOk());
  ASSERT_THAT(e2, IsOk());
  EXPECT_EQ(*e2, "7aea2552dfe7eb84b9443b6fc9ba6e01");                   // md5("tail")
  EXPECT_THAT(store_.Head("data", "big.bin"), HasS3Code("NoSuchKey"));  // not before Complete

  EXPECT_THAT(store_.CompleteUpload("data", "big.bin", *id, {{2, *e2}, {1, *e1}}),
              HasS3Code("InvalidPartOrder"));
  EXPECT_THAT(store_.CompleteUpload("data", "big.bin", *id, {{1, *e1}, {2, "\"0000\""}}),
              HasS3Code("InvalidPart"));
  const absl::StatusOr<ObjectInfo> done =
      store_.CompleteUpload("data", "big.bin", *id, {{1, "\"" + *e1 + "\""}, {2, *e2}});
  ASSERT_THAT(done, IsOk());
  EXPECT_EQ(done->size, kMinPartBytes + 4);
  EXPECT_EQ(done->content_type, "x/y");
  EXPECT_THAT(done->etag, ::testing::EndsWith("-2"));
  EXPECT_EQ(ReadFile(temp_.path() / "s3/data/big.bin"), big + "tail");
  // The upload is gone once complete.
  EXPECT_THAT(store_.PutPart("data", "big.bin", *id, 3, "x"), HasS3Code("NoSuchUpload"));
}

TEST_F(ObjectStoreTest, PartsButTheLastMustBeFiveMebibytes) {
  const std::string id = *store_.StartUpload("data", "k", {});
  const std::string e1 = *store_.PutPart("data", "k", id, 1, "small");
  const std::string e2 = *store_.PutPart("data", "k", id, 2, "last");
  EXPECT_THAT(store_.CompleteUpload("data", "k", id, {{1, e1}, {2, e2}}),
              HasS3Code("EntityTooSmall"));
  EXPECT_THAT(store_.PutPart("data", "k", id, 10001, "x"), HasS3Code("InvalidArgument"));
  EXPECT_THAT(store_.PutPart("data", "other-key", id, 1, "x"), HasS3Code("NoSuchUpload"));
  EXPECT_THAT(store_.PutPart("data", "k", "../../etc", 1, "x"), HasS3Code("NoSuchUpload"));
  ASSERT_THAT(store_.AbortUpload("data", "k", id), IsOk());
  EXPECT_THAT(store_.CompleteUpload("data", "k", id, {{1, e1}}), HasS3Code("NoSuchUpload"));
}

}  // namespace
}  // namespace amt::s3
