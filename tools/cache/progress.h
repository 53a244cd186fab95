// Progress: a one-line progress bar on stderr for long commands (verify, evict), drawn only when
// stderr is a terminal (and TERM is not "dumb"); when piped or redirected it prints nothing at all.
// Contract: single-threaded; redraws at most every 100 ms (and at 100%); finish() erases the line.
#pragma once

#include <cstdint>
#include <string>

namespace nvrtc_cache::tools {

class Progress {
 public:
  Progress(std::string label, std::uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool shown() const { return enabled_; }
  void set_total(std::uint64_t total) { total_ = total; }
  void update(std::uint64_t done);
  void finish();

 private:
  void draw(std::uint64_t done);
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::int64_t last_draw_ns_ = 0;
};

}  // namespace nvrtc_cache::tools
