// Log ingestion as the pure function it is: a batch of lines and a job record in, numbered lines,
// metric points, the record's metrics and early-stopping decisions out.
#include "orchestrator/core/log_ingest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

metrics::MetricParser Parser() {
  google::protobuf::RepeatedPtrField<v1::MetricDefinition> definitions;
  auto* loss = definitions.Add();
  loss->set_name("loss");
  loss->set_regex("loss=([0-9.]+)");
  auto* acc = definitions.Add();
  acc->set_name("acc");
  acc->set_regex("acc=([0-9.]+)");
  auto parser = metrics::MetricParser::Create(definitions);
  EXPECT_TRUE(parser.ok()) << parser.status();
  return *std::move(parser);
}

v1::TrainingJobRecord Job(const std::string& name, int index, const std::string& status) {
  v1::TrainingJobRecord job;
  job.mutable_describe()->set_training_job_name(name);
  job.mutable_describe()->set_training_job_status(status);
  job.set_index(index);
  return job;
}

v1::LogBatch Batch(int64_t first_line, std::vector<std::string> texts,
                   const std::string& host = "") {
  v1::LogBatch batch;
  batch.set_training_job_name("job");
  batch.set_first_line(first_line);
  for (size_t i = 0; i < texts.size(); ++i) {
    auto* line = batch.add_lines();
    line->set_text(texts[i]);
    line->set_timestamp(100.0 + static_cast<double>(first_line) + static_cast<double>(i));
    line->set_host(host);
  }
  return batch;
}

class LogIngestTest : public ::testing::Test {
 protected:
  metrics::MetricParser parser_ = Parser();
  std::string objective_ = "loss";
  LogContext Standalone() { return LogContext{.parser = parser_, .objective_metric = none_}; }
  LogContext Tuned() { return LogContext{.parser = parser_, .objective_metric = objective_}; }
  std::string none_;
};

TEST_F(LogIngestTest, NumbersLinesAndRecordsEveryMetricAndTheObjective) {
  v1::TrainingJobRecord job = Job("job", 1, "InProgress");
  job.set_next_log_sequence(7);
  auto out = IngestLogBatch(job, Batch(0, {"starting", "loss=0.5 acc=0.25", "loss=0.25"}), nullptr,
                            Tuned());
  ASSERT_TRUE(out.has_value());
  ASSERT_THAT(out->logs, SizeIs(3));
  EXPECT_EQ(out->logs[0].sequence, 7);
  EXPECT_EQ(out->logs[2].sequence, 9);
  EXPECT_EQ(out->logs[1].message, "loss=0.5 acc=0.25");
  EXPECT_EQ(out->logs[1].host, "algo-1");  // a one-host job's worker leaves the host out
  EXPECT_DOUBLE_EQ(out->logs[2].timestamp, 102.0);
  ASSERT_THAT(out->points, SizeIs(3));
  EXPECT_EQ(out->points[0].metric_name(), "loss");
  EXPECT_EQ(out->points[0].log_sequence(), 8);
  EXPECT_EQ(out->points[1].metric_name(), "acc");
  EXPECT_DOUBLE_EQ(out->points[2].value(), 0.25);
  EXPECT_EQ(job.next_log_sequence(), 10);
  EXPECT_EQ(job.attempt_log_lines(), 3);
  // One final value per metric: the last.
  ASSERT_EQ(job.describe().final_metric_data_list_size(), 2);
  EXPECT_EQ(job.describe().final_metric_data_list(0).metric_name(), "loss");
  EXPECT_FLOAT_EQ(job.describe().final_metric_data_list(0).value(), 0.25f);
  EXPECT_FLOAT_EQ(job.describe().final_metric_data_list(1).value(), 0.25f);
  EXPECT_THAT(job.objective_history(), ElementsAre(0.5, 0.25));
  EXPECT_EQ(job.objective_emissions(), 2);
  EXPECT_DOUBLE_EQ(job.objective(), 0.25);
  EXPECT_THAT(out->stop_message, IsEmpty());
}

TEST_F(LogIngestTest, AStandaloneJobHasMetricsButNoObjective) {
  v1::TrainingJobRecord job = Job("job", 0, "InProgress");
  auto out = IngestLogBatch(job, Batch(0, {"loss=0.5"}, "algo-2"), nullptr, Standalone());
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->logs[0].host, "algo-2");
  EXPECT_THAT(out->points, SizeIs(1));
  EXPECT_THAT(job.objective_history(), IsEmpty());
  EXPECT_EQ(job.objective_emissions(), 0);
}

TEST_F(LogIngestTest, AReplayedBatchAppliesOnlyTheLinesNotStoredYet) {
  v1::TrainingJobRecord job = Job("job", 1, "InProgress");
  ASSERT_TRUE(IngestLogBatch(job, Batch(0, {"a", "b", "loss=3"}), nullptr, Tuned()).has_value());
  EXPECT_FALSE(IngestLogBatch(job, Batch(1, {"b", "loss=3"}), nullptr, Tuned()).has_value());
  EXPECT_EQ(job.next_log_sequence(), 3);
  auto out = IngestLogBatch(job, Batch(2, {"loss=3", "d", "loss=1"}), nullptr, Tuned());
  ASSERT_TRUE(out.has_value());
  ASSERT_THAT(out->logs, SizeIs(2));
  EXPECT_EQ(out->logs[0].message, "d");
  EXPECT_EQ(out->logs[0].sequence, 3);
  EXPECT_EQ(job.attempt_log_lines(), 5);
  EXPECT_THAT(job.objective_history(), ElementsAre(3.0, 1.0));  // loss=3 counted once
}

TEST_F(LogIngestTest, ValuesParsedOffTheLoopAreTakenOnlyFromTheJobsOwnParserAndWhole) {
  v1::TrainingJobRecord job = Job("job", 1, "InProgress");
  // A copy of the job's parser (same patterns), with values that tell where they came from.
  ParsedLogs same{parser_, {{{"loss", 9.0}}}};
  ASSERT_TRUE(IngestLogBatch(job, Batch(0, {"loss=1"}), &same, Tuned()).has_value());
  EXPECT_THAT(job.objective_history(), ElementsAre(9.0));
  ParsedLogs short_of_lines{parser_, {}};
  ASSERT_TRUE(IngestLogBatch(job, Batch(1, {"loss=2"}), &short_of_lines, Tuned()).has_value());
  ParsedLogs other{Parser(), {{{"loss", 7.0}}}};  // compiled apart: not the job's parser
  ASSERT_TRUE(IngestLogBatch(job, Batch(2, {"loss=3"}), &other, Tuned()).has_value());
  EXPECT_THAT(job.objective_history(), ElementsAre(9.0, 2.0, 3.0));
}

TEST_F(LogIngestTest, EarlyStoppingDecidesOnEachObjectiveEmissionUntilItStopsTheJob) {
  v1::TuningJobRecord tuning;
  auto* config = tuning.mutable_describe()->mutable_hyper_parameter_tuning_job_config();
  config->set_strategy("Random");
  config->set_training_job_early_stopping_type("Auto");
  config->mutable_hyper_parameter_tuning_job_objective()->set_type("Minimize");
  config->mutable_hyper_parameter_tuning_job_objective()->set_metric_name("loss");
  v1::TrainingJobRecord good = Job("good", 1, "Completed");
  for (int i = 0; i < 5; ++i) good.add_objective_history(1.0);
  v1::TrainingJobRecord job = Job("job", 2, "InProgress");
  const std::vector<const v1::TrainingJobRecord*> jobs = {&good, &job};
  const EarlyStoppingOptions options;
  LogContext context = Tuned();
  context.tuning = &tuning;
  context.tuning_jobs = &jobs;
  context.early_stopping = &options;

  auto out = IngestLogBatch(job, Batch(0, {"loss=9", "loss=9", "loss=9", "loss=9", "loss=9"}),
                            nullptr, context);
  ASSERT_TRUE(out.has_value());
  ASSERT_GT(job.decisions_size(), 0);
  const auto& last = job.decisions(job.decisions_size() - 1);
  EXPECT_TRUE(last.stop());
  EXPECT_EQ(last.rule(), "Median");
  // The first stop is the last decision: later emissions are only recorded.
  for (int i = 0; i + 1 < job.decisions_size(); ++i) EXPECT_FALSE(job.decisions(i).stop());
  EXPECT_THAT(out->stop_message, HasSubstr("Stopping the training job: "));
  EXPECT_THAT(out->stop_message, HasSubstr("loss 9 > 1"));
  EXPECT_THAT(job.objective_history(), SizeIs(5));
  EXPECT_DOUBLE_EQ(last.timestamp(), 100.0 + last.epoch() - 1);

  // A job that is no longer InProgress (Stopping) gets no decision.
  v1::TrainingJobRecord stopping = Job("stopping", 3, "Stopping");
  auto later = IngestLogBatch(stopping, Batch(0, {"loss=9", "loss=9", "loss=9"}), nullptr, context);
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(stopping.decisions_size(), 0);
  EXPECT_THAT(later->stop_message, IsEmpty());
}

}  // namespace
}  // namespace amt::core
