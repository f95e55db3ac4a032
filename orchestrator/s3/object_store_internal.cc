// The helpers ObjectStore's files share (object_store_internal.h): S3's errors, key checks, file
// I/O, the folder opened, and temporary files renamed into place.
#include "orchestrator/s3/object_store_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "common/text.h"
#include "nlohmann/json.hpp"

namespace amt::s3::internal {
namespace fs = std::filesystem;
using ::amt::auth::text::Cat;
using nlohmann::json;

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

std::string Dump(const json& doc) {
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

// ---- The folder, opened ---------------------------------------------------------------------

absl::StatusOr<Fd> Tree::AmtDir(std::string_view relative) const {
  const std::string path = Cat(kAmtDir, "/", relative);
  Opened dir = MakeDirsBeneath(root(), path);
  if (!dir.ok()) return Internal("cannot create folder", path, dir.error);
  return std::move(dir.fd);
}

Opened Tree::OpenAmtDir(std::string_view relative) const {
  return OpenDir(root(), Cat(kAmtDir, "/", relative));
}

absl::StatusOr<Fd> OpenRoot(const fs::path& root) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) return Fd(fd);
  if (errno == ENOENT) return Fd();
  return Internal("cannot open", "the S3 folder", errno);
}

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

// ---- Temporary files ------------------------------------------------------------------------

absl::StatusOr<TempFile> TempFile::Create(const Tree& tree, bool hash) {
  ASSIGN_OR_RETURN(Fd dir, tree.AmtDir("tmp"));
  std::string name = RandomHex(16);
  const int fd =
      ::openat(dir.get(), name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot create", Cat(kAmtDir, "/tmp/", name), errno);
  return TempFile(tree, std::move(dir), Fd(fd), std::move(name), hash);
}

TempFile::TempFile(const Tree& tree, Fd dir, Fd fd, std::string name, bool hash)
    : tree_(&tree),
      dir_(std::move(dir)),
      fd_(std::move(fd)),
      name_(std::move(name)),
      hasher_(hash ? std::make_unique<auth::Md5Hasher>() : nullptr) {}

TempFile::~TempFile() {
  if (dir_.valid()) ::unlinkat(dir_.get(), name_.c_str(), 0);
}

absl::Status TempFile::Write(std::string_view data) {
  if (hasher_ != nullptr) hasher_->Update(data);
  return WriteTo(fd_.get(), data, Where());
}

absl::StatusOr<FileStat> TempFile::Sync() {
  RETURN_IF_ERROR(SyncFile(fd_.get(), Where()));
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) return Internal("cannot stat", Where(), errno);
  stat_ = FileStatOf(st);
  return stat_;
}

std::string TempFile::Md5Hex() { return auth::HexEncode(hasher_->Finish()); }

absl::Status TempFile::CommitAs(int parent, std::string_view leaf, std::string_view name,
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

std::string TempFile::Where() const { return Cat(kAmtDir, "/tmp/", name_); }

absl::Status TempFile::WriteTo(int fd, std::string_view data, std::string_view where) const {
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

absl::Status TempFile::SyncFile(int fd, std::string_view where) const {
  int error = tree_->Fault("sync");
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  return error == 0 ? absl::OkStatus() : Internal("cannot sync", where, error);
}

absl::Status TempFile::RenameError(int error, std::string_view name, std::string_view key) {
  if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
    return Error(absl::StatusCode::kInvalidArgument, "InvalidArgument",
                 Cat("amt-local's S3 folder has a folder where this object would be "
                     "stored (another object's key begins with this key and '/'): ",
                     key));
  }
  return Internal("cannot rename to", name, error);
}

absl::Status TempFile::CopyBeside(int parent, const std::string& leaf, std::string_view name,
                                  std::string_view key) {
  // The hidden name leaves out the leaf: with it, a 255-byte leaf would be too long a name.
  const std::string hidden = Cat(kHiddenUpload, RandomHex(16));
  const std::string where = Cat(name, " (copy)");
  Fd copy(
      ::openat(parent, hidden.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!copy.valid()) return Internal("cannot create a copy for", name, errno);
  absl::Status status = ForEachBlock(
      fd_.get(), Where(), [&](std::string_view data) { return WriteTo(copy.get(), data, where); });
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

absl::StatusOr<TempFile> PrepareString(const Tree& tree, std::string_view data) {
  ASSIGN_OR_RETURN(TempFile file, TempFile::Create(tree, /*hash=*/false));
  RETURN_IF_ERROR(file.Write(data));
  RETURN_IF_ERROR(file.Sync().status());
  return file;
}

}  // namespace amt::s3::internal
