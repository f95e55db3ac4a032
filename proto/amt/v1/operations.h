// The unary operations of amt.v1.TuningService, listed once for every transport and the client.
// The gRPC service (orchestrator/api/tuning_service.h) expands the lists into its method
// overrides, the AWS JSON gateway (orchestrator/gateway/aws_json.h) into its X-Amz-Target table,
// the amt client (cli/operations.h) into one subcommand per operation; adding an operation is one
// line here plus its SageMakerApi method, and the compiler then asks for nothing else.
//
// An entry X(Op) stands for: request v1::OpRequest, response v1::OpResponse, the handler
// SageMakerApi::Op, the gRPC method /amt.v1.TuningService/Op, the amt command op-in-kebab-case
// and, for SageMaker's own operations, the HTTP target "SageMaker.Op" (for amt-local's,
// "AmtLocal.Op").
//
// The table lives beside the proto it lists, not in orchestrator/api/, because the client may
// include nothing of orchestrator/ (scripts/check-layering.py, rule [client]); it is names only,
// so it carries no dependency to either side.
//
// X-macros (as in LLVM's .def files) rather than a constexpr table because the gRPC side has to
// override generated virtual functions by name, which no template can do. The streaming RPCs
// (logs, watch) are not in the lists: each has its own loop around SageMakerApi's reads.
// tests/unit/api/operations_test.cc checks the lists against the proto's service descriptor.
#ifndef AMT_PROTO_AMT_V1_OPERATIONS_H_
#define AMT_PROTO_AMT_V1_OPERATIONS_H_

// SageMaker's operations: served over gRPC and over SageMaker's own HTTP API.
#define AMT_SAGEMAKER_OPERATIONS(X)             \
  X(CreateHyperParameterTuningJob)              \
  X(DescribeHyperParameterTuningJob)            \
  X(ListHyperParameterTuningJobs)               \
  X(ListTrainingJobsForHyperParameterTuningJob) \
  X(StopHyperParameterTuningJob)                \
  X(DeleteHyperParameterTuningJob)              \
  X(CreateTrainingJob)                          \
  X(DescribeTrainingJob)                        \
  X(ListTrainingJobs)                           \
  X(StopTrainingJob)                            \
  X(DeleteTrainingJob)                          \
  X(UpdateTrainingJob)                          \
  X(AddTags)                                    \
  X(ListTags)                                   \
  X(DeleteTags)

// amt-local's own unary operations: over gRPC, and over HTTP as the targets "AmtLocal.Op" of the
// AWS JSON gateway (SageMaker has no such operation, so no SDK calls them; the web page does).
#define AMT_EXTENSION_OPERATIONS(X) \
  X(ExplainTrainingJob)             \
  X(ExplainHyperParameterTuningJob)

// Every unary operation of amt.v1.TuningService.
#define AMT_UNARY_OPERATIONS(X) \
  AMT_SAGEMAKER_OPERATIONS(X)   \
  AMT_EXTENSION_OPERATIONS(X)

#endif  // AMT_PROTO_AMT_V1_OPERATIONS_H_
