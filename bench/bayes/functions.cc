#include "bench/bayes/functions.h"

#include <cmath>
#include <map>
#include <string>

#include "orchestrator/search/format.h"

namespace amt::bench {
namespace {

using search::Assignment;
using search::FormatContinuous;
using search::Scaling;
using search::SearchSpace;

double Get(const Assignment& params, const std::string& name) { return std::stod(params.at(name)); }

double Branin(const Assignment& p) {
  const double x1 = Get(p, "x1");
  const double x2 = Get(p, "x2");
  const double b = 5.1 / (4 * M_PI * M_PI);
  const double c = 5 / M_PI;
  const double t = 1 / (8 * M_PI);
  const double a = x2 - b * x1 * x1 + c * x1 - 6;
  return a * a + 10 * (1 - t) * std::cos(x1) + 10;
}

double Hartmann3(const Assignment& p) {
  static constexpr double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  static constexpr double kA[4][3] = {{3, 10, 30}, {0.1, 10, 35}, {3, 10, 30}, {0.1, 10, 35}};
  static constexpr double kP[4][3] = {{0.3689, 0.1170, 0.2673},
                                      {0.4699, 0.4387, 0.7470},
                                      {0.1091, 0.8732, 0.5547},
                                      {0.0381, 0.5743, 0.8828}};
  double x[3];
  for (int j = 0; j < 3; ++j) x[j] = Get(p, "x" + std::to_string(j + 1));
  double f = 0;
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 3; ++j) s += kA[i][j] * (x[j] - kP[i][j]) * (x[j] - kP[i][j]);
    f -= kAlpha[i] * std::exp(-s);
  }
  return f;
}

double Hartmann6(const Assignment& p) {
  static constexpr double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  static constexpr double kA[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                      {0.05, 10, 17, 0.1, 8, 14},
                                      {3, 3.5, 1.7, 10, 17, 8},
                                      {17, 8, 0.05, 10, 0.1, 14}};
  static constexpr double kP[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                      {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                      {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                      {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
  double x[6];
  for (int j = 0; j < 6; ++j) x[j] = Get(p, "x" + std::to_string(j + 1));
  double f = 0;
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 6; ++j) s += kA[i][j] * (x[j] - kP[i][j]) * (x[j] - kP[i][j]);
    f -= kAlpha[i] * std::exp(-s);
  }
  return f;
}

// A tuning-like mixed problem: each optimizer has its own best learning rate (log-scaled) and
// width, with an interaction between the two; adam at lr = 10^-3.2 and 24 units is optimal (0).
double Mixed(const Assignment& p) {
  struct Optimum {
    double log_lr;
    double units;
    double offset;
  };
  static const std::map<std::string, Optimum> kOptima = {
      {"sgd", {-1.5, 60, 0.4}},
      {"adam", {-3.2, 24, 0.0}},
      {"rmsprop", {-3.8, 40, 0.15}},
      {"adagrad", {-1.0, 80, 0.6}},
  };
  const Optimum& o = kOptima.at(p.at("optimizer"));
  const double u = std::log10(Get(p, "lr")) - o.log_lr;
  const double v = (Get(p, "units") - o.units) / 25.0;
  return u * u + v * v + 0.5 * u * v + o.offset;
}

double StyblinskiTang4(const Assignment& p) {
  double f = 0;
  for (int j = 0; j < 4; ++j) {
    const double x = Get(p, "x" + std::to_string(j + 1));
    f += 0.5 * (x * x * x * x - 16 * x * x + 5 * x);
  }
  return f;
}

SearchSpace Box(int dims, double lo, double hi) {
  SearchSpace space;
  for (int j = 0; j < dims; ++j) {
    space.continuous.push_back({"x" + std::to_string(j + 1), lo, hi, Scaling::kLinear});
  }
  return space;
}

}  // namespace

std::vector<TestFunction> AllFunctions() {
  std::vector<TestFunction> out;
  SearchSpace branin;
  branin.continuous.push_back({"x1", -5, 10, Scaling::kLinear});
  branin.continuous.push_back({"x2", 0, 15, Scaling::kLinear});
  out.push_back({"Branin", branin, Branin, 0.397887357729738});
  out.push_back({"Hartmann3", Box(3, 0, 1), Hartmann3, -3.86278214782076});
  out.push_back({"Hartmann6", Box(6, 0, 1), Hartmann6, -3.32236801141551});
  SearchSpace mixed;
  mixed.integers.push_back({"units", 1, 100, Scaling::kLinear});
  mixed.continuous.push_back({"lr", 1e-5, 1.0, Scaling::kLogarithmic});
  mixed.categorical.push_back({"optimizer", {"sgd", "adam", "rmsprop", "adagrad"}});
  out.push_back({"Mixed", mixed, Mixed, 0.0});
  out.push_back({"StyblinskiTang4", Box(4, -5, 5), StyblinskiTang4, -4 * 39.16616570377142});
  return out;
}

std::vector<Assignment> CheckPoints(const TestFunction& function) {
  std::vector<Assignment> points;
  // Corners, centre and an off-grid point of the numeric box; every categorical value.
  for (double t : {0.0, 0.5, 1.0, 0.123456789}) {
    Assignment a;
    for (const search::IntegerParameter& p : function.space.integers) {
      a[p.name] = std::to_string(
          p.min_value + static_cast<int64_t>(std::llround(t * (p.max_value - p.min_value))));
    }
    for (const search::ContinuousParameter& p : function.space.continuous) {
      const double v = p.scaling == Scaling::kLogarithmic
                           ? std::exp(std::log(p.min_value) * (1 - t) + std::log(p.max_value) * t)
                           : p.min_value * (1 - t) + p.max_value * t;
      a[p.name] = FormatContinuous(v);
    }
    if (function.space.categorical.empty()) {
      points.push_back(a);
      continue;
    }
    for (const std::string& value : function.space.categorical[0].values) {
      a[function.space.categorical[0].name] = value;
      points.push_back(a);
    }
  }
  return points;
}

}  // namespace amt::bench
