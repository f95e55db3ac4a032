// One training job's definition, in a tuning job or in CreateTrainingJob (validation_internal.h).
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/validation/algorithms.h"
#include "orchestrator/validation/validation_internal.h"
#include "re2/re2.h"

namespace amt::validation::internal {
namespace {

// SageMaker.
constexpr char kMetricRequired[] =
    "A metric is required for this hyperparameter tuning job objective. Provide a metric in the "
    "metric definitions.";
// SageMaker.
constexpr char kMaxWaitWithoutSpot[] =
    "Invalid MaxWaitTimeInSeconds. It is only supported when EnableManagedSpotTraining is set to "
    "true";

// Ours. SageMaker needs one of the two to know what to run; amt-local runs TrainingImage.
template <typename Spec>
absl::Status CheckAlgorithmSpecification(const Spec& spec, int max_metric_definitions) {
  if (!spec.has_training_image() && !spec.has_algorithm_name()) {
    return ValidationError(
        "AlgorithmSpecification must contain a TrainingImage or an AlgorithmName.");
  }
  if (spec.metric_definitions_size() > max_metric_definitions) {  // ours
    return ValidationError(absl::StrCat("The number of MetricDefinitions (",
                                        spec.metric_definitions_size(), ") exceeds the limit of ",
                                        max_metric_definitions, "."));
  }
  for (const v1::MetricDefinition& metric : spec.metric_definitions()) {
    RE2::Options options;
    options.set_log_errors(false);
    const RE2 regex(metric.regex(), options);
    if (!regex.ok()) {  // ours; the error part is RE2's
      return ValidationError(absl::StrCat("Invalid regular expression for metric '", metric.name(),
                                          "' in MetricDefinitions: ", regex.error()));
    }
  }
  return absl::OkStatus();
}

// Ours: the worker makes one directory per channel name, and every channel needs a source.
absl::Status CheckChannels(const google::protobuf::RepeatedPtrField<v1::Channel>& channels) {
  std::set<std::string> seen;
  for (const v1::Channel& channel : channels) {
    if (!seen.insert(channel.channel_name()).second) {
      return ValidationError(absl::StrCat("Channel names must be unique: '", channel.channel_name(),
                                          "' appears more than once in InputDataConfig."));
    }
    if (!channel.data_source().has_s3_data_source() &&
        !channel.data_source().has_file_system_data_source()) {
      return ValidationError(absl::StrCat("The DataSource of channel '", channel.channel_name(),
                                          "' must contain an S3DataSource or a "
                                          "FileSystemDataSource."));
    }
  }
  return absl::OkStatus();
}

// Ours: s3:// URIs are folders under amtd's S3 root (--s3-root), so a bucket or key with a "."
// or ".." segment, which would name a folder outside the bucket or the root once normalised, is
// refused.
absl::Status CheckS3Path(const std::string& member, const std::string& uri) {
  if (!absl::StartsWith(uri, "s3://")) return absl::OkStatus();
  for (absl::string_view segment : absl::StrSplit(absl::string_view(uri).substr(5), '/')) {
    if (segment == "." || segment == "..") {
      return ValidationError(absl::StrCat(
          member, " '", uri, "' has a '", segment,
          "' segment. amt-local keeps s3:// objects in folders under its S3 root (amtd "
          "--s3-root) and refuses paths that would leave their bucket."));
    }
  }
  return absl::OkStatus();
}

template <typename Definition>
absl::Status CheckS3Paths(const Definition& d) {
  for (const v1::Channel& channel : d.input_data_config()) {
    RETURN_IF_ERROR(CheckS3Path("S3Uri", channel.data_source().s3_data_source().s3_uri()));
  }
  RETURN_IF_ERROR(CheckS3Path("S3OutputPath", d.output_data_config().s3_output_path()));
  return CheckS3Path("CheckpointConfig.S3Uri", d.checkpoint_config().s3_uri());
}

// Managed spot (spec section 8): MaxWaitTimeInSeconds only with spot; with spot it is required
// and at least MaxRuntimeInSeconds (one day when absent).
template <typename Definition>
absl::Status CheckManagedSpot(const Definition& d) {
  const v1::StoppingCondition& stopping = d.stopping_condition();
  const bool spot = d.enable_managed_spot_training();
  if (!spot) {
    if (stopping.has_max_wait_time_in_seconds()) return ValidationError(kMaxWaitWithoutSpot);
    return absl::OkStatus();
  }
  if (!stopping.has_max_wait_time_in_seconds()) {  // ours
    return ValidationError(
        "Invalid MaxWaitTimeInSeconds. It is required when EnableManagedSpotTraining is set to "
        "true");
  }
  const int max_runtime = stopping.has_max_runtime_in_seconds() ? stopping.max_runtime_in_seconds()
                                                                : kDefaultMaxRuntimeInSeconds;
  if (stopping.max_wait_time_in_seconds() < max_runtime) {  // ours
    return ValidationError(absl::StrCat(
        "Invalid MaxWaitTimeInSeconds. It must be greater than or equal to MaxRuntimeInSeconds (",
        stopping.max_wait_time_in_seconds(), " < ", max_runtime, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

// One training-job definition's own rules (the objective and ranges that apply to it): what to
// run, the objective among its metrics, its resources, channels, ranges, S3 paths and spot.
// `where` names the definition in the texts about its members.
absl::Status CheckDefinition(const DefinitionView& view, const std::string& where,
                             const Limits& limits, bool autotune) {
  const v1::HyperParameterTrainingJobDefinition& definition = view.definition;
  const v1::HyperParameterAlgorithmSpecification& spec = definition.algorithm_specification();
  RETURN_IF_ERROR(CheckAlgorithmSpecification(spec, limits.max_metric_definitions));
  const std::string& objective = view.objective.metric_name();
  bool objective_defined = false;
  for (const v1::MetricDefinition& metric : spec.metric_definitions()) {
    objective_defined = objective_defined || metric.name() == objective;
  }
  // A built-in algorithm's metrics are SageMaker's own (AddBuiltInMetricDefinitions).
  if (spec.metric_definitions_size() == 0 &&
      IsBuiltInXgboost(spec.training_image(), definition.static_hyper_parameters())) {
    for (const v1::MetricDefinition& metric : BuiltInXgboostMetricDefinitions()) {
      objective_defined = objective_defined || metric.name() == objective;
    }
  }
  if (!objective_defined) return ValidationError(kMetricRequired);
  const bool resource_config = definition.has_resource_config();
  const bool tuning_resource_config = definition.has_hyper_parameter_tuning_resource_config();
  if (resource_config && tuning_resource_config) {  // ours
    return ValidationError(
        absl::StrCat("Provide either ResourceConfig or HyperParameterTuningResourceConfig in ",
                     where, ", not both."));
  }
  if (!resource_config && !tuning_resource_config) {  // ours
    return ValidationError(absl::StrCat(
        "Provide either ResourceConfig or HyperParameterTuningResourceConfig in ", where, "."));
  }
  RETURN_IF_ERROR(CheckChannels(definition.input_data_config()));
  RETURN_IF_ERROR(CheckRanges(view.ranges, definition.static_hyper_parameters(), limits, autotune));
  RETURN_IF_ERROR(CheckS3Paths(definition));
  return CheckManagedSpot(definition);
}

absl::Status CheckTrainingRules(const v1::CreateTrainingJobRequest& r) {
  RETURN_IF_ERROR(CheckAlgorithmSpecification(r.algorithm_specification(), 40));
  RETURN_IF_ERROR(CheckChannels(r.input_data_config()));
  RETURN_IF_ERROR(CheckS3Paths(r));
  return CheckManagedSpot(r);
}

}  // namespace amt::validation::internal
