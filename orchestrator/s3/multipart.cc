// Multipart uploads (object_store.h): each in its folder .amt-s3/uploads/<id>, with its target
// in upload.json and its parts beside it, until CompleteUpload makes the object of them or
// AbortUpload (or DeleteBucket) removes it.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "common/crypto.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "nlohmann/json.hpp"
#include "orchestrator/s3/object_store.h"
#include "orchestrator/s3/object_store_internal.h"

namespace amt::s3 {
namespace fs = std::filesystem;
using ::amt::auth::text::Cat;
using internal::BucketDir;
using internal::CheckKey;
using internal::Dump;
using internal::ForEachBlock;
using internal::Internal;
using internal::InvalidKey;
using internal::IsFolderMarker;
using internal::JsonOf;
using internal::kAmtDir;
using internal::kLegacyMetaSuffix;
using internal::Meta;
using internal::MetaOf;
using internal::NoSuchUpload;
using internal::OpenBucket;
using internal::PrepareString;
using internal::Pump;
using internal::RandomHex;
using internal::ReadJson;
using internal::StoreObject;
using internal::TempFile;
using internal::Tree;
using internal::Unquote;
using nlohmann::json;

// ---- Multipart uploads ----------------------------------------------------------------------

namespace {

struct Upload {
  std::string bucket;
  std::string key;
  PutOptions options;
};

bool ValidUploadId(std::string_view upload_id) {
  return !upload_id.empty() && upload_id.size() <= 64 &&
         std::all_of(upload_id.begin(), upload_id.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The upload's folder, .amt-s3/uploads/<id>, when it holds the upload of `key` in `bucket`.
absl::StatusOr<std::pair<Fd, Upload>> FindUpload(const Tree& tree, std::string_view bucket,
                                                 std::string_view key, std::string_view upload_id) {
  if (!ValidUploadId(upload_id)) return NoSuchUpload(upload_id);
  Opened dir = tree.OpenAmtDir(Cat("uploads/", upload_id));
  if (!dir.ok()) return NoSuchUpload(upload_id);
  Opened record = tree.Open(dir.fd.get(), "upload.json", O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!record.ok()) return NoSuchUpload(upload_id);
  const std::optional<json> doc = ReadJson(record.fd.get());
  if (!doc.has_value()) return NoSuchUpload(upload_id);
  Upload upload;
  try {
    upload.bucket = doc->at("bucket").get<std::string>();
    upload.key = doc->at("key").get<std::string>();
    upload.options.content_type = doc->value("content_type", "");
    upload.options.metadata = doc->value("metadata", std::map<std::string, std::string>{});
  } catch (const json::exception&) {
    return NoSuchUpload(upload_id);
  }
  if (upload.bucket != bucket || upload.key != key) return NoSuchUpload(upload_id);
  return std::make_pair(std::move(dir.fd), std::move(upload));
}

std::string PartName(int number) { return Cat("part-", number); }

absl::Status RemoveUpload(const Tree& tree, std::string_view upload_id) {
  Opened uploads = tree.OpenAmtDir("uploads");
  if (!uploads.ok()) return absl::OkStatus();
  const int error = RemoveTreeBeneath(uploads.fd.get(), upload_id, tree.resolution());
  if (error != 0 && error != ENOENT) {
    return Internal("cannot remove", Cat(kAmtDir, "/uploads/", upload_id), error);
  }
  return absl::OkStatus();
}

// Milliseconds since the epoch of a file-system time.
int64_t MsOf(const struct timespec& time) {
  return static_cast<int64_t>(time.tv_sec) * 1000 + time.tv_nsec / 1'000'000;
}

// The initiation time of a new upload whose folder `dir` was just made: the injected clock's,
// else the folder's mtime. Recorded in upload.json, because the folder's mtime moves with each
// part put in it.
int64_t InitiatedMs(const Tree& tree, int dir) {
  if (const Clock* clock = tree.options().clock; clock != nullptr) {
    return static_cast<int64_t>(std::llround(clock->Now() * 1000));
  }
  struct stat st {};
  if (::fstat(dir, &st) != 0) return 0;
  return MsOf(st.st_mtim);
}

// Every upload in .amt-s3/uploads of `bucket` whose key starts with `prefix`, in no order.
absl::StatusOr<std::vector<UploadInfo>> ReadUploads(const Tree& tree, std::string_view bucket,
                                                    std::string_view prefix) {
  std::vector<UploadInfo> uploads;
  Opened dir = tree.OpenAmtDir("uploads");
  if (!dir.ok()) {
    // No upload was ever started (or the folder is not one: no upload could be found there).
    if (dir.error == ENOENT || dir.error == ENOTDIR || dir.error == ELOOP) return uploads;
    return Internal("cannot open", Cat(kAmtDir, "/uploads"), dir.error);
  }
  std::vector<DirEntry> entries;
  if (const int error = ListDirectory(dir.fd.get(), &entries); error != 0) {
    return Internal("cannot list", Cat(kAmtDir, "/uploads"), error);
  }
  for (const DirEntry& entry : entries) {
    if (entry.kind != DirEntry::Kind::kDirectory || !ValidUploadId(entry.name)) continue;
    // Missing while StartUpload writes it or AbortUpload removes it: no upload yet, or no more.
    Opened record =
        tree.Open(dir.fd.get(), Cat(entry.name, "/upload.json"), O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!record.ok()) continue;
    const std::optional<json> doc = ReadJson(record.fd.get());
    if (!doc.has_value()) continue;
    UploadInfo upload;
    upload.upload_id = entry.name;
    try {
      if (doc->at("bucket").get<std::string>() != bucket) continue;
      upload.key = doc->at("key").get<std::string>();
      if (const auto initiated = doc->find("initiated_ms"); initiated != doc->end()) {
        upload.initiated_ms = initiated->get<int64_t>();
      } else {
        // Recorded before the field: upload.json was written once, as the upload started,
        // where the folder's mtime moved with each part.
        struct stat st {};
        if (::fstat(record.fd.get(), &st) == 0) upload.initiated_ms = MsOf(st.st_mtim);
      }
    } catch (const json::exception&) {
      continue;  // damaged: FindUpload does not find it either
    }
    if (upload.key.starts_with(prefix)) uploads.push_back(std::move(upload));
  }
  return uploads;
}

}  // namespace

absl::StatusOr<std::string> ObjectStore::StartUpload(std::string_view bucket, std::string_view key,
                                                     const PutOptions& options) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) return InvalidKey(key, "a folder marker cannot be uploaded in parts");
  const Tree& tree = bucket_dir.tree;
  const std::string id = RandomHex(16);
  // The folder first, for its mtime (the initiation, without a clock); until upload.json is in
  // it, it is no upload (FindUpload and ListUploads pass it by), and it goes when upload.json
  // cannot be put there.
  ASSIGN_OR_RETURN(const Fd dir, tree.AmtDir(Cat("uploads/", id)));
  absl::Status recorded = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(TempFile record,
                     PrepareString(tree, Dump({{"bucket", bucket},
                                               {"key", key},
                                               {"content_type", options.content_type},
                                               {"metadata", options.metadata},
                                               {"initiated_ms", InitiatedMs(tree, dir.get())}})));
    return record.CommitAs(dir.get(), "upload.json", Cat(kAmtDir, "/uploads/", id), key);
  }();
  if (!recorded.ok()) {
    (void)RemoveUpload(tree, id);
    return recorded;
  }
  return id;
}

namespace {

// PutPart and PutPartStream: the part written by `fill` (and its record, part-<n>.meta, of the
// old layout's shape: the name is amt's own) in the upload's folder.
absl::StatusOr<std::string> StorePart(const fs::path& root, const ObjectStoreOptions& options,
                                      std::string_view bucket, std::string_view key,
                                      std::string_view upload_id, int part_number,
                                      const std::function<absl::Status(TempFile&)>& fill) {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root, options, bucket));
  const Tree& tree = bucket_dir.tree;
  ASSIGN_OR_RETURN(const auto upload, FindUpload(tree, bucket, key, upload_id));
  if (part_number < 1 || part_number > kMaxPartNumber) {
    return Error(
        absl::StatusCode::kInvalidArgument, "InvalidArgument",
        Cat("Part number must be an integer between 1 and ", kMaxPartNumber, ", inclusive"));
  }
  const int dir = upload.first.get();
  const std::string part = PartName(part_number);
  const std::string where = Cat(kAmtDir, "/uploads/", upload_id, "/", part);
  ASSIGN_OR_RETURN(TempFile file, TempFile::Create(tree, /*hash=*/true));
  RETURN_IF_ERROR(fill(file));
  Meta meta;
  ASSIGN_OR_RETURN(meta.stat, file.Sync());
  meta.etag = file.Md5Hex();
  ASSIGN_OR_RETURN(TempFile record, PrepareString(tree, Dump(JsonOf(meta))));
  RETURN_IF_ERROR(file.CommitAs(dir, part, where, key));
  RETURN_IF_ERROR(record.CommitAs(dir, Cat(part, kLegacyMetaSuffix), where, key));
  return meta.etag;
}

}  // namespace

absl::StatusOr<std::string> ObjectStore::PutPart(std::string_view bucket, std::string_view key,
                                                 std::string_view upload_id, int part_number,
                                                 std::string_view data) const {
  return StorePart(root_, options_, bucket, key, upload_id, part_number,
                   [&](TempFile& file) { return file.Write(data); });
}

absl::StatusOr<std::string> ObjectStore::PutPartStream(std::string_view bucket,
                                                       std::string_view key,
                                                       std::string_view upload_id, int part_number,
                                                       const ChunkSource& source) const {
  return StorePart(root_, options_, bucket, key, upload_id, part_number,
                   [&](TempFile& file) { return Pump(source, file); });
}

absl::StatusOr<ObjectInfo> ObjectStore::CompleteUpload(std::string_view bucket,
                                                       std::string_view key,
                                                       std::string_view upload_id,
                                                       const std::vector<PartRef>& parts) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  const Tree& tree = bucket_dir.tree;
  ASSIGN_OR_RETURN(const auto upload, FindUpload(tree, bucket, key, upload_id));
  const int dir = upload.first.get();
  if (parts.empty()) {
    return Error(absl::StatusCode::kInvalidArgument, "MalformedXML",
                 "The XML you provided was not well-formed or did not validate against our "
                 "published schema: a CompleteMultipartUpload needs at least one Part");
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].number <= parts[i - 1].number) {
      return Error(absl::StatusCode::kInvalidArgument, "InvalidPartOrder",
                   "The list of parts was not in ascending order. The parts list must be "
                   "specified in order by part number.");
    }
  }
  std::string digests;  // the parts' raw MD5s, for the multipart ETag
  for (size_t i = 0; i < parts.size(); ++i) {
    const PartRef& ref = parts[i];
    const std::string part = PartName(ref.number);
    std::optional<Meta> meta;
    if (Opened record = tree.Open(dir, Cat(part, kLegacyMetaSuffix), O_RDONLY | O_NONBLOCK);
        record.ok()) {
      if (const std::optional<json> doc = ReadJson(record.fd.get()); doc.has_value()) {
        meta = MetaOf(*doc);
      }
    }
    struct stat st {};
    // fstatat of one name in the upload's folder, not following a link there.
    const bool is_file =
        ::fstatat(dir, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    if (!meta.has_value() || !is_file || meta->etag != Unquote(ref.etag)) {
      return Error(absl::StatusCode::kInvalidArgument, "InvalidPart",
                   Cat("One or more of the specified parts could not be found. The part "
                       "may not have been uploaded, or the specified entity tag may not "
                       "match the part's entity tag: part ",
                       ref.number));
    }
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (i + 1 < parts.size() && size < kMinPartBytes) {
      return Error(absl::StatusCode::kInvalidArgument, "EntityTooSmall",
                   Cat("Your proposed upload is smaller than the minimum allowed object "
                       "size: part ",
                       ref.number, " has ", size, " bytes; every part but the last needs at least ",
                       kMinPartBytes));
    }
    std::string raw(16, '\0');
    for (size_t b = 0; b < 16 && 2 * b + 1 < meta->etag.size(); ++b) {
      int value = 0;
      (void)absl::SimpleHexAtoi(meta->etag.substr(2 * b, 2), &value);
      raw[b] = static_cast<char>(value);
    }
    digests += raw;
  }
  ASSIGN_OR_RETURN(
      const ObjectInfo info,
      StoreObject(
          bucket_dir, bucket, key,
          [&](TempFile& file) -> absl::Status {
            // One part open at a time: up to 10,000 parts.
            for (const PartRef& ref : parts) {
              const std::string part = PartName(ref.number);
              const std::string where = Cat(kAmtDir, "/uploads/", upload_id, "/", part);
              Opened source = tree.Open(dir, part, O_RDONLY | O_NONBLOCK);
              if (!source.ok()) return Internal("cannot open", where, source.error);
              RETURN_IF_ERROR(ForEachBlock(
                  source.fd.get(), where, [&](std::string_view data) { return file.Write(data); }));
            }
            return absl::OkStatus();
          },
          Cat(auth::HexEncode(auth::Md5(digests)), "-", parts.size()), upload.second.options));
  (void)RemoveUpload(tree, upload_id);  // the object is there: a leftover folder is only litter
  return info;
}

absl::Status ObjectStore::AbortUpload(std::string_view bucket, std::string_view key,
                                      std::string_view upload_id) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  ASSIGN_OR_RETURN(const auto upload, FindUpload(bucket_dir.tree, bucket, key, upload_id));
  (void)upload;
  return RemoveUpload(bucket_dir.tree, upload_id);
}

absl::StatusOr<UploadPage> ObjectStore::ListUploads(std::string_view bucket,
                                                    const UploadListOptions& options) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  ASSIGN_OR_RETURN(std::vector<UploadInfo> uploads,
                   ReadUploads(bucket_dir.tree, bucket, options.prefix));
  // Initiation times tie within a millisecond (and within the file system's clock tick):
  // the upload id settles the order, so that every page sees the same one.
  const auto before = [](const UploadInfo& a, const UploadInfo& b) {
    return std::tie(a.key, a.initiated_ms, a.upload_id) <
           std::tie(b.key, b.initiated_ms, b.upload_id);
  };
  std::sort(uploads.begin(), uploads.end(), before);
  const std::string& key_marker = options.key_marker;
  const std::string& id_marker = options.upload_id_marker;
  const UploadInfo* marker = nullptr;  // the upload the markers name, when it is still there
  if (!key_marker.empty() && !id_marker.empty()) {
    for (const UploadInfo& upload : uploads) {
      if (upload.key == key_marker && upload.upload_id == id_marker) marker = &upload;
    }
  }
  const auto after_markers = [&](const UploadInfo& upload) {
    if (upload.key != key_marker) return upload.key > key_marker;
    if (id_marker.empty()) return false;
    return marker != nullptr ? before(*marker, upload) : upload.upload_id > id_marker;
  };

  UploadPage page;
  const size_t max_uploads = static_cast<size_t>(std::max(0, options.max_uploads));
  size_t entries = 0;  // uploads and common prefixes on the page
  for (const UploadInfo& upload : uploads) {
    std::string_view common;  // the common prefix the key rolls up into, if any
    if (!options.delimiter.empty()) {
      const size_t at = upload.key.find(options.delimiter, options.prefix.size());
      if (at != std::string::npos) {
        common = std::string_view(upload.key).substr(0, at + options.delimiter.size());
      }
    }
    if (!common.empty()) {
      // As List: a common prefix up to the marker was on an earlier page, whole.
      if (common <= key_marker) continue;
      if (!page.common_prefixes.empty() && page.common_prefixes.back() == common) continue;
    } else if (!after_markers(upload)) {
      continue;
    }
    if (entries == max_uploads) {
      page.truncated = true;
      break;
    }
    ++entries;
    if (!common.empty()) {
      page.common_prefixes.emplace_back(common);
      page.next_key_marker = std::string(common);
      page.next_upload_id_marker.clear();
    } else {
      page.uploads.push_back(upload);
      page.next_key_marker = upload.key;
      page.next_upload_id_marker = upload.upload_id;
    }
  }
  return page;
}

namespace internal {

absl::Status AbortBucketUploads(const Tree& tree, std::string_view bucket) {
  Opened uploads = tree.OpenAmtDir("uploads");
  if (!uploads.ok()) return absl::OkStatus();
  std::vector<DirEntry> entries;
  if (const int error = ListDirectory(uploads.fd.get(), &entries); error != 0) {
    return Internal("cannot list", Cat(kAmtDir, "/uploads"), error);
  }
  for (const DirEntry& entry : entries) {
    Opened record = tree.Open(uploads.fd.get(), Cat(entry.name, "/upload.json"),
                              O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!record.ok()) continue;
    const std::optional<json> doc = ReadJson(record.fd.get());
    if (!doc.has_value() || doc->value("bucket", "") != bucket) continue;
    const int error = RemoveTreeBeneath(uploads.fd.get(), entry.name, tree.resolution());
    if (error != 0 && error != ENOENT) {
      return Internal("cannot remove", Cat(kAmtDir, "/uploads/", entry.name), error);
    }
  }
  return absl::OkStatus();
}

}  // namespace internal

}  // namespace amt::s3
