// SageMakerLogLine: one line of a trainer's output as SageMaker's logs (CloudWatch) show it, the
// form amt-local stores, shows and matches MetricDefinitions against.
#ifndef AMT_COMMON_LOG_LINE_H_
#define AMT_COMMON_LOG_LINE_H_

#include <string>
#include <string_view>

namespace amt {

// `line` as SageMaker's logs show it: one trailing '\n' dropped, every '\r' dropped (CRLF output
// and progress bars), every '\t' shown as the literal text "#011", and every byte that is not part
// of valid UTF-8 (stray bytes, overlong forms, surrogates, code points past U+10FFFF) replaced by
// U+FFFD, as CloudWatch Logs does, so any bytes a trainer prints can be stored and sent as text.
std::string SageMakerLogLine(std::string_view line);

}  // namespace amt

#endif  // AMT_COMMON_LOG_LINE_H_
