// The member constraints of botocore's SageMaker model (spec sections 3, 5, 6, 8) as a table
// keyed by full proto field name; member_constraints.cc checks requests against it. Internal to
// the validation library.
#ifndef AMT_ORCHESTRATOR_VALIDATION_MEMBER_RULES_H_
#define AMT_ORCHESTRATOR_VALIDATION_MEMBER_RULES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/validation/member_constraints.h"

namespace amt::validation {

// One member's constraints. Lengths apply to strings (characters), lists (items) and maps
// (entries); `item` constrains the strings of a list of strings, `key`/`value` a map's entries.
struct MemberRule {
  bool required = false;
  std::optional<int64_t> min_length = std::nullopt;
  std::optional<int64_t> max_length = std::nullopt;
  const char* pattern = nullptr;
  std::vector<std::string> enum_values = {};
  std::optional<int64_t> min_value = std::nullopt;
  std::optional<int64_t> max_value = std::nullopt;
  std::optional<StringShape> item = std::nullopt;
  std::optional<StringShape> key = std::nullopt;
  std::optional<StringShape> value = std::nullopt;
};

// Members of amt.v1 shapes not listed have no constraint we enforce.
using RuleTable = std::map<std::string, MemberRule>;

// The whole table, keyed "amt.v1.<Message>.<field>".
RuleTable BuildMemberRules();

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_MEMBER_RULES_H_
