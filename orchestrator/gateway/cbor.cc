#include "orchestrator/gateway/cbor.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace amt::gateway {
namespace {

enum Major : uint8_t {
  kUnsigned = 0,
  kNegative = 1,
  kBytes = 2,
  kText = 3,
  kArray = 4,
  kMap = 5,
  kTag = 6
};

// The item's head: its major type and an argument, in the shortest form.
void Head(Major major, uint64_t argument, std::string* out) {
  const auto put = [out](uint64_t value, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>(value >> (8 * i)));
  };
  const uint8_t type = static_cast<uint8_t>(major << 5);
  if (argument < 24) {
    out->push_back(static_cast<char>(type | argument));
  } else if (argument <= 0xff) {
    out->push_back(static_cast<char>(type | 24));
    put(argument, 1);
  } else if (argument <= 0xffff) {
    out->push_back(static_cast<char>(type | 25));
    put(argument, 2);
  } else if (argument <= 0xffffffff) {
    out->push_back(static_cast<char>(type | 26));
    put(argument, 4);
  } else {
    out->push_back(static_cast<char>(type | 27));
    put(argument, 8);
  }
}

void Double(double value, std::string* out) {
  out->push_back(static_cast<char>(0xfb));
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(bits >> (8 * i)));
}

void Number(const nlohmann::json& value, std::string* out) {
  if (value.is_number_unsigned()) {
    Head(kUnsigned, value.get<uint64_t>(), out);
  } else if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v >= 0) {
      Head(kUnsigned, static_cast<uint64_t>(v), out);
    } else {
      Head(kNegative, static_cast<uint64_t>(-(v + 1)), out);
    }
  } else {
    Double(value.get<double>(), out);
  }
}

void Encode(const nlohmann::json& value, const std::set<std::string, std::less<>>& timestamps,
            std::string* out) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      out->push_back(static_cast<char>(0xf6));
      return;
    case nlohmann::json::value_t::boolean:
      out->push_back(static_cast<char>(value.get<bool>() ? 0xf5 : 0xf4));
      return;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      Number(value, out);
      return;
    case nlohmann::json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      Head(kText, text.size(), out);
      out->append(text);
      return;
    }
    case nlohmann::json::value_t::binary: {
      const auto& bytes = value.get_binary();
      Head(kBytes, bytes.size(), out);
      out->append(bytes.begin(), bytes.end());
      return;
    }
    case nlohmann::json::value_t::array:
      Head(kArray, value.size(), out);
      for (const auto& item : value) Encode(item, timestamps, out);
      return;
    case nlohmann::json::value_t::object:
      Head(kMap, value.size(), out);
      for (const auto& [key, member] : value.items()) {
        Head(kText, key.size(), out);
        out->append(key);
        if (member.is_number() && timestamps.contains(key)) {
          Head(kTag, 1, out);
          Number(member, out);
        } else if (member.is_array() && timestamps.contains(key)) {
          // A list of timestamps (GetMetricData's Timestamps): each number tagged.
          Head(kArray, member.size(), out);
          for (const auto& item : member) {
            if (item.is_number()) Head(kTag, 1, out);
            Encode(item, timestamps, out);
          }
        } else {
          Encode(member, timestamps, out);
        }
      }
      return;
  }
}

}  // namespace

std::string EncodeCbor(const nlohmann::json& value,
                       const std::set<std::string, std::less<>>& timestamp_members) {
  std::string out;
  Encode(value, timestamp_members, &out);
  return out;
}

namespace {

// A reader of one data item at a time; every method returns false on malformed input.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool AtEnd() const { return at_ == bytes_.size(); }

  bool Item(nlohmann::json* out, int depth = 0) {
    if (depth > kMaxDepth || at_ >= bytes_.size()) return false;
    const auto initial = static_cast<uint8_t>(bytes_[at_++]);
    const uint8_t major = initial >> 5;
    const uint8_t info = initial & 0x1f;
    if (major == 7) return Simple(info, out);
    if (info == 31) return Indefinite(major, out, depth);
    uint64_t argument = 0;
    if (!Argument(info, &argument)) return false;
    switch (major) {
      case kUnsigned:
        *out = argument;
        return true;
      case kNegative:
        if (argument > static_cast<uint64_t>(INT64_MAX)) return false;
        *out = -1 - static_cast<int64_t>(argument);
        return true;
      case kBytes:
      case kText: {
        if (argument > bytes_.size() - at_) return false;
        std::string text(bytes_.substr(at_, argument));
        at_ += argument;
        if (major == kText) {
          *out = std::move(text);
        } else {
          *out = nlohmann::json::binary(std::vector<uint8_t>(text.begin(), text.end()));
        }
        return true;
      }
      case kArray:
        *out = nlohmann::json::array();
        for (uint64_t i = 0; i < argument; ++i) {
          nlohmann::json item;
          if (!Item(&item, depth + 1)) return false;
          out->push_back(std::move(item));
        }
        return true;
      case kMap:
        *out = nlohmann::json::object();
        for (uint64_t i = 0; i < argument; ++i) {
          if (!Member(out, depth)) return false;
        }
        return true;
      default:  // kTag: the tagged item itself (tag 1's epoch seconds stay a number)
        return Item(out, depth + 1);
    }
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool Argument(uint8_t info, uint64_t* out) {
    if (info < 24) {
      *out = info;
      return true;
    }
    if (info > 27) return false;
    const size_t size = size_t{1} << (info - 24);
    if (size > bytes_.size() - at_) return false;
    *out = 0;
    for (size_t i = 0; i < size; ++i) *out = (*out << 8) | static_cast<uint8_t>(bytes_[at_++]);
    return true;
  }

  bool Member(nlohmann::json* object, int depth) {
    nlohmann::json key;
    nlohmann::json value;
    if (!Item(&key, depth + 1) || !key.is_string() || !Item(&value, depth + 1)) return false;
    (*object)[key.get<std::string>()] = std::move(value);
    return true;
  }

  bool Simple(uint8_t info, nlohmann::json* out) {
    uint64_t bits = 0;
    switch (info) {
      case 20:
        *out = false;
        return true;
      case 21:
        *out = true;
        return true;
      case 22:
      case 23:
        *out = nullptr;
        return true;
      case 25: {  // half precision
        if (!Argument(info, &bits)) return false;
        const int exponent = static_cast<int>((bits >> 10) & 0x1f);
        const double mantissa = static_cast<double>(bits & 0x3ff);
        double value = exponent == 0    ? std::ldexp(mantissa, -24)
                       : exponent == 31 ? (mantissa == 0 ? INFINITY : NAN)
                                        : std::ldexp(mantissa + 1024, exponent - 25);
        *out = (bits & 0x8000) != 0 ? -value : value;
        return true;
      }
      case 26:
        if (!Argument(info, &bits)) return false;
        *out = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
        return true;
      case 27:
        if (!Argument(info, &bits)) return false;
        *out = std::bit_cast<double>(bits);
        return true;
      default:
        return false;
    }
  }

  // An indefinite-length string, array or map, ended by the "break" byte 0xff.
  bool Indefinite(uint8_t major, nlohmann::json* out, int depth) {
    const auto at_break = [this] {
      if (at_ < bytes_.size() && static_cast<uint8_t>(bytes_[at_]) == 0xff) {
        ++at_;
        return true;
      }
      return false;
    };
    if (major == kArray || major == kMap) {
      *out = major == kArray ? nlohmann::json::array() : nlohmann::json::object();
      while (!at_break()) {
        if (at_ >= bytes_.size()) return false;
        if (major == kMap) {
          if (!Member(out, depth)) return false;
        } else {
          nlohmann::json item;
          if (!Item(&item, depth + 1)) return false;
          out->push_back(std::move(item));
        }
      }
      return true;
    }
    if (major != kText && major != kBytes) return false;
    std::string joined;
    while (!at_break()) {
      nlohmann::json chunk;
      if (at_ >= bytes_.size() || (static_cast<uint8_t>(bytes_[at_]) >> 5) != major ||
          !Item(&chunk, depth + 1)) {
        return false;
      }
      if (major == kText) {
        joined += chunk.get<std::string>();
      } else {
        const auto& b = chunk.get_binary();
        joined.append(b.begin(), b.end());
      }
    }
    if (major == kText) {
      *out = std::move(joined);
    } else {
      *out = nlohmann::json::binary(std::vector<uint8_t>(joined.begin(), joined.end()));
    }
    return true;
  }

  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

std::optional<nlohmann::json> DecodeCbor(std::string_view bytes) {
  Reader reader(bytes);
  nlohmann::json value;
  if (!reader.Item(&value) || !reader.AtEnd()) return std::nullopt;
  return value;
}

}  // namespace amt::gateway
