#include "orchestrator/metrics/metric_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <string>
#include <utility>

#include "common/log_line.h"
#include "tests/support/status_matchers.h"

namespace amt::metrics {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kXgboostValidationAuc[] =
    R"(.*\[[0-9]+\].*#011validation-auc:([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?).*)";

google::protobuf::RepeatedPtrField<v1::MetricDefinition> Defs(
    std::initializer_list<std::pair<std::string, std::string>> defs) {
  google::protobuf::RepeatedPtrField<v1::MetricDefinition> out;
  for (const auto& [name, regex] : defs) {
    v1::MetricDefinition* def = out.Add();
    def->set_name(name);
    def->set_regex(regex);
  }
  return out;
}

MetricParser MustCreate(std::initializer_list<std::pair<std::string, std::string>> defs) {
  absl::StatusOr<MetricParser> parser = MetricParser::Create(Defs(defs));
  EXPECT_THAT(parser, IsOk());
  return parser.ok() ? *parser : MetricParser::Create(Defs({})).value();
}

}  // namespace

// Readable failure output for MetricValue.
void PrintTo(const MetricValue& m, std::ostream* os) { *os << m.name << "=" << m.value; }

namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

// gmock matcher for a MetricValue.
MATCHER_P2(Metric, name, value, "") { return arg.name == name && arg.value == value; }

TEST(MetricParser, ParsesXgboostValidationAucAfterEscapingTabs) {
  MetricParser parser = MustCreate({{"validation:auc", kXgboostValidationAuc}});
  const std::string line = SageMakerLogLine("[3]\ttrain-auc:0.91\tvalidation-auc:0.875");
  EXPECT_EQ(line, "[3]#011train-auc:0.91#011validation-auc:0.875");
  EXPECT_THAT(parser.Parse(line), ElementsAre(Metric("validation:auc", 0.875)));
}

TEST(MetricParser, XgboostRegexIgnoresRawTabs) {
  MetricParser parser = MustCreate({{"validation:auc", kXgboostValidationAuc}});
  EXPECT_THAT(parser.Parse("[3]\ttrain-auc:0.91\tvalidation-auc:0.875"), IsEmpty());
}

TEST(MetricParser, ParsesExponents) {
  MetricParser parser = MustCreate({{"loss", R"(loss=(\S+))"}});
  EXPECT_THAT(parser.Parse("epoch 3 loss=1.5e-03"), ElementsAre(Metric("loss", 1.5e-3)));
  EXPECT_THAT(parser.Parse("epoch 4 loss=-2E+2"), ElementsAre(Metric("loss", -200.0)));
}

TEST(MetricParser, NonNumericCaptureGivesNothing) {
  MetricParser parser = MustCreate({{"cat", R"(cat=(\S+))"}});
  EXPECT_THAT(parser.Parse("cat=dog"), IsEmpty());
  EXPECT_THAT(parser.Parse("cat=nan"), IsEmpty());
  EXPECT_THAT(parser.Parse("cat=inf"), IsEmpty());
}

TEST(MetricParser, EmptyCaptureGivesNothing) {
  // Katib's pitfall: a pattern whose group can match the empty string.
  MetricParser parser = MustCreate({{"acc", R"(acc=([0-9.]*))"}});
  EXPECT_THAT(parser.Parse("acc= (not ready)"), IsEmpty());
  EXPECT_THAT(parser.Parse("acc=0.5"), ElementsAre(Metric("acc", 0.5)));
}

TEST(MetricParser, TwoDefinitionsOnOneLineBothFireInDefinitionOrder) {
  MetricParser parser = MustCreate({{"validation:loss", R"(val_loss: ([0-9.]+))"},
                                    {"train:loss", R"(\btrain_loss: ([0-9.]+))"}});
  EXPECT_THAT(parser.Parse("train_loss: 0.25 - val_loss: 0.5"),
              ElementsAre(Metric("validation:loss", 0.5), Metric("train:loss", 0.25)));
}

TEST(MetricParser, OnlyLeftmostMatchOfADefinitionCounts) {
  MetricParser parser = MustCreate({{"loss", R"(loss=([0-9.]+))"}});
  EXPECT_THAT(parser.Parse("loss=1 loss=2"), ElementsAre(Metric("loss", 1.0)));
}

TEST(MetricParser, MatchesAnywhereInTheLine) {
  MetricParser parser = MustCreate({{"train:error", "Train_error=(.*?);"}});
  EXPECT_THAT(parser.Parse("2024-01-01 INFO Train_error=0.125; Valid_error=0.2;"),
              ElementsAre(Metric("train:error", 0.125)));
}

TEST(MetricParser, UsesWholeMatchWhenRegexHasNoGroup) {
  MetricParser parser = MustCreate({{"number", R"([0-9]+\.[0-9]+)"}});
  EXPECT_THAT(parser.Parse("value 3.25 seen"), ElementsAre(Metric("number", 3.25)));
}

TEST(MetricParser, UsesOnlyGroupOneWhenThereAreSeveral) {
  // huggingface/notebooks#61: group 1 of this pattern stops before the exponent of "1.5e-05",
  // so users saw 1.5 instead of 1.5e-05. Group-1 semantics reproduce that faithfully.
  MetricParser parser = MustCreate({{"loss", R"('loss': ([0-9]+(.|e\-)[0-9]+),?)"}});
  EXPECT_THAT(parser.Parse("{'loss': 1.5e-05, 'epoch': 1}"), ElementsAre(Metric("loss", 1.5)));
  EXPECT_THAT(parser.Parse("{'loss': 7e-05, 'epoch': 1}"), ElementsAre(Metric("loss", 7e-05)));
}

TEST(MetricParser, UnmatchedOptionalGroupGivesNothing) {
  MetricParser parser = MustCreate({{"x", R"(x(=([0-9]+))?)"}});
  EXPECT_THAT(parser.Parse("x only"), IsEmpty());
}

TEST(MetricParser, HostilePatternOnLongLineReturnsQuickly) {
  MetricParser parser = MustCreate({{"evil", "(a+)+$"}});
  const std::string line = std::string(100000, 'a') + "!";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(parser.Parse(line), IsEmpty());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // Backtracking engines take exponential time here; RE2 takes milliseconds. 2 s is a wide margin
  // for a loaded CI machine, not a performance target.
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

TEST(MetricParser, InvalidRegexIsInvalidArgumentNamingTheMetric) {
  absl::StatusOr<MetricParser> parser =
      MetricParser::Create(Defs({{"ok", "a=([0-9]+)"}, {"validation:rmse", "rmse=([0-9]+"}}));
  EXPECT_THAT(
      parser,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "The regex 'rmse=([0-9]+' of metric definition 'validation:rmse' is not valid (RE2): "
          "missing ): rmse=([0-9]+"));
}

TEST(MetricParser, BackreferenceIsRejectedByRe2) {
  absl::StatusOr<MetricParser> parser = MetricParser::Create(Defs({{"dup", R"((\d)\1)"}}));
  EXPECT_THAT(parser,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("of metric definition 'dup' is not valid (RE2)")));
}

TEST(MetricParser, CopiesShareCompiledPatterns) {
  MetricParser parser = MustCreate({{"loss", R"(loss=([0-9.]+))"}});
  const MetricParser copy = parser;
  EXPECT_EQ(copy.size(), 1u);
  EXPECT_THAT(copy.Parse("loss=0.5"), ElementsAre(Metric("loss", 0.5)));
}

TEST(ParseNumber, AcceptsDecimalForms) {
  EXPECT_EQ(ParseNumber("0.875"), 0.875);
  EXPECT_EQ(ParseNumber("42"), 42.0);
  EXPECT_EQ(ParseNumber("-3"), -3.0);
  EXPECT_EQ(ParseNumber("+3"), 3.0);
  EXPECT_EQ(ParseNumber("1."), 1.0);
  EXPECT_EQ(ParseNumber(".5"), 0.5);
  EXPECT_EQ(ParseNumber("-.5"), -0.5);
  EXPECT_EQ(ParseNumber("1.5e-03"), 1.5e-3);
  EXPECT_EQ(ParseNumber("2E+4"), 2e4);
  EXPECT_EQ(ParseNumber("+1e5"), 1e5);
}

TEST(ParseNumber, IgnoresSurroundingSpaces) {
  EXPECT_EQ(ParseNumber(" 0.5 "), 0.5);
  EXPECT_EQ(ParseNumber("0.5\r"), 0.5);
}

TEST(ParseNumber, RejectsNonNumbers) {
  for (const char* text :
       {"",      " ",     "nan", "NaN", "inf",   "-inf",   "+inf", "infinity", "1.2.3",
        "abc",   "1e",    "e5",  ".",   "-",     "+",      "+-1",  "-+1",      "++1",
        "0x1p3", "1_000", "1,5", "1 2", "1e999", "-1e999", "0.5;"}) {
    EXPECT_EQ(ParseNumber(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(ParseNumber, UnderflowGivesNearestDouble) {
  EXPECT_EQ(ParseNumber("1e-400"), 0.0);
  std::optional<double> subnormal = ParseNumber("4e-320");
  ASSERT_TRUE(subnormal.has_value());
  EXPECT_GT(*subnormal, 0.0);
  EXPECT_LT(*subnormal, std::numeric_limits<double>::min());
}

}  // namespace
}  // namespace amt::metrics
