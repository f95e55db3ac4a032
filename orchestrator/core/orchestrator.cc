#include "orchestrator/core/orchestrator.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "common/arn.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/core/listing.h"
#include "orchestrator/core/tuning_job.h"
#include "orchestrator/validation/validation.h"

namespace amt::core {
namespace {

constexpr char kTuningObjectiveKey[] = "_tuning_objective_metric";
constexpr double kDefaultMaxRuntimeSeconds = 86400;  // SageMaker's default: one day

std::string Key(const std::string& name) { return absl::AsciiStrToLower(name); }

bool TuningActive(const v1::TuningJobRecord& t) {
  const auto& s = t.describe().hyper_parameter_tuning_job_status();
  return s == "InProgress" || s == "Stopping";
}

v1::AlgorithmSpecification FromTuningSpec(const v1::HyperParameterAlgorithmSpecification& a) {
  v1::AlgorithmSpecification out;
  if (a.has_training_image()) out.set_training_image(a.training_image());
  if (a.has_algorithm_name()) out.set_algorithm_name(a.algorithm_name());
  if (a.has_training_input_mode()) out.set_training_input_mode(a.training_input_mode());
  *out.mutable_metric_definitions() = a.metric_definitions();
  return out;
}

// The training job's ResourceConfig: the definition's, or the first instance config of a
// HyperParameterTuningResourceConfig.
v1::ResourceConfig ResourceConfigOf(const v1::HyperParameterTrainingJobDefinition& def) {
  if (def.has_resource_config()) return def.resource_config();
  v1::ResourceConfig rc;
  const auto& h = def.hyper_parameter_tuning_resource_config();
  if (h.has_instance_type()) rc.set_instance_type(h.instance_type());
  if (h.has_instance_count()) rc.set_instance_count(h.instance_count());
  if (h.has_volume_size_in_gb()) rc.set_volume_size_in_gb(h.volume_size_in_gb());
  if (!h.has_instance_type() && h.instance_configs_size() > 0) {
    const auto& ic = h.instance_configs(0);
    rc.set_instance_type(ic.instance_type());
    rc.set_instance_count(ic.instance_count());
    rc.set_volume_size_in_gb(ic.volume_size_in_gb());
  }
  return rc;
}

v1::TrainingJobSummary ListSummaryOf(const v1::TrainingJobRecord& job) {
  const auto& d = job.describe();
  v1::TrainingJobSummary s;
  s.set_training_job_name(d.training_job_name());
  s.set_training_job_arn(d.training_job_arn());
  s.set_creation_time(d.creation_time());
  if (d.has_training_end_time()) s.set_training_end_time(d.training_end_time());
  s.set_last_modified_time(d.last_modified_time());
  s.set_training_job_status(d.training_job_status());
  s.set_secondary_status(d.secondary_status());
  return s;
}

v1::HyperParameterTuningJobSummary ListSummaryOf(const v1::TuningJobRecord& t) {
  const auto& d = t.describe();
  v1::HyperParameterTuningJobSummary s;
  s.set_hyper_parameter_tuning_job_name(d.hyper_parameter_tuning_job_name());
  s.set_hyper_parameter_tuning_job_arn(d.hyper_parameter_tuning_job_arn());
  s.set_hyper_parameter_tuning_job_status(d.hyper_parameter_tuning_job_status());
  s.set_strategy(d.hyper_parameter_tuning_job_config().strategy());
  s.set_creation_time(d.creation_time());
  if (d.has_hyper_parameter_tuning_end_time()) {
    s.set_hyper_parameter_tuning_end_time(d.hyper_parameter_tuning_end_time());
  }
  s.set_last_modified_time(d.last_modified_time());
  *s.mutable_training_job_status_counters() = d.training_job_status_counters();
  *s.mutable_objective_status_counters() = d.objective_status_counters();
  *s.mutable_resource_limits() = d.hyper_parameter_tuning_job_config().resource_limits();
  return s;
}

// "Continuous", "Integer" or "Categorical" for each tunable hyperparameter; Auto ranges count as
// "Auto" (their type is decided by SageMaker).
std::map<std::string, std::string> TunableTypes(const v1::ParameterRanges& ranges) {
  std::map<std::string, std::string> out;
  for (const auto& r : ranges.continuous_parameter_ranges()) out[r.name()] = "Continuous";
  for (const auto& r : ranges.integer_parameter_ranges()) out[r.name()] = "Integer";
  for (const auto& r : ranges.categorical_parameter_ranges()) out[r.name()] = "Categorical";
  for (const auto& r : ranges.auto_parameters()) out[r.name()] = "Auto";
  return out;
}

// Static plus tunable hyperparameters, without the objective AMT adds to the statics.
size_t HyperParameterCount(const v1::HyperParameterTrainingJobDefinition& definition,
                           const v1::ParameterRanges& ranges) {
  size_t n = TunableTypes(ranges).size();
  for (const auto& [name, value] : definition.static_hyper_parameters()) {
    n += name == kTuningObjectiveKey ? 0 : 1;
  }
  return n;
}

// Warm start's "changes" from a parent (spec §4): a hyperparameter tunable in the parent and
// static here counts 1, or its number of values when categorical; a static value changed counts 2.
int WarmStartChanges(const v1::HyperParameterTrainingJobDefinition& parent_definition,
                     const v1::ParameterRanges& parent_ranges,
                     const v1::HyperParameterTrainingJobDefinition& definition) {
  const auto& statics = definition.static_hyper_parameters();
  const auto& parent_statics = parent_definition.static_hyper_parameters();
  std::map<std::string, int> weight;  // parent's tunables: what making them static costs
  for (const auto& [name, type] : TunableTypes(parent_ranges)) weight[name] = 1;
  for (const auto& r : parent_ranges.categorical_parameter_ranges()) {
    weight[r.name()] = r.values_size();
  }
  int changes = 0;
  for (const auto& [name, value] : statics) {
    if (name == kTuningObjectiveKey) continue;
    if (auto w = weight.find(name); w != weight.end()) {
      changes += w->second;
    } else if (auto p = parent_statics.find(name);
               p != parent_statics.end() && p->second != value) {
      changes += 2;
    }
  }
  return changes;
}

// Why `job` was stopped, for people watching a tuning job (WatchHyperParameterTuningJob's
// StopReasons); "" when it was not. An early stop quotes the decision that took it.
std::string StopReasonOf(const v1::TrainingJobRecord& job, const v1::TuningJobRecord& tuning) {
  const std::string& cause = job.stop_cause();
  if (cause == StopCauseName(StopCause::kEarlyStopping)) {
    for (auto d = job.decisions().rbegin(); d != job.decisions().rend(); ++d) {
      if (!d->stop()) continue;
      std::string text = d->explanation();
      if (absl::EndsWith(text, ": stop")) text.resize(text.size() - 6);
      return (d->rule() == "Median" ? "median rule, " : "Hyperband, ") + text;
    }
    return "early stopping";
  }
  if (cause == StopCauseName(StopCause::kUser)) return "StopTrainingJob";
  if (cause == StopCauseName(StopCause::kMaxRuntime)) return "MaxRuntimeInSeconds reached";
  if (cause == StopCauseName(StopCause::kTuningJob)) {
    if (tuning.stop_requested()) return "the tuning job was stopped";
    const std::string& end = tuning.end_cause();
    if (end == "target") return "the tuning job reached TargetObjectiveMetricValue";
    if (end == "not_improving") return "the tuning job's best objective stopped improving";
    if (end == "runtime") return "the tuning job reached its MaxRuntimeInSeconds";
    if (end == "failed") return "the tuning job failed";
    return "the tuning job ended";
  }
  return "";
}

absl::Status TrainingJobNotFound() { return ValidationError("Requested resource not found."); }

absl::Status TuningJobNotFound(const std::string& name) {
  return ResourceNotFoundError("Amazon SageMaker can't find a tuning job called " + name +
                               ". Type another name.");
}

}  // namespace

Orchestrator::Orchestrator(OrchestratorOptions options, store::Store& store, const Clock& clock,
                           Timers& timers)
    : options_(std::move(options)), store_(store), clock_(clock), timers_(timers) {}

Orchestrator::~Orchestrator() {
  for (auto& [key, rt] : job_rt_) {
    timers_.Cancel(rt.runtime_timer);
    timers_.Cancel(rt.lost_timer);
  }
  for (auto& [key, rt] : tuning_rt_) timers_.Cancel(rt.runtime_timer);
}

// ---------------------------------------------------------------- lookups and persistence

v1::TrainingJobRecord* Orchestrator::FindTraining(const std::string& name) {
  auto it = training_.find(Key(name));
  return it == training_.end() ? nullptr : &it->second;
}

v1::TuningJobRecord* Orchestrator::FindTuning(const std::string& name) {
  auto it = tuning_.find(Key(name));
  return it == tuning_.end() ? nullptr : &it->second;
}

std::vector<const v1::TrainingJobRecord*> Orchestrator::JobsOf(
    const v1::TuningJobRecord& tuning) const {
  std::vector<const v1::TrainingJobRecord*> out;
  auto it = tuning_children_.find(Key(tuning.describe().hyper_parameter_tuning_job_name()));
  if (it == tuning_children_.end()) return out;
  for (const auto& key : it->second) {
    if (auto j = training_.find(key); j != training_.end()) out.push_back(&j->second);
  }
  return out;
}

absl::Status Orchestrator::PutTraining(const v1::TrainingJobRecord& job) {
  return store_.PutTrainingJob(job);
}

absl::Status Orchestrator::PutTuning(const v1::TuningJobRecord& tuning) {
  return store_.PutTuningJob(tuning);
}

Orchestrator::JobRuntime& Orchestrator::Rt(const v1::TrainingJobRecord& job) {
  auto& rt = job_rt_[Key(job.describe().training_job_name())];
  if (!rt.parser.has_value()) {
    auto parser = metrics::MetricParser::Create(
        job.describe().algorithm_specification().metric_definitions());
    // Definitions were validated at creation; an empty parser keeps a bad record from crashing
    // amtd.
    rt.parser = parser.ok() ? std::move(*parser)
                            : *metrics::MetricParser::Create(
                                  google::protobuf::RepeatedPtrField<v1::MetricDefinition>());
    if (!job.tuning_job_name().empty()) {
      if (const auto* t = FindTuning(job.tuning_job_name())) {
        rt.objective_metric = t->describe()
                                  .hyper_parameter_tuning_job_config()
                                  .hyper_parameter_tuning_job_objective()
                                  .metric_name();
      }
    }
  }
  return rt;
}

Orchestrator::TuningRuntime& Orchestrator::TuningRt(const v1::TuningJobRecord& tuning) {
  return tuning_rt_[Key(tuning.describe().hyper_parameter_tuning_job_name())];
}

absl::Status Orchestrator::EnsureStrategy(const v1::TuningJobRecord& tuning) {
  auto& rt = TuningRt(tuning);
  if (rt.strategy) return absl::OkStatus();
  const auto& config = tuning.describe().hyper_parameter_tuning_job_config();
  auto space = search::SearchSpace::FromProto(config.parameter_ranges());
  if (!space.ok()) return ValidationError(std::string(space.status().message()));
  auto strategy = search::MakeStrategy(config.strategy(), std::move(*space), tuning.seed(),
                                       WarmStartObservations(tuning));
  if (!strategy.ok()) {
    if (strategy.status().code() == absl::StatusCode::kUnimplemented) {
      return ValidationError("The " + config.strategy() +
                             " strategy is not available in this version of amt-local yet. Use "
                             "Random or Grid.");
    }
    return strategy.status();
  }
  rt.strategy = std::move(*strategy);
  return absl::OkStatus();
}

absl::Status Orchestrator::ValidateWarmStart(
    const v1::CreateHyperParameterTuningJobRequest& request) {
  // SageMaker's texts for these rules are UNCONFIRMED (spec §4): the wording is ours.
  const auto& config = request.hyper_parameter_tuning_job_config();
  if (config.strategy() != "Bayesian" && config.strategy() != "Random") {
    return ValidationError(
        "Warm start is available for the Bayesian and Random strategies; this "
        "tuning job uses " +
        config.strategy() + ".");
  }
  const auto& objective = config.hyper_parameter_tuning_job_objective();
  const auto types = TunableTypes(config.parameter_ranges());
  const size_t count =
      HyperParameterCount(request.training_job_definition(), config.parameter_ranges());
  for (const auto& parent : request.warm_start_config().parent_hyper_parameter_tuning_jobs()) {
    const std::string& name = parent.hyper_parameter_tuning_job_name();
    const auto* p = FindTuning(name);
    if (p == nullptr) return TuningJobNotFound(name);
    const auto& pd = p->describe();
    const std::string& status = pd.hyper_parameter_tuning_job_status();
    if (status != "Completed" && status != "Stopped" && status != "Failed") {
      return ValidationError("The parent tuning job " + name + " is " + status +
                             "; warm start needs parent tuning jobs that are Completed, Stopped "
                             "or Failed.");
    }
    const auto& pconfig = pd.hyper_parameter_tuning_job_config();
    const auto& pobjective = pconfig.hyper_parameter_tuning_job_objective();
    if (pobjective.metric_name() != objective.metric_name() ||
        pobjective.type() != objective.type()) {
      return ValidationError("The parent tuning job " + name + " has the objective " +
                             pobjective.type() + " " + pobjective.metric_name() +
                             "; warm start needs the same objective as this tuning job, " +
                             objective.type() + " " + objective.metric_name() + ".");
    }
    const size_t pcount =
        HyperParameterCount(pd.training_job_definition(), pconfig.parameter_ranges());
    if (pcount != count) {
      return ValidationError("The parent tuning job " + name + " has " + std::to_string(pcount) +
                             " static and tunable hyperparameters and this tuning job has " +
                             std::to_string(count) +
                             "; warm start needs the same number (a hyperparameter may move "
                             "between static and tunable).");
    }
    if (const int changes =
            WarmStartChanges(pd.training_job_definition(), pconfig.parameter_ranges(),
                             request.training_job_definition());
        changes > 10) {
      return ValidationError(
          "This tuning job makes " + std::to_string(changes) +
          " changes to the hyperparameters of the parent tuning job " + name +
          "; warm start allows at most 10 (a tunable hyperparameter made static counts 1, or its "
          "number of values when categorical; a changed static value counts 2).");
    }
    for (const auto& [hp, type] : TunableTypes(pconfig.parameter_ranges())) {
      const auto mine = types.find(hp);
      if (mine != types.end() && mine->second != type && mine->second != "Auto" && type != "Auto") {
        return ValidationError("The hyperparameter " + hp + " is " + type +
                               " in the parent tuning job " + name + " and " + mine->second +
                               " here; warm start does not allow changing its type.");
      }
    }
  }
  return absl::OkStatus();
}

std::vector<search::PriorObservation> Orchestrator::WarmStartObservations(
    const v1::TuningJobRecord& tuning) {
  std::vector<search::PriorObservation> out;
  const auto& d = tuning.describe();
  if (!d.has_warm_start_config()) return out;
  const auto types = TunableTypes(d.hyper_parameter_tuning_job_config().parameter_ranges());
  for (const auto& parent : d.warm_start_config().parent_hyper_parameter_tuning_jobs()) {
    const auto* p = FindTuning(parent.hyper_parameter_tuning_job_name());
    if (p == nullptr) continue;
    for (const auto* job : JobsOf(*p)) {
      if (job->objective_status() != "Succeeded" || !job->has_objective()) continue;
      search::PriorObservation observation;
      observation.objective = job->objective();
      // Every hyperparameter tunable here, whether the parent tuned it or held it static.
      const auto& hps = job->describe().hyper_parameters();
      for (const auto& [name, type] : types) {
        if (auto it = hps.find(name); it != hps.end()) observation.params[name] = it->second;
      }
      out.push_back(std::move(observation));
    }
  }
  return out;
}

void Orchestrator::Notify(const std::string& tuning_job, const std::string& training_job) {
  const auto listeners = listeners_;  // a listener may unsubscribe itself
  for (const auto& [id, fn] : listeners) fn(tuning_job, training_job);
}

uint64_t Orchestrator::Subscribe(Listener listener) {
  const uint64_t id = next_listener_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void Orchestrator::Unsubscribe(uint64_t id) { listeners_.erase(id); }

// ---------------------------------------------------------------- restart

absl::Status Orchestrator::Load() {
  auto tunings = store_.ListTuningJobs();
  if (!tunings.ok()) return tunings.status();
  auto trainings = store_.ListTrainingJobs();
  if (!trainings.ok()) return trainings.status();
  for (auto& t : *tunings) {
    const std::string key = Key(t.describe().hyper_parameter_tuning_job_name());
    tuning_order_.push_back(key);
    tuning_.emplace(key, std::move(t));
  }
  for (auto& j : *trainings) {
    const std::string key = Key(j.describe().training_job_name());
    training_order_.push_back(key);
    if (!j.tuning_job_name().empty()) tuning_children_[Key(j.tuning_job_name())].push_back(key);
    training_.emplace(key, std::move(j));
  }
  for (auto& [tkey, children] : tuning_children_) {
    std::sort(children.begin(), children.end(), [this](const std::string& a, const std::string& b) {
      return training_.at(a).index() < training_.at(b).index();
    });
  }
  const double now = clock_.Now();
  for (const auto& key : training_order_) {
    auto& job = training_.at(key);
    if (IsTerminal(job)) continue;
    ArmMaxWait(job);
    if (!job.worker_id().empty()) {
      // Running when amtd stopped: its worker may reconnect and re-adopt it.
      ArmLostTimer(job);
      ArmRuntimeDeadline(job);
    } else if (job.describe().training_job_status() == kStopping) {
      MarkStoppedBeforeStart(job, StopCause::kUser, now);
      RETURN_IF_ERROR(PutTraining(job));
      OnTrainingJobEnded(job);
    } else {
      waiting_.push_back(key);
    }
  }
  for (const auto& key : tuning_order_) {
    auto& t = tuning_.at(key);
    if (!TuningActive(t)) continue;
    auto status = EnsureStrategy(t);
    if (!status.ok()) {
      BeginEndingTuning(t, "failed");
      continue;
    }
    ArmTuningRuntime(t);
    EndTuningIfDone(t);
  }
  Schedule();
  return absl::OkStatus();
}

// ---------------------------------------------------------------- tuning jobs

absl::StatusOr<v1::CreateHyperParameterTuningJobResponse> Orchestrator::CreateTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& request) {
  const std::string& name = request.hyper_parameter_tuning_job_name();
  if (FindTuning(name) != nullptr) {
    return ResourceInUseError("A hyperparameter tuning job with the name, " + name +
                              ", already exists. Choose a different name.");
  }
  if (request.has_warm_start_config()) RETURN_IF_ERROR(ValidateWarmStart(request));
  const double now = clock_.Now();
  v1::TuningJobRecord t;
  auto* d = t.mutable_describe();
  d->set_hyper_parameter_tuning_job_name(name);
  d->set_hyper_parameter_tuning_job_arn(TuningJobArn(options_.arn, name));
  *d->mutable_hyper_parameter_tuning_job_config() = request.hyper_parameter_tuning_job_config();
  *d->mutable_training_job_definition() = request.training_job_definition();
  // SageMaker adds the objective to the static hyperparameters it echoes and passes on.
  (*d->mutable_training_job_definition()->mutable_static_hyper_parameters())[kTuningObjectiveKey] =
      request.hyper_parameter_tuning_job_config()
          .hyper_parameter_tuning_job_objective()
          .metric_name();
  if (request.has_warm_start_config())
    *d->mutable_warm_start_config() = request.warm_start_config();
  *d->mutable_tags() = request.tags();
  d->set_hyper_parameter_tuning_job_status("InProgress");
  d->set_creation_time(now);
  d->set_last_modified_time(now);
  d->mutable_training_job_status_counters();
  d->mutable_objective_status_counters();
  d->mutable_tuning_job_completion_details();
  d->mutable_consumed_resources();
  const auto& config = request.hyper_parameter_tuning_job_config();
  t.set_seed(config.has_random_seed() ? static_cast<uint64_t>(config.random_seed())
                                      : (options_.seed_source ? options_.seed_source()
                                                              : static_cast<uint64_t>(now * 1000)));

  if (config.strategy() == "Hyperband") {
    auto max_resource = validation::HyperbandMaxResource(request);
    if (!max_resource.ok()) return max_resource.status();
    const auto& hb = config.strategy_config().hyperband_strategy_config();
    t.set_hyperband_min_resource(hb.has_min_resource() ? hb.min_resource() : 1);
    t.set_hyperband_max_resource(*max_resource);
  }
  RETURN_IF_ERROR(EnsureStrategy(t));
  auto& rt = TuningRt(t);
  if (config.resource_limits().has_max_number_of_training_jobs()) {
    t.set_max_jobs(config.resource_limits().max_number_of_training_jobs());
  } else if (auto max = rt.strategy->MaxTrials(); max.has_value()) {
    t.set_max_jobs(static_cast<int>(*max));
  } else {
    tuning_rt_.erase(Key(name));
    return ValidationError("ResourceLimits.MaxNumberOfTrainingJobs is required for the " +
                           config.strategy() + " strategy.");
  }
  if (auto status = PutTuning(t); !status.ok()) {
    tuning_rt_.erase(Key(name));
    return status;
  }
  const std::string key = Key(name);
  tuning_order_.push_back(key);
  tuning_children_[key];
  auto& stored = tuning_.emplace(key, std::move(t)).first->second;

  ArmTuningRuntime(stored);
  v1::CreateHyperParameterTuningJobResponse response;
  response.set_hyper_parameter_tuning_job_arn(stored.describe().hyper_parameter_tuning_job_arn());
  Schedule();
  Notify(name, "");
  return response;
}

absl::StatusOr<v1::DescribeHyperParameterTuningJobResponse> Orchestrator::DescribeTuningJob(
    const std::string& name) {
  const auto* t = FindTuning(name);
  if (t == nullptr) return TuningJobNotFound(name);
  v1::DescribeHyperParameterTuningJobResponse d = t->describe();
  // OverallBestTrainingJob: with IdenticalDataAndAlgorithm, the best of this job's and its
  // parents' training jobs (the parents' own parents are not looked at, as in SageMaker).
  if (d.has_warm_start_config() &&
      d.warm_start_config().warm_start_type() == "IdenticalDataAndAlgorithm") {
    const std::string& type =
        d.hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective().type();
    const v1::HyperParameterTrainingJobSummary* best =
        d.has_best_training_job() ? &d.best_training_job() : nullptr;
    for (const auto& parent : d.warm_start_config().parent_hyper_parameter_tuning_jobs()) {
      const auto* p = FindTuning(parent.hyper_parameter_tuning_job_name());
      if (p == nullptr || !p->describe().has_best_training_job()) continue;
      const auto& candidate = p->describe().best_training_job();
      if (best == nullptr ||
          Better(candidate.final_hyper_parameter_tuning_job_objective_metric().value(),
                 best->final_hyper_parameter_tuning_job_objective_metric().value(), type)) {
        best = &candidate;
      }
    }
    if (best != nullptr) *d.mutable_overall_best_training_job() = *best;
  }
  if (!d.has_hyper_parameter_tuning_end_time()) {
    d.mutable_consumed_resources()->set_runtime_in_seconds(
        static_cast<int>(std::max(0.0, clock_.Now() - d.creation_time())));
  }
  return d;
}

absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> Orchestrator::ListTuningJobs(
    const v1::ListHyperParameterTuningJobsRequest& request) {
  std::vector<v1::HyperParameterTuningJobSummary> all;
  all.reserve(tuning_order_.size());
  for (const auto& key : tuning_order_) all.push_back(ListSummaryOf(tuning_.at(key)));
  return core::ListTuningJobs(all, request);
}

absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse>
Orchestrator::ListTrainingJobsForTuningJob(
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& request) {
  const auto* t = FindTuning(request.hyper_parameter_tuning_job_name());
  if (t == nullptr) return TuningJobNotFound(request.hyper_parameter_tuning_job_name());
  const auto& objective =
      t->describe().hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective();
  std::vector<v1::HyperParameterTrainingJobSummary> all;
  for (const auto* job : JobsOf(*t)) all.push_back(SummaryOf(*job, objective));
  return core::ListTuningTrainingJobs(all, request);
}

absl::StatusOr<v1::WatchHyperParameterTuningJobResponse> Orchestrator::Snapshot(
    const std::string& tuning_job_name) {
  auto describe = DescribeTuningJob(tuning_job_name);
  if (!describe.ok()) return describe.status();
  const auto* t = FindTuning(tuning_job_name);
  v1::WatchHyperParameterTuningJobResponse out;
  *out.mutable_tuning_job() = *describe;
  const auto& objective =
      t->describe().hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective();
  out.set_warm_start_observations(static_cast<int32_t>(WarmStartObservations(*t).size()));
  for (const auto* job : JobsOf(*t)) {
    *out.add_training_jobs() = SummaryOf(*job, objective);
    if (std::string reason = StopReasonOf(*job, *t); !reason.empty()) {
      (*out.mutable_stop_reasons())[job->describe().training_job_name()] = std::move(reason);
    }
  }
  return out;
}

absl::Status Orchestrator::StopTuningJob(const std::string& name) {
  auto* t = FindTuning(name);
  if (t == nullptr) return TuningJobNotFound(name);
  const auto& status = t->describe().hyper_parameter_tuning_job_status();
  if (status == "Stopping") return absl::OkStatus();
  if (status != "InProgress") {
    // Our wording (SageMaker's text for this case is UNCONFIRMED).
    return ValidationError("The request was rejected because the tuning job is in status " +
                           status + ".");
  }
  t->set_stop_requested(true);
  t->mutable_describe()->set_hyper_parameter_tuning_job_status("Stopping");
  t->mutable_describe()->set_last_modified_time(clock_.Now());
  RETURN_IF_ERROR(PutTuning(*t));
  for (const auto* job : JobsOf(*t)) {
    if (!IsTerminal(*job)) {
      StopRunningJob(*FindTraining(job->describe().training_job_name()), StopCause::kTuningJob);
    }
  }
  EndTuningIfDone(*t);
  Notify(name, "");
  return absl::OkStatus();
}

// ---------------------------------------------------------------- training jobs

absl::StatusOr<v1::CreateTrainingJobResponse> Orchestrator::CreateTrainingJob(
    const v1::CreateTrainingJobRequest& request) {
  const std::string& name = request.training_job_name();
  if (const auto* existing = FindTraining(name)) {
    return ResourceInUseError(
        "Training job names must be unique within an AWS account and region, and a training job "
        "with this name already exists (" +
        existing->describe().training_job_arn() + ")");
  }
  v1::TrainingJobRecord job;
  auto* d = job.mutable_describe();
  d->set_training_job_name(name);
  d->set_training_job_arn(TrainingJobArn(options_.arn, name));
  *d->mutable_hyper_parameters() = request.hyper_parameters();
  *d->mutable_algorithm_specification() = request.algorithm_specification();
  d->set_role_arn(request.role_arn());
  *d->mutable_input_data_config() = request.input_data_config();
  *d->mutable_output_data_config() = request.output_data_config();
  *d->mutable_resource_config() = request.resource_config();
  if (request.has_vpc_config()) *d->mutable_vpc_config() = request.vpc_config();
  *d->mutable_stopping_condition() = request.stopping_condition();
  if (request.has_enable_network_isolation())
    d->set_enable_network_isolation(request.enable_network_isolation());
  if (request.has_enable_inter_container_traffic_encryption()) {
    d->set_enable_inter_container_traffic_encryption(
        request.enable_inter_container_traffic_encryption());
  }
  if (request.has_enable_managed_spot_training()) {
    d->set_enable_managed_spot_training(request.enable_managed_spot_training());
    job.set_spot_discount(options_.spot.discount);
  }
  if (request.has_checkpoint_config())
    *d->mutable_checkpoint_config() = request.checkpoint_config();
  *d->mutable_environment() = request.environment();
  if (request.has_retry_strategy()) *d->mutable_retry_strategy() = request.retry_strategy();
  *d->mutable_tags() = request.tags();
  d->mutable_model_artifacts()->set_s3_model_artifacts(ModelArtifactUri(*d));
  MarkCreated(job, clock_.Now());
  RETURN_IF_ERROR(PutTraining(job));
  const std::string key = Key(name);
  training_order_.push_back(key);
  ArmMaxWait(training_.emplace(key, std::move(job)).first->second);
  waiting_.push_back(key);
  v1::CreateTrainingJobResponse response;
  response.set_training_job_arn(training_.at(key).describe().training_job_arn());
  Schedule();
  Notify("", name);
  return response;
}

absl::StatusOr<v1::DescribeTrainingJobResponse> Orchestrator::DescribeTrainingJob(
    const std::string& name) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  return job->describe();
}

absl::StatusOr<v1::ListTrainingJobsResponse> Orchestrator::ListTrainingJobs(
    const v1::ListTrainingJobsRequest& request) {
  std::vector<v1::TrainingJobSummary> all;
  all.reserve(training_order_.size());
  for (const auto& key : training_order_) all.push_back(ListSummaryOf(training_.at(key)));
  return core::ListTrainingJobs(all, request);
}

absl::Status Orchestrator::StopTrainingJob(const std::string& name) {
  auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  const auto& status = job->describe().training_job_status();
  if (status == kStopping) return absl::OkStatus();
  if (IsTerminal(*job)) {
    // Our wording (SageMaker's text for this case is UNCONFIRMED).
    return ValidationError("The request was rejected because the training job is in status " +
                           status + ".");
  }
  StopRunningJob(*job, StopCause::kUser);
  Schedule();
  Notify(job->tuning_job_name(), name);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<store::LogEntry>> Orchestrator::ReadLogs(const std::string& name,
                                                                    int64_t from, int limit) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  return store_.ReadLogs(job->describe().training_job_name(), from, limit);
}

// ---------------------------------------------------------------- scheduling

std::map<std::string, Orchestrator::Worker>::iterator Orchestrator::FreeWorker() {
  auto best = workers_.end();
  int best_free = 0;
  for (auto it = workers_.begin(); it != workers_.end(); ++it) {
    const int free = it->second.slots - static_cast<int>(it->second.jobs.size());
    if (free > best_free) {
      best = it;
      best_free = free;
    }
  }
  return best;
}

void Orchestrator::Schedule() {
  // Jobs already accepted come first: standalone CreateTrainingJob requests and tuning trials
  // that were created but not placed (after a restart), oldest first.
  while (!waiting_.empty()) {
    const auto worker = FreeWorker();
    if (worker == workers_.end()) break;
    const std::string key = waiting_.front();
    waiting_.pop_front();
    auto it = training_.find(key);
    if (it == training_.end() || IsTerminal(it->second) || !it->second.worker_id().empty())
      continue;
    Launch(it->second, worker->first, worker->second);
  }
  for (const auto& key : tuning_order_) {
    auto& t = tuning_.at(key);
    while (t.describe().hyper_parameter_tuning_job_status() == "InProgress" &&
           t.end_cause().empty() && t.launched() < t.max_jobs()) {
      const auto jobs = JobsOf(t);
      const int parallel = t.describe()
                               .hyper_parameter_tuning_job_config()
                               .resource_limits()
                               .max_parallel_training_jobs();
      if (RunningJobs(jobs) >= std::max(1, parallel)) break;
      const auto worker = FreeWorker();
      if (worker == workers_.end()) return;
      if (!LaunchNextTrial(t, worker->first, worker->second).ok()) break;
    }
  }
}

absl::Status Orchestrator::LaunchNextTrial(v1::TuningJobRecord& tuning,
                                           const std::string& worker_id, Worker& worker) {
  auto& rt = TuningRt(tuning);
  const auto& td = tuning.describe();
  const auto& config = td.hyper_parameter_tuning_job_config();
  search::History history;
  history.minimize = config.hyper_parameter_tuning_job_objective().type() != "Maximize";
  for (const auto* job : JobsOf(tuning)) {
    search::Trial trial;
    trial.params.insert(job->tuned_hyperparameters().begin(), job->tuned_hyperparameters().end());
    if (job->objective_status() == "Succeeded") {
      trial.state = search::TrialState::kSucceeded;
      trial.objective = job->objective();
    } else if (job->objective_status() == "Failed") {
      trial.state = search::TrialState::kFailed;
    }
    history.trials.push_back(std::move(trial));
  }
  const int index = tuning.launched() + 1;
  auto suggestion = rt.strategy->Suggest(history, index - 1);
  if (!suggestion.ok()) {
    // The strategy has nothing more (Grid exhausted): the budget is what was launched.
    tuning.set_max_jobs(tuning.launched());
    RETURN_IF_ERROR(PutTuning(tuning));
    EndTuningIfDone(tuning);
    return suggestion.status();
  }

  const auto& def = td.training_job_definition();
  v1::TrainingJobRecord job;
  auto* d = job.mutable_describe();
  const std::string name = TrainingJobNameFor(tuning, index);
  d->set_training_job_name(name);
  d->set_training_job_arn(TrainingJobArn(options_.arn, name));
  d->set_tuning_job_arn(td.hyper_parameter_tuning_job_arn());
  *d->mutable_hyper_parameters() = def.static_hyper_parameters();
  for (const auto& [k, v] : *suggestion) {
    (*d->mutable_hyper_parameters())[k] = v;
    (*job.mutable_tuned_hyperparameters())[k] = v;
  }
  *d->mutable_algorithm_specification() = FromTuningSpec(def.algorithm_specification());
  d->set_role_arn(def.role_arn());
  *d->mutable_input_data_config() = def.input_data_config();
  *d->mutable_output_data_config() = def.output_data_config();
  *d->mutable_resource_config() = ResourceConfigOf(def);
  if (def.has_vpc_config()) *d->mutable_vpc_config() = def.vpc_config();
  *d->mutable_stopping_condition() = def.stopping_condition();
  if (def.has_enable_network_isolation())
    d->set_enable_network_isolation(def.enable_network_isolation());
  if (def.has_enable_inter_container_traffic_encryption()) {
    d->set_enable_inter_container_traffic_encryption(
        def.enable_inter_container_traffic_encryption());
  }
  if (def.has_enable_managed_spot_training()) {
    d->set_enable_managed_spot_training(def.enable_managed_spot_training());
    job.set_spot_discount(options_.spot.discount);
  }
  if (def.has_checkpoint_config()) *d->mutable_checkpoint_config() = def.checkpoint_config();
  *d->mutable_environment() = def.environment();
  if (def.has_retry_strategy()) *d->mutable_retry_strategy() = def.retry_strategy();
  *d->mutable_tags() = td.tags();  // tuning-job tags are copied onto every training job
  d->mutable_model_artifacts()->set_s3_model_artifacts(ModelArtifactUri(*d));
  job.set_tuning_job_name(td.hyper_parameter_tuning_job_name());
  job.set_index(index);
  MarkCreated(job, clock_.Now());

  tuning.set_launched(index);
  tuning.mutable_describe()->set_last_modified_time(clock_.Now());
  const std::string key = Key(name);
  {
    // The stored counters already count the new job (InProgress, Pending).
    auto jobs = JobsOf(tuning);
    jobs.push_back(&job);
    RecomputeTuningView(tuning, jobs);
  }
  RETURN_IF_ERROR(store_.CommitTuningStep(tuning, {job}));
  training_order_.push_back(key);
  tuning_children_[Key(td.hyper_parameter_tuning_job_name())].push_back(key);
  auto& stored = training_.emplace(key, std::move(job)).first->second;
  Launch(stored, worker_id, worker);
  return absl::OkStatus();
}

void Orchestrator::Launch(v1::TrainingJobRecord& job, const std::string& worker_id,
                          Worker& worker) {
  const double now = clock_.Now();
  job.set_attempt(job.attempt() + 1);
  auto plan = PlanLaunch(job, options_.launch);
  if (!plan.ok()) {
    ExitReport report;
    report.launch_failed = true;
    report.failure_reason = std::string(plan.status().message());
    MarkExited(job, report, now);
    (void)PutTraining(job);
    OnTrainingJobEnded(job);
    Notify(job.tuning_job_name(), job.describe().training_job_name());
    return;
  }
  job.set_worker_id(worker_id);
  MarkLaunching(job, now);
  worker.jobs.insert(Key(job.describe().training_job_name()));
  const auto& sc = job.describe().stopping_condition();
  const double max_runtime =
      sc.has_max_runtime_in_seconds() ? sc.max_runtime_in_seconds() : kDefaultMaxRuntimeSeconds;
  // A restarted spot job has used part of its MaxRuntimeInSeconds in earlier attempts.
  job.set_runtime_deadline(
      now + std::max(0.0, max_runtime * options_.time_scale - job.trained_seconds()));
  ArmRuntimeDeadline(job);
  ArmMaxWait(job);
  (void)PutTraining(job);
  v1::OrchestratorMessage message;
  *message.mutable_start() = std::move(*plan);
  worker.link->Send(message);
  Notify(job.tuning_job_name(), job.describe().training_job_name());
}

void Orchestrator::ArmTuningRuntime(const v1::TuningJobRecord& tuning) {
  const auto& d = tuning.describe();
  const auto& limits = d.hyper_parameter_tuning_job_config().resource_limits();
  if (!limits.has_max_runtime_in_seconds()) return;
  // ResourceLimits.MaxRuntimeInSeconds runs from the creation, across restarts of amtd.
  const double deadline = d.creation_time() + limits.max_runtime_in_seconds() * options_.time_scale;
  const std::string name = d.hyper_parameter_tuning_job_name();
  TuningRt(tuning).runtime_timer = timers_.At(deadline, [this, name] {
    if (auto* t = FindTuning(name); t && TuningActive(*t) && t->end_cause().empty()) {
      BeginEndingTuning(*t, "runtime");
      Schedule();
      Notify(name, "");
    }
  });
}

void Orchestrator::ArmRuntimeDeadline(v1::TrainingJobRecord& job) {
  if (job.runtime_deadline() <= 0) return;
  auto& rt = Rt(job);
  timers_.Cancel(rt.runtime_timer);
  const std::string name = job.describe().training_job_name();
  rt.runtime_timer = timers_.At(job.runtime_deadline(), [this, name] {
    auto* j = FindTraining(name);
    if (j == nullptr || j->describe().training_job_status() != kInProgress) return;
    StopRunningJob(*j, StopCause::kMaxRuntime);
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::ArmLostTimer(v1::TrainingJobRecord& job) {
  auto& rt = Rt(job);
  timers_.Cancel(rt.lost_timer);
  const std::string name = job.describe().training_job_name();
  const double when = clock_.Now() + options_.worker_lost_timeout_seconds * options_.time_scale;
  rt.lost_timer = timers_.At(when, [this, name] {
    auto* j = FindTraining(name);
    if (j == nullptr || IsTerminal(*j)) return;
    auto w = workers_.find(j->worker_id());
    if (w != workers_.end() && w->second.jobs.count(Key(name)) > 0) return;  // re-adopted
    if (RetryInPlace(*j, "the worker running it was lost")) {
      Schedule();
      Notify(j->tuning_job_name(), name);
      return;
    }
    ExitReport report;
    report.internal_error = j->describe().training_job_status() != kStopping;
    report.failure_reason = "The worker running this training job was lost.";
    MarkExited(*j, report, clock_.Now());
    (void)PutTraining(*j);
    OnTrainingJobEnded(*j);
    Schedule();
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::DetachFromWorker(v1::TrainingJobRecord& job) {
  auto w = workers_.find(job.worker_id());
  if (w != workers_.end()) w->second.jobs.erase(Key(job.describe().training_job_name()));
  auto& rt = Rt(job);
  timers_.Cancel(rt.runtime_timer);
  timers_.Cancel(rt.lost_timer);
  timers_.Cancel(rt.spot_timer);
  rt.runtime_timer = rt.lost_timer = rt.spot_timer = 0;
}

bool Orchestrator::RetryInPlace(v1::TrainingJobRecord& job, const std::string& what) {
  const auto& d = job.describe();
  if (d.training_job_status() != kInProgress || !d.has_retry_strategy() ||
      job.retries() >= d.retry_strategy().maximum_retry_attempts()) {
    return false;
  }
  DetachFromWorker(job);
  job.set_retries(job.retries() + 1);
  MarkRestarting(job, clock_.Now(),
                 "Retrying the training job after an internal error (" + what + "): retry " +
                     std::to_string(job.retries()) + " of " +
                     std::to_string(d.retry_strategy().maximum_retry_attempts()));
  (void)PutTraining(job);
  waiting_.push_back(Key(d.training_job_name()));
  return true;
}

void Orchestrator::ArmSpotInterruption(v1::TrainingJobRecord& job) {
  if (!job.describe().enable_managed_spot_training()) return;
  const std::string name = job.describe().training_job_name();
  const auto after = spot::InterruptionAfter(options_.spot, options_.spot_seed, name, job.attempt(),
                                             job.spot_interruptions());
  if (!after.has_value()) return;
  auto& rt = Rt(job);
  timers_.Cancel(rt.spot_timer);
  const int attempt = job.attempt();
  rt.spot_timer = timers_.At(clock_.Now() + *after * options_.time_scale, [this, name, attempt] {
    auto* j = FindTraining(name);
    if (j == nullptr || j->attempt() != attempt || j->interrupted() ||
        j->describe().training_job_status() != kInProgress || j->worker_id().empty()) {
      return;
    }
    // The instances are taken back: SIGTERM, the grace period, SIGKILL, like a stop; the exit
    // then restarts the job instead of ending it (OnJobExited).
    MarkInterrupted(*j, clock_.Now());
    (void)PutTraining(*j);
    if (auto w = workers_.find(j->worker_id()); w != workers_.end()) {
      v1::OrchestratorMessage message;
      auto* stop = message.mutable_stop();
      stop->set_training_job_name(name);
      stop->set_attempt(attempt);
      stop->set_grace_seconds(options_.stop_grace_seconds * options_.time_scale);
      w->second.link->Send(message);
    }
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::ArmMaxWait(v1::TrainingJobRecord& job) {
  const auto& d = job.describe();
  if (!d.enable_managed_spot_training() || !d.stopping_condition().has_max_wait_time_in_seconds()) {
    return;
  }
  auto& rt = Rt(job);
  timers_.Cancel(rt.max_wait_timer);
  const std::string name = d.training_job_name();
  const double deadline =
      d.creation_time() + d.stopping_condition().max_wait_time_in_seconds() * options_.time_scale;
  rt.max_wait_timer = timers_.At(deadline, [this, name] {
    auto* j = FindTraining(name);
    if (j == nullptr || IsTerminal(*j)) return;
    StopRunningJob(*j, StopCause::kMaxWait);
    Schedule();
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::StopRunningJob(v1::TrainingJobRecord& job, StopCause cause,
                                  const std::string& message) {
  if (IsTerminal(job) || job.describe().training_job_status() == kStopping) return;
  const double now = clock_.Now();
  if (job.worker_id().empty()) {
    // Never placed on a worker: nothing to signal.
    const std::string key = Key(job.describe().training_job_name());
    waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), key), waiting_.end());
    MarkStoppedBeforeStart(job, cause, now);
    (void)PutTraining(job);
    OnTrainingJobEnded(job);
    return;
  }
  MarkStopping(job, cause, now, message);
  (void)PutTraining(job);
  auto w = workers_.find(job.worker_id());
  if (w != workers_.end()) {
    v1::OrchestratorMessage message;
    auto* stop = message.mutable_stop();
    stop->set_training_job_name(job.describe().training_job_name());
    stop->set_attempt(job.attempt());
    stop->set_grace_seconds(options_.stop_grace_seconds * options_.time_scale);
    w->second.link->Send(message);
  }
}

// ---------------------------------------------------------------- tuning progress

void Orchestrator::UpdateTuning(v1::TuningJobRecord& tuning) {
  RecomputeTuningView(tuning, JobsOf(tuning));
  tuning.mutable_describe()->set_last_modified_time(clock_.Now());
}

void Orchestrator::OnTrainingJobEnded(v1::TrainingJobRecord& job) {
  if (job.tuning_job_name().empty()) return;
  auto* t = FindTuning(job.tuning_job_name());
  if (t == nullptr) return;
  auto* d = t->mutable_describe();
  const auto& objective =
      d->hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective();
  t->set_finished(t->finished() + 1);
  if (job.objective_status() == "Succeeded") {
    t->set_succeeded(t->succeeded() + 1);
    const bool had_best = d->has_best_training_job();
    const double best =
        had_best
            ? d->best_training_job().final_hyper_parameter_tuning_job_objective_metric().value()
            : 0;
    if (!had_best || ImprovesByOnePercent(job.objective(), best, objective.type())) {
      t->set_not_improving(0);
    } else {
      t->set_not_improving(t->not_improving() + 1);
    }
    d->mutable_tuning_job_completion_details()->set_number_of_training_jobs_objective_not_improving(
        t->not_improving());
  }
  UpdateTuning(*t);

  if (t->describe().hyper_parameter_tuning_job_status() == "InProgress" && t->end_cause().empty()) {
    const auto& criteria = d->hyper_parameter_tuning_job_config().tuning_job_completion_criteria();
    if (t->succeeded() == 0 && t->finished() >= options_.early_failure_attempts) {
      BeginEndingTuning(*t, "failed");
    } else if (job.objective_status() == "Succeeded" &&
               criteria.has_target_objective_metric_value() &&
               (objective.type() == "Maximize"
                    ? job.objective() >= criteria.target_objective_metric_value()
                    : job.objective() <= criteria.target_objective_metric_value())) {
      BeginEndingTuning(*t, "target");
    } else if (criteria.has_best_objective_not_improving() &&
               t->not_improving() >= criteria.best_objective_not_improving()
                                         .max_number_of_training_jobs_not_improving()) {
      BeginEndingTuning(*t, "not_improving");
    }
  }
  (void)PutTuning(*t);
  EndTuningIfDone(*t);
}

void Orchestrator::BeginEndingTuning(v1::TuningJobRecord& tuning, const std::string& cause) {
  tuning.set_end_cause(cause);
  (void)PutTuning(tuning);
  for (const auto* job : JobsOf(tuning)) {
    if (!IsTerminal(*job)) {
      StopRunningJob(*FindTraining(job->describe().training_job_name()), StopCause::kTuningJob);
    }
  }
  EndTuningIfDone(tuning);
}

void Orchestrator::EndTuningIfDone(v1::TuningJobRecord& tuning) {
  auto* d = tuning.mutable_describe();
  const std::string status = d->hyper_parameter_tuning_job_status();
  if (status != "InProgress" && status != "Stopping") return;
  const auto jobs = JobsOf(tuning);
  if (RunningJobs(jobs) > 0) return;
  std::string final_status;
  if (status == "Stopping") {
    final_status = "Stopped";
  } else if (tuning.end_cause() == "failed") {
    final_status = "Failed";
    d->set_failure_reason("No training job succeeded after " +
                          std::to_string(options_.early_failure_attempts) +
                          " attempts. Please take a look at the training job failures to get more "
                          "details.");
  } else if (!tuning.end_cause().empty() || tuning.launched() >= tuning.max_jobs()) {
    if (tuning.succeeded() == 0) {
      final_status = "Failed";
      d->set_failure_reason(
          "All training jobs failed. Please take a look at the training jobs failures to get more "
          "details.");
    } else {
      final_status = "Completed";
    }
  } else {
    return;  // more trials to launch
  }
  const double now = clock_.Now();
  RecomputeTuningView(tuning, jobs);
  d->set_hyper_parameter_tuning_job_status(final_status);
  d->set_hyper_parameter_tuning_end_time(now);
  d->set_last_modified_time(now);
  d->mutable_consumed_resources()->set_runtime_in_seconds(
      static_cast<int>(std::max(0.0, now - d->creation_time())));
  auto& rt = TuningRt(tuning);
  timers_.Cancel(rt.runtime_timer);
  rt.runtime_timer = 0;
  (void)PutTuning(tuning);
  Notify(d->hyper_parameter_tuning_job_name(), "");
}

// ---------------------------------------------------------------- worker events

void Orchestrator::OnWorkerConnected(const v1::WorkerHello& hello,
                                     std::shared_ptr<WorkerLink> link) {
  auto& worker = workers_[hello.worker_id()];
  worker.slots = std::max(1, hello.slots());
  worker.link = std::move(link);
  worker.jobs.clear();
  std::set<std::string> reported;
  for (const auto& ref : hello.running()) {
    auto* job = FindTraining(ref.training_job_name());
    if (job == nullptr || IsTerminal(*job) || job->attempt() != ref.attempt()) continue;
    const std::string key = Key(ref.training_job_name());
    reported.insert(key);
    worker.jobs.insert(key);
    job->set_worker_id(hello.worker_id());
    auto& rt = Rt(*job);
    timers_.Cancel(rt.lost_timer);
    rt.lost_timer = 0;
  }
  // Jobs this worker had before that it no longer runs ended while nobody listened.
  for (const auto& key : training_order_) {
    auto& job = training_.at(key);
    if (IsTerminal(job) || job.worker_id() != hello.worker_id() || reported.count(key) > 0)
      continue;
    if (RetryInPlace(job, "the worker restarted and no longer runs it")) continue;
    ExitReport report;
    report.internal_error = job.describe().training_job_status() != kStopping;
    report.failure_reason = "The worker restarted and no longer runs this training job.";
    DetachFromWorker(job);
    MarkExited(job, report, clock_.Now());
    (void)PutTraining(job);
    OnTrainingJobEnded(job);
  }
  Schedule();
  Notify("", "");
}

void Orchestrator::OnWorkerDisconnected(const std::string& worker_id, const WorkerLink* link) {
  auto it = workers_.find(worker_id);
  if (it == workers_.end() || it->second.link.get() != link) return;
  const auto jobs = it->second.jobs;
  workers_.erase(it);
  for (const auto& key : jobs) {
    if (auto j = training_.find(key); j != training_.end() && !IsTerminal(j->second)) {
      ArmLostTimer(j->second);
    }
  }
}

void Orchestrator::OnJobStarted(const v1::JobStarted& started) {
  auto* job = FindTraining(started.training_job_name());
  if (job == nullptr || job->attempt() != started.attempt() || IsTerminal(*job)) return;
  const double now = clock_.Now();
  if (job->describe().training_job_status() == kInProgress) {
    MarkTraining(*job, now);
    ArmSpotInterruption(*job);
  } else if (!job->describe().has_training_start_time()) {
    job->mutable_describe()->set_training_start_time(now);
  }
  (void)PutTraining(*job);
  Notify(job->tuning_job_name(), job->describe().training_job_name());
}

void Orchestrator::OnLogs(const v1::LogBatch& batch) {
  auto* job = FindTraining(batch.training_job_name());
  if (job == nullptr || job->attempt() != batch.attempt()) return;
  auto& rt = Rt(*job);
  std::vector<store::LogEntry> logs;
  std::vector<v1::MetricPoint> points;
  logs.reserve(batch.lines_size());
  auto* d = job->mutable_describe();
  std::string stop_message;  // set when early stopping decides to stop the job
  for (const auto& line : batch.lines()) {
    const int64_t seq = job->next_log_sequence();
    job->set_next_log_sequence(seq + 1);
    logs.push_back({seq, line.timestamp(), line.text()});
    for (const auto& m : rt.parser->Parse(line.text())) {
      v1::MetricPoint p;
      p.set_metric_name(m.name);
      p.set_value(m.value);
      p.set_timestamp(line.timestamp());
      p.set_log_sequence(seq);
      points.push_back(p);
      v1::MetricData* final_value = nullptr;
      for (auto& f : *d->mutable_final_metric_data_list()) {
        if (f.metric_name() == m.name) final_value = &f;
      }
      if (final_value == nullptr) {
        final_value = d->add_final_metric_data_list();
        final_value->set_metric_name(m.name);
      }
      final_value->set_value(static_cast<float>(m.value));
      final_value->set_timestamp(line.timestamp());
      if (!rt.objective_metric.empty() && m.name == rt.objective_metric) {
        job->set_objective(m.value);
        job->set_objective_emissions(job->objective_emissions() + 1);
        job->add_objective_history(m.value);
        // Each emission is an epoch for early stopping; once a stop is decided the job is
        // Stopping and later emissions are only recorded.
        if (stop_message.empty() && d->training_job_status() == kInProgress) {
          if (auto decision = EvaluateEarlyStopping(*job); decision.has_value()) {
            decision->set_timestamp(line.timestamp());
            if (decision->stop())
              stop_message = "Stopping the training job: " + decision->explanation();
            *job->add_decisions() = std::move(*decision);
          }
        }
      }
    }
  }
  (void)store_.CommitTrainingJobProgress(*job, logs, points);
  if (!stop_message.empty()) StopRunningJob(*job, StopCause::kEarlyStopping, stop_message);
  Notify(job->tuning_job_name(), d->training_job_name());
}

std::optional<v1::StoppingDecision> Orchestrator::EvaluateEarlyStopping(
    const v1::TrainingJobRecord& job) {
  const auto* t = FindTuning(job.tuning_job_name());
  if (t == nullptr) return std::nullopt;
  const auto& config = t->describe().hyper_parameter_tuning_job_config();
  const bool hyperband = config.strategy() == "Hyperband";
  const bool median = config.training_job_early_stopping_type() == "Auto";
  if (!hyperband && !median) return std::nullopt;
  stopping::Objective objective;
  objective.metric_name = config.hyper_parameter_tuning_job_objective().metric_name();
  objective.minimize = config.hyper_parameter_tuning_job_objective().type() != "Maximize";
  const auto curve = [](const v1::TrainingJobRecord& j) {
    stopping::JobCurve c;
    c.job = j.describe().training_job_name();
    c.index = j.index() - 1;
    c.values.assign(j.objective_history().begin(), j.objective_history().end());
    const auto& s = j.describe().training_job_status();
    c.state = s == kCompleted ? stopping::JobState::kCompleted
              : s == kStopped ? stopping::JobState::kStopped
                              : stopping::JobState::kRunning;
    c.last_epoch = validation::EpochsHyperParameter(j.describe().hyper_parameters()).value_or(0);
    return c;
  };
  const stopping::JobCurve current = curve(job);
  std::vector<stopping::JobCurve> others;
  for (const auto* other : JobsOf(*t)) {
    // Failed jobs' curves say nothing about what a configuration reaches: left out.
    if (other == &job || other->objective_history().empty() ||
        other->describe().training_job_status() == kFailed) {
      continue;
    }
    // The median rule looks at the jobs launched before this one; Hyperband at all of them.
    if (!hyperband && other->index() >= job.index()) continue;
    others.push_back(curve(*other));
  }
  absl::StatusOr<stopping::Decision> decision;
  if (hyperband) {
    stopping::AshaOptions asha;
    asha.min_resource = t->hyperband_min_resource();
    asha.max_resource = t->hyperband_max_resource();
    asha.reduction_factor = options_.hyperband_reduction_factor;
    asha.brackets = std::min<int64_t>(options_.hyperband_brackets, stopping::MaxBrackets(asha));
    asha.stop_at_last_epoch = options_.hyperband_stop_last_epoch;
    decision = stopping::EvaluateAsha(current, others, objective, asha);
  } else {
    decision = stopping::EvaluateMedianRule(current, others, objective, options_.median_rule);
  }
  if (!decision.ok()) return std::nullopt;  // e.g. a non-finite value: no decision, no crash
  v1::StoppingDecision out;
  out.set_rule(hyperband ? "Hyperband" : "Median");
  out.set_epoch(static_cast<int32_t>(decision->epoch));
  out.set_value(decision->value);
  if (decision->threshold.has_value()) out.set_threshold(*decision->threshold);
  out.set_reference_jobs(static_cast<int32_t>(decision->reference_jobs));
  out.set_stop(decision->stop);
  out.set_explanation(decision->explanation);
  return out;
}

absl::StatusOr<v1::ExplainTrainingJobResponse> Orchestrator::ExplainTrainingJob(
    const std::string& name) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  v1::ExplainTrainingJobResponse out;
  out.set_training_job_name(job->describe().training_job_name());
  std::string mode = "Off";
  if (const auto* t = FindTuning(job->tuning_job_name())) {
    out.set_tuning_job_name(t->describe().hyper_parameter_tuning_job_name());
    const auto& config = t->describe().hyper_parameter_tuning_job_config();
    if (config.strategy() == "Hyperband") {
      mode = "Hyperband";
    } else if (config.training_job_early_stopping_type() == "Auto") {
      mode = "Auto";
    }
  }
  out.set_early_stopping(mode);
  *out.mutable_decisions() = job->decisions();
  *out.mutable_objective_values() = job->objective_history();
  return out;
}

void Orchestrator::OnJobExited(const v1::JobExited& exited) {
  auto* job = FindTraining(exited.training_job_name());
  if (job == nullptr || job->attempt() != exited.attempt() || IsTerminal(*job)) return;
  DetachFromWorker(*job);
  if (job->interrupted() && job->describe().training_job_status() == kInProgress) {
    // A Spot interruption ended the attempt: back to Starting, relaunched when a slot is free;
    // the worker copies the checkpoints back before the next attempt (spec §8).
    job->set_spot_interruptions(job->spot_interruptions() + 1);
    MarkRestarting(*job, clock_.Now(), "Restarting the training job after a Spot interruption");
    (void)PutTraining(*job);
    waiting_.push_back(Key(job->describe().training_job_name()));
    Schedule();
    Notify(job->tuning_job_name(), job->describe().training_job_name());
    return;
  }
  ExitReport report;
  report.exit_code = exited.exit_code();
  report.signal = exited.signal();
  report.failure_reason = exited.failure_reason();
  report.launch_failed = exited.launch_failed();
  report.model_uploaded = exited.model_uploaded();
  MarkExited(*job, report, clock_.Now());
  (void)PutTraining(*job);
  OnTrainingJobEnded(*job);
  Schedule();
  Notify(job->tuning_job_name(), job->describe().training_job_name());
}

}  // namespace amt::core
