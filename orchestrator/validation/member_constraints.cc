#include "orchestrator/validation/member_constraints.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "re2/re2.h"

namespace amt::validation {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Patterns as botocore's model (and so SageMaker's messages) spell them. The name patterns carry
// the leading '^' that SageMaker's messages show.
constexpr char kTuningJobNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}";
constexpr char kTrainingJobNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}";
constexpr char kDefinitionNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}";
constexpr char kRoleArnPattern[] = R"(^arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+$)";
constexpr char kS3UriPattern[] = "^(https|s3)://([^/]+)/?(.*)$";
constexpr char kChannelNamePattern[] = R"([A-Za-z0-9\.\-_]+)";
constexpr char kEnvironmentKeyPattern[] = "[a-zA-Z_][a-zA-Z0-9_]*";
constexpr char kEnvironmentValuePattern[] = R"([\S\s]*)";
constexpr char kNameContainsPattern[] = R"([a-zA-Z0-9\-]+)";
constexpr char kAnyLine[] = ".*";
constexpr char kNonEmptyLine[] = ".+";
// amt-local: SageMaker checks InstanceType against a fixed enum of ml.* instance types that grows
// with every instance launch; we accept any name of that form instead, so new types need no
// release. A bad type is therefore reported as a pattern violation, not an enum one.
constexpr char kInstanceTypePattern[] = R"(^ml\.[a-z0-9]+\.[a-z0-9]+$)";

// One member's constraints. Lengths apply to strings (characters), lists (items) and maps
// (entries); `item` constrains the strings of a list of strings, `key`/`value` a map's entries.
struct MemberRule {
  bool required = false;
  std::optional<int64_t> min_length = std::nullopt;
  std::optional<int64_t> max_length = std::nullopt;
  const char* pattern = nullptr;
  std::vector<std::string> enum_values = {};
  std::optional<int64_t> min_value = std::nullopt;
  std::optional<int64_t> max_value = std::nullopt;
  std::optional<StringShape> item = std::nullopt;
  std::optional<StringShape> key = std::nullopt;
  std::optional<StringShape> value = std::nullopt;
};

const std::vector<std::string> kInputModes = {"Pipe", "File", "FastFile"};
const std::vector<std::string> kSortOrders = {"Ascending", "Descending"};
const std::vector<std::string> kTrainingJobStatuses = {"InProgress", "Completed", "Failed",
                                                       "Stopping",   "Stopped",   "Deleting"};
const StringShape kHyperParameterKey{.min_length = 0, .max_length = 256, .pattern = kAnyLine};
const StringShape kHyperParameterValue{.min_length = 0, .max_length = 2500, .pattern = kAnyLine};
const StringShape kEnvironmentKey{.max_length = 512, .pattern = kEnvironmentKeyPattern};
const StringShape kEnvironmentValue{.max_length = 512, .pattern = kEnvironmentValuePattern};

MemberRule TuningJobName(bool required) {
  return {
      .required = required, .min_length = 1, .max_length = 32, .pattern = kTuningJobNamePattern};
}
MemberRule S3Uri(bool required) {
  return {.required = required, .max_length = 1024, .pattern = kS3UriPattern};
}
MemberRule RoleArn() {
  return {.required = true, .min_length = 20, .max_length = 2048, .pattern = kRoleArnPattern};
}
MemberRule MetricDefinitionsList() { return {.min_length = 0, .max_length = 40}; }
MemberRule Channels() { return {.min_length = 1, .max_length = 20}; }
MemberRule Tags() { return {.min_length = 0, .max_length = 50}; }
MemberRule InstanceType(bool required) {
  return {.required = required, .pattern = kInstanceTypePattern};
}
MemberRule AtLeast(int64_t min, bool required = false) {
  return {.required = required, .min_value = min};
}
MemberRule Between(int64_t min, int64_t max, bool required = false) {
  return {.required = required, .min_value = min, .max_value = max};
}
MemberRule OneOf(std::vector<std::string> values, bool required = false) {
  return {.required = required, .enum_values = std::move(values)};
}
MemberRule Required() { return {.required = true}; }
MemberRule HyperParameterMap() {
  return {.max_length = 100, .key = kHyperParameterKey, .value = kHyperParameterValue};
}
MemberRule EnvironmentMap(int64_t max_entries) {
  return {.max_length = max_entries, .key = kEnvironmentKey, .value = kEnvironmentValue};
}
MemberRule RangeBound() { return {.required = true, .max_length = 256, .pattern = kAnyLine}; }
MemberRule NextToken() { return {.max_length = 8192, .pattern = kAnyLine}; }
MemberRule MaxResults() { return Between(1, 100); }
MemberRule NameContains() { return {.max_length = 63, .pattern = kNameContainsPattern}; }

// The constraints of botocore's SageMaker model (see spec sections 3, 5, 6, 8), keyed by the full
// proto field name. Members of amt.v1 shapes not listed here have no constraint we enforce.
using RuleTable = std::map<std::string, MemberRule>;

RuleTable BuildRules() {
  RuleTable t;
  auto add = [&t](const std::string& field, MemberRule rule) {
    t.emplace("amt.v1." + field, std::move(rule));
  };
  // CreateHyperParameterTuningJob.
  add("CreateHyperParameterTuningJobRequest.hyper_parameter_tuning_job_name", TuningJobName(true));
  add("CreateHyperParameterTuningJobRequest.hyper_parameter_tuning_job_config", Required());
  add("CreateHyperParameterTuningJobRequest.training_job_definitions",
      {.min_length = 1, .max_length = 10});
  add("CreateHyperParameterTuningJobRequest.tags", Tags());
  add("HyperParameterTuningJobConfig.strategy",
      OneOf({"Bayesian", "Random", "Hyperband", "Grid"}, true));
  add("HyperParameterTuningJobConfig.resource_limits", Required());
  add("HyperParameterTuningJobConfig.training_job_early_stopping_type", OneOf({"Off", "Auto"}));
  add("HyperParameterTuningJobConfig.random_seed", AtLeast(0));
  add("HyperbandStrategyConfig.min_resource", AtLeast(1));
  add("HyperbandStrategyConfig.max_resource", AtLeast(1));
  add("HyperParameterTuningJobObjective.type", OneOf({"Maximize", "Minimize"}, true));
  add("HyperParameterTuningJobObjective.metric_name",
      {.required = true, .min_length = 1, .max_length = 255, .pattern = kNonEmptyLine});
  add("ResourceLimits.max_number_of_training_jobs", AtLeast(1));
  add("ResourceLimits.max_parallel_training_jobs", AtLeast(1, true));
  add("ResourceLimits.max_runtime_in_seconds", Between(120, 15768000));
  add("ParameterRanges.integer_parameter_ranges", {.min_length = 0, .max_length = 30});
  add("ParameterRanges.continuous_parameter_ranges", {.min_length = 0, .max_length = 30});
  add("ParameterRanges.categorical_parameter_ranges", {.min_length = 0, .max_length = 30});
  add("ParameterRanges.auto_parameters", {.min_length = 0, .max_length = 100});
  for (const std::string shape : {"IntegerParameterRange", "ContinuousParameterRange"}) {
    add(shape + ".name", RangeBound());
    add(shape + ".min_value", RangeBound());
    add(shape + ".max_value", RangeBound());
    add(shape + ".scaling_type", OneOf({"Auto", "Linear", "Logarithmic", "ReverseLogarithmic"}));
  }
  add("CategoricalParameterRange.name", RangeBound());
  add("CategoricalParameterRange.values",
      {.required = true,
       .min_length = 1,
       .max_length = 30,
       .item = StringShape{.max_length = 256, .pattern = kAnyLine}});
  add("AutoParameter.name", RangeBound());
  add("AutoParameter.value_hint", RangeBound());
  add("BestObjectiveNotImproving.max_number_of_training_jobs_not_improving", AtLeast(3));
  add("ConvergenceDetected.complete_on_convergence", OneOf({"Disabled", "Enabled"}));
  add("HyperParameterTuningJobWarmStartConfig.parent_hyper_parameter_tuning_jobs",
      {.required = true, .min_length = 1, .max_length = 5});
  add("HyperParameterTuningJobWarmStartConfig.warm_start_type",
      OneOf({"IdenticalDataAndAlgorithm", "TransferLearning"}, true));
  add("ParentHyperParameterTuningJob.hyper_parameter_tuning_job_name", TuningJobName(false));
  add("Autotune.mode", OneOf({"Enabled"}, true));

  // The training job definition of a tuning job.
  add("HyperParameterTrainingJobDefinition.definition_name",
      {.min_length = 1, .max_length = 64, .pattern = kDefinitionNamePattern});
  add("HyperParameterTrainingJobDefinition.static_hyper_parameters", HyperParameterMap());
  add("HyperParameterTrainingJobDefinition.algorithm_specification", Required());
  add("HyperParameterTrainingJobDefinition.role_arn", RoleArn());
  add("HyperParameterTrainingJobDefinition.input_data_config", Channels());
  add("HyperParameterTrainingJobDefinition.output_data_config", Required());
  add("HyperParameterTrainingJobDefinition.stopping_condition", Required());
  add("HyperParameterTrainingJobDefinition.environment", EnvironmentMap(48));
  add("HyperParameterAlgorithmSpecification.training_image", {.max_length = 255});
  add("HyperParameterAlgorithmSpecification.training_input_mode", OneOf(kInputModes, true));
  add("HyperParameterAlgorithmSpecification.algorithm_name", {.min_length = 1, .max_length = 170});
  add("HyperParameterAlgorithmSpecification.metric_definitions", MetricDefinitionsList());
  add("HyperParameterTuningResourceConfig.instance_type", InstanceType(false));
  add("HyperParameterTuningResourceConfig.instance_count", AtLeast(0));
  add("HyperParameterTuningResourceConfig.volume_size_in_gb", AtLeast(0));
  add("HyperParameterTuningResourceConfig.allocation_strategy", OneOf({"Prioritized"}));
  add("HyperParameterTuningResourceConfig.instance_configs", {.min_length = 1, .max_length = 6});
  add("HyperParameterTuningInstanceConfig.instance_type", InstanceType(true));
  add("HyperParameterTuningInstanceConfig.instance_count", AtLeast(0, true));
  add("HyperParameterTuningInstanceConfig.volume_size_in_gb", AtLeast(0, true));

  // CreateTrainingJob.
  add("CreateTrainingJobRequest.training_job_name",
      {.required = true, .min_length = 1, .max_length = 63, .pattern = kTrainingJobNamePattern});
  add("CreateTrainingJobRequest.hyper_parameters", HyperParameterMap());
  add("CreateTrainingJobRequest.algorithm_specification", Required());
  add("CreateTrainingJobRequest.role_arn", RoleArn());
  add("CreateTrainingJobRequest.input_data_config", Channels());
  add("CreateTrainingJobRequest.output_data_config", Required());
  add("CreateTrainingJobRequest.resource_config", Required());
  add("CreateTrainingJobRequest.stopping_condition", Required());
  add("CreateTrainingJobRequest.tags", Tags());
  add("CreateTrainingJobRequest.environment", EnvironmentMap(100));
  add("AlgorithmSpecification.training_image", {.max_length = 255});
  add("AlgorithmSpecification.algorithm_name", {.min_length = 1, .max_length = 170});
  add("AlgorithmSpecification.training_input_mode", OneOf(kInputModes, true));
  add("AlgorithmSpecification.metric_definitions", MetricDefinitionsList());
  add("AlgorithmSpecification.container_entrypoint",
      {.min_length = 1,
       .max_length = 100,
       .item = StringShape{.min_length = 1, .max_length = 256}});
  add("AlgorithmSpecification.container_arguments",
      {.min_length = 1,
       .max_length = 100,
       .item = StringShape{.min_length = 1, .max_length = 256}});

  // Shapes shared by both.
  add("MetricDefinition.name",
      {.required = true, .min_length = 1, .max_length = 255, .pattern = kNonEmptyLine});
  add("MetricDefinition.regex",
      {.required = true, .min_length = 1, .max_length = 500, .pattern = kNonEmptyLine});
  add("Channel.channel_name",
      {.required = true, .min_length = 1, .max_length = 64, .pattern = kChannelNamePattern});
  add("Channel.data_source", Required());
  add("Channel.content_type", {.max_length = 256});
  add("Channel.compression_type", OneOf({"None", "Gzip"}));
  add("Channel.record_wrapper_type", OneOf({"None", "RecordIO"}));
  add("Channel.input_mode", OneOf(kInputModes));
  add("S3DataSource.s3_data_type",
      OneOf({"S3Prefix", "ManifestFile", "AugmentedManifestFile"}, true));
  add("S3DataSource.s3_uri", S3Uri(true));
  add("S3DataSource.s3_data_distribution_type", OneOf({"FullyReplicated", "ShardedByS3Key"}));
  add("S3DataSource.attribute_names",
      {.max_length = 16, .item = StringShape{.min_length = 1, .max_length = 256}});
  add("OutputDataConfig.kms_key_id", {.max_length = 2048});
  add("OutputDataConfig.s3_output_path", S3Uri(true));
  add("OutputDataConfig.compression_type", OneOf({"GZIP", "NONE"}));
  add("ResourceConfig.instance_type", InstanceType(false));
  add("ResourceConfig.instance_count", AtLeast(0));
  add("ResourceConfig.volume_size_in_gb", AtLeast(0));
  add("ResourceConfig.keep_alive_period_in_seconds", Between(0, 21600));
  add("ResourceConfig.instance_groups", {.max_length = 5});
  add("InstanceGroup.instance_type", InstanceType(true));
  add("InstanceGroup.instance_count", AtLeast(0, true));
  add("InstanceGroup.instance_group_name",
      {.required = true, .min_length = 1, .max_length = 64, .pattern = kNonEmptyLine});
  add("StoppingCondition.max_runtime_in_seconds", AtLeast(1));
  add("StoppingCondition.max_wait_time_in_seconds", AtLeast(1));
  add("StoppingCondition.max_pending_time_in_seconds", Between(7200, 2419200));
  add("CheckpointConfig.s3_uri", S3Uri(true));
  add("CheckpointConfig.local_path", {.max_length = 4096});
  add("RetryStrategy.maximum_retry_attempts", Between(1, 30, true));
  add("Tag.key", {.required = true, .min_length = 1, .max_length = 128});
  add("Tag.value", {.required = true, .min_length = 0, .max_length = 256});

  // List operations.
  add("ListHyperParameterTuningJobsRequest.next_token", NextToken());
  add("ListHyperParameterTuningJobsRequest.max_results", MaxResults());
  add("ListHyperParameterTuningJobsRequest.sort_by", OneOf({"Name", "Status", "CreationTime"}));
  add("ListHyperParameterTuningJobsRequest.sort_order", OneOf(kSortOrders));
  add("ListHyperParameterTuningJobsRequest.name_contains", NameContains());
  add("ListHyperParameterTuningJobsRequest.status_equals",
      OneOf({"Completed", "InProgress", "Failed", "Stopped", "Stopping", "Deleting",
             "DeleteFailed"}));
  add("ListTrainingJobsRequest.next_token", NextToken());
  add("ListTrainingJobsRequest.max_results", MaxResults());
  add("ListTrainingJobsRequest.name_contains", NameContains());
  add("ListTrainingJobsRequest.status_equals", OneOf(kTrainingJobStatuses));
  add("ListTrainingJobsRequest.sort_by", OneOf({"Name", "CreationTime", "Status"}));
  add("ListTrainingJobsRequest.sort_order", OneOf(kSortOrders));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.hyper_parameter_tuning_job_name",
      TuningJobName(true));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.next_token", NextToken());
  add("ListTrainingJobsForHyperParameterTuningJobRequest.max_results", MaxResults());
  add("ListTrainingJobsForHyperParameterTuningJobRequest.status_equals",
      OneOf(kTrainingJobStatuses));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.sort_by",
      OneOf({"Name", "CreationTime", "Status", "FinalObjectiveMetricValue"}));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.sort_order", OneOf(kSortOrders));
  return t;
}

const RuleTable& Rules() {
  static const RuleTable* const rules = new RuleTable(BuildRules());
  return *rules;
}

const MemberRule* FindRule(const FieldDescriptor* field) {
  const auto it = Rules().find(field->full_name());
  return it == Rules().end() ? nullptr : &it->second;
}

// Every pattern of the table, compiled once. RE2 objects are safe to share between threads.
bool FullMatch(const std::string& text, const char* pattern) {
  static const auto* const compiled = [] {
    auto* map = new std::map<std::string, std::unique_ptr<RE2>>();
    const auto add = [map](const char* p) {
      if (p != nullptr && !map->contains(p)) map->emplace(p, std::make_unique<RE2>(p));
    };
    for (const auto& [name, rule] : Rules()) {
      add(rule.pattern);
      for (const auto& shape : {rule.item, rule.key, rule.value}) {
        if (shape) add(shape->pattern);
      }
    }
    return map;
  }();
  const auto it = compiled->find(pattern);
  if (it != compiled->end()) return RE2::FullMatch(text, *it->second);
  return RE2::FullMatch(text, RE2(pattern));
}

std::string LowerCamel(const std::string& json_name) {
  std::string out = json_name;
  if (!out.empty()) out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  return out;
}

std::string Join(const std::string& prefix, const std::string& member) {
  return prefix.empty() ? member : prefix + "." + member;
}

// Violations of a string shape, in the order SageMaker's messages list them for single members:
// pattern, then maximum length, then minimum length.
std::vector<std::string> StringViolations(const std::string& value, const StringShape& shape) {
  std::vector<std::string> out;
  if (shape.pattern != nullptr && !FullMatch(value, shape.pattern)) {
    out.push_back(absl::StrCat("Member must satisfy regular expression pattern: ", shape.pattern));
  }
  const int64_t length = JavaLength(value);
  if (shape.max_length && length > *shape.max_length) {
    out.push_back(
        absl::StrCat("Member must have length less than or equal to ", *shape.max_length));
  }
  if (shape.min_length && length < *shape.min_length) {
    out.push_back(
        absl::StrCat("Member must have length greater than or equal to ", *shape.min_length));
  }
  return out;
}

// All constraints of a shape, as the bracketed list of "Map value must satisfy constraint: [...]"
// (AWS lists maximum length, minimum length, pattern, whether or not each one failed).
std::string DescribeShape(const StringShape& shape) {
  std::vector<std::string> parts;
  if (shape.max_length) {
    parts.push_back(
        absl::StrCat("Member must have length less than or equal to ", *shape.max_length));
  }
  if (shape.min_length) {
    parts.push_back(
        absl::StrCat("Member must have length greater than or equal to ", *shape.min_length));
  }
  if (shape.pattern != nullptr) {
    parts.push_back(
        absl::StrCat("Member must satisfy regular expression pattern: ", shape.pattern));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string RenderMessage(const Message& message);

std::string RenderScalar(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrCat(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrCat(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return rep ? r->GetRepeatedEnum(m, f, index)->name() : r->GetEnum(m, f)->name();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return RenderMessage(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
  }
  return "";
}

// A map as Java's Map.toString, entries sorted by key.
std::string RenderMap(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  const Descriptor* entry = f->message_type();
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < r->FieldSize(m, f); ++i) {
    const Message& e = r->GetRepeatedMessage(m, f, i);
    entries.emplace_back(RenderScalar(e, entry->map_key(), -1),
                         RenderScalar(e, entry->map_value(), -1));
  }
  std::sort(entries.begin(), entries.end());
  return absl::StrCat("{", absl::StrJoin(entries, ", ", absl::PairFormatter("=")), "}");
}

// A list as Java's List.toString.
std::string RenderList(const Message& m, const FieldDescriptor* f) {
  std::vector<std::string> items;
  for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
    items.push_back(RenderScalar(m, f, i));
  }
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

std::string RenderMessage(const Message& message) {
  const Reflection* r = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  std::vector<std::string> parts;
  for (const FieldDescriptor* f : fields) {
    std::string value = f->is_map()        ? RenderMap(message, f)
                        : f->is_repeated() ? RenderList(message, f)
                                           : RenderScalar(message, f, -1);
    parts.push_back(absl::StrCat(f->json_name(), ": ", value));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

void CheckCollectionLength(const std::string& rendered, int size, const std::string& path,
                           const MemberRule& rule, ConstraintViolations* out) {
  if (rule.max_length && size > *rule.max_length) {
    out->Add(rendered, path,
             absl::StrCat("Member must have length less than or equal to ", *rule.max_length));
  }
  if (rule.min_length && size < *rule.min_length) {
    out->Add(rendered, path,
             absl::StrCat("Member must have length greater than or equal to ", *rule.min_length));
  }
}

void CheckMap(const Message& m, const FieldDescriptor* f, const std::string& path,
              const MemberRule* rule, ConstraintViolations* out) {
  const Reflection* r = m.GetReflection();
  const int size = r->FieldSize(m, f);
  // An empty map cannot be told from an absent one on the wire we parse: treat it as absent.
  if (size == 0) {
    if (rule != nullptr && rule->required) out->Add(std::nullopt, path, "Member must not be null");
    return;
  }
  if (rule == nullptr) return;
  const std::string rendered = RenderMap(m, f);
  CheckCollectionLength(rendered, size, path, *rule, out);
  bool bad_key = false;
  bool bad_value = false;
  const Descriptor* entry = f->message_type();
  for (int i = 0; i < size; ++i) {
    const Message& e = r->GetRepeatedMessage(m, f, i);
    if (rule->key && !StringViolations(RenderScalar(e, entry->map_key(), -1), *rule->key).empty()) {
      bad_key = true;
    }
    if (rule->value &&
        !StringViolations(RenderScalar(e, entry->map_value(), -1), *rule->value).empty()) {
      bad_value = true;
    }
  }
  if (bad_key) {
    out->Add(rendered, path,
             absl::StrCat("Map keys must satisfy constraint: ", DescribeShape(*rule->key)));
  }
  if (bad_value) {
    out->Add(rendered, path,
             absl::StrCat("Map value must satisfy constraint: ", DescribeShape(*rule->value)));
  }
}

void CheckRepeated(const Message& m, const FieldDescriptor* f, const std::string& path,
                   const MemberRule* rule, ConstraintViolations* out) {
  const Reflection* r = m.GetReflection();
  const int size = r->FieldSize(m, f);
  // As for maps, an empty list is treated as absent.
  if (size == 0) {
    if (rule != nullptr && rule->required) out->Add(std::nullopt, path, "Member must not be null");
    return;
  }
  if (rule != nullptr) {
    const std::string rendered = RenderList(m, f);
    CheckCollectionLength(rendered, size, path, *rule, out);
    if (rule->item && f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      for (int i = 0; i < size; ++i) {
        if (!StringViolations(r->GetRepeatedString(m, f, i), *rule->item).empty()) {
          out->Add(rendered, path,
                   absl::StrCat("Member must satisfy constraint: ", DescribeShape(*rule->item)));
          break;
        }
      }
    }
  }
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    for (int i = 0; i < size; ++i) {
      CheckMemberConstraints(r->GetRepeatedMessage(m, f, i),
                             absl::StrCat(path, ".", i + 1, ".member"), out);
    }
  }
}

void CheckNumber(int64_t value, const std::string& path, const MemberRule& rule,
                 ConstraintViolations* out) {
  if (rule.min_value && value < *rule.min_value) {
    out->Add(absl::StrCat(value), path,
             absl::StrCat("Member must have value greater than or equal to ", *rule.min_value));
  }
  if (rule.max_value && value > *rule.max_value) {
    out->Add(absl::StrCat(value), path,
             absl::StrCat("Member must have value less than or equal to ", *rule.max_value));
  }
}

void CheckString(const std::string& value, const std::string& path, const MemberRule& rule,
                 ConstraintViolations* out) {
  if (!rule.enum_values.empty() && std::find(rule.enum_values.begin(), rule.enum_values.end(),
                                             value) == rule.enum_values.end()) {
    out->Add(value, path,
             absl::StrCat("Member must satisfy enum value set: [",
                          absl::StrJoin(rule.enum_values, ", "), "]"));
  }
  const StringShape shape{
      .min_length = rule.min_length, .max_length = rule.max_length, .pattern = rule.pattern};
  for (const std::string& violation : StringViolations(value, shape)) {
    out->Add(value, path, violation);
  }
}

}  // namespace

const StringShape& TuningJobNameShape() {
  static const StringShape shape{
      .min_length = 1, .max_length = 32, .pattern = kTuningJobNamePattern};
  return shape;
}

const StringShape& TrainingJobNameShape() {
  static const StringShape shape{
      .min_length = 1, .max_length = 63, .pattern = kTrainingJobNamePattern};
  return shape;
}

void ConstraintViolations::Add(const std::optional<std::string>& value, const std::string& path,
                               const std::string& constraint) {
  messages_.push_back(absl::StrCat(value ? absl::StrCat("Value '", *value, "'") : "Value null",
                                   " at '", path, "' failed to satisfy constraint: ", constraint));
}

absl::Status ConstraintViolations::ToStatus() const {
  if (messages_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      messages_.size(),
      messages_.size() == 1 ? " validation error detected: " : " validation errors detected: ",
      absl::StrJoin(messages_, "; ")));
}

void CheckStringMember(const std::optional<std::string>& value, const std::string& path,
                       const StringShape& shape, bool required, ConstraintViolations* out) {
  if (!value) {
    if (required) out->Add(std::nullopt, path, "Member must not be null");
    return;
  }
  for (const std::string& violation : StringViolations(*value, shape)) {
    out->Add(*value, path, violation);
  }
}

void CheckMemberConstraints(const Message& message, const std::string& prefix,
                            ConstraintViolations* out) {
  const Descriptor* d = message.GetDescriptor();
  const Reflection* r = message.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = Join(prefix, LowerCamel(f->json_name()));
    const MemberRule* rule = FindRule(f);
    if (f->is_map()) {
      CheckMap(message, f, path, rule, out);
      continue;
    }
    if (f->is_repeated()) {
      CheckRepeated(message, f, path, rule, out);
      continue;
    }
    if (!r->HasField(message, f)) {
      if (rule != nullptr && rule->required) {
        out->Add(std::nullopt, path, "Member must not be null");
      }
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        CheckMemberConstraints(r->GetMessage(message, f), path, out);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        if (rule != nullptr) CheckString(r->GetString(message, f), path, *rule, out);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        if (rule != nullptr) CheckNumber(r->GetInt32(message, f), path, *rule, out);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        if (rule != nullptr) CheckNumber(r->GetInt64(message, f), path, *rule, out);
        break;
      default:  // booleans and floating-point members carry no constraint in the model
        break;
    }
  }
}

int64_t JavaLength(const std::string& utf8) {
  int64_t length = 0;
  for (const char c : utf8) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte
    length += byte >= 0xF0 ? 2 : 1;       // a 4-byte sequence is a UTF-16 surrogate pair
  }
  return length;
}

}  // namespace amt::validation
