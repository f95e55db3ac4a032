#include "orchestrator/gateway/query_protocol.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/text.h"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/request_parts.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway::query {
namespace {

namespace text = ::amt::auth::text;  // common/text.h

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The date of a day since 1970-01-01 (civil_from_days).
void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

// Reads exactly `digits` decimal digits at `*at`.
bool Digits(std::string_view text, size_t* at, int digits, int64_t* value) {
  if (*at + digits > text.size()) return false;
  int64_t v = 0;
  for (int i = 0; i < digits; ++i) {
    const char c = text[*at + i];
    if (!text::IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *at += digits;
  *value = v;
  return true;
}

bool Expect(std::string_view text, size_t* at, char c) {
  if (*at >= text.size() || text[*at] != c) return false;
  ++*at;
  return true;
}

// A name or value of a form: '+' a space, %XX decoded, a bad escape kept as it is.
std::string DecodeFormPart(std::string_view text) {
  return *PercentDecode(text, /*plus_is_space=*/true, BadEscape::kKeep);
}

}  // namespace

Form ParseForm(std::string_view body) {
  Form form;
  for (std::string_view pair : text::Split(body, "&", /*skip_empty=*/true)) {
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      form.emplace_back(DecodeFormPart(pair), "");
    } else {
      form.emplace_back(DecodeFormPart(pair.substr(0, eq)), DecodeFormPart(pair.substr(eq + 1)));
    }
  }
  return form;
}

const std::string* FormValue(const Form& form, std::string_view name) {
  for (const auto& [key, value] : form) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::optional<std::string> ScopeService(const HttpRequest& request) {
  std::string credential;
  if (const std::string* authorization = request.Header("authorization")) {
    constexpr std::string_view kMarker = "Credential=";
    const size_t at = authorization->find(kMarker);
    if (at == std::string::npos) return std::nullopt;
    const size_t from = at + kMarker.size();
    const size_t end = authorization->find_first_of(", ", from);
    credential = authorization->substr(from, end == std::string::npos ? end : end - from);
  } else if (const size_t q = request.target.find('?'); q != std::string::npos) {
    const Form query = ParseForm(std::string_view(request.target).substr(q + 1));
    const std::string* presigned = FormValue(query, "X-Amz-Credential");
    if (presigned == nullptr) return std::nullopt;
    credential = *presigned;
  } else {
    return std::nullopt;
  }
  // AKID/date/region/service/aws4_request
  const std::vector<std::string_view> parts = text::Split(credential, "/", /*skip_empty=*/false);
  if (parts.size() < 4 || parts[3].empty()) return std::nullopt;
  return std::string(parts[3]);
}

bool IsFormContentType(const HttpRequest& request) {
  const std::string* type = request.Header("content-type");
  if (type == nullptr) return false;
  const std::string_view media = text::Strip(std::string_view(*type).substr(0, type->find(';')));
  return text::EqualsIgnoreCase(media, "application/x-www-form-urlencoded");
}

bool IsQueryRequest(const HttpRequest& request, std::string_view service,
                    std::string_view version) {
  if (request.method != "POST" || SplitTarget(request.target).first != "/") return false;
  if (const std::optional<std::string> scope = ScopeService(request)) return *scope == service;
  if (!IsFormContentType(request)) return false;
  const Form form = ParseForm(request.body);
  const std::string* declared = FormValue(form, "Version");
  return FormValue(form, "Action") != nullptr && declared != nullptr && *declared == version;
}

HttpResponse Reply(int status, std::string body, const std::string& request_id) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/xml";
  response.body = std::move(body);
  response.headers.emplace_back("x-amzn-RequestId", request_id);
  return response;
}

HttpResponse ErrorReply(std::string_view xmlns, int status, std::string_view code,
                        std::string_view message, const std::string& request_id) {
  xml::Writer writer("ErrorResponse", xmlns);
  writer.Open("Error")
      .Leaf("Type", status >= 500 ? "Receiver" : "Sender")
      .Leaf("Code", code)
      .Leaf("Message", message)
      .Close()
      .Leaf("RequestId", request_id);
  return Reply(status, std::move(writer).Finish(), request_id);
}

HttpResponse AuthErrorReply(std::string_view xmlns, const auth::AuthFailure& failure,
                            const std::string& request_id) {
  auth::AwsAuthError error = auth::JsonServiceAuthError(failure);
  // STS's codes and statuses for the failures the JSON services name otherwise (STS answers a
  // bad signature and an unknown key with 403; its codes carry no "Exception").
  if (error.code == "InvalidSignatureException") {
    error.code = "SignatureDoesNotMatch";
    error.http_status = 403;
  } else if (error.code == "UnrecognizedClientException") {
    error.code = "InvalidClientTokenId";
    error.http_status = 403;
  } else if (error.code.ends_with("Exception")) {
    error.code.resize(error.code.size() - std::string_view("Exception").size());
  }
  return ErrorReply(xmlns, error.http_status, error.code, error.message, request_id);
}

std::string FormatIso8601(double epoch_seconds) {
  const auto millis = static_cast<int64_t>(std::llround(epoch_seconds * 1000.0));
  int64_t seconds = millis / 1000;
  int64_t fraction = millis % 1000;
  if (fraction < 0) {
    fraction += 1000;
    seconds -= 1;
  }
  int64_t days = seconds / 86400;
  int64_t of_day = seconds % 86400;
  if (of_day < 0) {
    of_day += 86400;
    days -= 1;
  }
  int64_t y = 0, m = 0, d = 0;
  CivilFromDays(days, &y, &m, &d);
  char out[40];
  const int n = std::snprintf(
      out, sizeof(out), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", static_cast<long long>(y),
      static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(of_day / 3600),
      static_cast<long long>(of_day / 60 % 60), static_cast<long long>(of_day % 60));
  std::string text(out, static_cast<size_t>(n));
  if (fraction != 0) {
    std::snprintf(out, sizeof(out), ".%03lld", static_cast<long long>(fraction));
    text += out;
  }
  return text + "Z";
}

std::optional<double> ParseTimestamp(std::string_view text) {
  text = text::Strip(text);
  if (text.empty()) return std::nullopt;
  if (text.find('-', 1) == std::string_view::npos && text.find('T') == std::string_view::npos) {
    double seconds = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds)) {
      return std::nullopt;
    }
    return seconds;
  }
  size_t at = 0;
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!Digits(text, &at, 4, &y) || !Expect(text, &at, '-') || !Digits(text, &at, 2, &mo) ||
      !Expect(text, &at, '-') || !Digits(text, &at, 2, &d) ||
      !(Expect(text, &at, 'T') || Expect(text, &at, 't')) || !Digits(text, &at, 2, &h) ||
      !Expect(text, &at, ':') || !Digits(text, &at, 2, &mi) || !Expect(text, &at, ':') ||
      !Digits(text, &at, 2, &s)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  double fraction = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    double scale = 0.1;
    const size_t first = at;
    while (at < text.size() && text::IsDigit(text[at])) {
      fraction += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == first) return std::nullopt;
  }
  int64_t offset = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int sign = text[at] == '-' ? -1 : 1;
    ++at;
    int64_t oh = 0, om = 0;
    if (!Digits(text, &at, 2, &oh)) return std::nullopt;
    Expect(text, &at, ':');
    if (!Digits(text, &at, 2, &om)) return std::nullopt;
    offset = sign * (oh * 3600 + om * 60);
  }
  if (at != text.size()) return std::nullopt;
  const int64_t seconds = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset;
  return static_cast<double>(seconds) + fraction;
}

}  // namespace amt::gateway::query
