// Runs the built `amt` binary (AMT_BINARY) for what only main.cc decides: help, usage errors
// and their exit codes, the endpoint in connection errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "cli/input.h"
#include "proto/amt/v1/operations.h"
#include "tests/support/temp_dir.h"

namespace {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

using ::amt::testing::ReadFile;

// Runs `amt <args>` with a clean AMT_ENDPOINT unless `env` sets one.
Result RunAmt(const std::string& args, const std::string& env = "") {
  const ::amt::testing::TempDir temp("amt-main-test");
  const std::string out = temp.str() + "/amt.out";
  const std::string err = temp.str() + "/amt.err";
  const std::string command = "env -u AMT_ENDPOINT " + env + " " + AMT_BINARY + " " + args + " >" +
                              out + " 2>" + err + " </dev/null";
  const int status = std::system(command.c_str());
  Result result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(out);
  result.err = ReadFile(err);
  return result;
}

constexpr char kUsage[] =
    "usage: amt [--endpoint HOST:PORT] COMMAND [flags]\n"
    "To see help text, you can run:\n"
    "\n"
    "  amt --help\n"
    "  amt COMMAND --help\n"
    "\n";

TEST(AmtMain, HelpListsEveryCommandAndExits0) {
  const Result result = RunAmt("--help");
  EXPECT_EQ(result.exit_code, 0);
  for (const char* command :
       {"create-hyper-parameter-tuning-job", "describe-hyper-parameter-tuning-job",
        "list-hyper-parameter-tuning-jobs", "list-training-jobs-for-hyper-parameter-tuning-job",
        "stop-hyper-parameter-tuning-job", "delete-hyper-parameter-tuning-job",
        "create-training-job", "describe-training-job", "list-training-jobs", "stop-training-job",
        "delete-training-job", "logs", "watch", "run", "explain", "env", "--endpoint"}) {
    EXPECT_NE(result.out.find(command), std::string::npos) << command;
  }
}

// The table amtd's service and gateway are built from: each operation in it must have its
// subcommand, named as the aws cli names it. CLI11 shows a subcommand's own usage line for
// `amt COMMAND --help`, and fails on a command it does not know.
#define AMT_NAME(Op) #Op,
TEST(AmtMain, EveryServedOperationHasItsCommand) {
  for (const std::string operation : {AMT_UNARY_OPERATIONS(AMT_NAME)}) {
    const std::string command = amt::cli::KebabCase(operation);
    const Result result = RunAmt(command + " --help");
    EXPECT_EQ(result.exit_code, 0) << operation;
    EXPECT_NE(result.out.find("amt " + command + " [OPTIONS]"), std::string::npos)
        << operation << ": " << result.out;
    EXPECT_NE(result.out.find(operation), std::string::npos) << operation << ": " << result.out;
  }
}
#undef AMT_NAME

// What makes the test above fail for an operation without its command.
TEST(AmtMain, AnUnknownCommandShowsNoUsageLineOfItsOwn) {
  const Result result = RunAmt("describe-nothing --help");
  EXPECT_EQ(result.out.find("amt describe-nothing [OPTIONS]"), std::string::npos) << result.out;
}

TEST(AmtMain, GenericCommandTakesCliInputJsonAndAFlagPerMember) {
  const Result result = RunAmt("update-training-job --help");
  EXPECT_EQ(result.exit_code, 0);
  for (const char* flag :
       {"--cli-input-json", "--training-job-name", "--profiler-config",
        "--profiler-rule-configurations", "--resource-config", "--remote-debug-config"}) {
    EXPECT_NE(result.out.find(flag), std::string::npos) << flag;
  }
}

TEST(AmtMain, GenericCommandWithBadJsonFlagExits252WithoutCallingAmtd) {
  const Result result =
      RunAmt("--endpoint 127.0.0.1:1 add-tags --resource-arn arn:x --tags team=ml");
  EXPECT_EQ(result.exit_code, 252);
  EXPECT_EQ(result.err, "\nError parsing parameter 'tags': Invalid JSON: team=ml\n");
}

TEST(AmtMain, CommandHelpExplainsEachFlag) {
  const Result result = RunAmt("list-training-jobs-for-hyper-parameter-tuning-job --help");
  EXPECT_EQ(result.exit_code, 0);
  for (const char* flag :
       {"--hyper-parameter-tuning-job-name", "--max-results", "--next-token", "--page-size",
        "--starting-token", "--no-paginate", "--sort-by", "--sort-order", "--status-equals"}) {
    EXPECT_NE(result.out.find(flag), std::string::npos) << flag;
  }
}

TEST(AmtMain, MissingCommandExits252WithUsage) {
  const Result result = RunAmt("");
  EXPECT_EQ(result.exit_code, 252);
  EXPECT_EQ(result.err, std::string(kUsage) + "amt: error: A subcommand is required\n");
}

TEST(AmtMain, MissingRequiredFlagExits252WithUsage) {
  const Result result = RunAmt("describe-training-job");
  EXPECT_EQ(result.exit_code, 252);
  EXPECT_EQ(result.err, std::string(kUsage) + "amt: error: --training-job-name is required\n");
}

TEST(AmtMain, UnreadableInputFileExits252) {
  const Result result =
      RunAmt("create-hyper-parameter-tuning-job --cli-input-json file:///no/such/job.json");
  EXPECT_EQ(result.exit_code, 252);
  EXPECT_EQ(result.err,
            "\nError parsing parameter 'cli-input-json': Unable to load paramfile "
            "file:///no/such/job.json: No such file or directory\n");
}

// Port 1 on the loopback refuses connections at once.
TEST(AmtMain, ConnectionRefusedExits255NamingTheEndpointFlag) {
  const Result result =
      RunAmt("--endpoint 127.0.0.1:1 describe-training-job --training-job-name x");
  EXPECT_EQ(result.exit_code, 255);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "\nCould not connect to the endpoint URL: \"127.0.0.1:1\"\n");
}

TEST(AmtMain, EndpointFlagMayFollowTheCommand) {
  const Result result =
      RunAmt("describe-training-job --training-job-name x --endpoint 127.0.0.1:1");
  EXPECT_EQ(result.exit_code, 255);
  EXPECT_EQ(result.err, "\nCould not connect to the endpoint URL: \"127.0.0.1:1\"\n");
}

TEST(AmtMain, EndpointComesFromEnvironmentWithoutFlag) {
  const Result result =
      RunAmt("stop-training-job --training-job-name x", "AMT_ENDPOINT=127.0.0.1:1");
  EXPECT_EQ(result.exit_code, 255);
  EXPECT_EQ(result.err, "\nCould not connect to the endpoint URL: \"127.0.0.1:1\"\n");
}

TEST(AmtMain, RunWithMissingJobFileExits252) {
  const Result result = RunAmt("run job.json --slots 2 --time-scale 0.01 --quiet");
  EXPECT_EQ(result.exit_code, 252);
  EXPECT_EQ(result.err,
            "amt run: Error parsing parameter 'cli-input-json': Unable to load paramfile job.json: "
            "No such file or directory\n");
}

}  // namespace
