// The hyperparameter search space of a tuning job (SageMaker's ParameterRanges with parsed bounds),
// as every search strategy sees it.
#ifndef AMT_ORCHESTRATOR_SEARCH_SEARCH_SPACE_H_
#define AMT_ORCHESTRATOR_SEARCH_SEARCH_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/tuning.pb.h"

namespace amt::search {

// SageMaker's HyperParameterScalingType. An absent ScalingType means kAuto.
enum class Scaling { kAuto, kLinear, kLogarithmic, kReverseLogarithmic };

struct IntegerParameter {
  std::string name;
  int64_t min_value;
  int64_t max_value;
  Scaling scaling;  // never kReverseLogarithmic (SageMaker allows it for continuous ranges only)
};

struct ContinuousParameter {
  std::string name;
  double min_value;
  double max_value;
  Scaling scaling;
};

struct CategoricalParameter {
  std::string name;
  std::vector<std::string> values;  // passed to the trainer verbatim, in this order
};

struct SearchSpace {
  std::vector<IntegerParameter> integers;
  std::vector<ContinuousParameter> continuous;
  std::vector<CategoricalParameter> categorical;

  // Parses the string bounds of `ranges` (AutoParameters are ignored: Autotune resolves them
  // before a strategy runs). Requests are validated with SageMaker's messages before this is
  // called, so the errors here are a defensive backstop: InvalidArgument naming the parameter when
  // a bound does not parse as an integer (integer ranges, decimal int64) or as a finite number
  // (continuous ranges), when ScalingType is not one of SageMaker's four names, or when
  // Validate() fails.
  static absl::StatusOr<SearchSpace> FromProto(const v1::ParameterRanges& ranges);

  // OK when every strategy can sample the space: names non-empty and unique across the three
  // lists, min <= max, bounds finite, Logarithmic only with min > 0, ReverseLogarithmic only on
  // continuous ranges inside [0, 1), every categorical range with at least one value.
  // InvalidArgument naming the parameter otherwise.
  absl::Status Validate() const;

  // Product of the categorical value counts (1 for no categoricals): the number of Grid
  // combinations. Saturates at INT64_MAX (30 ranges of 30 values overflow int64).
  int64_t GridSize() const;

  // Number of parameters across the three lists.
  size_t size() const { return integers.size() + continuous.size() + categorical.size(); }
};

// "Auto", "Linear", "Logarithmic", "ReverseLogarithmic" (SageMaker's enum spelling, case-sensitive)
// -> Scaling; InvalidArgument otherwise.
absl::StatusOr<Scaling> ParseScaling(const std::string& name);

// The SageMaker spelling of `scaling`.
std::string ScalingName(Scaling scaling);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_SEARCH_SPACE_H_
