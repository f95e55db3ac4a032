// ObjectStore's multipart uploads (object_store.h): parts, completion, abort, and the listing of
// uploads under way (S3's ListMultipartUploads), on a real temporary folder.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "orchestrator/s3/object_store.h"
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

MATCHER_P3(IsUpload, key, upload_id, initiated_ms, "") {
  *result_listener << "upload " << arg.key << " " << arg.upload_id << " " << arg.initiated_ms;
  return arg.key == key && arg.upload_id == upload_id && arg.initiated_ms == initiated_ms;
}

// Every test runs twice: paths resolved with openat2 and with the walk (beneath.h).
class MultipartTest : public ::testing::TestWithParam<Resolution> {
 protected:
  void SetUp() override { ASSERT_THAT(store_.CreateBucket("data"), IsOk()); }

  // Starts an upload of `key` in `bucket` at the fake clock's `seconds`; its id.
  std::string Start(const std::string& key, double seconds, const std::string& bucket = "data") {
    clock_.Set(seconds);
    const absl::StatusOr<std::string> id = store_.StartUpload(bucket, key, {});
    EXPECT_THAT(id, IsOk());
    return id.value_or("");
  }
  UploadPage List(const UploadListOptions& options) {
    const absl::StatusOr<UploadPage> page = store_.ListUploads("data", options);
    EXPECT_THAT(page, IsOk());
    return page.value_or(UploadPage{});
  }
  fs::path bucket() const { return temp_.path() / "s3/data"; }
  fs::path uploads() const { return temp_.path() / "s3/.amt-s3/uploads"; }

  TempDir temp_;
  FakeClock clock_;
  // The fault seam: each test may set it; 0 lets the operation happen.
  std::function<int(std::string_view)> fault_;
  ObjectStore store_{
      temp_.path() / "s3",
      {GetParam(), [this](std::string_view op) { return fault_ ? fault_(op) : 0; }, &clock_}};
};

TEST_P(MultipartTest, MultipartUploadConcatenatesPartsWithS3sETag) {
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

TEST_P(MultipartTest, PartsButTheLastMustBeFiveMebibytes) {
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

TEST_P(MultipartTest, DeleteBucketAbortsItsUploads) {
  ASSERT_THAT(store_.CreateBucket("other"), IsOk());
  const std::string mine = *store_.StartUpload("data", "k", {});
  ASSERT_THAT(store_.PutPart("data", "k", mine, 1, "part"), IsOk());
  const std::string theirs = *store_.StartUpload("other", "k", {});
  ASSERT_THAT(store_.DeleteBucket("data"), IsOk());
  EXPECT_FALSE(fs::exists(uploads() / mine));
  EXPECT_TRUE(fs::exists(uploads() / theirs));
  EXPECT_FALSE(fs::exists(bucket()));
  // The same name made again has no upload of the old bucket.
  ASSERT_THAT(store_.CreateBucket("data"), IsOk());
  EXPECT_THAT(store_.PutPart("data", "k", mine, 2, "x"), HasS3Code("NoSuchUpload"));
  EXPECT_THAT(List({}).uploads, IsEmpty());
}

// ---- Listing uploads under way (ListMultipartUploads) -----------------------------------------

TEST_P(MultipartTest, ListsUploadsByKeyThenByInitiation) {
  ASSERT_THAT(store_.CreateBucket("other"), IsOk());
  const std::string b = Start("b", 100);
  const std::string a_late = Start("a", 300);
  const std::string a_early = Start("a", 200);
  Start("a", 50, "other");  // another bucket's: not listed
  const UploadPage page = List({});
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("a", a_early, 200'000),
                                        IsUpload("a", a_late, 300'000), IsUpload("b", b, 100'000)));
  EXPECT_THAT(page.common_prefixes, IsEmpty());
  EXPECT_FALSE(page.truncated);
  EXPECT_EQ(page.next_key_marker, "b");
  EXPECT_EQ(page.next_upload_id_marker, b);
}

TEST_P(MultipartTest, APrefixListsOnlyTheUploadsOfItsKeys) {
  const std::string first = Start("logs/a", 1);
  const std::string second = Start("logs/b", 2);
  Start("logsheet", 3);
  Start("data/x", 4);
  UploadListOptions options;
  options.prefix = "logs/";
  EXPECT_THAT(List(options).uploads,
              ElementsAre(IsUpload("logs/a", first, 1000), IsUpload("logs/b", second, 2000)));
}

TEST_P(MultipartTest, ADelimiterRollsKeysUpIntoCommonPrefixes) {
  Start("photos/2024/a.jpg", 1);
  Start("photos/2024/b.jpg", 2);
  Start("photos/2025/c.jpg", 3);
  const std::string top = Start("photos/top.jpg", 4);
  const std::string readme = Start("readme", 5);

  UploadListOptions options;
  options.prefix = "photos/";
  options.delimiter = "/";
  UploadPage page = List(options);
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("photos/top.jpg", top, 4000)));
  EXPECT_THAT(page.common_prefixes, ElementsAre("photos/2024/", "photos/2025/"));

  options.prefix = "";
  page = List(options);
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("readme", readme, 5000)));
  EXPECT_THAT(page.common_prefixes, ElementsAre("photos/"));

  // A common prefix counts as one entry of a page, and the next page starts after it.
  options.prefix = "photos/";
  options.max_uploads = 1;
  page = List(options);
  EXPECT_THAT(page.uploads, IsEmpty());
  EXPECT_THAT(page.common_prefixes, ElementsAre("photos/2024/"));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_key_marker, "photos/2024/");
  EXPECT_EQ(page.next_upload_id_marker, "");
  options.key_marker = page.next_key_marker;
  page = List(options);
  EXPECT_THAT(page.common_prefixes, ElementsAre("photos/2025/"));
  EXPECT_TRUE(page.truncated);
  options.key_marker = page.next_key_marker;
  page = List(options);
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("photos/top.jpg", top, 4000)));
  EXPECT_THAT(page.common_prefixes, IsEmpty());
  EXPECT_FALSE(page.truncated);
}

TEST_P(MultipartTest, PagesOfOneWalkAcrossKeyAndUploadIdMarkers) {
  const std::string a1 = Start("a", 200);
  const std::string b1 = Start("b", 100);
  const std::string a2 = Start("a", 300);
  UploadListOptions options;
  options.max_uploads = 1;

  UploadPage page = List(options);
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("a", a1, 200'000)));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_key_marker, "a");
  EXPECT_EQ(page.next_upload_id_marker, a1);

  options.key_marker = page.next_key_marker;
  options.upload_id_marker = page.next_upload_id_marker;
  page = List(options);
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("a", a2, 300'000)));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_upload_id_marker, a2);

  options.key_marker = page.next_key_marker;
  options.upload_id_marker = page.next_upload_id_marker;
  page = List(options);
  EXPECT_THAT(page.uploads, ElementsAre(IsUpload("b", b1, 100'000)));
  EXPECT_FALSE(page.truncated);
  EXPECT_EQ(page.next_key_marker, "b");
  EXPECT_EQ(page.next_upload_id_marker, b1);

  // A key marker alone: only the keys after it.
  options = {};
  options.key_marker = "a";
  EXPECT_THAT(List(options).uploads, ElementsAre(IsUpload("b", b1, 100'000)));
  // An upload id marker alone is ignored, as in S3.
  options = {};
  options.upload_id_marker = a2;
  EXPECT_THAT(List(options).uploads, ::testing::SizeIs(3));
  // An upload id marker no longer there: the key's uploads with greater ids (S3's rule).
  options.key_marker = "a";
  options.upload_id_marker = "0";  // before every hex id
  EXPECT_THAT(List(options).uploads, ::testing::SizeIs(3));
  options.upload_id_marker = "g";  // after every hex id
  EXPECT_THAT(List(options).uploads, ElementsAre(IsUpload("b", b1, 100'000)));
}

TEST_P(MultipartTest, ACompletedOrAbortedUploadIsNoLongerListed) {
  const std::string done = Start("done", 1);
  const std::string aborted = Start("aborted", 2);
  const std::string open = Start("open", 3);
  const absl::StatusOr<std::string> etag = store_.PutPart("data", "done", done, 1, "body");
  ASSERT_THAT(etag, IsOk());
  ASSERT_THAT(store_.CompleteUpload("data", "done", done, {{1, *etag}}), IsOk());
  ASSERT_THAT(store_.AbortUpload("data", "aborted", aborted), IsOk());
  EXPECT_THAT(List({}).uploads, ElementsAre(IsUpload("open", open, 3000)));
}

TEST_P(MultipartTest, ListingAMissingBucketIsNoSuchBucket) {
  const absl::StatusOr<UploadPage> page = store_.ListUploads("missing", {});
  EXPECT_THAT(page, HasS3Code("NoSuchBucket"));
  EXPECT_THAT(page.status().message(), HasSubstr("The specified bucket does not exist: missing"));
}

TEST_P(MultipartTest, ABucketWithoutUploadsListsNone) {
  const UploadPage page = List({});
  EXPECT_THAT(page.uploads, IsEmpty());
  EXPECT_FALSE(page.truncated);
  EXPECT_EQ(page.next_key_marker, "");
}

TEST_P(MultipartTest, AnUploadRecordedWithoutItsInitiationHasItsRecordsMtime) {
  const std::string id = Start("k", 100);
  const fs::path record = uploads() / id / "upload.json";
  WriteFile(record, R"({"bucket":"data","key":"k","content_type":"","metadata":{}})");
  const struct timespec times[2] = {{0, UTIME_OMIT}, {1'600'000'000, 500'000'000}};
  ASSERT_EQ(::utimensat(AT_FDCWD, record.c_str(), times, 0), 0);
  ASSERT_THAT(store_.PutPart("data", "k", id, 1, "part"), IsOk());  // moves the folder's mtime
  EXPECT_THAT(List({}).uploads, ElementsAre(IsUpload("k", id, 1'600'000'000'500)));
}

// Milliseconds of a file's mtime: the file system's clock.
int64_t MtimeMs(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

TEST_P(MultipartTest, WithoutAClockAnUploadIsInitiatedWhenItsFolderIsMade) {
  ObjectStore store(temp_.path() / "s3", {GetParam(), nullptr, nullptr});
  WriteFile(temp_.path() / "before", "");
  const int64_t before_ms = MtimeMs(temp_.path() / "before");
  const absl::StatusOr<std::string> id = store.StartUpload("data", "k", {});
  ASSERT_THAT(id, IsOk());
  const int64_t after_ms = MtimeMs(uploads() / *id);  // upload.json renamed in: later still
  const absl::StatusOr<UploadPage> page = store.ListUploads("data", {});
  ASSERT_THAT(page, IsOk());
  ASSERT_THAT(page->uploads, ::testing::SizeIs(1));
  const int64_t initiated_ms = page->uploads[0].initiated_ms;
  EXPECT_GE(initiated_ms, before_ms);
  EXPECT_LE(initiated_ms, after_ms);
  // A part moves the folder's mtime, not the upload's initiation.
  ASSERT_THAT(store.PutPart("data", "k", *id, 1, "part"), IsOk());
  EXPECT_THAT(store.ListUploads("data", {})->uploads,
              ElementsAre(IsUpload("k", *id, initiated_ms)));
}

TEST_P(MultipartTest, AStartWhoseRecordCannotBeWrittenLeavesNoUpload) {
  fault_ = [](std::string_view op) { return op == "write" ? ENOSPC : 0; };
  const absl::StatusOr<std::string> id = store_.StartUpload("data", "k", {});
  EXPECT_THAT(id, HasS3Code("InternalError"));
  EXPECT_THAT(id.status().message(), HasSubstr("No space left on device"));
  fault_ = nullptr;
  EXPECT_THAT(List({}).uploads, IsEmpty());
  EXPECT_TRUE(fs::is_empty(uploads()));
}

INSTANTIATE_TEST_SUITE_P(Resolvers, MultipartTest,
                         ::testing::Values(Resolution::kAuto, Resolution::kWalk),
                         [](const ::testing::TestParamInfo<Resolution>& info) {
                           return info.param == Resolution::kAuto ? "Openat2" : "Walk";
                         });

}  // namespace
}  // namespace amt::s3
