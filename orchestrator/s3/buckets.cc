// The store's buckets: folders of the root (object_store.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "common/status_macros.h"
#include "common/text.h"
#include "orchestrator/s3/object_store.h"
#include "orchestrator/s3/object_store_internal.h"

namespace amt::s3 {
namespace fs = std::filesystem;
using ::amt::auth::text::Cat;
using internal::AbortBucketUploads;
using internal::BucketDir;
using internal::Internal;
using internal::OpenBucket;
using internal::OpenRoot;
using internal::SyncDirectory;
using internal::Tree;

std::string BucketNameProblem(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return "it must be 3 to 63 characters long";
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
      return "it may hold only lower-case letters, digits, '.' and '-'";
    }
  }
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) {
    return "it must begin and end with a letter or digit";
  }
  if (name.find("..") != std::string_view::npos) return "it may not hold two adjacent periods";
  const std::vector<std::string_view> quads = auth::text::Split(name, ".", false);
  if (quads.size() == 4 && std::all_of(quads.begin(), quads.end(), [](std::string_view q) {
        return auth::text::AllDigits(q) && q.size() <= 3 && std::stoi(std::string(q)) <= 255;
      })) {
    return "it may not be formatted as an IP address";
  }
  if (name.starts_with("xn--") || name.starts_with("sthree-")) {
    return "it may not start with \"xn--\" or \"sthree-\"";
  }
  if (name.ends_with("-s3alias") || name.ends_with("--ol-s3")) {
    return "it may not end with \"-s3alias\" or \"--ol-s3\"";
  }
  return "";
}

// ---- Buckets --------------------------------------------------------------------------------

ObjectStore::ObjectStore(fs::path root, ObjectStoreOptions options)
    : root_(std::move(root)), options_(std::move(options)) {}

absl::StatusOr<std::vector<BucketInfo>> ObjectStore::ListBuckets() const {
  std::vector<BucketInfo> buckets;
  ASSIGN_OR_RETURN(const Fd root, OpenRoot(root_));
  if (!root.valid()) return buckets;
  std::vector<DirEntry> entries;
  if (const int error = ListDirectory(root.get(), &entries); error != 0) {
    return Internal("cannot list", "the S3 folder", error);
  }
  for (const DirEntry& entry : entries) {
    if (entry.name.starts_with('.') || entry.kind != DirEntry::Kind::kDirectory) continue;
    BucketInfo bucket{entry.name, 0};
    struct statx stx {};
    if (::statx(root.get(), entry.name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_MTIME,
                &stx) == 0) {
      const statx_timestamp& t = (stx.stx_mask & STATX_BTIME) ? stx.stx_btime : stx.stx_mtime;
      bucket.creation_ms = t.tv_sec * 1000 + t.tv_nsec / 1'000'000;
    }
    buckets.push_back(std::move(bucket));
  }
  std::sort(buckets.begin(), buckets.end(),
            [](const BucketInfo& a, const BucketInfo& b) { return a.name < b.name; });
  return buckets;
}

absl::Status ObjectStore::CreateBucket(std::string_view bucket) const {
  if (const std::string problem = BucketNameProblem(bucket); !problem.empty()) {
    return Error(absl::StatusCode::kInvalidArgument, "InvalidBucketName",
                 Cat("The specified bucket is not valid: \"", bucket, "\": ", problem));
  }
  std::error_code ec;
  fs::create_directories(root_, ec);  // the root is the operator's: a link there is followed
  if (ec) return Internal("cannot create folder", "the S3 folder", ec.value());
  ASSIGN_OR_RETURN(const Fd root, OpenRoot(root_));
  if (!root.valid()) return Internal("cannot open", "the S3 folder", ENOENT);
  const std::string name(bucket);
  if (::mkdirat(root.get(), name.c_str(), 0755) != 0) {
    const int error = errno;
    struct stat st {};
    if (error == EEXIST && ::fstatat(root.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(st.st_mode)) {
      return Error(absl::StatusCode::kAlreadyExists, "BucketAlreadyOwnedByYou",
                   Cat("Your previous request to create the named bucket succeeded and "
                       "you already own it: ",
                       bucket));
    }
    return Internal("cannot create folder", bucket, error);
  }
  SyncDirectory(root.get());
  return absl::OkStatus();
}

absl::Status ObjectStore::HeadBucket(std::string_view bucket) const {
  return OpenBucket(root_, options_, bucket).status();
}

absl::Status ObjectStore::DeleteBucket(std::string_view bucket) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  const Tree& tree = bucket_dir.tree;
  ListOptions options;
  options.max_keys = 1;
  ASSIGN_OR_RETURN(const ListPage page, List(bucket, options));
  if (!page.objects.empty()) {
    return Error(absl::StatusCode::kFailedPrecondition, "BucketNotEmpty",
                 Cat("The bucket you tried to delete is not empty: ", bucket));
  }
  // Its uploads first: once the bucket is gone nothing could complete or abort them.
  RETURN_IF_ERROR(AbortBucketUploads(tree, bucket));
  // Only empty folders, links and other files that are no object are left: removed, links
  // themselves and not what they point to.
  if (const int error = RemoveTreeBeneath(tree.root(), bucket, tree.resolution()); error != 0) {
    return Internal("cannot remove", bucket, error);
  }
  if (Opened meta = tree.OpenAmtDir("meta"); meta.ok()) {
    (void)RemoveTreeBeneath(meta.fd.get(), bucket, tree.resolution());
  }
  SyncDirectory(tree.root());
  return absl::OkStatus();
}

}  // namespace amt::s3
