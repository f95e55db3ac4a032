// CloudWatchMetricsHandler: the CloudWatch metrics SageMaker publishes for a training job, read
// with GetMetricStatistics, GetMetricData and ListMetrics, so that the SageMaker Python SDK's
// `TrainingJobAnalytics` (and `estimator.training_job_analytics`) and boto3's `cloudwatch`
// client work against amtd.
//
// As SageMaker publishes them: namespace /aws/sagemaker/TrainingJobs, one metric per
// MetricDefinitions name, dimension TrainingJobName=<job> (and Host=<job>/algo-1, the per-host
// series); the values are those the job's regexes captured, at the times the lines were read.
// A query for another namespace, metric, dimension set or Unit (SageMaker's are "None") finds no
// datapoints, as CloudWatch's does.
//
// Three of CloudWatch's protocols, each decoded into one request struct per operation and
// answered by the same code: Smithy RPC v2 CBOR (POST /service/GraniteServiceVersion20100801/
// operation/<Operation>, `smithy-protocol: rpc-v2-cbor`), what botocore >= 1.36 speaks; AWS JSON
// 1.0 (POST / with X-Amz-Target: GraniteServiceVersion20100801.<Operation>); and the AWS query
// protocol of older botocore (Debian's 1.29): POST / with a form body Action=<Operation>&Version=
// 2010-08-01&..., signed for service "monitoring" (or unsigned with that Version), answered in
// XML (<OperationResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">, timestamps in
// ISO 8601; errors in the query ErrorResponse shape).
//
// GetMetricStatistics: Namespace, MetricName, Dimensions, StartTime, EndTime, Period, Statistics
//   (SampleCount, Average, Sum, Minimum, Maximum), Unit. Datapoints are the periods of
//   [StartTime rounded down to the period, EndTime) that hold a value, Unit "None". Extended
//   statistics (percentiles) are refused.
// ListMetrics: every (training job, metric with values) as two metrics, one per dimension above,
//   sorted by job, metric and dimension; filtered by Namespace, MetricName and Dimensions (a
//   filter's Name must be a dimension of the metric, its Value, when given, that dimension's);
//   500 per page, NextToken the index of the next (a job created meanwhile may shift a page).
//   RecentlyActive and the linked-account members are accepted and not applied.
// GetMetricData: MetricDataQueries (1-500) with Id, MetricStat {Metric, Period, Stat (the five
//   statistics above), Unit}, Label (default: the metric name), ReturnData; StartTime, EndTime,
//   ScanBy (TimestampDescending, the default, or TimestampAscending), MaxDatapoints (default
//   100,800; the datapoints of all results, in query order, are paged by it with NextToken, and
//   a result with more to come has StatusCode PartialData, else Complete). A query with an
//   Expression (metric math, Metrics Insights) is refused: InvalidParameterValue "amt-local does
//   not evaluate metric math or Metrics Insights expressions (MetricDataQueries.member.N.
//   Expression); ...". LabelOptions is ignored.
// Every other operation answers UnknownOperationException (InvalidAction in the query protocol).
//
// The handler answers (reads the metrics through the API, computes the statistics, writes the
// reply in the request's protocol); requests are decoded and checked apart, in
// metrics_request.h.
#ifndef AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_CLOUDWATCH_METRICS_H_
#define AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_CLOUDWATCH_METRICS_H_

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
  // Errors in the request's protocol: {"__type", "message"} as CBOR or JSON, or the query
  // ErrorResponse; HTTP 400 (InvalidParameterValue, MissingParameter, InvalidParameterCombination,
  // InvalidNextToken, SerializationException, UnknownOperationException; the query protocol has
  // InvalidAction and InvalidParameterValue for the last two), 500 InternalServiceError when the
  // store fails.
  HttpResponse Handle(const HttpRequest& request) const override;
  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;
  // The AWS JSON services' refusal (auth/auth_errors.h), in the request's protocol (the query
  // protocol's codes: query::AuthErrorReply).
  HttpResponse Unauthenticated(const HttpRequest& request,
                               const auth::AuthFailure& failure) const override;

 private:
  const api::SageMakerApi& api_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_CLOUDWATCH_METRICS_H_
