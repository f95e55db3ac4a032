// The tests' one temp-dir helper, and the small file helpers that go with it.
//
// Every test folder lives under GoogleTest's temp dir (::testing::TempDir(): $TEST_TMPDIR, else
// $TMPDIR, else /tmp) and is removed with everything in it when its TempDir is destroyed, so a
// test leaves nothing behind: scripts/test.sh runs the suite with TMPDIR set to a fresh folder
// and fails when anything is left in it. Names are short (PREFIX-XXXXXX): amtd puts its worker
// socket in the folder, and a unix socket's path has at most 107 bytes.
#ifndef AMT_TESTS_SUPPORT_TEMP_DIR_H_
#define AMT_TESTS_SUPPORT_TEMP_DIR_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>

namespace amt::testing {

class TempDir {
 public:
  // Creates <temp dir>/PREFIX-XXXXXX; a failure to create it fails the test where it happens.
  explicit TempDir(std::string_view prefix = "amt-test") {
    std::string base = ::testing::TempDir();
    if (!base.empty() && base.back() != '/') base += '/';
    std::string pattern = base + std::string(prefix) + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp(" << pattern << ") failed";
      return;
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // A path inside the folder.
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The bytes of `path` ("" when it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes `content` to `path`, creating its parent folders.
inline void WriteFile(const std::filesystem::path& path, std::string_view content) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

}  // namespace amt::testing

#endif  // AMT_TESTS_SUPPORT_TEMP_DIR_H_
