// The unit-cube feature encoding the Bayesian strategy's Gaussian process works in: each
// searchable parameter becomes one feature in [0, 1] after its scaling (Linear, Logarithmic,
// ReverseLogarithmic; Auto as linear or, when the strategy learned it, logarithmic), integers
// are rounded to their value's feature, and a categorical with k values becomes k one-hot
// features. Parameters with a single value (min == max, one categorical value) have no feature:
// every point holds them fixed.
//
// Two coordinate systems are used:
// - features (SpaceEncoder::dims() of them), what the kernel sees;
// - coordinates (one per searchable parameter, each in [0, 1)), what space-filling designs and
//   random candidates are drawn in: a coordinate maps to the parameter's value exactly as
//   RandomStrategy's sampling does (uniform over integers, log-uniform for Logarithmic, ...).
#ifndef AMT_ORCHESTRATOR_SEARCH_GP_ENCODING_H_
#define AMT_ORCHESTRATOR_SEARCH_GP_ENCODING_H_

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {

class SpaceEncoder {
 public:
  enum class Kind { kInteger, kContinuous, kCategorical };

  // One searchable parameter and the features it owns.
  struct Block {
    Kind kind;
    size_t index;   // into space.integers, space.continuous or space.categorical
    int offset;     // first feature column
    int width;      // 1 for numeric parameters, the number of values for categoricals
    bool log;       // encoded as log(value) (Logarithmic, or Auto learned as logarithmic)
    bool reverse;   // ReverseLogarithmic: encoded as -log(1 - value)
    double lo = 0;  // encoded bounds: feature = (encoded(value) - lo) / (hi - lo)
    double hi = 1;
  };

  // `space` must pass SearchSpace::Validate(). `auto_log` lists, per Auto-scaled numeric range
  // that could be logarithmic (AutoLogCandidates() order), whether to encode it so; missing
  // entries mean linear. The encoder keeps a copy of `space`.
  explicit SpaceEncoder(SearchSpace space, std::vector<bool> auto_log = {});

  // Auto-scaled integer and continuous ranges whose bounds allow a logarithmic encoding
  // (min > 0) and span at least a factor of 10: the ones the strategy may learn a warping for.
  // Names, integers first, each list in the order of the space.
  static std::vector<std::string> AutoLogCandidates(const SearchSpace& space);

  int dims() const { return dims_; }
  int params() const { return static_cast<int>(blocks_.size()); }
  const std::vector<Block>& blocks() const { return blocks_; }

  // The kernel group (0..params()-1) of every feature: a categorical's one-hot features share
  // one length scale.
  std::vector<int> FeatureGroups() const;

  // The features of `params`, or nullopt when a searchable parameter is missing, does not parse,
  // names an unknown categorical value, cannot be encoded (a Logarithmic range given a value <=
  // 0), or lies more than `tolerance` (in feature units) outside the unit interval. Values
  // outside the ranges but within the tolerance (prior observations from a tuning job with wider
  // ranges) keep their features outside [0, 1]. Names not in the space are ignored.
  std::optional<Eigen::VectorXd> Encode(const Assignment& params, double tolerance = 0) const;

  // The assignment nearest `features`: numeric features clamped to [0, 1] and integers rounded,
  // each categorical the value with the largest one-hot feature. Holds every parameter of the
  // space, single-valued ones included.
  Assignment Decode(const Eigen::VectorXd& features) const;

  // The features of the valid point nearest `features`: Encode(Decode(features)) without the
  // text round trip for integers and categoricals; continuous features are only clamped.
  Eigen::VectorXd Snap(const Eigen::VectorXd& features) const;

  // The valid point with per-parameter coordinates `u` (params() values in [0, 1)).
  Eigen::VectorXd FromCoordinates(const double* u) const;

  // Whether features f (0..dims()-1) is numeric (optimised continuously) or one-hot.
  bool IsNumericFeature(int f) const { return numeric_feature_[f]; }

 private:
  double EncodeNumber(const Block& b, double value) const;
  double DecodeNumber(const Block& b, double feature) const;
  int64_t RoundInteger(const Block& b, double feature) const;

  SearchSpace space_;
  std::vector<Block> blocks_;
  std::vector<bool> numeric_feature_;
  int dims_ = 0;
};

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_GP_ENCODING_H_
