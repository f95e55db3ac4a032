// FakeEngineCommands: answers a container engine's commands (container_engine.h) as a test says,
// and records each one. The answers: an image the test added exists; `inspect` prints the state
// the test set for a container; `ps` and `network ls` list the leftovers the test set; `network
// inspect` says whether networks have DNS as the test set (yes unless told); `kill`, `rm` and
// `network create|rm` succeed. Thread-safe.
#ifndef AMT_TESTS_UNIT_WORKER_FAKE_CONTAINER_ENGINE_H_
#define AMT_TESTS_UNIT_WORKER_FAKE_CONTAINER_ENGINE_H_

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/command.h"

namespace amt::worker::testing {

class FakeEngineCommands final : public CommandRunner {
 public:
  void AddImage(const std::string& image) {
    std::lock_guard<std::mutex> lock(mu_);
    images_.insert(image);
  }
  // `inspect <name>` prints `state` ("137 true"); without one it says there is no such container.
  void SetState(const std::string& name, const std::string& state) {
    std::lock_guard<std::mutex> lock(mu_);
    states_[name] = state;
  }
  // `ps` lists these ids.
  void SetLeftovers(std::string ids) {
    std::lock_guard<std::mutex> lock(mu_);
    leftovers_ = std::move(ids);
  }
  // `network ls` lists these ids.
  void SetLeftoverNetworks(std::string ids) {
    std::lock_guard<std::mutex> lock(mu_);
    leftover_networks_ = std::move(ids);
  }
  // `network inspect --format {{.DNSEnabled}}` prints this.
  void SetNetworkDns(bool dns) {
    std::lock_guard<std::mutex> lock(mu_);
    network_dns_ = dns;
  }
  void SetDown(bool down) {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = down;
  }
  std::vector<std::vector<std::string>> commands() const {
    std::lock_guard<std::mutex> lock(mu_);
    return commands_;
  }

  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv) override {
    std::lock_guard<std::mutex> lock(mu_);
    commands_.push_back(argv);
    if (down_) return CommandResult{1, "", "Cannot connect to the Docker daemon. Is it running?"};
    const std::string& verb = argv.at(1);
    if (verb == "version") return CommandResult{0, "20.10.24\n", ""};
    if (verb == "image") {
      if (images_.count(argv.back()) > 0) return CommandResult{0, "sha256:abc\n", ""};
      return CommandResult{1, "[]\n", "Error: No such image: " + argv.back() + "\n"};
    }
    if (verb == "inspect") {
      const auto it = states_.find(argv.back());
      if (it != states_.end()) return CommandResult{0, it->second + "\n", ""};
      return CommandResult{1, "", "Error: No such container: " + argv.back() + "\n"};
    }
    if (verb == "ps") return CommandResult{0, leftovers_, ""};
    if (verb == "network" && argv.at(2) == "ls") return CommandResult{0, leftover_networks_, ""};
    if (verb == "network" && argv.at(2) == "inspect") {
      return CommandResult{0, network_dns_ ? "true\n" : "false\n", ""};
    }
    return CommandResult{0, "", ""};  // kill, rm, network create, network rm
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> images_;
  std::map<std::string, std::string> states_;
  std::string leftovers_;
  std::string leftover_networks_;
  bool network_dns_ = true;
  bool down_ = false;
  std::vector<std::vector<std::string>> commands_;
};

}  // namespace amt::worker::testing

#endif  // AMT_TESTS_UNIT_WORKER_FAKE_CONTAINER_ENGINE_H_
