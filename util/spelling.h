// Spelling: "did you mean" for a name that is close to a known one (a misspelled command, setting
// or environment variable). Contract: pure, header-only; never throws except std::bad_alloc.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nvrtc_cache::util {

// The Damerau-Levenshtein distance (optimal string alignment) between a and b, compared without
// case: insertions, deletions, substitutions and swaps of two neighbours cost 1 each.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

// The candidate closest to `word`, when it is close enough to be a likely misspelling: at most a
// third of the word's length away (at least 1, at most 3 edits), one that differs only by
// underscores, dashes and case ("MAXSIZE" for "MAX_SIZE"), or one that a word of 4 or more
// characters begins ("REMOTE_SECRET" for "REMOTE_SECRET_FILE"). "" when none is.
inline std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  auto squeezed = [](std::string_view s) {
    std::string out;
    for (const char c : s) {
      if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
  };
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == word) continue;
    std::size_t distance = squeezed(candidate) == squeezed(word) ? 0 : edit_distance(word, candidate);
    if (word.size() >= 4 && candidate.size() > word.size() && squeezed(candidate).starts_with(squeezed(word))) {
      distance = std::min<std::size_t>(distance, limit);
    }
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace nvrtc_cache::util
