// The test functions of the strategy benchmark (bench/bayes): standard global-optimisation
// problems written as tuning jobs over SageMaker-style search spaces, each with its known
// minimum. bench/bayes/compare.py holds the same functions in Python and checks that both agree
// at fixed points.
#ifndef AMT_BENCH_BAYES_FUNCTIONS_H_
#define AMT_BENCH_BAYES_FUNCTIONS_H_

#include <functional>
#include <string>
#include <vector>

#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::bench {

struct TestFunction {
  std::string name;
  search::SearchSpace space;
  // The objective (minimised) at a point of `space`.
  std::function<double(const search::Assignment&)> evaluate;
  double minimum;  // the global minimum value
};

// Branin (2-D), Hartmann-3, Hartmann-6, Mixed (an integer, a categorical and a log-scaled
// continuous parameter) and Styblinski-Tang in 4-D (multimodal: 16 local minima).
std::vector<TestFunction> AllFunctions();

// Fixed points of each function's space (by function name) at which the C++ and Python
// versions are compared.
std::vector<search::Assignment> CheckPoints(const TestFunction& function);

}  // namespace amt::bench

#endif  // AMT_BENCH_BAYES_FUNCTIONS_H_
