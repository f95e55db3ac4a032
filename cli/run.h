// `amt run`: runs a tuning or training job file end to end on this machine (an embedded
// orchestrator plus a local worker), showing progress with ProgressRenderer.
#ifndef AMT_CLI_RUN_H_
#define AMT_CLI_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

namespace amt::cli {

struct RunOptions {
  std::string job_file;  // positional: CreateHyperParameterTuningJob or CreateTrainingJob JSON
  std::string data_dir = ".amt";  // --data-dir, default ".amt" in the current directory
  int slots = 0;                  // --slots, local worker slots; 0 = MaxParallelTrainingJobs
  double time_scale = 1.0;        // --time-scale: multiply SageMaker's waits (stop grace, limits)
  std::string image_map;          // --image-map FILE (JSON: image URI -> argv)
  std::string
      name;  // --name: override the job name (default: the file's name + a -NNNN suffix if taken)
  bool quiet = false;               // --quiet: only the final summary
  double spot_mean_seconds = 600;   // --spot-mean-seconds: managed spot interruptions (0: none)
  uint64_t spot_seed = 0;           // --spot-seed
  double spot_interrupt_after = 0;  // --spot-interrupt-after: a fixed interruption time (0: off)
  int spot_max_interruptions = 2;   // --spot-max-interruptions
  // --python [FRAMEWORK=]PATH: interpreters of framework images (script mode), as amtd's flag.
  std::vector<std::string> python;
  // --http-port: the page and SageMaker's HTTP API while the job runs (amtd's --http-port). When
  // the port is taken, a free one is used; 0 picks a free one, -1 serves none.
  int http_port = 7071;
  bool ui = true;  // --ui on|off: serve the page (amtd --ui)
  // --keep-serving: once the job has ended, keep the page (and the API) up until Ctrl-C.
  bool keep_serving = false;
};

// Runs the job and returns the process exit code (0 iff the job ended Completed).
int RunTuningJob(const RunOptions& options);

}  // namespace amt::cli

#endif  // AMT_CLI_RUN_H_
