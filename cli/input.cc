#include "cli/input.h"

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

}  // namespace amt::cli
