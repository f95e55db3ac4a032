// amt-script-runner: runs a framework estimator's training script as the SageMaker training
// toolkit does (script_runner.h). amtd makes it the command of framework images:
//   amt-script-runner --python PY --s3-root DIR --framework NAME train
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include "CLI/CLI.hpp"
#include "worker/script_runner/script_runner.h"

extern char** environ;

int main(int argc, char** argv) {
  CLI::App app{
      "amt-script-runner: runs a SageMaker framework estimator's entry point (script mode) as "
      "the SageMaker training toolkit does, in the job folder amt-worker prepared"};
  amt::worker::script::ScriptRunnerOptions options;
  bool no_requirements = false;
  std::string mode = "train";
  app.add_option("--python", options.python, "Python interpreter of the script")
      ->capture_default_str();
  app.add_option("--s3-root", options.s3_root, "Folder standing for S3 (s3:// code URIs)");
  app.add_option("--framework", options.framework, "The image's framework, for messages");
  app.add_flag("--no-requirements", no_requirements, "Do not pip install requirements.txt");
  app.add_option("mode", mode, "train (the container's argument)");
  CLI11_PARSE(app, argc, argv);
  if (mode != "train") {
    std::fprintf(stderr, "amt-script-runner: only `train` is served, not `%s`\n", mode.c_str());
    return 2;
  }
  options.install_requirements = !no_requirements;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  options.xgboost_algorithm = (self.parent_path() / "amt-xgboost-algorithm.py").string();
  std::map<std::string, std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals != std::string::npos) environment[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return amt::worker::script::RunScriptMode(options, environment);
}
