// ObjectStore: the local S3 folder (amtd --s3-root, default <data-dir>/s3) seen as S3 buckets and
// objects, for the S3 REST handler of the HTTP edge (gateway/s3/s3_rest.h). The folder stays what
// training jobs read and write: s3://bucket/key is the plain file <root>/bucket/key, so data a
// client uploads is a channel's input as it is, and a job's model.tar.gz is an object to
// download. What a file cannot carry lives beside the buckets, under <root>/.amt-s3/ (a name no
// bucket can have):
//
//   .amt-s3/meta/<bucket>/<hh>/<sha>.json   ETag, Content-Type and x-amz-meta-* of an object
//                                      (<sha>: SHA-256 of the key in hex, <hh> its first two
//                                      digits; the key is inside too), valid while the file keeps
//                                      the size and mtime recorded there; a file written by a job
//                                      or by hand gets its MD5 computed on first read and
//                                      recorded. Named by a hash, so no key's record can sit
//                                      where another key's folder is, at any depth. The layout
//                                      before it, .amt-s3/meta/<bucket>/<key>.meta, is still
//                                      read when there is no new record, and removed as records
//                                      are written and objects deleted.
//   .amt-s3/uploads/<id>/              a multipart upload: its target and parts; upload.json
//                                      holds the bucket, key, content type, metadata and when
//                                      it was initiated (an upload recorded before that field
//                                      has its upload.json's mtime as its initiation)
//   .amt-s3/tmp/                       uploads being written; each object appears by rename()
//
// So a reader (a job, a listing) never sees half an object, and a write is on disk (fsync) before
// it is acknowledged; a write that fails (a full disk) leaves the object it would have replaced
// as it was. Limits of files standing for objects, refused with InvalidArgument and a message
// saying why: a key with an empty, "." or ".." segment, a segment over 255 bytes, and a key that
// is the "folder" of another (objects "a" and "a/b" cannot both exist). A key ending in "/" with
// an empty body (a console's folder marker) is a folder with a marker in .amt-s3.
//
// Symbolic links. Jobs write into the folder (a job's input channel is a link to it), so it may
// hold links a job planted. None is ever followed: every path beneath the root is resolved with
// beneath.h, so no request reads, lists, writes or deletes anything outside the root (the root
// itself may be a link; a bucket may be a mount point, not a link). A key whose path meets a link
// or a file where a folder should be is an object that is not there: NoSuchKey for GET and HEAD,
// a no-op for DELETE, and never listed (links are neither listed nor followed, so a link loop
// lists nothing of its own). A PUT (or Copy, or multipart completion) whose key needs a folder
// where the folder holds a link is refused with InvalidArgument; a PUT whose key IS a link
// replaces the link with the object (rename(2) replaces a link, it does not write through it),
// as a PUT replaces whatever was at its key in S3. A bucket folder that is a link is no bucket.
//
// DeleteBucket of a bucket with no object left aborts the bucket's multipart uploads still under
// way, parts and all, and succeeds: in S3 a bucket with uploads but no object can be deleted too,
// and its uploads cannot outlive it; here nothing of them is left on disk.
//
// Errors are absl::Status values that carry S3's error code (CodeOf): NoSuchBucket, NoSuchKey,
// NoSuchUpload, BucketNotEmpty, BucketAlreadyOwnedByYou, InvalidBucketName, KeyTooLongError,
// InvalidArgument, InvalidPart, InvalidPartOrder, EntityTooSmall, InternalError (the disk).
// Messages name keys and paths relative to the root, never where the root is.
//
// Thread-compatible: no state but the folder. Writes of one object from two threads at once end
// with one of them whole, as in S3.
#ifndef AMT_ORCHESTRATOR_S3_OBJECT_STORE_H_
#define AMT_ORCHESTRATOR_S3_OBJECT_STORE_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "orchestrator/s3/beneath.h"

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

struct UploadListOptions {
  std::string prefix;
  std::string delimiter;
  // Only uploads of keys after this one, in byte order (and common prefixes after it)...
  std::string key_marker;
  // ...and, when set with key_marker, the uploads of key_marker itself that come after this
  // upload in the listing's order. An upload id that is no longer there (completed or aborted
  // since) falls back to S3's documented rule: the uploads of key_marker whose ids are greater.
  // Ignored without key_marker, as in S3.
  std::string upload_id_marker;
  int max_uploads = 1000;  // uploads and common prefixes; S3 allows 1 to 1000
};

struct UploadInfo {
  std::string key;
  std::string upload_id;
  int64_t initiated_ms = 0;  // when StartUpload made it
};

// A page of ListUploads: uploads and common prefixes together never more than max_uploads.
struct UploadPage {
  std::vector<UploadInfo> uploads;           // by key, then by initiation, then by upload id
  std::vector<std::string> common_prefixes;  // in order
  bool truncated = false;
  // Where the next page starts: the key and upload id of the last upload of this page, or the
  // last common prefix and "" when that comes last. Empty for an empty page.
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

struct PartRef {
  int number = 0;
  std::string etag;  // as the client sent it; quotes are ignored
};

// An object open for reading: what Head says of it and a descriptor of the very file described
// (a later PUT of the key replaces the file, not what this reads), at offset 0, so a caller can
// stream it in buffers of its own. For a folder marker (an empty body) `fd` is not open.
struct ReadHandle {
  ObjectInfo info;
  Fd fd;
};

// Where a streamed PUT's bytes come from: fills up to `capacity` bytes of `buffer` and returns
// how many, 0 at the end; an error fails the PUT (and leaves the old object as it was).
using ChunkSource = std::function<absl::StatusOr<size_t>(char* buffer, size_t capacity)>;

struct ObjectStoreOptions {
  // How paths beneath the root are resolved; kWalk only to test the fallback.
  Resolution resolution = Resolution::kAuto;
  // Fault seam for tests (LevelDB's SpecialEnv, in small): when set, asked before each write(2)
  // and fsync(2) of a temporary file (an object's, a part's, a metadata record's) and before
  // its rename into place: "write", "sync", "rename"; a non-zero errno it returns fails that
  // call as if the system had (EXDEV from "rename" takes the copy-beside path).
  std::function<int(std::string_view operation)> fault;
  // The initiation time StartUpload records (not owned; outlives the store). Null: the time
  // the upload's folder was made, by the file system's clock, as every other time the store
  // gives (an object's LastModified, a bucket's CreationDate).
  const Clock* clock = nullptr;
};

class ObjectStore {
 public:
  explicit ObjectStore(std::filesystem::path root, ObjectStoreOptions options = {});

  const std::filesystem::path& root() const { return root_; }

  // Folders of the root whose names could be buckets, by name.
  absl::StatusOr<std::vector<BucketInfo>> ListBuckets() const;
  // BucketAlreadyOwnedByYou when it exists.
  absl::Status CreateBucket(std::string_view bucket) const;
  absl::Status HeadBucket(std::string_view bucket) const;
  // BucketNotEmpty unless it holds no object; its uploads under way are aborted (see above).
  absl::Status DeleteBucket(std::string_view bucket) const;

  absl::StatusOr<ObjectInfo> Put(std::string_view bucket, std::string_view key,
                                 std::string_view data, const PutOptions& options) const;
  // Put of what `source` gives, written as it comes (memory: one buffer, whatever the size).
  // InvalidArgument for a folder marker with a body.
  absl::StatusOr<ObjectInfo> PutStream(std::string_view bucket, std::string_view key,
                                       const ChunkSource& source, const PutOptions& options) const;
  absl::StatusOr<ObjectInfo> Head(std::string_view bucket, std::string_view key) const;
  // Head and a descriptor to stream the object from (ReadHandle); NoSuchKey as Head.
  absl::StatusOr<ReadHandle> OpenRead(std::string_view bucket, std::string_view key) const;
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
  // PutPart of what `source` gives, written as it comes (as PutStream).
  absl::StatusOr<std::string> PutPartStream(std::string_view bucket, std::string_view key,
                                            std::string_view upload_id, int part_number,
                                            const ChunkSource& source) const;
  absl::StatusOr<ObjectInfo> CompleteUpload(std::string_view bucket, std::string_view key,
                                            std::string_view upload_id,
                                            const std::vector<PartRef>& parts) const;
  absl::Status AbortUpload(std::string_view bucket, std::string_view key,
                           std::string_view upload_id) const;
  // S3's ListMultipartUploads: the uploads of `bucket` started and neither completed nor
  // aborted, whose keys start with options.prefix, in the order and pages UploadPage says.
  // With a delimiter, the keys holding it after the prefix are rolled up into common prefixes
  // (the prefix up to and including the delimiter), as List does. NoSuchBucket for a missing
  // bucket; InternalError when .amt-s3/uploads cannot be read. An upload whose upload.json is
  // missing or damaged is not listed (it is not there for UploadPart either).
  absl::StatusOr<UploadPage> ListUploads(std::string_view bucket,
                                         const UploadListOptions& options) const;

 private:
  std::filesystem::path root_;
  ObjectStoreOptions options_;
};

}  // namespace amt::s3

#endif  // AMT_ORCHESTRATOR_S3_OBJECT_STORE_H_
