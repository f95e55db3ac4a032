// The web page in a real browser: Debian's Chromium, headless, loads the page from a real amtd
// (running the toy trainer) and prints the DOM once the page's script has read the API
// (--dump-dom after --virtual-time-budget). The list shows the tuning job, its page a row per
// training job, a missing job SageMaker's own "not found" text, and hostile text from a
// hyperparameter value and a log line is shown as text, never run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/integration/harness.h"

namespace amt::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What Chromium's DOM holds for `url` once its scripts have run and their fetches answered.
std::string DumpDom(const std::string& url, const std::string& profile_dir) {
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='" +
      profile_dir + "' --virtual-time-budget=5000 --dump-dom '" + url + "' 2>/dev/null";
  std::string dom;
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) return dom;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, out)) > 0) dom.append(buffer, n);
  ::pclose(out);
  return dom;
}

// A PNG of the page at `url` into <build>/browser-screenshots/<name>.png, kept as a test artifact
// (CI keeps the build tree's screenshots); true when Chromium wrote it.
bool Screenshot(const std::string& url, const std::string& profile_dir, const std::string& name) {
  const std::string folder = BinDir() + "/../browser-screenshots";
  std::filesystem::create_directories(folder);
  const std::string file = folder + "/" + name + ".png";
  std::filesystem::remove(file);
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars "
      "--user-data-dir='" +
      profile_dir +
      "' --virtual-time-budget=5000 --window-size=1200,700 "
      "--screenshot='" +
      file + "' '" + url + "' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0 && std::filesystem::file_size(file) > 0;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

class WebPageBrowserTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(MakeTempDir("amt-web"));
    // The examples' images, and one whose trainer prints HTML.
    const std::string map = WriteImageMap(*dir_);
    std::ifstream in(map);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(text.rfind('}'),
                R"j(, "test/hostile:latest": ["/bin/sh", "-c",
                    "echo '<script>document.title=\"pwned\"</script>'; echo val_loss=0.5"])j");
    WriteFile(map, text);
    amtd_ = new Amtd(*dir_ + "/data", {"--image-map", map});

    auto request = TuningRequestFromJson(R"j({
      "HyperParameterTuningJobName": "web-tuning",
      "HyperParameterTuningJobConfig": {"Strategy": "Random",
        "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "val_loss"},
        "ResourceLimits": {"MaxNumberOfTrainingJobs": 3, "MaxParallelTrainingJobs": 3},
        "ParameterRanges": {"ContinuousParameterRanges": [{"Name": "learning_rate",
          "MinValue": "0.001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}]},
        "RandomSeed": 7},
      "TrainingJobDefinition": {"StaticHyperParameters": {"epochs": "3"},
        "AlgorithmSpecification": {"TrainingImage": "amt-local/toy-trainer:latest",
          "TrainingInputMode": "File",
          "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                           "VolumeSizeInGB": 10},
        "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})j");
    grpc::ClientContext ctx;
    v1::CreateHyperParameterTuningJobResponse response;
    ASSERT_TRUE(amtd_->stub().CreateHyperParameterTuningJob(&ctx, request, &response).ok());

    CreateTrainingJob(*amtd_, R"j({"TrainingJobName": "hostile",
      "HyperParameters": {"note": "<img src=x onerror=alert(1)>"},
      "AlgorithmSpecification": {"TrainingImage": "test/hostile:latest",
        "TrainingInputMode": "File"},
      "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                         "VolumeSizeInGB": 10},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}})j");
    WaitForTuningJob(amtd_->stub(), "web-tuning");
    WaitForTrainingJob(amtd_->stub(), "hostile", Terminal);
  }

  static void TearDownTestSuite() {
    delete amtd_;
    amtd_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  std::string Page(const std::string& fragment) {
    return DumpDom(amtd_->http_endpoint() + "/#" + fragment, *dir_ + "/chromium");
  }

  static std::string* dir_;
  static Amtd* amtd_;
};

std::string* WebPageBrowserTest::dir_ = nullptr;
Amtd* WebPageBrowserTest::amtd_ = nullptr;

TEST_F(WebPageBrowserTest, ListsTheTuningJobs) {
  const std::string dom = Page("/");
  EXPECT_THAT(dom, HasSubstr("<a href=\"#/tuning-jobs/web-tuning\">web-tuning</a>"));
  EXPECT_THAT(dom, HasSubstr("<td class=\"status-Completed\">Completed</td>"));
  EXPECT_THAT(dom, HasSubstr("Completed 3"));
  EXPECT_THAT(dom, HasSubstr("<td>Random</td>"));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/", *dir_ + "/chromium", "tuning-jobs"));
}

TEST_F(WebPageBrowserTest, ShowsARowPerTrainingJobOfATuningJob) {
  const std::string dom = Page("/tuning-jobs/web-tuning");
  EXPECT_EQ(Count(dom, "<a href=\"#/training-jobs/web-tuning-"), 3u + 1u);  // + the best job
  EXPECT_THAT(dom, HasSubstr("<dd>Minimize val_loss</dd>"));
  EXPECT_THAT(dom, HasSubstr("<th scope=\"col\">learning_rate</th>"));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/web-tuning", *dir_ + "/chromium",
                         "tuning-job"));
}

TEST_F(WebPageBrowserTest, ShowsSageMakersNotFoundText) {
  const std::string dom = Page("/tuning-jobs/no-such-job");
  EXPECT_THAT(dom, HasSubstr("ResourceNotFound: Amazon SageMaker can't find a tuning job called "
                             "no-such-job. Type another name."));
}

TEST_F(WebPageBrowserTest, ShowsHostileTextAsText) {
  const std::string dom = Page("/training-jobs/hostile");
  // The log line and the hyperparameter value are there, escaped as text ...
  EXPECT_THAT(dom, HasSubstr("&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;"));
  EXPECT_THAT(dom, HasSubstr("<td>&lt;img src=x onerror=alert(1)&gt;</td>"));
  // ... and nothing of them became markup or ran.
  EXPECT_THAT(dom, Not(HasSubstr("<img src=\"x\"")));
  EXPECT_THAT(dom, Not(HasSubstr("<title>pwned</title>")));
  EXPECT_THAT(dom, HasSubstr("<title>amt-local — hostile</title>"));
}

}  // namespace
}  // namespace amt::testing
