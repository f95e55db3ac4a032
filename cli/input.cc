#include "cli/input.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/json.h"
#include "common/status_macros.h"

namespace amt::cli {
namespace {

constexpr char kFilePrefix[] = "file://";
constexpr char kParamError[] = "Error parsing parameter 'cli-input-json': ";

bool LooksLikeInlineJson(const std::string& value) {
  const size_t first = value.find_first_not_of(" \t\r\n");
  return first != std::string::npos && (value[first] == '{' || value[first] == '[');
}

std::string ExpandHome(const std::string& path) {
  if (path.rfind("~/", 0) != 0) return path;
  const char* home = std::getenv("HOME");
  if (home == nullptr) return path;
  return std::string(home) + path.substr(1);
}

absl::Status LoadError(const std::string& value, int error) {
  return absl::InvalidArgumentError(std::string(kParamError) + "Unable to load paramfile " + value +
                                    ": " + std::strerror(error));
}

}  // namespace

absl::StatusOr<std::string> ReadCliInputJson(const std::string& value) {
  std::string path;
  if (value.rfind(kFilePrefix, 0) == 0) {
    path = value.substr(sizeof(kFilePrefix) - 1);
  } else if (LooksLikeInlineJson(value)) {
    return value;
  } else {
    path = value;
  }
  path = ExpandHome(path);
  // C stdio rather than ifstream: it reports the reason (errno) for the message.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (file == nullptr) return LoadError(value, errno);
  std::string contents;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) contents.append(buffer, n);
  if (std::ferror(file.get())) return LoadError(value, errno);
  return contents;
}

absl::Status LoadCliInputJson(const std::string& value, google::protobuf::Message* message) {
  ASSIGN_OR_RETURN(const std::string json, ReadCliInputJson(value));
  // A syntax check first, so that bad JSON and a bad member get the aws cli's two different
  // messages; protobuf's parser would report both the same way.
  std::string problem;
  try {
    const nlohmann::json parsed = nlohmann::json::parse(json);
    if (!parsed.is_object()) problem = "the input must be a JSON object";
  } catch (const nlohmann::json::parse_error& e) {
    problem = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    const size_t bracket = problem.find("] ");
    if (problem.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos) {
      problem = problem.substr(bracket + 2);
    }
  }
  if (!problem.empty()) {
    return absl::InvalidArgumentError(std::string(kParamError) + "Invalid JSON: " + problem +
                                      "\nJSON received: " + json);
  }
  const absl::Status status = JsonToProto(json, message);
  if (!status.ok()) {
    return absl::InvalidArgumentError("Parameter validation failed:\n" +
                                      std::string(status.message()));
  }
  return absl::OkStatus();
}

std::string KebabCase(const std::string& name) {
  std::string kebab;
  for (size_t c = 0; c < name.size(); ++c) {
    const bool upper = std::isupper(static_cast<unsigned char>(name[c])) != 0;
    const bool after_lower = c > 0 && (std::islower(static_cast<unsigned char>(name[c - 1])) != 0 ||
                                       std::isdigit(static_cast<unsigned char>(name[c - 1])) != 0);
    const bool acronym_end = c > 0 && c + 1 < name.size() &&
                             std::isupper(static_cast<unsigned char>(name[c - 1])) != 0 &&
                             std::islower(static_cast<unsigned char>(name[c + 1])) != 0;
    if (upper && (after_lower || acronym_end)) kebab += '-';
    kebab += static_cast<char>(std::tolower(static_cast<unsigned char>(name[c])));
  }
  return kebab;
}

std::vector<std::pair<std::string, const google::protobuf::FieldDescriptor*>> MemberFlags(
    const google::protobuf::Descriptor* type) {
  std::vector<std::pair<std::string, const google::protobuf::FieldDescriptor*>> flags;
  for (int i = 0; i < type->field_count(); ++i) {
    const auto* field = type->field(i);
    flags.emplace_back("--" + KebabCase(field->json_name()), field);
  }
  return flags;
}

namespace {

const google::protobuf::FieldDescriptor* FieldByJsonName(const google::protobuf::Descriptor* type,
                                                         const std::string& json_name) {
  for (int i = 0; i < type->field_count(); ++i) {
    if (type->field(i)->json_name() == json_name) return type->field(i);
  }
  return nullptr;
}

}  // namespace

absl::Status LoadRequest(const std::string& cli_input_json,
                         const std::map<std::string, std::string>& members,
                         google::protobuf::Message* message) {
  if (members.empty()) {
    if (cli_input_json.empty()) return absl::OkStatus();
    return LoadCliInputJson(cli_input_json, message);
  }
  if (!cli_input_json.empty()) RETURN_IF_ERROR(LoadCliInputJson(cli_input_json, message));
  // Members given as flags replace the file's: parse them into a second message, then merge
  // member by member.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  const auto* type = message->GetDescriptor();
  std::map<std::string, std::string> flag_of;
  for (const auto& [flag, field] : MemberFlags(type)) flag_of[field->json_name()] = flag;
  for (const auto& [member, text] : members) {
    const auto* field = FieldByJsonName(type, member);
    if (field == nullptr) continue;
    if (field->type() == google::protobuf::FieldDescriptor::TYPE_STRING && !field->is_repeated()) {
      doc[member] = text;
      continue;
    }
    try {
      doc[member] = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      return absl::InvalidArgumentError("Error parsing parameter '" + flag_of[member].substr(2) +
                                        "': Invalid JSON: " + text);
    }
  }
  std::unique_ptr<google::protobuf::Message> flags(message->New());
  const absl::Status status = JsonToProto(doc.dump(), flags.get());
  if (!status.ok()) {
    return absl::InvalidArgumentError("Parameter validation failed:\n" +
                                      std::string(status.message()));
  }
  const auto* reflection = message->GetReflection();
  for (const auto& [member, text] : members) {
    const auto* field = FieldByJsonName(type, member);
    if (field == nullptr) continue;
    reflection->ClearField(message, field);
  }
  message->MergeFrom(*flags);
  return absl::OkStatus();
}

}  // namespace amt::cli
