#include "orchestrator/s3/object_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "common/crypto.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "orchestrator/s3/object_store_internal.h"

// The store's objects: PUT (whole or streamed), GET, HEAD, DELETE and Copy. Buckets are in
// buckets.cc, listing in object_listing.cc, multipart uploads in multipart.cc, metadata records
// in object_meta.cc, what they share in object_store_internal.h.
namespace amt::s3 {
using ::amt::auth::text::Cat;
using internal::BucketDir;
using internal::CheckKey;
using internal::FileStat;
using internal::FileStatOf;
using internal::ForEachBlock;
using internal::InfoOf;
using internal::Internal;
using internal::InvalidKey;
using internal::IsFolderMarker;
using internal::MeansNoObject;
using internal::Meta;
using internal::NoSuchKey;
using internal::ObjectPath;
using internal::OpenBucket;
using internal::Pump;
using internal::ReadAt;
using internal::ReadMeta;
using internal::RemoveMeta;
using internal::SplitParent;
using internal::StoreObject;
using internal::SyncDirectory;
using internal::TempFile;
using internal::Tree;
using internal::WriteMeta;

namespace {

constexpr std::string_view kCodePayload = "amt.s3.code";

}  // namespace

std::string CodeOf(const absl::Status& status) {
  if (const auto code = status.GetPayload(std::string(kCodePayload)); code.has_value()) {
    return std::string(*code);
  }
  return "InternalError";
}

absl::Status Error(absl::StatusCode status_code, std::string_view code, std::string_view message) {
  absl::Status status(status_code, std::string(message));
  status.SetPayload(std::string(kCodePayload), absl::Cord(std::string(code)));
  return status;
}

// ---- Objects --------------------------------------------------------------------------------

namespace {

// A PUT's answer when the folders above its key cannot be made (MakeDirsBeneath failed).
absl::Status ParentProblem(std::string_view bucket, std::string_view key, const Opened& failed) {
  if (failed.error == ENOTDIR) {
    return InvalidKey(key,
                      Cat("it needs \"", failed.where, "\" to be a folder, but that is an object"));
  }
  if (failed.error == ELOOP) {
    return InvalidKey(key, Cat("the folder holds a symbolic link at \"", failed.where,
                               "\", and amt-local follows none"));
  }
  return Internal("cannot create folder", Cat(bucket, "/", failed.where), failed.error);
}

// The regular file standing for `key` in the open bucket, and its size and mtime. NoSuchKey when
// its path meets a link or a file where a folder should be, or ends at anything but a file.
absl::StatusOr<std::pair<Fd, FileStat>> OpenObjectFile(const BucketDir& bucket_dir,
                                                       std::string_view bucket,
                                                       std::string_view key) {
  // O_NONBLOCK: a FIFO a job left there would block the open until a writer came.
  Opened file = bucket_dir.tree.Open(bucket_dir.dir.get(), key, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!file.ok()) {
    if (MeansNoObject(file.error)) return NoSuchKey(key);
    return Internal("cannot open", Cat(bucket, "/", key), file.error);
  }
  struct stat st {};
  if (::fstat(file.fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return NoSuchKey(key);
  return std::make_pair(std::move(file.fd), FileStatOf(st));
}

// Prunes the folders from `path` (relative to the open bucket) up to the bucket, while they are
// empty and stand for no folder marker.
void PruneEmptyFolders(const BucketDir& bucket_dir, std::string_view bucket,
                       std::string_view path) {
  const Tree& tree = bucket_dir.tree;
  const Fd meta_dir = OpenMetaDir(tree, bucket);
  while (!path.empty()) {
    if (ReadMetaIn(tree, meta_dir, Cat(path, "/")).has_value()) return;  // a marker
    const auto [parent, leaf] = SplitParent(path);
    Opened dir = tree.OpenDir(bucket_dir.dir.get(), parent);
    if (!dir.ok() || ::unlinkat(dir.fd.get(), std::string(leaf).c_str(), AT_REMOVEDIR) != 0) {
      return;
    }
    path = parent;
  }
}

// A folder marker: the folder (made as PUT makes an object's parents) and its record.
absl::Status PutMarker(const BucketDir& bucket_dir, std::string_view bucket, std::string_view key,
                       const PutOptions& options) {
  const Opened folder = MakeDirsBeneath(bucket_dir.dir.get(), ObjectPath(key));
  if (!folder.ok()) return ParentProblem(bucket, key, folder);
  Meta meta;
  meta.etag = auth::HexEncode(auth::Md5(""));
  meta.content_type = options.content_type;
  meta.metadata = options.metadata;
  return WriteMeta(bucket_dir.tree, bucket, key, meta);
}

absl::Status MarkerBodyProblem(std::string_view key) {
  return InvalidKey(key, "a key ending in '/' is a folder: its body must be empty");
}

}  // namespace

namespace internal {

// Writes object `key` of the open bucket: `fill` writes its bytes into a temporary file; the
// file and its record are synced before either is renamed into place, so a failure before the
// rename (a full disk) leaves the old object and its record as they were. `etag`: the MD5 of
// the bytes when empty.
absl::StatusOr<ObjectInfo> StoreObject(const BucketDir& bucket_dir, std::string_view bucket,
                                       std::string_view key,
                                       const std::function<absl::Status(TempFile&)>& fill,
                                       std::string etag, const PutOptions& options) {
  const Tree& tree = bucket_dir.tree;
  const auto [parent_path, leaf] = SplitParent(key);
  const Opened parent = MakeDirsBeneath(bucket_dir.dir.get(), parent_path);
  if (!parent.ok()) return ParentProblem(bucket, key, parent);
  ASSIGN_OR_RETURN(TempFile file, TempFile::Create(tree, /*hash=*/etag.empty()));
  RETURN_IF_ERROR(fill(file));
  Meta meta;
  ASSIGN_OR_RETURN(meta.stat, file.Sync());
  meta.etag = etag.empty() ? file.Md5Hex() : std::move(etag);
  meta.content_type = options.content_type;
  meta.metadata = options.metadata;
  ASSIGN_OR_RETURN(PreparedMeta record, PreparedMeta::Create(tree, bucket, key, meta));
  RETURN_IF_ERROR(file.CommitAs(parent.fd.get(), leaf, Cat(bucket, "/", key), key));
  RETURN_IF_ERROR(record.Commit());
  return InfoOf(key, meta);
}

// Copies what `source` gives into `file`, a buffer at a time, to the end.
absl::Status Pump(const ChunkSource& source, TempFile& file) {
  std::string buffer(kBlock, '\0');
  for (;;) {
    ASSIGN_OR_RETURN(const size_t n, source(buffer.data(), buffer.size()));
    if (n == 0) return absl::OkStatus();
    RETURN_IF_ERROR(file.Write(std::string_view(buffer.data(), std::min(n, buffer.size()))));
  }
}

}  // namespace internal

absl::StatusOr<ObjectInfo> ObjectStore::Put(std::string_view bucket, std::string_view key,
                                            std::string_view data,
                                            const PutOptions& options) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) {
    if (!data.empty()) return MarkerBodyProblem(key);
    RETURN_IF_ERROR(PutMarker(bucket_dir, bucket, key, options));
    return Head(bucket, key);
  }
  return StoreObject(
      bucket_dir, bucket, key, [&](TempFile& file) { return file.Write(data); }, "", options);
}

absl::StatusOr<ObjectInfo> ObjectStore::PutStream(std::string_view bucket, std::string_view key,
                                                  const ChunkSource& source,
                                                  const PutOptions& options) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) {
    char byte = 0;
    ASSIGN_OR_RETURN(const size_t n, source(&byte, 1));
    if (n != 0) return MarkerBodyProblem(key);
    RETURN_IF_ERROR(PutMarker(bucket_dir, bucket, key, options));
    return Head(bucket, key);
  }
  return StoreObject(
      bucket_dir, bucket, key, [&](TempFile& file) { return Pump(source, file); }, "", options);
}

absl::StatusOr<ReadHandle> ObjectStore::OpenRead(std::string_view bucket,
                                                 std::string_view key) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  const Tree& tree = bucket_dir.tree;
  std::optional<Meta> meta = ReadMeta(tree, bucket, key);
  ReadHandle handle;
  if (IsFolderMarker(key)) {
    const Opened folder = tree.OpenDir(bucket_dir.dir.get(), ObjectPath(key));
    if (!meta.has_value() || !folder.ok()) return NoSuchKey(key);
    meta->stat = FileStat{};
    struct stat st {};
    if (::fstat(folder.fd.get(), &st) == 0) meta->stat.mtime_ns = st.st_mtim.tv_sec * 1'000'000'000;
    handle.info = InfoOf(key, *meta);
    return handle;
  }
  ASSIGN_OR_RETURN(auto file, OpenObjectFile(bucket_dir, bucket, key));
  auto& [fd, stat] = file;
  if (!meta.has_value() || meta->stat.size != stat.size || meta->stat.mtime_ns != stat.mtime_ns) {
    // Written by a job or by hand (or changed since): compute the ETag and record it. From the
    // descriptor, so the ETag is that of the file described, whatever replaced it since.
    auth::Md5Hasher hasher;
    RETURN_IF_ERROR(ForEachBlock(fd.get(), Cat(bucket, "/", key), [&](std::string_view data) {
      hasher.Update(data);
      return absl::OkStatus();
    }));
    Meta fresh;
    fresh.stat = stat;
    fresh.etag = auth::HexEncode(hasher.Finish());
    if (meta.has_value() && meta->stat.size == stat.size) {
      fresh.content_type = meta->content_type;  // touched, not rewritten: keep what it was
      fresh.metadata = meta->metadata;
    }
    (void)WriteMeta(tree, bucket, key, fresh);  // a cache: fine to miss
    meta = std::move(fresh);
  }
  handle.info = InfoOf(key, *meta);
  handle.fd = std::move(fd);
  return handle;
}

absl::StatusOr<ObjectInfo> ObjectStore::Head(std::string_view bucket, std::string_view key) const {
  ASSIGN_OR_RETURN(ReadHandle handle, OpenRead(bucket, key));
  return std::move(handle.info);
}

absl::StatusOr<std::string> ObjectStore::Read(std::string_view bucket, std::string_view key,
                                              uint64_t offset, uint64_t length) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) {
    RETURN_IF_ERROR(Head(bucket, key).status());
    return std::string();
  }
  ASSIGN_OR_RETURN(const auto file, OpenObjectFile(bucket_dir, bucket, key));
  const uint64_t size = file.second.size;
  const uint64_t start = std::min(offset, size);
  std::string data;
  RETURN_IF_ERROR(ReadAt(file.first.get(), start, std::min(length, size - start), &data,
                         Cat(bucket, "/", key)));
  return data;
}

absl::Status ObjectStore::Delete(std::string_view bucket, std::string_view key) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  const Tree& tree = bucket_dir.tree;
  if (IsFolderMarker(key)) {
    RemoveMeta(tree, bucket, key);
    PruneEmptyFolders(bucket_dir, bucket, ObjectPath(key));
    return absl::OkStatus();
  }
  const auto [parent_path, leaf] = SplitParent(key);
  bool removed = false;
  // A path that meets a link or a file is no object: nothing to delete (and nothing outside
  // the bucket is reached). A link at the leaf is no object either, so it stays.
  if (Opened parent = tree.OpenDir(bucket_dir.dir.get(), parent_path); parent.ok()) {
    const std::string name(leaf);
    struct stat st {};
    if (::fstatat(parent.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode)) {
      if (::unlinkat(parent.fd.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
        return Internal("cannot remove", Cat(bucket, "/", key), errno);
      }
      SyncDirectory(parent.fd.get());
      removed = true;
    }
  } else if (!MeansNoObject(parent.error)) {
    return Internal("cannot open", Cat(bucket, "/", parent_path), parent.error);
  }
  RemoveMeta(tree, bucket, key);
  // Only the folders this object kept: a job's empty folders stay on a DELETE of a missing key.
  if (removed) PruneEmptyFolders(bucket_dir, bucket, parent_path);
  return absl::OkStatus();
}

absl::StatusOr<ObjectInfo> ObjectStore::Copy(std::string_view source_bucket,
                                             std::string_view source_key, std::string_view bucket,
                                             std::string_view key,
                                             const PutOptions* replace) const {
  ASSIGN_OR_RETURN(const ReadHandle source, OpenRead(source_bucket, source_key));
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (source_bucket == bucket && source_key == key && replace == nullptr) {
    return Error(absl::StatusCode::kInvalidArgument, "InvalidRequest",
                 "This copy request is illegal because it is trying to copy an object to itself "
                 "without changing the object's metadata, storage class, website redirect "
                 "location or encryption attributes.");
  }
  const PutOptions options =
      replace != nullptr ? *replace : PutOptions{source.info.content_type, source.info.metadata};
  if (IsFolderMarker(key) || IsFolderMarker(source_key)) return Put(bucket, key, "", options);
  // From the descriptor OpenRead gave: the bytes of the file Head described, even when a PUT
  // of the source replaces it meanwhile.
  return StoreObject(
      bucket_dir, bucket, key,
      [&](TempFile& file) {
        return ForEachBlock(source.fd.get(), Cat(source_bucket, "/", source_key),
                            [&](std::string_view data) { return file.Write(data); });
      },
      "", options);
}

}  // namespace amt::s3
