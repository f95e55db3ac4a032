// The metadata records of objects in .amt-s3/meta (object_store.h): ETag, Content-Type and
// x-amz-meta-* of each object, in the layout named by the key's SHA-256, and the old layout's
// records read and removed.
#include <fcntl.h>
#include <unistd.h>

#include "common/crypto.h"
#include "common/text.h"
#include "nlohmann/json.hpp"
#include "orchestrator/s3/object_store_internal.h"

namespace amt::s3::internal {
using ::amt::auth::text::Cat;
using nlohmann::json;

namespace {

// Where the record of `key` is in .amt-s3/meta/<bucket>/: a folder and a name, from the key's
// SHA-256, so that no key's record is where another key's folder is.
struct MetaName {
  std::string folder;  // two hex digits: 256 folders at most per bucket
  std::string file;

  explicit MetaName(std::string_view key) {
    const std::string sha = auth::Sha256Hex(key);
    folder = sha.substr(0, 2);
    file = Cat(sha, ".json");
  }
  std::string Path() const { return Cat(folder, "/", file); }
};

std::string LegacyMetaPath(std::string_view key) { return Cat(key, kLegacyMetaSuffix); }

// Removes the old layout's record of `key`, and the folders it leaves empty.
void RemoveLegacyMeta(const Tree& tree, const Fd& meta_dir, std::string_view key) {
  std::string path = LegacyMetaPath(key);
  auto [parent, leaf] = SplitParent(path);
  Opened dir = tree.OpenDir(meta_dir.get(), parent);
  if (!dir.ok() || ::unlinkat(dir.fd.get(), std::string(leaf).c_str(), 0) != 0) return;
  while (!parent.empty()) {
    const auto [up, name] = SplitParent(parent);
    Opened up_dir = tree.OpenDir(meta_dir.get(), up);
    if (!up_dir.ok() || ::unlinkat(up_dir.fd.get(), std::string(name).c_str(), AT_REMOVEDIR) != 0)
      return;
    parent = up;
  }
}

}  // namespace

std::optional<Meta> MetaOf(const json& doc) {
  Meta meta;
  try {
    meta.stat.size = doc.at("size").get<uint64_t>();
    meta.stat.mtime_ns = doc.at("mtime_ns").get<int64_t>();
    meta.etag = doc.at("etag").get<std::string>();
    meta.content_type = doc.value("content_type", "");
    meta.metadata = doc.value("metadata", std::map<std::string, std::string>{});
  } catch (const json::exception&) {
    return std::nullopt;  // not ours, or damaged: the ETag is computed again
  }
  return meta;
}

json JsonOf(const Meta& meta) {
  return {{"size", meta.stat.size},
          {"mtime_ns", meta.stat.mtime_ns},
          {"etag", meta.etag},
          {"content_type", meta.content_type},
          {"metadata", meta.metadata}};
}

// The record of `key` in the open folder .amt-s3/meta/<bucket> (`meta_dir`, invalid when there
// is none): the new layout's, else the old layout's.
std::optional<Meta> ReadMetaIn(const Tree& tree, const Fd& meta_dir, std::string_view key) {
  if (!meta_dir.valid()) return std::nullopt;
  const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
  if (Opened file = tree.Open(meta_dir.get(), MetaName(key).Path(), flags); file.ok()) {
    const std::optional<json> doc = ReadJson(file.fd.get());
    if (doc.has_value() && doc->value("key", "") == key) return MetaOf(*doc);
    return std::nullopt;
  }
  if (Opened file = tree.Open(meta_dir.get(), LegacyMetaPath(key), flags); file.ok()) {
    if (const std::optional<json> doc = ReadJson(file.fd.get()); doc.has_value()) {
      return MetaOf(*doc);
    }
  }
  return std::nullopt;
}

Fd OpenMetaDir(const Tree& tree, std::string_view bucket) {
  return std::move(tree.OpenAmtDir(Cat("meta/", bucket)).fd);
}

std::optional<Meta> ReadMeta(const Tree& tree, std::string_view bucket, std::string_view key) {
  return ReadMetaIn(tree, OpenMetaDir(tree, bucket), key);
}

absl::StatusOr<PreparedMeta> PreparedMeta::Create(const Tree& tree, std::string_view bucket,
                                                  std::string_view key, const Meta& meta) {
  json doc = JsonOf(meta);
  doc["key"] = key;
  ASSIGN_OR_RETURN(TempFile file, PrepareString(tree, Dump(doc)));
  return PreparedMeta(tree, bucket, key, std::move(file));
}

absl::Status PreparedMeta::Commit() {
  const MetaName name(key_);
  ASSIGN_OR_RETURN(Fd folder, tree_->AmtDir(Cat("meta/", bucket_, "/", name.folder)));
  RETURN_IF_ERROR(file_.CommitAs(folder.get(), name.file, Cat(kAmtDir, "/meta/", bucket_), key_));
  RemoveLegacyMeta(*tree_, OpenMetaDir(*tree_, bucket_), key_);
  return absl::OkStatus();
}

absl::Status WriteMeta(const Tree& tree, std::string_view bucket, std::string_view key,
                       const Meta& meta) {
  ASSIGN_OR_RETURN(PreparedMeta record, PreparedMeta::Create(tree, bucket, key, meta));
  return record.Commit();
}

// Removes both layouts' records of `key`.
void RemoveMeta(const Tree& tree, std::string_view bucket, std::string_view key) {
  const Fd meta_dir = OpenMetaDir(tree, bucket);
  if (!meta_dir.valid()) return;
  const MetaName name(key);
  if (Opened folder = tree.OpenDir(meta_dir.get(), name.folder); folder.ok()) {
    ::unlinkat(folder.fd.get(), name.file.c_str(), 0);
    folder.fd.reset();
    ::unlinkat(meta_dir.get(), name.folder.c_str(), AT_REMOVEDIR);  // when left empty
  }
  RemoveLegacyMeta(tree, meta_dir, key);
}

ObjectInfo InfoOf(std::string_view key, const Meta& meta) {
  ObjectInfo info;
  info.key = std::string(key);
  info.size = meta.stat.size;
  info.last_modified_ms = meta.stat.mtime_ns / 1'000'000;
  info.etag = meta.etag;
  info.content_type = meta.content_type;
  info.metadata = meta.metadata;
  return info;
}

}  // namespace amt::s3::internal
