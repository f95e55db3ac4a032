#include "orchestrator/gateway/logs/logs_request.h"

#include <charconv>
#include <cstdio>
#include <limits>
#include <tuple>
#include <utility>

#include "common/utf8.h"
#include "orchestrator/gateway/logs/cloudwatch_logs.h"

namespace amt::gateway::logs {
namespace {

using nlohmann::json;

// The group a request names (logGroupName, else logGroupIdentifier) must be the training
// jobs' one.
std::string GroupOfIdentifier(const std::string& identifier);

std::optional<Refusal> CheckGroup(const std::optional<std::string>& group,
                                  const std::optional<std::string>& group_arn) {
  const std::string group_name = group       ? *group
                                 : group_arn ? GroupOfIdentifier(*group_arn)
                                             : std::string();
  if (group_name.empty()) {
    return InvalidParameter("Either logGroupName or logGroupIdentifier must be specified.");
  }
  if (group_name != kTrainingJobsLogGroup) return NoGroup();
  return std::nullopt;
}

std::optional<Refusal> Required(const std::optional<std::string>& value, const char* name) {
  if (value) return std::nullopt;
  return InvalidParameter(std::string("1 validation error detected: Value null at '") + name +
                          "' failed to satisfy constraint: Member must not be null");
}

// "arn:aws:logs:<region>:<account>:log-group:<name>" or a plain name.
std::string GroupOfIdentifier(const std::string& identifier) {
  constexpr std::string_view kMarker = ":log-group:";
  const size_t at = identifier.find(kMarker);
  if (at == std::string::npos) return identifier;
  std::string name = identifier.substr(at + kMarker.size());
  if (name.ends_with(":*")) name.resize(name.size() - 2);
  return name;
}

Refusal BadLimit(int64_t limit, std::string_view range) {
  return InvalidParameter("1 validation error detected: Value '" + std::to_string(limit) +
                          "' at 'limit' failed to satisfy constraint: Member must have "
                          "value between " +
                          std::string(range));
}

}  // namespace

Refusal InvalidParameter(std::string message) {
  return {400, "InvalidParameterException", std::move(message)};
}

Refusal NoGroup() {
  return {400, "ResourceNotFoundException", "The specified log group does not exist."};
}

Refusal NoStream() {
  return {400, "ResourceNotFoundException", "The specified log stream does not exist."};
}

std::optional<std::string> Members::String(const char* name,
                                           std::optional<Refusal>* refusal) const {
  const auto it = body_.find(name);
  if (it == body_.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    *refusal = Wrong(name, "a string");
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::optional<int64_t> Members::Integer(const char* name, std::optional<Refusal>* refusal) const {
  const auto it = body_.find(name);
  if (it == body_.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) {
    *refusal = Wrong(name, "an integer");
    return std::nullopt;
  }
  return it->get<int64_t>();
}

std::optional<bool> Members::Boolean(const char* name, std::optional<Refusal>* refusal) const {
  const auto it = body_.find(name);
  if (it == body_.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) {
    *refusal = Wrong(name, "a boolean");
    return std::nullopt;
  }
  return it->get<bool>();
}

std::optional<std::vector<std::string>> Members::StringList(const char* name,
                                                            std::optional<Refusal>* refusal) const {
  const auto it = body_.find(name);
  if (it == body_.end() || it->is_null()) return std::nullopt;
  std::vector<std::string> items;
  if (it->is_array()) {
    for (const json& item : *it) {
      if (!item.is_string()) break;
      items.push_back(item.get<std::string>());
    }
  }
  if (!it->is_array() || items.size() != it->size()) {
    *refusal = Wrong(name, "a list of strings");
    return std::nullopt;
  }
  return items;
}

Refusal Members::Wrong(const char* name, const char* type) {
  return {400, "SerializationException",
          std::string("The member ") + name + " must be " + type + "."};
}

std::variant<Members, Refusal> DecodeBody(std::string_view body) {
  if (const auto bad = InvalidUtf8Offset(body); bad.has_value()) {
    return Refusal{400, "SerializationException", "The request body is not valid UTF-8."};
  }
  json parsed = json::parse(body.empty() ? std::string_view("{}") : body, nullptr,
                            /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Refusal{400, "SerializationException", "The request body must be a JSON object."};
  }
  return Members(std::move(parsed));
}

std::optional<std::string> JobOfStream(std::string_view stream) {
  const size_t slash = stream.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  return std::string(stream.substr(0, slash));
}

std::string Token(char direction, int64_t sequence) {
  char text[32];
  std::snprintf(text, sizeof(text), "%c/%020lld", direction, static_cast<long long>(sequence));
  return text;
}

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

bool StreamEvent::operator<(const StreamEvent& other) const {
  return std::tie(timestamp, stream, sequence) <
         std::tie(other.timestamp, other.stream, other.sequence);
}

std::string EventToken(const StreamEvent& event) {
  return "e/" + std::to_string(event.timestamp) + "/" + std::to_string(event.sequence) + "/" +
         event.stream;
}

std::optional<StreamEvent> ParseEventToken(std::string_view token) {
  if (!token.starts_with("e/")) return std::nullopt;
  token.remove_prefix(2);
  StreamEvent event{};
  for (int64_t* field : {&event.timestamp, &event.sequence}) {
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), *field);
    if (error != std::errc() || end == token.data() + token.size() || *end != '/') {
      return std::nullopt;
    }
    token.remove_prefix(static_cast<size_t>(end - token.data()) + 1);
  }
  if (token.empty()) return std::nullopt;
  event.stream = std::string(token);
  return event;
}

std::variant<std::vector<std::string>, Refusal> ParseFilterPattern(std::string_view pattern) {
  std::vector<std::string> terms;
  size_t at = 0;
  auto unsupported = [](std::string_view what) {
    return InvalidParameter(
        "amt-local supports filter patterns of plain terms and quoted phrases only, not '" +
        std::string(what) +
        "' (JSON {...}, space-delimited [...], ?term, -term and %regex% patterns are not "
        "supported).");
  };
  while (at < pattern.size()) {
    if (pattern[at] == ' ' || pattern[at] == '\t') {
      ++at;
      continue;
    }
    const char c = pattern[at];
    if (c == '{' || c == '[' || c == '?' || c == '-' || c == '%') {
      return unsupported(pattern.substr(at));
    }
    if (c == '"') {
      const size_t close = pattern.find('"', at + 1);
      if (close == std::string_view::npos) {
        return InvalidParameter("Invalid filter pattern: the quoted phrase '" +
                                std::string(pattern.substr(at)) + "' is not closed.");
      }
      if (close > at + 1) terms.emplace_back(pattern.substr(at + 1, close - at - 1));
      at = close + 1;
      continue;
    }
    const size_t end = pattern.find_first_of(" \t", at);
    const std::string_view term =
        pattern.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (term.find_first_of("{}[]\"") != std::string_view::npos) return unsupported(term);
    terms.emplace_back(term);
    at = end == std::string_view::npos ? pattern.size() : end;
  }
  return terms;
}

std::variant<GetLogEventsRequest, Refusal> DecodeGetLogEvents(const Members& in) {
  GetLogEventsRequest request;
  std::optional<Refusal> refusal;
  const auto group = in.String("logGroupName", &refusal);
  const auto stream = in.String("logStreamName", &refusal);
  request.start_time = in.Integer("startTime", &refusal);
  request.end_time = in.Integer("endTime", &refusal);
  request.limit = in.Integer("limit", &refusal);
  request.from_head = in.Boolean("startFromHead", &refusal);
  request.token = in.String("nextToken", &refusal);
  if (refusal) return *refusal;
  if (auto missing = Required(group, "logGroupName")) return *missing;
  if (auto missing = Required(stream, "logStreamName")) return *missing;
  if (*group != kTrainingJobsLogGroup) return NoGroup();
  if (request.limit && (*request.limit < 1 || *request.limit > kMaxEvents)) {
    return BadLimit(*request.limit, "1 and 10000");
  }
  if (request.token) {
    request.position = ParseToken(*request.token);
    if (!request.position) return InvalidParameter("The specified nextToken is invalid.");
  }
  request.stream = *stream;
  return request;
}

std::variant<DescribeLogStreamsRequest, Refusal> DecodeDescribeLogStreams(const Members& in) {
  DescribeLogStreamsRequest request;
  std::optional<Refusal> refusal;
  const auto group = in.String("logGroupName", &refusal);
  const auto group_arn = in.String("logGroupIdentifier", &refusal);
  request.prefix = in.String("logStreamNamePrefix", &refusal);
  const auto order_by = in.String("orderBy", &refusal);
  const auto descending = in.Boolean("descending", &refusal);
  request.limit = in.Integer("limit", &refusal);
  request.token = in.String("nextToken", &refusal);
  if (refusal) return *refusal;
  if (auto refused = CheckGroup(group, group_arn)) return *refused;
  if (order_by && *order_by != "LogStreamName" && *order_by != "LastEventTime") {
    return InvalidParameter("1 validation error detected: Value '" + *order_by +
                            "' at 'orderBy' failed to satisfy constraint: Member must satisfy "
                            "enum value set: [LogStreamName, LastEventTime]");
  }
  request.by_last_event = order_by && *order_by == "LastEventTime";
  if (request.by_last_event && request.prefix) {
    return InvalidParameter("Cannot order by LastEventTime with a logStreamNamePrefix.");
  }
  if (request.limit && (*request.limit < 1 || *request.limit > kMaxStreams)) {
    return BadLimit(*request.limit, "1 and 50");
  }
  request.descending = descending.value_or(false);
  return request;
}

std::variant<FilterLogEventsRequest, Refusal> DecodeFilterLogEvents(const Members& in) {
  FilterLogEventsRequest request;
  std::optional<Refusal> refusal;
  const auto group = in.String("logGroupName", &refusal);
  const auto group_arn = in.String("logGroupIdentifier", &refusal);
  request.names = in.StringList("logStreamNames", &refusal);
  request.prefix = in.String("logStreamNamePrefix", &refusal);
  const auto start_time = in.Integer("startTime", &refusal);
  const auto end_time = in.Integer("endTime", &refusal);
  const auto pattern = in.String("filterPattern", &refusal);
  const auto limit = in.Integer("limit", &refusal);
  const auto token = in.String("nextToken", &refusal);
  if (refusal) return *refusal;
  if (auto refused = CheckGroup(group, group_arn)) return *refused;
  const auto& names = request.names;
  if (names && request.prefix) {
    return InvalidParameter("logStreamNames and logStreamNamePrefix cannot both be specified.");
  }
  if (names && (names->empty() || names->size() > 100)) {
    return InvalidParameter(
        "1 validation error detected: Value at 'logStreamNames' failed to "
        "satisfy constraint: Member must have length between 1 and 100");
  }
  if (limit && (*limit < 1 || *limit > kMaxEvents)) return BadLimit(*limit, "1 and 10000");
  auto terms = ParseFilterPattern(pattern.value_or(""));
  if (const Refusal* bad = std::get_if<Refusal>(&terms)) return *bad;
  request.terms = std::get<std::vector<std::string>>(std::move(terms));
  if (token) {
    request.after = ParseEventToken(*token);
    if (!request.after) return InvalidParameter("The specified nextToken is invalid.");
  }
  request.start = start_time.value_or(0);
  // endTime is inclusive here ("events with a timestamp later than this time are not
  // returned"); GetLogEvents' is exclusive.
  request.end =
      end_time && *end_time < INT64_MAX ? *end_time + 1 : std::numeric_limits<int64_t>::max();
  request.max = static_cast<size_t>(limit.value_or(kMaxEvents));
  return request;
}

}  // namespace amt::gateway::logs
