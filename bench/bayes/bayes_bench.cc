// The C++ half of the strategy benchmark (bench/README.md, "Strategies vs Optuna TPE"): runs our
// strategies in-process, without amtd, on the test functions of functions.h, sequentially and
// with 4 trials in parallel, and measures the Bayesian strategy's suggestion latency. Writes
// JSON for bench/bayes/compare.py, which runs Optuna on the same problems and prints the table.
//
//   bayes_bench [--seeds 20] [--first-seed 0] [--budget 100] [--threads 2]
//               [--functions Branin,Mixed] [--strategies Bayesian,Random]
//               [--modes sequential,parallel] [--parallel-window FIRST:END]
//               [--batch-lcb-kappa K]
//               [--latency-sizes 100,300,750] [--latency-steps 100] [--no-regret]
//               [--no-latency] --out results.json
//
// Parallel mode simulates a tuning job with 4 workers: trial i runs for a deterministic
// pseudo-random duration TrialDuration(seed, i) in [1, 2); a new trial is suggested (with the
// running ones pending in the history) whenever one finishes. Python uses the same durations.
// --parallel-window FIRST:END keeps the 4 workers only for trials FIRST .. END - 1 of a
// parallel run and launches the others one at a time (each after every earlier trial has
// finished): where in a run parallelism costs (bench/README.md, "How far the miss can be
// trusted"). --batch-lcb-kappa sets BayesianOptions::batch_lcb_kappa (0: penalised Expected
// Improvement alone while trials run, the rule before session 36).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bayes/functions.h"
#include "nlohmann/json.hpp"
#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/random.h"
#include "orchestrator/search/strategy.h"

namespace amt::bench {
namespace {

using search::Assignment;
using search::History;
using search::Strategy;
using search::Trial;
using search::TrialState;

constexpr int kWorkers = 4;
// The end of --parallel-window when it is not given: past any budget.
constexpr int kWholeRun = 1 << 30;

struct Flags {
  int seeds = 20;
  int first_seed = 0;  // seeds first_seed .. first_seed + seeds - 1: other seed sets
  int budget = 100;
  int threads = 2;
  std::vector<std::string> functions;  // empty: all
  std::vector<std::string> strategies = {"Bayesian", "Random"};
  std::vector<std::string> modes = {"sequential", "parallel"};
  // --parallel-window: trials window_first .. window_end - 1 run kWorkers at a time.
  int window_first = 0;
  int window_end = kWholeRun;
  double batch_lcb_kappa = -1;  // < 0: BayesianOptions' default
  std::vector<int> latency_sizes = {100, 300, 750};
  int latency_steps = 100;
  bool regret = true;
  bool latency = true;
  std::string out;
};

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seeds") {
      flags->seeds = std::stoi(value());
    } else if (arg == "--first-seed") {
      flags->first_seed = std::max(0, std::stoi(value()));
    } else if (arg == "--budget") {
      flags->budget = std::stoi(value());
    } else if (arg == "--threads") {
      flags->threads = std::max(1, std::stoi(value()));
    } else if (arg == "--functions") {
      flags->functions = Split(value());
    } else if (arg == "--strategies") {
      flags->strategies = Split(value());
    } else if (arg == "--modes") {
      flags->modes = Split(value());
    } else if (arg == "--parallel-window") {
      const std::string window = value();
      const size_t colon = window.find(':');
      if (colon == std::string::npos) {
        std::cerr << "--parallel-window needs FIRST:END, such as 20:35\n";
        return false;
      }
      flags->window_first = std::stoi(window.substr(0, colon));
      flags->window_end = std::stoi(window.substr(colon + 1));
    } else if (arg == "--batch-lcb-kappa") {
      flags->batch_lcb_kappa = std::stod(value());
    } else if (arg == "--latency-sizes") {
      flags->latency_sizes.clear();
      for (const std::string& s : Split(value())) flags->latency_sizes.push_back(std::stoi(s));
    } else if (arg == "--latency-steps") {
      flags->latency_steps = std::stoi(value());
    } else if (arg == "--no-regret") {
      flags->regret = false;
    } else if (arg == "--no-latency") {
      flags->latency = false;
    } else if (arg == "--out") {
      flags->out = value();
    } else {
      std::cerr << "unknown flag " << arg << "\n";
      return false;
    }
  }
  return true;
}

// SplitMix64, shared with compare.py for the simulated trial durations.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double TrialDuration(uint64_t seed, int64_t index) {
  const uint64_t h = SplitMix64(seed * 1000003ULL + static_cast<uint64_t>(index));
  return 1.0 + static_cast<double>(h >> 11) * 0x1.0p-53;
}

struct Job {
  const TestFunction* function;
  std::string strategy;
  std::string mode;
  int seed;
};

// The objective values of trials 0..budget-1 in launch order, of a tuning job whose
// MaxNumberOfTrainingJobs is `budget` (the Bayesian strategy sizes its start by it; at 100 it is
// the size without a budget).
std::unique_ptr<Strategy> MakeJobStrategy(const Job& job, int budget, const Flags& flags) {
  const uint64_t seed = static_cast<uint64_t>(job.seed);
  if (job.strategy != "Bayesian" || flags.batch_lcb_kappa < 0) {
    return search::MakeStrategy(job.strategy, job.function->space, seed, {}, budget).value();
  }
  search::BayesianOptions options;
  options.max_trials = budget;
  options.batch_lcb_kappa = flags.batch_lcb_kappa;
  return search::BayesianStrategy::Create(job.function->space, seed, options).value();
}

std::vector<double> RunJob(const Job& job, const Flags& flags) {
  const int budget = flags.budget;
  const int window_first = flags.window_first;
  const int window_end = flags.window_end;
  std::unique_ptr<Strategy> strategy = MakeJobStrategy(job, budget, flags);
  History history;
  std::vector<double> values;
  const int workers = job.mode == "parallel" ? kWorkers : 1;
  // (finish time, trial index) of running trials.
  std::vector<std::pair<double, int>> running;
  double now = 0;
  int launched = 0;
  while (launched < budget || !running.empty()) {
    // Outside the window one at a time: the trial waits for every earlier one to finish.
    auto slots = [&]() { return launched >= window_first && launched < window_end ? workers : 1; };
    while (launched < budget && static_cast<int>(running.size()) < slots()) {
      Assignment params = strategy->Suggest(history, launched).value();
      history.trials.push_back({params, TrialState::kPending, std::nullopt});
      running.push_back({now + TrialDuration(static_cast<uint64_t>(job.seed), launched), launched});
      ++launched;
    }
    // Finish the earliest running trial.
    auto first = std::min_element(running.begin(), running.end());
    now = first->first;
    Trial& trial = history.trials[static_cast<size_t>(first->second)];
    trial.state = TrialState::kSucceeded;
    trial.objective = job.function->evaluate(trial.params);
    running.erase(first);
  }
  for (const Trial& trial : history.trials) values.push_back(*trial.objective);
  return values;
}

nlohmann::json RegretResults(const Flags& flags, const std::vector<TestFunction>& functions) {
  std::vector<Job> jobs;
  for (const TestFunction& f : functions) {
    for (const std::string& strategy : flags.strategies) {
      for (const std::string& mode : flags.modes) {
        for (int seed = flags.first_seed; seed < flags.first_seed + flags.seeds; ++seed) {
          jobs.push_back({&f, strategy, mode, seed});
        }
      }
    }
  }
  std::vector<nlohmann::json> results(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex log_mutex;
  auto worker = [&]() {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      const auto start = std::chrono::steady_clock::now();
      const std::vector<double> values = RunJob(jobs[i], flags);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      nlohmann::json r = {{"function", jobs[i].function->name},
                          {"strategy", jobs[i].strategy},
                          {"mode", jobs[i].mode},
                          {"seed", jobs[i].seed},
                          {"values", values},
                          {"seconds", seconds}};
      results[i] = std::move(r);
      std::lock_guard<std::mutex> lock(log_mutex);
      std::fprintf(stderr, "\r[bayes_bench] %zu/%zu runs", i + 1, jobs.size());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < flags.threads; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  std::fprintf(stderr, "\n");
  return results;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * (static_cast<double>(v.size()) - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

// Suggestion latency of the Bayesian strategy on Hartmann-6 with `size` finished trials (random
// points) and 10 running: `steps` consecutive suggestions, each followed by the oldest running
// trial finishing and the suggestion starting, as in a tuning job with 10 parallel workers. The
// first (cold) call also fits the kernel from scratch; it is reported separately.
nlohmann::json Latency(const TestFunction& hartmann6, int size, int steps) {
  constexpr int kRunning = 10;
  constexpr uint64_t kSeed = 7;
  std::unique_ptr<Strategy> random = search::MakeStrategy("Random", hartmann6.space, kSeed).value();
  History history;
  for (int i = 0; i < size + kRunning; ++i) {
    Assignment params = random->Suggest(History{}, i).value();
    const bool done = i < size;
    history.trials.push_back(
        {params, done ? TrialState::kSucceeded : TrialState::kPending,
         done ? std::optional<double>(hartmann6.evaluate(params)) : std::nullopt});
  }
  std::unique_ptr<Strategy> bayesian =
      search::MakeStrategy("Bayesian", hartmann6.space, kSeed).value();
  std::vector<double> ms;
  double cold = 0;
  size_t oldest_running = static_cast<size_t>(size);
  for (int step = 0; step <= steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    Assignment params =
        bayesian->Suggest(history, static_cast<int64_t>(history.trials.size())).value();
    const double elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (step == 0) {
      cold = elapsed;
    } else {
      ms.push_back(elapsed);
    }
    Trial& finishing = history.trials[oldest_running++];
    finishing.state = TrialState::kSucceeded;
    finishing.objective = hartmann6.evaluate(finishing.params);
    history.trials.push_back({params, TrialState::kPending, std::nullopt});
  }
  return {{"observations", size},
          {"running", kRunning},
          {"dims", 6},
          {"steps", steps},
          {"cold_ms", cold},
          {"p50_ms", Percentile(ms, 50)},
          {"p99_ms", Percentile(ms, 99)},
          {"max_ms", *std::max_element(ms.begin(), ms.end())},
          {"all_ms", ms}};
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  if (flags.out.empty()) {
    std::cerr << "--out is required\n";
    return 2;
  }
  std::vector<TestFunction> functions;
  for (const TestFunction& f : AllFunctions()) {
    if (flags.functions.empty() || std::find(flags.functions.begin(), flags.functions.end(),
                                             f.name) != flags.functions.end()) {
      functions.push_back(f);
    }
  }
  nlohmann::json out;
  out["seeds"] = flags.seeds;
  out["first_seed"] = flags.first_seed;
  if (flags.window_first > 0 || flags.window_end != kWholeRun) {
    out["parallel_window"] = {flags.window_first, flags.window_end};
  }
  out["budget"] = flags.budget;
  out["workers"] = kWorkers;
  nlohmann::json defs = nlohmann::json::array();
  for (const TestFunction& f : AllFunctions()) {
    nlohmann::json points = nlohmann::json::array();
    for (const Assignment& p : CheckPoints(f)) {
      points.push_back({{"params", p}, {"value", f.evaluate(p)}});
    }
    defs.push_back({{"name", f.name}, {"minimum", f.minimum}, {"points", points}});
  }
  out["functions"] = defs;
  if (flags.regret) out["runs"] = RegretResults(flags, functions);
  if (flags.latency) {
    const std::vector<TestFunction> all = AllFunctions();
    const auto h6 = std::find_if(all.begin(), all.end(),
                                 [](const TestFunction& f) { return f.name == "Hartmann6"; });
    nlohmann::json latency = nlohmann::json::array();
    for (int size : flags.latency_sizes) {
      std::fprintf(stderr, "[bayes_bench] latency at %d observations\n", size);
      latency.push_back(Latency(*h6, size, flags.latency_steps));
    }
    out["latency"] = latency;
  }
  std::ofstream(flags.out) << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace amt::bench

int main(int argc, char** argv) { return amt::bench::Main(argc, argv); }
