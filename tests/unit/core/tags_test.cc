#include "orchestrator/core/tags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace amt::core {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::testing::HasSubstr;

TagList Tags(std::initializer_list<std::pair<std::string, std::string>> pairs) {
  TagList tags;
  for (const auto& [key, value] : pairs) {
    v1::Tag* tag = tags.Add();
    tag->set_key(key);
    tag->set_value(value);
  }
  return tags;
}

std::vector<std::string> Flat(const TagList& tags) {
  std::vector<std::string> out;
  for (const auto& t : tags) out.push_back(t.key() + "=" + t.value());
  return out;
}

TEST(Tags, ResourceOfArnNamesTrainingAndTuningJobsOnly) {
  auto training = ResourceOfArn("arn:aws:sagemaker:us-east-1:000000000000:training-job/a-1");
  EXPECT_EQ(training.kind, TaggedResource::Kind::kTrainingJob);
  EXPECT_EQ(training.name, "a-1");
  auto tuning =
      ResourceOfArn("arn:aws:sagemaker:us-east-1:000000000000:hyper-parameter-tuning-job/t");
  EXPECT_EQ(tuning.kind, TaggedResource::Kind::kTuningJob);
  EXPECT_EQ(tuning.name, "t");
  EXPECT_EQ(ResourceOfArn("arn:aws:sagemaker:us-east-1:000000000000:endpoint/e").kind,
            TaggedResource::Kind::kNone);
  EXPECT_EQ(ResourceOfArn("arn:aws:sagemaker:us-east-1:000000000000:training-job/").kind,
            TaggedResource::Kind::kNone);
  EXPECT_EQ(ResourceOfArn("nonsense").kind, TaggedResource::Kind::kNone);
}

TEST(Tags, AddOverwritesAKeyInPlaceAndAppendsNewOnes) {
  TagList tags = Tags({{"team", "ml"}, {"cost", "1"}});
  ASSERT_THAT(AddTags(tags, Tags({{"cost", "2"}, {"owner", "me"}})), IsOk());
  EXPECT_THAT(Flat(tags), ::testing::ElementsAre("team=ml", "cost=2", "owner=me"));
}

TEST(Tags, AddRefusesMoreThanFiftyAndKeepsTheListAsItWas) {
  TagList tags;
  for (int i = 0; i < 49; ++i) *tags.Add() = Tags({{"k" + std::to_string(i), ""}})[0];
  EXPECT_THAT(AddTags(tags, Tags({{"k0", "again"}, {"new", "1"}})), IsOk());  // 50: fine
  EXPECT_EQ(tags.size(), 50);
  EXPECT_THAT(AddTags(tags, Tags({{"one-more", "x"}})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 50")));
  EXPECT_EQ(tags.size(), 50);
  EXPECT_EQ(tags[0].value(), "again");
}

TEST(Tags, DeleteRemovesTheGivenKeysAndIgnoresAbsentOnes) {
  TagList tags = Tags({{"a", "1"}, {"b", "2"}, {"c", "3"}});
  google::protobuf::RepeatedPtrField<std::string> keys;
  keys.Add("b");
  keys.Add("zzz");
  DeleteTags(tags, keys);
  EXPECT_THAT(Flat(tags), ::testing::ElementsAre("a=1", "c=3"));
}

}  // namespace
}  // namespace amt::core
