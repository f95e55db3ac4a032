#include "orchestrator/gateway/aws_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "tests/support/requests.h"
#include "tests/unit/api/api_fixture.h"

namespace amt::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

class SageMakerJsonHandlerTest : public api::ApiFixture {
 protected:
  HttpResponse Post(const std::string& target, const std::string& body) {
    HttpRequest request;
    request.method = "POST";
    request.target = "/";
    request.headers["x-amz-target"] = target;
    request.body = body;
    request.request_id = "11111111-2222-4333-8444-555555555555";
    EXPECT_TRUE(handler_.Accepts(request)) << target;
    return handler_.Handle(request);
  }
  // The error body as JSON; fails the test when it is not JSON.
  static nlohmann::json Json(const HttpResponse& response) {
    const auto json = nlohmann::json::parse(response.body, nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << response.body;
    return json;
  }

  SageMakerJsonHandler handler_{*api_};
};

TEST(AwsErrorBody, NeverThrowsOnBytesThatAreNotUtf8) {
  std::string body;
  ASSERT_NO_THROW(body = AwsErrorBody("SerializationException", "bad \xff\xfe bytes"));
  const auto json = nlohmann::json::parse(body);
  EXPECT_EQ(json["__type"], "SerializationException");
  EXPECT_EQ(json["message"], "bad \xef\xbf\xbd\xef\xbf\xbd bytes");  // U+FFFD twice
}

// The body of issue "no input takes amtd down": it used to end amtd with an uncaught
// nlohmann::json type_error 316 while the error was rendered.
TEST_F(SageMakerJsonHandlerTest, AnswersABodyThatIsNotUtf8WithSerializationException) {
  const std::string body = "{\"HyperParameterTuningJobName\":\"\xff\xfe\"}";
  HttpResponse response;
  ASSERT_NO_THROW(response = Post("SageMaker.DescribeHyperParameterTuningJob", body));
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.content_type, "application/x-amz-json-1.1");
  EXPECT_EQ(Json(response), nlohmann::json({{"__type", "SerializationException"},
                                            {"message",
                                             "The request body is not valid UTF-8: byte 0xFF at "
                                             "offset 32."}}));
}

TEST_F(SageMakerJsonHandlerTest, AnswersEscapedLoneSurrogatesWithSerializationException) {
  const HttpResponse response =
      Post("SageMaker.DescribeTrainingJob", R"({"TrainingJobName": "\udcff"})");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response)["__type"], "SerializationException");
}

// Issue 14: "1" for an integer used to be coerced and the job created.
TEST_F(SageMakerJsonHandlerTest, AnswersAStringForAnIntegerWithSerializationException) {
  const HttpResponse response =
      Post("SageMaker.ListTrainingJobs", R"({"MaxResults": "5", "SortOrder": "Descending"})");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response),
            nlohmann::json({{"__type", "SerializationException"},
                            {"message",
                             "STRING_VALUE can not be converted to an Integer (member "
                             "MaxResults)"}}));
}

TEST_F(SageMakerJsonHandlerTest, AnswersAnUnknownTargetThatIsNotUtf8) {
  HttpResponse response;
  ASSERT_NO_THROW(response = Post("SageMaker.\xff", "{}"));
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response)["__type"], "UnknownOperationException");
}

TEST_F(SageMakerJsonHandlerTest, AnswersBodiesOfTheWrongShapeWithSerializationException) {
  HttpResponse response = Post("SageMaker.ListTrainingJobs", "[1, 2]");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response),
            nlohmann::json({{"__type", "SerializationException"},
                            {"message", "The request body must be a JSON object."}}));
  response = Post("SageMaker.ListTrainingJobs", R"({"MaxResults": "many"})");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response)["__type"], "SerializationException");
}

TEST_F(SageMakerJsonHandlerTest, TranslatesTheApisErrorsToSageMakerNames) {
  HttpResponse response =
      Post("SageMaker.DescribeHyperParameterTuningJob", R"({"HyperParameterTuningJobName": "x"})");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response), nlohmann::json({{"__type", "ResourceNotFound"},
                                            {"message",
                                             "Amazon SageMaker can't find a tuning job called x. "
                                             "Type another name."}}));
  response = Post("SageMaker.DescribeTrainingJob", R"({"TrainingJobName": "bad_name!"})");
  EXPECT_EQ(Json(response)["__type"], "ValidationException");
  EXPECT_THAT(Json(response)["message"].get<std::string>(),
              StartsWith("1 validation error detected: Value 'bad_name!' at 'trainingJobName'"));
}

TEST_F(SageMakerJsonHandlerTest, ServesAnOperationWithItsRequestId) {
  const HttpResponse response = Post("SageMaker.ListHyperParameterTuningJobs", "");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Json(response),
            nlohmann::json({{"HyperParameterTuningJobSummaries", nlohmann::json::array()}}));
  EXPECT_THAT(response.headers,
              ElementsAre(Pair("x-amzn-RequestId", "11111111-2222-4333-8444-555555555555")));
}

TEST_F(SageMakerJsonHandlerTest, AnswersStoreFailuresWith500AndThen503WhileDegraded) {
  const std::string body = ::amt::testing::ExampleText(
      "training-job.json",
      R"({"TrainingJobName": "a", "AlgorithmSpecification": {"TrainingImage": "toy:latest"}})");
  faulty_.FailWrites(true);
  const HttpResponse failed = Post("SageMaker.CreateTrainingJob", body);
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(Json(failed), nlohmann::json({{"__type", "InternalFailure"},
                                          {"message", "injected store failure: disk full"}}));
  const HttpResponse refused = Post("SageMaker.CreateTrainingJob", body);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(Json(refused)["__type"], "ServiceUnavailable");
}

TEST_F(SageMakerJsonHandlerTest, AnswersAnUnknownOperation) {
  const HttpResponse response = Post("SageMaker.CreateEndpoint", "{}");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Json(response),
            nlohmann::json({{"__type", "UnknownOperationException"},
                            {"message", "Unknown operation SageMaker.CreateEndpoint."}}));
}

TEST_F(SageMakerJsonHandlerTest, ServesAmtLocalsOwnOperationsWithSageMakersErrors) {
  const HttpResponse missing =
      Post("AmtLocal.ExplainHyperParameterTuningJob", R"({"HyperParameterTuningJobName": "nope"})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(Json(missing), nlohmann::json({{"__type", "ResourceNotFound"},
                                           {"message",
                                            "Amazon SageMaker can't find a tuning job "
                                            "called nope. Type another name."}}));
  const HttpResponse invalid =
      Post("AmtLocal.ExplainHyperParameterTuningJob", R"({"HyperParameterTuningJobName": "a b"})");
  EXPECT_EQ(invalid.status, 400);
  EXPECT_EQ(Json(invalid)["__type"], "ValidationException");
  EXPECT_EQ(Post("AmtLocal.DescribeTrainingJob", "{}").status, 400);  // SageMaker's only
}

TEST_F(SageMakerJsonHandlerTest, AcceptsPostsWithASageMakerTargetOnly) {
  HttpRequest request;
  request.method = "POST";
  EXPECT_FALSE(handler_.Accepts(request));  // no X-Amz-Target
  request.headers["x-amz-target"] = "Logs_20140328.GetLogEvents";
  EXPECT_FALSE(handler_.Accepts(request));
  request.headers["x-amz-target"] = "SageMaker.ListTrainingJobs";
  EXPECT_TRUE(handler_.Accepts(request));
  request.headers["x-amz-target"] = "AmtLocal.ExplainTrainingJob";
  EXPECT_TRUE(handler_.Accepts(request));
  request.method = "GET";
  EXPECT_FALSE(handler_.Accepts(request));
}

TEST_F(SageMakerJsonHandlerTest, ServesSageMakersOperationsOfTheTable) {
  EXPECT_THAT(handler_.Operations(),
              ElementsAre("AmtLocal.ExplainHyperParameterTuningJob", "AmtLocal.ExplainTrainingJob",
                          "SageMaker.AddTags", "SageMaker.CreateHyperParameterTuningJob",
                          "SageMaker.CreateTrainingJob", "SageMaker.DeleteHyperParameterTuningJob",
                          "SageMaker.DeleteTags", "SageMaker.DeleteTrainingJob",
                          "SageMaker.DescribeHyperParameterTuningJob",
                          "SageMaker.DescribeTrainingJob", "SageMaker.ListHyperParameterTuningJobs",
                          "SageMaker.ListTags", "SageMaker.ListTrainingJobs",
                          "SageMaker.ListTrainingJobsForHyperParameterTuningJob",
                          "SageMaker.StopHyperParameterTuningJob", "SageMaker.StopTrainingJob",
                          "SageMaker.UpdateTrainingJob"));
}

TEST_F(SageMakerJsonHandlerTest, RefusesABodyOverTheLimitWith413) {
  HttpRequest request;
  request.request_id = "id";
  const HttpResponse response = handler_.BodyTooLarge(request, 1024);
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(Json(response),
            nlohmann::json({{"__type", "SerializationException"},
                            {"message", "The request body exceeds the limit of 1024 bytes."}}));
}

}  // namespace
}  // namespace amt::gateway
