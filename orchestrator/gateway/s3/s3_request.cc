#include "orchestrator/gateway/s3/s3_request.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "common/text.h"
#include "orchestrator/gateway/host_check.h"
#include "orchestrator/gateway/request_parts.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

using ::amt::auth::text::AllDigits;
using ::amt::auth::text::Cat;
using ::amt::auth::text::Split;

constexpr int kMaxListKeys = 1000;
constexpr size_t kMaxDeleteObjects = 1000;

// Subresources that name an operation this handler serves, for a bucket and for an object;
// anything else in the query that is not a plain parameter is refused as NotImplemented.
bool IsKnownParameter(std::string_view name) {
  static const std::vector<std::string_view> kKnown = {
      "prefix", "delimiter", "marker", "max-keys", "encoding-type", "list-type",
      "continuation-token", "start-after", "fetch-owner", "location", "delete", "uploads",
      "key-marker", "upload-id-marker", "max-uploads", "uploadId", "partNumber", "x-id",
      "versionId",
      // Presigned URLs and response overrides.
      "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
      "X-Amz-Signature", "X-Amz-Security-Token", "response-content-type",
      "response-content-disposition", "response-cache-control", "response-content-encoding",
      "response-content-language", "response-expires"};
  return std::find(kKnown.begin(), kKnown.end(), name) != kKnown.end();
}

// A listing's page size (max-keys, max-uploads) into `size` when given, capped at 1000 as S3
// caps it; InvalidArgument when it is not a non-negative integer.
std::optional<S3Error> ReadPageSize(const S3Request& r, std::string_view name, int& size) {
  if (!r.Has(name)) return std::nullopt;
  const std::string text = r.Param(name);
  int value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) {
    return S3Error{"InvalidArgument",
                   Cat("Provided ", name, " not an integer or within integer range"),
                   {{"ArgumentName", std::string(name)}, {"ArgumentValue", text}}};
  }
  size = std::min(value, kMaxListKeys);
  return std::nullopt;
}

// encoding-type: none, or url (keys percent-encoded in the listing); InvalidArgument otherwise.
std::optional<S3Error> ReadEncodingType(const S3Request& r, bool& url_encoded) {
  const std::string encoding = r.Param("encoding-type");
  if (!encoding.empty() && encoding != "url") {
    return S3Error{"InvalidArgument",
                   "Invalid Encoding Method specified in Request",
                   {{"ArgumentName", "encoding-type"}, {"ArgumentValue", encoding}}};
  }
  url_encoded = encoding == "url";
  return std::nullopt;
}

// A region's name: two letters, words, then a number, dash-separated (us-east-1, us-gov-west-1,
// cn-north-1). The two letters keep s3-website-us-east-1, a static website endpoint and not S3's
// REST API, from reading as s3-<region>.
bool IsRegion(std::string_view label) {
  const std::vector<std::string_view> words = Split(label, "-", /*skip_empty=*/false);
  if (words.size() < 3 || words.front().size() != 2) return false;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i].empty() || !std::all_of(words[i].begin(), words[i].end(), absl::ascii_isalpha)) {
      return false;
    }
  }
  return AllDigits(words.back());
}

// Whether labels[first..] (a host name split at its dots, amazonaws.com removed) are the name of
// an S3 endpoint, with nothing before it.
bool IsS3Endpoint(const std::vector<std::string_view>& labels, size_t first) {
  const size_t n = labels.size() - first;
  if (n == 0) return false;
  const std::string_view head = labels[first];
  if (head == "s3" || head == "s3-fips") {
    // s3 (the global name), then [dualstack.]<region>; s3-fips always with a region.
    size_t next = first + 1;
    if (next == labels.size()) return head == "s3";
    if (labels[next] == "dualstack") ++next;
    return next + 1 == labels.size() && IsRegion(labels[next]);
  }
  if (head == "s3-accelerate") return n == 1 || (n == 2 && labels[first + 1] == "dualstack");
  if (n != 1) return false;
  return head == "s3-external-1" || (head.starts_with("s3-") && IsRegion(head.substr(3)));
}

// What a Host header says of S3: nullopt when it is not an S3 endpoint's name; otherwise the
// bucket it names, "" for a path-style endpoint.
std::optional<std::string> ReadS3Host(std::string_view host_header) {
  std::string host = HostName(host_header);
  if (host.ends_with('.')) host.pop_back();  // a fully qualified name: the same host
  std::string_view name = host;
  if (name.ends_with(".amazonaws.com.cn")) {
    name.remove_suffix(std::string_view(".amazonaws.com.cn").size());
  } else if (name.ends_with(".amazonaws.com")) {
    name.remove_suffix(std::string_view(".amazonaws.com").size());
  } else {
    return std::nullopt;
  }
  const std::vector<std::string_view> labels = Split(name, ".", /*skip_empty=*/false);
  // The first endpoint from the left: a bucket may have dots, and even a label "s3", in its name
  // (s3.s3.amazonaws.com is bucket "s3"), but never a whole endpoint's name after one.
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!IsS3Endpoint(labels, i)) continue;
    const size_t bucket_end = static_cast<size_t>(labels[i].data() - name.data());
    return std::string(name.substr(0, bucket_end == 0 ? 0 : bucket_end - 1));
  }
  return std::nullopt;
}

S3Error MethodNotAllowed() {
  return {"MethodNotAllowed", "The specified method is not allowed against this resource.", {}};
}

// The operation of a request whose path and query are read, by method, path and subresource.
std::variant<S3Operation, S3Error> OperationOf(const S3Request& r) {
  const std::string& method = r.http.method;
  for (const auto& [name, value] : r.query) {
    if (!IsKnownParameter(name)) return S3NotImplemented("?" + name);
  }
  if (r.bucket.empty()) {
    if (method == "GET") return S3Operation::kListBuckets;
    return MethodNotAllowed();
  }
  if (r.key.empty()) {
    if (method == "PUT") return S3Operation::kCreateBucket;
    if (method == "HEAD") return S3Operation::kHeadBucket;
    if (method == "DELETE") return S3Operation::kDeleteBucket;
    if (method == "GET" && r.Has("location")) return S3Operation::kGetBucketLocation;
    if (method == "GET" && r.Has("uploads")) return S3Operation::kListMultipartUploads;
    if (method == "GET") {
      return r.Param("list-type") == "2" ? S3Operation::kListObjectsV2 : S3Operation::kListObjects;
    }
    if (method == "POST" && r.Has("delete")) return S3Operation::kDeleteObjects;
  } else {
    if (method == "PUT" && r.Has("uploadId")) {
      if (r.http.Header("x-amz-copy-source") != nullptr) {
        return S3NotImplemented("UploadPartCopy");
      }
      return S3Operation::kUploadPart;
    }
    if (method == "PUT" && r.http.Header("x-amz-copy-source") != nullptr) {
      return S3Operation::kCopyObject;
    }
    if (method == "PUT") return S3Operation::kPutObject;
    if (method == "GET" && r.Has("uploadId")) return S3NotImplemented("ListParts");
    if (method == "GET" || method == "HEAD") return S3Operation::kGetObject;
    if (method == "DELETE" && r.Has("uploadId")) return S3Operation::kAbortMultipartUpload;
    if (method == "DELETE") return S3Operation::kDeleteObject;
    if (method == "POST" && r.Has("uploads")) return S3Operation::kCreateMultipartUpload;
    if (method == "POST" && r.Has("uploadId")) return S3Operation::kCompleteMultipartUpload;
  }
  return MethodNotAllowed();
}

}  // namespace

S3Error S3NotImplemented(std::string_view what) {
  return {"NotImplemented",
          Cat("A header or query you provided implies functionality that is not "
              "implemented: amt-local's S3 does not serve ",
              what),
          {}};
}

std::optional<std::string> VirtualHostedBucket(std::string_view host_header) {
  std::optional<std::string> bucket = ReadS3Host(host_header);
  if (!bucket.has_value() || bucket->empty()) return std::nullopt;
  return bucket;
}

std::optional<std::string> VirtualHostedBucket(const HttpRequest& request) {
  const std::string* host = request.Header("host");
  if (host == nullptr) return std::nullopt;
  return VirtualHostedBucket(*host);
}

bool IsS3EndpointHost(std::string_view host_header) { return ReadS3Host(host_header).has_value(); }

bool S3Request::Has(std::string_view name) const {
  return std::any_of(query.begin(), query.end(), [&](const auto& p) { return p.first == name; });
}

std::string S3Request::Param(std::string_view name) const {
  for (const auto& [n, v] : query) {
    if (n == name) return v;
  }
  return "";
}

std::variant<S3Request, S3Error> DecodeS3Request(const HttpRequest& request) {
  const auto [raw_path, raw_query] = SplitTarget(request.target);
  std::optional<std::string> path = PercentDecode(raw_path, /*plus_is_space=*/false);
  std::optional<std::vector<std::pair<std::string, std::string>>> query = ParseQuery(raw_query);
  if (!path.has_value() || !query.has_value() || path->empty() || path->front() != '/') {
    return S3Error{"InvalidURI", "Couldn't parse the specified URI.", {}};
  }
  S3Request parsed{request, S3Operation::kListBuckets, "", "", std::move(*query)};
  const std::string_view rest = std::string_view(*path).substr(1);
  if (std::optional<std::string> bucket = VirtualHostedBucket(request)) {
    // Virtual-hosted: the Host names the bucket and the whole path is the key. Only this reading
    // maps it; the target stays as sent, which is what SigV4 signed (and the server checked).
    parsed.bucket = std::move(*bucket);
    parsed.key = std::string(rest);
    parsed.virtual_hosted = true;
  } else {
    const size_t slash = rest.find('/');
    parsed.bucket = std::string(rest.substr(0, slash));
    if (slash != std::string_view::npos) parsed.key = std::string(rest.substr(slash + 1));
  }
  std::variant<S3Operation, S3Error> operation = OperationOf(parsed);
  if (S3Error* error = std::get_if<S3Error>(&operation)) return std::move(*error);
  parsed.operation = std::get<S3Operation>(operation);
  return parsed;
}

s3::PutOptions PutOptionsOf(const HttpRequest& request) {
  s3::PutOptions options;
  if (const std::string* type = request.Header("content-type")) options.content_type = *type;
  for (const auto& [name, value] : request.header_list) {
    if (name.starts_with("x-amz-meta-") && name.size() > 11) {
      options.metadata.emplace(name.substr(11), value);
    }
  }
  return options;
}

std::optional<S3Error> CheckCreateBucketBody(std::string_view body) {
  if (body.empty()) return std::nullopt;
  if (const absl::StatusOr<xml::Element> config = xml::Parse(body); !config.ok()) {
    return S3Error{"MalformedXML",
                   Cat("The XML you provided was not well-formed or did not "
                       "validate against our published schema: ",
                       std::string(config.status().message())),
                   {}};
  }
  return std::nullopt;
}

std::variant<S3ListRequest, S3Error> DecodeListObjects(const S3Request& r, int version) {
  S3ListRequest list;
  s3::ListOptions& options = list.options;
  options.prefix = r.Param("prefix");
  options.delimiter = r.Param("delimiter");
  if (auto bad = ReadPageSize(r, "max-keys", options.max_keys)) return *std::move(bad);
  if (auto bad = ReadEncodingType(r, list.url_encoded)) return *std::move(bad);
  if (version == 1) {
    options.after = r.Param("marker");
  } else {
    options.after = r.Param("start-after");
    if (r.Has("continuation-token")) {
      std::string token;
      if (!absl::WebSafeBase64Unescape(r.Param("continuation-token"), &token)) {
        return S3Error{"InvalidArgument",
                       "The continuation token provided is incorrect",
                       {{"ArgumentName", "continuation-token"}}};
      }
      options.after = std::max(options.after, token);
    }
  }
  return list;
}

std::variant<S3UploadListRequest, S3Error> DecodeListUploads(const S3Request& r) {
  S3UploadListRequest list;
  s3::UploadListOptions& options = list.options;
  options.prefix = r.Param("prefix");
  options.delimiter = r.Param("delimiter");
  options.key_marker = r.Param("key-marker");
  options.upload_id_marker = r.Param("upload-id-marker");
  if (auto bad = ReadPageSize(r, "max-uploads", options.max_uploads)) return *std::move(bad);
  if (auto bad = ReadEncodingType(r, list.url_encoded)) return *std::move(bad);
  return list;
}

std::variant<S3DeleteRequest, S3Error> DecodeDeleteObjects(std::string_view body) {
  const absl::StatusOr<xml::Element> doc = xml::Parse(body);
  const std::vector<const xml::Element*> objects =
      doc.ok() ? doc->Children("Object") : std::vector<const xml::Element*>{};
  if (!doc.ok() || doc->name != "Delete" || objects.empty() || objects.size() > kMaxDeleteObjects) {
    return S3Error{"MalformedXML",
                   "The XML you provided was not well-formed or did not validate "
                   "against our published schema (a Delete of 1 to 1000 Objects)",
                   {}};
  }
  S3DeleteRequest request;
  const xml::Element* quiet = doc->Child("Quiet");
  request.quiet = quiet != nullptr && absl::AsciiStrToLower(quiet->text) == "true";
  for (const xml::Element* object : objects) {
    const xml::Element* key = object->Child("Key");
    request.keys.push_back(key != nullptr ? key->text : "");
  }
  return request;
}

std::variant<S3CopySource, S3Error> DecodeCopySource(const HttpRequest& request) {
  std::string source = *request.Header("x-amz-copy-source");
  source = source.substr(0, source.find('?'));  // ?versionId: there is one version
  const std::optional<std::string> decoded = PercentDecode(source, /*plus_is_space=*/false);
  std::string_view path = decoded.has_value() ? std::string_view(*decoded) : std::string_view();
  if (path.starts_with('/')) path.remove_prefix(1);
  const size_t slash = path.find('/');
  if (!decoded.has_value() || slash == std::string_view::npos || slash == 0 ||
      slash + 1 == path.size()) {
    return S3Error{"InvalidArgument",
                   "Copy Source must mention the source bucket and key: "
                   "sourcebucket/sourcekey",
                   {{"ArgumentName", "x-amz-copy-source"}}};
  }
  const std::string* directive = request.Header("x-amz-metadata-directive");
  const bool replace = directive != nullptr && *directive == "REPLACE";
  if (directive != nullptr && !replace && *directive != "COPY") {
    return S3Error{"InvalidArgument",
                   "Unknown metadata directive.",
                   {{"ArgumentName", "x-amz-metadata-directive"}}};
  }
  return S3CopySource{std::string(path.substr(0, slash)), std::string(path.substr(slash + 1)),
                      replace};
}

std::variant<int, S3Error> DecodePartNumber(const S3Request& request) {
  int number = 0;
  if (!absl::SimpleAtoi(request.Param("partNumber"), &number)) {
    return S3Error{
        "InvalidArgument",
        Cat("Part number must be an integer between 1 and ", s3::kMaxPartNumber, ", inclusive"),
        {{"ArgumentName", "partNumber"}}};
  }
  return number;
}

std::variant<std::vector<s3::PartRef>, S3Error> DecodeCompleteParts(std::string_view body) {
  const absl::StatusOr<xml::Element> doc = xml::Parse(body);
  std::vector<s3::PartRef> parts;
  bool well_formed = doc.ok() && doc->name == "CompleteMultipartUpload";
  if (well_formed) {
    for (const xml::Element* part : doc->Children("Part")) {
      const xml::Element* number = part->Child("PartNumber");
      const xml::Element* etag = part->Child("ETag");
      s3::PartRef ref;
      if (number == nullptr || etag == nullptr ||
          !absl::SimpleAtoi(absl::StripAsciiWhitespace(number->text), &ref.number)) {
        well_formed = false;
        break;
      }
      ref.etag = std::string(absl::StripAsciiWhitespace(etag->text));
      parts.push_back(std::move(ref));
    }
  }
  if (!well_formed) {
    return S3Error{"MalformedXML",
                   "The XML you provided was not well-formed or did not validate "
                   "against our published schema",
                   {}};
  }
  return parts;
}

std::optional<std::pair<uint64_t, uint64_t>> ParseRange(std::string_view header, uint64_t size) {
  if (!header.starts_with("bytes=") || header.find(',') != std::string_view::npos) {
    return std::make_pair(uint64_t{0}, size);
  }
  header.remove_prefix(6);
  const size_t dash = header.find('-');
  if (dash == std::string_view::npos) return std::make_pair(uint64_t{0}, size);
  const std::string_view a = header.substr(0, dash);
  const std::string_view b = header.substr(dash + 1);
  uint64_t first = 0;
  uint64_t last = 0;
  if (a.empty()) {  // the last n bytes
    uint64_t n = 0;
    if (!absl::SimpleAtoi(std::string(b), &n) || n == 0 || size == 0) return std::nullopt;
    n = std::min(n, size);
    return std::make_pair(size - n, n);
  }
  if (!absl::SimpleAtoi(std::string(a), &first)) return std::make_pair(uint64_t{0}, size);
  if (first >= size) return std::nullopt;
  if (b.empty()) {
    last = size - 1;
  } else if (!absl::SimpleAtoi(std::string(b), &last) || last < first) {
    return std::make_pair(uint64_t{0}, size);
  }
  last = std::min(last, size - 1);
  return std::make_pair(first, last - first + 1);
}

}  // namespace amt::gateway
