// Stage 1 of request validation: SageMaker's per-member constraints (required, length, pattern,
// enum, numeric bounds) from the botocore model, checked over any amt.v1 request message by
// reflection and reported in AWS's standard form:
//
//   2 validation errors detected: Value 'x_y' at 'trainingJobName' failed to satisfy constraint:
//   Member must satisfy regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}; Value null
//   at 'roleArn' failed to satisfy constraint: Member must not be null
//
// Member paths are lowerCamelCase member names joined by '.', items of a list of structures as
// `list.N.member.field` (1-based). Constraints on the items of a list of strings and on map keys
// and values are reported once for the whole collection, as AWS does ("Member must satisfy
// constraint: [...]", "Map keys must satisfy constraint: [...]", "Map value must satisfy
// constraint: [...]"), with the collection rendered like Java's toString: `[a, b]`, `{k=v, k2=v2}`
// (map entries sorted by key). A structure inside a rendered list is written `{Name: x, Regex: y}`
// (our rendering; AWS's is not documented).
#ifndef AMT_ORCHESTRATOR_VALIDATION_MEMBER_CONSTRAINTS_H_
#define AMT_ORCHESTRATOR_VALIDATION_MEMBER_CONSTRAINTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace amt::validation {

// Constraints of a string shape: lengths in characters as Java counts them (UTF-16 code units),
// pattern matched against the whole value.
struct StringShape {
  std::optional<int64_t> min_length = std::nullopt;
  std::optional<int64_t> max_length = std::nullopt;
  const char* pattern = nullptr;  // shown verbatim in messages
};

// SageMaker's tuning job name shape: 1-32, ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}.
const StringShape& TuningJobNameShape();
// SageMaker's training job name shape: 1-63, ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}.
const StringShape& TrainingJobNameShape();

// Collects member-constraint violations, in the order they were found.
class ConstraintViolations {
 public:
  // `value` is the rendered value, or nullopt for "Value null".
  void Add(const std::optional<std::string>& value, const std::string& path,
           const std::string& constraint);

  bool empty() const { return messages_.empty(); }
  size_t size() const { return messages_.size(); }

  // OK when empty; otherwise InvalidArgument (ValidationException) with
  // "1 validation error detected: ..." or "N validation errors detected: a; b; ...".
  absl::Status ToStatus() const;

 private:
  std::vector<std::string> messages_;
};

// Checks `value` at `path` against `shape`, `required` meaning "Member must not be null".
void CheckStringMember(const std::optional<std::string>& value, const std::string& path,
                       const StringShape& shape, bool required, ConstraintViolations* out);

// Checks every member of `message`, recursively, against the constraint table of the amt.v1
// request shapes. `prefix` is the path of `message` itself ("" for a request). Members without a
// SageMaker constraint are not checked.
void CheckMemberConstraints(const google::protobuf::Message& message, const std::string& prefix,
                            ConstraintViolations* out);

// Java's String.length() of UTF-8 text: code points, counting those outside the BMP twice.
int64_t JavaLength(const std::string& utf8);

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_MEMBER_CONSTRAINTS_H_
