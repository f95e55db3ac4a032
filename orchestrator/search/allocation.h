// Multi-algorithm tuning (TrainingJobDefinitions): which definition each trial runs. SageMaker
// does not document how it spreads a tuning job's trials over its definitions; amt-local deals
// them by a rule chosen with amtd --multi-algorithm-allocation (docs/sagemaker-mapping.md):
//  - round-robin (default): trial i goes to the definition with the fewest trials so far, the
//    first such in request order: definitions 0, 1, ..., n-1, 0, 1, ... as long as every
//    definition has trials left, so each algorithm gets an equal share of the budget;
//  - random: trial i goes to a definition drawn uniformly, from (seed, i), among those with
//    trials left (as if the definition were one more categorical hyperparameter of Random).
// Each definition's own strategy then suggests its hyperparameters from that definition's trials
// only. Pure: the definition of trial i is a function of (rule, capacities, seed, i), so a
// restarted amtd deals the same.
#ifndef AMT_ORCHESTRATOR_SEARCH_ALLOCATION_H_
#define AMT_ORCHESTRATOR_SEARCH_ALLOCATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace amt::search {

enum class Allocation { kRoundRobin, kRandom };

// "round-robin" or "random"; InvalidArgument otherwise.
absl::StatusOr<Allocation> ParseAllocation(std::string_view name);
std::string AllocationName(Allocation allocation);

// The 0-based definition of the trial with 0-based launch index `index`, when definition d can
// run `capacity[d]` trials (nullopt: any number; a Grid definition runs one per combination).
// nullopt when trials 0..index-1 have used up every definition's capacity, or `index` < 0, or
// `capacity` is empty.
std::optional<int> DefinitionOfTrial(Allocation allocation,
                                     const std::vector<std::optional<int64_t>>& capacity,
                                     uint64_t seed, int64_t index);

// How many of trials 0..total-1 go to `definition` of `definitions` when no definition runs out
// (every capacity nullopt, as for Bayesian and Random): a definition's share of a budget of
// `total` trials. 0 when `definition` is not in [0, definitions) or `total` <= 0.
int64_t TrialsOfDefinition(Allocation allocation, int definitions, uint64_t seed, int definition,
                           int64_t total);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_ALLOCATION_H_
