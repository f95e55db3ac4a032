// The unary operations amtd serves, as the amt client sends them: one entry per operation of the
// shared table (proto/amt/v1/operations.h, the list amtd's gRPC service and HTTP gateway expand
// too), with its command name, its --help line and a call through the generated stub on plain
// protobuf messages, so that one code path (Commands::Send) can send any of them. main.cc
// registers one subcommand per entry: a served operation cannot lack its command.
#ifndef AMT_CLI_OPERATIONS_H_
#define AMT_CLI_OPERATIONS_H_

#include <string>
#include <vector>

#include "amt/v1/tuning.grpc.pb.h"
#include "google/protobuf/message.h"

namespace amt::cli {

struct Operation {
  std::string name;     // the operation: "UpdateTrainingJob"
  std::string command;  // its subcommand, the aws cli's kebab-case: "update-training-job"
  std::string summary;  // the line `amt --help` shows for it
  // Default instances of the request and response types (New() makes a fresh message).
  const google::protobuf::Message* request;
  const google::protobuf::Message* response;
  // Calls the operation on `stub`; `request` and `response` must be of the types above.
  grpc::Status (*call)(v1::TuningService::StubInterface& stub, grpc::ClientContext* context,
                       const google::protobuf::Message& request,
                       google::protobuf::Message* response);
};

// Every unary operation of amt.v1.TuningService (AMT_UNARY_OPERATIONS), in the table's order.
const std::vector<Operation>& Operations();

// The entry named `name`, or nullptr when the table has none.
const Operation* FindOperation(const std::string& name);

}  // namespace amt::cli

#endif  // AMT_CLI_OPERATIONS_H_
