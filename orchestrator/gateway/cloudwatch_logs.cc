#include "orchestrator/gateway/cloudwatch_logs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "common/errors.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"
#include "orchestrator/gateway/aws_json.h"

namespace amt::gateway {
namespace {

using nlohmann::json;

constexpr std::string_view kTargetPrefix = "Logs_20140328.";
constexpr char kContentType[] = "application/x-amz-json-1.1";
constexpr int kPageLines = 1000;            // lines per read of the loop
constexpr size_t kMaxReplyBytes = 1 << 20;  // GetLogEvents: "up to 1 MB (up to 10,000 events)"
constexpr int kMaxEvents = 10'000;
constexpr int kMaxStreams = 50;

// A request's refusal, in CloudWatch Logs' names.
struct Refusal {
  int status;
  std::string name;
  std::string message;
};

Refusal InvalidParameter(std::string message) {
  return {400, "InvalidParameterException", std::move(message)};
}

Refusal FromStatus(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kNotFound) {
    return {400, "ResourceNotFoundException", "The specified log stream does not exist."};
  }
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    return InvalidParameter(std::string(status.message()));
  }
  return {503, "ServiceUnavailableException", std::string(status.message())};
}

HttpResponse Reply(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = kContentType;
  response.body = std::move(body);
  return response;
}

HttpResponse ErrorReply(const Refusal& refusal) {
  return Reply(refusal.status, AwsErrorBody(refusal.name, refusal.message));
}

// The members of a request body, read with their types checked.
class Members {
 public:
  explicit Members(json body) : body_(std::move(body)) {}

  std::optional<std::string> String(const char* name, std::optional<Refusal>* refusal) const {
    const auto it = body_.find(name);
    if (it == body_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) {
      *refusal = Wrong(name, "a string");
      return std::nullopt;
    }
    return it->get<std::string>();
  }
  std::optional<int64_t> Integer(const char* name, std::optional<Refusal>* refusal) const {
    const auto it = body_.find(name);
    if (it == body_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer()) {
      *refusal = Wrong(name, "an integer");
      return std::nullopt;
    }
    return it->get<int64_t>();
  }
  std::optional<bool> Boolean(const char* name, std::optional<Refusal>* refusal) const {
    const auto it = body_.find(name);
    if (it == body_.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) {
      *refusal = Wrong(name, "a boolean");
      return std::nullopt;
    }
    return it->get<bool>();
  }

 private:
  static Refusal Wrong(const char* name, const char* type) {
    return {400, "SerializationException",
            std::string("The member ") + name + " must be " + type + "."};
  }
  json body_;
};

// A training job's name from its stream's name: "<job>/algo-1-<seconds>".
std::optional<std::string> JobOfStream(std::string_view stream) {
  const size_t slash = stream.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  return std::string(stream.substr(0, slash));
}

int64_t Milliseconds(double epoch_seconds) {
  return static_cast<int64_t>(std::llround(epoch_seconds * 1000.0));
}

std::string Token(char direction, int64_t sequence) {
  char text[32];
  std::snprintf(text, sizeof(text), "%c/%020lld", direction, static_cast<long long>(sequence));
  return text;
}

// "f/<n>" or "b/<n>": the direction and the sequence; nullopt when it is neither.
std::optional<std::pair<char, int64_t>> ParseToken(std::string_view token) {
  if (token.size() < 3 || (token[0] != 'f' && token[0] != 'b') || token[1] != '/') {
    return std::nullopt;
  }
  int64_t sequence = 0;
  const auto [end, error] =
      std::from_chars(token.data() + 2, token.data() + token.size(), sequence);
  if (error != std::errc() || end != token.data() + token.size() || sequence < 0) {
    return std::nullopt;
  }
  return std::make_pair(token[0], sequence);
}

struct Event {
  int64_t sequence;
  int64_t timestamp;
  std::string message;
};

struct Events {
  std::vector<Event> events;
  int64_t next = 0;  // the sequence after the last line looked at
};

// The lines of `job` with sequence in [from, to) and timestamp in [start, end), ascending, read
// a page at a time; stops after `limit` events or kMaxReplyBytes.
absl::StatusOr<Events> ReadEvents(const api::SageMakerApi& api, const std::string& job,
                                  int64_t from, int64_t to, int64_t start, int64_t end, int limit) {
  Events out;
  out.next = from;
  size_t bytes = 0;
  while (out.next < to) {
    v1::GetTrainingJobLogsRequest request;
    request.set_training_job_name(job);
    request.set_start_sequence(out.next);
    const int want = static_cast<int>(std::min<int64_t>(kPageLines, to - out.next));
    ASSIGN_OR_RETURN(const api::LogPage page, api.ReadTrainingJobLogs(request, want));
    for (const v1::LogLine& line : page.lines.lines()) {
      out.next = line.sequence() + 1;
      const int64_t timestamp = Milliseconds(line.timestamp());
      if (timestamp < start || timestamp >= end) continue;
      bytes += line.message().size() + 26;  // CloudWatch counts 26 bytes per event
      out.events.push_back({line.sequence(), timestamp, line.message()});
      if (static_cast<int>(out.events.size()) >= limit || bytes >= kMaxReplyBytes) return out;
    }
    if (page.lines.lines_size() < want) break;  // nothing more yet
  }
  return out;
}

// The job's log length and creation time, NotFound when there is no such job.
absl::StatusOr<api::LogPage> LogBounds(const api::SageMakerApi& api, const std::string& job) {
  v1::GetTrainingJobLogsRequest request;
  request.set_training_job_name(job);
  return api.ReadTrainingJobLogs(request, 0);
}

// One event as CloudWatch Logs prints it.
json EventJson(const Event& event) {
  return {{"timestamp", event.timestamp},
          {"message", event.message},
          {"ingestionTime", event.timestamp}};
}

class Operations {
 public:
  Operations(const api::SageMakerApi& api, const ArnContext& arn) : api_(api), arn_(arn) {}

  std::variant<json, Refusal> GetLogEvents(const Members& in) const {
    std::optional<Refusal> refusal;
    const auto group = in.String("logGroupName", &refusal);
    const auto stream = in.String("logStreamName", &refusal);
    const auto start_time = in.Integer("startTime", &refusal);
    const auto end_time = in.Integer("endTime", &refusal);
    const auto limit = in.Integer("limit", &refusal);
    const auto from_head = in.Boolean("startFromHead", &refusal);
    const auto token = in.String("nextToken", &refusal);
    if (refusal) return *refusal;
    if (auto missing = Required(group, "logGroupName")) return *missing;
    if (auto missing = Required(stream, "logStreamName")) return *missing;
    if (*group != kTrainingJobsLogGroup) return NoGroup();
    if (limit && (*limit < 1 || *limit > kMaxEvents)) {
      return InvalidParameter("1 validation error detected: Value '" + std::to_string(*limit) +
                              "' at 'limit' failed to satisfy constraint: Member must have "
                              "value between 1 and 10000");
    }
    std::optional<std::pair<char, int64_t>> position;
    if (token) {
      position = ParseToken(*token);
      if (!position) return InvalidParameter("The specified nextToken is invalid.");
    }
    const auto job = JobOfStream(*stream);
    if (!job) return NoStream();
    absl::StatusOr<api::LogPage> bounds = LogBounds(api_, *job);
    if (!bounds.ok())
      return bounds.status().code() == absl::StatusCode::kInternal ? FromStatus(bounds.status())
                                                                   : NoStream();
    if (*stream != TrainingJobLogStream(*job, bounds->creation_time) || bounds->log_length == 0) {
      return NoStream();
    }
    const int64_t length = bounds->log_length;
    const int64_t start = start_time.value_or(0);
    const int64_t end = end_time.value_or(INT64_MAX);
    const int max = static_cast<int>(limit.value_or(kMaxEvents));

    // Forward from a token, or from the head; backward from a token, or from the tail.
    const bool forward = position ? position->first == 'f' : from_head.value_or(false);
    json reply = {{"events", json::array()}};
    if (forward) {
      const int64_t from = position ? std::min(position->second, length) : 0;
      auto read = ReadEvents(api_, *job, from, length, start, end, max);
      if (!read.ok()) return FromStatus(read.status());
      for (const Event& event : read->events) reply["events"].push_back(EventJson(event));
      // A forward read that found nothing hands its own token back: that is the end.
      reply["nextForwardToken"] = read->next == from && token ? *token : Token('f', read->next);
      reply["nextBackwardToken"] =
          Token('b', read->events.empty() ? from : read->events.front().sequence);
    } else {
      // The `max` lines just before the token (or the end), those of them in the time window.
      const int64_t before = position ? std::min(position->second, length) : length;
      const int64_t from = std::max<int64_t>(0, before - max);
      auto read = ReadEvents(api_, *job, from, before, start, end, max);
      if (!read.ok()) return FromStatus(read.status());
      for (const Event& event : read->events) reply["events"].push_back(EventJson(event));
      reply["nextForwardToken"] = Token('f', before);
      reply["nextBackwardToken"] = Token('b', from);
    }
    return reply;
  }

  std::variant<json, Refusal> DescribeLogStreams(const Members& in) const {
    std::optional<Refusal> refusal;
    const auto group = in.String("logGroupName", &refusal);
    const auto group_arn = in.String("logGroupIdentifier", &refusal);
    const auto prefix = in.String("logStreamNamePrefix", &refusal);
    const auto order_by = in.String("orderBy", &refusal);
    const auto descending = in.Boolean("descending", &refusal);
    const auto limit = in.Integer("limit", &refusal);
    const auto token = in.String("nextToken", &refusal);
    if (refusal) return *refusal;
    const std::string group_name = group       ? *group
                                   : group_arn ? GroupOfIdentifier(*group_arn)
                                               : std::string();
    if (group_name.empty()) {
      return InvalidParameter("Either logGroupName or logGroupIdentifier must be specified.");
    }
    if (group_name != kTrainingJobsLogGroup) return NoGroup();
    if (order_by && *order_by != "LogStreamName" && *order_by != "LastEventTime") {
      return InvalidParameter("1 validation error detected: Value '" + *order_by +
                              "' at 'orderBy' failed to satisfy constraint: Member must satisfy "
                              "enum value set: [LogStreamName, LastEventTime]");
    }
    const bool by_last_event = order_by && *order_by == "LastEventTime";
    if (by_last_event && prefix) {
      return InvalidParameter("Cannot order by LastEventTime with a logStreamNamePrefix.");
    }
    if (limit && (*limit < 1 || *limit > kMaxStreams)) {
      return InvalidParameter("1 validation error detected: Value '" + std::to_string(*limit) +
                              "' at 'limit' failed to satisfy constraint: Member must have "
                              "value between 1 and 50");
    }
    auto streams = Streams(prefix.value_or(""));
    if (!streams.ok()) return FromStatus(streams.status());
    if (by_last_event) {
      std::stable_sort(streams->begin(), streams->end(), [](const json& a, const json& b) {
        return a.value("lastEventTimestamp", int64_t{0}) <
               b.value("lastEventTimestamp", int64_t{0});
      });
    }
    if (descending.value_or(false)) std::reverse(streams->begin(), streams->end());
    // The token is the index of the next stream of this ordering.
    size_t from = 0;
    if (token) {
      const auto parsed = ParseToken(*token);
      if (!parsed || parsed->first != 'f') {
        return InvalidParameter("The specified nextToken is invalid.");
      }
      from = static_cast<size_t>(parsed->second);
    }
    const size_t count = static_cast<size_t>(limit.value_or(kMaxStreams));
    json reply = {{"logStreams", json::array()}};
    for (size_t i = from; i < streams->size() && i < from + count; ++i) {
      reply["logStreams"].push_back((*streams)[i]);
    }
    if (from + count < streams->size()) {
      reply["nextToken"] = Token('f', static_cast<int64_t>(from + count));
    }
    return reply;
  }

 private:
  static Refusal NoGroup() {
    return {400, "ResourceNotFoundException", "The specified log group does not exist."};
  }
  static Refusal NoStream() {
    return {400, "ResourceNotFoundException", "The specified log stream does not exist."};
  }
  static std::optional<Refusal> Required(const std::optional<std::string>& value,
                                         const char* name) {
    if (value) return std::nullopt;
    return InvalidParameter(std::string("1 validation error detected: Value null at '") + name +
                            "' failed to satisfy constraint: Member must not be null");
  }
  // "arn:aws:logs:<region>:<account>:log-group:<name>" or a plain name.
  static std::string GroupOfIdentifier(const std::string& identifier) {
    constexpr std::string_view kMarker = ":log-group:";
    const size_t at = identifier.find(kMarker);
    if (at == std::string::npos) return identifier;
    std::string name = identifier.substr(at + kMarker.size());
    if (name.ends_with(":*")) name.resize(name.size() - 2);
    return name;
  }

  std::string StreamArn(const std::string& stream) const {
    return "arn:aws:logs:" + arn_.region + ":" + arn_.account +
           ":log-group:" + std::string(kTrainingJobsLogGroup) + ":log-stream:" + stream;
  }

  // The names of training jobs whose stream may start with `prefix`.
  absl::StatusOr<std::vector<std::string>> CandidateJobs(const std::string& prefix) const {
    if (const auto job = JobOfStream(prefix)) return std::vector<std::string>{*job};
    std::vector<std::string> names;
    v1::ListTrainingJobsRequest request;
    request.set_max_results(100);
    request.set_sort_by("Name");
    request.set_sort_order("Ascending");
    // NameContains takes [a-zA-Z0-9-]+; a prefix with anything else names no training job.
    if (!prefix.empty()) {
      if (!std::all_of(prefix.begin(), prefix.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
          })) {
        return names;
      }
      request.set_name_contains(prefix);
    }
    while (true) {
      ASSIGN_OR_RETURN(const v1::ListTrainingJobsResponse page, api_.ListTrainingJobs(request));
      for (const auto& summary : page.training_job_summaries()) {
        if (summary.training_job_name().starts_with(prefix)) {
          names.push_back(summary.training_job_name());
        }
      }
      if (!page.has_next_token() || page.next_token().empty()) break;
      request.set_next_token(page.next_token());
    }
    return names;
  }

  // Every stream whose name starts with `prefix`, sorted by name.
  absl::StatusOr<std::vector<json>> Streams(const std::string& prefix) const {
    ASSIGN_OR_RETURN(const std::vector<std::string> jobs, CandidateJobs(prefix));
    std::vector<json> streams;
    for (const std::string& job : jobs) {
      absl::StatusOr<api::LogPage> bounds = LogBounds(api_, job);
      if (bounds.status().code() == absl::StatusCode::kNotFound ||
          bounds.status().code() == absl::StatusCode::kInvalidArgument) {
        continue;  // gone, or a name no job can have
      }
      if (!bounds.ok()) return bounds.status();
      if (bounds->log_length == 0) continue;  // no stream until the first line
      const std::string name = TrainingJobLogStream(job, bounds->creation_time);
      if (!name.starts_with(prefix)) continue;
      ASSIGN_OR_RETURN(const Events first, ReadEvents(api_, job, 0, 1, 0, INT64_MAX, 1));
      ASSIGN_OR_RETURN(const Events last, ReadEvents(api_, job, bounds->log_length - 1,
                                                     bounds->log_length, 0, INT64_MAX, 1));
      json stream = {{"logStreamName", name},
                     {"creationTime", Milliseconds(bounds->creation_time)},
                     {"arn", StreamArn(name)},
                     {"storedBytes", 0}};
      if (!first.events.empty()) stream["firstEventTimestamp"] = first.events[0].timestamp;
      if (!last.events.empty()) {
        stream["lastEventTimestamp"] = last.events[0].timestamp;
        stream["lastIngestionTime"] = last.events[0].timestamp;
      }
      streams.push_back(std::move(stream));
    }
    std::sort(streams.begin(), streams.end(), [](const json& a, const json& b) {
      return a["logStreamName"].get<std::string>() < b["logStreamName"].get<std::string>();
    });
    return streams;
  }

  const api::SageMakerApi& api_;
  const ArnContext& arn_;
};

}  // namespace

std::string TrainingJobLogStream(std::string_view training_job_name, double creation_time) {
  return std::string(training_job_name) + "/algo-1-" +
         std::to_string(static_cast<int64_t>(std::floor(creation_time)));
}

CloudWatchLogsHandler::CloudWatchLogsHandler(const api::SageMakerApi& api, ArnContext arn_context)
    : api_(api), arn_context_(std::move(arn_context)) {}

std::string_view CloudWatchLogsHandler::Description() const {
  return "CloudWatch Logs' AWS JSON 1.1 API, training jobs' logs (POST / with X-Amz-Target: "
         "Logs_20140328.<Operation>)";
}

bool CloudWatchLogsHandler::Accepts(const HttpRequest& request) const {
  const std::string* target = request.Header("x-amz-target");
  return request.method == "POST" && target != nullptr && target->starts_with(kTargetPrefix);
}

HttpResponse CloudWatchLogsHandler::Handle(const HttpRequest& request) const {
  const std::string operation = request.Header("x-amz-target")->substr(kTargetPrefix.size());
  HttpResponse response;
  std::optional<json> body;
  if (const auto bad = InvalidUtf8Offset(request.body); bad.has_value()) {
    response = ErrorReply({400, "SerializationException", "The request body is not valid UTF-8."});
  } else {
    body =
        json::parse(request.body.empty() ? std::string_view("{}") : std::string_view(request.body),
                    nullptr, /*allow_exceptions=*/false);
    if (body->is_discarded() || !body->is_object()) {
      body.reset();
      response =
          ErrorReply({400, "SerializationException", "The request body must be a JSON object."});
    }
  }
  if (body) {
    const Operations operations(api_, arn_context_);
    const Members members(*std::move(body));
    std::optional<std::variant<json, Refusal>> result;
    if (operation == "GetLogEvents") {
      result = operations.GetLogEvents(members);
    } else if (operation == "DescribeLogStreams") {
      result = operations.DescribeLogStreams(members);
    }
    if (!result) {
      response = ErrorReply({400, "UnknownOperationException",
                             "amt-local serves GetLogEvents and DescribeLogStreams of CloudWatch "
                             "Logs, not " +
                                 operation + "."});
    } else if (const Refusal* refusal = std::get_if<Refusal>(&*result)) {
      response = ErrorReply(*refusal);
    } else {
      response =
          Reply(200, std::get<json>(*result).dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

HttpResponse CloudWatchLogsHandler::BodyTooLarge(const HttpRequest& request,
                                                 size_t limit_bytes) const {
  HttpResponse response = ErrorReply(
      {413, "SerializationException",
       "The request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes."});
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

}  // namespace amt::gateway
