// CloudWatchLogsHandler: the CloudWatch Logs reads that SageMaker's clients make of a training
// job's output, in CloudWatch Logs' own protocol (AWS JSON 1.1, X-Amz-Target: Logs_20140328.*).
// `Estimator.fit(logs=True)` and `Session.logs_for_job` of the SageMaker Python SDK, `aws logs
// get-log-events` and boto3's `logs` client read the log amtd already keeps for every training job
// (the lines GetTrainingJobLogs streams over gRPC), with nothing changed but the endpoint.
//
// As SageMaker lays it out: one log group, /aws/sagemaker/TrainingJobs; one stream per training
// job and host, "<TrainingJobName>/algo-<k>-<CreationTime in epoch seconds>" (algo-1 .. algo-N
// for InstanceCount N), which exists once that host has printed a line (SageMaker creates it
// when the container first writes). Every attempt of a spot job writes to the same streams, as
// SageMaker's do. A stream's tokens are positions in the job's whole log (all hosts').
//
// Operations:
//   DescribeLogStreams  logGroupName, logStreamNamePrefix, orderBy (LogStreamName only; see the
//                       .cc), descending, limit (1-50), nextToken
//   GetLogEvents        logGroupName, logStreamName, startTime, endTime (ms, end exclusive),
//                       startFromHead, limit (1-10,000), nextToken ("f/<n>" forward, "b/<n>"
//                       backward; a forward read at the end returns its own token again, which
//                       is how clients know they are at the end)
//   FilterLogEvents     logGroupName (or logGroupIdentifier), logStreamNames (1-100; names of
//                       no stream are skipped) or logStreamNamePrefix, startTime, endTime (ms,
//                       both inclusive), filterPattern, limit (1-10,000), nextToken. Events of
//                       all the streams, ordered by timestamp (then stream, then position), as
//                       {logStreamName, timestamp, message, ingestionTime, eventId}; nextToken
//                       only when there are more; searchedLogStreams (deprecated) is omitted.
//                       filterPattern: empty (every event), or plain terms that a message must
//                       all contain (case-sensitive), a quoted phrase counting as one term.
//                       The rest of the syntax (JSON `{ $.x = ... }`, space-delimited `[...]`,
//                       `?term`, `-term`, `%regex%`) is InvalidParameterException naming it.
// Event timestamps are the times the worker read the lines; ingestionTime is the same.
// Everything else answers UnknownOperationException; no writes (PutLogEvents): the log is the
// training job's.
//
// The handler answers (reads the log through the API, writes the reply); requests are decoded
// and checked apart, in logs_request.h.
#ifndef AMT_ORCHESTRATOR_GATEWAY_LOGS_CLOUDWATCH_LOGS_H_
#define AMT_ORCHESTRATOR_GATEWAY_LOGS_CLOUDWATCH_LOGS_H_

#include <string>
#include <string_view>

#include "common/arn.h"
#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway {

// The log group of training jobs, and the stream of a training job's host in it.
inline constexpr std::string_view kTrainingJobsLogGroup = "/aws/sagemaker/TrainingJobs";
std::string TrainingJobLogStream(std::string_view training_job_name, double creation_time,
                                 std::string_view host = "algo-1");

class CloudWatchLogsHandler final : public ProtocolHandler {
 public:
  // `api` must outlive the handler. Thread-safe (the API is).
  CloudWatchLogsHandler(const api::SageMakerApi& api, ArnContext arn_context);

  std::string_view Description() const override;
  // POST with an X-Amz-Target header naming CloudWatch Logs ("Logs_20140328.<anything>").
  bool Accepts(const HttpRequest& request) const override;
  // Content type application/x-amz-json-1.1, header x-amzn-RequestId; errors are AWS JSON
  // errors: ResourceNotFoundException (no such group or stream), InvalidParameterException,
  // SerializationException (a body that is not a JSON object of the right member types),
  // UnknownOperationException, ServiceUnavailableException (the store failed).
  HttpResponse Handle(const HttpRequest& request) const override;
  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;

 private:
  const api::SageMakerApi& api_;
  const ArnContext arn_context_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_LOGS_CLOUDWATCH_LOGS_H_
