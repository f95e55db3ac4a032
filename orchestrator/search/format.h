// How sampled hyperparameter values are written for the trainer. SageMaker passes every
// hyperparameter as a string (hyperparameters.json, SM_HP_*), so strategies produce strings.
#ifndef AMT_ORCHESTRATOR_SEARCH_FORMAT_H_
#define AMT_ORCHESTRATOR_SEARCH_FORMAT_H_

#include <cstdint>
#include <string>

namespace amt::search {

// Integers in plain decimal ("-12", "300").
std::string FormatInteger(int64_t v);

// The shortest text that parses back to exactly `v` (std::to_chars), with Python's repr() rule for
// the notation: fixed notation when v == 0 or 1e-4 <= |v| < 1e16 ("0.001", "1000000"), otherwise
// scientific with a signed two-digit-minimum exponent ("1e-05", "2.5e+16"). Unlike Python, whole
// numbers carry no ".0" ("3", not "3.0"): int("3") and float("3") both accept it, and trainers that
// parse continuous values as floats see no difference. Non-finite values give "nan", "inf", "-inf"
// (strategies never produce them).
std::string FormatContinuous(double v);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_FORMAT_H_
