#include "orchestrator/search/search_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "amt/v1/tuning.pb.h"
#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

v1::IntegerParameterRange* AddInteger(v1::ParameterRanges& ranges, const std::string& name,
                                      const std::string& min, const std::string& max) {
  v1::IntegerParameterRange* r = ranges.add_integer_parameter_ranges();
  r->set_name(name);
  r->set_min_value(min);
  r->set_max_value(max);
  return r;
}

v1::ContinuousParameterRange* AddContinuous(v1::ParameterRanges& ranges, const std::string& name,
                                            const std::string& min, const std::string& max) {
  v1::ContinuousParameterRange* r = ranges.add_continuous_parameter_ranges();
  r->set_name(name);
  r->set_min_value(min);
  r->set_max_value(max);
  return r;
}

void AddCategorical(v1::ParameterRanges& ranges, const std::string& name,
                    std::initializer_list<std::string> values) {
  v1::CategoricalParameterRange* r = ranges.add_categorical_parameter_ranges();
  r->set_name(name);
  for (const std::string& v : values) r->add_values(v);
}

TEST(SearchSpace, FromProtoParsesAllThreeKindsInOrder) {
  v1::ParameterRanges ranges;
  AddInteger(ranges, "num_round", "+10", "200")->set_scaling_type("Linear");
  AddContinuous(ranges, "eta", "1e-4", "0.5")->set_scaling_type("Logarithmic");
  AddContinuous(ranges, "subsample", "0.5", "0.999")->set_scaling_type("ReverseLogarithmic");
  AddContinuous(ranges, "alpha", "+.5", "2.")->set_scaling_type("Auto");
  AddCategorical(ranges, "booster", {"gbtree", "\"dart\""});
  ranges.add_auto_parameters()->set_name("ignored");

  absl::StatusOr<SearchSpace> space = SearchSpace::FromProto(ranges);
  ASSERT_THAT(space, IsOk());
  ASSERT_EQ(space->integers.size(), 1u);
  EXPECT_EQ(space->integers[0].name, "num_round");
  EXPECT_EQ(space->integers[0].min_value, 10);
  EXPECT_EQ(space->integers[0].max_value, 200);
  EXPECT_EQ(space->integers[0].scaling, Scaling::kLinear);
  ASSERT_EQ(space->continuous.size(), 3u);
  EXPECT_EQ(space->continuous[0].name, "eta");
  EXPECT_DOUBLE_EQ(space->continuous[0].min_value, 1e-4);
  EXPECT_DOUBLE_EQ(space->continuous[0].max_value, 0.5);
  EXPECT_EQ(space->continuous[0].scaling, Scaling::kLogarithmic);
  EXPECT_EQ(space->continuous[1].scaling, Scaling::kReverseLogarithmic);
  EXPECT_DOUBLE_EQ(space->continuous[2].min_value, 0.5);
  EXPECT_DOUBLE_EQ(space->continuous[2].max_value, 2.0);
  EXPECT_EQ(space->continuous[2].scaling, Scaling::kAuto);
  ASSERT_EQ(space->categorical.size(), 1u);
  EXPECT_THAT(space->categorical[0].values, ::testing::ElementsAre("gbtree", "\"dart\""));
  EXPECT_EQ(space->size(), 5u);
}

TEST(SearchSpace, FromProtoTreatsAbsentScalingTypeAsAuto) {
  v1::ParameterRanges ranges;
  AddInteger(ranges, "epochs", "1", "5");
  AddContinuous(ranges, "lr", "0.1", "0.2");
  absl::StatusOr<SearchSpace> space = SearchSpace::FromProto(ranges);
  ASSERT_THAT(space, IsOk());
  EXPECT_EQ(space->integers[0].scaling, Scaling::kAuto);
  EXPECT_EQ(space->continuous[0].scaling, Scaling::kAuto);
}

TEST(SearchSpace, FromProtoAcceptsInt64Extremes) {
  v1::ParameterRanges ranges;
  AddInteger(ranges, "n", "-9223372036854775808", "9223372036854775807");
  absl::StatusOr<SearchSpace> space = SearchSpace::FromProto(ranges);
  ASSERT_THAT(space, IsOk());
  EXPECT_EQ(space->integers[0].min_value, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(space->integers[0].max_value, std::numeric_limits<int64_t>::max());
}

TEST(SearchSpace, FromProtoRejectsFractionalIntegerBound) {
  v1::ParameterRanges ranges;
  AddInteger(ranges, "max_depth", "1.5", "10");
  absl::StatusOr<SearchSpace> space = SearchSpace::FromProto(ranges);
  EXPECT_THAT(space,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Integer parameter range 'max_depth': MinValue '1.5' is not an integer."));
}

TEST(SearchSpace, FromProtoRejectsIntegerBoundOutOfInt64) {
  v1::ParameterRanges ranges;
  AddInteger(ranges, "n", "0", "9223372036854775808");
  EXPECT_EQ(SearchSpace::FromProto(ranges).status().message(),
            "Integer parameter range 'n': MaxValue '9223372036854775808' is not an integer.");
}

TEST(SearchSpace, FromProtoRejectsMissingIntegerBound) {
  v1::ParameterRanges ranges;
  v1::IntegerParameterRange* r = ranges.add_integer_parameter_ranges();
  r->set_name("n");
  r->set_max_value("3");
  EXPECT_EQ(SearchSpace::FromProto(ranges).status().message(),
            "Integer parameter range 'n': MinValue '' is not an integer.");
}

TEST(SearchSpace, FromProtoRejectsNonNumericContinuousBounds) {
  for (const std::string bad : {"abc", "nan", "inf", "-inf", "1e999", " 1", "1 ", "0x10", "+-1"}) {
    v1::ParameterRanges ranges;
    AddContinuous(ranges, "lr", "0", bad);
    absl::StatusOr<SearchSpace> space = SearchSpace::FromProto(ranges);
    EXPECT_THAT(space, StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
    EXPECT_EQ(space.status().message(),
              "Continuous parameter range 'lr': MaxValue '" + bad + "' is not a finite number.")
        << bad;
  }
}

TEST(SearchSpace, FromProtoRejectsUnknownScalingType) {
  v1::ParameterRanges ranges;
  AddContinuous(ranges, "lr", "0.1", "0.2")->set_scaling_type("logarithmic");
  absl::StatusOr<SearchSpace> space = SearchSpace::FromProto(ranges);
  EXPECT_THAT(space,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Unknown ScalingType 'logarithmic'; expected Auto, Linear, Logarithmic or "
                       "ReverseLogarithmic."));
}

TEST(SearchSpace, FromProtoRunsValidate) {
  v1::ParameterRanges ranges;
  AddInteger(ranges, "n", "5", "4");
  EXPECT_EQ(SearchSpace::FromProto(ranges).status().message(),
            "Integer parameter range 'n': MinValue is greater than MaxValue.");
}

TEST(SearchSpace, ValidateAcceptsEqualBounds) {
  SearchSpace space;
  space.integers.push_back({"n", 3, 3, Scaling::kLogarithmic});
  space.continuous.push_back({"x", 0.5, 0.5, Scaling::kReverseLogarithmic});
  EXPECT_THAT(space.Validate(), IsOk());
}

TEST(SearchSpace, ValidateRejectsLogarithmicWithNonPositiveMin) {
  SearchSpace space;
  space.continuous.push_back({"lr", 0.0, 1.0, Scaling::kLogarithmic});
  absl::Status status = space.Validate();
  EXPECT_THAT(
      status,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "Continuous parameter range 'lr': Logarithmic scaling requires MinValue greater than "
          "0."));

  SearchSpace ints;
  ints.integers.push_back({"n", 0, 10, Scaling::kLogarithmic});
  EXPECT_EQ(ints.Validate().message(),
            "Integer parameter range 'n': Logarithmic scaling requires MinValue greater than 0.");
}

TEST(SearchSpace, ValidateRejectsReverseLogarithmicOnIntegers) {
  SearchSpace space;
  space.integers.push_back({"n", 0, 10, Scaling::kReverseLogarithmic});
  EXPECT_EQ(space.Validate().message(),
            "Integer parameter range 'n': ReverseLogarithmic scaling is supported only for "
            "continuous ranges.");
}

TEST(SearchSpace, ValidateRejectsReverseLogarithmicOutsideZeroToOne) {
  for (const auto& [min, max] : {std::pair{0.5, 1.0}, std::pair{-0.1, 0.5}}) {
    SearchSpace space;
    space.continuous.push_back({"momentum", min, max, Scaling::kReverseLogarithmic});
    EXPECT_EQ(space.Validate().message(),
              "Continuous parameter range 'momentum': ReverseLogarithmic scaling requires 0 <= "
              "MinValue <= MaxValue < 1.");
  }
}

TEST(SearchSpace, ValidateRejectsNonFiniteContinuousBounds) {
  SearchSpace space;
  space.continuous.push_back({"x", 0.0, std::numeric_limits<double>::infinity(), Scaling::kLinear});
  EXPECT_EQ(space.Validate().message(),
            "Continuous parameter range 'x': bounds must be finite numbers.");
}

TEST(SearchSpace, ValidateRejectsDuplicateNamesAcrossKinds) {
  SearchSpace space;
  space.integers.push_back({"depth", 1, 3, Scaling::kAuto});
  space.categorical.push_back({"depth", {"1", "2"}});
  EXPECT_EQ(space.Validate().message(), "Parameter range name 'depth' is used more than once.");
}

TEST(SearchSpace, ValidateRejectsEmptyNameAndEmptyValues) {
  SearchSpace unnamed;
  unnamed.continuous.push_back({"", 0.0, 1.0, Scaling::kAuto});
  EXPECT_EQ(unnamed.Validate().message(), "Continuous parameter range has an empty Name.");

  SearchSpace empty;
  empty.categorical.push_back({"opt", {}});
  EXPECT_EQ(empty.Validate().message(), "Categorical parameter range 'opt' has no Values.");
}

TEST(SearchSpace, GridSizeIsProductOfCategoricalCounts) {
  SearchSpace space;
  EXPECT_EQ(space.GridSize(), 1);
  space.categorical.push_back({"a", {"x", "y"}});
  space.categorical.push_back({"b", {"1", "2", "3"}});
  space.integers.push_back({"ignored", 1, 100, Scaling::kAuto});
  EXPECT_EQ(space.GridSize(), 6);
}

TEST(SearchSpace, GridSizeSaturatesInsteadOfOverflowing) {
  SearchSpace space;
  std::vector<std::string> thirty;
  for (int i = 0; i < 30; ++i) thirty.push_back(std::to_string(i));
  for (int i = 0; i < 30; ++i) space.categorical.push_back({"p" + std::to_string(i), thirty});
  EXPECT_EQ(space.GridSize(), std::numeric_limits<int64_t>::max());
}

TEST(Scaling, ParseScalingRoundTripsSageMakerNames) {
  for (Scaling s :
       {Scaling::kAuto, Scaling::kLinear, Scaling::kLogarithmic, Scaling::kReverseLogarithmic}) {
    absl::StatusOr<Scaling> parsed = ParseScaling(ScalingName(s));
    ASSERT_THAT(parsed, IsOk()) << ScalingName(s);
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ(ScalingName(Scaling::kReverseLogarithmic), "ReverseLogarithmic");
}

}  // namespace
}  // namespace amt::search
