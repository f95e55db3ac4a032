#include "orchestrator/s3/object_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
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
constexpr std::string_view kLegacyMetaSuffix = ".meta";
constexpr size_t kBlock = 1 << 20;
constexpr size_t kMaxRecordBytes = 1 << 20;  // a metadata record or upload.json; more is damage

// `where` is relative to the root ("bucket/key", ".amt-s3/tmp/..."): a message the client may
// see never says where the root is.
absl::Status Internal(std::string_view what, std::string_view where, int error) {
  return Error(absl::StatusCode::kInternal, "InternalError",
               Cat(what, " ", where, ": ", std::strerror(error)));
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

FileStat FileStatOf(const struct stat& st) {
  return FileStat{static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
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

// The path of the file (or, for a folder marker, the folder) standing for `key`, relative to
// its bucket.
std::string_view ObjectPath(std::string_view key) {
  if (IsFolderMarker(key)) key.remove_suffix(1);
  return key;
}

// "a/b/c" -> ("a/b", "c"); "c" -> ("", "c").
std::pair<std::string_view, std::string_view> SplitParent(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

// errno values of an open beneath a bucket that mean "no object there": the path meets a link,
// a file where a folder should be, or ends at something that is not a file.
bool MeansNoObject(int error) {
  return error == ENOENT || error == ENOTDIR || error == ELOOP || error == EISDIR ||
         error == ENXIO || error == ENAMETOOLONG;
}

void SyncDirectory(int dir) { ::fsync(dir); }

// pread(2) of up to `count` bytes at `offset` into `out`, fewer at the end of the file.
absl::Status ReadAt(int fd, uint64_t offset, size_t count, std::string* out,
                    std::string_view where) {
  out->resize(count);
  size_t done = 0;
  while (done < count) {
    const ssize_t n =
        ::pread(fd, out->data() + done, count - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal("cannot read", where, errno);
    if (n == 0) break;  // shrunk meanwhile
    done += static_cast<size_t>(n);
  }
  out->resize(done);
  return absl::OkStatus();
}

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
std::optional<json> ReadJson(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > kMaxRecordBytes) {
    return std::nullopt;
  }
  std::string text;
  if (!ReadAt(fd, 0, static_cast<size_t>(st.st_size), &text, "").ok()) return std::nullopt;
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  return doc;
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

// ---- The folder, opened ---------------------------------------------------------------------

namespace {

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
  absl::StatusOr<Fd> AmtDir(std::string_view relative) const {
    const std::string path = Cat(kAmtDir, "/", relative);
    Opened dir = MakeDirsBeneath(root(), path);
    if (!dir.ok()) return Internal("cannot create folder", path, dir.error);
    return std::move(dir.fd);
  }
  // .amt-s3/<relative> when it is there.
  Opened OpenAmtDir(std::string_view relative) const {
    return OpenDir(root(), Cat(kAmtDir, "/", relative));
  }
  // The fault seam's answer for `operation` (0: none).
  int Fault(std::string_view operation) const {
    return options_->fault ? options_->fault(operation) : 0;
  }
  Resolution resolution() const { return options_->resolution; }

 private:
  Fd root_;
  const ObjectStoreOptions* options_;
};

// The root opened; an invalid Fd (and OK) when there is no root folder yet.
absl::StatusOr<Fd> OpenRoot(const fs::path& root) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) return Fd(fd);
  if (errno == ENOENT) return Fd();
  return Internal("cannot open", "the S3 folder", errno);
}

// A bucket opened: the tree and the bucket's folder.
struct BucketDir {
  Tree tree;
  Fd dir;
};

absl::StatusOr<BucketDir> OpenBucket(const fs::path& root, const ObjectStoreOptions& options,
                                     std::string_view bucket) {
  RETURN_IF_ERROR(CheckBucketAccess(bucket));
  ASSIGN_OR_RETURN(Fd root_fd, OpenRoot(root));
  if (!root_fd.valid()) return NoSuchBucket(bucket);
  Tree tree(std::move(root_fd), options);
  Opened dir = tree.OpenDir(tree.root(), bucket);
  if (!dir.ok()) {
    // A link or a file by that name is no bucket.
    if (dir.error == ENOENT || dir.error == ENOTDIR || dir.error == ELOOP) {
      return NoSuchBucket(bucket);
    }
    return Internal("cannot open", bucket, dir.error);
  }
  return BucketDir{std::move(tree), std::move(dir.fd)};
}

// A file being written in .amt-s3/tmp, to be renamed into place whole (CommitAs) or removed (on
// destruction, when it was not). Every write and sync asks the tree's fault seam first.
class TempFile {
 public:
  static absl::StatusOr<TempFile> Create(const Tree& tree, bool hash) {
    ASSIGN_OR_RETURN(Fd dir, tree.AmtDir("tmp"));
    std::string name = RandomHex(16);
    const int fd =
        ::openat(dir.get(), name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return Internal("cannot create", Cat(kAmtDir, "/tmp/", name), errno);
    return TempFile(tree, std::move(dir), Fd(fd), std::move(name), hash);
  }

  TempFile(TempFile&&) = default;
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile() {
    if (dir_.valid()) ::unlinkat(dir_.get(), name_.c_str(), 0);
  }

  absl::Status Write(std::string_view data) {
    if (hasher_ != nullptr) hasher_->Update(data);
    return WriteTo(fd_.get(), data, Where());
  }

  // Syncs the content to disk (before a rename makes it visible) and says its size and mtime.
  absl::StatusOr<FileStat> Sync() {
    RETURN_IF_ERROR(SyncFile(fd_.get(), Where()));
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) return Internal("cannot stat", Where(), errno);
    stat_ = FileStatOf(st);
    return stat_;
  }

  // The hex MD5 of what was written (with `hash` only).
  std::string Md5Hex() { return auth::HexEncode(hasher_->Finish()); }

  // Renames the synced file to `leaf` in the folder `parent` (replacing a file or a link there,
  // never writing through it). Where `parent` is on another file system (a bucket that is a
  // mount point), the content is copied into a hidden file in `parent` first, given the same
  // mtime, and renamed from there: either way the name shows the old object or the new one,
  // never a part, and the recorded FileStat stays true. `name` (bucket/key) is for messages.
  absl::Status CommitAs(int parent, std::string_view leaf, std::string_view name,
                        std::string_view key) {
    const std::string target(leaf);
    int error = tree_->Fault("rename");
    if (error == 0) {
      if (::renameat(dir_.get(), name_.c_str(), parent, target.c_str()) == 0) {
        SyncDirectory(parent);
        return absl::OkStatus();
      }
      error = errno;
    }
    if (error == EXDEV) {
      RETURN_IF_ERROR(CopyBeside(parent, target, name, key));
      SyncDirectory(parent);
      return absl::OkStatus();
    }
    return RenameError(error, name, key);
  }

 private:
  TempFile(const Tree& tree, Fd dir, Fd fd, std::string name, bool hash)
      : tree_(&tree),
        dir_(std::move(dir)),
        fd_(std::move(fd)),
        name_(std::move(name)),
        hasher_(hash ? std::make_unique<auth::Md5Hasher>() : nullptr) {}

  std::string Where() const { return Cat(kAmtDir, "/tmp/", name_); }

  absl::Status WriteTo(int fd, std::string_view data, std::string_view where) const {
    while (!data.empty()) {
      if (const int error = tree_->Fault("write"); error != 0) {
        return Internal("cannot write", where, error);
      }
      const ssize_t n = ::write(fd, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return Internal("cannot write", where, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  absl::Status SyncFile(int fd, std::string_view where) const {
    int error = tree_->Fault("sync");
    if (error == 0 && ::fsync(fd) != 0) error = errno;
    return error == 0 ? absl::OkStatus() : Internal("cannot sync", where, error);
  }

  static absl::Status RenameError(int error, std::string_view name, std::string_view key) {
    if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
      return Error(absl::StatusCode::kInvalidArgument, "InvalidArgument",
                   Cat("amt-local's S3 folder has a folder where this object would be "
                       "stored (another object's key begins with this key and '/'): ",
                       key));
    }
    return Internal("cannot rename to", name, error);
  }

  absl::Status CopyBeside(int parent, const std::string& leaf, std::string_view name,
                          std::string_view key) {
    // The hidden name leaves out the leaf: with it, a 255-byte leaf would be too long a name.
    const std::string hidden = Cat(kHiddenUpload, RandomHex(16));
    const std::string where = Cat(name, " (copy)");
    Fd copy(::openat(parent, hidden.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0644));
    if (!copy.valid()) return Internal("cannot create a copy for", name, errno);
    absl::Status status = ForEachBlock(fd_.get(), Where(), [&](std::string_view data) {
      return WriteTo(copy.get(), data, where);
    });
    if (status.ok()) {
      // Before the sync, so the mtime is on disk with the content.
      const struct timespec times[2] = {
          {0, UTIME_OMIT}, {stat_.mtime_ns / 1'000'000'000, stat_.mtime_ns % 1'000'000'000}};
      ::futimens(copy.get(), times);  // best effort: a differing mtime costs an MD5 later
      status = SyncFile(copy.get(), where);
    }
    if (status.ok() && ::renameat(parent, hidden.c_str(), parent, leaf.c_str()) != 0) {
      status = RenameError(errno, name, key);
    }
    if (!status.ok()) ::unlinkat(parent, hidden.c_str(), 0);
    return status;
  }

  const Tree* tree_;
  Fd dir_;  // .amt-s3/tmp; invalid once moved from
  Fd fd_;
  std::string name_;
  FileStat stat_;
  std::unique_ptr<auth::Md5Hasher> hasher_;
};

// The content of a small file written whole, ready to CommitAs.
absl::StatusOr<TempFile> PrepareString(const Tree& tree, std::string_view data) {
  ASSIGN_OR_RETURN(TempFile file, TempFile::Create(tree, /*hash=*/false));
  RETURN_IF_ERROR(file.Write(data));
  RETURN_IF_ERROR(file.Sync().status());
  return file;
}

std::string Dump(const json& doc) {
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

// ---- Metadata records ------------------------------------------------------------------------

struct Meta {
  FileStat stat;
  std::string etag;
  std::string content_type;
  std::map<std::string, std::string> metadata;
};

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

// A record written and synced, to be put in place by Commit.
class PreparedMeta {
 public:
  static absl::StatusOr<PreparedMeta> Create(const Tree& tree, std::string_view bucket,
                                             std::string_view key, const Meta& meta) {
    json doc = JsonOf(meta);
    doc["key"] = key;
    ASSIGN_OR_RETURN(TempFile file, PrepareString(tree, Dump(doc)));
    return PreparedMeta(tree, bucket, key, std::move(file));
  }

  absl::Status Commit() {
    const MetaName name(key_);
    ASSIGN_OR_RETURN(Fd folder, tree_->AmtDir(Cat("meta/", bucket_, "/", name.folder)));
    RETURN_IF_ERROR(file_.CommitAs(folder.get(), name.file, Cat(kAmtDir, "/meta/", bucket_), key_));
    RemoveLegacyMeta(*tree_, OpenMetaDir(*tree_, bucket_), key_);
    return absl::OkStatus();
  }

 private:
  PreparedMeta(const Tree& tree, std::string_view bucket, std::string_view key, TempFile file)
      : tree_(&tree), bucket_(bucket), key_(key), file_(std::move(file)) {}

  const Tree* tree_;
  std::string bucket_;
  std::string key_;
  TempFile file_;
};

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

}  // namespace

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
  if (Opened uploads = tree.OpenAmtDir("uploads"); uploads.ok()) {
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
  }
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

// ---- Objects --------------------------------------------------------------------------------

namespace {

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

// Copies what `source` gives into `file`, a buffer at a time, to the end.
absl::Status Pump(const ChunkSource& source, TempFile& file) {
  std::string buffer(kBlock, '\0');
  for (;;) {
    ASSIGN_OR_RETURN(const size_t n, source(buffer.data(), buffer.size()));
    if (n == 0) return absl::OkStatus();
    RETURN_IF_ERROR(file.Write(std::string_view(buffer.data(), std::min(n, buffer.size()))));
  }
}

absl::Status MarkerBodyProblem(std::string_view key) {
  return InvalidKey(key, "a key ending in '/' is a folder: its body must be empty");
}

}  // namespace

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

}  // namespace

absl::StatusOr<std::string> ObjectStore::StartUpload(std::string_view bucket, std::string_view key,
                                                     const PutOptions& options) const {
  ASSIGN_OR_RETURN(const BucketDir bucket_dir, OpenBucket(root_, options_, bucket));
  RETURN_IF_ERROR(CheckKey(key));
  if (IsFolderMarker(key)) return InvalidKey(key, "a folder marker cannot be uploaded in parts");
  const Tree& tree = bucket_dir.tree;
  const std::string id = RandomHex(16);
  ASSIGN_OR_RETURN(TempFile record,
                   PrepareString(tree, Dump({{"bucket", bucket},
                                             {"key", key},
                                             {"content_type", options.content_type},
                                             {"metadata", options.metadata}})));
  ASSIGN_OR_RETURN(const Fd dir, tree.AmtDir(Cat("uploads/", id)));
  RETURN_IF_ERROR(record.CommitAs(dir.get(), "upload.json", Cat(kAmtDir, "/uploads/", id), key));
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

}  // namespace amt::s3
