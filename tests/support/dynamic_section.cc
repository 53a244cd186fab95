#include "tests/support/dynamic_section.h"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "tests/support/process.h"

namespace nvrtc_cache::testing {
namespace {

template <typename T>
T read_at(const std::string& bytes, std::size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) throw std::runtime_error("truncated ELF file");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace

std::vector<std::string> needed_libraries(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto header = read_at<Elf64_Ehdr>(bytes, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    throw std::runtime_error(path + " is not a 64-bit ELF file");
  }
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    const auto section = read_at<Elf64_Shdr>(bytes, header.e_shoff + std::size_t{i} * header.e_shentsize);
    if (section.sh_type != SHT_DYNAMIC) continue;
    const auto strings = read_at<Elf64_Shdr>(bytes, header.e_shoff + std::size_t{section.sh_link} * header.e_shentsize);
    std::vector<std::string> needed;
    for (std::size_t at = section.sh_offset; at + sizeof(Elf64_Dyn) <= section.sh_offset + section.sh_size;
         at += sizeof(Elf64_Dyn)) {
      const auto entry = read_at<Elf64_Dyn>(bytes, at);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED) continue;
      const std::size_t name_at = strings.sh_offset + entry.d_un.d_val;
      if (name_at >= bytes.size()) throw std::runtime_error("bad DT_NEEDED offset in " + path);
      needed.emplace_back(bytes.c_str() + name_at);
    }
    return needed;
  }
  throw std::runtime_error(path + " has no dynamic section");
}

bool needs_nvrtc(const std::string& path) {
  for (const std::string& library : needed_libraries(path)) {
    if (library.rfind("libnvrtc", 0) == 0 && library.rfind("libnvrtc-builtins", 0) != 0) return true;
  }
  return false;
}

std::string python_binary(const std::string& python) {
  const ProcessResult r = run_process({"/usr/bin/env", python, "-c", "import sys; print(sys.executable)"});
  std::string path = r.out.substr(0, r.out.find('\n'));
  if (r.exit_code != 0 || path.empty()) return {};
  return std::filesystem::canonical(path).string();
}

}  // namespace nvrtc_cache::testing
