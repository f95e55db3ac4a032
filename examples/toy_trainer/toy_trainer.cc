// amt-toy-trainer: a deterministic trainer that follows SageMaker's training container contract,
// for amt-local's tests and demos. No real learning: the validation loss is a smooth function of
// the hyperparameters (optimum near learning_rate=0.01, num_layers=4, optimizer=adam) that decays
// over the epochs toward a floor, plus a small fixed offset drawn from `seed`.
//
//   amt-toy-trainer train
//
// Reads  $SM_INPUT_CONFIG_DIR/hyperparameters.json (string values, like SageMaker writes them)
// Prints per epoch:  epoch=3 train_loss=0.123456 val_loss=0.234567 val_accuracy=0.810000
//                    [3]<TAB>train-loss:0.123456<TAB>validation-loss:0.234567
// Writes $SM_MODEL_DIR/model.json; $SM_CHECKPOINT_DIR/checkpoint.json after every epoch (and
//        resumes from it); $SM_OUTPUT_DIR/failure on an error.
// Each SM_* directory defaults to its /opt/ml path, so the binary also runs in a real container.
//
// Hyperparameters: learning_rate (default 0.1, > 0), num_layers (default 2, >= 1), optimizer
// (sgd|adam|rmsprop, default sgd), epochs (default 10), seed (default 0), sleep_ms (default 0:
// wall-clock pause per epoch, so stop tests can catch the trainer running), fail_at_epoch
// (default -1: at that epoch write "AlgorithmError: injected failure at epoch N" and exit 1).
// Invalid values: "ClientError: ..." in output/failure, exit 1.
//
// SIGTERM (StopTrainingJob, early stopping): the trainer finishes nothing more, prints
// "SIGTERM received, saving model", writes model.json with "stopped": true and exits 0.
// SageMaker reports a stopped job as Stopped whatever the exit code; 0 says the save succeeded.
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

volatile sig_atomic_t g_sigterm = 0;

void OnSigterm(int) { g_sigterm = 1; }

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

struct Paths {
  fs::path input_config = EnvOr("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config");
  fs::path model = EnvOr("SM_MODEL_DIR", "/opt/ml/model");
  fs::path output = EnvOr("SM_OUTPUT_DIR", "/opt/ml/output");
  std::string checkpoints = EnvOr("SM_CHECKPOINT_DIR", "");
};

struct Hyperparameters {
  double learning_rate = 0.1;
  int num_layers = 2;
  std::string optimizer = "sgd";
  int epochs = 10;
  std::uint64_t seed = 0;
  int sleep_ms = 0;
  int fail_at_epoch = -1;
};

bool WriteText(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // Write-then-rename: a reader (or a resumed run) never sees half a file.
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << text;
    if (!out) return false;
  }
  fs::rename(partial, path, ec);
  return !ec;
}

[[noreturn]] void Fail(const Paths& paths, const std::string& reason) {
  std::fprintf(stderr, "%s\n", reason.c_str());
  WriteText(paths.output / "failure", reason);
  std::exit(1);
}

// The Python SDK JSON-encodes values ("\"adam\""); SageMaker's own form is the bare string.
std::string Unquote(std::string value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

std::optional<double> ParseDouble(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<long long> ParseInt(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) return std::nullopt;
  return value;
}

Hyperparameters ReadHyperparameters(const Paths& paths, json* raw) {
  const fs::path file = paths.input_config / "hyperparameters.json";
  std::ifstream in(file);
  if (!in) Fail(paths, "ClientError: cannot read " + file.string());
  *raw = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (raw->is_discarded() || !raw->is_object()) {
    Fail(paths, "ClientError: " + file.string() + " is not a JSON object");
  }
  auto text = [&](const char* name) -> std::optional<std::string> {
    if (!raw->contains(name)) return std::nullopt;
    const json& value = (*raw)[name];
    return Unquote(value.is_string() ? value.get<std::string>() : value.dump());
  };
  auto invalid = [&](const char* name, const std::string& value, const char* expected) {
    Fail(paths, std::string("ClientError: invalid hyperparameter ") + name + "=" + value +
                    " (expected " + expected + ")");
  };

  Hyperparameters hp;
  if (auto v = text("learning_rate")) {
    auto d = ParseDouble(*v);
    if (!d || *d <= 0) invalid("learning_rate", *v, "a number > 0");
    hp.learning_rate = *d;
  }
  auto read_int = [&](const char* name, int* out, long long min, const char* expected) {
    if (auto v = text(name)) {
      auto i = ParseInt(*v);
      if (!i || *i < min || *i > 1'000'000) invalid(name, *v, expected);
      *out = static_cast<int>(*i);
    }
  };
  read_int("num_layers", &hp.num_layers, 1, "an integer >= 1");
  read_int("epochs", &hp.epochs, 1, "an integer >= 1");
  read_int("sleep_ms", &hp.sleep_ms, 0, "an integer >= 0");
  read_int("fail_at_epoch", &hp.fail_at_epoch, -1, "an integer >= -1");
  if (auto v = text("seed")) {
    auto i = ParseInt(*v);
    if (!i || *i < 0) invalid("seed", *v, "an integer >= 0");
    hp.seed = static_cast<std::uint64_t>(*i);
  }
  if (auto v = text("optimizer")) {
    if (*v != "sgd" && *v != "adam" && *v != "rmsprop")
      invalid("optimizer", *v, "sgd|adam|rmsprop");
    hp.optimizer = *v;
  }
  return hp;
}

// SplitMix64: a fixed, portable mix, so every platform draws the same offset for a seed.
double UnitFromSeed(std::uint64_t seed) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;  // [0, 1)
}

struct Curve {
  double floor;
  double rate;
};

// The loss landscape. lr_term is 0 at learning_rate=0.01 and 4 at 1e-4 or 1.
Curve LossCurve(const Hyperparameters& hp) {
  const double lr_term = std::pow(std::log10(hp.learning_rate) + 2.0, 2.0);
  const double layer_term = std::pow((hp.num_layers - 4) / 4.0, 2.0);
  const double optimizer_term =
      hp.optimizer == "adam" ? 0.0 : (hp.optimizer == "rmsprop" ? 0.04 : 0.10);
  const double noise = 0.01 * (UnitFromSeed(hp.seed) - 0.5);
  // Deeper networks learn more slowly: curves cross, so the best configurations (4 layers) start
  // behind shallow ones, which is what early stopping has to get right.
  const double depth_pace = std::pow(2.0 / hp.num_layers, 0.7);
  return Curve{0.05 + 0.06 * lr_term + 0.2 * layer_term + optimizer_term + noise,
               0.5 / (1.0 + 0.5 * lr_term) * depth_pace};
}

constexpr double kStartLoss = 2.5;

double ValLoss(const Curve& curve, int epoch) {
  return curve.floor + (kStartLoss - curve.floor) * std::exp(-curve.rate * epoch);
}

// Sleeps, returning early on SIGTERM (nanosleep is interrupted by the handled signal).
void SleepMs(int ms) {
  timespec left{ms / 1000, (ms % 1000) * 1'000'000L};
  while (!g_sigterm && nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

void SaveModel(const Paths& paths, const json& raw, const Hyperparameters& hp, int epochs_done,
               double val_loss, bool stopped) {
  json model = {{"hyperparameters", raw},
                {"learning_rate", hp.learning_rate},
                {"num_layers", hp.num_layers},
                {"optimizer", hp.optimizer},
                {"epochs_completed", epochs_done},
                {"final_val_loss", val_loss},
                {"stopped", stopped}};
  if (!WriteText(paths.model / "model.json", model.dump(2) + "\n")) {
    Fail(paths, "AlgorithmError: cannot write " + (paths.model / "model.json").string());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Paths paths;
  if (argc > 2 || (argc == 2 && std::string(argv[1]) != "train")) {
    std::fprintf(stderr, "usage: amt-toy-trainer [train]\n");
    return 2;
  }
  // Pipes are block-buffered: without this, metrics would reach amt-worker only at exit.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  struct sigaction action {};
  action.sa_handler = OnSigterm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);

  json raw;
  const Hyperparameters hp = ReadHyperparameters(paths, &raw);
  const Curve curve = LossCurve(hp);
  std::printf("amt-toy-trainer: learning_rate=%g num_layers=%d optimizer=%s epochs=%d seed=%llu\n",
              hp.learning_rate, hp.num_layers, hp.optimizer.c_str(), hp.epochs,
              static_cast<unsigned long long>(hp.seed));

  int first_epoch = 1;
  double val_loss = kStartLoss;
  const fs::path checkpoint =
      paths.checkpoints.empty() ? fs::path() : fs::path(paths.checkpoints) / "checkpoint.json";
  if (!checkpoint.empty()) {
    std::ifstream in(checkpoint);
    const json saved = in ? json::parse(in, nullptr, false) : json();
    if (saved.is_object() && saved.contains("epoch") && saved["epoch"].is_number_integer()) {
      first_epoch = saved["epoch"].get<int>() + 1;
      val_loss = ValLoss(curve, first_epoch - 1);
      std::printf("resuming from checkpoint at epoch %d\n", first_epoch - 1);
    }
  }

  int epochs_done = first_epoch - 1;
  for (int epoch = first_epoch; epoch <= hp.epochs && !g_sigterm; ++epoch) {
    if (epoch == hp.fail_at_epoch) {
      Fail(paths, "AlgorithmError: injected failure at epoch " + std::to_string(epoch));
    }
    val_loss = ValLoss(curve, epoch);
    const double train_loss = 0.85 * val_loss;
    const double val_accuracy = 1.0 / (1.0 + val_loss);
    std::printf("epoch=%d train_loss=%.6f val_loss=%.6f val_accuracy=%.6f\n", epoch, train_loss,
                val_loss, val_accuracy);
    std::printf("[%d]\ttrain-loss:%.6f\tvalidation-loss:%.6f\n", epoch, train_loss, val_loss);
    epochs_done = epoch;
    if (!checkpoint.empty() &&
        !WriteText(checkpoint, json({{"epoch", epoch}, {"val_loss", val_loss}}).dump() + "\n")) {
      Fail(paths, "AlgorithmError: cannot write " + checkpoint.string());
    }
    if (hp.sleep_ms > 0 && epoch < hp.epochs) SleepMs(hp.sleep_ms);
  }

  if (g_sigterm) std::printf("SIGTERM received, saving model\n");
  SaveModel(paths, raw, hp, epochs_done, val_loss, g_sigterm != 0);
  // No "val_loss=" here: a MetricDefinitions regex would count this summary as one more epoch.
  std::printf("training %s after %d epochs: final validation loss %.6f\n",
              g_sigterm ? "stopped" : "complete", epochs_done, val_loss);
  return 0;
}
