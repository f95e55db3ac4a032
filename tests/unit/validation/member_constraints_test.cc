#include "orchestrator/validation/member_constraints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "amt/v1/tuning.pb.h"
#include "tests/support/status_matchers.h"

namespace amt::validation {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

TEST(ConstraintViolations, IsOkWhenEmpty) {
  ConstraintViolations violations;
  EXPECT_TRUE(violations.empty());
  EXPECT_THAT(violations.ToStatus(), IsOk());
}

TEST(ConstraintViolations, UsesSingularFormForOneError) {
  ConstraintViolations violations;
  violations.Add("x", "a.b", "Member must have length less than or equal to 1");
  const absl::Status status = violations.ToStatus();
  EXPECT_THAT(
      status,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "1 validation error detected: Value 'x' at 'a.b' failed to satisfy constraint: Member "
          "must have length less than or equal to 1"));
}

TEST(ConstraintViolations, CountsAndJoinsSeveralErrorsWithSemicolons) {
  ConstraintViolations violations;
  violations.Add(std::nullopt, "a", "Member must not be null");
  violations.Add("7", "b", "Member must have value less than or equal to 5");
  EXPECT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations.ToStatus().message(),
            "2 validation errors detected: Value null at 'a' failed to satisfy constraint: Member "
            "must not be null; Value '7' at 'b' failed to satisfy constraint: Member must have "
            "value less than or equal to 5");
}

TEST(CheckStringMember, ReportsPatternBeforeLengthLikeSageMaker) {
  ConstraintViolations violations;
  const std::string name(64, 'a');
  CheckStringMember(name, "trainingJobName", TrainingJobNameShape(), true, &violations);
  EXPECT_EQ(violations.ToStatus().message(),
            "2 validation errors detected: Value '" + name +
                "' at 'trainingJobName' failed to satisfy constraint: Member must satisfy regular "
                "expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}; Value '" +
                name +
                "' at 'trainingJobName' failed to satisfy constraint: Member must have length "
                "less than or equal to 63");
}

TEST(CheckStringMember, ReportsNullOnlyWhenRequired) {
  ConstraintViolations violations;
  CheckStringMember(std::nullopt, "n", TuningJobNameShape(), false, &violations);
  EXPECT_TRUE(violations.empty());
  CheckStringMember(std::nullopt, "n", TuningJobNameShape(), true, &violations);
  EXPECT_EQ(violations.ToStatus().message(),
            "1 validation error detected: Value null at 'n' failed to satisfy constraint: Member "
            "must not be null");
}

TEST(CheckStringMember, ReportsEmptyNameAsPatternAndMinimumLength) {
  ConstraintViolations violations;
  CheckStringMember(std::string(), "n", TuningJobNameShape(), true, &violations);
  EXPECT_EQ(violations.ToStatus().message(),
            "2 validation errors detected: Value '' at 'n' failed to satisfy constraint: Member "
            "must satisfy regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}; Value '' "
            "at 'n' failed to satisfy constraint: Member must have length greater than or equal "
            "to 1");
}

TEST(CheckMemberConstraints, NamesListItemsWithOneBasedMemberPaths) {
  v1::CreateTrainingJobRequest request;
  request.add_tags()->set_key("ok");
  request.mutable_tags(0)->set_value("v");
  request.add_tags()->set_value("v");  // second tag has no Key
  ConstraintViolations violations;
  CheckMemberConstraints(request, "", &violations);
  EXPECT_THAT(violations.ToStatus().message(),
              ::testing::HasSubstr("Value null at 'tags.2.member.key' failed to satisfy "
                                   "constraint: Member must not be null"));
}

TEST(CheckMemberConstraints, PrefixesPathsWithTheGivenPrefix) {
  v1::StoppingCondition stopping;
  stopping.set_max_runtime_in_seconds(0);
  ConstraintViolations violations;
  CheckMemberConstraints(stopping, "trainingJobDefinition.stoppingCondition", &violations);
  EXPECT_EQ(violations.ToStatus().message(),
            "1 validation error detected: Value '0' at "
            "'trainingJobDefinition.stoppingCondition.maxRuntimeInSeconds' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1");
}

TEST(CheckMemberConstraints, RendersMapsSortedAndListsLikeJava) {
  v1::CreateTrainingJobRequest request;
  (*request.mutable_environment())["B"] = "2";
  (*request.mutable_environment())["1A"] = "1";
  request.mutable_algorithm_specification()->add_container_arguments("");
  request.mutable_algorithm_specification()->add_container_arguments("x");
  ConstraintViolations violations;
  CheckMemberConstraints(request, "", &violations);
  const std::string message(violations.ToStatus().message());
  EXPECT_THAT(message,
              ::testing::HasSubstr(
                  "Value '[, x]' at 'algorithmSpecification.containerArguments' failed to "
                  "satisfy constraint: Member must satisfy constraint: [Member must have length "
                  "less than or equal to 256, Member must have length greater than or equal to "
                  "1]"));
  EXPECT_THAT(message, ::testing::HasSubstr(
                           "Value '{1A=1, B=2}' at 'environment' failed to satisfy constraint: "
                           "Map keys must satisfy constraint: [Member must have length less than "
                           "or equal to 512, Member must satisfy regular expression pattern: "
                           "[a-zA-Z_][a-zA-Z0-9_]*]"));
}

TEST(CheckMemberConstraints, RendersStructuresInListsWithTheirMembers) {
  v1::CreateTrainingJobRequest request;
  for (int i = 0; i < 51; ++i) {
    v1::Tag* tag = request.add_tags();
    tag->set_key("k");
    tag->set_value("v");
  }
  ConstraintViolations violations;
  CheckMemberConstraints(request, "", &violations);
  std::string tags = "[";
  for (int i = 0; i < 51; ++i) tags += i == 0 ? "{Key: k, Value: v}" : ", {Key: k, Value: v}";
  tags += "]";
  EXPECT_THAT(std::string(violations.ToStatus().message()),
              ::testing::HasSubstr("Value '" + tags +
                                   "' at 'tags' failed to satisfy constraint: Member must have "
                                   "length less than or equal to 50"));
}

TEST(CheckMemberConstraints, TreatsEmptyRequiredListAsNull) {
  v1::CategoricalParameterRange range;
  range.set_name("opt");
  ConstraintViolations violations;
  CheckMemberConstraints(range, "r", &violations);
  EXPECT_EQ(violations.ToStatus().message(),
            "1 validation error detected: Value null at 'r.values' failed to satisfy constraint: "
            "Member must not be null");
}

TEST(CheckMemberConstraints, IgnoresMembersWithoutConstraints) {
  v1::CreateTrainingJobRequest request;
  request.set_enable_network_isolation(true);
  request.mutable_vpc_config()->add_subnets("anything goes");
  ConstraintViolations violations;
  CheckMemberConstraints(request.vpc_config(), "vpcConfig", &violations);
  EXPECT_TRUE(violations.empty());
}

TEST(JavaLength, CountsCodePointsAndSurrogatePairs) {
  EXPECT_EQ(JavaLength(""), 0);
  EXPECT_EQ(JavaLength("abc"), 3);
  EXPECT_EQ(JavaLength("\xC3\xA9t\xC3\xA9"), 3);  // "été"
  EXPECT_EQ(JavaLength("\xE2\x82\xAC"), 1);       // U+20AC euro sign
  EXPECT_EQ(JavaLength("\xF0\x9F\x98\x80"), 2);   // U+1F600, a surrogate pair in Java
}

}  // namespace
}  // namespace amt::validation
