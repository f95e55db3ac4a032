#include "worker/process_tree.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

namespace amt::worker {
namespace {

constexpr int kMaxScans = 20;

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The process's start time in clock ticks after boot (/proc/<pid>/stat field 22), if it exists.
std::optional<std::string> StartTime(pid_t pid) {
  const std::string stat = ReadWhole("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {  // field 3 (state) is the first after ')'
    if (!(fields >> field)) return std::nullopt;
  }
  return field;
}

// The AMT_PROCESS_TREE value in /proc/<pid>/environ; "" when absent or unreadable.
std::string MarkerOf(pid_t pid) {
  const std::string environ = ReadWhole("/proc/" + std::to_string(pid) + "/environ");
  const std::string prefix = std::string(kProcessTreeVariable) + "=";
  size_t start = 0;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(start, prefix.size(), prefix) == 0) {
      return environ.substr(start + prefix.size(), end - start - prefix.size());
    }
    start = end + 1;
  }
  return "";
}

// Calls `fn(pid, marker)` for every process but this one that carries a marker.
template <typename Fn>
void ForEachMarked(Fn fn) {
  std::error_code ec;
  const pid_t self = ::getpid();
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == self || pid <= 1) continue;
    if (std::string marker = MarkerOf(pid); !marker.empty()) fn(pid, marker);
  }
}

// Whether the owner named by `marker` ("<pid>-<start time>-<n>") is alive.
bool OwnerAlive(const std::string& marker) {
  const size_t first = marker.find('-');
  const size_t second = marker.find('-', first + 1);
  if (first == std::string::npos || second == std::string::npos) return true;  // not ours
  pid_t owner = 0;
  try {
    owner = static_cast<pid_t>(std::stol(marker.substr(0, first)));
  } catch (...) {
    return true;
  }
  const auto started = StartTime(owner);
  return started.has_value() && *started == marker.substr(first + 1, second - first - 1);
}

}  // namespace

std::string NewProcessTreeMarker() {
  static std::atomic<uint64_t> counter{0};
  static const std::string owner =
      std::to_string(::getpid()) + "-" + StartTime(::getpid()).value_or("0");
  return owner + "-" + std::to_string(++counter);
}

int KillProcessTree(std::string_view marker) {
  std::set<pid_t> signalled;  // a killed process may still show its environ for a moment
  for (int scan = 0; scan < kMaxScans; ++scan) {
    bool found = false;
    ForEachMarked([&](pid_t pid, const std::string& m) {
      if (m != marker || signalled.contains(pid)) return;
      if (::kill(pid, SIGKILL) == 0) signalled.insert(pid);
      found = true;
    });
    if (!found) break;
  }
  return static_cast<int>(signalled.size());
}

int KillOrphanedProcessTrees() {
  int signalled = 0;
  ForEachMarked([&](pid_t pid, const std::string& marker) {
    if (!OwnerAlive(marker) && ::kill(pid, SIGKILL) == 0) ++signalled;
  });
  return signalled;
}

}  // namespace amt::worker
