// The output transform of the Bayesian strategy: objectives (in minimisation direction) are
// standardised, passed through a Yeo-Johnson power transform whose exponent (in [0, 1])
// maximises the Gaussian likelihood of the result, and standardised again. A long tail of bad
// values (typical of training losses, and of multimodal test functions) is compressed, so the
// surrogate spends its flexibility on the region that matters for minimisation (as HEBO does,
// Cowen-Rivers et al. 2022).
#ifndef AMT_ORCHESTRATOR_SEARCH_GP_WARPING_H_
#define AMT_ORCHESTRATOR_SEARCH_GP_WARPING_H_

#include <Eigen/Core>

namespace amt::search {

class OutputWarping {
 public:
  // Fits the transform to `y` (any size; fewer than 3 distinct values give a plain
  // standardisation, a constant sample the identity shift).
  static OutputWarping Fit(const Eigen::VectorXd& y);

  // The transformed value of y (monotonically increasing in y).
  double Apply(double y) const;
  Eigen::VectorXd Apply(const Eigen::VectorXd& y) const;

  double lambda() const { return lambda_; }

 private:
  double mean_ = 0;  // first standardisation
  double scale_ = 1;
  double lambda_ = 1;  // Yeo-Johnson exponent (1: identity)
  double mean2_ = 0;   // second standardisation
  double scale2_ = 1;
};

// The Yeo-Johnson transform of y with exponent lambda.
double YeoJohnson(double y, double lambda);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_GP_WARPING_H_
