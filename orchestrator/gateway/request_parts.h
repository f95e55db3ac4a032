// Pieces of a request target and of form bodies that the protocol handlers share:
// percent-decoding, the query string as name-value pairs, the target split into path and query.
#ifndef AMT_ORCHESTRATOR_GATEWAY_REQUEST_PARTS_H_
#define AMT_ORCHESTRATOR_GATEWAY_REQUEST_PARTS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace amt::gateway {

// What PercentDecode does with a '%' not followed by two hex digits: refuse the text (S3's
// paths), or keep it as it is (the query protocol's forms, as AWS's front ends do).
enum class BadEscape { kRefuse, kKeep };

// %XX sequences decoded (and '+' as a space when `plus_is_space`, as in form bodies and query
// strings); nullopt for a bad escape when `bad_escape` is kRefuse.
std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space,
                                         BadEscape bad_escape = BadEscape::kRefuse);

// "a=1&b&c=x%20y" -> {("a","1"), ("b",""), ("c","x y")}, in order, repeats kept; nullopt when a
// name or value is badly percent-encoded.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(std::string_view query);

// The path of a request target (before '?') and its query (after; empty when none).
std::pair<std::string_view, std::string_view> SplitTarget(std::string_view target);

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_REQUEST_PARTS_H_
