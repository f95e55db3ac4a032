// Tags of tuning and training jobs (AddTags, ListTags, DeleteTags): pure functions over a
// record's tag list, and the job an ARN names.
//
// SageMaker: a tag key is unique per resource and AddTags overwrites its value; a resource has at
// most 50 tags; tags added to a tuning job reach the training jobs it launches afterwards, not
// those it launched before (the launch copies the tuning job's tags: job_builder.h).
#ifndef AMT_ORCHESTRATOR_CORE_TAGS_H_
#define AMT_ORCHESTRATOR_CORE_TAGS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "amt/v1/tuning.pb.h"

namespace amt::core {

using TagList = google::protobuf::RepeatedPtrField<v1::Tag>;

inline constexpr int kMaxTagsPerResource = 50;

// What an ARN of amtd's names: a training job, a tuning job, or something else (kind kNone).
struct TaggedResource {
  enum class Kind { kNone, kTrainingJob, kTuningJob } kind = Kind::kNone;
  std::string name;  // the job's name as the ARN spells it
};
TaggedResource ResourceOfArn(std::string_view arn);

// `tags` with `added` merged in: a key already present takes the new value, in its place; new
// keys are appended in order. ValidationException, and `tags` unchanged, when the result would
// have more than 50 tags.
absl::Status AddTags(TagList& tags, const TagList& added);

// Removes the tags whose key is in `keys` (absent keys are ignored, as SageMaker does).
void DeleteTags(TagList& tags, const google::protobuf::RepeatedPtrField<std::string>& keys);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_TAGS_H_
