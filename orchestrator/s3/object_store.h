// ObjectStore: the local S3 folder (amtd --s3-root, default <data-dir>/s3) seen as S3 buckets and
// objects, for the S3 REST handler of the HTTP edge (gateway/s3_rest.h). The folder stays what
// training jobs read and write: s3://bucket/key is the plain file <root>/bucket/key, so data a
// client uploads is a channel's input as it is, and a job's model.tar.gz is an object to
// download. What a file cannot carry lives beside the buckets, under <root>/.amt-s3/ (a name no
// bucket can have):
//
//   .amt-s3/meta/<bucket>/<key>.meta   ETag, Content-Type and x-amz-meta-* of an object, valid
//                                      while the file keeps the size and mtime recorded there;
//                                      a file written by a job or by hand gets its MD5 computed
//                                      on first read and recorded
//   .amt-s3/uploads/<id>/              a multipart upload: its target and parts
//   .amt-s3/tmp/                       uploads being written; each object appears by rename()
//
// So a reader (a job, a listing) never sees half an object, and a write is on disk (fsync) before
// it is acknowledged. Limits of files standing for objects, refused with InvalidArgument and a
// message saying why: a key with an empty, "." or ".." segment, a segment over 255 bytes, and a
// key that is the "folder" of another (objects "a" and "a/b" cannot both exist). A key ending
// in "/" with an empty body (a console's folder marker) is a folder with a marker in .amt-s3.
//
// Errors are absl::Status values that carry S3's error code (CodeOf): NoSuchBucket, NoSuchKey,
// NoSuchUpload, BucketNotEmpty, BucketAlreadyOwnedByYou, InvalidBucketName, KeyTooLongError,
// InvalidArgument, InvalidPart, InvalidPartOrder, EntityTooSmall, InternalError (the disk).
//
// Thread-compatible: no state but the folder. Writes of one object from two threads at once end
// with one of them whole, as in S3.
#ifndef AMT_ORCHESTRATOR_S3_OBJECT_STORE_H_
#define AMT_ORCHESTRATOR_S3_OBJECT_STORE_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace amt::s3 {

// S3's error code carried by a status the store returned ("NoSuchKey"); "InternalError" for a
// status without one.
std::string CodeOf(const absl::Status& status);

// A status carrying S3 error `code`.
absl::Status Error(absl::StatusCode status_code, std::string_view code, std::string_view message);

// S3's rules for a new bucket's name: 3 to 63 characters of a-z, 0-9, '.' and '-', starting and
// ending with a letter or digit, no "..", not an IPv4 address, no "xn--" prefix, no "-s3alias"
// or "--ol-s3" suffix. Empty when valid, else why not.
std::string BucketNameProblem(std::string_view name);

inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr int kMaxPartNumber = 10000;
inline constexpr uint64_t kMinPartBytes = 5 << 20;  // every part but the last (EntityTooSmall)

struct BucketInfo {
  std::string name;
  int64_t creation_ms = 0;  // when its folder was made (the file system's birth time or mtime)
};

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  int64_t last_modified_ms = 0;
  // Hex MD5 of the content, or for a multipart upload the MD5 of the parts' MD5s and "-<parts>",
  // as S3 computes them; without quotes.
  std::string etag;
  std::string content_type;  // empty when none was given (S3 then says binary/octet-stream)
  std::map<std::string, std::string> metadata;  // x-amz-meta-<name> (lower case) -> value
};

struct PutOptions {
  std::string content_type;
  std::map<std::string, std::string> metadata;
};

struct ListOptions {
  std::string prefix;
  std::string delimiter;
  // Only entries (keys and common prefixes) after this one, in byte order: a v1 marker, a v2
  // start-after or continuation.
  std::string after;
  int max_keys = 1000;
};

struct ListPage {
  std::vector<ObjectInfo> objects;           // in key order
  std::vector<std::string> common_prefixes;  // in order
  bool truncated = false;
  std::string last;  // the last key or common prefix of this page: where the next one starts
};

struct PartRef {
  int number = 0;
  std::string etag;  // as the client sent it; quotes are ignored
};

class ObjectStore {
 public:
  explicit ObjectStore(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }

  // Folders of the root whose names could be buckets, by name.
  absl::StatusOr<std::vector<BucketInfo>> ListBuckets() const;
  // BucketAlreadyOwnedByYou when it exists.
  absl::Status CreateBucket(std::string_view bucket) const;
  absl::Status HeadBucket(std::string_view bucket) const;
  // BucketNotEmpty unless it holds no object (and no upload under way).
  absl::Status DeleteBucket(std::string_view bucket) const;

  absl::StatusOr<ObjectInfo> Put(std::string_view bucket, std::string_view key,
                                 std::string_view data, const PutOptions& options) const;
  absl::StatusOr<ObjectInfo> Head(std::string_view bucket, std::string_view key) const;
  // `length` bytes from `offset` (fewer at the end). The caller checks the range against Head.
  absl::StatusOr<std::string> Read(std::string_view bucket, std::string_view key, uint64_t offset,
                                   uint64_t length) const;
  // OK when the object did not exist (S3's DeleteObject). Folders left empty go too.
  absl::Status Delete(std::string_view bucket, std::string_view key) const;
  // The object copied; with `replace`, its content type and metadata are those given, else the
  // source's.
  absl::StatusOr<ObjectInfo> Copy(std::string_view source_bucket, std::string_view source_key,
                                  std::string_view bucket, std::string_view key,
                                  const PutOptions* replace) const;
  absl::StatusOr<ListPage> List(std::string_view bucket, const ListOptions& options) const;

  // Multipart upload: start (an upload id), parts (each gets its ETag), complete or abort.
  absl::StatusOr<std::string> StartUpload(std::string_view bucket, std::string_view key,
                                          const PutOptions& options) const;
  absl::StatusOr<std::string> PutPart(std::string_view bucket, std::string_view key,
                                      std::string_view upload_id, int part_number,
                                      std::string_view data) const;
  absl::StatusOr<ObjectInfo> CompleteUpload(std::string_view bucket, std::string_view key,
                                            std::string_view upload_id,
                                            const std::vector<PartRef>& parts) const;
  absl::Status AbortUpload(std::string_view bucket, std::string_view key,
                           std::string_view upload_id) const;

 private:
  std::filesystem::path root_;
};

}  // namespace amt::s3

#endif  // AMT_ORCHESTRATOR_S3_OBJECT_STORE_H_
