// strategy_loop: one of amtd's strategies driven directly, without amtd, for bench/real's
// `real_bench.py --direct`. The parent process (real_bench.py) evaluates the trials in-process,
// so a run costs the trainings only, not a process per trial and its imports.
//
//   strategy_loop --strategy Bayesian --seed 3 --ranges '{"ContinuousParameterRanges": [...]}'
//                 [--max-trials N] [--parallel P] [--design N] [--option name=value ...]
//
// It prints the hyperparameters of the next trial as one JSON object per line on stdout, reads
// the trial's objective (minimised; "nan" for a failed trial) as one line on stdin, and goes on
// until stdin closes or --max-trials trials have been answered. By default one trial runs at a
// time, like real_bench.py's tuning jobs (MaxParallelTrainingJobs 1). With --parallel P, P trials
// are out at once, as in a tuning job with MaxParallelTrainingJobs P whose jobs all take the same
// time: the first P are printed before any objective is read, the objectives answer the trials in
// the order they were printed, and each later trial is suggested with the P - 1 unanswered ones
// running (TrialState::kPending). The strategy is created as amtd creates it
// (search::MakeStrategy with the tuning job's RandomSeed and, from --max-trials, its
// MaxNumberOfTrainingJobs), so with the objectives amtd parses (`%.10g`, as bench/real/train
// prints them) the trials are the same as amtd's. --design and --option set BayesianOptions for
// measuring variants; amtd uses the defaults. Bad flags or values exit 2.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "amt/v1/tuning.pb.h"
#include "common/json.h"
#include "nlohmann/json.hpp"
#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::bench {
namespace {

struct Flags {
  std::string strategy = "Bayesian";
  uint64_t seed = 0;
  int64_t max_trials = 0;
  int64_t parallel = 1;
  std::string ranges;
  search::BayesianOptions options;
  bool custom = false;  // --design or --option given: BayesianStrategy::Create with options
};

bool SetOption(const std::string& assignment, search::BayesianOptions* options) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) return false;
  const std::string name = assignment.substr(0, eq);
  const double value = std::stod(assignment.substr(eq + 1));
  if (name == "prior_mean_quantile") {
    options->prior_mean_quantile = value;
  } else if (name == "avoid_bad_bounds") {
    options->avoid_bad_bounds = value != 0;
  } else if (name == "learn_auto_scaling") {
    options->learn_auto_scaling = value != 0;
  } else if (name == "batch_lcb_kappa") {
    options->batch_lcb_kappa = value;
  } else if (name == "batch_lcb_tolerance") {
    options->batch_lcb_tolerance = value;
  } else {
    return false;
  }
  return true;
}

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "strategy_loop: " << arg << " needs a value\n";
      return false;
    }
    const std::string value = argv[++i];
    if (arg == "--strategy") {
      flags->strategy = value;
    } else if (arg == "--seed") {
      flags->seed = std::stoull(value);
    } else if (arg == "--max-trials") {
      flags->max_trials = std::stoll(value);
    } else if (arg == "--parallel") {
      flags->parallel = std::stoll(value);
      if (flags->parallel < 1) {
        std::cerr << "strategy_loop: --parallel must be at least 1\n";
        return false;
      }
    } else if (arg == "--ranges") {
      flags->ranges = value;
    } else if (arg == "--design") {
      flags->options.initial_design_size = std::stoi(value);
      flags->custom = true;
    } else if (arg == "--option") {
      if (!SetOption(value, &flags->options)) {
        std::cerr << "strategy_loop: unknown option " << value << "\n";
        return false;
      }
      flags->custom = true;
    } else {
      std::cerr << "strategy_loop: unknown flag " << arg << "\n";
      return false;
    }
  }
  return !flags->ranges.empty();
}

// ParseFlags, with a number that std::sto* cannot read reported as a bad flag.
bool ParseFlagsOrFail(int argc, char** argv, Flags* flags) {
  try {
    return ParseFlags(argc, argv, flags);
  } catch (const std::logic_error& e) {  // std::invalid_argument, std::out_of_range
    std::cerr << "strategy_loop: a number was expected (" << e.what() << ")\n";
    return false;
  }
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlagsOrFail(argc, argv, &flags)) {
    std::cerr << "usage: strategy_loop --strategy NAME --seed N --ranges JSON [--max-trials N] "
                 "[--parallel P] [--design N] [--option name=value]\n";
    return 2;
  }
  v1::ParameterRanges ranges;
  if (absl::Status s = JsonToProto(flags.ranges, &ranges); !s.ok()) {
    std::cerr << "strategy_loop: --ranges: " << s.message() << "\n";
    return 2;
  }
  auto space = search::SearchSpace::FromProto(ranges);
  if (!space.ok()) {
    std::cerr << "strategy_loop: " << space.status().message() << "\n";
    return 2;
  }
  flags.options.max_trials = flags.max_trials;
  auto strategy =
      flags.custom && flags.strategy == "Bayesian"
          ? search::BayesianStrategy::Create(std::move(*space), flags.seed, flags.options)
          : search::MakeStrategy(flags.strategy, std::move(*space), flags.seed, {},
                                 flags.max_trials);
  if (!strategy.ok()) {
    std::cerr << "strategy_loop: " << strategy.status().message() << "\n";
    return 2;
  }
  search::History history;
  // Objectives answer trials in launch order: trials[answered..] are the ones still running.
  size_t answered = 0;
  while (true) {
    while (
        static_cast<int64_t>(history.trials.size() - answered) < flags.parallel &&
        (flags.max_trials == 0 || static_cast<int64_t>(history.trials.size()) < flags.max_trials)) {
      const auto index = static_cast<int64_t>(history.trials.size());
      auto params = (*strategy)->Suggest(history, index);
      if (!params.ok()) {
        std::cerr << "strategy_loop: " << params.status().message() << "\n";
        return 1;
      }
      std::cout << nlohmann::json(*params).dump() << std::endl;
      history.trials.push_back({*std::move(params), search::TrialState::kPending, std::nullopt});
    }
    std::string line;
    if (answered == history.trials.size() || !std::getline(std::cin, line)) return 0;
    const double objective = std::stod(line);
    search::Trial& trial = history.trials[answered++];
    trial.state = search::TrialState::kSucceeded;
    trial.objective = objective;
    if (std::isnan(objective)) {
      trial.state = search::TrialState::kFailed;
      trial.objective = std::nullopt;
    }
  }
}

}  // namespace
}  // namespace amt::bench

int main(int argc, char** argv) { return amt::bench::Main(argc, argv); }
