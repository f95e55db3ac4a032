// Edges a training job can push amtd to, end to end (issue 32): real amtd, real amt-worker, real
// trainers, real HTTP on loopback.
//  - Links a job plants in amtd's S3 folder through its input channel (a link loop, links out of
//    the folder) are objects that are not there for S3's API: not listed, not read, not written
//    or deleted through.
//  - On a small tmpfs as amtd's data dir (the local worker's job folders on it too): a
//    sourcedir.tar.gz that unpacks past the job's VolumeSizeInGB fails the job with a
//    ClientError that says so, writing nothing; a trainer that fills the disk fails with "No space
//    left on device", and amtd carries on by itself: the next job runs and completes.
// Waiting is on events: watch streams, amtd's own log lines (read from its stderr as it writes
// them), never the clock.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"
#include "tests/unit/worker/tar_builder.h"

namespace amt::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

struct Reply {
  int status = 0;
  std::string body;
};

// One HTTP/1.1 connection to amtd's S3 REST API (path-style, unsigned: amtd has no
// --credentials). Every request must be answered within 30 s, or the test fails: a listing that
// followed a link loop would never end.
class S3Client {
 public:
  explicit S3Client(const std::string& http_endpoint) : stream_(io_) {
    const std::string hostport = http_endpoint.substr(std::string("http://").size());
    const size_t colon = hostport.rfind(':');
    asio::ip::tcp::resolver resolver(io_);
    stream_.connect(resolver.resolve(hostport.substr(0, colon), hostport.substr(colon + 1)));
  }

  Reply Send(http::verb verb, const std::string& target, const std::string& body = "") {
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "localhost");
    request.body() = body;
    request.prepare_payload();
    stream_.expires_after(std::chrono::seconds(30));
    beast::error_code ec;
    http::write(stream_, request, ec);
    http::response<http::string_body> response;
    if (!ec) http::read(stream_, buffer_, response, ec);
    if (ec) {
      ADD_FAILURE() << http::to_string(verb) << " " << target << ": " << ec.message();
      return {};
    }
    return {static_cast<int>(response.result_int()), response.body()};
  }

 private:
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

// The <Key> values of a ListObjectsV2 answer, in order.
std::vector<std::string> Keys(const std::string& xml) {
  std::vector<std::string> keys;
  static const std::regex key("<Key>([^<]*)</Key>");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), key); it != std::sregex_iterator();
       ++it) {
    keys.push_back((*it)[1]);
  }
  return keys;
}

// The stderr of the processes started in Capture (amtd): its lines, read as they are written
// (and copied to the test's own stderr), with waits on them.
class StderrTap {
 public:
  StderrTap() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    saved_fd_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    reader_ = std::thread([this] { Read(); });
  }
  ~StderrTap() {
    if (write_fd_ >= 0) ::close(write_fd_);
    // Ends at the end of file: once what holds the pipe (amtd, destroyed first) has exited.
    reader_.join();
    ::close(read_fd_);
    ::close(saved_fd_);
  }

  // Runs `start` with this process's stderr on the pipe, so that what it spawns writes there;
  // then closes the tap's own write end, so that the pipe ends when they do. Once.
  template <typename Start>
  void Capture(Start start) {
    ::dup2(write_fd_, STDERR_FILENO);
    struct Restore {
      int saved;
      int& write_fd;
      ~Restore() {
        ::dup2(saved, STDERR_FILENO);
        ::close(write_fd);
        write_fd = -1;
      }
    } restore{saved_fd_, write_fd_};
    start();
  }

  // How many lines so far contain `text`.
  size_t Count(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    return CountLocked(text);
  }

  // Waits until more than `than` lines contain `text`; false after `timeout` or at the pipe's end.
  bool WaitForMore(const std::string& text, size_t than, std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return CountLocked(text) > than || ended_; });
    return CountLocked(text) > than;
  }

 private:
  size_t CountLocked(const std::string& text) const {
    return static_cast<size_t>(std::count_if(lines_.begin(), lines_.end(), [&](const auto& line) {
      return line.find(text) != std::string::npos;
    }));
  }

  void Read() {
    std::string partial;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(read_fd_, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
      if (n < 0) continue;
      (void)!::write(saved_fd_, buffer, static_cast<size_t>(n));
      partial.append(buffer, static_cast<size_t>(n));
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t end; (end = partial.find('\n')) != std::string::npos;) {
        lines_.push_back(partial.substr(0, end));
        partial.erase(0, end + 1);
      }
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    cv_.notify_all();
  }

  int read_fd_ = -1;
  int write_fd_ = -1;
  int saved_fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
  bool ended_ = false;
};

// amtd with its stderr tapped, its local worker and the trainers of `image_map` (JSON text,
// image URI -> command); the toy trainer is amt-local/toy-trainer:latest.
struct TappedAmtd {
  TappedAmtd(const std::string& dir, const std::string& data_dir, nlohmann::json image_map) {
    image_map["amt-local/toy-trainer:latest"] =
        nlohmann::json::array({BinDir() + "/amt-toy-trainer"});
    const std::string map_file = dir + "/edge-image-map.json";
    WriteFile(map_file, image_map.dump());
    tap.Capture([&] {
      amtd = std::make_unique<Amtd>(
          data_dir, std::vector<std::string>{"--image-map", map_file, "--slots", "1"});
    });
  }
  StderrTap tap;  // destroyed after amtd, whose exit ends its pipe
  std::unique_ptr<Amtd> amtd;
};

std::string Executable(const std::string& path, const std::string& script) {
  WriteFile(path, script);
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
  return path;
}

// The training-job example (examples/training-job.json) as `name` on `image`, with `extra` members
// put over it (replacing those it has).
std::string TrainingJob(const std::string& name, const std::string& image,
                        const nlohmann::json& extra) {
  nlohmann::json job = ExampleWith("training-job.json", R"({
      "HyperParameters": null, "CheckpointConfig": null, "Environment": null,
      "AlgorithmSpecification": {"MetricDefinitions": null},
      "OutputDataConfig": {"S3OutputPath": "s3://edge-out/output"},
      "ResourceConfig": {"VolumeSizeInGB": 1},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}})");
  job["TrainingJobName"] = name;
  job["AlgorithmSpecification"]["TrainingImage"] = image;
  if (extra.is_object()) job.update(extra);
  return job.dump();
}

v1::DescribeTrainingJobResponse RunToEnd(Amtd& amtd, const std::string& json) {
  CreateTrainingJob(amtd, json);
  const std::string name = nlohmann::json::parse(json)["TrainingJobName"];
  return WaitForTrainingJob(amtd.stub(), name, Terminal);
}

// ---------------------------------------------------------------- links planted by a job

TEST(EdgeIntegrationTest, LinksAJobPlantsInTheS3FolderAreObjectsThatAreNotThere) {
  const TempDir temp("amt-edge-links");
  const std::string dir = temp.str();
  const std::string outside = dir + "/outside";
  fs::create_directories(outside);
  WriteFile(outside + "/secret", "outside the S3 folder\n");
  // Through its channel, a link to the bucket's folder, the job plants a loop and outward links.
  const std::string planter = Executable(dir + "/plant.sh",
                                         "#!/bin/sh\n"
                                         "set -e\n"
                                         "cd \"$SM_CHANNEL_TRAIN\"\n"
                                         "mkdir l\n"
                                         "ln -s . l/a\n"
                                         "ln -s . l/b\n"
                                         "ln -s \"$OUTSIDE\" out\n"
                                         "ln -s /etc etc\n"
                                         "echo planted\n");
  TappedAmtd amtd(dir, dir + "/data", {{"amt-local/planter:latest", {"/bin/sh", planter}}});
  S3Client s3(amtd.amtd->http_endpoint());
  ASSERT_EQ(s3.Send(http::verb::put, "/edge").status, 200);
  ASSERT_EQ(s3.Send(http::verb::put, "/edge/keep.txt", "kept").status, 200);

  const auto job = RunToEnd(
      *amtd.amtd,
      TrainingJob("planter", "amt-local/planter:latest",
                  {{"InputDataConfig",
                    {{{"ChannelName", "train"},
                      {"DataSource",
                       {{"S3DataSource", {{"S3DataType", "S3Prefix"}, {"S3Uri", "s3://edge"}}}}}}}},
                   {"Environment", {{"OUTSIDE", outside}}}}));
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  const fs::path bucket = fs::path(dir) / "data" / "s3" / "edge";
  ASSERT_TRUE(fs::is_symlink(bucket / "l" / "a"));  // the job did plant them
  ASSERT_TRUE(fs::is_symlink(bucket / "out"));

  // The loop lists nothing (and the listing ends); no link is listed anywhere.
  Reply r = s3.Send(http::verb::get, "/edge?list-type=2&prefix=l%2F");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("<KeyCount>0</KeyCount>"));
  EXPECT_THAT(Keys(r.body), IsEmpty());
  r = s3.Send(http::verb::get, "/edge?list-type=2");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(Keys(r.body), ElementsAre("keep.txt"));

  // Nothing outside is read through a link.
  r = s3.Send(http::verb::get, "/edge/out/secret");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("<Code>NoSuchKey</Code>"));
  r = s3.Send(http::verb::get, "/edge/etc/passwd");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("<Code>NoSuchKey</Code>"));
  r = s3.Send(http::verb::get, "/edge/l/a");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("<Code>NoSuchKey</Code>"));

  // Nor written: a PUT whose folder is a link is refused.
  r = s3.Send(http::verb::put, "/edge/out/x", "written through the link");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr("<Code>InvalidArgument</Code>"));
  EXPECT_FALSE(fs::exists(outside + "/x"));

  // Nor deleted: DELETE of a key that is not there succeeds, as in S3, and deletes nothing.
  r = s3.Send(http::verb::delete_, "/edge/out/secret");
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(ReadFile(outside + "/secret"), "outside the S3 folder\n");
  EXPECT_TRUE(fs::is_symlink(bucket / "out"));
  EXPECT_EQ(s3.Send(http::verb::get, "/edge/keep.txt").body, "kept");
}

// ---------------------------------------------------------------- a small disk

// A tmpfs of 64 MiB mounted as amtd's data dir (its state store, its S3 folder and the local
// worker's job folders all on it). Needs root (CI runs as root): skipped otherwise.
class SmallDiskIntegrationTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kDiskBytes = uint64_t{64} << 20;

  void SetUp() override {
    dir_ = temp_.str();
    data_ = dir_ + "/data";
    fs::create_directories(data_);
    if (::geteuid() != 0)
      GTEST_SKIP() << "mounting a tmpfs needs root; this test runs as uid " << ::geteuid();
    if (::mount("tmpfs", data_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0755") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs on " << data_ << ": " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    amtd_.reset();  // amtd stops its local worker, which stops its jobs
    if (mounted_ && ::umount2(data_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "umount " << data_ << ": " << std::strerror(errno);
    }
  }

  void StartAmtd(nlohmann::json image_map) {
    amtd_ = std::make_unique<TappedAmtd>(dir_, data_, std::move(image_map));
  }
  Amtd& amtd() { return *amtd_->amtd; }

  uint64_t FreeBytes() const {
    struct statvfs st {};
    EXPECT_EQ(::statvfs(data_.c_str(), &st), 0);
    return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  }

  // CreateTrainingJob; while amtd answers UNAVAILABLE (its state store failed and is not written
  // yet), waits for its next "accepts writes again" line and tries again.
  void CreateWhenWritable(const std::string& json) {
    v1::CreateTrainingJobRequest request;
    ASSERT_TRUE(JsonToProto(json, &request).ok()) << json;
    constexpr char kWritable[] = "the state store accepts writes again";
    for (;;) {
      const size_t recovered = amtd_->tap.Count(kWritable);
      grpc::ClientContext context;
      v1::CreateTrainingJobResponse response;
      const grpc::Status status = amtd().stub().CreateTrainingJob(&context, request, &response);
      if (status.ok()) return;
      ASSERT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
      ASSERT_TRUE(amtd_->tap.WaitForMore(kWritable, recovered, std::chrono::seconds(60)))
          << "amtd still cannot write its state store: " << status.error_message();
    }
  }

  TempDir temp_{"amt-edge-disk"};  // removed after amtd_ ends
  std::string dir_;
  std::string data_;
  bool mounted_ = false;
  std::unique_ptr<TappedAmtd> amtd_;
};

constexpr char kSklearnImage[] =
    "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3";

TEST_F(SmallDiskIntegrationTest, ASourcedirThatUnpacksPastTheVolumeFailsTheJobAndWritesNothing) {
  StartAmtd(nlohmann::json::object());
  // sourcedir.tar.gz: train.py, then a member of 1 GiB and a byte of zeros (about 5 MB packed),
  // past a VolumeSizeInGB of 1, and past the disk.
  constexpr uint64_t kBomb = (uint64_t{1} << 30) + 1;
  const fs::path archive = fs::path(data_) / "s3" / "edge-code" / "sourcedir.tar.gz";
  fs::create_directories(archive.parent_path());
  {
    const std::string head = worker::testing::TarBuilder()
                                 .File("train.py", "print('never runs')\n")
                                 .FileHeaderOnly("bomb", kBomb, "")
                                 .Bytes();
    gzFile gz = gzopen(archive.c_str(), "wb1");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, head.data(), static_cast<unsigned>(head.size())),
              static_cast<int>(head.size()));
    // The bomb's data and its padding to 512 bytes, all zeros; the 1024 zeros Bytes() ended with
    // are the archive's end.
    const std::string zeros(1 << 20, '\0');
    for (uint64_t left = kBomb + (512 - kBomb % 512) % 512; left > 0;) {
      const unsigned n = static_cast<unsigned>(std::min<uint64_t>(left, zeros.size()));
      ASSERT_EQ(gzwrite(gz, zeros.data(), n), static_cast<int>(n));
      left -= n;
    }
    ASSERT_EQ(gzclose(gz), Z_OK);
  }
  const uint64_t free_before = FreeBytes();

  const auto job = RunToEnd(
      amtd(),
      TrainingJob("bomb", kSklearnImage,
                  {{"HyperParameters",
                    {{"sagemaker_program", "\"train.py\""},
                     {"sagemaker_submit_directory", "\"s3://edge-code/sourcedir.tar.gz\""}}}}));
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_THAT(job.failure_reason(), StartsWith("ClientError: sagemaker_submit_directory "
                                               "s3://edge-code/sourcedir.tar.gz: cannot unpack "));
  EXPECT_THAT(job.failure_reason(),
              HasSubstr("it expands past the VolumeSizeInGB of 1 GB (member \"bomb\" of "
                        "1073741825 bytes after 20 bytes of earlier members)"));
  // Refused from the member's header: nothing of it was written, and the code folder is gone.
  EXPECT_FALSE(fs::exists(fs::path(data_) / "jobs" / "bomb" / "code"));
  EXPECT_GT(FreeBytes() + (uint64_t{1} << 20), free_before);
}

TEST_F(SmallDiskIntegrationTest, AJobThatFillsTheDiskFailsAndAmtdCarriesOnByItself) {
  const std::string filler = Executable(dir_ + "/fill.sh",
                                        "#!/bin/sh\n"
                                        "dd if=/dev/zero of=\"$SM_MODEL_DIR/fill\" bs=1M\n"
                                        "echo \"dd exited with $?\"\n"
                                        "exit 1\n");
  StartAmtd({{"amt-local/filler:latest", {"/bin/sh", filler}}});

  const auto filled = RunToEnd(amtd(), TrainingJob("filler", "amt-local/filler:latest", {}));
  EXPECT_EQ(filled.training_job_status(), "Failed");
  EXPECT_THAT(filled.failure_reason(),
              StartsWith("AlgorithmError: No space left on device in the job folder " + data_ +
                         "/jobs/filler"));
  // The worker trimmed the folder before it reported the exit: the fill is gone, the folder
  // stays for inspection.
  const fs::path folder = fs::path(data_) / "jobs" / "filler";
  EXPECT_TRUE(fs::is_directory(folder / "model"));
  EXPECT_FALSE(fs::exists(folder / "model" / "fill"));
  EXPECT_THAT(ReadFile(data_ + "/worker.log"),
              HasSubstr("filler: the job ran out of disk space: removed "));
  EXPECT_GT(FreeBytes(), kDiskBytes / 2);

  // Nobody deletes anything: the next job is accepted (once amtd's store, if it failed on the
  // full disk, is written again) and completes.
  nlohmann::json next = ExampleJson("training-job.json");
  next["TrainingJobName"] = "after-the-fill";
  next["HyperParameters"]["epochs"] = "2";
  CreateWhenWritable(next.dump());
  const auto after = WaitForTrainingJob(amtd().stub(), "after-the-fill", Terminal);
  EXPECT_EQ(after.training_job_status(), "Completed") << after.failure_reason();
}

}  // namespace
}  // namespace amt::testing
