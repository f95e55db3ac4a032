#include "worker/toolkit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace amt::worker::toolkit {
namespace {

using nlohmann::json;

constexpr char kTuningObjectiveKey[] = "_tuning_objective_metric";

// Python's repr() of a str: single quotes unless the text holds one and no double quote.
std::string PythonRepr(const std::string& text) {
  const bool use_double =
      text.find('\'') != std::string::npos && text.find('"') == std::string::npos;
  const char quote = use_double ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c == quote) out.push_back('\\');
        out.push_back(c);
    }
  }
  out.push_back(quote);
  return out;
}

// Python's repr() of a float: the shortest digits that read back the same value, written
// positionally when the exponent is in [-4, 16) ("0.0001", "100.0") and as "1e-05" / "1e+16"
// otherwise.
std::string PythonFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buffer[64];
  int precision = 0;
  for (; precision < 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  // buffer: [-]d[.ddd]e[+-]XX
  std::string text = buffer;
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t e = text.find('e');
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string digits = text.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
            digits.substr(static_cast<size_t>(exponent) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  }
  return negative ? "-" + out : out;
}

std::string Repr(const json& value);

// The toolkit's _decode then str(): a string as it is, None as "" (at the top level only).
std::string Str(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return Repr(value);
}

std::string Repr(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "None";
    case json::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case json::value_t::number_integer:
      return std::to_string(value.get<int64_t>());
    case json::value_t::number_unsigned:
      return std::to_string(value.get<uint64_t>());
    case json::value_t::number_float:
      return PythonFloat(value.get<double>());
    case json::value_t::string:
      return PythonRepr(value.get<std::string>());
    case json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out += ", ";
        out += Repr(value[i]);
      }
      return out + "]";
    }
    case json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : value.items()) {
        if (!first) out += ", ";
        first = false;
        out += PythonRepr(k) + ": " + Repr(v);
      }
      return out + "}";
    }
    default:
      return value.dump();
  }
}

}  // namespace

json DecodeHyperparameter(const std::string& value) {
  json decoded = json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (decoded.is_discarded()) return value;
  return decoded;
}

bool IsReservedHyperparameter(const std::string& name) {
  return name == kTuningObjectiveKey || name.rfind("sagemaker_", 0) == 0;
}

json UserHyperparameters(const std::map<std::string, std::string>& hyperparameters) {
  json user = json::object();
  for (const auto& [name, value] : hyperparameters) {
    if (!IsReservedHyperparameter(name)) user[name] = DecodeHyperparameter(value);
  }
  return user;
}

std::string PythonStr(const json& value) { return Str(value); }

std::vector<std::string> ToCmdArgs(const json& user_hyperparameters) {
  std::vector<std::string> args;
  // nlohmann's objects iterate in sorted key order, as the toolkit sorts them.
  for (const auto& [name, value] : user_hyperparameters.items()) {
    args.push_back(name.size() > 1 ? "--" + name : "-" + name);
    if (value.is_object()) {
      std::string joined;
      for (const auto& [k, v] : value.items()) {
        if (!joined.empty()) joined += ",";
        joined += k + "=" + Str(v);
      }
      args.push_back(joined);
    } else {
      args.push_back(Str(value));
    }
  }
  return args;
}

std::string ProcessErrorMessage(const std::string& error_type, int exit_code,
                                const std::string& message,
                                const std::vector<std::string>& command) {
  std::string joined;
  for (const std::string& part : command) {
    if (!joined.empty()) joined += " ";
    joined += part;
  }
  std::ostringstream out;
  out << error_type << ":\nExitCode " << exit_code << "\nErrorMessage \"" << message
      << "\"\nCommand \"" << joined << "\"";
  return out.str();
}

namespace {

// Python's built-in exception classes and what else TK's _PYTHON_ERRORS_ lists.
constexpr const char* kPythonErrors[] = {"BaseException",
                                         "Exception",
                                         "ArithmeticError",
                                         "AssertionError",
                                         "AttributeError",
                                         "BlockingIOError",
                                         "BrokenPipeError",
                                         "BufferError",
                                         "ChildProcessError",
                                         "ConnectionAbortedError",
                                         "ConnectionError",
                                         "ConnectionRefusedError",
                                         "ConnectionResetError",
                                         "EOFError",
                                         "EnvironmentError",
                                         "FileExistsError",
                                         "FileNotFoundError",
                                         "FloatingPointError",
                                         "GeneratorExit",
                                         "IOError",
                                         "ImportError",
                                         "IndentationError",
                                         "IndexError",
                                         "InterruptedError",
                                         "IsADirectoryError",
                                         "KeyError",
                                         "KeyboardInterrupt",
                                         "LookupError",
                                         "MemoryError",
                                         "ModuleNotFoundError",
                                         "NameError",
                                         "NotADirectoryError",
                                         "NotImplementedError",
                                         "OSError",
                                         "OverflowError",
                                         "PermissionError",
                                         "ProcessLookupError",
                                         "RecursionError",
                                         "ReferenceError",
                                         "RuntimeError",
                                         "StopIteration",
                                         "SyntaxError",
                                         "SystemError",
                                         "SystemExit",
                                         "TabError",
                                         "TimeoutError",
                                         "TypeError",
                                         "UnboundLocalError",
                                         "UnicodeDecodeError",
                                         "UnicodeEncodeError",
                                         "UnicodeError",
                                         "UnicodeTranslateError",
                                         "ValueError",
                                         "ZeroDivisionError",
                                         "Invalid requirement",
                                         "ResourceExhaustedError",
                                         "OutOfRangeError",
                                         "InvalidArgumentError"};

bool NamesPythonError(const std::string& line) {
  for (const char* name : kPythonErrors) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

// The lines from the first that names an error to the end, each stripped of spaces and colons
// (and a carriage return) at both ends.
std::vector<std::string> LinesFromFirstError(const std::string& output) {
  std::vector<std::string> kept;
  std::istringstream in(output);
  bool capturing = false;
  for (std::string line; std::getline(in, line);) {
    if (!capturing) capturing = NamesPythonError(line);
    if (!capturing) continue;
    const size_t first = line.find_first_not_of(" :\r");
    const size_t last = line.find_last_not_of(" :\r");
    kept.push_back(first == std::string::npos ? "" : line.substr(first, last - first + 1));
  }
  return kept;
}

}  // namespace

std::string ErrorMessageFromOutput(const std::string& output) {
  const std::vector<std::string> kept = LinesFromFirstError(output);
  // " ".join(line + "\n") then split on "\n": every line after the first starts with a space.
  std::vector<std::string> lines;
  for (size_t i = 0; i < kept.size(); ++i) lines.push_back(i == 0 ? kept[i] : " " + kept[i]);
  std::vector<std::string> unique;
  for (const std::string& line : lines) {
    if (std::find(unique.begin(), unique.end(), line) == unique.end()) unique.push_back(line);
  }
  std::string message;
  for (const std::string& line : unique) message += line + "\n";
  const size_t start = message.find_first_not_of(" \n\t\r");
  const size_t end = message.find_last_not_of(" \n\t\r");
  return start == std::string::npos ? "" : message.substr(start, end - start + 1);
}

}  // namespace amt::worker::toolkit
