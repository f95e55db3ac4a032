// Status helpers shared by every amt-local library: RETURN_IF_ERROR and ASSIGN_OR_RETURN.
#ifndef AMT_COMMON_STATUS_MACROS_H_
#define AMT_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define AMT_CONCAT_INNER_(a, b) a##b
#define AMT_CONCAT_(a, b) AMT_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status amt_status_ = (expr);       \
    if (!amt_status_.ok()) return amt_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` assigns the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  AMT_ASSIGN_OR_RETURN_IMPL_(AMT_CONCAT_(amt_statusor_, __LINE__), lhs, expr)
#define AMT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // AMT_COMMON_STATUS_MACROS_H_
