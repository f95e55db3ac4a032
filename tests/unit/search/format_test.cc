#include "orchestrator/search/format.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <system_error>

namespace amt::search {
namespace {

double ParseBack(const std::string& text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  EXPECT_EQ(ec, std::errc()) << text;
  EXPECT_EQ(ptr, text.data() + text.size()) << text;
  return v;
}

TEST(FormatInteger, WritesPlainDecimal) {
  EXPECT_EQ(FormatInteger(0), "0");
  EXPECT_EQ(FormatInteger(-12), "-12");
  EXPECT_EQ(FormatInteger(300), "300");
  EXPECT_EQ(FormatInteger(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
}

TEST(FormatContinuous, UsesShortestFixedFormInsidePythonReprRange) {
  EXPECT_EQ(FormatContinuous(0.0), "0");
  EXPECT_EQ(FormatContinuous(0.1), "0.1");
  EXPECT_EQ(FormatContinuous(0.001), "0.001");
  EXPECT_EQ(FormatContinuous(1e-4), "0.0001");
  EXPECT_EQ(FormatContinuous(-2.5), "-2.5");
  EXPECT_EQ(FormatContinuous(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(FormatContinuous(123456.789), "123456.789");
  EXPECT_EQ(FormatContinuous(1e15), "1000000000000000");
  EXPECT_EQ(FormatContinuous(9999999999999998.0), "9999999999999998");
}

TEST(FormatContinuous, WritesWholeNumbersWithoutTrailingPointZero) {
  EXPECT_EQ(FormatContinuous(3.0), "3");
  EXPECT_EQ(FormatContinuous(-1.0), "-1");
}

TEST(FormatContinuous, UsesExponentFormOutsidePythonReprRange) {
  EXPECT_EQ(FormatContinuous(1e-5), "1e-05");
  EXPECT_EQ(FormatContinuous(-3.5e-7), "-3.5e-07");
  EXPECT_EQ(FormatContinuous(9.99e-5), "9.99e-05");
  EXPECT_EQ(FormatContinuous(1e16), "1e+16");
  EXPECT_EQ(FormatContinuous(2.5e16), "2.5e+16");
  EXPECT_EQ(FormatContinuous(1e300), "1e+300");
}

TEST(FormatContinuous, RoundTripsExactlyForManyValues) {
  std::mt19937_64 engine(7);
  std::uniform_real_distribution<double> exponent(-12.0, 20.0);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  for (int i = 0; i < 5000; ++i) {
    const double v = mantissa(engine) * std::pow(10.0, exponent(engine));
    const std::string text = FormatContinuous(v);
    EXPECT_EQ(ParseBack(text), v) << text;
    const double magnitude = std::fabs(v);
    if (magnitude >= 1e-4 && magnitude < 1e16) {
      EXPECT_EQ(text.find_first_of("eE"), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find('e'), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace amt::search
