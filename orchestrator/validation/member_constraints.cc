#include "orchestrator/validation/member_constraints.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "orchestrator/validation/member_rules.h"
#include "re2/re2.h"

namespace amt::validation {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

const RuleTable& Rules() {
  static const RuleTable* const rules = new RuleTable(BuildMemberRules());
  return *rules;
}

const MemberRule* FindRule(const FieldDescriptor* field) {
  const auto it = Rules().find(field->full_name());
  return it == Rules().end() ? nullptr : &it->second;
}

// Every pattern of the table, compiled once. RE2 objects are safe to share between threads.
bool FullMatch(const std::string& text, const char* pattern) {
  static const auto* const compiled = [] {
    auto* map = new std::map<std::string, std::unique_ptr<RE2>>();
    const auto add = [map](const char* p) {
      if (p != nullptr && !map->contains(p)) map->emplace(p, std::make_unique<RE2>(p));
    };
    for (const auto& [name, rule] : Rules()) {
      add(rule.pattern);
      for (const auto& shape : {rule.item, rule.key, rule.value}) {
        if (shape) add(shape->pattern);
      }
    }
    return map;
  }();
  const auto it = compiled->find(pattern);
  if (it != compiled->end()) return RE2::FullMatch(text, *it->second);
  return RE2::FullMatch(text, RE2(pattern));
}

std::string LowerCamel(const std::string& json_name) {
  std::string out = json_name;
  if (!out.empty()) out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  return out;
}

std::string Join(const std::string& prefix, const std::string& member) {
  return prefix.empty() ? member : prefix + "." + member;
}

// Violations of a string shape, in the order SageMaker's messages list them for single members:
// pattern, then maximum length, then minimum length.
std::vector<std::string> StringViolations(const std::string& value, const StringShape& shape) {
  std::vector<std::string> out;
  if (shape.pattern != nullptr && !FullMatch(value, shape.pattern)) {
    out.push_back(absl::StrCat("Member must satisfy regular expression pattern: ", shape.pattern));
  }
  const int64_t length = JavaLength(value);
  if (shape.max_length && length > *shape.max_length) {
    out.push_back(
        absl::StrCat("Member must have length less than or equal to ", *shape.max_length));
  }
  if (shape.min_length && length < *shape.min_length) {
    out.push_back(
        absl::StrCat("Member must have length greater than or equal to ", *shape.min_length));
  }
  return out;
}

// All constraints of a shape, as the bracketed list of "Map value must satisfy constraint: [...]"
// (AWS lists maximum length, minimum length, pattern, whether or not each one failed).
std::string DescribeShape(const StringShape& shape) {
  std::vector<std::string> parts;
  if (shape.max_length) {
    parts.push_back(
        absl::StrCat("Member must have length less than or equal to ", *shape.max_length));
  }
  if (shape.min_length) {
    parts.push_back(
        absl::StrCat("Member must have length greater than or equal to ", *shape.min_length));
  }
  if (shape.pattern != nullptr) {
    parts.push_back(
        absl::StrCat("Member must satisfy regular expression pattern: ", shape.pattern));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string RenderMessage(const Message& message);

std::string RenderScalar(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrCat(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrCat(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return rep ? r->GetRepeatedEnum(m, f, index)->name() : r->GetEnum(m, f)->name();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return RenderMessage(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
  }
  return "";
}

// A map as Java's Map.toString, entries sorted by key.
std::string RenderMap(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  const Descriptor* entry = f->message_type();
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < r->FieldSize(m, f); ++i) {
    const Message& e = r->GetRepeatedMessage(m, f, i);
    entries.emplace_back(RenderScalar(e, entry->map_key(), -1),
                         RenderScalar(e, entry->map_value(), -1));
  }
  std::sort(entries.begin(), entries.end());
  return absl::StrCat("{", absl::StrJoin(entries, ", ", absl::PairFormatter("=")), "}");
}

// A list as Java's List.toString.
std::string RenderList(const Message& m, const FieldDescriptor* f) {
  std::vector<std::string> items;
  for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
    items.push_back(RenderScalar(m, f, i));
  }
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

std::string RenderMessage(const Message& message) {
  const Reflection* r = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  std::vector<std::string> parts;
  for (const FieldDescriptor* f : fields) {
    std::string value = f->is_map()        ? RenderMap(message, f)
                        : f->is_repeated() ? RenderList(message, f)
                                           : RenderScalar(message, f, -1);
    parts.push_back(absl::StrCat(f->json_name(), ": ", value));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

void CheckCollectionLength(const std::string& rendered, int size, const std::string& path,
                           const MemberRule& rule, ConstraintViolations* out) {
  if (rule.max_length && size > *rule.max_length) {
    out->Add(rendered, path,
             absl::StrCat("Member must have length less than or equal to ", *rule.max_length));
  }
  if (rule.min_length && size < *rule.min_length) {
    out->Add(rendered, path,
             absl::StrCat("Member must have length greater than or equal to ", *rule.min_length));
  }
}

void CheckMap(const Message& m, const FieldDescriptor* f, const std::string& path,
              const MemberRule* rule, ConstraintViolations* out) {
  const Reflection* r = m.GetReflection();
  const int size = r->FieldSize(m, f);
  // An empty map cannot be told from an absent one on the wire we parse: treat it as absent.
  if (size == 0) {
    if (rule != nullptr && rule->required) out->Add(std::nullopt, path, "Member must not be null");
    return;
  }
  if (rule == nullptr) return;
  const std::string rendered = RenderMap(m, f);
  CheckCollectionLength(rendered, size, path, *rule, out);
  bool bad_key = false;
  bool bad_value = false;
  const Descriptor* entry = f->message_type();
  for (int i = 0; i < size; ++i) {
    const Message& e = r->GetRepeatedMessage(m, f, i);
    if (rule->key && !StringViolations(RenderScalar(e, entry->map_key(), -1), *rule->key).empty()) {
      bad_key = true;
    }
    if (rule->value &&
        !StringViolations(RenderScalar(e, entry->map_value(), -1), *rule->value).empty()) {
      bad_value = true;
    }
  }
  if (bad_key) {
    out->Add(rendered, path,
             absl::StrCat("Map keys must satisfy constraint: ", DescribeShape(*rule->key)));
  }
  if (bad_value) {
    out->Add(rendered, path,
             absl::StrCat("Map value must satisfy constraint: ", DescribeShape(*rule->value)));
  }
}

void CheckRepeated(const Message& m, const FieldDescriptor* f, const std::string& path,
                   const MemberRule* rule, ConstraintViolations* out) {
  const Reflection* r = m.GetReflection();
  const int size = r->FieldSize(m, f);
  // As for maps, an empty list is treated as absent.
  if (size == 0) {
    if (rule != nullptr && rule->required) out->Add(std::nullopt, path, "Member must not be null");
    return;
  }
  if (rule != nullptr) {
    const std::string rendered = RenderList(m, f);
    CheckCollectionLength(rendered, size, path, *rule, out);
    if (rule->item && f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      for (int i = 0; i < size; ++i) {
        if (!StringViolations(r->GetRepeatedString(m, f, i), *rule->item).empty()) {
          out->Add(rendered, path,
                   absl::StrCat("Member must satisfy constraint: ", DescribeShape(*rule->item)));
          break;
        }
      }
    }
  }
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    for (int i = 0; i < size; ++i) {
      CheckMemberConstraints(r->GetRepeatedMessage(m, f, i),
                             absl::StrCat(path, ".", i + 1, ".member"), out);
    }
  }
}

void CheckNumber(int64_t value, const std::string& path, const MemberRule& rule,
                 ConstraintViolations* out) {
  if (rule.min_value && value < *rule.min_value) {
    out->Add(absl::StrCat(value), path,
             absl::StrCat("Member must have value greater than or equal to ", *rule.min_value));
  }
  if (rule.max_value && value > *rule.max_value) {
    out->Add(absl::StrCat(value), path,
             absl::StrCat("Member must have value less than or equal to ", *rule.max_value));
  }
}

void CheckString(const std::string& value, const std::string& path, const MemberRule& rule,
                 ConstraintViolations* out) {
  if (!rule.enum_values.empty() && std::find(rule.enum_values.begin(), rule.enum_values.end(),
                                             value) == rule.enum_values.end()) {
    out->Add(value, path,
             absl::StrCat("Member must satisfy enum value set: [",
                          absl::StrJoin(rule.enum_values, ", "), "]"));
  }
  const StringShape shape{
      .min_length = rule.min_length, .max_length = rule.max_length, .pattern = rule.pattern};
  for (const std::string& violation : StringViolations(value, shape)) {
    out->Add(value, path, violation);
  }
}

}  // namespace

void ConstraintViolations::Add(const std::optional<std::string>& value, const std::string& path,
                               const std::string& constraint) {
  messages_.push_back(absl::StrCat(value ? absl::StrCat("Value '", *value, "'") : "Value null",
                                   " at '", path, "' failed to satisfy constraint: ", constraint));
}

absl::Status ConstraintViolations::ToStatus() const {
  if (messages_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      messages_.size(),
      messages_.size() == 1 ? " validation error detected: " : " validation errors detected: ",
      absl::StrJoin(messages_, "; ")));
}

void CheckStringMember(const std::optional<std::string>& value, const std::string& path,
                       const StringShape& shape, bool required, ConstraintViolations* out) {
  if (!value) {
    if (required) out->Add(std::nullopt, path, "Member must not be null");
    return;
  }
  for (const std::string& violation : StringViolations(*value, shape)) {
    out->Add(*value, path, violation);
  }
}

void CheckMemberConstraints(const Message& message, const std::string& prefix,
                            ConstraintViolations* out) {
  const Descriptor* d = message.GetDescriptor();
  const Reflection* r = message.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = Join(prefix, LowerCamel(f->json_name()));
    const MemberRule* rule = FindRule(f);
    if (f->is_map()) {
      CheckMap(message, f, path, rule, out);
      continue;
    }
    if (f->is_repeated()) {
      CheckRepeated(message, f, path, rule, out);
      continue;
    }
    if (!r->HasField(message, f)) {
      if (rule != nullptr && rule->required) {
        out->Add(std::nullopt, path, "Member must not be null");
      }
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        CheckMemberConstraints(r->GetMessage(message, f), path, out);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        if (rule != nullptr) CheckString(r->GetString(message, f), path, *rule, out);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        if (rule != nullptr) CheckNumber(r->GetInt32(message, f), path, *rule, out);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        if (rule != nullptr) CheckNumber(r->GetInt64(message, f), path, *rule, out);
        break;
      default:  // booleans and floating-point members carry no constraint in the model
        break;
    }
  }
}

int64_t JavaLength(const std::string& utf8) {
  int64_t length = 0;
  for (const char c : utf8) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte
    length += byte >= 0xF0 ? 2 : 1;       // a 4-byte sequence is a UTF-16 surrogate pair
  }
  return length;
}

}  // namespace amt::validation
