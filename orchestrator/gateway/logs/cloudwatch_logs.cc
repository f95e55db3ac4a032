#include "orchestrator/gateway/logs/cloudwatch_logs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "orchestrator/gateway/aws_json.h"
#include "orchestrator/gateway/logs/logs_request.h"

namespace amt::gateway {
namespace {

using logs::DecodeBody;
using logs::DescribeLogStreamsRequest;
using logs::EventToken;
using logs::FilterLogEventsRequest;
using logs::GetLogEventsRequest;
using logs::JobOfStream;
using logs::kMaxEvents;
using logs::kMaxStreams;
using logs::Members;
using logs::NoStream;
using logs::ParseToken;
using logs::Refusal;
using logs::StreamEvent;
using logs::Token;
using nlohmann::json;

constexpr std::string_view kTargetPrefix = "Logs_20140328.";
constexpr char kContentType[] = "application/x-amz-json-1.1";
constexpr int kPageLines = 1000;            // lines per read of the loop
constexpr size_t kMaxReplyBytes = 1 << 20;  // GetLogEvents: "up to 1 MB (up to 10,000 events)"

Refusal FromStatus(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kNotFound) {
    return {400, "ResourceNotFoundException", "The specified log stream does not exist."};
  }
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    return logs::InvalidParameter(std::string(status.message()));
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

// SageMaker's name of host `index` of a job: algo-1 .. algo-N.
std::string HostName(int index) { return "algo-" + std::to_string(index); }

int64_t Milliseconds(double epoch_seconds) {
  return static_cast<int64_t>(std::llround(epoch_seconds * 1000.0));
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

// The lines of `job` (of `host` only, when it is set) with sequence in [from, to) and timestamp
// in [start, end), ascending, read a page at a time; stops after `limit` events or
// kMaxReplyBytes.
absl::StatusOr<Events> ReadEvents(const api::SageMakerApi& api, const std::string& job,
                                  const std::string* host, int64_t from, int64_t to, int64_t start,
                                  int64_t end, int limit) {
  Events out;
  out.next = from;
  size_t bytes = 0;
  while (out.next < to) {
    v1::GetTrainingJobLogsRequest request;
    request.set_training_job_name(job);
    request.set_start_sequence(out.next);
    if (host != nullptr) request.set_host(*host);
    const int want = static_cast<int>(std::min<int64_t>(kPageLines, to - out.next));
    ASSIGN_OR_RETURN(const api::LogPage page, api.ReadTrainingJobLogs(request, want));
    for (const v1::LogLine& line : page.lines.lines()) {
      // One host's lines are read past `to` (their sequences are sparse): they wait for later.
      if (line.sequence() >= to) return out;
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

// A stream of a job: its name and the host whose lines it holds (null: every line, for a job of
// one instance, whose lines are all algo-1's).
struct HostStream {
  std::string name;
  std::string job;
  std::optional<std::string> host;
  const std::string* host_filter() const { return host ? &*host : nullptr; }
  friend bool operator<(const HostStream& a, const HostStream& b) { return a.name < b.name; }
  friend bool operator==(const HostStream& a, const HostStream& b) { return a.name == b.name; }
};

// The streams of `job` that exist (their host has printed a line), by host.
absl::StatusOr<std::vector<HostStream>> StreamsOf(const api::SageMakerApi& api,
                                                  const std::string& job,
                                                  const api::LogPage& bounds) {
  std::vector<HostStream> streams;
  if (bounds.log_length == 0) return streams;  // no stream until the first line
  if (bounds.instance_count <= 1) {
    streams.push_back({TrainingJobLogStream(job, bounds.creation_time), job, std::nullopt});
    return streams;
  }
  for (int i = 1; i <= bounds.instance_count; ++i) {
    HostStream stream{TrainingJobLogStream(job, bounds.creation_time, HostName(i)), job,
                      HostName(i)};
    ASSIGN_OR_RETURN(const Events first, ReadEvents(api, job, stream.host_filter(), 0,
                                                    bounds.log_length, 0, INT64_MAX, 1));
    if (!first.events.empty()) streams.push_back(std::move(stream));
  }
  return streams;
}

// One event as CloudWatch Logs prints it.
json EventJson(const Event& event) {
  return {{"timestamp", event.timestamp},
          {"message", event.message},
          {"ingestionTime", event.timestamp}};
}

bool MatchesAll(const std::string& message, const std::vector<std::string>& terms) {
  return std::all_of(terms.begin(), terms.end(), [&](const std::string& term) {
    return message.find(term) != std::string::npos;
  });
}

// A stable, unique id: the timestamp, the stream's hash (FNV-1a) and the position, in digits
// as CloudWatch Logs' event ids are.
std::string EventId(const StreamEvent& event) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : event.stream) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char id[64];
  std::snprintf(id, sizeof(id), "%020lld%020llu%020lld", static_cast<long long>(event.timestamp),
                static_cast<unsigned long long>(hash), static_cast<long long>(event.sequence));
  return id;
}

class Operations {
 public:
  Operations(const api::SageMakerApi& api, const ArnContext& arn) : api_(api), arn_(arn) {}

  std::variant<json, Refusal> GetLogEvents(const GetLogEventsRequest& in) const {
    const std::string* stream = &in.stream;
    const auto& [start_time, end_time, limit, from_head, token, position] =
        std::tie(in.start_time, in.end_time, in.limit, in.from_head, in.token, in.position);
    const auto job = JobOfStream(*stream);
    if (!job) return NoStream();
    absl::StatusOr<api::LogPage> bounds = LogBounds(api_, *job);
    if (!bounds.ok())
      return bounds.status().code() == absl::StatusCode::kInternal ? FromStatus(bounds.status())
                                                                   : NoStream();
    auto streams = StreamsOf(api_, *job, *bounds);
    if (!streams.ok()) return FromStatus(streams.status());
    const auto found = std::find_if(streams->begin(), streams->end(),
                                    [&](const HostStream& s) { return s.name == *stream; });
    if (found == streams->end()) return NoStream();
    const std::string* host = found->host_filter();
    const int64_t length = bounds->log_length;
    const int64_t start = start_time.value_or(0);
    const int64_t end = end_time.value_or(INT64_MAX);
    const int max = static_cast<int>(limit.value_or(kMaxEvents));

    // Forward from a token, or from the head; backward from a token, or from the tail.
    const bool forward = position ? position->first == 'f' : from_head.value_or(false);
    json reply = {{"events", json::array()}};
    if (forward) {
      const int64_t from = position ? std::min(position->second, length) : 0;
      auto read = ReadEvents(api_, *job, host, from, length, start, end, max);
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
      auto read = ReadEvents(api_, *job, host, from, before, start, end, max);
      if (!read.ok()) return FromStatus(read.status());
      for (const Event& event : read->events) reply["events"].push_back(EventJson(event));
      reply["nextForwardToken"] = Token('f', before);
      reply["nextBackwardToken"] = Token('b', from);
    }
    return reply;
  }

  std::variant<json, Refusal> FilterLogEvents(const FilterLogEventsRequest& in) const {
    const auto& [names, prefix, after] = std::tie(in.names, in.prefix, in.after);
    const int64_t start = in.start;
    const int64_t end = in.end;
    const size_t max = in.max;

    auto streams = StreamsToSearch(names, prefix.value_or(""));
    if (!streams.ok()) return FromStatus(streams.status());
    // The first max + 1 matching events after the token: max to return, one to know there are
    // more. Trimmed as it grows, so memory stays bounded by the page, not the log.
    std::vector<StreamEvent> found;
    for (const HostStream& stream : *streams) {
      int64_t next = 0;
      while (true) {
        v1::GetTrainingJobLogsRequest request;
        request.set_training_job_name(stream.job);
        request.set_start_sequence(next);
        if (stream.host) request.set_host(*stream.host);
        auto page = api_.ReadTrainingJobLogs(request, kPageLines);
        if (!page.ok()) return FromStatus(page.status());
        for (const v1::LogLine& line : page->lines.lines()) {
          next = line.sequence() + 1;
          StreamEvent event{Milliseconds(line.timestamp()), stream.name, line.sequence(), ""};
          if (event.timestamp < start || event.timestamp >= end) continue;
          if (after && !(*after < event)) continue;
          if (!MatchesAll(line.message(), in.terms)) continue;
          event.message = line.message();
          found.push_back(std::move(event));
          if (found.size() > 2 * (max + 1)) {
            std::nth_element(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(max),
                             found.end());
            found.resize(max + 1);
          }
        }
        if (!page->full) break;
      }
    }
    std::sort(found.begin(), found.end());
    json reply = {{"events", json::array()}};
    size_t bytes = 0;
    size_t taken = 0;
    while (taken < found.size() && taken < max && bytes < kMaxReplyBytes) {
      const StreamEvent& event = found[taken++];
      bytes += event.message.size() + 26;
      reply["events"].push_back({{"logStreamName", event.stream},
                                 {"timestamp", event.timestamp},
                                 {"message", event.message},
                                 {"ingestionTime", event.timestamp},
                                 {"eventId", EventId(event)}});
    }
    if (taken < found.size()) reply["nextToken"] = EventToken(found[taken - 1]);
    return reply;
  }

  std::variant<json, Refusal> DescribeLogStreams(const DescribeLogStreamsRequest& in) const {
    const auto& [prefix, by_last_event, limit, token] =
        std::tie(in.prefix, in.by_last_event, in.limit, in.token);
    auto streams = Streams(prefix.value_or(""));
    if (!streams.ok()) return FromStatus(streams.status());
    if (by_last_event) {
      std::stable_sort(streams->begin(), streams->end(), [](const json& a, const json& b) {
        return a.value("lastEventTimestamp", int64_t{0}) <
               b.value("lastEventTimestamp", int64_t{0});
      });
    }
    if (in.descending) std::reverse(streams->begin(), streams->end());
    // The token is the index of the next stream of this ordering.
    size_t from = 0;
    if (token) {
      const auto parsed = ParseToken(*token);
      if (!parsed || parsed->first != 'f') {
        return logs::InvalidParameter("The specified nextToken is invalid.");
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

  // The streams FilterLogEvents reads, sorted by name: those of `names` that exist (others are
  // skipped), or every stream whose name starts with `prefix`.
  absl::StatusOr<std::vector<HostStream>> StreamsToSearch(
      const std::optional<std::vector<std::string>>& names, const std::string& prefix) const {
    std::vector<std::string> jobs;
    if (names) {
      for (const std::string& name : *names) {
        if (const auto job = JobOfStream(name)) jobs.push_back(*job);
      }
    } else {
      ASSIGN_OR_RETURN(jobs, CandidateJobs(prefix));
    }
    std::vector<HostStream> streams;
    for (const std::string& job : jobs) {
      absl::StatusOr<api::LogPage> bounds = LogBounds(api_, job);
      if (bounds.status().code() == absl::StatusCode::kNotFound ||
          bounds.status().code() == absl::StatusCode::kInvalidArgument) {
        continue;  // gone, or a name no job can have
      }
      if (!bounds.ok()) return bounds.status();
      ASSIGN_OR_RETURN(std::vector<HostStream> of_job, StreamsOf(api_, job, *bounds));
      for (HostStream& stream : of_job) {
        if (names ? std::find(names->begin(), names->end(), stream.name) == names->end()
                  : !stream.name.starts_with(prefix)) {
          continue;
        }
        streams.push_back(std::move(stream));
      }
    }
    std::sort(streams.begin(), streams.end());
    streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
    return streams;
  }

  // The last line before `length` of `host` (every host's when null), read back a page at a time.
  absl::StatusOr<std::optional<Event>> LastEvent(const std::string& job, const std::string* host,
                                                 int64_t length) const {
    for (int64_t to = length; to > 0;) {
      const int64_t from = std::max<int64_t>(0, to - (host == nullptr ? 1 : kPageLines));
      std::optional<Event> last;
      for (int64_t at = from; at < to;) {
        ASSIGN_OR_RETURN(const Events read,
                         ReadEvents(api_, job, host, at, to, 0, INT64_MAX, kMaxEvents));
        if (!read.events.empty()) last = read.events.back();
        if (read.next <= at) break;  // nothing more in the window
        at = read.next;
      }
      if (last) return last;
      to = from;
    }
    return std::nullopt;
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
      ASSIGN_OR_RETURN(const std::vector<HostStream> of_job, StreamsOf(api_, job, *bounds));
      for (const HostStream& host_stream : of_job) {
        const std::string& name = host_stream.name;
        if (!name.starts_with(prefix)) continue;
        const std::string* host = host_stream.host_filter();
        ASSIGN_OR_RETURN(const Events first,
                         ReadEvents(api_, job, host, 0, bounds->log_length, 0, INT64_MAX, 1));
        ASSIGN_OR_RETURN(const std::optional<Event> last, LastEvent(job, host, bounds->log_length));
        json stream = {{"logStreamName", name},
                       {"creationTime", Milliseconds(bounds->creation_time)},
                       {"arn", StreamArn(name)},
                       {"storedBytes", 0}};
        if (!first.events.empty()) stream["firstEventTimestamp"] = first.events[0].timestamp;
        if (last) {
          stream["lastEventTimestamp"] = last->timestamp;
          stream["lastIngestionTime"] = last->timestamp;
        }
        streams.push_back(std::move(stream));
      }
    }
    std::sort(streams.begin(), streams.end(), [](const json& a, const json& b) {
      return a["logStreamName"].get<std::string>() < b["logStreamName"].get<std::string>();
    });
    return streams;
  }

  const api::SageMakerApi& api_;
  const ArnContext& arn_;
};

// Decodes the operation's request, then answers it.
template <typename Request, typename Answer>
std::variant<json, Refusal> Serve(const Members& in,
                                  std::variant<Request, Refusal> (*decode)(const Members&),
                                  Answer answer) {
  std::variant<Request, Refusal> request = decode(in);
  if (const Refusal* refusal = std::get_if<Refusal>(&request)) return *refusal;
  return answer(std::get<Request>(request));
}

}  // namespace

std::string TrainingJobLogStream(std::string_view training_job_name, double creation_time,
                                 std::string_view host) {
  return std::string(training_job_name) + "/" + std::string(host) + "-" +
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
  std::variant<Members, Refusal> body = DecodeBody(request.body);
  if (const Refusal* bad = std::get_if<Refusal>(&body)) {
    response = ErrorReply(*bad);
  } else {
    const Operations operations(api_, arn_context_);
    const Members& members = std::get<Members>(body);
    std::optional<std::variant<json, Refusal>> result;
    if (operation == "GetLogEvents") {
      result = Serve(members, &logs::DecodeGetLogEvents,
                     [&](const GetLogEventsRequest& r) { return operations.GetLogEvents(r); });
    } else if (operation == "DescribeLogStreams") {
      result = Serve(
          members, &logs::DecodeDescribeLogStreams,
          [&](const DescribeLogStreamsRequest& r) { return operations.DescribeLogStreams(r); });
    } else if (operation == "FilterLogEvents") {
      result = Serve(members, &logs::DecodeFilterLogEvents, [&](const FilterLogEventsRequest& r) {
        return operations.FilterLogEvents(r);
      });
    }
    if (!result) {
      response = ErrorReply({400, "UnknownOperationException",
                             "amt-local serves GetLogEvents, DescribeLogStreams and "
                             "FilterLogEvents of CloudWatch Logs, not " +
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
