#include "worker/container_engine.h"

#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace amt::worker {
namespace {

// What the engine printed on stderr, on one line, for an error's message.
std::string ErrorText(const CommandResult& result) {
  std::string text(absl::StripAsciiWhitespace(result.err));
  if (text.empty()) text = std::string(absl::StripAsciiWhitespace(result.out));
  if (text.empty()) text = "exit code " + std::to_string(result.exit_code);
  return text;
}

bool SaysNoSuch(const CommandResult& result, std::string_view what) {
  const std::string err = absl::AsciiStrToLower(result.err);
  const std::string thing(what);
  return absl::StrContains(err, "no such " + thing) || absl::StrContains(err, thing + " not known");
}

}  // namespace

absl::StatusOr<CommandResult> ContainerEngine::Run(std::vector<std::string> args) const {
  args.insert(args.begin(), cli_);
  auto result = runner_.Run(args);
  if (!result.ok()) {
    return absl::UnavailableError(name_ + " (" + cli_ +
                                  "): " + std::string(result.status().message()));
  }
  return result;
}

absl::StatusOr<bool> ContainerEngine::HasImage(const std::string& image) const {
  auto result = Run({"image", "inspect", "--format", "{{.Id}}", image});
  if (!result.ok()) return result.status();
  if (result->exit_code == 0) return true;
  if (SaysNoSuch(*result, "image")) return false;
  return absl::UnavailableError(name_ + " cannot look up image " + image + ": " +
                                ErrorText(*result));
}

absl::StatusOr<ContainerState> ContainerEngine::Inspect(const std::string& name) const {
  auto result = Run({"inspect", "--type", "container", "--format",
                     "{{.State.ExitCode}} {{.State.OOMKilled}}", name});
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    if (SaysNoSuch(*result, "container")) {
      return absl::NotFoundError("no container " + name);
    }
    return absl::UnavailableError(name_ + " cannot inspect " + name + ": " + ErrorText(*result));
  }
  const std::vector<std::string> words =
      absl::StrSplit(absl::StripAsciiWhitespace(result->out), ' ', absl::SkipEmpty());
  ContainerState state;
  if (words.size() != 2 || !absl::SimpleAtoi(words[0], &state.exit_code)) {
    return absl::InternalError(name_ + " inspect of " + name + " printed '" + result->out + "'");
  }
  state.oom_killed = words[1] == "true";
  return state;
}

absl::Status ContainerEngine::Kill(const std::string& name, int signal) const {
  auto result = Run({"kill", "--signal=" + std::to_string(signal), name});
  if (!result.ok()) return result.status();
  if (result->exit_code == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(name_ + " kill " + name + ": " + ErrorText(*result));
}

absl::Status ContainerEngine::Remove(const std::string& name) const {
  auto result = Run({"rm", "--force", "--volumes", name});
  if (!result.ok()) return result.status();
  if (result->exit_code == 0 || SaysNoSuch(*result, "container")) return absl::OkStatus();
  return absl::UnavailableError(name_ + " rm " + name + ": " + ErrorText(*result));
}

absl::Status ContainerEngine::CreateNetwork(const std::string& name, bool internal,
                                            const std::string& work_dir) const {
  std::vector<std::string> args = {"network",  "create",
                                   "--driver", "bridge",
                                   "--label",  std::string(kWorkDirLabel) + "=" + work_dir};
  if (internal) args.push_back("--internal");
  args.push_back(name);
  auto result = Run(std::move(args));
  if (!result.ok()) return result.status();
  if (result->exit_code == 0) return absl::OkStatus();
  return absl::UnavailableError(name_ + " cannot create the job's network " + name + ": " +
                                ErrorText(*result));
}

absl::Status ContainerEngine::RemoveNetwork(const std::string& name) const {
  auto result = Run({"network", "rm", name});
  if (!result.ok()) return result.status();
  if (result->exit_code == 0 || SaysNoSuch(*result, "network") ||
      absl::StrContains(absl::AsciiStrToLower(result->err), "not found")) {
    return absl::OkStatus();
  }
  return absl::UnavailableError(name_ + " network rm " + name + ": " + ErrorText(*result));
}

absl::StatusOr<bool> ContainerEngine::NetworkResolvesNames(const std::string& name) const {
  if (name_ != "podman") return true;
  auto result = Run({"network", "inspect", "--format", "{{.DNSEnabled}}", name});
  if (!result.ok()) return result.status();
  const std::string said(absl::StripAsciiWhitespace(result->out));
  if (result->exit_code == 0 && (said == "true" || said == "false")) return said == "true";
  return absl::UnavailableError(name_ + " network inspect " + name + ": " + ErrorText(*result));
}

absl::StatusOr<int> ContainerEngine::RemoveLeftovers(const std::string& work_dir) const {
  auto listed = Run({"ps", "--all", "--quiet", "--no-trunc", "--filter",
                     std::string("label=") + kWorkDirLabel + "=" + work_dir});
  if (!listed.ok()) return listed.status();
  if (listed->exit_code != 0) {
    return absl::UnavailableError(name_ + " ps: " + ErrorText(*listed));
  }
  const std::vector<std::string> ids =
      absl::StrSplit(listed->out, absl::ByAnyChar("\n "), absl::SkipWhitespace());
  if (!ids.empty()) {
    std::vector<std::string> args = {"rm", "--force", "--volumes"};
    args.insert(args.end(), ids.begin(), ids.end());
    auto removed = Run(std::move(args));
    if (!removed.ok()) return removed.status();
    if (removed->exit_code != 0) {
      return absl::UnavailableError(name_ + " rm: " + ErrorText(*removed));
    }
  }
  // The networks of multi-instance jobs (their bridges would outlive the engine's daemon).
  auto networks = Run({"network", "ls", "--quiet", "--filter",
                       std::string("label=") + kWorkDirLabel + "=" + work_dir});
  if (!networks.ok()) return networks.status();
  for (const std::string& id :
       std::vector<std::string>(absl::StrSplit(networks->exit_code == 0 ? networks->out : "",
                                               absl::ByAnyChar("\n "), absl::SkipWhitespace()))) {
    if (absl::Status removed = RemoveNetwork(id); !removed.ok()) return removed;
  }
  return static_cast<int>(ids.size());
}

ContainerEngineFuture ReadyContainerEngine(std::shared_ptr<const ContainerEngine> engine) {
  std::promise<std::shared_ptr<const ContainerEngine>> ready;
  ready.set_value(std::move(engine));
  return ready.get_future().share();
}

absl::StatusOr<std::unique_ptr<ContainerEngine>> DetectContainerEngine(const std::string& mode,
                                                                       const std::string& cli,
                                                                       CommandRunner& runner) {
  if (mode == "none") return nullptr;
  if (mode != "auto" && mode != "docker" && mode != "podman") {
    return absl::InvalidArgumentError("--container-runtime is auto, docker, podman or none, not '" +
                                      mode + "'");
  }
  // Docker's client answers without its daemon; the server's version needs the daemon.
  const auto answers = [&](const std::string& name) -> absl::Status {
    const std::string client = cli.empty() ? name : cli;
    const std::string format = name == "docker" ? "{{.Server.Version}}" : "{{.Version}}";
    auto result = runner.Run({client, "version", "--format", format});
    if (!result.ok()) return result.status();
    if (result->exit_code != 0) {
      return absl::UnavailableError(name + " does not answer (" + client +
                                    " version: " + ErrorText(*result) + ")");
    }
    return absl::OkStatus();
  };
  for (const std::string name : {"docker", "podman"}) {
    if (mode != "auto" && mode != name) continue;
    const absl::Status status = answers(name);
    if (status.ok()) {
      return std::make_unique<ContainerEngine>(name, cli.empty() ? name : cli, runner);
    }
    if (mode != "auto") return status;
  }
  return nullptr;
}

}  // namespace amt::worker
