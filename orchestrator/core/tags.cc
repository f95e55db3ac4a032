#include "orchestrator/core/tags.h"

#include <algorithm>

#include "common/errors.h"

namespace amt::core {

TaggedResource ResourceOfArn(std::string_view arn) {
  // arn:aws:sagemaker:<region>:<account>:<type>/<name>
  const size_t colon = arn.rfind(':');
  if (colon == std::string_view::npos) return {};
  const std::string_view resource = arn.substr(colon + 1);
  const size_t slash = resource.find('/');
  if (slash == std::string_view::npos || slash + 1 == resource.size()) return {};
  const std::string_view type = resource.substr(0, slash);
  const std::string name(resource.substr(slash + 1));
  if (type == "training-job") return {TaggedResource::Kind::kTrainingJob, name};
  if (type == "hyper-parameter-tuning-job") return {TaggedResource::Kind::kTuningJob, name};
  return {};
}

absl::Status AddTags(TagList& tags, const TagList& added) {
  TagList merged = tags;
  for (const v1::Tag& tag : added) {
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const v1::Tag& t) { return t.key() == tag.key(); });
    if (same != merged.end()) {
      same->set_value(tag.value());
    } else {
      *merged.Add() = tag;
    }
  }
  if (merged.size() > kMaxTagsPerResource) {
    // Our wording; SageMaker's text for this case is UNCONFIRMED.
    return ValidationError("The resource would have " + std::to_string(merged.size()) +
                           " tags; a resource can have at most " +
                           std::to_string(kMaxTagsPerResource) + ".");
  }
  tags = std::move(merged);
  return absl::OkStatus();
}

void DeleteTags(TagList& tags, const google::protobuf::RepeatedPtrField<std::string>& keys) {
  TagList kept;
  for (const v1::Tag& tag : tags) {
    if (std::find(keys.begin(), keys.end(), tag.key()) == keys.end()) *kept.Add() = tag;
  }
  tags = std::move(kept);
}

}  // namespace amt::core
