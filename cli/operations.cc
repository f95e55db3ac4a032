#include "cli/operations.h"

#include <map>

#include "cli/input.h"
#include "proto/amt/v1/operations.h"

namespace amt::cli {
namespace {

using google::protobuf::Message;
using Stub = v1::TuningService::StubInterface;

// The --help line of each operation. One the map lacks still gets its command, with a line that
// names the operation: a new operation in the table never waits for its text here.
std::string Summary(const std::string& operation) {
  static const auto* summaries = new std::map<std::string, std::string>{
      {"CreateHyperParameterTuningJob", "Start a tuning job (CreateHyperParameterTuningJob)"},
      {"DescribeHyperParameterTuningJob", "Show a tuning job (DescribeHyperParameterTuningJob)"},
      {"ListHyperParameterTuningJobs",
       "List tuning jobs (ListHyperParameterTuningJobs); follows NextToken and prints every item "
       "unless told otherwise"},
      {"ListTrainingJobsForHyperParameterTuningJob",
       "List the training jobs a tuning job launched (ListTrainingJobsForHyperParameterTuningJob)"},
      {"StopHyperParameterTuningJob",
       "Stop a tuning job and its running training jobs (StopHyperParameterTuningJob); prints "
       "nothing"},
      {"DeleteHyperParameterTuningJob",
       "Delete an ended tuning job's entry; its training jobs stay "
       "(DeleteHyperParameterTuningJob); prints nothing"},
      {"CreateTrainingJob", "Start a training job (CreateTrainingJob)"},
      {"DescribeTrainingJob", "Show a training job (DescribeTrainingJob)"},
      {"ListTrainingJobs",
       "List training jobs (ListTrainingJobs); follows NextToken and prints every item unless "
       "told otherwise"},
      {"StopTrainingJob", "Stop a training job (StopTrainingJob); prints nothing"},
      {"DeleteTrainingJob",
       "Delete an ended training job with its logs and metrics (DeleteTrainingJob); prints "
       "nothing"},
      {"UpdateTrainingJob",
       "Change a training job's profiler settings and rules (while it runs), remote debugging, "
       "or its warm pool's KeepAlivePeriodInSeconds (UpdateTrainingJob)"},
      {"AddTags",
       "Add tags to a tuning or training job, or overwrite those of the same keys; the job is "
       "named by --resource-arn (AddTags)"},
      {"ListTags", "List a tuning or training job's tags, by --resource-arn (ListTags)"},
      {"DeleteTags",
       "Remove tags from a tuning or training job, by --resource-arn and --tag-keys "
       "(DeleteTags); prints nothing"},
      {"ExplainTrainingJob",
       "Every early-stopping decision for a training job, as JSON (ExplainTrainingJob; `amt "
       "explain` prints it as text)"},
      {"ExplainHyperParameterTuningJob",
       "Every training job's objective curve and stop decisions of a tuning job, and AUTO's "
       "median line, as JSON (ExplainHyperParameterTuningJob)"},
  };
  const auto it = summaries->find(operation);
  return it != summaries->end() ? it->second : "Send " + operation + " to amtd";
}

// An entry per operation; the lambda has no capture, so it converts to the function pointer.
#define AMT_CLI_OPERATION(Op)                                                                   \
  Operation{                                                                                    \
      #Op,                                                                                      \
      KebabCase(#Op),                                                                           \
      Summary(#Op),                                                                             \
      &v1::Op##Request::default_instance(),                                                     \
      &v1::Op##Response::default_instance(),                                                    \
      [](Stub& stub, grpc::ClientContext* context, const Message& request, Message* response) { \
        return stub.Op(context, static_cast<const v1::Op##Request&>(request),                   \
                       static_cast<v1::Op##Response*>(response));                               \
      }},

}  // namespace

const std::vector<Operation>& Operations() {
  static const auto* operations =
      new std::vector<Operation>{AMT_UNARY_OPERATIONS(AMT_CLI_OPERATION)};
  return *operations;
}

#undef AMT_CLI_OPERATION

const Operation* FindOperation(const std::string& name) {
  for (const Operation& operation : Operations()) {
    if (operation.name == name) return &operation;
  }
  return nullptr;
}

}  // namespace amt::cli
