// ProgramNameScan over hostile texts: the input is split at '\x01' into texts, given in turn as the
// source, a header and a command-line macro. The scan must not crash, must give the same answer for
// the same texts, and must be monotone (a text added can only make the program's name matter more:
// the scan is conservative by construction, so no text can hide what an earlier one revealed).
#include <string_view>
#include <vector>

#include "direct/program_name_scan.h"
#include "fuzz/fuzz_support.h"

namespace {

void add(nvrtc_cache::direct::ProgramNameScan& scan, std::size_t index, std::string_view text) {
  switch (index % 3) {
    case 0: scan.add_source(text); break;
    case 1: scan.add_header(text); break;
    default: scan.add_command_line_macro(text); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache;
  const std::string_view input = fuzz::as_view(data, size);
  std::vector<std::string_view> texts;
  for (std::size_t start = 0;;) {
    const std::size_t end = input.find('\x01', start);
    texts.push_back(input.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  direct::ProgramNameScan scan;
  bool revealed = false;
  const bool check_each = texts.size() <= 16;  // the answer after every text costs a pass each
  for (std::size_t i = 0; i < texts.size(); ++i) {
    add(scan, i, texts[i]);
    if (check_each || i + 1 == texts.size()) {
      const bool now = scan.reveals_program_name();
      NVRTC_CACHE_FUZZ_CHECK(now || !revealed);  // monotone
      revealed = now;
    }
  }
  direct::ProgramNameScan again;
  for (std::size_t i = 0; i < texts.size(); ++i) add(again, i, texts[i]);
  NVRTC_CACHE_FUZZ_CHECK(again.reveals_program_name() == revealed);  // deterministic
  return 0;
}
