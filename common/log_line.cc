#include "common/log_line.h"

#include "common/utf8.h"

namespace amt {

std::string SageMakerLogLine(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  std::string out;
  out.reserve(line.size());
  for (const char c : line) {
    if (c == '\t') {
      out += "#011";
    } else if (c != '\r') {
      out += c;
    }
  }
  // Tabs and carriage returns are ASCII: dropping or replacing them never splits a sequence.
  return ReplaceInvalidUtf8(out);
}

}  // namespace amt
