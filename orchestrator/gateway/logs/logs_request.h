// The decoding half of the CloudWatch Logs handler (cloudwatch_logs.h answers): a request body's
// members with their types checked, each operation's request with every check CloudWatch Logs
// makes before it reads a log (group, limits, tokens, filter pattern), and the tokens' and
// streams' names. Pure: no API, no I/O. Errors are Refusals in CloudWatch Logs' names.
#ifndef AMT_ORCHESTRATOR_GATEWAY_LOGS_LOGS_REQUEST_H_
#define AMT_ORCHESTRATOR_GATEWAY_LOGS_LOGS_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"

namespace amt::gateway::logs {

inline constexpr int kMaxEvents = 10'000;
inline constexpr int kMaxStreams = 50;

// A request's refusal, in CloudWatch Logs' names.
struct Refusal {
  int status;
  std::string name;
  std::string message;
};

Refusal InvalidParameter(std::string message);
// ResourceNotFoundException: no such log group, no such log stream.
Refusal NoGroup();
Refusal NoStream();

// The members of a request body, read with their types checked: each getter returns nullopt
// when the member is absent or null, and sets `refusal` (SerializationException) when it has
// another type.
class Members {
 public:
  explicit Members(nlohmann::json body) : body_(std::move(body)) {}

  std::optional<std::string> String(const char* name, std::optional<Refusal>* refusal) const;
  std::optional<int64_t> Integer(const char* name, std::optional<Refusal>* refusal) const;
  std::optional<bool> Boolean(const char* name, std::optional<Refusal>* refusal) const;
  std::optional<std::vector<std::string>> StringList(const char* name,
                                                     std::optional<Refusal>* refusal) const;

 private:
  static Refusal Wrong(const char* name, const char* type);
  nlohmann::json body_;
};

// A request body as Members: "" counts as "{}". SerializationException when it is not UTF-8 or
// not a JSON object.
std::variant<Members, Refusal> DecodeBody(std::string_view body);

// A training job's name from its stream's name: "<job>/algo-1-<seconds>".
std::optional<std::string> JobOfStream(std::string_view stream);

// GetLogEvents' and DescribeLogStreams' tokens: "f/<n>" (forward) or "b/<n>" (backward), n a
// position in the job's log.
std::string Token(char direction, int64_t sequence);
// The direction and the sequence; nullopt when it is neither.
std::optional<std::pair<char, int64_t>> ParseToken(std::string_view token);

// One event of FilterLogEvents, ordered as CloudWatch Logs interleaves streams: by timestamp,
// then stream, then position in the stream.
struct StreamEvent {
  int64_t timestamp;
  std::string stream;
  int64_t sequence;
  std::string message;

  bool operator<(const StreamEvent& other) const;
};

// FilterLogEvents' token: the last event returned, "e/<timestamp>/<sequence>/<stream>".
std::string EventToken(const StreamEvent& event);
std::optional<StreamEvent> ParseEventToken(std::string_view token);

// A filter pattern of plain terms: an event matches when its message contains every term.
// Terms are separated by spaces; a quoted phrase ("a b") is one term. Anything of the richer
// syntax (JSON {...}, space-delimited [...], ?term, -term, %regex%) is refused, naming it.
std::variant<std::vector<std::string>, Refusal> ParseFilterPattern(std::string_view pattern);

// GetLogEvents: logGroupName (the training jobs' group) and logStreamName required, limit
// 1-10,000, nextToken well-formed.
struct GetLogEventsRequest {
  std::string stream;
  std::optional<int64_t> start_time;
  std::optional<int64_t> end_time;
  std::optional<int64_t> limit;
  std::optional<bool> from_head;
  std::optional<std::string> token;
  std::optional<std::pair<char, int64_t>> position;  // the token's
};
std::variant<GetLogEventsRequest, Refusal> DecodeGetLogEvents(const Members& in);

// DescribeLogStreams: the group (logGroupName or logGroupIdentifier), orderBy LogStreamName or
// LastEventTime (not with a prefix), limit 1-50. The token is parsed when it is used (ParseToken).
struct DescribeLogStreamsRequest {
  std::optional<std::string> prefix;
  bool by_last_event = false;
  bool descending = false;
  std::optional<int64_t> limit;
  std::optional<std::string> token;
};
std::variant<DescribeLogStreamsRequest, Refusal> DecodeDescribeLogStreams(const Members& in);

// FilterLogEvents: the group, logStreamNames (1-100) or logStreamNamePrefix, limit 1-10,000,
// the filter pattern's terms, the token's event; [start, end) in ms (endTime is inclusive on
// the wire).
struct FilterLogEventsRequest {
  std::optional<std::vector<std::string>> names;
  std::optional<std::string> prefix;
  int64_t start = 0;
  int64_t end = 0;
  size_t max = 0;
  std::vector<std::string> terms;
  std::optional<StreamEvent> after;
};
std::variant<FilterLogEventsRequest, Refusal> DecodeFilterLogEvents(const Members& in);

}  // namespace amt::gateway::logs

#endif  // AMT_ORCHESTRATOR_GATEWAY_LOGS_LOGS_REQUEST_H_
