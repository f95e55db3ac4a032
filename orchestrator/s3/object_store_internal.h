// What the files of ObjectStore (object_store.h) share, and nothing outside amt_s3 includes: S3's
// errors as the store makes them, key checks, small file I/O, one call's hold on the folder
// (Tree, BucketDir), temporary files renamed into place whole (TempFile), the metadata records of
// .amt-s3/meta (object_meta.cc), the object write path (StoreObject) multipart completion shares,
// and the abort of a deleted bucket's uploads (multipart.cc). Same threading as ObjectStore.
//
// The store's files: object_store_internal.cc (these helpers, the folder opened, temporary
// files), object_meta.cc (metadata records), buckets.cc (buckets), object_store.cc (objects),
// object_listing.cc (listing keys), multipart.cc (multipart uploads).
#ifndef AMT_ORCHESTRATOR_S3_OBJECT_STORE_INTERNAL_H_
#define AMT_ORCHESTRATOR_S3_OBJECT_STORE_INTERNAL_H_

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto.h"
#include "common/status_macros.h"
#include "nlohmann/json_fwd.hpp"
#include "orchestrator/s3/beneath.h"
#include "orchestrator/s3/object_store.h"

namespace amt::s3::internal {

inline constexpr std::string_view kAmtDir = ".amt-s3";
inline constexpr std::string_view kHiddenUpload = ".amt-upload-";  // in-folder temp files (EXDEV)
inline constexpr std::string_view kLegacyMetaSuffix = ".meta";
inline constexpr size_t kBlock = 1 << 20;
// A metadata record or upload.json; more is damage.
inline constexpr size_t kMaxRecordBytes = 1 << 20;

// `where` is relative to the root ("bucket/key", ".amt-s3/tmp/..."): a message the client may
// see never says where the root is.
absl::Status Internal(std::string_view what, std::string_view where, int error);
absl::Status NoSuchBucket(std::string_view bucket);
absl::Status NoSuchKey(std::string_view key);
absl::Status NoSuchUpload(std::string_view upload_id);
absl::Status InvalidKey(std::string_view key, std::string_view why);

std::string RandomHex(size_t bytes);
std::string Unquote(std::string_view etag);

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

FileStat FileStatOf(const struct stat& st);

// Access checks on a bucket name from a request (creation checks BucketNameProblem): anything
// that could leave the root or reach .amt-s3 is refused.
absl::Status CheckBucketAccess(std::string_view bucket);
absl::Status CheckKey(std::string_view key);
bool IsFolderMarker(std::string_view key);
// The path of the file (or, for a folder marker, the folder) standing for `key`, relative to
// its bucket.
std::string_view ObjectPath(std::string_view key);
// "a/b/c" -> ("a/b", "c"); "c" -> ("", "c").
std::pair<std::string_view, std::string_view> SplitParent(std::string_view path);
// errno values of an open beneath a bucket that mean "no object there": the path meets a link,
// a file where a folder should be, or ends at something that is not a file.
bool MeansNoObject(int error);
void SyncDirectory(int dir);

// pread(2) of up to `count` bytes at `offset` into `out`, fewer at the end of the file.
absl::Status ReadAt(int fd, uint64_t offset, size_t count, std::string* out,
                    std::string_view where);

// Calls `sink` with the content of `fd`, block by block from offset 0 (pread: the descriptor's
// own position is left alone).
template <typename Sink>
absl::Status ForEachBlock(int fd, std::string_view where, Sink sink) {
  std::string block;
  for (uint64_t offset = 0;; offset += block.size()) {
    RETURN_IF_ERROR(ReadAt(fd, offset, kBlock, &block, where));
    if (block.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(sink(std::string_view(block)));
  }
}

// The JSON object in the small file `fd`; nullopt when it is not one (or is too big to be ours).
std::optional<nlohmann::json> ReadJson(int fd);

std::string Dump(const nlohmann::json& doc);

// ---- The folder, opened ---------------------------------------------------------------------

// One call's hold on the folder: the root opened once, and every other path opened beneath it
// (beneath.h), so what the call reaches stays inside the root whatever links jobs planted.
class Tree {
 public:
  Tree(Fd root, const ObjectStoreOptions& options) : root_(std::move(root)), options_(&options) {}

  int root() const { return root_.get(); }

  Opened Open(int dir, std::string_view relative, int flags) const {
    return OpenBeneath(dir, relative, flags, options_->resolution);
  }
  Opened OpenDir(int dir, std::string_view relative) const {
    return OpenDirBeneath(dir, relative, options_->resolution);
  }
  // .amt-s3/<relative>, created when missing.
  absl::StatusOr<Fd> AmtDir(std::string_view relative) const;
  // .amt-s3/<relative> when it is there.
  Opened OpenAmtDir(std::string_view relative) const;
  // The fault seam's answer for `operation` (0: none).
  int Fault(std::string_view operation) const {
    return options_->fault ? options_->fault(operation) : 0;
  }
  Resolution resolution() const { return options_->resolution; }
  const ObjectStoreOptions& options() const { return *options_; }

 private:
  Fd root_;
  const ObjectStoreOptions* options_;
};

// The root opened; an invalid Fd (and OK) when there is no root folder yet.
absl::StatusOr<Fd> OpenRoot(const std::filesystem::path& root);

// A bucket opened: the tree and the bucket's folder.
struct BucketDir {
  Tree tree;
  Fd dir;
};

absl::StatusOr<BucketDir> OpenBucket(const std::filesystem::path& root,
                                     const ObjectStoreOptions& options, std::string_view bucket);

// A file being written in .amt-s3/tmp, to be renamed into place whole (CommitAs) or removed (on
// destruction, when it was not). Every write and sync asks the tree's fault seam first.
class TempFile {
 public:
  static absl::StatusOr<TempFile> Create(const Tree& tree, bool hash);

  TempFile(TempFile&&) = default;
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile();

  absl::Status Write(std::string_view data);

  // Syncs the content to disk (before a rename makes it visible) and says its size and mtime.
  absl::StatusOr<FileStat> Sync();

  // The hex MD5 of what was written (with `hash` only).
  std::string Md5Hex();

  // Renames the synced file to `leaf` in the folder `parent` (replacing a file or a link there,
  // never writing through it). Where `parent` is on another file system (a bucket that is a
  // mount point), the content is copied into a hidden file in `parent` first, given the same
  // mtime, and renamed from there: either way the name shows the old object or the new one,
  // never a part, and the recorded FileStat stays true. `name` (bucket/key) is for messages.
  absl::Status CommitAs(int parent, std::string_view leaf, std::string_view name,
                        std::string_view key);

 private:
  TempFile(const Tree& tree, Fd dir, Fd fd, std::string name, bool hash);

  std::string Where() const;
  absl::Status WriteTo(int fd, std::string_view data, std::string_view where) const;
  absl::Status SyncFile(int fd, std::string_view where) const;
  static absl::Status RenameError(int error, std::string_view name, std::string_view key);
  absl::Status CopyBeside(int parent, const std::string& leaf, std::string_view name,
                          std::string_view key);

  const Tree* tree_;
  Fd dir_;  // .amt-s3/tmp; invalid once moved from
  Fd fd_;
  std::string name_;
  FileStat stat_;
  std::unique_ptr<auth::Md5Hasher> hasher_;
};

// The content of a small file written whole, ready to CommitAs.
absl::StatusOr<TempFile> PrepareString(const Tree& tree, std::string_view data);

// Copies what `source` gives into `file`, a buffer at a time, to the end.
absl::Status Pump(const ChunkSource& source, TempFile& file);

// ---- Metadata records (object_meta.cc) ------------------------------------------------------

struct Meta {
  FileStat stat;
  std::string etag;
  std::string content_type;
  std::map<std::string, std::string> metadata;
};

std::optional<Meta> MetaOf(const nlohmann::json& doc);
nlohmann::json JsonOf(const Meta& meta);

// The record of `key` in the open folder .amt-s3/meta/<bucket> (`meta_dir`, invalid when there
// is none): the new layout's, else the old layout's.
std::optional<Meta> ReadMetaIn(const Tree& tree, const Fd& meta_dir, std::string_view key);
Fd OpenMetaDir(const Tree& tree, std::string_view bucket);
std::optional<Meta> ReadMeta(const Tree& tree, std::string_view bucket, std::string_view key);

// A record written and synced, to be put in place by Commit.
class PreparedMeta {
 public:
  static absl::StatusOr<PreparedMeta> Create(const Tree& tree, std::string_view bucket,
                                             std::string_view key, const Meta& meta);

  absl::Status Commit();

 private:
  PreparedMeta(const Tree& tree, std::string_view bucket, std::string_view key, TempFile file)
      : tree_(&tree), bucket_(bucket), key_(key), file_(std::move(file)) {}

  const Tree* tree_;
  std::string bucket_;
  std::string key_;
  TempFile file_;
};

absl::Status WriteMeta(const Tree& tree, std::string_view bucket, std::string_view key,
                       const Meta& meta);
// Removes both layouts' records of `key`.
void RemoveMeta(const Tree& tree, std::string_view bucket, std::string_view key);
ObjectInfo InfoOf(std::string_view key, const Meta& meta);

// ---- Objects (object_store.cc) --------------------------------------------------------------

// Writes object `key` of the open bucket: `fill` writes its bytes into a temporary file; the
// file and its record are synced before either is renamed into place, so a failure before the
// rename (a full disk) leaves the old object and its record as they were. `etag`: the MD5 of
// the bytes when empty.
absl::StatusOr<ObjectInfo> StoreObject(const BucketDir& bucket_dir, std::string_view bucket,
                                       std::string_view key,
                                       const std::function<absl::Status(TempFile&)>& fill,
                                       std::string etag, const PutOptions& options);

// ---- Multipart uploads (multipart.cc) -------------------------------------------------------

// Removes every upload of `bucket` in .amt-s3/uploads, parts and all (DeleteBucket).
absl::Status AbortBucketUploads(const Tree& tree, std::string_view bucket);

}  // namespace amt::s3::internal

#endif  // AMT_ORCHESTRATOR_S3_OBJECT_STORE_INTERNAL_H_
