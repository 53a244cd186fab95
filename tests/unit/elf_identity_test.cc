// The on-disk ELF reader (util/elf_identity.h): real objects read as the loader sees them (the
// build-id of this test's own executable equals the one of its loaded image; the toolkit's NVRTC and
// its SONAME), and hostile files: every truncation of a real object, and headers, notes and dynamic
// sections whose offsets, sizes and counts point past the file or overflow. The reader must report
// them and never ask for a byte outside the file.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "shim/interpose/library_identity.h"
#include "util/elf_identity.h"
#include "util/binary_io.h"

namespace nvrtc_cache {
namespace {

using util::ElfIdentity;
using util::read_elf_identity;

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The reader over `file`, failing the test if it ever asks for bytes outside it.
std::optional<ElfIdentity> read_checked(std::string_view file, std::string& why) {
  return read_elf_identity(
      file.size(),
      [file](std::uint64_t offset, std::size_t size, char* out) {
        EXPECT_TRUE(offset <= file.size() && size <= file.size() - offset) << offset << "+" << size;
        if (offset > file.size() || size > file.size() - offset) return false;
        std::memcpy(out, file.data() + offset, size);
        return true;
      },
      why);
}

void put(std::string& file, std::size_t at, std::uint64_t value, std::size_t bytes) {
  util::store_le(file.data() + at, value, bytes);
}

// A minimal ELF64 shared object: header, three program headers (PT_LOAD of the whole file, PT_NOTE,
// PT_DYNAMIC), a GNU build-id note, a dynamic section (DT_STRTAB, DT_STRSZ, DT_SONAME) and its strings.
struct Crafted {
  static constexpr std::size_t kPhoff = 64, kNote = 64 + 3 * 56, kDynamic = kNote + 16 + 8,
                               kStrings = kDynamic + 4 * 16;
  std::string file = std::string(kStrings + 32, '\0');
  Crafted() {
    std::memcpy(file.data(), ELFMAG, SELFMAG);
    file[EI_CLASS] = ELFCLASS64;
    file[EI_DATA] = ELFDATA2LSB;
    file[EI_VERSION] = EV_CURRENT;
    put(file, 16, ET_DYN, 2);
    put(file, 18, EM_X86_64, 2);
    put(file, 32, kPhoff, 8);
    put(file, 54, 56, 2);
    put(file, 56, 3, 2);
    segment(0, PT_LOAD, 0, file.size());
    segment(1, PT_NOTE, kNote, 24);
    segment(2, PT_DYNAMIC, kDynamic, 64);
    put(file, kNote, 4, 4);      // name size
    put(file, kNote + 4, 8, 4);  // desc size
    put(file, kNote + 8, NT_GNU_BUILD_ID, 4);
    std::memcpy(file.data() + kNote + 12, "GNU", 4);
    std::memcpy(file.data() + kNote + 16, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    dynamic(0, DT_STRTAB, kStrings);
    dynamic(1, DT_STRSZ, 32);
    dynamic(2, DT_SONAME, 1);
    dynamic(3, DT_NULL, 0);
    std::memcpy(file.data() + kStrings + 1, "libnvrtc.so.13", 15);
  }
  void segment(std::size_t i, std::uint32_t type, std::uint64_t offset, std::uint64_t size) {
    const std::size_t at = kPhoff + i * 56;
    put(file, at, type, 4);
    put(file, at + 8, offset, 8);
    put(file, at + 16, offset, 8);  // vaddr == offset
    put(file, at + 32, size, 8);
    put(file, at + 40, size, 8);
    put(file, at + 48, type == PT_LOAD ? 0x1000 : 4, 8);
  }
  void dynamic(std::size_t i, std::uint64_t tag, std::uint64_t value) {
    put(file, kDynamic + i * 16, tag, 8);
    put(file, kDynamic + i * 16 + 8, value, 8);
  }
};

TEST(ElfIdentity, ThisExecutablesBuildIdIsItsLoadedImages) {
  const std::string self = read_whole("/proc/self/exe");
  std::string why;
  const std::optional<ElfIdentity> id = read_checked(self, why);
  ASSERT_TRUE(id) << why;
  const std::string loaded = shim::interpose::build_id_of_object_containing(reinterpret_cast<const void*>(&read_whole));
  ASSERT_FALSE(loaded.empty());
  EXPECT_EQ(id->build_id, loaded);
  EXPECT_FALSE(id->soname);  // an executable has none
}

TEST(ElfIdentity, TheToolkitNvrtcIsASharedObjectNamedLibnvrtc) {
  std::ifstream in(NVRTC_CACHE_REAL_NVRTC_PATH, std::ios::binary);
  ASSERT_TRUE(in);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  std::string why;
  const std::optional<ElfIdentity> id = read_elf_identity(
      size,
      [&in](std::uint64_t offset, std::size_t n, char* out) {
        in.seekg(static_cast<std::streamoff>(offset));
        return static_cast<bool>(in.read(out, static_cast<std::streamsize>(n)));
      },
      why);
  ASSERT_TRUE(id) << why;
  EXPECT_EQ(id->type, ET_DYN);
  EXPECT_EQ(id->soname, "libnvrtc.so.13");
  EXPECT_EQ(id->build_id.size(), 20u);
}

TEST(ElfIdentity, ACraftedObjectReadsBack) {
  const Crafted c;
  std::string why;
  const std::optional<ElfIdentity> id = read_checked(c.file, why);
  ASSERT_TRUE(id) << why;
  EXPECT_EQ(id->build_id, "\x01\x02\x03\x04\x05\x06\x07\x08");
  EXPECT_EQ(id->soname, "libnvrtc.so.13");
  EXPECT_EQ(id->machine, EM_X86_64);
}

TEST(ElfIdentity, EveryTruncationIsReportedOrReadWithinTheFile) {
  const std::string self = read_whole("/proc/self/exe").substr(0, 1 << 14);
  const Crafted c;
  for (const std::string* file : {&self, &c.file}) {
    for (std::size_t n = 0; n < file->size(); n += (n < 1024 ? 1 : 61)) {
      std::string why;
      const std::optional<ElfIdentity> id = read_checked(std::string_view(*file).substr(0, n), why);
      EXPECT_TRUE(id || !why.empty()) << n;
    }
  }
}

TEST(ElfIdentity, HostileOffsetsSizesAndCountsAreReported) {
  struct Case {
    const char* what;
    void (*edit)(Crafted&);
  };
  const Case cases[] = {
      {"not ELF", [](Crafted& c) { c.file[0] = 'X'; }},
      {"32-bit", [](Crafted& c) { c.file[EI_CLASS] = ELFCLASS32; }},
      {"big-endian", [](Crafted& c) { c.file[EI_DATA] = ELFDATA2MSB; }},
      {"program headers past the end", [](Crafted& c) { put(c.file, 32, ~0ull - 10, 8); }},
      {"too many program headers", [](Crafted& c) { put(c.file, 56, 0xffff, 2); }},
      {"no program headers", [](Crafted& c) { put(c.file, 56, 0, 2); }},
      {"odd program header size", [](Crafted& c) { put(c.file, 54, 32, 2); }},
      {"note segment past the end", [](Crafted& c) { c.segment(1, PT_NOTE, ~0ull - 4, 24); }},
      {"note segment size overflows", [](Crafted& c) { c.segment(1, PT_NOTE, Crafted::kNote, ~0ull); }},
      {"note name past the segment", [](Crafted& c) { put(c.file, Crafted::kNote, 0xffffffff, 4); }},
      {"note desc past the segment", [](Crafted& c) { put(c.file, Crafted::kNote + 4, 0xfffffff0, 4); }},
      {"dynamic segment past the end", [](Crafted& c) { c.segment(2, PT_DYNAMIC, c.file.size() - 8, 64); }},
      {"SONAME past its table", [](Crafted& c) { c.dynamic(2, DT_SONAME, 32); }},
      {"string table outside every load segment", [](Crafted& c) { c.dynamic(0, DT_STRTAB, ~0ull - 1); }},
      {"string table size past the file",
       [](Crafted& c) {
         c.dynamic(1, DT_STRSZ, ~0ull);
         c.dynamic(2, DT_SONAME, ~0ull - 1);
       }},
      {"SONAME not terminated", [](Crafted& c) { std::memset(c.file.data() + Crafted::kStrings, 'a', 32); }},
      {"SONAME without a string table", [](Crafted& c) { c.dynamic(0, DT_DEBUG, 0); }},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.what);
    Crafted c;
    test.edit(c);
    std::string why;
    EXPECT_FALSE(read_checked(c.file, why));
    EXPECT_FALSE(why.empty());
  }
}

TEST(ElfIdentity, AnObjectWithoutBuildIdOrSonameSaysSo) {
  Crafted c;
  put(c.file, Crafted::kNote + 8, NT_GNU_ABI_TAG, 4);
  c.dynamic(2, DT_NULL, 0);
  std::string why;
  const std::optional<ElfIdentity> id = read_checked(c.file, why);
  ASSERT_TRUE(id) << why;
  EXPECT_TRUE(id->build_id.empty());
  EXPECT_FALSE(id->soname);
}

}  // namespace
}  // namespace nvrtc_cache
