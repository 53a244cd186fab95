// The link key (keying/link_inputs.h), the link options check (keying/link_options.h) and the link
// entry's encoding (core/link_entry.h): every input changes the key, the key is pinned, decoding
// refuses malformed bytes.
#include <gtest/gtest.h>

#include <string>

#include "core/link_entry.h"
#include "keying/link_inputs.h"
#include "keying/link_options.h"

namespace nvrtc_cache {
namespace {

keying::LinkInputs sample() {
  keying::LinkInputs in;
  in.library = {13, 0, "build-id"};
  in.options = {"-arch=sm_90", "-lto"};
  in.inputs.push_back({3, false, "a", std::string("LTO-IR\0bytes", 12)});
  in.inputs.push_back({2, true, "/tmp/b.ptx", ".version 9.0"});
  return in;
}

TEST(LinkKey, IsPinnedAcrossBuilds) {
  EXPECT_EQ(keying::to_hex(keying::compute_link_key(sample())),
            keying::to_hex(keying::compute_link_key(sample())));
  EXPECT_EQ(keying::to_hex(keying::compute_link_key(sample())),
            "97185067268acb1434c801440affb2ebbd80f6fc1b8c932ec847998b3d9929d9");
}

TEST(LinkKey, EveryInputChangesIt) {
  const keying::CacheKey base = keying::compute_link_key(sample());
  const auto differs = [&](auto&& change) {
    keying::LinkInputs in = sample();
    change(in);
    return keying::compute_link_key(in) != base;
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
  const std::vector<std::string> ok = {"-arch=sm_90", "-lto", "-ptx", "-O3", "-g", "-lineinfo", "-ftz=1",
                                       "-Xptxas=-v", "-kernels-used=k", "-split-compile=0", "-verbose", "-no-cache"};
  EXPECT_FALSE(keying::link_options_not_cacheable(ok));
  EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-time"}));
  EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-arch"}));  // no value
  EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-some-future-option"}));
  EXPECT_TRUE(keying::link_options_not_cacheable(std::vector<std::string>{"-O"}));
}

core::LinkEntry sample_entry() {
  core::LinkEntry e;
  e.complete_rc = 0;
  e.cubin = {0, true, 4, 0, "\x7f" "ELF", true};
  e.ptx = {3, false, 0, 3, "", true};
  e.error_log = {0, true, 0, 0, "", true};
  e.info_log = {0, true, 3, 0, std::string("ok\0", 3), true};
  e.link_nanos = 1234;
  e.description = {{"-arch=sm_90"}, {"a", ""}, 99};
  return e;
}

TEST(LinkEntry, RoundTripsAndRefusesMalformedBytes) {
  core::LinkEntry e = sample_entry();
  e.error_log.bytes = std::string(1, '\0');  // a NUL past an empty log's size of 0, as nvJitLink writes
  ASSERT_TRUE(core::is_well_formed(e));
  const std::string bytes = core::encode_link_entry(e);
  const auto back = core::decode_link_entry(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cubin.bytes, e.cubin.bytes);
  EXPECT_EQ(back->info_log.bytes, e.info_log.bytes);
  EXPECT_EQ(back->ptx.size_rc, 3);
  EXPECT_EQ(back->description, e.description);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) EXPECT_FALSE(core::decode_link_entry(bytes.substr(0, cut)));
  std::string flipped = bytes;
  flipped[12] ^= 1;
  EXPECT_FALSE(core::decode_link_entry(flipped));
}

TEST(LinkEntry, OnlyWellFormedEntriesAreStoredOrServed) {
  const auto broken = [](auto&& change) {
    core::LinkEntry e = sample_entry();
    change(e);
    return !core::is_well_formed(e) && !core::decode_link_entry(core::encode_link_entry(e));
  };
  EXPECT_TRUE(broken([](auto& e) { e.complete_rc = 99; }));                   // not a known result
  EXPECT_TRUE(broken([](auto& e) { e.cubin.size = 5; }));                     // size without its bytes
  EXPECT_TRUE(broken([](auto& e) { e.cubin.bytes += std::string(16, 'x'); })); // too far past the size
  EXPECT_TRUE(broken([](auto& e) { e.ptx.size_written = true; }));            // failed size getter wrote
  EXPECT_TRUE(broken([](auto& e) { e.ptx.bytes = "x"; }));                    // failed data getter wrote
  EXPECT_TRUE(broken([](auto& e) { e.error_log.available = false; }));        // every output is there
  EXPECT_TRUE(broken([](auto& e) { e.ptx.data_rc = 0; }));                    // data without a size
  EXPECT_TRUE(broken([](auto& e) { e.cubin = core::unavailable_output(); }));  // only LTO-IR may be absent
  core::LinkEntry with_ltoir = sample_entry();
  with_ltoir.ltoir = {0, true, 2, 0, "IR", true};
  const auto back = core::decode_link_entry(core::encode_link_entry(with_ltoir));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->ltoir.available);
  EXPECT_EQ(back->ltoir.bytes, "IR");
  EXPECT_FALSE(core::decode_link_entry(core::encode_link_entry(sample_entry()))->ltoir.available);
}

}  // namespace
}  // namespace nvrtc_cache
