// A small box-constrained quasi-Newton minimiser (projected L-BFGS with Armijo backtracking),
// used by the Bayesian strategy to fit kernel hyperparameters and to refine the acquisition
// function. Deterministic: no randomness, the same inputs give the same iterates.
#ifndef AMT_ORCHESTRATOR_SEARCH_GP_OPTIMIZE_H_
#define AMT_ORCHESTRATOR_SEARCH_GP_OPTIMIZE_H_

#include <Eigen/Core>
#include <functional>

namespace amt::search {

// f(x, &gradient) returns the objective at x and writes its gradient (same size as x). It may
// return +infinity (or NaN) where the objective is undefined; the line search then backs off.
using Objective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd* gradient)>;

struct MinimizeOptions {
  int max_iterations = 50;
  int max_evaluations = 120;
  int memory = 8;                    // L-BFGS correction pairs
  double gradient_tolerance = 1e-6;  // stop when the projected gradient's max-norm is below
  double relative_tolerance = 1e-9;  // stop when an accepted step improves f by less than this
};

struct MinimizeResult {
  Eigen::VectorXd x;
  double value = 0;
  int evaluations = 0;
};

// Minimises `f` over the box [lower, upper] (same sizes as `start`; lower <= upper) from
// `start`, which is clamped into the box first. Returns the best point evaluated.
MinimizeResult MinimizeInBox(const Objective& f, const Eigen::VectorXd& start,
                             const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                             const MinimizeOptions& options = {});

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_GP_OPTIMIZE_H_
