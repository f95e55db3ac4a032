// Managed spot training, simulated (spec §8): when a spot training job's instances are taken back,
// and what its training time is billed. Pure: no clock, no I/O; the same (seed, job, attempt)
// always gives the same interruption, so a demo or a test replays exactly.
//
// SageMaker documents the lifecycle (Training -> Interrupted -> Starting -> Downloading ->
// Training, checkpoints copied back before the restart, Stopped/MaxWaitTimeExceeded when
// MaxWaitTimeInSeconds runs out) and the billing formula, but not when interruptions happen: that
// is this model's choice. Each attempt of a spot job runs for an exponentially distributed time
// (mean `mean_seconds_to_interruption` of training) before it is interrupted, until the job has
// been interrupted `max_interruptions` times; later attempts run to their end. A fixed time
// (`interrupt_after_seconds`) replaces the draw when a demo or a test wants every attempt taken
// back at one known moment.
#ifndef AMT_ORCHESTRATOR_SPOT_SPOT_H_
#define AMT_ORCHESTRATOR_SPOT_SPOT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace amt::spot {

struct SpotOptions {
  // Mean training seconds (SageMaker seconds: amtd scales them by --time-scale) before an attempt
  // is interrupted. 0 disables interruptions. Undocumented by AWS; 600 s means that a 10-minute
  // job is interrupted about once in two runs.
  double mean_seconds_to_interruption = 600;
  // When > 0, every attempt (up to max_interruptions) is interrupted exactly this many training
  // seconds (SageMaker seconds, scaled like the mean) after it starts, instead of at a drawn time.
  double interrupt_after_seconds = 0;
  // Interruptions per training job at most; the attempt after the last one runs to its end.
  int max_interruptions = 2;
  // Spot discount: BillableTimeInSeconds = TrainingTimeInSeconds x (1 - discount). The spec's
  // suggested default; AWS quotes savings of up to 90%.
  double discount = 0.7;
};

// InvalidArgument naming the field: mean < 0, interrupt_after < 0, max_interruptions < 0,
// discount outside [0, 1).
absl::Status ValidateSpotOptions(const SpotOptions& options);

// Training seconds after the start of `attempt` (1-based) of training job `job` at which the
// attempt is interrupted, given that the job was interrupted `interruptions` times before;
// nullopt when it runs to its end. Deterministic in (options, seed, job, attempt).
std::optional<double> InterruptionAfter(const SpotOptions& options, uint64_t seed,
                                        std::string_view job, int attempt, int interruptions);

// BillableTimeInSeconds for `training_seconds` of spot training: at least 1 when any training
// happened, rounded to whole seconds.
int BillableSeconds(const SpotOptions& options, int training_seconds);

}  // namespace amt::spot

#endif  // AMT_ORCHESTRATOR_SPOT_SPOT_H_
