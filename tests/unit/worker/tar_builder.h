// TarBuilder: crafts tar archives member by member for the worker's tests, including the
// hostile ones no archiver writes from a folder (a member under a symbolic link member, a ".."
// path, a header promising more data than follows). ustar headers; names up to 100 bytes.
#ifndef AMT_TESTS_UNIT_WORKER_TAR_BUILDER_H_
#define AMT_TESTS_UNIT_WORKER_TAR_BUILDER_H_

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace amt::worker::testing {

class TarBuilder {
 public:
  TarBuilder& File(const std::string& name, const std::string& data, unsigned mode = 0644) {
    Header(name, '0', data.size(), mode, "");
    bytes_ += data;
    bytes_.append(Padding(data.size()), '\0');
    return *this;
  }
  TarBuilder& Dir(const std::string& name, unsigned mode = 0755) {
    Header(name, '5', 0, mode, "");
    return *this;
  }
  TarBuilder& Symlink(const std::string& name, const std::string& target) {
    Header(name, '2', 0, 0777, target);
    return *this;
  }
  TarBuilder& HardLink(const std::string& name, const std::string& target) {
    Header(name, '1', 0, 0644, target);
    return *this;
  }
  // A regular file's header that promises `size` bytes, and only `data` after it: a tar bomb's
  // member without its gigabytes (an extractor must refuse it from the header alone).
  TarBuilder& FileHeaderOnly(const std::string& name, uint64_t size, const std::string& data) {
    Header(name, '0', size, 0644, "");
    bytes_ += data;
    bytes_.append(Padding(data.size()), '\0');
    return *this;
  }

  // The archive: the members, then the two zero blocks that end it.
  std::string Bytes() const { return bytes_ + std::string(1024, '\0'); }

  // Writes the archive gzip-compressed (as sourcedir.tar.gz is) to `path`.
  void WriteGz(const std::filesystem::path& path) const {
    std::filesystem::create_directories(path.parent_path());
    gzFile file = gzopen(path.c_str(), "wb9");
    const std::string bytes = Bytes();
    gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(file);
  }

 private:
  static size_t Padding(size_t size) { return (512 - size % 512) % 512; }

  void Header(const std::string& name, char type, uint64_t size, unsigned mode,
              const std::string& link) {
    std::array<char, 512> h{};
    std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
    std::snprintf(h.data() + 100, 8, "%07o", mode);
    std::snprintf(h.data() + 108, 8, "%07o", 0u);
    std::snprintf(h.data() + 116, 8, "%07o", 0u);
    if (size < (uint64_t{1} << 33)) {
      std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(size));
    } else {  // GNU's base-256: 0x80, then the size big-endian
      h[124] = static_cast<char>(0x80);
      for (int i = 11; i > 0; --i, size >>= 8) h[124 + i] = static_cast<char>(size & 0xFF);
    }
    std::snprintf(h.data() + 136, 12, "%011o", 1'700'000'000u);
    h[156] = type;
    std::memcpy(h.data() + 157, link.data(), std::min<size_t>(link.size(), 100));
    std::memcpy(h.data() + 257, "ustar", 6);
    std::memcpy(h.data() + 263, "00", 2);
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (char c : h) sum += static_cast<unsigned char>(c);
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    h[155] = ' ';
    bytes_.append(h.data(), h.size());
  }

  std::string bytes_;
};

}  // namespace amt::worker::testing

#endif  // AMT_TESTS_UNIT_WORKER_TAR_BUILDER_H_
