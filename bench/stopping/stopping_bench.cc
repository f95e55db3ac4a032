// The C++ half of the early-stopping benchmark (bench/README.md): for each seed, simulates a
// tuning job of Random with early stopping Off, Random with Auto (the median rule, twice: with the
// knobs given, and with another grace period, by default 0: a comparison from epoch 1) and
// Hyperband (ASHA) on the curves of curve_family.h, in-process, and prints total epochs and the
// final regret after --trials trials, and the epochs each method needs to reach Off's final regret,
// medians over the seeds. stopping_bench.py runs this binary with --json, adds Optuna 3.1's
// MedianPruner and HyperbandPruner on the same configurations and curves, and checks the targets.
//
// Flags (--name=value or --name value): --seeds=60 --first-seed=1 (seeds first..first+seeds-1)
// --trials=50
// --cap=400 (trials simulated per seed, for the "epochs to reach" column) --max-epochs=81
// --family=mild|strong --quick (5 seeds, cap 150) --json=PATH, and the knobs, whose defaults are
// the libraries': --reference=completed-or-stopped|completed|all --min-reference-jobs=1
// --best-so-far --grace-epochs=2 --auto-grace=0 (the second Auto row) --min-resource=1 --eta=3
// --brackets=3 --allocation=capped|round-robin|budget --few-at-rung=continue|best
// --weights=W0,W1,... (AshaOptions::bracket_weights: explicit shares of the brackets).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/stopping/curve_family.h"
#include "bench/stopping/simulate.h"
#include "nlohmann/json.hpp"

namespace amt::bench {
namespace {

using Reference = stopping::MedianRuleOptions::Reference;

std::string ReferenceName(Reference reference) {
  switch (reference) {
    case Reference::kCompletedOrStoppedJobs:
      return "completed-or-stopped";
    case Reference::kCompletedJobs:
      return "completed";
    case Reference::kAllPreviousJobs:
      return "all";
  }
  return "?";
}

std::string AllocationName(stopping::AshaOptions::Allocation allocation) {
  switch (allocation) {
    case stopping::AshaOptions::Allocation::kByBudget:
      return "budget";
    case stopping::AshaOptions::Allocation::kCostCapped:
      return "capped";
    case stopping::AshaOptions::Allocation::kRoundRobin:
      break;
  }
  return "round-robin";
}

std::string FewAtRungName(stopping::AshaOptions::FewAtRung few) {
  return few == stopping::AshaOptions::FewAtRung::kBest ? "best" : "continue";
}

struct Flags {
  int64_t seeds = 60;  // 20-seed medians move by up to 0.2 of Off's epochs between seed sets
  int64_t first_seed = 1;
  int64_t auto_grace = 0;  // grace_epochs of the second Auto row
  int64_t trials = 50;
  int64_t cap = 400;
  std::string json;
  Family family = *FamilyNamed("mild");
  SimulationOptions sim;
};

bool ParseFlags(int argc, char** argv, Flags* flags) {
  std::map<std::string, std::string> kv;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      std::fprintf(stderr, "unexpected argument %s\n", arg.c_str());
      return false;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (eq != std::string::npos) {
      kv[name] = arg.substr(eq + 1);
    } else if (name != "quick" && name != "best-so-far" && i + 1 < argc &&
               std::string(argv[i + 1]).rfind("--", 0) != 0) {
      kv[name] = argv[++i];  // --name value
    } else {
      kv[name] = "";
    }
  }
  auto take_int = [&](const std::string& name, int64_t* out) {
    if (auto it = kv.find(name); it != kv.end()) {
      *out = std::stoll(it->second);
      kv.erase(it);
    }
  };
  if (kv.erase("quick") > 0) {
    flags->seeds = 5;
    flags->cap = 150;
  }
  take_int("seeds", &flags->seeds);
  take_int("first-seed", &flags->first_seed);
  take_int("trials", &flags->trials);
  take_int("cap", &flags->cap);
  take_int("max-epochs", &flags->sim.max_epochs);
  take_int("min-reference-jobs", &flags->sim.median.min_reference_jobs);
  take_int("grace-epochs", &flags->sim.median.grace_epochs);
  take_int("auto-grace", &flags->auto_grace);
  take_int("min-resource", &flags->sim.asha.min_resource);
  take_int("eta", &flags->sim.asha.reduction_factor);
  take_int("brackets", &flags->sim.asha.brackets);
  if (auto it = kv.find("weights"); it != kv.end()) {
    for (size_t at = 0; at <= it->second.size();) {  // comma-separated parts, bracket 0 first
      const size_t comma = std::min(it->second.find(',', at), it->second.size());
      flags->sim.asha.bracket_weights.push_back(std::stoll(it->second.substr(at, comma - at)));
      at = comma + 1;
    }
    kv.erase(it);
  }
  if (kv.erase("best-so-far") > 0) flags->sim.median.compare_best_so_far = true;
  if (auto it = kv.find("reference"); it != kv.end()) {
    bool known = false;
    for (auto r : {Reference::kCompletedOrStoppedJobs, Reference::kCompletedJobs,
                   Reference::kAllPreviousJobs}) {
      if (it->second == ReferenceName(r)) flags->sim.median.reference = r, known = true;
    }
    if (!known) {
      std::fprintf(stderr, "--reference must be completed-or-stopped, completed or all\n");
      return false;
    }
    kv.erase(it);
  }
  if (auto it = kv.find("allocation"); it != kv.end()) {
    if (it->second == "capped") {
      flags->sim.asha.allocation = stopping::AshaOptions::Allocation::kCostCapped;
    } else if (it->second == "round-robin") {
      flags->sim.asha.allocation = stopping::AshaOptions::Allocation::kRoundRobin;
    } else if (it->second == "budget") {
      flags->sim.asha.allocation = stopping::AshaOptions::Allocation::kByBudget;
    } else {
      std::fprintf(stderr, "--allocation must be capped, round-robin or budget\n");
      return false;
    }
    kv.erase(it);
  }
  if (auto it = kv.find("few-at-rung"); it != kv.end()) {
    if (it->second == "continue") {
      flags->sim.asha.few_at_rung = stopping::AshaOptions::FewAtRung::kContinue;
    } else if (it->second == "best") {
      flags->sim.asha.few_at_rung = stopping::AshaOptions::FewAtRung::kBest;
    } else {
      std::fprintf(stderr, "--few-at-rung must be continue or best\n");
      return false;
    }
    kv.erase(it);
  }
  if (auto it = kv.find("family"); it != kv.end()) {
    std::optional<Family> family = FamilyNamed(it->second);
    if (!family) {
      std::fprintf(stderr, "--family must be mild or strong\n");
      return false;
    }
    flags->family = *family;
    kv.erase(it);
  }
  if (auto it = kv.find("json"); it != kv.end()) {
    flags->json = it->second;
    kv.erase(it);
  }
  for (const auto& [name, value] : kv) {
    std::fprintf(stderr, "unknown flag --%s\n", name.c_str());
    return false;
  }
  flags->cap = std::max(flags->cap, flags->trials);
  flags->sim.trials = flags->cap;
  return true;
}

double Median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

nlohmann::json Records(const std::vector<TrialRecord>& trials) {
  nlohmann::json out = nlohmann::json::array();
  for (const TrialRecord& t : trials) out.push_back({t.epochs, t.reported, t.true_loss});
  return out;
}

// One row of the table: a method and its options.
struct Row {
  std::string key;   // JSON key
  std::string name;  // table label
  Method method;
  SimulationOptions options;
};

std::vector<Row> Rows(const Flags& flags) {
  SimulationOptions grace = flags.sim;
  grace.median.grace_epochs = flags.auto_grace;
  return {
      {"off", "Random, early stopping Off", Method::kOff, flags.sim},
      {"auto", "Random, Auto", Method::kAuto, flags.sim},
      {"auto_grace", "Random, Auto, grace " + std::to_string(flags.auto_grace), Method::kAuto,
       grace},
      {"hyperband", "Hyperband", Method::kHyperband, flags.sim},
  };
}

int Run(const Flags& flags) {
  const std::vector<Row> rows = Rows(flags);
  std::map<std::string, std::vector<double>> epochs, regret, reach;
  nlohmann::json problems = nlohmann::json::array();
  nlohmann::json fixed_points = nlohmann::json::array();
  for (int64_t seed = flags.first_seed; seed < flags.first_seed + flags.seeds; ++seed) {
    const Problem problem = MakeProblem(flags.family, static_cast<uint64_t>(seed));
    const double optimum = OptimalLoss(problem, flags.sim.max_epochs);
    absl::StatusOr<std::vector<Config>> random = Configurations("Random", seed, flags.cap);
    absl::StatusOr<std::vector<Config>> hyperband = Configurations("Hyperband", seed, flags.cap);
    if (!random.ok() || !hyperband.ok()) {
      std::fprintf(stderr, "strategy: %s %s\n", std::string(random.status().message()).c_str(),
                   std::string(hyperband.status().message()).c_str());
      return 1;
    }
    nlohmann::json configs = nlohmann::json::array();
    for (const Config& c : *random) {
      configs.push_back({c.learning_rate, c.regularization, c.layers});
    }
    nlohmann::json runs;
    double off_regret = 0;
    for (const Row& row : rows) {
      const std::vector<Config>& stream = row.method == Method::kHyperband ? *hyperband : *random;
      absl::StatusOr<std::vector<TrialRecord>> trials =
          Simulate(row.method, problem, stream, row.options);
      if (!trials.ok()) {
        std::fprintf(stderr, "simulate: %s\n", std::string(trials.status().message()).c_str());
        return 1;
      }
      if (row.method == Method::kOff) off_regret = RegretOf(*trials, flags.trials, optimum);
      epochs[row.key].push_back(static_cast<double>(EpochsOf(*trials, flags.trials)));
      regret[row.key].push_back(RegretOf(*trials, flags.trials, optimum));
      std::optional<int64_t> to_reach = EpochsToReach(*trials, off_regret, optimum);
      reach[row.key].push_back(to_reach ? static_cast<double>(*to_reach)
                                        : std::numeric_limits<double>::infinity());
      runs[row.key] = Records(*trials);
    }
    problems.push_back({{"seed", seed},
                        {"u_star", problem.u_star},
                        {"r_star", problem.r_star},
                        {"optimum", optimum},
                        {"same_configs", *random == *hyperband},
                        {"configs", configs},
                        {"runs", runs}});
    if (seed < flags.first_seed + 2) {
      for (int64_t index : {0, 1, 7}) {
        for (int64_t epoch : {int64_t{1}, int64_t{2}, int64_t{9}, flags.sim.max_epochs}) {
          const Config& c = (*random)[index];
          fixed_points.push_back({{"seed", seed},
                                  {"index", index},
                                  {"epoch", epoch},
                                  {"true", TrueLoss(problem, c, epoch)},
                                  {"observed", ObservedLoss(problem, c, index, epoch)}});
        }
      }
    }
  }

  std::printf(
      "C++ harness, family %s: %lld seeds, %lld trials per tuning job (sequential), MaxResource "
      "%lld, medians over seeds\n",
      flags.family.name.c_str(), static_cast<long long>(flags.seeds),
      static_cast<long long>(flags.trials), static_cast<long long>(flags.sim.max_epochs));
  std::printf("%-30s %10s %8s %10s %8s %14s %8s\n", "method", "epochs", "vs Off", "regret",
              "vs Off", "epochs to Off", "vs Off");
  const double off_epochs = Median(epochs["off"]);
  const double off_regret = Median(regret["off"]);
  for (const Row& row : rows) {
    const double e = Median(epochs[row.key]);
    const double r = Median(regret[row.key]);
    const double to = Median(reach[row.key]);
    std::printf("%-30s %10.0f %8.3f %10.5f %8.3f %14.0f %8.3f\n", row.name.c_str(), e,
                e / off_epochs, r, r / off_regret, to, to / off_epochs);
  }

  if (!flags.json.empty()) {
    const auto& median = flags.sim.median;
    nlohmann::json out = {{"seeds", flags.seeds},
                          {"first_seed", flags.first_seed},
                          {"trials", flags.trials},
                          {"cap", flags.cap},
                          {"max_epochs", flags.sim.max_epochs},
                          {"family",
                           {{"name", flags.family.name},
                            {"u_low", flags.family.u_low},
                            {"u_span", flags.family.u_span},
                            {"r_low", flags.family.r_low},
                            {"r_span", flags.family.r_span},
                            {"reg_slowdown", flags.family.reg_slowdown}}},
                          {"knobs",
                           {{"reference", ReferenceName(median.reference)},
                            {"min_reference_jobs", median.min_reference_jobs},
                            {"compare_best_so_far", median.compare_best_so_far},
                            {"grace_epochs", median.grace_epochs},
                            {"auto_grace", flags.auto_grace},
                            {"min_resource", flags.sim.asha.min_resource},
                            {"reduction_factor", flags.sim.asha.reduction_factor},
                            {"brackets", flags.sim.asha.brackets},
                            {"allocation", AllocationName(flags.sim.asha.allocation)},
                            {"few_at_rung", FewAtRungName(flags.sim.asha.few_at_rung)},
                            {"bracket_weights", flags.sim.asha.bracket_weights}}},
                          {"problems", problems},
                          {"fixed_points", fixed_points}};
    std::ofstream file(flags.json);
    file << out.dump();
    if (!file) {
      std::fprintf(stderr, "cannot write %s\n", flags.json.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace amt::bench

int main(int argc, char** argv) {
  amt::bench::Flags flags;
  if (!amt::bench::ParseFlags(argc, argv, &flags)) return 2;
  return amt::bench::Run(flags);
}
