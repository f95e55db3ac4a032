#include "orchestrator/gateway/xml.h"

#include <expat.h>

#include <climits>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "common/text.h"

namespace amt::gateway::xml {

using ::amt::auth::text::Cat;

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          char reference[8];
          std::snprintf(reference, sizeof(reference), "&#x%X;", static_cast<unsigned char>(c));
          out += reference;
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

Writer::Writer(std::string_view root, std::string_view xmlns) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<";
  out_ += root;
  if (!xmlns.empty()) out_ += Cat(" xmlns=\"", Escape(xmlns), "\"");
  out_ += '>';
  open_.emplace_back(root);
}

Writer& Writer::Open(std::string_view name) {
  out_ += Cat("<", name, ">");
  open_.emplace_back(name);
  return *this;
}

Writer& Writer::Close() {
  if (open_.size() > 1) {  // the root closes in Finish
    out_ += Cat("</", open_.back(), ">");
    open_.pop_back();
  }
  return *this;
}

Writer& Writer::Leaf(std::string_view name, std::string_view text) {
  out_ += Cat("<", name, ">", Escape(text), "</", name, ">");
  return *this;
}

std::string Writer::Finish() && {
  while (!open_.empty()) {
    out_ += Cat("</", open_.back(), ">");
    open_.pop_back();
  }
  return std::move(out_);
}

const Element* Element::Child(std::string_view child_name) const {
  for (const Element& child : children) {
    if (child.name == child_name) return &child;
  }
  return nullptr;
}

std::vector<const Element*> Element::Children(std::string_view child_name) const {
  std::vector<const Element*> found;
  for (const Element& child : children) {
    if (child.name == child_name) found.push_back(&child);
  }
  return found;
}

namespace {

// The parse in progress: open elements on a stack, each moved into its parent when it ends.
struct TreeBuilder {
  XML_Parser parser = nullptr;
  std::vector<Element> open;
  std::optional<Element> root;
  bool too_deep = false;
};

std::string_view LocalName(std::string_view name) {
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

void XMLCALL OnStart(void* data, const XML_Char* name, const XML_Char** /*attributes*/) {
  auto& builder = *static_cast<TreeBuilder*>(data);
  if (static_cast<int>(builder.open.size()) >= kMaxDepth) {
    builder.too_deep = true;
    XML_StopParser(builder.parser, XML_FALSE);
    return;
  }
  Element element;
  element.name = std::string(LocalName(name));
  builder.open.push_back(std::move(element));
}

void XMLCALL OnEnd(void* data, const XML_Char* /*name*/) {
  auto& builder = *static_cast<TreeBuilder*>(data);
  Element done = std::move(builder.open.back());
  builder.open.pop_back();
  if (builder.open.empty()) {
    builder.root = std::move(done);
  } else {
    builder.open.back().children.push_back(std::move(done));
  }
}

void XMLCALL OnText(void* data, const XML_Char* text, int length) {
  auto& builder = *static_cast<TreeBuilder*>(data);
  if (!builder.open.empty()) builder.open.back().text.append(text, static_cast<size_t>(length));
}

}  // namespace

absl::StatusOr<Element> Parse(std::string_view document) {
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(XML_ParserCreate("UTF-8"),
                                                                      &XML_ParserFree);
  if (parser == nullptr) return absl::ResourceExhaustedError("cannot allocate an XML parser");
  TreeBuilder builder;
  builder.parser = parser.get();
  XML_SetUserData(parser.get(), &builder);
  XML_SetElementHandler(parser.get(), &OnStart, &OnEnd);
  XML_SetCharacterDataHandler(parser.get(), &OnText);
  // Documents over 2 GiB do not reach here (the HTTP body limit), but XML_Parse takes an int.
  if (document.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("the XML document is too large");
  }
  const XML_Status status = XML_Parse(parser.get(), document.data(),
                                      static_cast<int>(document.size()), /*isFinal=*/XML_TRUE);
  if (builder.too_deep) {
    return absl::InvalidArgumentError(
        Cat("the XML document nests deeper than ", kMaxDepth, " elements"));
  }
  if (status != XML_STATUS_OK) {
    return absl::InvalidArgumentError(Cat("malformed XML at line ",
                                          XML_GetCurrentLineNumber(parser.get()), ", column ",
                                          XML_GetCurrentColumnNumber(parser.get()), ": ",
                                          XML_ErrorString(XML_GetErrorCode(parser.get()))));
  }
  if (!builder.root.has_value()) return absl::InvalidArgumentError("the XML document is empty");
  return std::move(*builder.root);
}

}  // namespace amt::gateway::xml
