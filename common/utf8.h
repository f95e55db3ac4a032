// UTF-8 checks shared by the edges that take bytes from outside: the HTTP gateway (request bodies
// must be UTF-8) and the log pipeline (a trainer may print anything).
#ifndef AMT_COMMON_UTF8_H_
#define AMT_COMMON_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace amt {

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), nullopt when all of it is.
std::optional<size_t> InvalidUtf8Offset(std::string_view text);

// `text` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string ReplaceInvalidUtf8(std::string_view text);

}  // namespace amt

#endif  // AMT_COMMON_UTF8_H_
