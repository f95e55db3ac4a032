#include "orchestrator/s3/object_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "common/crypto.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "nlohmann/json.hpp"

namespace amt::s3 {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using ::amt::auth::text::Cat;

constexpr std::string_view kCodePayload = "amt.s3.code";
constexpr std::string_view kAmtDir = ".amt-s3";
constexpr std::string_view kHiddenUpload = ".amt-upload-";  // in-folder temp files (EXDEV)
constexpr std::string_view kMetaSuffix = ".meta";
constexpr int kMaxWalkDepth = 64;
constexpr size_t kBlock = 1 << 20;

absl::Status Internal(std::string_view what, const fs::path& path, int error) {
  return Error(absl::StatusCode::kInternal, "InternalError",
               Cat(what, " ", path.string(), ": ", std::strerror(error)));
}

absl::Status NoSuchBucket(std::string_view bucket) {
  return Error(absl::StatusCode::kNotFound, "NoSuchBucket",
               Cat("The specified bucket does not exist: ", bucket));
}

absl::Status NoSuchKey(std::string_view key) {
  return Error(absl::StatusCode::kNotFound, "NoSuchKey",
               Cat("The specified key does not exist: ", key));
}

absl::Status NoSuchUpload(std::string_view upload_id) {
  return Error(absl::StatusCode::kNotFound, "NoSuchUpload",
               Cat("The specified upload does not exist. The upload ID may be invalid, "
                   "or the upload may have been aborted or completed: ",
                   upload_id));
}

absl::Status InvalidKey(std::string_view key, std::string_view why) {
  return Error(absl::StatusCode::kInvalidArgument, "InvalidArgument",
               Cat("Key \"", key, "\" cannot be stored in amt-local's S3 folder: ", why));
}

std::string RandomHex(size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string raw(bytes, '\0');
  for (char& c : raw) c = static_cast<char>(rng() & 0xff);
  return auth::HexEncode(raw);
}

std::string Unquote(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// Size and mtime of the regular file at `path` (symbolic links followed); nullopt when there is
// no regular file there.
std::optional<FileStat> StatFile(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileStat{static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool IsDirectory(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Access checks on a bucket name from a request (creation checks BucketNameProblem): anything
// that could leave the root or reach .amt-s3 is refused.
absl::Status CheckBucketAccess(std::string_view bucket) {
  if (bucket.empty() || bucket.size() > 255 || bucket.front() == '.' ||
      bucket.find('/') != std::string_view::npos || bucket.find('\0') != std::string_view::npos) {
    return Error(absl::StatusCode::kInvalidArgument, "InvalidBucketName",
                 Cat("The specified bucket is not valid: ", bucket));
  }
  return absl::OkStatus();
}

absl::Status CheckKey(std::string_view key) {
  if (key.empty()) return InvalidKey(key, "it is empty");
  if (key.size() > kMaxKeyBytes) {
    return Error(absl::StatusCode::kInvalidArgument, "KeyTooLongError",
                 Cat("Your key is too long: ", key.size(), " bytes, at most ", kMaxKeyBytes));
  }
  if (key.find('\0') != std::string_view::npos) return InvalidKey(key, "it holds a NUL byte");
  std::string_view body = key;
  if (body.size() > 1 && body.back() == '/') body.remove_suffix(1);  // a folder marker
  for (std::string_view segment : auth::text::Split(body, "/", false)) {
    if (segment.empty() || segment == "." || segment == "..") {
      return InvalidKey(key, "a segment between slashes is empty, \".\" or \"..\"");
    }
    if (segment.size() > 255) return InvalidKey(key, "a segment is longer than 255 bytes");
    if (segment.starts_with(kHiddenUpload)) {
      return InvalidKey(key, Cat("names starting \"", kHiddenUpload, "\" are amt's own"));
    }
  }
  return absl::OkStatus();
}

bool IsFolderMarker(std::string_view key) { return key.size() > 1 && key.back() == '/'; }

absl::Status WriteAll(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal("cannot write", path, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

void SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Streams the file at `path` through `sink`, block by block.
absl::Status ReadFileInBlocks(const fs::path& path,
                              const std::function<absl::Status(std::string_view)>& sink) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot open", path, errno);
  std::string block(kBlock, '\0');
  absl::Status status;
  for (;;) {
    const ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = Internal("cannot read", path, errno);
      break;
    }
    if (n == 0) break;
    status = sink(std::string_view(block.data(), static_cast<size_t>(n)));
    if (!status.ok()) break;
  }
  ::close(fd);
  return status;
}

std::string Md5HexOfFile(const fs::path& path, absl::Status* status) {
  auth::Md5Hasher hasher;
  *status = ReadFileInBlocks(path, [&](std::string_view data) {
    hasher.Update(data);
    return absl::OkStatus();
  });
  return auth::HexEncode(hasher.Finish());
}

// Creates the folders above `file` inside `bucket_dir`, refusing when one of them is an object.
absl::Status MakeParents(const fs::path& bucket_dir, const fs::path& file, std::string_view key) {
  fs::path dir = bucket_dir;
  const fs::path relative = file.parent_path().lexically_relative(bucket_dir);
  for (const fs::path& part : relative) {
    if (part == ".") continue;
    dir /= part;
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      return InvalidKey(key, Cat("it needs \"", dir.lexically_relative(bucket_dir).string(),
                                 "\" to be a folder, but that is an object"));
    }
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return Internal("cannot create folder", dir, errno);
    }
  }
  return absl::OkStatus();
}

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

// ---- Layout ---------------------------------------------------------------------------------

namespace {

struct Layout {
  const fs::path& root;

  fs::path Bucket(std::string_view bucket) const { return root / std::string(bucket); }
  // The file (or, for a folder marker, the folder) standing for an object.
  fs::path Object(std::string_view bucket, std::string_view key) const {
    if (IsFolderMarker(key)) key.remove_suffix(1);
    return Bucket(bucket) / std::string(key);
  }
  fs::path MetaRoot(std::string_view bucket) const {
    return root / std::string(kAmtDir) / "meta" / std::string(bucket);
  }
  fs::path Meta(std::string_view bucket, std::string_view key) const {
    return MetaRoot(bucket) / Cat(key, kMetaSuffix);
  }
  fs::path Tmp() const { return root / std::string(kAmtDir) / "tmp"; }
  fs::path Upload(std::string_view id) const {
    return root / std::string(kAmtDir) / "uploads" / std::string(id);
  }
};

// Writes `dest` whole or not at all: `fill` writes the content into a temporary file, which is
// synced and renamed into place. The temporary file is in .amt-s3/tmp, or beside `dest` when
// that is another file system (a bucket folder that is a symbolic link elsewhere).
absl::Status WriteAtomically(const Layout& layout, const fs::path& dest,
                             const std::function<absl::Status(int fd, const fs::path&)>& fill) {
  std::error_code ec;
  fs::create_directories(layout.Tmp(), ec);
  if (ec) return Internal("cannot create folder", layout.Tmp(), ec.value());
  const fs::path tmp = layout.Tmp() / RandomHex(16);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot create", tmp, errno);
  absl::Status status = fill(fd, tmp);
  if (status.ok() && ::fdatasync(fd) != 0) status = Internal("cannot sync", tmp, errno);
  ::close(fd);
  if (status.ok() && ::rename(tmp.c_str(), dest.c_str()) != 0) {
    if (errno == EXDEV) {
      const fs::path beside =
          dest.parent_path() / Cat(kHiddenUpload, RandomHex(8), "-", dest.filename().string());
      fs::copy_file(tmp, beside, ec);
      if (ec) {
        status = Internal("cannot copy to", beside, ec.value());
      } else if (::rename(beside.c_str(), dest.c_str()) != 0) {
        status = Internal("cannot rename to", dest, errno);
        ::unlink(beside.c_str());
      }
    } else if (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST) {
      status = Error(absl::StatusCode::kInvalidArgument, "InvalidArgument",
                     Cat("amt-local's S3 folder has a folder where this object would be "
                         "stored (another object's key begins with this key and '/'): ",
                         dest.string()));
    } else {
      status = Internal("cannot rename to", dest, errno);
    }
  }
  ::unlink(tmp.c_str());  // gone already after a rename
  if (status.ok()) SyncDirectory(dest.parent_path());
  return status;
}

absl::Status WriteString(const Layout& layout, const fs::path& dest, std::string_view data) {
  return WriteAtomically(layout, dest,
                         [&](int fd, const fs::path& tmp) { return WriteAll(fd, data, tmp); });
}

struct Meta {
  FileStat stat;
  std::string etag;
  std::string content_type;
  std::map<std::string, std::string> metadata;
};

// The JSON object in the file at `path`; nullopt when it is missing or not a JSON object.
std::optional<json> ReadJsonFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  return doc;
}

absl::Status WriteJsonFile(const Layout& layout, const fs::path& path, const json& doc) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Internal("cannot create folder", path.parent_path(), ec.value());
  return WriteString(layout, path, doc.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::optional<Meta> ReadMeta(const fs::path& path) {
  const std::optional<json> read = ReadJsonFile(path);
  if (!read.has_value()) return std::nullopt;
  const json& doc = *read;
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

absl::Status WriteMeta(const Layout& layout, const fs::path& path, const Meta& meta) {
  return WriteJsonFile(layout, path,
                       {{"size", meta.stat.size},
                        {"mtime_ns", meta.stat.mtime_ns},
                        {"etag", meta.etag},
                        {"content_type", meta.content_type},
                        {"metadata", meta.metadata}});
}

// Removes the empty folders from `dir` up to (not including) `stop`, keeping those that stand
// for a folder marker (`is_marker`).
void PruneEmptyFolders(fs::path dir, const fs::path& stop,
                       const std::function<bool(const fs::path&)>& is_marker) {
  while (dir != stop && dir.string().size() > stop.string().size()) {
    if (is_marker(dir) || ::rmdir(dir.c_str()) != 0) return;
    dir = dir.parent_path();
  }
}

}  // namespace

// ---- Buckets --------------------------------------------------------------------------------

ObjectStore::ObjectStore(fs::path root) : root_(std::move(root)) {}

absl::StatusOr<std::vector<BucketInfo>> ObjectStore::ListBuckets() const {
  std::vector<BucketInfo> buckets;
  std::error_code ec;
  fs::directory_iterator it(root_, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return buckets;
    return Internal("cannot list", root_, ec.value());
  }
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with('.') || !entry.is_directory(ec)) continue;
    BucketInfo bucket{name, 0};
    struct statx stx {};
    if (::statx(AT_FDCWD, entry.path().c_str(), 0, STATX_BTIME | STATX_MTIME, &stx) == 0) {
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
  const fs::path dir = Layout{root_}.Bucket(bucket);
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) return Internal("cannot create folder", root_, ec.value());
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST && IsDirectory(dir)) {
      return Error(absl::StatusCode::kAlreadyExists, "BucketAlreadyOwnedByYou",
                   Cat("Your previous request to create the named bucket succeeded and "
                       "you already own it: ",
                       bucket));
    }
    return Internal("cannot create folder", dir, errno);
  }
  SyncDirectory(root_);
  return absl::OkStatus();
}

absl::Status ObjectStore::HeadBucket(std::string_view bucket) const {
  RETURN_IF_ERROR(CheckBucketAccess(bucket));
  if (!IsDirectory(Layout{root_}.Bucket(bucket))) return NoSuchBucket(bucket);
  return absl::OkStatus();
}

absl::Status ObjectStore::DeleteBucket(std::string_view bucket) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  ListOptions options;
  options.max_keys = 1;
  ASSIGN_OR_RETURN(const ListPage page, List(bucket, options));
  if (!page.objects.empty()) {
    return Error(absl::StatusCode::kFailedPrecondition, "BucketNotEmpty",
                 Cat("The bucket you tried to delete is not empty: ", bucket));
  }
  const Layout layout{root_};
  std::error_code ec;
  fs::remove_all(layout.Bucket(bucket), ec);  // empty folders only: no object is left
  if (ec) return Internal("cannot remove", layout.Bucket(bucket), ec.value());
  fs::remove_all(layout.MetaRoot(bucket), ec);
  return absl::OkStatus();
}

// ---- Objects --------------------------------------------------------------------------------

absl::StatusOr<ObjectInfo> ObjectStore::Put(std::string_view bucket, std::string_view key,
                                            std::string_view data,
                                            const PutOptions& options) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  RETURN_IF_ERROR(CheckKey(key));
  const Layout layout{root_};
  const fs::path file = layout.Object(bucket, key);
  RETURN_IF_ERROR(MakeParents(layout.Bucket(bucket), file, key));
  Meta meta;
  meta.content_type = options.content_type;
  meta.metadata = options.metadata;
  meta.etag = auth::HexEncode(auth::Md5(data));
  if (IsFolderMarker(key)) {
    if (!data.empty())
      return InvalidKey(key, "a key ending in '/' is a folder: its body must be empty");
    if (StatFile(file).has_value()) {
      return InvalidKey(key, "it needs a folder where an object is stored");
    }
    if (::mkdir(file.c_str(), 0755) != 0 && errno != EEXIST) {
      return Internal("cannot create folder", file, errno);
    }
  } else {
    RETURN_IF_ERROR(WriteString(layout, file, data));
    const std::optional<FileStat> stat = StatFile(file);
    if (!stat.has_value()) return Internal("cannot stat", file, ENOENT);
    meta.stat = *stat;
  }
  RETURN_IF_ERROR(WriteMeta(layout, layout.Meta(bucket, key), meta));
  return Head(bucket, key);
}

absl::StatusOr<ObjectInfo> ObjectStore::Head(std::string_view bucket, std::string_view key) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  RETURN_IF_ERROR(CheckKey(key));
  const Layout layout{root_};
  const fs::path file = layout.Object(bucket, key);
  std::optional<Meta> meta = ReadMeta(layout.Meta(bucket, key));
  ObjectInfo info;
  info.key = std::string(key);
  if (IsFolderMarker(key)) {
    if (!meta.has_value() || !IsDirectory(file)) return NoSuchKey(key);
    info.etag = meta->etag;
    info.content_type = meta->content_type;
    info.metadata = meta->metadata;
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) info.last_modified_ms = st.st_mtim.tv_sec * 1000;
    return info;
  }
  const std::optional<FileStat> stat = StatFile(file);
  if (!stat.has_value()) return NoSuchKey(key);
  if (!meta.has_value() || meta->stat.size != stat->size || meta->stat.mtime_ns != stat->mtime_ns) {
    // Written by a job or by hand (or changed since): compute the ETag and record it.
    absl::Status status;
    Meta fresh;
    fresh.stat = *stat;
    fresh.etag = Md5HexOfFile(file, &status);
    RETURN_IF_ERROR(status);
    if (meta.has_value() && meta->stat.size == stat->size) {
      fresh.content_type = meta->content_type;  // touched, not rewritten: keep what it was
      fresh.metadata = meta->metadata;
    }
    (void)WriteMeta(layout, layout.Meta(bucket, key), fresh);  // a cache: fine to miss
    meta = std::move(fresh);
  }
  info.size = stat->size;
  info.last_modified_ms = stat->mtime_ns / 1'000'000;
  info.etag = meta->etag;
  info.content_type = meta->content_type;
  info.metadata = meta->metadata;
  return info;
}

absl::StatusOr<std::string> ObjectStore::Read(std::string_view bucket, std::string_view key,
                                              uint64_t offset, uint64_t length) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) {
    ASSIGN_OR_RETURN(const ObjectInfo info, Head(bucket, key));
    (void)info;
    return std::string();
  }
  const fs::path file = Layout{root_}.Object(bucket, key);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR) return NoSuchKey(key);
    return Internal("cannot open", file, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return NoSuchKey(key);
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t start = std::min(offset, size);
  const uint64_t count = std::min(length, size - start);
  std::string data(count, '\0');
  size_t done = 0;
  while (done < count) {
    const ssize_t n =
        ::pread(fd, data.data() + done, count - done, static_cast<off_t>(start + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Internal("cannot read", file, error);
    }
    if (n == 0) break;  // shrunk meanwhile
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  data.resize(done);
  return data;
}

absl::Status ObjectStore::Delete(std::string_view bucket, std::string_view key) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  RETURN_IF_ERROR(CheckKey(key));
  const Layout layout{root_};
  const fs::path bucket_dir = layout.Bucket(bucket);
  const fs::path file = layout.Object(bucket, key);
  const fs::path meta = layout.Meta(bucket, key);
  const auto is_marker = [&](const fs::path& dir) {
    const std::string relative = dir.lexically_relative(bucket_dir).string();
    return StatFile(layout.Meta(bucket, relative + "/")).has_value();
  };
  if (IsFolderMarker(key)) {
    ::unlink(meta.c_str());
    PruneEmptyFolders(file, bucket_dir, is_marker);
  } else if (StatFile(file).has_value()) {
    if (::unlink(file.c_str()) != 0 && errno != ENOENT)
      return Internal("cannot remove", file, errno);
    ::unlink(meta.c_str());
    PruneEmptyFolders(file.parent_path(), bucket_dir, is_marker);
  }
  PruneEmptyFolders(meta.parent_path(), layout.MetaRoot(bucket),
                    [](const fs::path&) { return false; });
  return absl::OkStatus();
}

namespace {

// Streams `sources` into the atomically written `dest`, hashing as it goes.
absl::Status ConcatenateInto(const Layout& layout, const fs::path& dest,
                             const std::vector<fs::path>& sources, auth::Md5Hasher* hasher) {
  return WriteAtomically(layout, dest, [&](int fd, const fs::path& tmp) -> absl::Status {
    for (const fs::path& source : sources) {
      RETURN_IF_ERROR(ReadFileInBlocks(source, [&](std::string_view data) {
        if (hasher != nullptr) hasher->Update(data);
        return WriteAll(fd, data, tmp);
      }));
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<ObjectInfo> ObjectStore::Copy(std::string_view source_bucket,
                                             std::string_view source_key, std::string_view bucket,
                                             std::string_view key,
                                             const PutOptions* replace) const {
  ASSIGN_OR_RETURN(const ObjectInfo source, Head(source_bucket, source_key));
  RETURN_IF_ERROR(HeadBucket(bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (source_bucket == bucket && source_key == key && replace == nullptr) {
    return Error(absl::StatusCode::kInvalidArgument, "InvalidRequest",
                 "This copy request is illegal because it is trying to copy an object to itself "
                 "without changing the object's metadata, storage class, website redirect "
                 "location or encryption attributes.");
  }
  if (IsFolderMarker(key) || IsFolderMarker(source_key)) {
    PutOptions options =
        replace != nullptr ? *replace : PutOptions{source.content_type, source.metadata};
    return Put(bucket, key, "", options);
  }
  const Layout layout{root_};
  const fs::path file = layout.Object(bucket, key);
  RETURN_IF_ERROR(MakeParents(layout.Bucket(bucket), file, key));
  auth::Md5Hasher hasher;
  RETURN_IF_ERROR(
      ConcatenateInto(layout, file, {layout.Object(source_bucket, source_key)}, &hasher));
  Meta meta;
  meta.etag = auth::HexEncode(hasher.Finish());
  meta.content_type = replace != nullptr ? replace->content_type : source.content_type;
  meta.metadata = replace != nullptr ? replace->metadata : source.metadata;
  const std::optional<FileStat> stat = StatFile(file);
  if (!stat.has_value()) return Internal("cannot stat", file, ENOENT);
  meta.stat = *stat;
  RETURN_IF_ERROR(WriteMeta(layout, layout.Meta(bucket, key), meta));
  return Head(bucket, key);
}

// ---- Listing --------------------------------------------------------------------------------

namespace {

// Adds to `keys` every object key under `dir` (whose key prefix is `dir_key`, "" or ending in
// '/') that could start with `prefix`.
void Walk(const Layout& layout, std::string_view bucket, const fs::path& dir,
          const std::string& dir_key, std::string_view prefix, int depth,
          std::vector<std::string>* keys) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(kHiddenUpload)) continue;
    const std::string key = dir_key + name;
    if (entry.is_directory(ec)) {
      const std::string folder = key + "/";
      if (!folder.starts_with(prefix) && !prefix.starts_with(folder)) continue;
      if (StatFile(layout.Meta(bucket, folder)).has_value() && folder.starts_with(prefix)) {
        keys->push_back(folder);
      }
      if (depth < kMaxWalkDepth)
        Walk(layout, bucket, entry.path(), folder, prefix, depth + 1, keys);
    } else if (entry.is_regular_file(ec) && key.starts_with(prefix)) {
      keys->push_back(key);
    }
  }
}

}  // namespace

absl::StatusOr<ListPage> ObjectStore::List(std::string_view bucket,
                                           const ListOptions& options) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  const Layout layout{root_};
  ListPage page;
  // Start at the deepest folder the prefix names, when it names one that can exist.
  const std::string& prefix = options.prefix;
  const size_t slash = prefix.rfind('/');
  const std::string dir_key = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  if (!dir_key.empty() && !CheckKey(dir_key).ok()) return page;
  const fs::path start = dir_key.empty() ? layout.Bucket(bucket) : layout.Object(bucket, dir_key);
  std::vector<std::string> keys;
  Walk(layout, bucket, start, dir_key, prefix, 0, &keys);
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

// ---- Multipart uploads ----------------------------------------------------------------------

namespace {

struct Upload {
  std::string bucket;
  std::string key;
  PutOptions options;
};

std::optional<Upload> ReadUpload(const Layout& layout, std::string_view upload_id) {
  if (upload_id.empty() || upload_id.size() > 64 ||
      !std::all_of(upload_id.begin(), upload_id.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
    return std::nullopt;
  }
  const std::optional<json> doc = ReadJsonFile(layout.Upload(upload_id) / "upload.json");
  if (!doc.has_value()) return std::nullopt;
  Upload upload;
  try {
    upload.bucket = doc->at("bucket").get<std::string>();
    upload.key = doc->at("key").get<std::string>();
    upload.options.content_type = doc->value("content_type", "");
    upload.options.metadata = doc->value("metadata", std::map<std::string, std::string>{});
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return upload;
}

absl::StatusOr<Upload> FindUpload(const Layout& layout, std::string_view bucket,
                                  std::string_view key, std::string_view upload_id) {
  std::optional<Upload> upload = ReadUpload(layout, upload_id);
  if (!upload.has_value() || upload->bucket != bucket || upload->key != key) {
    return NoSuchUpload(upload_id);
  }
  return *std::move(upload);
}

fs::path PartFile(const Layout& layout, std::string_view upload_id, int number) {
  return layout.Upload(upload_id) / Cat("part-", number);
}

}  // namespace

absl::StatusOr<std::string> ObjectStore::StartUpload(std::string_view bucket, std::string_view key,
                                                     const PutOptions& options) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) return InvalidKey(key, "a folder marker cannot be uploaded in parts");
  const Layout layout{root_};
  const std::string id = RandomHex(16);
  RETURN_IF_ERROR(WriteJsonFile(layout, layout.Upload(id) / "upload.json",
                                {{"bucket", bucket},
                                 {"key", key},
                                 {"content_type", options.content_type},
                                 {"metadata", options.metadata}}));
  return id;
}

absl::StatusOr<std::string> ObjectStore::PutPart(std::string_view bucket, std::string_view key,
                                                 std::string_view upload_id, int part_number,
                                                 std::string_view data) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  const Layout layout{root_};
  ASSIGN_OR_RETURN(const Upload upload, FindUpload(layout, bucket, key, upload_id));
  (void)upload;
  if (part_number < 1 || part_number > kMaxPartNumber) {
    return Error(
        absl::StatusCode::kInvalidArgument, "InvalidArgument",
        Cat("Part number must be an integer between 1 and ", kMaxPartNumber, ", inclusive"));
  }
  const fs::path part = PartFile(layout, upload_id, part_number);
  RETURN_IF_ERROR(WriteString(layout, part, data));
  Meta meta;
  meta.etag = auth::HexEncode(auth::Md5(data));
  meta.stat.size = data.size();
  RETURN_IF_ERROR(WriteMeta(layout, Cat(part.string(), kMetaSuffix), meta));
  return meta.etag;
}

absl::StatusOr<ObjectInfo> ObjectStore::CompleteUpload(std::string_view bucket,
                                                       std::string_view key,
                                                       std::string_view upload_id,
                                                       const std::vector<PartRef>& parts) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  const Layout layout{root_};
  ASSIGN_OR_RETURN(const Upload upload, FindUpload(layout, bucket, key, upload_id));
  if (parts.empty()) {
    return Error(absl::StatusCode::kInvalidArgument, "MalformedXML",
                 "The XML you provided was not well-formed or did not validate against our "
                 "published schema: a CompleteMultipartUpload needs at least one Part");
  }
  std::vector<fs::path> files;
  std::string digests;  // the parts' raw MD5s, for the multipart ETag
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].number <= parts[i - 1].number) {
      return Error(absl::StatusCode::kInvalidArgument, "InvalidPartOrder",
                   "The list of parts was not in ascending order. The parts list must be "
                   "specified in order by part number.");
    }
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const PartRef& ref = parts[i];
    const fs::path file = PartFile(layout, upload_id, ref.number);
    const std::optional<Meta> meta = ReadMeta(Cat(file.string(), kMetaSuffix));
    const std::optional<FileStat> stat = StatFile(file);
    if (!meta.has_value() || !stat.has_value() || meta->etag != Unquote(ref.etag)) {
      return Error(absl::StatusCode::kInvalidArgument, "InvalidPart",
                   Cat("One or more of the specified parts could not be found. The part "
                       "may not have been uploaded, or the specified entity tag may not "
                       "match the part's entity tag: part ",
                       ref.number));
    }
    if (i + 1 < parts.size() && stat->size < kMinPartBytes) {
      return Error(absl::StatusCode::kInvalidArgument, "EntityTooSmall",
                   Cat("Your proposed upload is smaller than the minimum allowed object "
                       "size: part ",
                       ref.number, " has ", stat->size,
                       " bytes; every part but the last needs at least ", kMinPartBytes));
    }
    files.push_back(file);
    std::string raw(16, '\0');
    for (size_t b = 0; b < 16 && 2 * b + 1 < meta->etag.size(); ++b) {
      int value = 0;
      (void)absl::SimpleHexAtoi(meta->etag.substr(2 * b, 2), &value);
      raw[b] = static_cast<char>(value);
    }
    digests += raw;
  }
  const fs::path dest = layout.Object(bucket, key);
  RETURN_IF_ERROR(MakeParents(layout.Bucket(bucket), dest, key));
  RETURN_IF_ERROR(ConcatenateInto(layout, dest, files, nullptr));
  Meta meta;
  meta.etag = Cat(auth::HexEncode(auth::Md5(digests)), "-", parts.size());
  meta.content_type = upload.options.content_type;
  meta.metadata = upload.options.metadata;
  const std::optional<FileStat> stat = StatFile(dest);
  if (!stat.has_value()) return Internal("cannot stat", dest, ENOENT);
  meta.stat = *stat;
  RETURN_IF_ERROR(WriteMeta(layout, layout.Meta(bucket, key), meta));
  std::error_code ec;
  fs::remove_all(layout.Upload(upload_id), ec);
  return Head(bucket, key);
}

absl::Status ObjectStore::AbortUpload(std::string_view bucket, std::string_view key,
                                      std::string_view upload_id) const {
  RETURN_IF_ERROR(HeadBucket(bucket));
  const Layout layout{root_};
  ASSIGN_OR_RETURN(const Upload upload, FindUpload(layout, bucket, key, upload_id));
  (void)upload;
  std::error_code ec;
  fs::remove_all(layout.Upload(upload_id), ec);
  if (ec) return Internal("cannot remove", layout.Upload(upload_id), ec.value());
  return absl::OkStatus();
}

}  // namespace amt::s3
