#include "worker/script_runner/script_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "worker/job_code.h"
#include "worker/script_runner/requirements.h"
#include "worker/script_runner/toolkit_environment.h"
#include "worker/tar_gz.h"
#include "worker/toolkit.h"

namespace amt::worker::script {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxKeptStderr = 1 << 20;  // ErrorMessage comes from the last 1 MiB

std::string Get(const std::map<std::string, std::string>& map, const std::string& key,
                const std::string& fallback = "") {
  const auto it = map.find(key);
  return it == map.end() ? fallback : it->second;
}

std::optional<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A descriptor closed on destruction.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// A step that failed: the failure file's text.
struct Failure {
  std::string text;
};

// Writes output/failure as the toolkit does: only when the script has not written one.
void WriteFailure(const std::map<std::string, std::string>& env, const std::string& text) {
  const fs::path failure = fs::path(Get(env, "SM_OUTPUT_DIR", ".")) / "failure";
  std::error_code ec;
  if (fs::exists(failure, ec)) return;
  fs::create_directories(failure.parent_path(), ec);
  std::ofstream out(failure, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "amt-script-runner: cannot write " << failure.string() << ": "
              << std::strerror(errno) << std::endl;
  }
}

void Say(const std::string& line) { std::cerr << line << std::endl; }

volatile sig_atomic_t g_stop_signal = 0;
void OnStopSignal(int signal_number) { g_stop_signal = signal_number; }

// What a child process did.
struct Outcome {
  int exit_code = 0;         // as Python's Popen reports it: -N when killed by signal N
  std::string stderr_tail;   // the last kMaxKeptStderr bytes of its standard error
  std::string launch_error;  // not empty when it could not be started
};

// Runs `argv` in `cwd` with `env`: its standard output is ours, its standard error is copied to
// ours and kept. It stays in our process group (the worker signals the group) and dies with us.
Outcome RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                   const std::map<std::string, std::string>& env) {
  Outcome outcome;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    outcome.launch_error = std::string("pipe: ") + std::strerror(errno);
    outcome.exit_code = 1;
    return outcome;
  }
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argvp;
  for (std::string& s : args) argvp.push_back(s.data());
  argvp.push_back(nullptr);
  // PATH lookup with the job's PATH, as the toolkit's subprocess does.
  const std::string path = Get(env, "PATH", "/usr/local/bin:/usr/bin:/bin");

  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.launch_error = std::string("fork: ") + std::strerror(errno);
    outcome.exit_code = 1;
    return outcome;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    if (::chdir(cwd.c_str()) != 0) _exit(127);
    ::setenv("PATH", path.c_str(), 1);  // for execvpe's search
    ::execvpe(argvp[0], argvp.data(), envp.data());
    const std::string message = std::string(argvp[0]) + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    _exit(127);
  }
  ::close(pipe_fds[1]);
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    (void)!::write(STDERR_FILENO, buffer, static_cast<size_t>(n));
    outcome.stderr_tail.append(buffer, static_cast<size_t>(n));
    if (outcome.stderr_tail.size() > 2 * kMaxKeptStderr) {
      outcome.stderr_tail.erase(0, outcome.stderr_tail.size() - kMaxKeptStderr);
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.exit_code = -WTERMSIG(status);
  }
  return outcome;
}

// The cap on what the code may unpack to: the job's volume (AMT_VOLUME_SIZE_GB, which amt-worker
// sets from VolumeSizeInGB), job_code.h's CodeUnpackLimits.
ExtractOptions UnpackLimits(const std::map<std::string, std::string>& env) {
  const std::string text = Get(env, "AMT_VOLUME_SIZE_GB");
  char* end = nullptr;
  const unsigned long long gb = std::strtoull(text.c_str(), &end, 10);
  return CodeUnpackLimits(!text.empty() && *end == '\0' ? gb : 0);
}

// Step 2: the code in <job dir>/code (job_code.h), unpacked within `limits`.
std::optional<Failure> FetchCode(const std::string& submit, const std::string& s3_root,
                                 const fs::path& code_dir, const fs::path& job_dir,
                                 ExtractOptions limits) {
  const absl::StatusOr<bool> fetched =
      FetchJobCode(LocalPathOfUri(submit, s3_root), submit, code_dir, job_dir, std::move(limits));
  if (!fetched.ok()) return Failure{"ClientError: " + std::string(fetched.status().message())};
  if (!*fetched) {
    Say("amt-script-runner: " + code_dir.string() + " is not empty, abandoning unzipping " +
        submit);
  }
  return std::nullopt;
}

// The entry point `program`, a path relative to `code_dir`, opened without leaving the folder:
// not absolute, no ".." segment, no symbolic link on the way nor at the end (each segment opened
// from its folder's descriptor with O_NOFOLLOW, so a link an archive or a script made cannot
// point it elsewhere). The descriptor (a regular file or a folder), or the failure naming
// `program`; `submit` is for the message when it does not exist.
std::variant<UniqueFd, Failure> OpenEntryPoint(const fs::path& code_dir, const std::string& program,
                                               const std::string& submit) {
  const std::string refused = "ClientError: the entry point (sagemaker_program) " + program +
                              " is not a file in the job's code folder " + code_dir.string() + ": ";
  const Failure missing{"ClientError: the entry point " + program + " is not in the job's code (" +
                        submit + ")"};
  if (program.front() == '/') return Failure{refused + "it is an absolute path"};
  std::vector<std::string> segments;
  for (size_t at = 0; at <= program.size();) {
    const size_t slash = std::min(program.find('/', at), program.size());
    std::string segment = program.substr(at, slash - at);
    at = slash + 1;
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") return Failure{refused + "it has a \"..\" segment"};
    segments.push_back(std::move(segment));
  }
  if (segments.empty()) return Failure{refused + "it names the folder itself"};
  UniqueFd at(::open(code_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (at.get() < 0) return missing;
  fs::path path = code_dir;
  for (size_t i = 0; i < segments.size(); ++i) {
    path /= segments[i];
    const bool last = i + 1 == segments.size();
    // O_NONBLOCK: a FIFO planted as the entry point must not block the runner's open.
    const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    UniqueFd next(::openat(at.get(), segments[i].c_str(), flags));
    if (next.get() < 0) {
      const int error = errno;
      struct stat st {};
      if (::fstatat(at.get(), segments[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        return Failure{refused + path.string() + " is a symbolic link"};
      }
      if (error == ENOENT) return missing;
      return Failure{refused + "cannot open " + path.string() + ": " + std::strerror(error)};
    }
    at = std::move(next);
  }
  struct stat st {};
  if (::fstat(at.get(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
    return Failure{refused + "it is not a regular file"};
  }
  return at;
}

enum class EntryType { kProgram, kPackage, kCommand };

EntryType EntryTypeOf(const std::string& program, const fs::path& code_dir) {
  std::error_code ec;
  if (program.size() >= 3 && program.ends_with(".sh")) return EntryType::kCommand;
  if (fs::exists(code_dir / "setup.py", ec)) return EntryType::kPackage;
  if (program.ends_with(".py")) return EntryType::kProgram;
  return EntryType::kCommand;
}

std::string ShellQuote(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                                              "WXYZ0123456789@%+=:,./-_") == std::string::npos) {
    return text;
  }
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\"'\"'";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

// Whether `program` names an executable file: itself when it holds a '/', else in `path`.
bool FindsExecutable(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// The worker stops a job with SIGTERM to its process group: the script gets it and decides; the
// runner waits for it and reports what it did.
void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

// A step failed: says so and writes output/failure; the runner's exit code.
int Fail(const std::map<std::string, std::string>& environment, const std::string& text) {
  Say(text);
  WriteFailure(environment, text);
  return 1;
}

// Step 1: input/config/hyperparameters.json, every value as its raw text.
std::variant<std::map<std::string, std::string>, Failure> ReadHyperparameters(
    const fs::path& config_dir) {
  const std::optional<std::string> hps_text = ReadText(config_dir / "hyperparameters.json");
  const json hps_json =
      hps_text.has_value() ? json::parse(*hps_text, nullptr, /*allow_exceptions=*/false) : json();
  if (!hps_json.is_object()) {
    return Failure{"ClientError: cannot read the hyperparameters of the job from " +
                   (config_dir / "hyperparameters.json").string()};
  }
  std::map<std::string, std::string> hyperparameters;
  for (const auto& [name, value] : hps_json.items()) {
    hyperparameters[name] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return hyperparameters;
}

// A hyperparameter that names a string (sagemaker_program, sagemaker_submit_directory): its
// decoded value, "" when it is missing or not a string.
std::string StringHyperparameter(const std::map<std::string, std::string>& hyperparameters,
                                 const std::string& name) {
  const json decoded = toolkit::DecodeHyperparameter(Get(hyperparameters, name));
  return decoded.is_string() ? decoded.get<std::string>() : "";
}

// A job without an entry point: the XGBoost image's built-in algorithm (its own program, in the
// job folder, with the job's variables), else a failure. The runner's exit code.
int RunWithoutEntryPoint(const ScriptRunnerOptions& options,
                         const std::map<std::string, std::string>& environment,
                         const std::string& job_dir) {
  if (options.framework == "xgboost") {
    const std::vector<std::string> command = {options.python, options.xgboost_algorithm};
    Say("amt-script-runner: the built-in XGBoost algorithm: " + command[0] + " " + command[1]);
    const Outcome ran = RunProcess(command, job_dir, environment);
    if (ran.exit_code == 0) return 0;
    return Fail(environment, toolkit::ProcessErrorMessage(
                                 "ExecuteUserScriptError", ran.exit_code,
                                 toolkit::ErrorMessageFromOutput(ran.stderr_tail), command));
  }
  return Fail(environment,
              "ClientError: the job has no sagemaker_program hyperparameter: amt-local runs " +
                  (options.framework.empty() ? std::string("framework") : options.framework) +
                  " images in script mode only (an estimator with entry_point), or map the image "
                  "to a trainer of your own (amtd --image-map)");
}

// Step 3: makes a command entry point executable (on the descriptor OpenEntryPoint checked: a
// path could be swapped for a link meanwhile), or installs the dependencies into a virtual
// environment of the job (requirements.h), which may change `python` and `env`.
std::optional<std::string> PrepareEntryPoint(const ScriptRunnerOptions& options, EntryType type,
                                             const UniqueFd& entry_point, const fs::path& code_dir,
                                             const std::string& job_dir, std::string& python,
                                             std::map<std::string, std::string>& env) {
  if (type == EntryType::kCommand) {
    (void)::fchmod(entry_point.get(), 0777);
    return std::nullopt;
  }
  if (!options.install_requirements) return std::nullopt;
  std::error_code ec;
  DependencyPlan plan;
  plan.python = options.python;
  plan.code_dir = code_dir;
  plan.venv_dir = fs::path(job_dir) / "venv";
  plan.package = type == EntryType::kPackage;
  plan.requirements = fs::exists(code_dir / "requirements.txt", ec);
  const RunFn run = [](const std::vector<std::string>& argv, const std::string& cwd,
                       const std::map<std::string, std::string>& run_env) {
    Outcome outcome = RunProcess(argv, cwd, run_env);
    return ProcessResult{outcome.exit_code, std::move(outcome.stderr_tail),
                         std::move(outcome.launch_error)};
  };
  return InstallDependencies(plan, run, python, env);
}

// The command that runs the entry point with the user's arguments.
std::vector<std::string> ScriptCommand(EntryType type, const std::string& python,
                                       const std::string& program,
                                       const std::vector<std::string>& user_args) {
  std::vector<std::string> command;
  if (type == EntryType::kProgram) {
    command = {python, program};
    command.insert(command.end(), user_args.begin(), user_args.end());
  } else if (type == EntryType::kPackage) {
    command = {python, "-m", ModuleName(program)};
    command.insert(command.end(), user_args.begin(), user_args.end());
  } else {
    std::string line = "./" + ShellQuote(program);
    for (const std::string& arg : user_args) line += " " + ShellQuote(arg);
    command = {"/bin/sh", "-c", line};
  }
  return command;
}

// Step 4: the script, in the code folder; output/success when it exits 0. The exit code.
int RunScript(const ScriptRunnerOptions& options,
              const std::map<std::string, std::string>& environment,
              const std::vector<std::string>& command, const fs::path& code_dir,
              const std::map<std::string, std::string>& env) {
  std::string shown;
  for (const std::string& part : command) shown += (shown.empty() ? "" : " ") + part;
  Say("amt-script-runner: invoking the user script (" + options.framework +
      " script mode): " + shown);
  const Outcome ran = RunProcess(command, code_dir.string(), env);
  if (!ran.launch_error.empty()) return Fail(environment, "ClientError: " + ran.launch_error);
  if (ran.exit_code != 0) {
    return Fail(environment, toolkit::ProcessErrorMessage(
                                 "ExecuteUserScriptError", ran.exit_code,
                                 toolkit::ErrorMessageFromOutput(ran.stderr_tail), command));
  }
  std::ofstream(fs::path(Get(environment, "SM_OUTPUT_DIR", ".")) / "success");
  return 0;
}

}  // namespace

int RunScriptMode(const ScriptRunnerOptions& options,
                  const std::map<std::string, std::string>& environment) {
  InstallStopHandlers();
  const auto fail = [&](const std::string& text) { return Fail(environment, text); };
  if (!FindsExecutable(options.python, Get(environment, "PATH"))) {
    const std::string framework = options.framework.empty() ? "FRAMEWORK" : options.framework;
    return fail("ClientError: the Python interpreter for " + framework + " images, " +
                options.python +
                ", is not an executable file (nor found in PATH): give amtd --python " + framework +
                "=/path/to/bin/python");
  }
  const fs::path config_dir = Get(environment, "SM_INPUT_CONFIG_DIR");
  const std::string job_dir = Get(environment, "AMT_JOB_DIR", fs::current_path().string());
  auto read = ReadHyperparameters(config_dir);
  if (const auto* failure = std::get_if<Failure>(&read)) return fail(failure->text);
  const auto& hyperparameters = std::get<std::map<std::string, std::string>>(read);
  const std::string program = StringHyperparameter(hyperparameters, "sagemaker_program");
  if (hyperparameters.count("sagemaker_program") == 0 || program.empty()) {
    return RunWithoutEntryPoint(options, environment, job_dir);
  }

  // Step 2: the code.
  const std::string submit = StringHyperparameter(hyperparameters, "sagemaker_submit_directory");
  const fs::path code_dir = fs::path(job_dir) / "code";
  if (submit.empty()) {
    return fail(
        "ClientError: the job has no sagemaker_submit_directory hyperparameter: where "
        "its code is");
  }
  ExtractOptions limits = UnpackLimits(environment);
  limits.write = options.unpack_write;
  if (auto failure = FetchCode(submit, options.s3_root, code_dir, job_dir, std::move(limits))) {
    return fail(failure->text);
  }
  std::variant<UniqueFd, Failure> entry_point = OpenEntryPoint(code_dir, program, submit);
  if (const auto* failure = std::get_if<Failure>(&entry_point)) return fail(failure->text);

  const EntryType type = EntryTypeOf(program, code_dir);
  const std::vector<std::string> user_args =
      toolkit::ToCmdArgs(toolkit::UserHyperparameters(hyperparameters));
  std::map<std::string, std::string> env =
      ToolkitEnvironment(environment, hyperparameters, code_dir.string(), user_args);
  std::string python = options.python;
  if (auto failure = PrepareEntryPoint(options, type, std::get<UniqueFd>(entry_point), code_dir,
                                       job_dir, python, env)) {
    return fail(*failure);
  }
  return RunScript(options, environment, ScriptCommand(type, python, program, user_args), code_dir,
                   env);
}

}  // namespace amt::worker::script
