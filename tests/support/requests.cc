#include "tests/support/requests.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/json.h"

namespace amt::testing {
namespace {

nlohmann::json ParseOrFail(std::string_view text, std::string_view what) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    ADD_FAILURE() << what << " is not JSON";
    return nullptr;
  }
  return json;
}

template <typename Request>
Request ToRequest(std::string_view file, const Patch& patch) {
  Request request;
  const std::string text = ExampleText(file, patch);
  const absl::Status status = JsonToProto(text, &request);
  EXPECT_TRUE(status.ok()) << text << ": " << status;
  return request;
}

}  // namespace

nlohmann::json ExampleJson(std::string_view file) {
  const std::string path = std::string(AMT_EXAMPLES_DIR) + "/" + std::string(file);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return nullptr;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseOrFail(text.str(), path);
}

nlohmann::json Patch::Value() const {
  if (!value_.is_null() || text_.empty()) return value_;
  return ParseOrFail(text_, "the patch");
}

nlohmann::json ExampleWith(std::string_view file, const Patch& patch) {
  nlohmann::json json = ExampleJson(file);
  if (const nlohmann::json changes = patch.Value(); !changes.is_null()) json.merge_patch(changes);
  return json;
}

std::string ExampleText(std::string_view file, const Patch& patch) {
  return ExampleWith(file, patch).dump();
}

v1::CreateHyperParameterTuningJobRequest TuningRequest(std::string_view file, const Patch& patch) {
  return ToRequest<v1::CreateHyperParameterTuningJobRequest>(file, patch);
}

v1::CreateTrainingJobRequest TrainingRequest(std::string_view file, const Patch& patch) {
  return ToRequest<v1::CreateTrainingJobRequest>(file, patch);
}

}  // namespace amt::testing
