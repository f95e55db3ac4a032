#include "worker/process_tree.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "common/proc_file.h"

namespace amt::worker {
namespace {

constexpr int kMaxScans = 20;
constexpr int kMaxLooks = 50;
constexpr std::chrono::microseconds kUnsettledPause{200};

// What /proc/<pid>/environ says of a process's marker.
struct Reading {
  enum Kind {
    kMarked,    // carries `marker`
    kUnmarked,  // has an environment without a marker, or is gone, a zombie or a kernel thread
    kUnsettled  // shows no environment for now: between the two halves of an execve, the old
                // environment is gone and the new one not yet set (the kernel reads it as empty)
  };
  Kind kind = kUnmarked;
  std::string marker;
};

// The fields of /proc/<pid>/stat from field 3 (the state) on; empty when the process is gone.
std::vector<std::string> StatFields(pid_t pid) {
  const std::string stat = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return {};
  std::istringstream in(stat.substr(paren + 1));
  std::vector<std::string> fields;
  for (std::string field; in >> field;) fields.push_back(field);
  return fields;
}

// The process's start time in clock ticks after boot (field 22), if it exists.
std::optional<std::string> StartTime(pid_t pid) {
  const std::vector<std::string> fields = StatFields(pid);
  if (fields.size() <= 22 - 3) return std::nullopt;
  return fields[22 - 3];
}

// Whether a process that shows an empty environ is between the two halves of an execve: not a
// zombie or kernel thread (field 3, the state, and field 9, the flags with PF_KTHREAD), and its
// memory has no environment yet (field 52, env_end, 0; a process started with an empty
// environment has env_start == env_end != 0).
bool InTheMiddleOfAnExec(pid_t pid) {
  const std::vector<std::string> fields = StatFields(pid);
  auto field = [&](size_t number) { return fields.size() > number - 3 ? fields[number - 3] : ""; };
  if (field(3).empty() || field(3) == "Z" || field(3) == "X") return false;
  constexpr unsigned long kKernelThread = 0x00200000;
  if (field(9).empty() || (std::stoul(field(9)) & kKernelThread) != 0) return false;
  return field(52).empty() || field(52) == "0";
}

// Whether the process runs a program: false for kernel threads and zombies (no memory, so no
// executable and no environment), and for processes the caller may not inspect. One readlink,
// where reading environ and then stat (to tell a kernel thread from a process in an execve) costs
// two opens and the kernel's formatting of stat: most of /proc is kernel threads (61 of 70 on a
// quiet machine), and a scan runs at the end of every job (strace of 40 trivial jobs: 343
// environ and 1 stat opens instead of 2,898 and 2,565).
// An execve sets the new memory's executable before it switches to that memory, so a process in
// the middle of one still has an executable.
bool RunsAProgram(pid_t pid) {
  char target[1];  // only whether the link resolves matters, not where to
  return ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), target, sizeof(target)) >= 0;
}

Reading ReadMarker(pid_t pid) {
  const std::string environ = ReadProcFile("/proc/" + std::to_string(pid) + "/environ");
  if (environ.empty()) {
    return {InTheMiddleOfAnExec(pid) ? Reading::kUnsettled : Reading::kUnmarked, ""};
  }
  const std::string prefix = std::string(kProcessTreeVariable) + "=";
  size_t start = 0;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    if (environ.compare(start, prefix.size(), prefix) == 0) {
      return {Reading::kMarked, environ.substr(start + prefix.size(), end - start - prefix.size())};
    }
    start = end + 1;
  }
  return {Reading::kUnmarked, ""};
}

// Calls `fn(pid, marker)` for every process but this one that carries a marker, once. A process
// in the middle of an execve shows no environment for a moment: it is looked at again until it
// does (an execve ends within microseconds), for at most kMaxLooks pauses.
template <typename Fn>
void ForEachMarked(Fn fn) {
  std::error_code ec;
  const pid_t self = ::getpid();
  std::set<pid_t> unsettled;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == self || pid <= 1 || !RunsAProgram(pid)) continue;
    const Reading reading = ReadMarker(pid);
    if (reading.kind == Reading::kMarked) fn(pid, reading.marker);
    if (reading.kind == Reading::kUnsettled) unsettled.insert(pid);
  }
  for (int look = 0; look < kMaxLooks && !unsettled.empty(); ++look) {
    std::this_thread::sleep_for(kUnsettledPause);
    std::erase_if(unsettled, [&](pid_t pid) {
      const Reading reading = ReadMarker(pid);
      if (reading.kind == Reading::kMarked) fn(pid, reading.marker);
      return reading.kind != Reading::kUnsettled;
    });
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
    if (!found) break;  // a process found may have forked before it died: scan again
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
