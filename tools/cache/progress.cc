#include "tools/cache/progress.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "platform/terminal.h"
#include "util/clock.h"

namespace nvrtc_cache::tools {
namespace {

bool stderr_is_a_terminal() {
  const char* term = std::getenv("TERM");
  return platform::is_terminal(stderr) && !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

void write_all(const std::string& text) {
  (void)std::fwrite(text.data(), 1, text.size(), stderr);
  (void)std::fflush(stderr);
}

}  // namespace

Progress::Progress(std::string label, std::uint64_t total)
    : label_(std::move(label)), total_(total), enabled_(stderr_is_a_terminal()) {}

Progress::~Progress() { finish(); }

void Progress::update(std::uint64_t done) {
  if (!enabled_) return;
  const std::int64_t now = util::steady_ns();
  if (drawn_ && now - last_draw_ns_ < 100'000'000 && done < total_) return;
  last_draw_ns_ = now;
  draw(done);
}

void Progress::draw(std::uint64_t done) {
  constexpr int kWidth = 30;
  const double fraction = total_ == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  const int filled = static_cast<int>(fraction * kWidth);
  write_all(fmt::format("\r{} [{}{}] {:3.0f}% ({}/{})\x1b[K", label_, std::string(filled, '#'),
                        std::string(kWidth - filled, '.'), fraction * 100.0, done, total_));
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_ || !drawn_) return;
  write_all("\r\x1b[K");
  drawn_ = false;
}

}  // namespace nvrtc_cache::tools
