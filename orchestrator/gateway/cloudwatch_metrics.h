// CloudWatchMetricsHandler: the CloudWatch metrics SageMaker publishes for a training job, read
// with GetMetricStatistics, so that the SageMaker Python SDK's `TrainingJobAnalytics` (and
// `estimator.training_job_analytics`) and boto3's `cloudwatch` client work against amtd.
//
// As SageMaker publishes them: namespace /aws/sagemaker/TrainingJobs, one metric per
// MetricDefinitions name, dimension TrainingJobName=<job> (and Host=<job>/algo-1, the per-host
// series); the values are those the job's regexes captured, at the times the lines were read.
// A query for another namespace, metric or dimension set finds no datapoints, as CloudWatch's
// does.
//
// Two of CloudWatch's protocols: Smithy RPC v2 CBOR (POST /service/GraniteServiceVersion20100801/
// operation/<Operation>, `smithy-protocol: rpc-v2-cbor`), what botocore >= 1.36 speaks, and
// AWS JSON 1.0 (POST / with X-Amz-Target: GraniteServiceVersion20100801.<Operation>). The query
// protocol of older botocore (Debian's 1.29) is not served.
//
// GetMetricStatistics: Namespace, MetricName, Dimensions, StartTime, EndTime, Period, Statistics
// (SampleCount, Average, Sum, Minimum, Maximum), Unit. Datapoints are the periods of
// [StartTime rounded down to the period, EndTime) that hold a value, Unit "None". Extended
// statistics (percentiles) are refused. Every other operation answers UnknownOperationException.
#ifndef AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_METRICS_H_
#define AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_METRICS_H_

#include <string_view>

#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway {

class CloudWatchMetricsHandler final : public ProtocolHandler {
 public:
  // `api` must outlive the handler. Thread-safe (the API is).
  explicit CloudWatchMetricsHandler(const api::SageMakerApi& api) : api_(api) {}

  std::string_view Description() const override;
  bool Accepts(const HttpRequest& request) const override;
  // Errors in the request's protocol: {"__type", "message"} as CBOR or JSON, HTTP 400
  // (InvalidParameterValue, MissingParameter, InvalidParameterCombination, SerializationException,
  // UnknownOperationException), 500 InternalServiceError when the store fails.
  HttpResponse Handle(const HttpRequest& request) const override;
  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;
  // The AWS JSON services' refusal (auth/auth_errors.h), in the request's protocol.
  HttpResponse Unauthenticated(const HttpRequest& request,
                               const auth::AuthFailure& failure) const override;

 private:
  const api::SageMakerApi& api_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_METRICS_H_
