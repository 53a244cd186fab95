#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "keying/cache_key.h"
#include "shim/interpose/library_identity.h"

namespace nvrtc_cache::keying {
namespace {

ProgramInputs typical() {
  ProgramInputs in;
  in.library = {13, 0, std::string("\x65\xbe\x0d\xb3", 4)};
  in.name = "axpy.cu";
  in.source = "__global__ void k() {}\n";
  in.headers = {{"a.h", "#define A 1\n"}, {"b.h", "#define B 2\n"}};
  in.options = {"-arch=sm_80", "-std=c++17"};
  in.name_expressions = {"k"};
  in.working_directory = "/home/user";
  in.pwd_variable = "/home/user";
  return in;
}

// Golden vectors pin the encoding (cross-checked with an independent Python hashlib.blake2b encoder):
// changing any of these is a schema change (bump kKeySchema).
TEST(CacheKey, GoldenVectors) {
  EXPECT_EQ(to_hex(compute_key(ProgramInputs{})), "bc7edc6a74adf79af5e80bfd9a52bf3c9a9120a7eadc9ac1ff8efbceed554ca9");
  EXPECT_EQ(to_hex(compute_key(typical())), "6a127a9a46e8f2c0904ec6eb51b95342d7dbbc5e43c37d285c4b8f69c4fdf204");
}

TEST(CacheKey, IsDeterministic) { EXPECT_EQ(compute_key(typical()), compute_key(typical())); }

TEST(CacheKey, EveryFieldChangesTheKey) {
  const CacheKey base = compute_key(typical());
  const std::vector<std::function<void(ProgramInputs&)>> edits = {
      [](ProgramInputs& in) { in.library.major = 12; },
      [](ProgramInputs& in) { in.library.minor = 9; },
      [](ProgramInputs& in) { in.library.build_id = "other"; },
      [](ProgramInputs& in) { in.name = "other.cu"; },
      [](ProgramInputs& in) { in.name.reset(); },
      [](ProgramInputs& in) { in.source += " "; },
      [](ProgramInputs& in) { in.headers[0].include_name = "c.h"; },
      [](ProgramInputs& in) { in.headers[0].content += "\n"; },
      [](ProgramInputs& in) { std::swap(in.headers[0], in.headers[1]); },
      [](ProgramInputs& in) { in.headers.pop_back(); },
      [](ProgramInputs& in) { in.options[0] = "-arch=sm_90"; },
      [](ProgramInputs& in) { std::swap(in.options[0], in.options[1]); },
      [](ProgramInputs& in) { in.options.push_back("-G"); },
      [](ProgramInputs& in) { in.name_expressions.push_back("k2"); },
      [](ProgramInputs& in) { in.name_expressions.clear(); },
      [](ProgramInputs& in) { in.working_directory = "/tmp"; },
      [](ProgramInputs& in) { in.pwd_variable.reset(); },
      [](ProgramInputs& in) { in.pwd_variable = "/tmp"; },
  };
  std::set<CacheKey> seen = {base};
  for (const auto& edit : edits) {
    ProgramInputs in = typical();
    edit(in);
    EXPECT_TRUE(seen.insert(compute_key(in)).second) << "an edit did not change the key (or collided)";
  }
}

TEST(CacheKey, TheWorkingDirectoryIsKeyedOnlyWhereItIsUsed) {
  ProgramInputs in = typical();
  in.working_directory_use = WorkingDirectoryUse::kNone;
  const CacheKey independent = compute_key(in);
  EXPECT_EQ(to_hex(independent), "22b6544de876970ec47061503f3e7d85c231ccb30631978f0b88441bba4d3d8f");
  in.working_directory = "/elsewhere";
  in.pwd_variable.reset();
  EXPECT_EQ(compute_key(in), independent);
  in.working_directory_use = WorkingDirectoryUse::kThroughFoundRelativePaths;
  const CacheKey through_paths = compute_key(in);
  EXPECT_NE(through_paths, independent);
  in.working_directory = "/home/user";
  in.pwd_variable = "/home/user";
  EXPECT_EQ(compute_key(in), through_paths);
  in.working_directory_use = WorkingDirectoryUse::kAlways;
  EXPECT_EQ(compute_key(in), compute_key(typical()));  // the default: keyed, as before
  EXPECT_NE(compute_key(in), independent);
}

TEST(CacheKey, NoTwoFieldSplitsCollide) {
  ProgramInputs a, b;
  a.options = {"ab", "c"};
  b.options = {"a", "bc"};
  EXPECT_NE(compute_key(a), compute_key(b));
  a = b = {};
  a.headers = {{"ab", "c"}};
  b.headers = {{"a", "bc"}};
  EXPECT_NE(compute_key(a), compute_key(b));
  a = b = {};
  a.source = "ab";
  a.name = "c";
  b.source = "a";
  b.name = "bc";
  EXPECT_NE(compute_key(a), compute_key(b));
  a = b = {};  // an option moving into the name-expression list
  a.options = {"x"};
  b.name_expressions = {"x"};
  EXPECT_NE(compute_key(a), compute_key(b));
  a = b = {};  // a NULL name is not the empty name
  a.name = "";
  EXPECT_NE(compute_key(a), compute_key(b));
}

TEST(LibraryIdentity, ReadsTheBuildIdOfALoadedObject) {
  // libc carries a GNU build-id on Debian; an address outside any object has none.
  EXPECT_EQ(shim::interpose::build_id_of_object_containing(reinterpret_cast<const void*>(&printf)).size(), 20u);
  EXPECT_TRUE(shim::interpose::build_id_of_object_containing(reinterpret_cast<const void*>(0x10)).empty());
}

}  // namespace
}  // namespace nvrtc_cache::keying
