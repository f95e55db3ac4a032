// The AWS JSON 1.1 gateway end to end: real amtd, real HTTP on loopback (a Beast client here),
// real training processes. boto3 and the aws cli against it: tests/compat/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fstream>

#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

struct Reply {
  int status = 0;
  std::string content_type;
  std::string request_id;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

// One HTTP/1.1 client connection to the gateway; requests reuse it (keep-alive).
class Client {
 public:
  explicit Client(const std::string& http_endpoint) : stream_(io_) {
    const std::string hostport = http_endpoint.substr(std::string("http://").size());
    const size_t colon = hostport.rfind(':');
    asio::ip::tcp::resolver resolver(io_);
    stream_.connect(resolver.resolve(hostport.substr(0, colon), hostport.substr(colon + 1)));
  }

  Reply Send(http::verb verb, const std::string& target, const std::string& body) {
    http::request<http::string_body> request{verb, "/", 11};
    request.set(http::field::host, "localhost");
    if (!target.empty()) request.set("X-Amz-Target", target);
    request.set(http::field::content_type, "application/x-amz-json-1.1");
    request.body() = body;
    request.prepare_payload();
    http::write(stream_, request);
    http::response<http::string_body> response;
    http::read(stream_, buffer_, response);
    return {static_cast<int>(response.result_int()),
            std::string(response[http::field::content_type]),
            std::string(response["x-amzn-RequestId"]), response.body()};
  }
  Reply Post(const std::string& operation, const std::string& body) {
    return Send(http::verb::post, "SageMaker." + operation, body);
  }
  // Blocks until the server ends the connection; true on an end of stream (or a reset).
  bool WaitForEnd() {
    beast::error_code ec;
    char byte;
    while (!ec) stream_.socket().read_some(asio::buffer(&byte, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

 private:
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

// examples/random-tuning.json renamed, with a small budget.
std::string SmallTuningJob(const std::string& name) {
  nlohmann::json job = ExampleJson("random-tuning.json");
  job["HyperParameterTuningJobName"] = name;
  job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {{"MaxNumberOfTrainingJobs", 3},
                                                            {"MaxParallelTrainingJobs", 3}};
  job["TrainingJobDefinition"]["StaticHyperParameters"] = {{"epochs", "2"}};
  return job.dump();
}

class GatewayIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    amtd_ = std::make_unique<Amtd>(
        dir_ + "/data",
        std::vector<std::string>{"--image-map", WriteImageMap(dir_), "--slots", "3"});
    ASSERT_THAT(amtd_->http_endpoint(), StartsWith("http://127.0.0.1:"));
    client_ = std::make_unique<Client>(amtd_->http_endpoint());
  }
  TempDir temp_{"amt-gw"};  // removed after amtd_ ends
  std::string dir_;
  std::unique_ptr<Amtd> amtd_;
  std::unique_ptr<Client> client_;
};

TEST_F(GatewayIntegrationTest, RunsATuningJobCreatedOverHttpAndDescribesItInSageMakersShape) {
  const Reply created = client_->Post("CreateHyperParameterTuningJob", SmallTuningJob("http-run"));
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(created.content_type, "application/x-amz-json-1.1");
  EXPECT_THAT(created.request_id,
              MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ(created.json(),
            nlohmann::json({{"HyperParameterTuningJobArn",
                             "arn:aws:sagemaker:us-east-1:000000000000:hyper-parameter-tuning-job/"
                             "http-run"}}));

  // The same job is seen over gRPC: wait for its end on the watch stream (an event).
  const auto last = WaitForTuningJob(amtd_->stub(), "http-run");
  ASSERT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");

  const Reply described = client_->Post("DescribeHyperParameterTuningJob",
                                        R"({"HyperParameterTuningJobName": "http-run"})");
  ASSERT_EQ(described.status, 200) << described.body;
  const nlohmann::json d = described.json();
  EXPECT_EQ(d["HyperParameterTuningJobStatus"], "Completed");
  EXPECT_EQ(d["TrainingJobStatusCounters"], nlohmann::json({{"Completed", 3},
                                                            {"InProgress", 0},
                                                            {"RetryableError", 0},
                                                            {"NonRetryableError", 0},
                                                            {"Stopped", 0}}));
  EXPECT_TRUE(d["CreationTime"].is_number());  // epoch seconds, as botocore expects
  EXPECT_TRUE(
      d["BestTrainingJob"]["FinalHyperParameterTuningJobObjectiveMetric"]["Value"].is_number());

  const Reply page = client_->Post(
      "ListTrainingJobsForHyperParameterTuningJob",
      R"({"HyperParameterTuningJobName": "http-run", "MaxResults": 2, "SortBy": "Name", "SortOrder": "Ascending"})");
  ASSERT_EQ(page.status, 200) << page.body;
  ASSERT_EQ(page.json()["TrainingJobSummaries"].size(), 2u);
  EXPECT_TRUE(page.json()["NextToken"].is_string());

  const std::string job = page.json()["TrainingJobSummaries"][0]["TrainingJobName"];
  const Reply training =
      client_->Post("DescribeTrainingJob", nlohmann::json({{"TrainingJobName", job}}).dump());
  ASSERT_EQ(training.status, 200);
  EXPECT_EQ(training.json()["TrainingJobStatus"], "Completed");
  EXPECT_EQ(training.json()["TuningJobArn"],
            "arn:aws:sagemaker:us-east-1:000000000000:hyper-parameter-tuning-job/http-run");
}

TEST_F(GatewayIntegrationTest, AnswersErrorsWithSageMakersNamesAndTexts) {
  Reply r = client_->Post("DescribeTrainingJob", R"({"TrainingJobName": "nope"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json(), nlohmann::json({{"__type", "ValidationException"},
                                      {"message", "Requested resource not found."}}));

  r = client_->Post("DescribeHyperParameterTuningJob",
                    R"({"HyperParameterTuningJobName": "nope"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["__type"], "ResourceNotFound");
  EXPECT_EQ(r.json()["message"],
            "Amazon SageMaker can't find a tuning job called nope. Type another name.");

  ASSERT_EQ(client_->Post("CreateHyperParameterTuningJob", SmallTuningJob("twice")).status, 200);
  r = client_->Post("CreateHyperParameterTuningJob", SmallTuningJob("twice"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["__type"], "ResourceInUse");
  EXPECT_THAT(r.json()["message"].get<std::string>(), HasSubstr("twice, already exists"));

  r = client_->Post("DescribeTrainingJob", R"({"TrainingJobName": "bad_name!"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["__type"], "ValidationException");
  EXPECT_THAT(r.json()["message"].get<std::string>(),
              StartsWith("1 validation error detected: Value 'bad_name!' at 'trainingJobName' "
                         "failed to satisfy constraint"));

  r = client_->Post("ListTrainingJobs", R"({"MaxResults": "many"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["__type"], "SerializationException");

  r = client_->Post("ListTrainingJobs", "[1, 2]");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["__type"], "SerializationException");

  r = client_->Post("CreateEndpoint", "{}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json(), nlohmann::json({{"__type", "UnknownOperationException"},
                                      {"message", "Unknown operation SageMaker.CreateEndpoint."}}));

  r = client_->Send(http::verb::post, "", "{}");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["__type"], "UnknownOperationException");
}

TEST_F(GatewayIntegrationTest, PrintsLongMembersAsNumbers) {
  nlohmann::json job = ExampleJson("training-job.json");
  job["TrainingJobName"] = "with-seed";
  job["InputDataConfig"] = {
      {{"ChannelName", "train"},
       {"DataSource",
        {{"S3DataSource", {{"S3DataType", "S3Prefix"}, {"S3Uri", "s3://bucket/train"}}}}},
       {"ShuffleConfig", {{"Seed", 1234567890123}}}}};
  ASSERT_EQ(client_->Post("CreateTrainingJob", job.dump()).status, 200);
  const Reply r = client_->Post("DescribeTrainingJob", R"({"TrainingJobName": "with-seed"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json seed = r.json()["InputDataConfig"][0]["ShuffleConfig"]["Seed"];
  EXPECT_TRUE(seed.is_number_integer()) << seed;
  EXPECT_EQ(seed, 1234567890123);
}

TEST_F(GatewayIntegrationTest, AcceptsAnEmptyBodyAndAnswersAHealthCheck) {
  Reply r = client_->Post("ListHyperParameterTuningJobs", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json(),
            nlohmann::json({{"HyperParameterTuningJobSummaries", nlohmann::json::array()}}));
  r = client_->Send(http::verb::get, "", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("AWS JSON 1.1"));
}

// Issue "no input takes amtd down": this body used to abort amtd (an uncaught nlohmann::json
// type_error 316 while the error was rendered).
TEST_F(GatewayIntegrationTest, SurvivesARequestThatIsNotUtf8) {
  const Reply r = client_->Post("DescribeHyperParameterTuningJob",
                                "{\"HyperParameterTuningJobName\":\"\xff\xfe\"}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json(), nlohmann::json({{"__type", "SerializationException"},
                                      {"message",
                                       "The request body is not valid UTF-8: byte 0xFF at "
                                       "offset 32."}}));
  // The same bytes over gRPC: proto3 strings must be UTF-8, so gRPC's own deserialization
  // refuses the request (INTERNAL) before the service sees it.
  grpc::ClientContext context;
  v1::DescribeTrainingJobRequest request;
  request.set_training_job_name("\xff\xfe");
  v1::DescribeTrainingJobResponse response;
  EXPECT_EQ(amtd_->stub().DescribeTrainingJob(&context, request, &response).error_code(),
            grpc::StatusCode::INTERNAL);
  // amtd is still there, on both.
  Client again(amtd_->http_endpoint());
  EXPECT_EQ(again.Post("ListHyperParameterTuningJobs", "{}").status, 200);
  grpc::ClientContext list_context;
  v1::ListTrainingJobsResponse listed;
  EXPECT_TRUE(
      amtd_->stub().ListTrainingJobs(&list_context, v1::ListTrainingJobsRequest(), &listed).ok());
}

TEST(GatewayLimitsIntegrationTest, RefusesABodyOverTheCapAndClosesIdleConnections) {
  const TempDir temp("amt-gw-limits");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data",
            {"--no-local-worker", "--http-max-body-bytes", "2048", "--http-idle-timeout", "0.2"});
  Client client(amtd.http_endpoint());
  const Reply r =
      client.Post("ListTrainingJobs", "{\"NameContains\": \"" + std::string(4096, 'x') + "\"}");
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.json(),
            nlohmann::json({{"__type", "SerializationException"},
                            {"message", "The request body exceeds the limit of 2048 bytes."}}));
  // A connection that sends nothing ends after the idle timeout: wait for its end of stream.
  Client idle(amtd.http_endpoint());
  EXPECT_TRUE(idle.WaitForEnd());
}

}  // namespace
}  // namespace amt::testing
