// CBOR (RFC 8949) for the AWS protocol Smithy RPC v2 CBOR, which botocore >= 1.36 speaks to
// CloudWatch (`smithy-protocol: rpc-v2-cbor`), over nlohmann::json values. Both directions are
// here: nlohmann::json cannot write tag 1 (epoch-based date/time), which botocore needs to turn a
// reply's timestamps into datetimes, and Debian's nlohmann::json 3.11.2 refuses to read the
// one-byte tag heads (0xc1) with which botocore sends a request's timestamps.
#ifndef AMT_ORCHESTRATOR_GATEWAY_CBOR_H_
#define AMT_ORCHESTRATOR_GATEWAY_CBOR_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace amt::gateway {

// `value` as CBOR with definite lengths: integers as CBOR integers, other numbers as doubles;
// a number that is the value of an object member named in `timestamp_members`, or an element of
// an array that is, as tag 1 with the number (epoch seconds).
std::string EncodeCbor(const nlohmann::json& value,
                       const std::set<std::string, std::less<>>& timestamp_members = {});

// One CBOR data item, with tags dropped (tag 1 + seconds reads as the seconds); nullopt when the
// bytes are not exactly one well-formed item. Byte strings become nlohmann binary values.
std::optional<nlohmann::json> DecodeCbor(std::string_view bytes);

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_CBOR_H_
