// The key of a handle-based library's call (keying/handle_inputs.h), the nvJitLink and libNVVM
// option checks (libraries/nvjitlink/options.h, libraries/nvvm/options.h) and the HandleEntry encoding
// (core/handle_entry.h): every input changes the key, the keys are pinned, decoding refuses
// malformed bytes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/handle_entry.h"
#include "keying/handle_inputs.h"
#include "libraries/nvjitlink/options.h"
#include "libraries/nvvm/options.h"

namespace nvrtc_cache {
namespace {

keying::HandleInputs sample() {
  keying::HandleInputs in;
  in.library = {13, 0, "build-id"};
  in.options = {"-arch=sm_90", "-lto"};
  in.inputs.push_back({3, false, "a", std::string("LTO-IR\0bytes", 12)});
  in.inputs.push_back({2, true, "/tmp/b.ptx", ".version 9.0"});
  return in;
}

TEST(HandleKey, IsPinnedAcrossBuildsAndSchemasNeverMeet) {
  EXPECT_EQ(keying::to_hex(keying::compute_handle_key(sample(), keying::kLinkKeySchema)),
            "3d3e49b693613c53a59417c538c887b1f3c2ea24484ab24d6732324903eb13a4");
  EXPECT_EQ(keying::to_hex(keying::compute_handle_key(sample(), keying::kNvvmKeySchema)),
            "df476baa6d3aeae73159fa09d7ba12439b4d8f8b7eafd7c41b729a96ae305000");
}

TEST(HandleKey, EveryInputChangesIt) {
  const keying::CacheKey base = keying::compute_handle_key(sample(), keying::kLinkKeySchema);
  const auto differs = [&](auto&& change) {
    keying::HandleInputs in = sample();
    change(in);
    return keying::compute_handle_key(in, keying::kLinkKeySchema) != base;
  };
  EXPECT_TRUE(differs([](auto& in) { in.library.minor = 5; }));
  EXPECT_TRUE(differs([](auto& in) { in.library.build_id = "other"; }));
  EXPECT_TRUE(differs([](auto& in) { in.options[1] = "-ptx"; }));
  EXPECT_TRUE(differs([](auto& in) { std::swap(in.options[0], in.options[1]); }));
  EXPECT_TRUE(differs([](auto& in) { std::swap(in.inputs[0], in.inputs[1]); }));
  EXPECT_TRUE(differs([](auto& in) { in.inputs[0].type = 2; }));
  EXPECT_TRUE(differs([](auto& in) { in.inputs[0].name.reset(); }));
  EXPECT_TRUE(differs([](auto& in) { in.inputs[0].name = ""; }));
  EXPECT_TRUE(differs([](auto& in) { in.inputs[1].from_file = false; }));
  EXPECT_TRUE(differs([](auto& in) { in.inputs[1].bytes += " "; }));
  EXPECT_TRUE(differs([](auto& in) { in.inputs.pop_back(); }));
}

TEST(LinkOptions, KnownOptionsAreCachedAndTimeOrUnknownOnesAreNot) {
  const std::vector<std::string> ok = {
      "-arch=sm_90",      "-lto",     "-ptx",     "-O3", "-g", "-lineinfo", "-ftz=1", "-Xptxas=-v", "-kernels-used=k",
      "-split-compile=0", "-verbose", "-no-cache"};
  for (const auto& [major, minor] : {std::pair{12, 9}, std::pair{13, 0}, std::pair{13, 5}}) {
    SCOPED_TRACE(std::to_string(major) + "." + std::to_string(minor));
    EXPECT_FALSE(keying::link_options_not_cacheable(ok, major, minor));
    EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-time"}, major, minor));
    EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-arch"}, major, minor));  // no value
    EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-some-future-option"}, major, minor));
    EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-O"}, major, minor));
    EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-Xnvvm=-v"}, major, minor));
  }
}

// Each 12.x release knows the options its own nvJitLink.h lists: the split-compile options and
// -jump-table-density from 12.3, -no-cache from 12.5, -device-stack-protector from 12.6; -Xnvvm only
// up to 12.2. A major this build does not know caches no option.
TEST(LinkOptions, EachReleaseKnowsTheOptionsItsHeaderLists) {
  const auto cached = [](const char* option, int major, int minor) {
    return !keying::link_options_not_cacheable(std::vector<std::string>{option}, major, minor).has_value();
  };
  EXPECT_TRUE(cached("-Xnvvm=-v", 12, 2));
  EXPECT_FALSE(cached("-Xnvvm=-v", 12, 3));
  EXPECT_FALSE(cached("-split-compile=0", 12, 2));
  EXPECT_TRUE(cached("-split-compile=0", 12, 3));
  EXPECT_TRUE(cached("-jump-table-density=10", 12, 4));
  EXPECT_FALSE(cached("-no-cache", 12, 4));
  EXPECT_TRUE(cached("-no-cache", 12, 5));
  EXPECT_FALSE(cached("-device-stack-protector", 12, 5));
  EXPECT_TRUE(cached("-device-stack-protector", 12, 6));
  EXPECT_TRUE(cached("-device-stack-protector", 13, 0));
  EXPECT_TRUE(cached("-arch=sm_90", 12, 0));
  EXPECT_FALSE(cached("-arch=sm_90", 14, 0));
  EXPECT_FALSE(cached("-arch=sm_90", 11, 8));
  const auto why = keying::link_options_not_cacheable(std::vector<std::string>{"-no-cache"}, 12, 4);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->why.find("-no-cache"), std::string::npos) << why->why;
  EXPECT_NE(why->why.find("12.4"), std::string::npos) << why->why;
  EXPECT_FALSE(why->side_effect);
  const auto timed = keying::link_options_not_cacheable(std::vector<std::string>{"-time"}, 13, 0);
  ASSERT_TRUE(timed.has_value());
  EXPECT_TRUE(timed->side_effect) << "-time is a known option with a side effect, not an unknown one";
}

TEST(NvvmOptions, NvvmOptionsAreCachedAndUnknownOnesAreNot) {
  const std::vector<std::string> ok = {"-arch=compute_90", "-opt=3",      "-g",     "-ftz=1",
                                       "-prec-sqrt=0",     "-prec-div=1", "-fma=1", "-jump-table-density=50",
                                       "-gen-lto"};
  EXPECT_FALSE(keying::nvvm_options_not_cacheable(ok));
  EXPECT_TRUE(keying::nvvm_options_not_cacheable(std::vector<std::string>{"-some-future-option"}));
  EXPECT_TRUE(keying::nvvm_options_not_cacheable(std::vector<std::string>{"-arch="}));
}

core::HandleEntry sample_entry() {
  core::HandleEntry e;
  e.library = core::JitLibrary::nvjitlink;
  e.rc = 0;
  e.outputs = {{0, true, 4, 0,
                "\x7f"
                "ELF",
                true},
               {3, false, 0, 3, "", true},
               core::unavailable_output(),
               {0, true, 0, 0, std::string(1, '\0'), true},  // the NUL nvJitLink writes past an empty log
               {0, true, 3, 0, std::string("ok\0", 3), true}};
  e.nanos = 1234;
  e.description = {{"-arch=sm_90"}, {"a", ""}, 99, std::nullopt};
  return e;
}

TEST(HandleEntry, RoundTripsAndRefusesMalformedBytes) {
  const core::HandleEntry e = sample_entry();
  ASSERT_TRUE(core::is_well_formed(e));
  const std::string bytes = core::encode_handle_entry(e);
  const auto back = core::decode_handle_entry(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->outputs[0].bytes, e.outputs[0].bytes);
  EXPECT_EQ(back->outputs[3].bytes, e.outputs[3].bytes);
  EXPECT_EQ(back->outputs[1].size_rc, 3);
  EXPECT_FALSE(back->outputs[2].available);
  EXPECT_EQ(back->description, e.description);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) EXPECT_FALSE(core::decode_handle_entry(bytes.substr(0, cut)));
  std::string flipped = bytes;
  flipped[12] ^= 1;
  EXPECT_FALSE(core::decode_handle_entry(flipped));
}

// Version 2 adds the library that made it; a version 1 entry (without it) still decodes, and encodes back.
TEST(HandleEntry, LibraryIsVersionTwoAndVersionOneStillDecodes) {
  core::HandleEntry e = sample_entry();
  const std::string v1 = core::encode_handle_entry(e);
  EXPECT_EQ(v1.substr(4, 4), std::string("\x01\0\0\0", 4));
  const auto old = core::decode_handle_entry(v1);
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->description.library);
  EXPECT_EQ(core::encode_handle_entry(*old), v1);
  e.description.library = core::LibraryVersion{13, 0, std::string("\x01\x02", 2)};
  const std::string v2 = core::encode_handle_entry(e);
  EXPECT_EQ(v2.substr(4, 4), std::string("\x02\0\0\0", 4));
  const auto back = core::decode_handle_entry(v2);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->description, e.description);
  for (std::size_t cut = 0; cut < v2.size(); ++cut) EXPECT_FALSE(core::decode_handle_entry(v2.substr(0, cut)));
}

TEST(HandleEntry, OnlyWellFormedEntriesAreStoredOrServed) {
  const auto broken = [](auto&& change) {
    core::HandleEntry e = sample_entry();
    change(e);
    return !core::is_well_formed(e) && !core::decode_handle_entry(core::encode_handle_entry(e));
  };
  EXPECT_TRUE(broken([](auto& e) { e.rc = 99; }));                                   // not a known result
  EXPECT_TRUE(broken([](auto& e) { e.outputs[0].size = 5; }));                       // size without its bytes
  EXPECT_TRUE(broken([](auto& e) { e.outputs[0].bytes += std::string(16, 'x'); }));  // too far past the size
  EXPECT_TRUE(broken([](auto& e) { e.outputs[1].size_written = true; }));            // failed size getter wrote
  EXPECT_TRUE(broken([](auto& e) { e.outputs[1].bytes = "x"; }));                    // failed data getter wrote
  EXPECT_TRUE(broken([](auto& e) { e.outputs[1].data_rc = 0; }));                    // data without a size
  EXPECT_TRUE(broken([](auto& e) { e.outputs[0] = core::unavailable_output(); }));   // only LTO-IR may be absent
  EXPECT_TRUE(broken([](auto& e) { e.outputs.pop_back(); }));                        // the library's outputs, all
  EXPECT_TRUE(broken([](auto& e) { e.library = core::JitLibrary::nvvm; }));          // libNVVM has two
  core::HandleEntry nvvm;
  nvvm.library = core::JitLibrary::nvvm;
  nvvm.rc = 9;  // NVVM_ERROR_COMPILATION
  nvvm.outputs = {{0, true, 0, 0, "", true}, {0, true, 5, 0, "error", true}};
  EXPECT_TRUE(core::decode_handle_entry(core::encode_handle_entry(nvvm)));
  nvvm.rc = 11;  // past NVVM_ERROR_CANCELLED
  EXPECT_FALSE(core::decode_handle_entry(core::encode_handle_entry(nvvm)));
}

}  // namespace
}  // namespace nvrtc_cache
