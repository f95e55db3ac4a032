#include "orchestrator/search/gp_optimize.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

namespace amt::search {
namespace {

struct Correction {
  Eigen::VectorXd s;
  Eigen::VectorXd y;
  double rho;
};

// Variables held at a bound by the gradient (moving inward is the only way they can change).
Eigen::VectorXd ProjectedGradient(const Eigen::VectorXd& x, const Eigen::VectorXd& g,
                                  const Eigen::VectorXd& lower, const Eigen::VectorXd& upper) {
  Eigen::VectorXd pg = g;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if ((x[i] <= lower[i] && g[i] > 0) || (x[i] >= upper[i] && g[i] < 0)) pg[i] = 0;
  }
  return pg;
}

// The L-BFGS two-loop recursion: the stored corrections' inverse-Hessian estimate times `v`.
Eigen::VectorXd InverseHessianTimes(const std::deque<Correction>& memory,
                                    const Eigen::VectorXd& v) {
  Eigen::VectorXd q = v;
  std::vector<double> alpha(memory.size());
  for (size_t i = memory.size(); i-- > 0;) {
    alpha[i] = memory[i].rho * memory[i].s.dot(q);
    q -= alpha[i] * memory[i].y;
  }
  if (!memory.empty()) {
    const Correction& last = memory.back();
    q *= last.s.dot(last.y) / last.y.squaredNorm();
  }
  for (size_t i = 0; i < memory.size(); ++i) {
    const double beta = memory[i].rho * memory[i].y.dot(q);
    q += memory[i].s * (alpha[i] - beta);
  }
  return q;
}

}  // namespace

MinimizeResult MinimizeInBox(const Objective& f, const Eigen::VectorXd& start,
                             const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                             const MinimizeOptions& options) {
  const Eigen::Index n = start.size();
  Eigen::VectorXd x = start.cwiseMax(lower).cwiseMin(upper);
  Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
  double fx = f(x, &g);
  MinimizeResult result{x, fx, 1};
  if (!std::isfinite(fx) || !g.allFinite()) return result;

  std::deque<Correction> memory;
  Eigen::VectorXd x_new(n);
  Eigen::VectorXd g_new(n);
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    const Eigen::VectorXd pg = ProjectedGradient(x, g, lower, upper);
    if (pg.lpNorm<Eigen::Infinity>() < options.gradient_tolerance) break;

    Eigen::VectorXd d = -InverseHessianTimes(memory, pg);
    for (Eigen::Index i = 0; i < n; ++i) {
      if (pg[i] == 0) d[i] = 0;
    }
    double step = 1.0;
    if (d.dot(pg) >= 0 || memory.empty()) {
      // Steepest descent, scaled so the first trial moves no variable by more than 1.
      d = -pg;
      memory.clear();
      step = 1.0 / std::max(1.0, d.lpNorm<Eigen::Infinity>());
    }

    bool accepted = false;
    double f_new = 0;
    for (int backtrack = 0; backtrack < 30; ++backtrack) {
      if (result.evaluations >= options.max_evaluations) break;
      x_new = (x + step * d).cwiseMax(lower).cwiseMin(upper);
      const Eigen::VectorXd delta = x_new - x;
      if (delta.lpNorm<Eigen::Infinity>() == 0) break;
      f_new = f(x_new, &g_new);
      ++result.evaluations;
      if (std::isfinite(f_new) && g_new.allFinite() && f_new <= fx + 1e-4 * g.dot(delta)) {
        accepted = true;
        break;
      }
      step *= std::isfinite(f_new) ? 0.5 : 0.1;
    }
    if (!accepted) {
      if (!memory.empty() && result.evaluations < options.max_evaluations) {
        memory.clear();  // a stale curvature model; retry from steepest descent
        continue;
      }
      break;
    }

    Correction c{x_new - x, g_new - g, 0};
    const double sy = c.s.dot(c.y);
    if (sy > 1e-12 * c.y.squaredNorm() && sy > 0) {
      c.rho = 1.0 / sy;
      memory.push_back(std::move(c));
      if (static_cast<int>(memory.size()) > options.memory) memory.pop_front();
    }
    const double improvement = fx - f_new;
    x = x_new;
    g = g_new;
    fx = f_new;
    if (fx < result.value) {
      result.value = fx;
      result.x = x;
    }
    if (improvement <= options.relative_tolerance * std::max(1.0, std::fabs(fx))) break;
    if (result.evaluations >= options.max_evaluations) break;
  }
  return result;
}

}  // namespace amt::search
