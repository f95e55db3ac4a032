// FakeTuningStub: a scripted TuningService::StubInterface for the cli tests. Each operation
// records its requests and answers with the replies queued for it, in order; a call with no reply
// left fails with INTERNAL "fake: no reply scripted for <operation>". The async API is not
// faked (the client only uses the blocking one).
#ifndef AMT_TESTS_UNIT_CLI_FAKE_TUNING_STUB_H_
#define AMT_TESTS_UNIT_CLI_FAKE_TUNING_STUB_H_

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "amt/v1/tuning.grpc.pb.h"

namespace amt::cli::testing {

template <typename Request, typename Response>
struct UnaryScript {
  explicit UnaryScript(std::string name) : operation(std::move(name)) {}

  std::string operation;
  std::vector<Request> requests;
  std::deque<std::pair<grpc::Status, Response>> replies;

  void Reply(Response response) { replies.emplace_back(grpc::Status::OK, std::move(response)); }
  void Fail(grpc::StatusCode code, const std::string& message) {
    replies.emplace_back(grpc::Status(code, message), Response());
  }
  grpc::Status Serve(const Request& request, Response* response) {
    requests.push_back(request);
    if (replies.empty()) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "fake: no reply scripted for " + operation);
    }
    auto [status, reply] = std::move(replies.front());
    replies.pop_front();
    *response = std::move(reply);
    return status;
  }
};

// A finished server stream: the messages, then `status`.
template <typename Response>
class FakeReader : public grpc::ClientReaderInterface<Response> {
 public:
  FakeReader(std::vector<Response> messages, grpc::Status status)
      : messages_(messages.begin(), messages.end()), status_(std::move(status)) {}
  void WaitForInitialMetadata() override {}
  grpc::Status Finish() override { return status_; }
  bool NextMessageSize(uint32_t* size) override {
    if (messages_.empty()) return false;
    *size = static_cast<uint32_t>(messages_.front().ByteSizeLong());
    return true;
  }
  bool Read(Response* message) override {
    if (messages_.empty()) return false;
    *message = std::move(messages_.front());
    messages_.pop_front();
    return true;
  }

 private:
  std::deque<Response> messages_;
  grpc::Status status_;
};

template <typename Request, typename Response>
struct StreamScript {
  std::vector<Request> requests;
  std::vector<Response> messages;
  grpc::Status status = grpc::Status::OK;

  grpc::ClientReaderInterface<Response>* Open(const Request& request) {
    requests.push_back(request);
    return new FakeReader<Response>(messages, status);  // the generated stub wraps it in unique_ptr
  }
};

class FakeTuningStub : public v1::TuningService::StubInterface {
 public:
  UnaryScript<v1::CreateHyperParameterTuningJobRequest, v1::CreateHyperParameterTuningJobResponse>
      create_tuning{"CreateHyperParameterTuningJob"};
  UnaryScript<v1::DescribeHyperParameterTuningJobRequest,
              v1::DescribeHyperParameterTuningJobResponse>
      describe_tuning{"DescribeHyperParameterTuningJob"};
  UnaryScript<v1::ListHyperParameterTuningJobsRequest, v1::ListHyperParameterTuningJobsResponse>
      list_tuning{"ListHyperParameterTuningJobs"};
  UnaryScript<v1::ListTrainingJobsForHyperParameterTuningJobRequest,
              v1::ListTrainingJobsForHyperParameterTuningJobResponse>
      list_for_tuning{"ListTrainingJobsForHyperParameterTuningJob"};
  UnaryScript<v1::StopHyperParameterTuningJobRequest, v1::StopHyperParameterTuningJobResponse>
      stop_tuning{"StopHyperParameterTuningJob"};
  UnaryScript<v1::DeleteHyperParameterTuningJobRequest, v1::DeleteHyperParameterTuningJobResponse>
      delete_tuning{"DeleteHyperParameterTuningJob"};
  UnaryScript<v1::DeleteTrainingJobRequest, v1::DeleteTrainingJobResponse> delete_training{
      "DeleteTrainingJob"};
  UnaryScript<v1::UpdateTrainingJobRequest, v1::UpdateTrainingJobResponse> update_training{
      "UpdateTrainingJob"};
  UnaryScript<v1::CreateTrainingJobRequest, v1::CreateTrainingJobResponse> create_training{
      "CreateTrainingJob"};
  UnaryScript<v1::DescribeTrainingJobRequest, v1::DescribeTrainingJobResponse> describe_training{
      "DescribeTrainingJob"};
  UnaryScript<v1::ListTrainingJobsRequest, v1::ListTrainingJobsResponse> list_training{
      "ListTrainingJobs"};
  UnaryScript<v1::StopTrainingJobRequest, v1::StopTrainingJobResponse> stop_training{
      "StopTrainingJob"};
  UnaryScript<v1::ExplainTrainingJobRequest, v1::ExplainTrainingJobResponse> explain{
      "ExplainTrainingJob"};
  UnaryScript<v1::ExplainHyperParameterTuningJobRequest, v1::ExplainHyperParameterTuningJobResponse>
      explain_tuning{"ExplainHyperParameterTuningJob"};
  UnaryScript<v1::AddTagsRequest, v1::AddTagsResponse> add_tags{"AddTags"};
  UnaryScript<v1::ListTagsRequest, v1::ListTagsResponse> list_tags{"ListTags"};
  UnaryScript<v1::DeleteTagsRequest, v1::DeleteTagsResponse> delete_tags{"DeleteTags"};
  StreamScript<v1::GetTrainingJobLogsRequest, v1::GetTrainingJobLogsResponse> logs;
  StreamScript<v1::WatchHyperParameterTuningJobRequest, v1::WatchHyperParameterTuningJobResponse>
      watch;
  StreamScript<v1::WatchTrainingJobRequest, v1::DescribeTrainingJobResponse> watch_training;

  grpc::Status CreateHyperParameterTuningJob(
      grpc::ClientContext*, const v1::CreateHyperParameterTuningJobRequest& request,
      v1::CreateHyperParameterTuningJobResponse* response) override {
    return create_tuning.Serve(request, response);
  }
  grpc::Status DescribeHyperParameterTuningJob(
      grpc::ClientContext*, const v1::DescribeHyperParameterTuningJobRequest& request,
      v1::DescribeHyperParameterTuningJobResponse* response) override {
    return describe_tuning.Serve(request, response);
  }
  grpc::Status ListHyperParameterTuningJobs(
      grpc::ClientContext*, const v1::ListHyperParameterTuningJobsRequest& request,
      v1::ListHyperParameterTuningJobsResponse* response) override {
    return list_tuning.Serve(request, response);
  }
  grpc::Status ListTrainingJobsForHyperParameterTuningJob(
      grpc::ClientContext*, const v1::ListTrainingJobsForHyperParameterTuningJobRequest& request,
      v1::ListTrainingJobsForHyperParameterTuningJobResponse* response) override {
    return list_for_tuning.Serve(request, response);
  }
  grpc::Status StopHyperParameterTuningJob(
      grpc::ClientContext*, const v1::StopHyperParameterTuningJobRequest& request,
      v1::StopHyperParameterTuningJobResponse* response) override {
    return stop_tuning.Serve(request, response);
  }
  grpc::Status DeleteHyperParameterTuningJob(
      grpc::ClientContext*, const v1::DeleteHyperParameterTuningJobRequest& request,
      v1::DeleteHyperParameterTuningJobResponse* response) override {
    return delete_tuning.Serve(request, response);
  }
  grpc::Status DeleteTrainingJob(grpc::ClientContext*, const v1::DeleteTrainingJobRequest& request,
                                 v1::DeleteTrainingJobResponse* response) override {
    return delete_training.Serve(request, response);
  }
  grpc::Status UpdateTrainingJob(grpc::ClientContext*, const v1::UpdateTrainingJobRequest& request,
                                 v1::UpdateTrainingJobResponse* response) override {
    return update_training.Serve(request, response);
  }
  grpc::Status CreateTrainingJob(grpc::ClientContext*, const v1::CreateTrainingJobRequest& request,
                                 v1::CreateTrainingJobResponse* response) override {
    return create_training.Serve(request, response);
  }
  grpc::Status DescribeTrainingJob(grpc::ClientContext*,
                                   const v1::DescribeTrainingJobRequest& request,
                                   v1::DescribeTrainingJobResponse* response) override {
    return describe_training.Serve(request, response);
  }
  grpc::Status ListTrainingJobs(grpc::ClientContext*, const v1::ListTrainingJobsRequest& request,
                                v1::ListTrainingJobsResponse* response) override {
    return list_training.Serve(request, response);
  }
  grpc::Status StopTrainingJob(grpc::ClientContext*, const v1::StopTrainingJobRequest& request,
                               v1::StopTrainingJobResponse* response) override {
    return stop_training.Serve(request, response);
  }
  grpc::Status ExplainTrainingJob(grpc::ClientContext*,
                                  const v1::ExplainTrainingJobRequest& request,
                                  v1::ExplainTrainingJobResponse* response) override {
    return explain.Serve(request, response);
  }
  grpc::Status ExplainHyperParameterTuningJob(
      grpc::ClientContext*, const v1::ExplainHyperParameterTuningJobRequest& request,
      v1::ExplainHyperParameterTuningJobResponse* response) override {
    return explain_tuning.Serve(request, response);
  }
  grpc::Status AddTags(grpc::ClientContext*, const v1::AddTagsRequest& request,
                       v1::AddTagsResponse* response) override {
    return add_tags.Serve(request, response);
  }
  grpc::Status ListTags(grpc::ClientContext*, const v1::ListTagsRequest& request,
                        v1::ListTagsResponse* response) override {
    return list_tags.Serve(request, response);
  }
  grpc::Status DeleteTags(grpc::ClientContext*, const v1::DeleteTagsRequest& request,
                          v1::DeleteTagsResponse* response) override {
    return delete_tags.Serve(request, response);
  }

 private:
  grpc::ClientReaderInterface<v1::GetTrainingJobLogsResponse>* GetTrainingJobLogsRaw(
      grpc::ClientContext*, const v1::GetTrainingJobLogsRequest& request) override {
    return logs.Open(request);
  }
  grpc::ClientReaderInterface<v1::WatchHyperParameterTuningJobResponse>*
  WatchHyperParameterTuningJobRaw(grpc::ClientContext*,
                                  const v1::WatchHyperParameterTuningJobRequest& request) override {
    return watch.Open(request);
  }
  grpc::ClientReaderInterface<v1::DescribeTrainingJobResponse>* WatchTrainingJobRaw(
      grpc::ClientContext*, const v1::WatchTrainingJobRequest& request) override {
    return watch_training.Open(request);
  }

  // The async API: never called by the client.
#define AMT_FAKE_UNARY_ASYNC_(Method)                                                        \
  grpc::ClientAsyncResponseReaderInterface<v1::Method##Response>* Async##Method##Raw(        \
      grpc::ClientContext*, const v1::Method##Request&, grpc::CompletionQueue*) override {   \
    return nullptr;                                                                          \
  }                                                                                          \
  grpc::ClientAsyncResponseReaderInterface<v1::Method##Response>* PrepareAsync##Method##Raw( \
      grpc::ClientContext*, const v1::Method##Request&, grpc::CompletionQueue*) override {   \
    return nullptr;                                                                          \
  }
  AMT_FAKE_UNARY_ASYNC_(CreateHyperParameterTuningJob)
  AMT_FAKE_UNARY_ASYNC_(DescribeHyperParameterTuningJob)
  AMT_FAKE_UNARY_ASYNC_(ListHyperParameterTuningJobs)
  AMT_FAKE_UNARY_ASYNC_(ListTrainingJobsForHyperParameterTuningJob)
  AMT_FAKE_UNARY_ASYNC_(StopHyperParameterTuningJob)
  AMT_FAKE_UNARY_ASYNC_(DeleteHyperParameterTuningJob)
  AMT_FAKE_UNARY_ASYNC_(DeleteTrainingJob)
  AMT_FAKE_UNARY_ASYNC_(UpdateTrainingJob)
  AMT_FAKE_UNARY_ASYNC_(CreateTrainingJob)
  AMT_FAKE_UNARY_ASYNC_(DescribeTrainingJob)
  AMT_FAKE_UNARY_ASYNC_(ListTrainingJobs)
  AMT_FAKE_UNARY_ASYNC_(StopTrainingJob)
  AMT_FAKE_UNARY_ASYNC_(ExplainTrainingJob)
  AMT_FAKE_UNARY_ASYNC_(ExplainHyperParameterTuningJob)
  AMT_FAKE_UNARY_ASYNC_(AddTags)
  AMT_FAKE_UNARY_ASYNC_(ListTags)
  AMT_FAKE_UNARY_ASYNC_(DeleteTags)
#undef AMT_FAKE_UNARY_ASYNC_

#define AMT_FAKE_STREAM_ASYNC_(Method, Response)                                                  \
  grpc::ClientAsyncReaderInterface<v1::Response>* Async##Method##Raw(                             \
      grpc::ClientContext*, const v1::Method##Request&, grpc::CompletionQueue*, void*) override { \
    return nullptr;                                                                               \
  }                                                                                               \
  grpc::ClientAsyncReaderInterface<v1::Response>* PrepareAsync##Method##Raw(                      \
      grpc::ClientContext*, const v1::Method##Request&, grpc::CompletionQueue*) override {        \
    return nullptr;                                                                               \
  }
  AMT_FAKE_STREAM_ASYNC_(GetTrainingJobLogs, GetTrainingJobLogsResponse)
  AMT_FAKE_STREAM_ASYNC_(WatchHyperParameterTuningJob, WatchHyperParameterTuningJobResponse)
  AMT_FAKE_STREAM_ASYNC_(WatchTrainingJob, DescribeTrainingJobResponse)
#undef AMT_FAKE_STREAM_ASYNC_
};

}  // namespace amt::cli::testing

#endif  // AMT_TESTS_UNIT_CLI_FAKE_TUNING_STUB_H_
