#include "orchestrator/core/orchestrator.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/core/job_builder.h"
#include "orchestrator/core/listing.h"
#include "orchestrator/core/orchestrator_runtime.h"
#include "orchestrator/core/warm_start.h"
#include "orchestrator/search/allocation.h"
#include "orchestrator/search/random.h"
#include "orchestrator/validation/definitions.h"

namespace amt::core {
namespace {

std::string Key(const std::string& name) { return absl::AsciiStrToLower(name); }

}  // namespace

Orchestrator::Orchestrator(OrchestratorOptions options, store::Store& store, const Clock& clock,
                           Timers& timers, Provisioner* provisioner)
    : options_(std::move(options)),
      store_(store),
      clock_(clock),
      timers_(timers),
      provisioner_(provisioner),
      state_(DurableStateOptions{.retry_seconds = options_.store_retry_seconds,
                                 .max_unsaved_log_bytes = options_.max_unsaved_log_bytes,
                                 .log = options_.log,
                                 .on_deferred_due = [this] { WriteDeferredStarts(); }},
             store, clock, timers,
             DurableState::Records{
                 .tuning = [this](const std::string& key) -> const v1::TuningJobRecord& {
                   return tuning_.at(key);
                 },
                 .training = [this](const std::string& key) -> const v1::TrainingJobRecord& {
                   return training_.at(key);
                 }},
             [this](const DurableState::HeldLinks& held) { OnStoreRecovered(held); }),
      rt_(std::make_unique<Runtimes>()) {}

// Every timer is a ScopedTimer in rt_ or state_: destroying them cancels it.
Orchestrator::~Orchestrator() = default;

void Orchestrator::FlushDeferred() {
  if (state_.deferring()) WriteDeferredStarts();
}

// ---------------------------------------------------------------- lookups

v1::TrainingJobRecord* Orchestrator::FindTraining(const std::string& name) {
  auto it = training_.find(Key(name));
  return it == training_.end() ? nullptr : &it->second;
}

v1::TuningJobRecord* Orchestrator::FindTuning(const std::string& name) {
  auto it = tuning_.find(Key(name));
  return it == tuning_.end() ? nullptr : &it->second;
}

const std::vector<const v1::TrainingJobRecord*>& Orchestrator::JobsOf(
    const v1::TuningJobRecord& tuning) const {
  static const std::vector<const v1::TrainingJobRecord*> kNone;
  auto it = tuning_children_.find(Key(tuning.describe().hyper_parameter_tuning_job_name()));
  return it == tuning_children_.end() ? kNone : it->second;
}

std::vector<const v1::TuningJobRecord*> Orchestrator::ParentsOf(
    const v1::HyperParameterTuningJobWarmStartConfig& config) const {
  std::vector<const v1::TuningJobRecord*> out;
  for (const auto& parent : config.parent_hyper_parameter_tuning_jobs()) {
    auto it = tuning_.find(Key(parent.hyper_parameter_tuning_job_name()));
    out.push_back(it == tuning_.end() ? nullptr : &it->second);
  }
  return out;
}

std::vector<search::PriorObservation> Orchestrator::PriorObservations(
    const v1::TuningJobRecord& tuning) const {
  std::vector<const v1::TrainingJobRecord*> parent_jobs;
  for (const auto* parent : ParentsOf(tuning.describe().warm_start_config())) {
    if (parent == nullptr) continue;
    for (const auto* job : JobsOf(*parent)) parent_jobs.push_back(job);
  }
  return WarmStartObservations(tuning, parent_jobs);
}

JobRuntime& Orchestrator::Rt(const v1::TrainingJobRecord& job) {
  auto& rt = rt_->jobs[Key(job.describe().training_job_name())];
  if (rt.parser.has_value()) return rt;
  rt.parser = SharedParser(job.describe().algorithm_specification().metric_definitions());
  if (const auto* t = FindTuning(job.tuning_job_name())) {
    rt.objective_metric =
        validation::DefinitionAt(t->describe(), job.definition()).objective.metric_name();
  }
  return rt;
}

metrics::MetricParser Orchestrator::SharedParser(
    const google::protobuf::RepeatedPtrField<v1::MetricDefinition>& defs) {
  // Each definition's bytes with their length, so that no two lists give the same key.
  std::string key;
  for (const v1::MetricDefinition& def : defs) {
    const std::string bytes = def.SerializeAsString();
    key += std::to_string(bytes.size()) + ':' + bytes;
  }
  if (auto it = rt_->parsers.find(key); it != rt_->parsers.end()) return it->second;
  auto parser = metrics::MetricParser::Create(defs);
  // Definitions were validated at creation; an empty parser keeps a bad record from crashing amtd.
  if (!parser.ok()) {
    return *metrics::MetricParser::Create(
        google::protobuf::RepeatedPtrField<v1::MetricDefinition>());
  }
  if (rt_->parsers.size() >= kMaxSharedParsers) rt_->parsers.clear();
  rt_->parsers.emplace(std::move(key), *parser);
  return *std::move(parser);
}

TuningRuntime& Orchestrator::TuningRt(const v1::TuningJobRecord& tuning) {
  return rt_->tunings[Key(tuning.describe().hyper_parameter_tuning_job_name())];
}

absl::Status Orchestrator::EnsureStrategy(const v1::TuningJobRecord& tuning) {
  auto& rt = TuningRt(tuning);
  if (!rt.strategies.empty()) return absl::OkStatus();
  const auto& d = tuning.describe();
  const std::string& strategy = d.hyper_parameter_tuning_job_config().strategy();
  std::vector<std::unique_ptr<search::Strategy>> strategies;
  // The request's budget (0 when it sets none): the Bayesian strategy sizes its start by it, each
  // definition of a multi-algorithm job by its share of the budget (search/allocation.h).
  const int64_t max_trials =
      d.hyper_parameter_tuning_job_config().resource_limits().max_number_of_training_jobs();
  const int definitions = validation::DefinitionCount(d);
  const auto allocation = search::ParseAllocation(tuning.multi_algorithm_allocation());
  for (int i = 0; i < definitions; ++i) {
    auto space = search::SearchSpace::FromProto(validation::DefinitionAt(d, i).ranges);
    if (!space.ok()) return ValidationError(std::string(space.status().message()));
    // The first definition keeps the tuning job's seed (a single definition searches as before);
    // the others get seeds of their own. Warm start is for a single definition only.
    const uint64_t seed = i == 0 ? tuning.seed() : search::TrialSeed(tuning.seed(), -i);
    const int64_t share =
        search::TrialsOfDefinition(allocation.value_or(search::Allocation::kRoundRobin),
                                   definitions, tuning.seed(), i, max_trials);
    ASSIGN_OR_RETURN(auto s, search::MakeStrategy(strategy, std::move(*space), seed,
                                                  i == 0 ? PriorObservations(tuning)
                                                         : std::vector<search::PriorObservation>{},
                                                  share));
    strategies.push_back(std::move(s));
  }
  rt.strategies = std::move(strategies);
  return absl::OkStatus();
}

std::vector<std::optional<int64_t>> Orchestrator::TrialCapacities(
    const v1::TuningJobRecord& tuning) {
  std::vector<std::optional<int64_t>> capacity;
  for (const auto& strategy : TuningRt(tuning).strategies)
    capacity.push_back(strategy->MaxTrials());
  return capacity;
}

void Orchestrator::Notify(const std::string& tuning_job, const std::string& training_job) {
  if (holding_notes_) {  // a group commit is open: watchers hear of it once it is durable
    if (held_notes_.empty() || held_notes_.back() != std::pair(tuning_job, training_job)) {
      held_notes_.emplace_back(tuning_job, training_job);
    }
    return;
  }
  const auto listeners = listeners_;  // a listener may unsubscribe itself
  for (const auto& [id, fn] : listeners) fn(tuning_job, training_job);
}

uint64_t Orchestrator::Subscribe(Listener listener) {
  const uint64_t id = next_listener_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void Orchestrator::Unsubscribe(uint64_t id) { listeners_.erase(id); }

// ---------------------------------------------------------------- persistence

void Orchestrator::OnStoreRecovered(const DurableState::HeldLinks& held) {
  workers_.Unpark();  // the launches are durable now: their StartJobs go out
  workers_.AckApplied();
  // Held-back reports wait on their workers: a new connection replays them in order. Until its
  // disconnect arrives, a dropped connection's reports still in flight are held back too.
  for (const auto& [link, worker_id] : held) workers_.Drop(worker_id, link);
  Schedule();
  Notify("", "");
}

// ---------------------------------------------------------------- restart

absl::Status Orchestrator::Load() {
  ASSIGN_OR_RETURN(auto tunings, store_.ListTuningJobs());
  ASSIGN_OR_RETURN(auto trainings, store_.ListTrainingJobs());
  for (auto& t : tunings) {
    const std::string key = Key(t.describe().hyper_parameter_tuning_job_name());
    tuning_order_.push_back(key);
    tuning_.emplace(key, std::move(t));
  }
  for (auto& j : trainings) {
    const std::string key = Key(j.describe().training_job_name());
    training_order_.push_back(key);
    const auto& stored = training_.emplace(key, std::move(j)).first->second;
    if (!stored.tuning_job_name().empty()) {
      tuning_children_[Key(stored.tuning_job_name())].push_back(&stored);
    }
  }
  for (auto& [tkey, children] : tuning_children_) {
    std::stable_sort(children.begin(), children.end(),
                     [](const v1::TrainingJobRecord* a, const v1::TrainingJobRecord* b) {
                       return a->index() < b->index();
                     });
  }
  for (const auto& key : training_order_) {
    auto& job = training_.at(key);
    if (IsTerminal(job)) continue;
    ArmMaxWait(job);
    if (!job.worker_id().empty()) {
      // Running when amtd stopped: its worker may reconnect and re-adopt it.
      ArmLostTimer(job);
      ArmRuntimeDeadline(job);
    } else if (job.describe().training_job_status() == kStopping) {
      MarkStoppedBeforeStart(job, StopCause::kUser, clock_.Now());
      (void)Persist(job);  // kept and written again on failure (Persist)
      OnTrainingJobEnded(job);
    } else {
      waiting_.push_back(key);
    }
  }
  for (const auto& key : tuning_order_) {
    auto& t = tuning_.at(key);
    if (!IsActive(t)) continue;
    // A job's end and its tuning job's counters are two writes: amtd may have died between.
    RecountFinishedJobs(t, JobsOf(t));
    RecomputeTuningView(t, JobsOf(t), &TuningRt(t).settled);
    if (!EnsureStrategy(t).ok()) {
      BeginEndingTuning(t, EndCause::kEarlyFailure);
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
  RETURN_IF_ERROR(state_.CheckWritable());
  const std::string& name = request.hyper_parameter_tuning_job_name();
  if (FindTuning(name) != nullptr) {
    return ResourceInUseError("A hyperparameter tuning job with the name, " + name +
                              ", already exists. Choose a different name.");
  }
  if (request.has_warm_start_config()) {
    RETURN_IF_ERROR(CheckWarmStart(request, ParentsOf(request.warm_start_config())));
  }
  const double now = clock_.Now();
  const auto& config = request.hyper_parameter_tuning_job_config();
  const uint64_t seed = config.has_random_seed() ? static_cast<uint64_t>(config.random_seed())
                        : options_.seed_source   ? options_.seed_source()
                                                 : static_cast<uint64_t>(now * 1000);
  ASSIGN_OR_RETURN(v1::TuningJobRecord t, NewTuningJobRecord(request, options_.arn, seed, now));
  if (validation::IsMultiAlgorithm(request)) {
    t.set_multi_algorithm_allocation(search::AllocationName(options_.multi_algorithm_allocation));
  }
  const std::string key = Key(name);
  if (auto status = EnsureStrategy(t); !status.ok()) {
    rt_->tunings.erase(key);
    return status;
  }
  if (config.resource_limits().has_max_number_of_training_jobs()) {
    t.set_max_jobs(config.resource_limits().max_number_of_training_jobs());
  } else if (const auto capacity = TrialCapacities(t);
             std::all_of(capacity.begin(), capacity.end(), [](auto c) { return c.has_value(); })) {
    int64_t max = 0;
    for (const auto& c : capacity) max += *c;
    t.set_max_jobs(static_cast<int>(max));
  } else {
    rt_->tunings.erase(key);
    return ValidationError("ResourceLimits.MaxNumberOfTrainingJobs is required for the " +
                           config.strategy() + " strategy.");
  }
  if (auto status = state_.PersistNew(&t, {}); !status.ok()) {
    rt_->tunings.erase(key);
    return status;
  }
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
  if (d.has_warm_start_config()) {
    if (auto best = OverallBestTrainingJob(d, ParentsOf(d.warm_start_config()))) {
      *d.mutable_overall_best_training_job() = std::move(*best);
    }
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
  return core::ListTuningTrainingJobs(
      JobsOf(*t), request, [t](const v1::TrainingJobRecord& job) { return SummaryOf(job, *t); });
}

absl::StatusOr<v1::WatchHyperParameterTuningJobResponse> Orchestrator::Snapshot(
    const std::string& tuning_job_name, const std::vector<std::string>* only) {
  ASSIGN_OR_RETURN(auto describe, DescribeTuningJob(tuning_job_name));
  const auto* t = FindTuning(tuning_job_name);
  v1::WatchHyperParameterTuningJobResponse out;
  *out.mutable_tuning_job() = std::move(describe);
  out.set_warm_start_observations(static_cast<int32_t>(PriorObservations(*t).size()));
  auto add = [&](const v1::TrainingJobRecord& job) {
    *out.add_training_jobs() = SummaryOf(job, *t);
    if (std::string reason = StopReasonOf(job, *t); !reason.empty()) {
      (*out.mutable_stop_reasons())[job.describe().training_job_name()] = std::move(reason);
    }
  };
  if (only == nullptr) {
    for (const auto* job : JobsOf(*t)) add(*job);
    return out;
  }
  const std::string tuning_key = Key(t->describe().hyper_parameter_tuning_job_name());
  for (const std::string& name : *only) {
    const auto* job = FindTraining(name);
    if (job != nullptr && Key(job->tuning_job_name()) == tuning_key) add(*job);
  }
  return out;
}

absl::Status Orchestrator::StopTuningJob(const std::string& name) {
  auto* t = FindTuning(name);
  if (t == nullptr) return TuningJobNotFound(name);
  const auto& status = t->describe().hyper_parameter_tuning_job_status();
  if (status == kTuningStopping) return absl::OkStatus();
  if (status != kTuningInProgress) {
    // Our wording (SageMaker's text for this case is UNCONFIRMED).
    return ValidationError("The request was rejected because the tuning job is in status " +
                           status + ".");
  }
  RETURN_IF_ERROR(state_.CheckWritable());
  MarkTuningStopping(*t, clock_.Now());
  absl::Status saved = Persist(*t);
  // A copy: stopping a job may end it and launch another, which changes JobsOf.
  const std::vector<const v1::TrainingJobRecord*> jobs = JobsOf(*t);
  for (const auto* job : jobs) {
    if (!IsTerminal(*job)) {
      (void)StopRunningJob(*FindTraining(job->describe().training_job_name()),
                           StopCause::kTuningJob);
    }
  }
  EndTuningIfDone(*t);
  Notify(name, "");
  return saved;
}

// ---------------------------------------------------------------- training jobs

absl::StatusOr<v1::CreateTrainingJobResponse> Orchestrator::CreateTrainingJob(
    const v1::CreateTrainingJobRequest& request) {
  RETURN_IF_ERROR(state_.CheckWritable());
  const std::string& name = request.training_job_name();
  if (const auto* existing = FindTraining(name)) {
    return ResourceInUseError(
        "Training job names must be unique within an AWS account and region, and a training job "
        "with this name already exists (" +
        existing->describe().training_job_arn() + ")");
  }
  const RecordOptions record{options_.arn, options_.spot.discount};
  v1::TrainingJobRecord job = NewTrainingJobRecord(request, record, clock_.Now());
  RETURN_IF_ERROR(state_.PersistNew(nullptr, {job}));
  const std::string key = Key(name);
  training_order_.push_back(key);
  auto& stored = training_.emplace(key, std::move(job)).first->second;
  ArmMaxWait(stored);
  waiting_.push_back(key);
  v1::CreateTrainingJobResponse response;
  response.set_training_job_arn(stored.describe().training_job_arn());
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
  RETURN_IF_ERROR(state_.CheckWritable());
  absl::Status saved = StopRunningJob(*job, StopCause::kUser);
  Schedule();
  Notify(job->tuning_job_name(), name);
  return saved;
}

}  // namespace amt::core
