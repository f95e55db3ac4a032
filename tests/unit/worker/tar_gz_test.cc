#include "worker/tar_gz.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/worker/tar_builder.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::amt::worker::testing::TarBuilder;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Output of a shell command (GNU tar is the reference reader here).
std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(::pclose(pipe), 0) << command;
  return out;
}

class TarGzTest : public ::testing::Test {
 protected:
  ::amt::testing::TempDir temp_;
};

TEST_F(TarGzTest, GnuTarExtractsWhatWasPackedLikeTarCzf) {
  const fs::path in = temp_.path() / "model";
  Write(in / "model.json", R"({"w": [1, 2]})");
  Write(in / "empty", "");
  std::string big(1'000'003, 'x');
  for (size_t i = 0; i < big.size(); i += 997) big[i] = static_cast<char>('a' + i % 26);
  Write(in / "weights" / "big.bin", big);
  // 150 characters: a ustar prefix; a 120-character last component: a GNU long name.
  const std::string deep = std::string(60, 'd') + "/" + std::string(60, 'e') + "/" + "f.txt";
  Write(in / deep, "deep");
  const std::string longest = std::string(120, 'n') + ".txt";
  Write(in / longest, "long name");
  fs::create_directories(in / "empty-dir");
  fs::create_symlink("model.json", in / "latest");

  const fs::path archive = temp_.path() / "model.tar.gz";
  ASSERT_THAT(WriteTarGz(in, archive), IsOk());

  const fs::path out = temp_.path() / "out";
  fs::create_directories(out);
  Shell("tar -xzf " + archive.string() + " -C " + out.string());
  EXPECT_EQ(Read(out / "model.json"), R"({"w": [1, 2]})");
  EXPECT_EQ(Read(out / "empty"), "");
  EXPECT_EQ(Read(out / "weights" / "big.bin"), big);
  EXPECT_EQ(Read(out / deep), "deep");
  EXPECT_EQ(Read(out / longest), "long name");
  EXPECT_TRUE(fs::is_directory(out / "empty-dir"));
  ASSERT_TRUE(fs::is_symlink(out / "latest"));
  EXPECT_EQ(fs::read_symlink(out / "latest"), "model.json");

  // The same member names and order as `tar -czf ARCHIVE -C DIR .` lists them, sorted.
  const std::string listed = Shell("tar -tzf " + archive.string());
  EXPECT_THAT(listed, ::testing::StartsWith("./\n./" + std::string(60, 'd') + "/\n"));
  EXPECT_THAT(listed, ::testing::HasSubstr("./model.json\n"));
  EXPECT_THAT(listed, ::testing::HasSubstr("./" + longest + "\n"));
}

TEST_F(TarGzTest, ASmallFolderCompressesAboutAsWellAsGzipSixWithItsSmallerWindow) {
  // The window is sized to the archive (a tiny model folder's is 4 KiB): about as small an
  // archive as gzip -6 (a 32 KiB window) makes of the same tar stream.
  for (const size_t block : {size_t{300}, size_t{3000}, size_t{40000}}) {
    const fs::path in = temp_.path() / ("model-" + std::to_string(block));
    std::string text;  // letters that do not repeat within the block
    uint32_t state = 12345;
    for (size_t i = 0; i < block; ++i) {
      state = state * 1664525u + 1013904223u;
      text += static_cast<char>('a' + (state >> 24) % 26);
    }
    Write(in / "model.json", text);
    Write(in / "copy.json", text);  // the same bytes again, one block further on
    const fs::path archive = temp_.path() / ("m" + std::to_string(block) + ".tar.gz");
    ASSERT_THAT(WriteTarGz(in, archive), IsOk());
    EXPECT_EQ(Shell("tar -xOzf " + archive.string() + " ./model.json"), text);
    const size_t ours = fs::file_size(archive);
    const size_t gzip6 =
        std::stoul(Shell("gzip -dc " + archive.string() + " | gzip -6 -n | wc -c"));
    // Within a few bytes (the headers' mtimes vary the input; a smaller hash table may find a
    // match less): 2% and 16 bytes.
    EXPECT_LE(ours, gzip6 + gzip6 / 50 + 16) << block;
    if (block < 32768) {
      // Less than the text once (about 4.7 bits a letter) and the three headers: the copy was
      // found in the window.
      EXPECT_LT(ours, block + 200) << block;
    }
  }
}

TEST_F(TarGzTest, PacksAnEmptyFolderAsItsRootEntry) {
  const fs::path in = temp_.path() / "empty";
  fs::create_directories(in);
  const fs::path archive = temp_.path() / "e.tar.gz";
  ASSERT_THAT(WriteTarGz(in, archive), IsOk());
  EXPECT_EQ(Shell("tar -tzf " + archive.string()), "./\n");
}

TEST_F(TarGzTest, SaysWhichFolderItCannotRead) {
  const absl::Status status = WriteTarGz(temp_.path() / "missing", temp_.path() / "x.tar.gz");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInternal, ::testing::HasSubstr("missing")));
}

// Builds `archive` with Python's tarfile (the SDK's sourcedir.tar.gz writer) from a script body
// that has `tar` open for writing.
void PythonTar(const fs::path& archive, const std::string& body) {
  const std::string script =
      "import io, tarfile\n"
      "tar = tarfile.open('" +
      archive.string() +
      "', 'w:gz')\n"
      "def add(name, data=b'', kind=tarfile.REGTYPE, link=''):\n"
      "    info = tarfile.TarInfo(name); info.type = kind\n"
      "    info.linkname = link; info.size = len(data)\n"
      "    tar.addfile(info, io.BytesIO(data) if data else None)\n" +
      body + "tar.close()\n";
  const fs::path file = archive.string() + ".py";
  Write(file, script);
  Shell("python3 " + file.string());
}

TEST_F(TarGzTest, UnpacksWhatItPacks) {
  const fs::path in = temp_.path() / "src";
  Write(in / "train.py", "print('hi')\n");
  const std::string deep = std::string(120, 'd') + "/" + std::string(130, 'e') + ".txt";
  Write(in / deep, "deep");
  std::string big(300'001, 'x');
  for (size_t i = 0; i < big.size(); i += 997) big[i] = static_cast<char>('a' + i % 26);
  Write(in / "data" / "big.bin", big);
  fs::create_symlink("data/big.bin", in / "link");
  ASSERT_THAT(WriteTarGz(in, temp_.path() / "a.tar.gz"), IsOk());
  const fs::path out = temp_.path() / "out";
  ASSERT_THAT(ExtractTarGz(temp_.path() / "a.tar.gz", out), IsOk());
  EXPECT_EQ(Read(out / "train.py"), "print('hi')\n");
  EXPECT_EQ(Read(out / deep), "deep");
  EXPECT_EQ(Read(out / "data" / "big.bin"), big);
  EXPECT_EQ(fs::read_symlink(out / "link"), "data/big.bin");
}

TEST_F(TarGzTest, UnpacksPythonsPaxArchivesWithLongNamesAndModes) {
  const fs::path archive = temp_.path() / "sourcedir.tar.gz";
  const std::string long_name = std::string(200, 'p') + "/train.py";
  PythonTar(archive, "add('" + long_name +
                         "', b'print(1)')\n"
                         "add('pkg', kind=tarfile.DIRTYPE)\n"
                         "info = tarfile.TarInfo('pkg/run.sh'); info.size = 2; info.mode = 0o755\n"
                         "tar.addfile(info, io.BytesIO(b'ok'))\n");
  const fs::path out = temp_.path() / "code";
  ASSERT_THAT(ExtractTarGz(archive, out), IsOk());
  EXPECT_EQ(Read(out / long_name), "print(1)");
  EXPECT_EQ(Read(out / "pkg" / "run.sh"), "ok");
  EXPECT_NE(fs::status(out / "pkg" / "run.sh").permissions() & fs::perms::owner_exec,
            fs::perms::none);
}

TEST_F(TarGzTest, RefusesMembersThatWouldLandOutsideTheFolder) {
  const fs::path out = temp_.path() / "jail" / "code";
  struct Case {
    std::string name;
    std::string body;
  };
  for (const Case& c : {
           Case{"dotdot", "add('ok.txt', b'x')\nadd('../escaped.txt', b'x')\n"},
           Case{"absolute", "add('" + (temp_.path() / "jail" / "abs.txt").string() + "', b'x')\n"},
           Case{"through-link",
                "add('up', kind=tarfile.SYMTYPE, link='..')\n"
                "add('up/escaped.txt', b'x')\n"},
           Case{"hard-link", "add('h', kind=tarfile.LNKTYPE, link='../../secret')\n"},
       }) {
    const fs::path archive = temp_.path() / (c.name + ".tar.gz");
    PythonTar(archive, c.body);
    EXPECT_THAT(ExtractTarGz(archive, out), StatusIs(absl::StatusCode::kInvalidArgument)) << c.name;
    EXPECT_FALSE(fs::exists(temp_.path() / "jail" / "escaped.txt")) << c.name;
    EXPECT_FALSE(fs::exists(temp_.path() / "jail" / "abs.txt")) << c.name;
  }
}

TEST_F(TarGzTest, RefusesWhatIsNotATarArchive) {
  Write(temp_.path() / "not.tar.gz", std::string(2000, 'z'));
  EXPECT_THAT(ExtractTarGz(temp_.path() / "not.tar.gz", temp_.path() / "out"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("checksum")));
  EXPECT_THAT(ExtractTarGz(temp_.path() / "missing.tar.gz", temp_.path() / "out"),
              StatusIs(absl::StatusCode::kInternal));
}

TEST_F(TarGzTest, MergesSeveralFoldersTheLaterOnesFileWinning) {
  const fs::path a = temp_.path() / "a";
  const fs::path b = temp_.path() / "b";
  fs::create_directories(a / "sub");
  fs::create_directories(b / "sub");
  std::ofstream(a / "only-a.txt") << "a";
  std::ofstream(a / "sub" / "both.txt") << "from a";
  std::ofstream(b / "sub" / "both.txt") << "from b";
  std::ofstream(b / "only-b.txt") << "b";
  const fs::path archive = temp_.path() / "merged.tar.gz";
  ASSERT_TRUE(WriteTarGz(std::vector<fs::path>{a, b}, archive).ok());
  EXPECT_EQ(Shell("tar -tzf " + archive.string()),
            "./\n./only-a.txt\n./only-b.txt\n./sub/\n./sub/both.txt\n");
  const fs::path out = temp_.path() / "out";
  ASSERT_TRUE(ExtractTarGz(archive, out).ok());
  EXPECT_EQ(Shell("cat " + (out / "sub" / "both.txt").string()), "from b");
  EXPECT_EQ(WriteTarGz(std::vector<fs::path>{}, archive).code(),
            absl::StatusCode::kInvalidArgument);
}

// The permission bits of `path` itself (a link is not followed).
unsigned ModeOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Every regular file's size under `dir`, added up.
uintmax_t BytesUnder(const fs::path& dir) {
  uintmax_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && !entry.is_symlink()) total += entry.file_size();
  }
  return total;
}

TEST_F(TarGzTest, AMemberUnderASymlinkMemberIsRefusedAndNothingOutsideChanges) {
  const fs::path outside = temp_.path() / "outside";
  fs::create_directories(outside);
  fs::permissions(outside, fs::perms::owner_all, fs::perm_options::replace);
  const fs::path out = temp_.path() / "code";
  struct Case {
    std::string name;
    TarBuilder archive;
  };
  for (const Case& c : {
           Case{"folder", TarBuilder().Symlink("d", outside.string()).Dir("d/", 01777)},
           Case{"file", TarBuilder().Symlink("d", outside.string()).File("d/file", "x")},
           Case{"deeper", TarBuilder().Symlink("d", outside.string()).File("d/sub/file", "x")},
           Case{"hard-link",
                TarBuilder().Symlink("d", outside.string()).File("f", "x").HardLink("d/f", "f")},
       }) {
    fs::remove_all(out);
    const fs::path archive = temp_.path() / (c.name + ".tar.gz");
    c.archive.WriteGz(archive);
    EXPECT_THAT(
        ExtractTarGz(archive, out),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr("would be written through the symbolic link " + (out / "d").string())))
        << c.name;
    EXPECT_EQ(ModeOf(outside), 0700u) << c.name;
    EXPECT_TRUE(fs::is_empty(outside)) << c.name;
    EXPECT_EQ(fs::read_symlink(out / "d"), outside) << c.name;  // made, never followed
  }
}

TEST_F(TarGzTest, AMemberThatWouldReplaceASymlinkIsRefused) {
  const fs::path victim = temp_.path() / "outside" / "victim.txt";
  Write(victim, "original");
  const fs::path archive = temp_.path() / "replace.tar.gz";
  TarBuilder().Symlink("x", victim.string()).File("x", "overwritten").WriteGz(archive);
  const fs::path out = temp_.path() / "code";
  EXPECT_THAT(ExtractTarGz(archive, out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot unpack " + archive.string() + ": member \"x\" would replace the " +
                           "symbolic link " + (out / "x").string()));
  EXPECT_EQ(Read(victim), "original");
}

TEST_F(TarGzTest, AbsoluteAndDotDotMembersAreRefused) {
  const fs::path out = temp_.path() / "jail" / "code";
  const std::string absolute = (temp_.path() / "jail" / "abs.txt").string();
  struct Case {
    std::string member;
    TarBuilder archive;
  };
  for (const Case& c : {
           Case{absolute, TarBuilder().File(absolute, "x")},
           Case{"../escaped.txt", TarBuilder().File("ok.txt", "x").File("../escaped.txt", "x")},
           Case{"a/../../escaped.txt", TarBuilder().File("a/../../escaped.txt", "x")},
           Case{"../", TarBuilder().Dir("../", 0777)},
           Case{"../escaped.txt", TarBuilder().Symlink("../escaped.txt", "/etc/passwd")},
       }) {
    const fs::path archive = temp_.path() / "bad.tar.gz";
    c.archive.WriteGz(archive);
    EXPECT_THAT(ExtractTarGz(archive, out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "cannot unpack " + archive.string() + ": member \"" + c.member +
                             "\" would land outside " + out.string()));
    EXPECT_FALSE(fs::exists(temp_.path() / "jail" / "escaped.txt")) << c.member;
    EXPECT_FALSE(fs::exists(temp_.path() / "jail" / "abs.txt")) << c.member;
  }
  const fs::path archive = temp_.path() / "hard.tar.gz";
  TarBuilder().HardLink("h", "../../secret").WriteGz(archive);
  EXPECT_THAT(ExtractTarGz(archive, out),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hard link \"h\" points outside " + out.string())));
}

TEST_F(TarGzTest, AnArchiveExpandingPastTheCapIsRefusedHavingWrittenAtMostTheCap) {
  TarBuilder bomb;
  for (int i = 0; i < 10; ++i) bomb.File("zeros-" + std::to_string(i), std::string(16384, '\0'));
  const fs::path archive = temp_.path() / "bomb.tar.gz";
  bomb.WriteGz(archive);
  ASSERT_LT(fs::file_size(archive), 4096u);  // 160 KiB of members in a few hundred bytes
  const fs::path out = temp_.path() / "code";
  ExtractOptions options;
  options.max_bytes = 65536;
  EXPECT_THAT(ExtractTarGz(archive, out, options),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "cannot unpack " + archive.string() +
                           ": it expands past 65536 bytes (member \"zeros-4\" of 16384 bytes "
                           "after 65536 bytes of earlier members)"));
  EXPECT_EQ(BytesUnder(out), 65536u);

  // A header that promises gigabytes is refused before any of them is read or written, and the
  // caller's name for the cap is in the message.
  const fs::path promised = temp_.path() / "promised.tar.gz";
  TarBuilder().FileHeaderOnly("big.bin", uint64_t{2} << 30, "x").WriteGz(promised);
  fs::remove_all(out);
  options.max_bytes = uint64_t{1} << 30;
  options.max_bytes_name = "the VolumeSizeInGB of 1 GB";
  EXPECT_THAT(ExtractTarGz(promised, out, options),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr(": it expands past the VolumeSizeInGB of 1 GB (member "
                                 "\"big.bin\" of 2147483648 bytes")));
  EXPECT_FALSE(fs::exists(out / "big.bin"));
}

TEST_F(TarGzTest, TooManyMembersOrTooLongAPathIsRefused) {
  TarBuilder many;
  for (int i = 0; i < 5; ++i) many.File("f" + std::to_string(i), "x");
  const fs::path archive = temp_.path() / "many.tar.gz";
  many.WriteGz(archive);
  ExtractOptions options;
  options.max_members = 3;
  EXPECT_THAT(ExtractTarGz(archive, temp_.path() / "a", options),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "cannot unpack " + archive.string() + ": it has more than 3 members"));
  EXPECT_FALSE(fs::exists(temp_.path() / "a" / "f3"));

  const fs::path long_path = temp_.path() / "long.tar.gz";
  TarBuilder().File(std::string(40, 'a') + "/" + std::string(40, 'b'), "x").WriteGz(long_path);
  options = ExtractOptions();
  options.max_member_path_bytes = 64;
  EXPECT_THAT(
      ExtractTarGz(long_path, temp_.path() / "b", options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has a path of more than 64 bytes")));
}

TEST_F(TarGzTest, PackingOntoAFullDiskSaysNoSpaceLeftOnDevice) {
  // /dev/full fails every write with ENOSPC, as a full disk does.
  const fs::path src = temp_.path() / "model";
  ::amt::testing::WriteFile(src / "small.txt", "a model");
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) % 251);
  ::amt::testing::WriteFile(src / "weights.bin", big);
  const absl::Status status = WriteTarGz(src, "/dev/full");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cannot write /dev/full: No space left on device"));
}

TEST_F(TarGzTest, AFullDiskSaysNoSpaceLeftOnDeviceAndWhere) {
  const fs::path archive = temp_.path() / "src.tar.gz";
  TarBuilder().File("train.py", "print(1)\n").File("data/big.bin", "0123456789").WriteGz(archive);
  ExtractOptions options;
  int writes = 0;
  // The first file fits; the disk is full by the second.
  options.write = [&writes](int fd, const void* data, size_t size) -> ssize_t {
    if (++writes == 1) return ::write(fd, data, size);
    errno = ENOSPC;
    return -1;
  };
  const fs::path out = temp_.path() / "job" / "code";
  EXPECT_THAT(ExtractTarGz(archive, out, options),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "cannot write " + (out / "data" / "big.bin").string() +
                           ": No space left on device"));
  EXPECT_EQ(Read(out / "train.py"), "print(1)\n");
}

TEST_F(TarGzTest, UnpacksModesHardLinksAndALaterMemberOfTheSamePath) {
  const fs::path archive = temp_.path() / "src.tar.gz";
  TarBuilder()
      .Dir("bin/", 0750)
      .File("bin/run.sh", "old", 0600)
      .File("bin/run.sh", "#!/bin/sh\n", 0755)
      .HardLink("run-too.sh", "bin/run.sh")
      .Symlink("latest", "bin/run.sh")
      .WriteGz(archive);
  const fs::path out = temp_.path() / "code";
  ASSERT_THAT(ExtractTarGz(archive, out), IsOk());
  EXPECT_EQ(ModeOf(out / "bin"), 0750u);
  EXPECT_EQ(ModeOf(out / "bin" / "run.sh"), 0755u);
  EXPECT_EQ(Read(out / "bin" / "run.sh"), "#!/bin/sh\n");
  EXPECT_EQ(Read(out / "run-too.sh"), "#!/bin/sh\n");
  EXPECT_TRUE(fs::equivalent(out / "run-too.sh", out / "bin" / "run.sh"));
  EXPECT_EQ(fs::read_symlink(out / "latest"), "bin/run.sh");
}

}  // namespace
}  // namespace amt::worker
