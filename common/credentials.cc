#include "common/credentials.h"

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "common/text.h"

namespace amt::auth {
namespace {

constexpr std::string_view kKeyIdName = "aws_access_key_id";
constexpr std::string_view kSecretName = "aws_secret_access_key";

// One [profile] while it is being read.
struct Section {
  std::string name;
  int line = 0;
  std::map<std::string, int, std::less<>> key_lines;  // key -> line, to refuse repeats
  std::string key_id;
  std::string secret;
};

// Reads the file line by line; `Finish` returns the credentials or the first error. Keeps the
// per-line logic out of one long function.
class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source) {}

  absl::Status Line(int number, std::string_view line);
  // Closes the last profile and moves every credential found into `by_key_id`.
  absl::Status Finish(std::map<std::string, Credential, std::less<>>* by_key_id) &&;

 private:
  absl::Status Error(int line, std::string_view what) const {
    return absl::InvalidArgumentError(text::Cat(source_, ":", line, ": ", what));
  }
  absl::Status Header(int number, std::string_view stripped);
  absl::Status KeyValue(int number, std::string_view stripped);
  absl::Status Close();  // validates and records the open section

  std::string_view source_;
  std::optional<Section> section_;
  std::string current_key_;  // the last key read, for continuation lines
  std::map<std::string, int, std::less<>> section_lines_;  // profile -> line
  std::map<std::string, std::pair<Credential, int>, std::less<>>
      found_;  // id -> (credential, line)
};

absl::Status Parser::Line(int number, std::string_view line) {
  const std::string_view stripped = text::Strip(line);
  if (stripped.empty() || stripped.front() == '#' || stripped.front() == ';') return {};
  if (text::IsSpace(line.front()) && !current_key_.empty()) {
    // configparser's continuation line: part of the previous key's value. Harmless for keys we
    // ignore; a key id or secret spread over lines is a mistake worth reporting.
    if (current_key_ == kKeyIdName || current_key_ == kSecretName) {
      return Error(number, text::Cat("indented line continues ", current_key_,
                                     " (a value must fit on one line)"));
    }
    return {};
  }
  if (stripped.front() == '[') return Header(number, stripped);
  return KeyValue(number, stripped);
}

absl::Status Parser::Header(int number, std::string_view stripped) {
  if (stripped.size() < 3 || stripped.back() != ']') {
    return Error(number, "expected [profile-name]");
  }
  RETURN_IF_ERROR(Close());
  const std::string name(text::Strip(stripped.substr(1, stripped.size() - 2)));
  if (name.empty()) return Error(number, "expected [profile-name]");
  const auto [it, inserted] = section_lines_.emplace(name, number);
  if (!inserted) {
    return Error(number, text::Cat("profile [", name, "] repeats line ", it->second));
  }
  section_.emplace();
  section_->name = name;
  section_->line = number;
  current_key_.clear();
  return {};
}

absl::Status Parser::KeyValue(int number, std::string_view stripped) {
  const size_t separator = stripped.find_first_of("=:");
  if (separator == std::string_view::npos) {
    return Error(number, "expected [profile], key = value, or a comment");
  }
  const std::string key = text::Lower(text::Strip(stripped.substr(0, separator)));
  const std::string_view value = text::Strip(stripped.substr(separator + 1));
  if (key.empty()) return Error(number, "expected a key name before '='");
  if (!section_.has_value()) {
    return Error(number, text::Cat(key, " is outside any [profile] section"));
  }
  const auto [it, inserted] = section_->key_lines.emplace(key, number);
  if (!inserted) {
    return Error(number, text::Cat(key, " in [", section_->name, "] repeats line ", it->second));
  }
  current_key_ = key;
  if (key == kKeyIdName || key == kSecretName) {
    if (value.empty()) return Error(number, text::Cat("empty ", key));
    (key == kKeyIdName ? section_->key_id : section_->secret) = std::string(value);
  }
  return {};
}

absl::Status Parser::Close() {
  if (!section_.has_value()) return {};
  Section section = std::move(*section_);
  section_.reset();
  if (section.key_id.empty() && section.secret.empty()) return {};  // a role or SSO profile
  if (section.key_id.empty() || section.secret.empty()) {
    const std::string_view has = section.key_id.empty() ? kSecretName : kKeyIdName;
    const std::string_view lacks = section.key_id.empty() ? kKeyIdName : kSecretName;
    return Error(section.line,
                 text::Cat("profile [", section.name, "] has ", has, " but no ", lacks));
  }
  const int key_line = section.key_lines.find(kKeyIdName)->second;
  const auto it = found_.find(section.key_id);
  if (it == found_.end()) {
    found_.emplace(section.key_id,
                   std::make_pair(Credential{std::move(section.secret), section.name}, key_line));
  } else if (it->second.first.secret_access_key != section.secret) {
    return Error(key_line, text::Cat("access key id ", section.key_id, " of [", section.name,
                                     "] is also in [", it->second.first.profile, "] (line ",
                                     it->second.second, ") with a different secret"));
  }
  return {};
}

absl::Status Parser::Finish(std::map<std::string, Credential, std::less<>>* by_key_id) && {
  RETURN_IF_ERROR(Close());
  if (found_.empty()) {
    return absl::InvalidArgumentError(text::Cat("no access key in ", source_));
  }
  for (auto& [key_id, entry] : found_) by_key_id->emplace(key_id, std::move(entry.first));
  return {};
}

}  // namespace

absl::StatusOr<Credentials> Credentials::Parse(std::string_view contents,
                                               std::string_view source_name) {
  if (contents.starts_with("\xEF\xBB\xBF")) contents.remove_prefix(3);  // a UTF-8 BOM
  Parser parser(source_name);
  int number = 0;
  for (std::string_view line : text::Split(contents, "\n", /*skip_empty=*/false)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    RETURN_IF_ERROR(parser.Line(number, line));
  }
  Credentials credentials;
  RETURN_IF_ERROR(std::move(parser).Finish(&credentials.by_key_id_));
  return credentials;
}

absl::StatusOr<Credentials> Credentials::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(text::Cat("cannot read credentials file ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return Parse(contents.str(), path);
}

const Credential* Credentials::Find(std::string_view access_key_id) const {
  const auto it = by_key_id_.find(access_key_id);
  return it == by_key_id_.end() ? nullptr : &it->second;
}

std::string Credentials::KeyIdOfProfile(std::string_view profile) const {
  for (const auto& [key_id, credential] : by_key_id_) {
    if (credential.profile == profile) return key_id;
  }
  return "";
}

}  // namespace amt::auth
