// The web page in a real browser: Debian's Chromium, headless, loads the page from a real amtd
// (running the toy trainer) and prints the DOM once the page's script has read the API
// (--dump-dom after --virtual-time-budget). The list shows the tuning job, its page a row per
// training job and the learning curves (a curve per training job, AUTO's median line, a stop
// marker whose text is `amt explain`'s), a missing job SageMaker's own "not found" text, and
// hostile text from a hyperparameter value, a tag value and a log line is shown as text, never run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "tests/integration/harness.h"
#include "tests/support/requests.h"

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
bool Screenshot(const std::string& url, const std::string& profile_dir, const std::string& name,
                int height = 700) {
  const std::string folder = BinDir() + "/../browser-screenshots";
  std::filesystem::create_directories(folder);
  const std::string file = folder + "/" + name + ".png";
  std::filesystem::remove(file);
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars "
      "--user-data-dir='" +
      profile_dir + "' --virtual-time-budget=5000 --window-size=1200," + std::to_string(height) +
      " "
      "--screenshot='" +
      file + "' '" + url + "' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0 && std::filesystem::file_size(file) > 0;
}

// `text` as Chromium serializes a text node: &, < and > escaped.
std::string TextNode(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// The Random example (examples/random-tuning.json) as `name`, minimising val_loss: `config` (a
// JSON object) replaces the members of its HyperParameterTuningJobConfig besides the objective,
// `statics` its static hyperparameters, and `more` (a JSON object) is merged over it.
std::string ToyTuningJob(const std::string& name, const std::string& config,
                         const std::string& statics, const std::string& more = "{}") {
  nlohmann::json job = ExampleWith("random-tuning.json", R"j({
      "TrainingJobDefinition": {
        "AlgorithmSpecification": {
          "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})j");
  job["HyperParameterTuningJobName"] = name;
  nlohmann::json& tuning = job["HyperParameterTuningJobConfig"];
  tuning = {{"HyperParameterTuningJobObjective", tuning["HyperParameterTuningJobObjective"]}};
  tuning.update(nlohmann::json::parse(config));
  job["TrainingJobDefinition"]["StaticHyperParameters"] = nlohmann::json::parse(statics);
  job.merge_patch(nlohmann::json::parse(more));
  return job.dump();
}

class WebPageBrowserTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = new TempDir("amt-web");
    dir_ = new std::string(temp_->str());
    // The examples' images, and one whose trainer prints HTML.
    const std::string map = WriteImageMap(*dir_);
    std::ifstream in(map);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(text.rfind('}'),
                R"j(, "test/hostile:latest": ["/bin/sh", "-c",
                    "echo '<script>document.title=\"pwned\"</script>'; echo val_loss=0.5"])j");
    WriteFile(map, text);
    // One GPU for the local worker: a stand-in nvidia-smi first on PATH (tests/integration/gpu).
    const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
    ::setenv("PATH", (std::string(AMT_SOURCE_DIR) + "/tests/integration/gpu:" + path).c_str(), 1);
    ::setenv("FAKE_GPUS", "1", 1);
    // Spot attempts are interrupted 0.3 training seconds in (examples/spot-training.json, faster).
    amtd_ = new Amtd(*dir_ + "/data", {"--image-map", map, "--spot-interrupt-after", "0.3"});
    ::setenv("PATH", path.c_str(), 1);

    CreateTuningJob(*amtd_, ToyTuningJob("web-tuning", R"j({"Strategy": "Random",
          "ResourceLimits": {"MaxNumberOfTrainingJobs": 3, "MaxParallelTrainingJobs": 3},
          "ParameterRanges": {"ContinuousParameterRanges": [{"Name": "learning_rate",
            "MinValue": "0.001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}]},
          "RandomSeed": 7})j",
                                         R"j({"epochs": "3"})j",
                                         R"j({"Tags": [{"Key": "note",
                                   "Value": "<script>document.title='pwned'</script>"}]})j"));
    // AUTO early stopping over a fixed Grid order, one job at a time (as in
    // early_stopping_integration_test): learning_rate 0.01 runs its 6 epochs, 1 (a high, slow
    // curve) is stopped at epoch 3, the first epoch past the grace period, and 0.02 runs to its
    // end.
    CreateTuningJob(*amtd_,
                    ToyTuningJob("web-auto", R"j({"Strategy": "Grid",
          "TrainingJobEarlyStoppingType": "Auto",
          "ResourceLimits": {"MaxNumberOfTrainingJobs": 3, "MaxParallelTrainingJobs": 1},
          "ParameterRanges": {"CategoricalParameterRanges": [{"Name": "learning_rate",
            "Values": ["0.01", "1", "0.02"]}]}})j",
                                 R"j({"epochs": "6", "num_layers": "2", "sleep_ms": "40"})j"));
    // Hyperband (MinResource 1, MaxResource 9, eta 3): every job is stopped at a rung or at 9.
    CreateTuningJob(*amtd_, ToyTuningJob("web-hyperband", R"j({"Strategy": "Hyperband",
          "StrategyConfig": {"HyperbandStrategyConfig": {"MinResource": 1, "MaxResource": 9}},
          "ResourceLimits": {"MaxNumberOfTrainingJobs": 6, "MaxParallelTrainingJobs": 1},
          "ParameterRanges": {"ContinuousParameterRanges": [{"Name": "learning_rate",
            "MinValue": "0.0001", "MaxValue": "1", "ScalingType": "Logarithmic"}]},
          "RandomSeed": 11})j",
                                         R"j({"epochs": "50", "sleep_ms": "20"})j"));

    CreateTrainingJob(*amtd_, ExampleText("training-job.json", R"j({"TrainingJobName": "hostile",
      "HyperParameters": {"note": "<img src=x onerror=alert(1)>", "learning_rate": null,
                          "num_layers": null, "optimizer": null, "epochs": null},
      "AlgorithmSpecification": {"TrainingImage": "test/hostile:latest",
                                 "MetricDefinitions": null},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600},
      "CheckpointConfig": null, "Environment": null})j"));
    // The examples/README.md walkthroughs' own job files, for their screenshots.
    for (const char* example : {"auto-early-stopping", "hyperband", "bayesian-tuning"}) {
      CreateTuningJob(*amtd_, ExampleText(std::string(example) + ".json"));
    }
    const std::string spot =
        ExampleText("spot-training.json", R"({"HyperParameters": {"sleep_ms": "40"}})");
    CreateTrainingJob(*amtd_, spot);
    CreateTrainingJob(*amtd_, ExampleText("training-job.json", R"j({"TrainingJobName": "toy-gpu",
      "ResourceConfig": {"InstanceType": "ml.g5.xlarge"},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "CheckpointConfig": null, "Environment": null})j"));
    WaitForTuningJob(amtd_->stub(), "web-tuning");
    WaitForTuningJob(amtd_->stub(), "web-auto");
    WaitForTuningJob(amtd_->stub(), "web-hyperband");
    WaitForTuningJob(amtd_->stub(), "toy-auto");
    WaitForTuningJob(amtd_->stub(), "toy-hyperband");
    // Warm start from the finished Bayesian example (examples/warm-start.json names it).
    WaitForTuningJob(amtd_->stub(), "toy-bayesian");
    CreateTuningJob(*amtd_, ExampleText("warm-start.json"));
    WaitForTuningJob(amtd_->stub(), "toy-warm-start");
    WaitForTrainingJob(amtd_->stub(), "hostile", Terminal);
    WaitForTrainingJob(amtd_->stub(), "toy-spot", Terminal);
    WaitForTrainingJob(amtd_->stub(), "toy-gpu", Terminal);
  }

  static void TearDownTestSuite() {
    delete amtd_;
    amtd_ = nullptr;
    delete dir_;
    dir_ = nullptr;
    delete temp_;  // after amtd_ ends
    temp_ = nullptr;
  }

  std::string Page(const std::string& fragment) {
    return DumpDom(amtd_->http_endpoint() + "/#" + fragment, *dir_ + "/chromium");
  }

  static TempDir* temp_;
  static std::string* dir_;
  static Amtd* amtd_;
};

TempDir* WebPageBrowserTest::temp_ = nullptr;
std::string* WebPageBrowserTest::dir_ = nullptr;
Amtd* WebPageBrowserTest::amtd_ = nullptr;

TEST_F(WebPageBrowserTest, ListsTheTuningJobs) {
  const std::string dom = Page("/");
  EXPECT_THAT(dom, HasSubstr("<a href=\"#/tuning-jobs/web-tuning\">web-tuning</a>"));
  EXPECT_THAT(dom, HasSubstr("<td class=\"status-Completed\">Completed</td>"));
  EXPECT_THAT(dom, HasSubstr("Completed 3"));
  EXPECT_THAT(dom, HasSubstr("<td>Random</td>"));
  // A box per tuning job to choose the ones to compare.
  EXPECT_THAT(dom, HasSubstr("<input type=\"checkbox\" class=\"compare-box\" value=\"web-tuning\" "
                             "aria-label=\"Compare web-tuning\">"));
  EXPECT_THAT(dom, HasSubstr("Compare the selected tuning jobs"));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/", *dir_ + "/chromium", "tuning-jobs"));
}

// Issue 38: tuning jobs side by side, a colour each: the best objective so far against the
// training jobs and against the training seconds spent, and a row per job (Random against
// Hyperband on the same toy trainer and objective).
TEST_F(WebPageBrowserTest, ComparesTuningJobsSideBySide) {
  const auto random = WaitForTuningJob(amtd_->stub(), "web-tuning");
  const auto hyperband = WaitForTuningJob(amtd_->stub(), "web-hyperband");
  const std::string dom = Page("/compare/web-tuning,web-hyperband");
  EXPECT_THAT(dom, HasSubstr("<h1>Compare 2 tuning jobs</h1>"));
  EXPECT_THAT(dom, HasSubstr("data-chart=\"compare-jobs\" data-series=\"2\""));
  EXPECT_THAT(dom, HasSubstr("data-chart=\"compare-seconds\" data-series=\"2\""));
  EXPECT_THAT(dom, HasSubstr("<a href=\"#/tuning-jobs/web-tuning\">web-tuning</a>"));
  EXPECT_THAT(dom, HasSubstr("<a href=\"#/tuning-jobs/web-hyperband\">web-hyperband</a>"));
  EXPECT_THAT(dom, HasSubstr("<td>Hyperband</td>"));
  EXPECT_THAT(
      dom, HasSubstr("<td class=\"num\">" + std::to_string(random.training_jobs_size()) + "</td>"));
  EXPECT_THAT(dom, HasSubstr("<td class=\"num\">" + std::to_string(hyperband.training_jobs_size()) +
                             "</td>"));
  EXPECT_THAT(dom, Not(HasSubstr("do not share one objective")));
  EXPECT_EQ(Count(dom, "<canvas"), 2u);  // both charts drew
  EXPECT_TRUE(
      Screenshot(amtd_->http_endpoint() + "/#/compare/web-tuning,web-hyperband,toy-bayesian",
                 *dir_ + "/chromium", "compare", /*height=*/1100));
}

// Issue 38: a tuning job's trials as parallel coordinates (an axis per tuned hyperparameter and
// the objective, a line per finished job) and each hyperparameter's importance.
TEST_F(WebPageBrowserTest, DrawsParallelCoordinatesAndHyperparameterImportance) {
  const auto job = WaitForTuningJob(amtd_->stub(), "toy-bayesian");
  ASSERT_EQ(job.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  const std::string dom = Page("/tuning-jobs/toy-bayesian");
  const std::string jobs = std::to_string(job.training_jobs_size());
  // learning_rate, num_layers, optimizer and val_loss.
  EXPECT_THAT(dom, HasSubstr("data-chart=\"parallel-coordinates\" data-axes=\"4\" data-lines=\"" +
                             jobs + "\""));
  EXPECT_EQ(Count(dom, "<polyline "), static_cast<size_t>(job.training_jobs_size()));
  EXPECT_THAT(dom, HasSubstr(">learning_rate (log)</text>"));
  EXPECT_THAT(dom, HasSubstr(">val_loss</text>"));
  EXPECT_THAT(dom, HasSubstr("data-chart=\"importance\" data-params=\"3\""));
  for (const char* name : {"learning_rate", "num_layers", "optimizer"}) {
    const std::string row = "<tr><td>" + std::string(name) + "</td><td class=\"num\">";
    const size_t at = dom.find(row);
    ASSERT_NE(at, std::string::npos) << name;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(dom[at + row.size()]))) << name;
  }
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/toy-bayesian",
                         *dir_ + "/chromium", "parallel-coordinates", /*height=*/2600));
}

TEST_F(WebPageBrowserTest, ShowsARowPerTrainingJobOfATuningJob) {
  const std::string dom = Page("/tuning-jobs/web-tuning");
  EXPECT_EQ(Count(dom, "<a href=\"#/training-jobs/web-tuning-"), 3u + 1u);  // + the best job
  EXPECT_THAT(dom, HasSubstr("<dd>Minimize val_loss</dd>"));
  EXPECT_THAT(dom, HasSubstr("<th scope=\"col\">learning_rate</th>"));
  // A tag value holding HTML is shown as text, and never ran.
  EXPECT_THAT(dom, HasSubstr("<td>&lt;script&gt;document.title='pwned'&lt;/script&gt;</td>"));
  EXPECT_THAT(dom, HasSubstr("<title>amt-local — web-tuning</title>"));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/web-tuning", *dir_ + "/chromium",
                         "tuning-job"));
}

TEST_F(WebPageBrowserTest, DrawsTheLearningCurvesTheMedianLineAndAStopMarkerWithItsReason) {
  const auto last = WaitForTuningJob(amtd_->stub(), "web-auto");
  ASSERT_EQ(last.training_jobs_size(), 3);
  ASSERT_EQ(last.training_jobs(1).training_job_status(), "Stopped");
  // What `amt explain` prints for the stopped job: its stop decision's sentence.
  const std::string stopped = last.training_jobs(1).training_job_name();
  grpc::ClientContext ctx;
  v1::ExplainTrainingJobRequest request;
  request.set_training_job_name(stopped);
  v1::ExplainTrainingJobResponse explained;
  ASSERT_TRUE(amtd_->stub().ExplainTrainingJob(&ctx, request, &explained).ok());
  ASSERT_GT(explained.decisions_size(), 0);
  const std::string why = explained.decisions(explained.decisions_size() - 1).explanation();
  ASSERT_THAT(why, HasSubstr(": stop"));

  const std::string dom = Page("/tuning-jobs/web-auto");
  // One curve per training job, the median line from epoch 3 (after the grace period) to 6, and
  // one marker: the stop.
  EXPECT_THAT(dom, HasSubstr("data-chart=\"learning-curves\" data-series=\"3\" "
                             "data-median-points=\"4\" data-markers=\"1\""));
  EXPECT_EQ(Count(dom, "<canvas"), 3u);  // learning curves, progress, learning_rate
  EXPECT_EQ(Count(dom, "class=\"marker stop\""), 1u);
  EXPECT_THAT(dom, HasSubstr("data-job=\"" + stopped + "\" data-epoch=\"3\""));
  // The marker's text and the decisions table say why, in amt explain's words.
  EXPECT_THAT(dom, HasSubstr("<td>" + TextNode(why) + "</td>"));
  EXPECT_THAT(dom, HasSubstr("The dashed line is the median rule's reference"));
  // The stopped job's own page lists every decision, the stop last, in the same words.
  const std::string job_page = Page("/training-jobs/" + stopped);
  EXPECT_EQ(Count(job_page, "<td>continue</td>") + Count(job_page, ">stop</td>"),
            static_cast<size_t>(explained.decisions_size()));
  EXPECT_THAT(job_page,
              HasSubstr("<td class=\"status-Stopped\">stop</td><td>" + TextNode(why) + "</td>"));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/web-auto", *dir_ + "/chromium",
                         "learning-curves-auto"));
}

TEST_F(WebPageBrowserTest, DrawsHyperbandsRungsAndAMarkerPerRungDecision) {
  const auto last = WaitForTuningJob(amtd_->stub(), "web-hyperband");
  ASSERT_EQ(last.training_jobs_size(), 6);
  // What the page must draw, from amt explain: a marker per stop and per rung decision (a value
  // compared with the rung's cut-off), and a line per rung epoch.
  size_t markers = 0;
  size_t stops = 0;
  std::set<int> rungs;
  for (const auto& job : last.training_jobs()) {
    grpc::ClientContext ctx;
    v1::ExplainTrainingJobRequest request;
    request.set_training_job_name(job.training_job_name());
    v1::ExplainTrainingJobResponse explained;
    ASSERT_TRUE(amtd_->stub().ExplainTrainingJob(&ctx, request, &explained).ok());
    for (const auto& decision : explained.decisions()) {
      if (decision.has_threshold()) rungs.insert(decision.epoch());
      if (decision.stop() || decision.has_threshold()) ++markers;
      if (decision.stop()) ++stops;
    }
  }
  ASSERT_EQ(stops, 6u);
  ASSERT_FALSE(rungs.empty());
  std::string epochs;
  for (int epoch : rungs) epochs += (epochs.empty() ? "" : ", ") + std::to_string(epoch);

  const std::string dom = Page("/tuning-jobs/web-hyperband");
  EXPECT_THAT(dom, HasSubstr("data-chart=\"learning-curves\" data-series=\"6\" "
                             "data-median-points=\"0\" data-markers=\"" +
                             std::to_string(markers) + "\""));
  EXPECT_EQ(Count(dom, "class=\"marker stop\""), stops);
  EXPECT_EQ(Count(dom, "class=\"marker "), markers);
  EXPECT_THAT(dom, HasSubstr("Vertical lines are Hyperband's rungs (epochs " + epochs + ")."));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/web-hyperband",
                         *dir_ + "/chromium", "learning-curves-hyperband"));
}

// The screenshots of examples/README.md's walkthroughs (scripts/screenshots.sh copies them into
// examples/screenshots/): the examples' own job files, every training job drawn, a marker per
// stopped job.
TEST_F(WebPageBrowserTest, DrawsTheWalkthroughExamples) {
  for (const std::string name : {"toy-auto", "toy-hyperband"}) {
    const auto last = WaitForTuningJob(amtd_->stub(), name);
    const int stopped = last.tuning_job().training_job_status_counters().stopped();
    ASSERT_GT(stopped, 0) << name;
    const std::string dom = Page("/tuning-jobs/" + name);
    EXPECT_THAT(dom, HasSubstr("data-chart=\"learning-curves\" data-series=\"" +
                               std::to_string(last.training_jobs_size()) + "\""))
        << name;
    EXPECT_EQ(Count(dom, "class=\"marker stop\""), static_cast<size_t>(stopped)) << name;
    EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/" + name, *dir_ + "/chromium",
                           "example-" + name, /*height=*/1020))
        << name;
  }
}

// Warm start (examples/warm-start.json, the walkthrough's): the progress chart draws the parent's
// 16 jobs as priors before job 1 and the parent's own run, a chart per tuned hyperparameter (log
// axis for the log-scaled learning_rate), and the lineage names the edge and its type, on the
// child's page and on the parent's.
TEST_F(WebPageBrowserTest, DrawsWarmStartProgressHyperparametersAndLineage) {
  const auto parent = WaitForTuningJob(amtd_->stub(), "toy-bayesian");
  const auto child = WaitForTuningJob(amtd_->stub(), "toy-warm-start");
  ASSERT_EQ(child.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  const std::string dom = Page("/tuning-jobs/toy-warm-start");
  EXPECT_THAT(dom,
              HasSubstr("data-chart=\"progress\" data-jobs=\"" +
                        std::to_string(child.training_jobs_size()) + "\" data-prior-points=\"" +
                        std::to_string(parent.training_jobs_size()) + "\" data-parents=\"1\""));
  EXPECT_THAT(dom, HasSubstr("Warm start: the " + std::to_string(parent.training_jobs_size()) +
                             " jobs of toy-bayesian (IdenticalDataAndAlgorithm) were known before "
                             "job 1"));
  const std::string jobs = std::to_string(child.training_jobs_size());
  EXPECT_THAT(
      dom, HasSubstr("data-name=\"learning_rate\" data-points=\"" + jobs + "\" data-log=\"true\""));
  EXPECT_THAT(
      dom, HasSubstr("data-name=\"num_layers\" data-points=\"" + jobs + "\" data-log=\"false\""));
  EXPECT_THAT(dom, HasSubstr("data-name=\"optimizer\" data-points=\"" + jobs + "\""));
  const std::string edge =
      "<tr><td><a href=\"#/tuning-jobs/toy-bayesian\">toy-bayesian</a></td><td><a "
      "href=\"#/tuning-jobs/toy-warm-start\">toy-warm-start</a></td><td>"
      "IdenticalDataAndAlgorithm</td></tr>";
  EXPECT_THAT(dom, HasSubstr("data-chart=\"lineage\" data-edges=\"1\""));
  EXPECT_THAT(dom, HasSubstr(edge));
  EXPECT_THAT(Page("/tuning-jobs/toy-bayesian"), HasSubstr(edge));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/tuning-jobs/toy-warm-start",
                         *dir_ + "/chromium", "example-toy-warm-start", /*height=*/2100));
}

// Managed spot (examples/spot-training.json): the timeline has a segment per status transition,
// the interruptions marked, and says the attempts, the seconds and the savings as Describe does.
TEST_F(WebPageBrowserTest, DrawsASpotJobsTimeline) {
  const v1::DescribeTrainingJobResponse job =
      WaitForTrainingJob(amtd_->stub(), "toy-spot", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed");
  int interruptions = 0;
  for (const auto& t : job.secondary_status_transitions()) {
    interruptions += t.status() == "Interrupted" ? 1 : 0;
  }
  ASSERT_GT(interruptions, 0);
  const std::string dom = Page("/training-jobs/toy-spot");
  EXPECT_THAT(dom, HasSubstr("data-chart=\"timeline\" data-attempts=\"" +
                             std::to_string(interruptions + 1) + "\" data-interruptions=\"" +
                             std::to_string(interruptions) + "\""));
  EXPECT_EQ(Count(dom, "class=\"segment seg-"),
            static_cast<size_t>(job.secondary_status_transitions_size()));
  EXPECT_EQ(Count(dom, "class=\"segment seg-Interrupted\""), static_cast<size_t>(interruptions));
  // The image the job ran and its instances (a container's, or the image map's command).
  EXPECT_THAT(dom, HasSubstr("<dt>Training image</dt><dd>" +
                             job.algorithm_specification().training_image() + "</dd>"));
  EXPECT_THAT(dom, HasSubstr("<dt>Instances</dt><dd>1 x ml.m5.large</dd>"));
  EXPECT_THAT(dom,
              HasSubstr("Training " + std::to_string(job.training_time_in_seconds()) +
                        " s, billable " + std::to_string(job.billable_time_in_seconds()) + " s"));
  EXPECT_TRUE(Screenshot(amtd_->http_endpoint() + "/#/training-jobs/toy-spot", *dir_ + "/chromium",
                         "spot-timeline"));
}

// The GPUs a job ran on (ExplainTrainingJob's Gpus, from its worker), with the stand-in GPU.
TEST_F(WebPageBrowserTest, ShowsTheGpusAJobRanOn) {
  ASSERT_EQ(WaitForTrainingJob(amtd_->stub(), "toy-gpu", Terminal).training_job_status(),
            "Completed");
  const std::string dom = Page("/training-jobs/toy-gpu");
  EXPECT_THAT(dom, HasSubstr("<dt>Instances</dt><dd>1 x ml.g5.xlarge</dd>"));
  EXPECT_THAT(dom, HasSubstr("<dt>GPUs</dt><dd>GPU 0 (NVIDIA A10G, "
                             "GPU-fake0000-0000-0000-0000-000000000000)</dd>"));
  // A job without GPUs has no such row.
  EXPECT_THAT(Page("/training-jobs/toy-spot"), Not(HasSubstr("<dt>GPUs</dt>")));
}

// The page opened while a tuning job runs follows it through the live feed (/ui/events): no
// reload, a re-read on each change, until the job has ended. Chromium's --dump-dom waits for the
// feed to close, which amtd does once the job has ended, so the DOM it prints is the last one.
TEST_F(WebPageBrowserTest, FollowsARunningTuningJobLiveUntilItEnds) {
  CreateTuningJob(*amtd_, ToyTuningJob("web-live", R"j({"Strategy": "Random",
        "ResourceLimits": {"MaxNumberOfTrainingJobs": 8, "MaxParallelTrainingJobs": 2},
        "ParameterRanges": {"ContinuousParameterRanges": [{"Name": "learning_rate",
          "MinValue": "0.001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}]},
        "RandomSeed": 3})j",
                                       R"j({"epochs": "10", "sleep_ms": "250"})j"));
  // About 10 s of training (8 jobs of 2.5 s, 2 at a time): Chromium loads the page meanwhile,
  // even on a loaded machine.
  const std::string dom = Page("/tuning-jobs/web-live");
  const auto last = WaitForTuningJob(amtd_->stub(), "web-live");
  ASSERT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  // First drawn while it ran, last drawn once it had ended, re-read on the feed's events.
  EXPECT_THAT(dom, HasSubstr("data-first-status=\"InProgress\""));
  EXPECT_THAT(dom, HasSubstr("<dd>Completed</dd>"));
  EXPECT_THAT(dom, HasSubstr("data-chart=\"learning-curves\" data-series=\"8\""));
  EXPECT_THAT(dom, HasSubstr("<span id=\"live\" role=\"status\" aria-live=\"polite\"></span>"));
  const std::smatch counts = [&] {
    std::smatch m;
    std::regex_search(dom, m, std::regex(R"re(data-rendered="(\d+)" data-events="(\d+)")re"));
    return m;
  }();
  ASSERT_EQ(counts.size(), 3u) << dom.substr(0, 2000);
  EXPECT_GE(std::stoi(counts[2]), 2);  // the feed's first change, and at least one more
  EXPECT_GE(std::stoi(counts[1]), 3);  // the load, a change, the end
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
