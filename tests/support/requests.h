// The C++ tests' one request builder: SageMaker requests made from the canonical examples, the job
// files in examples/ that users run, with what a test changes merged over them as a JSON merge
// patch (RFC 7386: members of objects merge, anything else replaces, null removes a member).
//
//   const auto request = TuningRequest("random-tuning.json", R"({
//       "HyperParameterTuningJobName": "demo",
//       "HyperParameterTuningJobConfig": {"ResourceLimits": {"MaxNumberOfTrainingJobs": 4}}})");
//
// So a test names only what it is about, and a change to the request shape is made once, in the
// examples (which their own tests run as users do).
#ifndef AMT_TESTS_SUPPORT_REQUESTS_H_
#define AMT_TESTS_SUPPORT_REQUESTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "amt/v1/tuning.pb.h"

namespace amt::testing {

// A merge patch: JSON text (what most tests write), or a JSON value built in code (for tests that
// put names, counts and paths of their own into it). Text that does not parse fails the test.
class Patch {
 public:
  Patch() = default;
  Patch(const char* text) : text_(text) {}                   // NOLINT: implicit by design
  Patch(std::string_view text) : text_(text) {}              // NOLINT
  Patch(const std::string& text) : text_(text) {}            // NOLINT
  Patch(nlohmann::json value) : value_(std::move(value)) {}  // NOLINT

  // The patch as JSON (null when there is none, or its text does not parse).
  nlohmann::json Value() const;

 private:
  std::string text_;
  nlohmann::json value_;
};

// examples/<file>, parsed. A file that cannot be read or parsed fails the test (and gives null).
nlohmann::json ExampleJson(std::string_view file);

// examples/<file> with `patch` merged over it.
nlohmann::json ExampleWith(std::string_view file, const Patch& patch = {});
// The same, as compact JSON text (for tests that send the request as bytes).
std::string ExampleText(std::string_view file, const Patch& patch = {});

// The example with `patch` merged, as a request. A result the request message does not take fails
// the test.
v1::CreateHyperParameterTuningJobRequest TuningRequest(std::string_view file,
                                                       const Patch& patch = {});
v1::CreateTrainingJobRequest TrainingRequest(std::string_view file, const Patch& patch = {});

}  // namespace amt::testing

#endif  // AMT_TESTS_SUPPORT_REQUESTS_H_
