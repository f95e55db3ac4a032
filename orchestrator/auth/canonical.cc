#include "orchestrator/auth/canonical.h"

#include <algorithm>

#include "common/crypto.h"
#include "common/text.h"

namespace amt::auth {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0x0f]);
    }
  }
  return out;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string RemoveDotSegments(std::string_view path) {
  if (path.empty()) return "";
  std::vector<std::string_view> kept;
  for (std::string_view segment : text::Split(path, "/", /*skip_empty=*/true)) {
    if (segment == ".") continue;
    if (segment == "..") {
      if (!kept.empty()) kept.pop_back();
      continue;
    }
    kept.push_back(segment);
  }
  std::string out = path.front() == '/' ? "/" : "";
  out += text::Join(kept, "/");
  if (path.back() == '/' && !kept.empty()) out += "/";
  return out;
}

std::string CanonicalUri(std::string_view raw_path, bool s3) {
  if (raw_path.empty()) return "/";
  if (s3) return std::string(raw_path);
  std::string normalized = RemoveDotSegments(raw_path);
  if (normalized.empty()) normalized = "/";
  return UriEncode(normalized, /*keep_slash=*/true);
}

std::vector<QueryParam> ParseQuery(std::string_view raw_query) {
  std::vector<QueryParam> params;
  for (std::string_view piece : text::Split(raw_query, "&", /*skip_empty=*/true)) {
    const size_t eq = piece.find('=');
    if (eq == std::string_view::npos) {
      params.push_back({PercentDecode(piece), ""});
    } else {
      params.push_back({PercentDecode(piece.substr(0, eq)), PercentDecode(piece.substr(eq + 1))});
    }
  }
  return params;
}

std::string CanonicalQueryString(const std::vector<QueryParam>& params, std::string_view exclude) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (const QueryParam& param : params) {
    if (!exclude.empty() && param.name == exclude) continue;
    encoded.emplace_back(UriEncode(param.name, false), UriEncode(param.value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

std::string TrimAll(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (text::IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> SignedHeaderNames(std::string_view signed_headers) {
  std::vector<std::string> names;
  for (std::string_view name : text::Split(signed_headers, ";", /*skip_empty=*/true)) {
    if (!text::Strip(name).empty()) names.push_back(text::Lower(text::Strip(name)));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string CanonicalHeaders(const HeaderList& headers,
                             const std::vector<std::string>& signed_names) {
  std::string block;
  for (const std::string& name : signed_names) {
    std::vector<std::string> values;
    for (const auto& [header_name, value] : headers) {
      if (text::EqualsIgnoreCase(header_name, name)) values.push_back(TrimAll(value));
    }
    block += name;
    block += ':';
    block += text::Join(values, ",");
    block += '\n';
  }
  return block;
}

std::string CanonicalRequest(std::string_view method, std::string_view canonical_uri,
                             std::string_view canonical_query, std::string_view canonical_headers,
                             const std::vector<std::string>& signed_names,
                             std::string_view payload_hash) {
  return text::Cat(method, "\n", canonical_uri, "\n", canonical_query, "\n", canonical_headers,
                   "\n", text::Join(signed_names, ";"), "\n", payload_hash);
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  return text::Cat("AWS4-HMAC-SHA256\n", amz_date, "\n", scope, "\n", Sha256Hex(canonical_request));
}

std::string SigningKey(std::string_view secret_access_key, std::string_view date,
                       std::string_view region, std::string_view service) {
  const std::string k_date = HmacSha256("AWS4" + std::string(secret_access_key), date);
  const std::string k_region = HmacSha256(k_date, region);
  const std::string k_service = HmacSha256(k_region, service);
  return HmacSha256(k_service, "aws4_request");
}

std::string Signature(std::string_view signing_key, std::string_view string_to_sign) {
  return HexEncode(HmacSha256(signing_key, string_to_sign));
}

}  // namespace amt::auth
