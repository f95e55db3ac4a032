#include "orchestrator/search/gp_encoding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace amt::search {
namespace {

using ::testing::ElementsAre;

SearchSpace MixedSpace() {
  SearchSpace space;
  space.integers.push_back({"depth", 1, 4, Scaling::kLinear});
  space.integers.push_back({"trees", 1, 1000, Scaling::kLogarithmic});
  space.integers.push_back({"batch", 16, 16, Scaling::kAuto});
  space.continuous.push_back({"lr", 1e-4, 1.0, Scaling::kLogarithmic});
  space.continuous.push_back({"momentum", 0.5, 0.999, Scaling::kReverseLogarithmic});
  space.continuous.push_back({"alpha", -1, 3, Scaling::kAuto});
  space.categorical.push_back({"optimizer", {"sgd", "adam", "rmsprop"}});
  space.categorical.push_back({"loss", {"l2"}});
  return space;
}

Assignment Point() {
  return {{"depth", "2"},       {"trees", "10"}, {"batch", "16"},       {"lr", "0.01"},
          {"momentum", "0.99"}, {"alpha", "0"},  {"optimizer", "adam"}, {"loss", "l2"}};
}

TEST(SpaceEncoder, SingleValuedParametersHaveNoFeature) {
  const SpaceEncoder encoder(MixedSpace());
  // depth, trees, lr, momentum, alpha: 1 each; optimizer: 3 one-hot; batch and loss: none.
  EXPECT_EQ(encoder.params(), 6);
  EXPECT_EQ(encoder.dims(), 8);
  EXPECT_THAT(encoder.FeatureGroups(), ElementsAre(0, 1, 2, 3, 4, 5, 5, 5));
  EXPECT_TRUE(encoder.IsNumericFeature(4));
  EXPECT_FALSE(encoder.IsNumericFeature(5));
}

TEST(SpaceEncoder, EncodesEachScaling) {
  const SpaceEncoder encoder(MixedSpace());
  const Eigen::VectorXd x = encoder.Encode(Point()).value();
  EXPECT_NEAR(x[0], 0.375, 1e-12);  // integer 2 of 1..4: the centre of its cell [1.5, 2.5)
  // log cell of 10 in [log 1, log 1001): its middle, (log 10 + log 11) / 2.
  EXPECT_NEAR(x[1], 0.5 * (std::log(10.0) + std::log(11.0)) / std::log(1001.0), 1e-12);
  EXPECT_NEAR(x[2], 0.5, 1e-12);  // 1e-2 is halfway between 1e-4 and 1 in log scale
  EXPECT_NEAR(x[3], (std::log(0.5) - std::log(0.01)) / (std::log(0.5) - std::log(0.001)), 1e-12);
  EXPECT_NEAR(x[4], 0.25, 1e-12);  // Auto is linear unless learned otherwise
  EXPECT_THAT(std::vector<double>(x.data() + 5, x.data() + 8), ElementsAre(0, 1, 0));
}

TEST(SpaceEncoder, DecodeRoundsIntegersAndPicksTheLargestOneHot) {
  const SpaceEncoder encoder(MixedSpace());
  Eigen::VectorXd x(8);
  x << 0.99, 0.0, 0.5, 1.0, 1.2, 0.1, 0.3, 0.2;
  const Assignment a = encoder.Decode(x);
  EXPECT_EQ(a.at("depth"), "4");
  EXPECT_EQ(a.at("trees"), "1");
  EXPECT_NEAR(std::stod(a.at("lr")), 0.01, 1e-15);
  EXPECT_NEAR(std::stod(a.at("momentum")), 0.999, 1e-15);
  EXPECT_EQ(a.at("alpha"), "3");  // clamped into the range
  EXPECT_EQ(a.at("optimizer"), "adam");
  EXPECT_EQ(a.at("batch"), "16");
  EXPECT_EQ(a.at("loss"), "l2");
}

TEST(SpaceEncoder, SnapEqualsEncodeOfDecode) {
  const SpaceEncoder encoder(MixedSpace());
  std::mt19937_64 engine(3);
  std::uniform_real_distribution<double> u(-0.1, 1.1);
  for (int i = 0; i < 200; ++i) {
    Eigen::VectorXd x(8);
    for (int j = 0; j < 8; ++j) x[j] = u(engine);
    const Eigen::VectorXd snapped = encoder.Snap(x);
    const Eigen::VectorXd reencoded = encoder.Encode(encoder.Decode(x)).value();
    EXPECT_LT((snapped - reencoded).cwiseAbs().maxCoeff(), 1e-12) << i;
  }
}

TEST(SpaceEncoder, CoordinatesCoverEveryIntegerAndCategoryEvenly) {
  SearchSpace space;
  space.integers.push_back({"k", 1, 3, Scaling::kLinear});
  space.categorical.push_back({"c", {"a", "b"}});
  const SpaceEncoder encoder(space);
  std::map<std::string, int> counts;
  for (int i = 0; i < 60; ++i) {
    const double u[2] = {(i + 0.5) / 60.0, (i + 0.5) / 60.0};
    const Assignment a = encoder.Decode(encoder.FromCoordinates(u));
    ++counts[a.at("k") + a.at("c")];
  }
  EXPECT_EQ(counts["1a"], 20);
  EXPECT_EQ(counts["2a"], 10);
  EXPECT_EQ(counts["2b"], 10);
  EXPECT_EQ(counts["3b"], 20);
}

TEST(SpaceEncoder, RejectsWhatCannotBeEncoded) {
  const SpaceEncoder encoder(MixedSpace());
  Assignment missing = Point();
  missing.erase("lr");
  EXPECT_FALSE(encoder.Encode(missing).has_value());
  Assignment unknown = Point();
  unknown["optimizer"] = "adagrad";
  EXPECT_FALSE(encoder.Encode(unknown).has_value());
  Assignment text = Point();
  text["depth"] = "deep";
  EXPECT_FALSE(encoder.Encode(text).has_value());
  Assignment negative_log = Point();
  negative_log["lr"] = "-1";
  EXPECT_FALSE(encoder.Encode(negative_log, 10.0).has_value());
  Assignment outside = Point();
  outside["alpha"] = "4";  // 0.25 of the width above the range
  EXPECT_FALSE(encoder.Encode(outside).has_value());
  const Eigen::VectorXd tolerated = encoder.Encode(outside, 0.5).value();
  EXPECT_NEAR(tolerated[4], 1.25, 1e-12);
}

TEST(SpaceEncoder, AcceptsWholeNumbersWrittenAsDecimalsAndIgnoresExtraNames) {
  const SpaceEncoder encoder(MixedSpace());
  Assignment a = Point();
  a["depth"] = "2.0";
  a["static_epochs"] = "10";
  EXPECT_EQ(encoder.Encode(a).value(), encoder.Encode(Point()).value());
}

TEST(SpaceEncoder, AutoRangesSpanningADecadeCanBeLearnedLogarithmic) {
  SearchSpace space;
  space.integers.push_back({"units", 1, 512, Scaling::kAuto});
  space.integers.push_back({"depth", 2, 8, Scaling::kAuto});  // less than a factor of 10
  space.continuous.push_back({"c", 0.001, 10, Scaling::kAuto});
  space.continuous.push_back({"shift", -1, 1, Scaling::kAuto});  // min <= 0
  EXPECT_THAT(SpaceEncoder::AutoLogCandidates(space), ElementsAre("units", "c"));
  const SpaceEncoder linear(space);
  const SpaceEncoder log(space, {true, true});
  const Assignment a = {{"units", "22"}, {"depth", "5"}, {"c", "0.1"}, {"shift", "0"}};
  EXPECT_NEAR(linear.Encode(a).value()[2], 0.1 / 10, 1e-3);
  EXPECT_NEAR(log.Encode(a).value()[2], 0.5, 1e-12);
  EXPECT_NEAR(log.Encode(a).value()[0], 0.5, 0.01);
  const Assignment back = log.Decode(log.Encode(a).value());
  EXPECT_EQ(back.at("units"), "22");
  EXPECT_EQ(back.at("depth"), "5");
  EXPECT_NEAR(std::stod(back.at("c")), 0.1, 1e-15);
}

}  // namespace
}  // namespace amt::search
