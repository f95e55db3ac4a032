#include "orchestrator/gateway/cbor.h"

#include <gtest/gtest.h>

namespace amt::gateway {
namespace {

using nlohmann::json;

std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// RFC 8949, Appendix A.
TEST(EncodeCbor, WritesTheRfcsExamples) {
  EXPECT_EQ(Hex(EncodeCbor(0)), "00");
  EXPECT_EQ(Hex(EncodeCbor(23)), "17");
  EXPECT_EQ(Hex(EncodeCbor(24)), "1818");
  EXPECT_EQ(Hex(EncodeCbor(1000)), "1903e8");
  EXPECT_EQ(Hex(EncodeCbor(1000000)), "1a000f4240");
  EXPECT_EQ(Hex(EncodeCbor(1000000000000)), "1b000000e8d4a51000");
  EXPECT_EQ(Hex(EncodeCbor(-1)), "20");
  EXPECT_EQ(Hex(EncodeCbor(-1000)), "3903e7");
  EXPECT_EQ(Hex(EncodeCbor(1.1)), "fb3ff199999999999a");
  EXPECT_EQ(Hex(EncodeCbor(false)), "f4");
  EXPECT_EQ(Hex(EncodeCbor(true)), "f5");
  EXPECT_EQ(Hex(EncodeCbor(nullptr)), "f6");
  EXPECT_EQ(Hex(EncodeCbor("IETF")), "6449455446");
  EXPECT_EQ(Hex(EncodeCbor(json::array({1, json::array({2, 3})}))), "8201820203");
  EXPECT_EQ(Hex(EncodeCbor(json::object({{"a", 1}}))), "a1616101");
}

TEST(EncodeCbor, TagsTheNamedMembersAsEpochTimestamps) {
  // 0xc1 is tag 1 (epoch-based date/time): RFC 8949's 1363896240.
  EXPECT_EQ(Hex(EncodeCbor(json::object({{"Timestamp", 1363896240}}), {"Timestamp"})),
            "a169" + Hex("Timestamp") + "c11a514b67b0");
  EXPECT_EQ(Hex(EncodeCbor(json::object({{"Timestamp", 1363896240}}))),
            "a169" + Hex("Timestamp") + "1a514b67b0");
}

TEST(EncodeCbor, TagsEveryNumberOfANamedArray) {
  // GetMetricData's Timestamps: an array of 2, each element tag 1 + the seconds.
  EXPECT_EQ(Hex(EncodeCbor(json::object({{"Timestamps", {1363896240, 1}}}), {"Timestamps"})),
            "a16a" + Hex("Timestamps") + "82c11a514b67b0c101");
}

TEST(DecodeCbor, ReadsWhatItWroteAndDropsTags) {
  const json value = {{"Label", "val_loss"},
                      {"Datapoints", {{{"Timestamp", 1700000000}, {"Average", 0.25}}}},
                      {"Negative", -70000}};
  EXPECT_EQ(DecodeCbor(EncodeCbor(value, {"Timestamp"})), value);
}

TEST(DecodeCbor, RefusesWhatIsNotOneItem) {
  EXPECT_FALSE(DecodeCbor("").has_value());
  EXPECT_FALSE(DecodeCbor("\x82\x01").has_value());  // an array of 2 with one element
  EXPECT_FALSE(DecodeCbor(std::string("\x01\x01", 2)).has_value());  // two items
}

}  // namespace
}  // namespace amt::gateway
