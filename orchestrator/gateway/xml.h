// XML for the AWS protocols that speak it (S3's REST-XML, the query protocol's replies): a writer
// that escapes, and a reader of small request bodies (S3's CompleteMultipartUpload, Delete,
// CreateBucketConfiguration) into a tree, over libexpat.
//
// The reader is for untrusted input: expat parses without recursion, refuses entity expansion
// attacks (its billion-laughs protection), and the tree is cut at kMaxDepth levels, so no body can
// exhaust the stack or the heap beyond a small multiple of its own size.
#ifndef AMT_ORCHESTRATOR_GATEWAY_XML_H_
#define AMT_ORCHESTRATOR_GATEWAY_XML_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace amt::gateway::xml {

// `text` with &, <, >, " and ' escaped, fit for element content and attribute values. Characters
// XML 1.0 cannot carry (control characters other than tab, CR and LF) are written as character
// references; strict parsers refuse those too, which is why S3 clients ask for URL-encoded keys.
std::string Escape(std::string_view text);

// Builds a document, elements in the order written:
//   Writer w("ListAllMyBucketsResult", "http://s3.amazonaws.com/doc/2006-03-01/");
//   w.Open("Buckets").Open("Bucket").Leaf("Name", "b").Close().Close();
//   std::string body = std::move(w).Finish();
class Writer {
 public:
  // Starts with the XML declaration and the root element (with `xmlns` when not empty).
  explicit Writer(std::string_view root, std::string_view xmlns = {});

  Writer& Open(std::string_view name);
  Writer& Close();
  // <name>escaped text</name>
  Writer& Leaf(std::string_view name, std::string_view text);

  // Closes every open element, the root last.
  std::string Finish() &&;

 private:
  std::string out_;
  std::vector<std::string> open_;
};

inline constexpr int kMaxDepth = 16;

// An element of a parsed document. Names are local names: a namespace prefix is dropped
// (S3 bodies come with and without xmlns). Attributes are not kept (no S3 request body needs
// them).
struct Element {
  std::string name;
  std::string text;  // the character data directly inside, whitespace kept
  std::vector<Element> children;

  // The first child named `name`, nullptr when there is none.
  const Element* Child(std::string_view child_name) const;
  // Every child named `name`, in document order.
  std::vector<const Element*> Children(std::string_view child_name) const;
};

// The root element of `document`. InvalidArgument naming the line and column of the first error
// for anything that is not one well-formed XML document, or nests deeper than kMaxDepth.
absl::StatusOr<Element> Parse(std::string_view document);

}  // namespace amt::gateway::xml

#endif  // AMT_ORCHESTRATOR_GATEWAY_XML_H_
