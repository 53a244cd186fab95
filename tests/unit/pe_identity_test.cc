// The on-disk PE reader (util/pe_identity.h) that `nvrtc-cache.exe replay` uses before it loads a
// DLL: a minimal DLL's identity and export name, the identity from the headers alone (a loaded
// module's first page) equal to the file's, the Windows NVRTC's own name where the tests have it, and
// hostile files: every truncation, and offsets, counts and names that point past the file or never end.
// The reader must report them and never ask for a byte outside the file.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/support/pe_image.h"
#include "util/pe_identity.h"
#include "util/binary_io.h"

namespace nvrtc_cache {
namespace {

using testing::minimal_pe_dll;
using util::PeIdentity;

std::optional<PeIdentity> read_checked(std::string_view file, std::string& why) {
  return util::read_pe_identity(
      file.size(),
      [file](std::uint64_t offset, std::size_t size, char* out) {
        EXPECT_TRUE(offset <= file.size() && size <= file.size() - offset) << offset << "+" << size;
        if (offset > file.size() || size > file.size() - offset) return false;
        std::memcpy(out, file.data() + offset, size);
        return true;
      },
      why);
}

void put(std::string& image, std::size_t at, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) image[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

TEST(PeIdentity, AMinimalDllIsReadWithItsIdentityAndName) {
  std::string why;
  const std::optional<PeIdentity> id = read_checked(minimal_pe_dll(), why);
  ASSERT_TRUE(id) << why;
  EXPECT_EQ(id->machine, util::kPeMachineAmd64);
  EXPECT_TRUE(id->dll);
  EXPECT_EQ(id->export_name, std::optional<std::string>("nvrtc64_130_0.dll"));
  EXPECT_EQ(id->build_id, util::pe_build_id(0x68a639d8, 0x2000, 0x1234));
  EXPECT_EQ(id->build_id, std::string("pe:\xd8\x39\xa6\x68\x00\x20\x00\x00\x34\x12\x00\x00", 15));
  // Each field counts: another time stamp, image size or checksum is another identity.
  for (const testing::PeImageFields& other :
       {testing::PeImageFields{.time_date_stamp = 1}, testing::PeImageFields{.size_of_image = 0x3000},
        testing::PeImageFields{.checksum = 0}}) {
    EXPECT_NE(read_checked(minimal_pe_dll(other), why)->build_id, id->build_id);
  }
  // The headers alone (a loaded module's first page) give the same identity.
  EXPECT_EQ(util::read_pe_build_id(std::string_view(minimal_pe_dll()).substr(0, 0x200), why), id->build_id);
}

TEST(PeIdentity, TheWindowsNvrtcNamesItselfAsTheProxysRealDll) {
  // Set by scripts/test.sh (the main test run); the sanitizer run has no Windows NVRTC. The Wine
  // tests (WineCli.Replay*) require it and judge the same DLL through nvrtc-cache.exe.
  const char* dir = std::getenv("NVRTC_CACHE_WINE_NVRTC_DIR");
  if (dir == nullptr) GTEST_SKIP() << "no Windows NVRTC (scripts/windows-nvrtc.sh)";
  std::ifstream in(std::string(dir) + "/nvrtc64_130_0.dll", std::ios::binary);
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string file = whole.str();
  std::string why;
  const std::optional<PeIdentity> id = read_checked(file, why);
  ASSERT_TRUE(id) << why;
  EXPECT_TRUE(id->dll);
  EXPECT_EQ(id->export_name, std::optional<std::string>("nvrtc64_130_0.dll"));
  EXPECT_EQ(util::read_pe_build_id(std::string_view(file).substr(0, 4096), why), id->build_id);
}

TEST(PeIdentity, EveryTruncationIsReportedWithoutAReadOutsideTheFile) {
  const std::string image = minimal_pe_dll();
  for (std::size_t n = 0; n < 0x200 + 40 + 18; ++n) {
    std::string why;
    EXPECT_FALSE(read_checked(std::string_view(image).substr(0, n), why)) << n;
    EXPECT_FALSE(why.empty()) << n;
  }
}

TEST(PeIdentity, HostileOffsetsCountsAndNamesAreReported) {
  const auto refused = [](std::string image, const char* expected) {
    std::string why;
    EXPECT_FALSE(read_checked(image, why)) << expected;
    EXPECT_NE(why.find(expected), std::string::npos) << why;
  };
  std::string image = minimal_pe_dll();
  put(image, 0x3c, 0xfffffff0, 4);  // e_lfanew past the file, and near overflow
  refused(image, "no PE header");
  image = minimal_pe_dll();
  image[0] = 'Z';
  refused(image, "no MZ header");
  image = minimal_pe_dll();
  put(image, 0x58, 0x10b, 2);  // a 32-bit image
  refused(image, "PE32+");
  image = minimal_pe_dll();
  put(image, 0x46, 0xffff, 2);  // NumberOfSections
  refused(image, "implausibly many sections");
  image = minimal_pe_dll();
  put(image, 0x46, 40, 2);  // sections past the file's end
  refused(image, "section table lies outside");
  image = minimal_pe_dll();
  put(image, 0x58 + 112, 0x7fff0000, 4);  // the export directory in no section
  refused(image, "export directory lies outside");
  image = minimal_pe_dll();
  put(image, 0x58 + 240 + 20, 0xfffffe00, 4);  // the section's file bytes past the end
  refused(image, "export directory lies outside");
  image = minimal_pe_dll();
  put(image, 0x200 + 12, 0x0fff, 4);  // the name in no section
  refused(image, "export name lies outside");
  image = minimal_pe_dll();
  std::memset(image.data() + 0x200 + 40, 'a', image.size() - 0x200 - 40);  // never terminated
  refused(image, "unterminated");
  // No export directory: read, with no name.
  image = minimal_pe_dll();
  put(image, 0x58 + 112, 0, 8);
  std::string why;
  const std::optional<PeIdentity> id = read_checked(image, why);
  ASSERT_TRUE(id) << why;
  EXPECT_FALSE(id->export_name);
}

}  // namespace
}  // namespace nvrtc_cache
