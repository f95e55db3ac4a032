// Running a short command (sbatch, squeue, scancel, scontrol) and collecting what it printed.
// The interface is what its users are given (SlurmExecutor, amt-worker's srun hosts), so their
// tests can answer for the command.
#ifndef AMT_COMMON_COMMAND_H_
#define AMT_COMMON_COMMAND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace amt {

struct CommandResult {
  int exit_code = 0;  // 128 + N when killed by signal N
  std::string out;
  std::string err;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (found on PATH when it has no '/') with argv[1..], stdin /dev/null, and waits.
  // The command gets no other descriptor of this process than its stdin, stdout and stderr.
  // NotFound when argv[0] cannot be started; otherwise its exit code and output.
  virtual absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv) = 0;
};

// The real one: posix_spawnp (amtd may be large; spawn does not copy its memory).
std::unique_ptr<CommandRunner> NewProcessCommandRunner();

}  // namespace amt

#endif  // AMT_COMMON_COMMAND_H_
