// The pure steps of AWS Signature Version 4 (the "Create a canonical request", "Create a string
// to sign" and "Calculate the signature" tasks of the SigV4 documentation), as the verifier in
// sigv4.h redoes them on the server side. Each function is a function of its inputs only.
//
// Where AWS's services differ, the verifier follows botocore, whose signatures it must accept:
// S3 takes the path exactly as sent; every other service removes dot segments and repeated
// slashes and then URI-encodes the (already encoded) path once more (botocore.auth.SigV4Auth
// `_normalize_url_path` vs S3SigV4Auth's). The query string is decoded and re-encoded, so a
// client's choice of escapes for the same bytes does not matter.
#ifndef AMT_ORCHESTRATOR_AUTH_CANONICAL_H_
#define AMT_ORCHESTRATOR_AUTH_CANONICAL_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace amt::auth {

// HTTP headers as received: (name, value) pairs in order, names in any case, repeats allowed.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Percent-encodes every byte outside RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~) as %XY
// with upper-case hex; '/' is kept when `keep_slash`.
std::string UriEncode(std::string_view text, bool keep_slash);

// Decodes %XY escapes (either case of hex). A '%' not followed by two hex digits stays a literal
// '%'; '+' stays '+' (SigV4 clients encode a space as %20, never '+').
std::string PercentDecode(std::string_view text);

// RFC 3986 section 5.2.4 plus the removal of empty segments ("//"), as botocore's
// utils.remove_dot_segments: "/a/./b/../c//" -> "/a/c/", "//" -> "/", "/.." -> "/".
std::string RemoveDotSegments(std::string_view path);

// The CanonicalURI of a request whose request-target path (before any '?') is `raw_path`.
// For S3 (`s3` true) the path itself, or "/" when empty; otherwise RemoveDotSegments and then
// UriEncode keeping '/', so "%20" in the path becomes "%2520".
std::string CanonicalUri(std::string_view raw_path, bool s3);

// A query parameter, decoded.
struct QueryParam {
  std::string name;
  std::string value;
};

// The parameters of a raw query string (after the '?'), decoded, in order. Empty pieces
// ("a=1&&b=2") are skipped; a piece without '=' has an empty value.
std::vector<QueryParam> ParseQuery(std::string_view raw_query);

// The CanonicalQueryString: each name and value UriEncode'd (keeping nothing), sorted by name
// and then value, joined as "n=v&n=v". Parameters named `exclude` (X-Amz-Signature for a
// presigned URL) are left out.
std::string CanonicalQueryString(const std::vector<QueryParam>& params,
                                 std::string_view exclude = {});

// SigV4's Trimall: leading and trailing whitespace removed, inner runs of whitespace (space,
// tab, CR, LF) replaced by one space.
std::string TrimAll(std::string_view value);

// The signed header names of a SignedHeaders value ("host;x-amz-date"): lower case, sorted,
// without duplicates or empty names.
std::vector<std::string> SignedHeaderNames(std::string_view signed_headers);

// The CanonicalHeaders block for `signed_names` (from SignedHeaderNames): one
// "name:value\n" line per name, the value being every header of that name (case-insensitive)
// in the order received, each TrimAll'd, joined by ','. A signed header absent from the request
// gets an empty value, so the signature cannot match what the client signed.
std::string CanonicalHeaders(const HeaderList& headers,
                             const std::vector<std::string>& signed_names);

// The canonical request: method, URI, query, headers block, the signed names joined by ';' and
// the payload hash, separated by '\n'.
std::string CanonicalRequest(std::string_view method, std::string_view canonical_uri,
                             std::string_view canonical_query, std::string_view canonical_headers,
                             const std::vector<std::string>& signed_names,
                             std::string_view payload_hash);

// "AWS4-HMAC-SHA256\n<amz_date>\n<scope>\n<hex SHA-256 of canonical_request>", where scope is
// "<yyyymmdd>/<region>/<service>/aws4_request".
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
std::string SigningKey(std::string_view secret_access_key, std::string_view date,
                       std::string_view region, std::string_view service);

// Hex HMAC-SHA256 of the string to sign under the signing key: the Signature value.
std::string Signature(std::string_view signing_key, std::string_view string_to_sign);

}  // namespace amt::auth

#endif  // AMT_ORCHESTRATOR_AUTH_CANONICAL_H_
