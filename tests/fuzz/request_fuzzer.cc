// A SageMaker request body, as the AWS JSON handler takes it: UTF-8 check, JSON -> proto, the
// operation's validation, and back to JSON. The first byte picks the operation. Nothing may
// crash, and a request that decodes must print and decode again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "amt/v1/tuning.pb.h"
#include "common/json.h"
#include "common/utf8.h"
#include "orchestrator/validation/validation.h"

namespace {

template <typename Request, typename Validate>
void Exercise(std::string_view body, Validate validate) {
  Request request;
  if (!amt::JsonToProto(body, &request).ok()) return;
  (void)validate(request);
  const std::string printed = amt::ProtoToAwsJson(request);
  Request again;
  if (!amt::JsonToProto(printed, &again).ok()) __builtin_trap();  // our own output must parse
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (amt::InvalidUtf8Offset(body).has_value()) {
    (void)amt::ReplaceInvalidUtf8(body);  // the error message path
    return 0;
  }
  switch (data[0] % 4) {
    case 0:
      Exercise<amt::v1::CreateHyperParameterTuningJobRequest>(body, [](const auto& r) {
        if (amt::validation::ValidateCreateHyperParameterTuningJob(r).ok()) {
          (void)amt::validation::GridCombinations(
              r.hyper_parameter_tuning_job_config().parameter_ranges());
          (void)amt::validation::HyperbandMaxResource(r);
        }
        return 0;
      });
      break;
    case 1:
      Exercise<amt::v1::CreateTrainingJobRequest>(
          body, [](const auto& r) { return amt::validation::ValidateCreateTrainingJob(r).ok(); });
      break;
    case 2:
      Exercise<amt::v1::ListTrainingJobsRequest>(
          body, [](const auto& r) { return amt::validation::ValidateListTrainingJobs(r).ok(); });
      break;
    default:
      Exercise<amt::v1::ListHyperParameterTuningJobsRequest>(body, [](const auto& r) {
        return amt::validation::ValidateListHyperParameterTuningJobs(r).ok();
      });
      break;
  }
  return 0;
}
