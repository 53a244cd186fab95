// The program-name rule (keying/program_name_rule.h), the key without the program's directory, and
// the scan of texts for what reveals the name (direct/program_name_scan.h). The rule's outcomes
// with the real NVRTC are in tests/integration/shim_program_name_test.cc.
#include <gtest/gtest.h>

#include "direct/program_name_scan.h"
#include "keying/cache_key.h"
#include "keying/program_name_rule.h"

namespace nvrtc_cache {
namespace {

using direct::ProgramNameScan;
using keying::WorkingDirectoryUse;

TEST(ProgramNameRule, OnlyAbsoluteNamesWithOptionsThatEmbedNoPath) {
  using keying::program_directory_can_be_left_out;
  EXPECT_TRUE(program_directory_can_be_left_out("/tmp/tmpab12/kern.cu", WorkingDirectoryUse::kNone));
  EXPECT_FALSE(program_directory_can_be_left_out("/tmp/tmpab12/kern.cu", WorkingDirectoryUse::kAlways));
  EXPECT_FALSE(
      program_directory_can_be_left_out("/tmp/tmpab12/kern.cu", WorkingDirectoryUse::kThroughFoundRelativePaths));
  EXPECT_FALSE(program_directory_can_be_left_out("kern.cu", WorkingDirectoryUse::kNone));
  EXPECT_FALSE(program_directory_can_be_left_out("sub/kern.cu", WorkingDirectoryUse::kNone));
  EXPECT_FALSE(program_directory_can_be_left_out("/tmp/dir/", WorkingDirectoryUse::kNone));
  EXPECT_FALSE(program_directory_can_be_left_out(std::nullopt, WorkingDirectoryUse::kNone));
  EXPECT_EQ(keying::program_directory("/tmp/tmpab12/kern.cu"), "/tmp/tmpab12/");
  EXPECT_EQ(keying::program_file_name("/tmp/tmpab12/kern.cu"), "kern.cu");
}

TEST(ProgramNameRule, TheKeyWithoutTheDirectoryNamesTheFileAndNeverEqualsOneWithIt) {
  keying::ProgramInputs a;
  a.name = "/tmp/tmpaaaa/kern.cu";
  a.source = "__global__ void k() {}\n";
  a.working_directory_use = WorkingDirectoryUse::kNone;
  a.program_directory_in_key = false;
  keying::ProgramInputs b = a;
  b.name = "/var/tmp/other-directory/kern.cu";
  EXPECT_EQ(keying::compute_key(a), keying::compute_key(b));
  EXPECT_NE(keying::compute_key_with_program_directory(a), keying::compute_key_with_program_directory(b));
  EXPECT_NE(keying::compute_key(a), keying::compute_key_with_program_directory(a));
  b.name = "/tmp/tmpaaaa/other.cu";  // the file name stays in the key
  EXPECT_NE(keying::compute_key(a), keying::compute_key(b));
  a.program_directory_in_key = true;
  EXPECT_EQ(keying::compute_key(a), keying::compute_key_with_program_directory(a));
}

bool source_reveals(std::string_view source, std::string_view header = {}) {
  ProgramNameScan scan;
  scan.add_source(source);
  if (!header.empty()) scan.add_header(header);
  return scan.reveals_program_name();
}

TEST(ProgramNameScan, TheNameMacrosAndAssertInTheSourceRevealIt) {
  EXPECT_FALSE(source_reveals("__global__ void k(int* x) { *x = __LINE__; }"));
  EXPECT_TRUE(source_reveals("__global__ void k(const char** s) { *s = __FILE__; }"));
  EXPECT_TRUE(source_reveals("__global__ void k(int* x) { assert(*x); }"));
  EXPECT_TRUE(source_reveals("__global__ void k(int* x) { *x = sizeof(__BASE_FILE__); }"));
  EXPECT_TRUE(source_reveals("__device__ const char* f(const char* s = __builtin_FILE()) { return s; }"));
  EXPECT_TRUE(source_reveals("#define HERE __FILE__\n__global__ void k() {}"));  // conservative
}

TEST(ProgramNameScan, CommentsLiteralsAndLongerIdentifiersDoNot) {
  EXPECT_FALSE(source_reveals("// __FILE__ assert(x)\n/* __FILE__\n assert */ __global__ void k() {}"));
  EXPECT_FALSE(source_reveals("__global__ void k(const char** s) { *s = \"__FILE__ assert(\"; }"));
  EXPECT_FALSE(source_reveals("__global__ void k(char* c) { *c = '\\''; } const char* r = R\"x(__FILE__)x\";"));
  EXPECT_FALSE(source_reveals("__global__ void k(int* x) { static_assert(1 == 1); my_assert(*x); __FILE__X; }"));
  EXPECT_FALSE(source_reveals("__global__ void k(int* x) { *x = 1'000'000; } // it's"));
  EXPECT_TRUE(source_reveals("__global__ void k(int* x) { *x = 1'000; assert(x); }"));
}

TEST(ProgramNameScan, AHeadersOwnCodeNamesTheHeaderNotTheProgram) {
  EXPECT_FALSE(source_reveals("__global__ void k() {}", "__device__ void h(int* x) { assert(*x); }"));
  EXPECT_FALSE(source_reveals("__global__ void k() {}", "const char* here = __FILE__;"));
  EXPECT_FALSE(source_reveals("__global__ void k() {}", "#if __has_builtin(__builtin_FILE)\n#endif\n"));
  EXPECT_FALSE(source_reveals("__global__ void k() {}", "__device__ const char* h() { return __builtin_FILE(); }"));
  // __BASE_FILE__ names the program from anywhere.
  EXPECT_TRUE(source_reveals("__global__ void k() {}", "const char* base = __BASE_FILE__;"));
}

TEST(ProgramNameScan, ADefaultArgumentThatNamesTheCallersFileRevealsItWhereTheSourceCalls) {
  const std::string_view header =
      "#define FILE_HERE() __builtin_FILE()\n"
      "struct loc { static __device__ loc current(const char* f = FILE_HERE(), int line = 0); };\n"
      "__device__ void trace(int level, loc where = loc::current());\n"
      "__device__ void plain(int x = 1, const char* s = nullptr);\n";
  EXPECT_FALSE(source_reveals("__global__ void k() { plain(); }", header));
  // A variable or member named like such a function is not a call of it.
  EXPECT_FALSE(source_reveals("__global__ void k() {}", std::string(header) + "struct it { int current; int f() {"
                                                                              " int tmp = current; return tmp; } };"));
  EXPECT_TRUE(source_reveals("__global__ void k() { loc::current(); }", header));
  EXPECT_TRUE(source_reveals("__global__ void k() { trace(1); }", header));  // through trace's default
  EXPECT_TRUE(source_reveals("__global__ void k() {}",
                             "__device__ void h(const char* f = __builtin_FILE());\n"
                             "__device__ void g() { h(); }\n#define CALL_H() h()\n") == false);
  EXPECT_TRUE(source_reveals("#define CALL_H() h()\n__global__ void k() { CALL_H(); }",
                             "__device__ void h(const char* f = __builtin_FILE());"));
  // Elsewhere (a template parameter's or a member's default) it may be evaluated anywhere.
  EXPECT_TRUE(source_reveals("__global__ void k() {}",
                             "template <int L = __builtin_LINE(), "
                             "const char* F = __builtin_FILE()> struct at {};"));
  EXPECT_TRUE(source_reveals("__global__ void k() {}", "struct m { const char* file = __builtin_FILE(); };"));
}

TEST(ProgramNameScan, MacrosThatReachTheNameRevealItWhereTheSourceUsesThem) {
  const std::string_view header =
      "#define WHERE __FILE__\n#define CHECK(x) \\\n  assert(x)\n#define VERIFY(x) CHECK(x)\n#define PLAIN(x) (x)\n";
  EXPECT_FALSE(source_reveals("__global__ void k(int* x) { *x = PLAIN(1); }", header));
  EXPECT_TRUE(source_reveals("__global__ void k(const char** s) { *s = WHERE; }", header));
  EXPECT_TRUE(source_reveals("__global__ void k(int* x) { CHECK(*x); }", header));
  EXPECT_TRUE(source_reveals("__global__ void k(int* x) { VERIFY(*x); }", header));  // through two macros
  // Used in the header's own code, the macros expand to the header's name.
  EXPECT_FALSE(
      source_reveals("__global__ void k() {}", std::string(header) + "__device__ void h(int* x) { VERIFY(*x); }"));
}

TEST(ProgramNameScan, MacrosDefinedOnTheCommandLine) {
  ProgramNameScan scan;
  scan.add_command_line_macro("HERE=__FILE__");
  scan.add_command_line_macro("ONE");
  scan.add_source("__global__ void k(int* x) { *x = ONE; }");
  EXPECT_FALSE(scan.reveals_program_name());
  scan.add_source("__global__ void j(const char** s) { *s = HERE; }");
  EXPECT_TRUE(scan.reveals_program_name());
}

TEST(ProgramNameScan, MalformedTextsAreScannedWithoutHarm) {
  for (std::string_view text :
       {"\"unterminated", "'", "/* open", "R\"x(open", "#", "#define", "\\", "1'", "#define A(", "a\\\nssert(x)"}) {
    ProgramNameScan scan;
    scan.add_source(text);
    scan.add_header(text);
    (void)scan.reveals_program_name();
  }
  EXPECT_TRUE(source_reveals("__global__ void k(int* x) { as\\\nsert(*x); }"));  // a spliced identifier
}

}  // namespace
}  // namespace nvrtc_cache
