// Listing a bucket's keys (object_store.h): ListObjects and ListObjectsV2 walk the bucket's
// folders beneath it, following no link.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "orchestrator/s3/object_store.h"
#include "orchestrator/s3/object_store_internal.h"

namespace amt::s3 {
using internal::BucketDir;
using internal::CheckKey;
using internal::kHiddenUpload;
using internal::ObjectPath;
using internal::OpenBucket;
using internal::OpenMetaDir;
using internal::ReadMetaIn;
using internal::Tree;

// ---- Listing --------------------------------------------------------------------------------

namespace {

// Adds to `keys` every object key under the folder `start` of the open bucket (a path relative
// to it, "" for the bucket; `start_key` is its key prefix, "" or ending in '/') that could start
// with `prefix`. Links, and anything but files and folders, are neither listed nor followed, so
// a link loop ends nothing. No depth limit but the key's length: a folder whose key would be
// longer than any key is not entered. Depth first with a stack of paths, each folder reopened
// beneath the bucket when its turn comes: a few descriptors open, whatever the depth.
void Walk(const BucketDir& bucket_dir, std::string_view bucket, const std::string& start,
          std::string_view prefix, std::vector<std::string>* keys) {
  const Tree& tree = bucket_dir.tree;
  const Fd meta_dir = OpenMetaDir(tree, bucket);
  std::vector<std::string> pending{start};
  std::vector<DirEntry> entries;
  while (!pending.empty()) {
    const std::string path = std::move(pending.back());
    pending.pop_back();
    const std::string dir_key = path.empty() ? "" : path + "/";
    Opened dir = tree.OpenDir(bucket_dir.dir.get(), path);
    if (!dir.ok()) continue;  // gone or replaced meanwhile
    entries.clear();
    if (ListDirectory(dir.fd.get(), &entries) != 0) continue;
    dir.fd.reset();
    for (const DirEntry& entry : entries) {
      if (entry.name.starts_with(kHiddenUpload)) continue;
      const std::string key = dir_key + entry.name;
      if (entry.kind == DirEntry::Kind::kDirectory) {
        const std::string folder = key + "/";
        if (folder.size() > kMaxKeyBytes) continue;
        if (!folder.starts_with(prefix) && !prefix.starts_with(folder)) continue;
        if (folder.starts_with(prefix) && ReadMetaIn(tree, meta_dir, folder).has_value()) {
          keys->push_back(folder);
        }
        // Its objects' keys are at least one byte longer than the folder's.
        if (folder.size() < kMaxKeyBytes) pending.push_back(key);
      } else if (entry.kind == DirEntry::Kind::kFile && key.size() <= kMaxKeyBytes &&
                 key.starts_with(prefix)) {
        keys->push_back(key);
      }
    }
  }
}

}  // namespace

absl::StatusOr<ListPage> ObjectStore::List(std::string_view bucket,
                                           const ListOptions& options) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  ListPage page;
  // Start at the deepest folder the prefix names, when it names one that can exist.
  const std::string& prefix = options.prefix;
  const size_t slash = prefix.rfind('/');
  const std::string dir_key = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  if (!dir_key.empty() && !CheckKey(dir_key).ok()) return page;
  std::vector<std::string> keys;
  Walk(bucket_dir, bucket, std::string(ObjectPath(dir_key)), prefix, &keys);
  std::sort(keys.begin(), keys.end());

  std::vector<std::string> entries;  // keys and common prefixes, in order
  std::vector<bool> is_prefix;
  const int max_keys = std::max(0, options.max_keys);
  for (const std::string& key : keys) {
    std::string entry = key;
    bool common = false;
    if (!options.delimiter.empty()) {
      const size_t at = key.find(options.delimiter, prefix.size());
      if (at != std::string::npos) {
        entry = key.substr(0, at + options.delimiter.size());
        common = true;
      }
    }
    if (entry <= options.after) continue;
    if (common && !entries.empty() && entries.back() == entry) continue;
    if (static_cast<int>(entries.size()) == max_keys) {
      page.truncated = true;
      break;
    }
    entries.push_back(std::move(entry));
    is_prefix.push_back(common);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (is_prefix[i]) {
      page.common_prefixes.push_back(entries[i]);
      continue;
    }
    absl::StatusOr<ObjectInfo> info = Head(bucket, entries[i]);
    if (info.ok()) {
      page.objects.push_back(*std::move(info));
    } else if (CodeOf(info.status()) != "NoSuchKey") {
      return info.status();  // a disk error; one deleted meanwhile is just not listed
    }
  }
  if (!entries.empty()) page.last = entries.back();
  return page;
}

}  // namespace amt::s3
