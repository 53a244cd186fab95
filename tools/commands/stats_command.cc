// nvrtc-cache stats [--json] [-z]: the counters every process merged into the store, what they mean
// for a person (hit rate, time saved, why compiles missed or were not cacheable, per tier), and the
// programs that cost the most compile time. JSON schema: docs/cli.md ("stats --json"),
// "schema_version" 2.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "direct/manifest.h"
#include "core/stats.h"
#include "store/cache_directory.h"
#include "store/read_only_counts.h"
#include "store/remote/shown_url.h"
#include "tools/commands.h"
#include "tools/cache/compact.h"
#include "tools/cache/entries.h"
#include "tools/cache/open_cache.h"

namespace nvrtc_cache::tools {
namespace {

constexpr int kStatsSchemaVersion = 2;  // 1: the flat object before reasons, tiers and top programs
constexpr std::size_t kTopPrograms = 5;
static_assert(store::kIndexKeyPrefix == direct::kManifestPrefix, "the tiers' index hits are manifests");

std::int64_t counter(const store::Counters& counters, std::string_view name) {
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

// The non-zero counters named "<group>.<reason>", largest first.
std::vector<std::pair<std::string, std::int64_t>> group(const store::Counters& counters, std::string_view prefix) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const auto& [name, value] : counters) {
    if (name.starts_with(prefix) && value != 0) out.emplace_back(name.substr(prefix.size()), value);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// "tier.<index>.<what>" counters, by tier (written by the shared tiers).
std::map<std::string, std::map<std::string, std::int64_t>> tiers(const store::Counters& counters) {
  std::map<std::string, std::map<std::string, std::int64_t>> out;
  for (const auto& [name, value] : counters) {
    if (!name.starts_with("tier.")) continue;
    const std::size_t dot = name.find('.', 5);
    if (dot == std::string::npos) continue;
    out[name.substr(5, dot - 5)][name.substr(dot + 1)] = value;
  }
  return out;
}

// The URL the setting `remote` now names at `index` (a tier's counters are kept by its index), shown
// as people may see it (passwords masked); "" when there is none at that index now.
std::string tier_url_now(const core::Config& config, const std::string& index) {
  std::istringstream urls(config.remote);
  std::size_t wanted = 0;
  try {
    wanted = static_cast<std::size_t>(std::stoul(index));
  } catch (const std::exception&) {
    return "";
  }
  std::size_t at = 0;
  for (std::string url; urls >> url; ++at) {
    if (at == wanted) return store::remote::shown_url(url);
  }
  return "";
}

std::string_view help_of(std::string_view counter_name) {
  for (std::size_t i = 0; i < core::kCounterNames.size(); ++i) {
    if (core::kCounterNames[i] == counter_name) return core::kCounterHelp[i];
  }
  return "";
}

std::vector<EntryInfo> costliest(std::vector<EntryInfo> entries) {
  std::erase_if(entries, [](const EntryInfo& e) { return e.damaged(); });
  std::sort(entries.begin(), entries.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.nanos() > b.nanos(); });
  if (entries.size() > kTopPrograms) entries.resize(kTopPrograms);
  return entries;
}

// The results each library's version made ("NVRTC 13.0", "nvJitLink unknown": made before entries recorded
// it), with their stored bytes, in name order.
struct LibraryShare {
  std::string name, version;
  std::uint64_t results = 0, bytes = 0;
};

std::vector<LibraryShare> by_library(const std::vector<EntryInfo>& entries) {
  std::map<std::pair<std::string, std::string>, LibraryShare> shares;
  for (const EntryInfo& e : entries) {
    if (e.damaged()) continue;
    const std::string version = core::version_text(e.library());
    LibraryShare& share = shares[{e.library_name(), version}];
    share.name = e.library_name();
    share.version = version;
    ++share.results;
    share.bytes += e.stored_bytes;
  }
  std::vector<LibraryShare> out;
  for (auto& [what, share] : shares) out.push_back(std::move(share));
  return out;
}

// What the store holds, by kind: results ('R' keys) and manifests ('M' keys, the direct-mode index
// naming results), with their stored bytes.
struct Composition {
  std::uint64_t results = 0, manifests = 0, api_entries = 0, markers = 0, other = 0;
  std::uint64_t result_bytes = 0, manifest_bytes = 0, api_bytes = 0;
};

Composition composition(store::LmdbStore& s) {
  Composition c;
  (void)s.for_each([&c](std::string_view key, std::optional<std::string_view> payload) {
    const std::uint64_t bytes = payload ? payload->size() : 0;
    if (key.size() == 33 && (key[0] == 'R' || key[0] == 'L')) {  // compile and link results
      ++c.results;
      c.result_bytes += bytes;
    } else if (key.size() == 33 && key[0] == 'M') {
      ++c.manifests;
      c.manifest_bytes += bytes;
    } else if (key.size() == 33 && key[0] == direct::kWorkingDirectoryMarkerPrefix) {
      ++c.markers;
    } else if (key.size() == 33 && key[0] == direct::kApiEntryPrefix) {  // the C API's (api/api_entry.h)
      ++c.api_entries;
      c.api_bytes += bytes;
    } else {
      ++c.other;
    }
  });
  return c;
}

// "3%", "0.4%": the part of the cap `bytes` is.
std::string percent_of(std::uint64_t bytes, std::uint64_t cap) {
  const double percent = cap ? 100.0 * static_cast<double>(bytes) / static_cast<double>(cap) : 0.0;
  return percent < 10 ? fmt::format("{:.1f}%", percent) : fmt::format("{:.0f}%", percent);
}

// The name ls and inspect use (tools/cache/entries.h): what the program defines when its given name
// says nothing.
std::string program_name(const EntryInfo& e) {
  if (!e.handle && e.entry && !e.entry->description) return "(recorded before names were kept)";
  return program_label(e);
}

void print_json(const core::Config& config, const store::OpenedCache& opened, const store::Counters& counters,
                const std::string& counted_elsewhere, const std::vector<EntryInfo>& top, std::size_t moved_aside,
                const Composition& held, const std::vector<LibraryShare>& libraries) {
  store::LmdbStore& s = *opened.store;
  nlohmann::ordered_json j;
  j["schema_version"] = kStatsSchemaVersion;
  j["version"] = kVersion;
  j["directory"] = opened.directory;
  j["read_only"] = opened.read_only;
  j["counted_elsewhere"] =
      counted_elsewhere.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(counted_elsewhere);
  for (std::string_view name : core::kCounterNames) {
    if (name.find('.') == std::string_view::npos) j[std::string(name)] = counter(counters, name);
  }
  j["entries"] = s.entry_count();
  j["directory_markers"] = held.markers;
  j["results"] = held.results;
  j["manifests"] = held.manifests;
  j["result_bytes"] = held.result_bytes;
  j["manifest_bytes"] = held.manifest_bytes;
  j["api_entries"] = held.api_entries;
  j["api_bytes"] = held.api_bytes;
  j["by_library"] = nlohmann::ordered_json::array();
  for (const LibraryShare& l : libraries) {
    j["by_library"].push_back({{"name", l.name}, {"version", l.version}, {"results", l.results}, {"bytes", l.bytes}});
  }
  j["bytes"] = s.size_bytes();
  j["max_bytes"] = config.max_size_bytes;
  j["used_fraction"] =
      config.max_size_bytes ? static_cast<double>(s.size_bytes()) / static_cast<double>(config.max_size_bytes) : 0.0;
  const store::MapUsage usage = s.map_usage();
  j["map_used_bytes"] = usage.used_bytes;
  j["map_bytes"] = usage.map_bytes;
  // Unix seconds of the last `stats -z` (or clear); null: never.
  if (const std::int64_t zeroed = counter(counters, "zeroed_at"); zeroed > 0)
    j["zeroed_at"] = zeroed;
  else
    j["zeroed_at"] = nullptr;
  const std::int64_t hits = counter(counters, "hits");
  const std::int64_t lookups = hits + counter(counters, "misses");
  j["hit_rate"] = lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0;
  j["saved_seconds"] = static_cast<double>(counter(counters, "saved_ns")) / 1e9;
  for (const auto& [library, key] :
       {std::pair{core::JitLibrary::nvjitlink, "links"}, std::pair{core::JitLibrary::nvvm, "nvvm_compiles"}}) {
    const std::string p = core::counter_prefix(library);
    nlohmann::ordered_json rows = {{"hits", counter(counters, p + "_hits")},
                                   {"misses", counter(counters, p + "_misses")},
                                   {"uncacheable", counter(counters, p + "_uncacheable")},
                                   {"saved_seconds", static_cast<double>(counter(counters, p + "_saved_ns")) / 1e9},
                                   {"hit_keying_ns", counter(counters, p + "_hit_keying_ns")},
                                   {"hit_lookup_ns", counter(counters, p + "_hit_lookup_ns")},
                                   {"hit_validate_ns", counter(counters, p + "_hit_validate_ns")}};
    for (const char* kind : {"uncacheable", "miss"}) {
      rows["reasons"][kind] = nlohmann::ordered_json::object();
      for (const auto& [reason, value] : group(counters, p + "." + kind + ".")) rows["reasons"][kind][reason] = value;
    }
    j[key] = rows;
  }
  j["moved_aside_stores"] = moved_aside;
  nlohmann::ordered_json reasons;
  for (const char* kind : {"uncacheable", "miss"}) {
    reasons[kind] = nlohmann::ordered_json::object();
    for (const auto& [reason, value] : group(counters, std::string(kind) + ".")) reasons[kind][reason] = value;
  }
  j["reasons"] = reasons;
  j["tiers"] = tiers(counters);
  j["top_compile_time"] = nlohmann::ordered_json::array();
  for (const EntryInfo& e : top) {
    j["top_compile_time"].push_back({{"key", e.key_hex},
                                     {"program_name", program_name(e)},
                                     {"compile_seconds", static_cast<double>(e.nanos()) / 1e9}});
  }
  j["counters"] = counters;
  fmt::print("{}\n", j.dump(2));
}

void print_reasons(const std::string& title, const std::vector<std::pair<std::string, std::int64_t>>& reasons,
                   std::string_view prefix) {
  if (reasons.empty()) return;
  fmt::print("{}\n", title);
  for (const auto& [reason, value] : reasons) {
    fmt::print("  {:>8}  {:<22} {}\n", value, reason, help_of(std::string(prefix) + reason));
  }
}

// Each library's reasons, each titled by its library as its headline row is: "compiles (NVRTC): misses
// by reason", then "links (nvJitLink): misses by reason", ...
void print_reasons_of_every_library(const store::Counters& counters) {
  for (core::JitLibrary library : core::kJitLibraries) {
    const std::string p = core::counter_prefix(library);
    const std::string dotted = p.empty() ? "" : p + ".";
    const std::string title = library == core::JitLibrary::nvrtc       ? "compiles (NVRTC): "
                              : library == core::JitLibrary::nvjitlink ? "links (nvJitLink): "
                                                                       : "libNVVM compiles: ";
    print_reasons(title + "misses by reason", group(counters, dotted + "miss."), dotted + "miss.");
    print_reasons(title + "uncacheable by reason", group(counters, dotted + "uncacheable."), dotted + "uncacheable.");
  }
}

void print_human(const core::Config& config, const store::OpenedCache& opened, const store::Counters& counters,
                 const std::string& counted_elsewhere, const std::vector<EntryInfo>& top, std::size_t moved_aside,
                 const Composition& held, const std::vector<LibraryShare>& libraries) {
  store::LmdbStore& s = *opened.store;
  const std::int64_t hits = counter(counters, "hits");
  const std::int64_t lookups = hits + counter(counters, "misses");
  fmt::print("cache directory   {}{}\n", opened.directory, opened.read_only ? " (read-only for this user)" : "");
  if (!counted_elsewhere.empty())
    fmt::print("also counted in   {} (what this user's processes counted while the cache was read-only)\n",
               counted_elsewhere);
  const std::int64_t zeroed = counter(counters, "zeroed_at");
  fmt::print("counting since    {}\n", zeroed > 0 ? human_time(zeroed) + " (stats -z)" : "never zeroed");
  // Each library labelled; a rate only where something was looked up.
  const auto rate = [](std::int64_t served, std::int64_t looked_up) {
    return looked_up ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(served) / static_cast<double>(looked_up))
                     : std::string("–");
  };
  fmt::print("compiles (NVRTC)  {} hits, {} misses, {} uncacheable\n", hits, counter(counters, "misses"),
             counter(counters, "uncacheable"));
  fmt::print("hit rate          {}\n", lookups ? rate(hits, lookups) + " (compiles)" : "– (no compile looked up)");
  std::int64_t all_hits = hits, all_lookups = lookups, all_uncacheable = counter(counters, "uncacheable");
  bool other_libraries = false;
  for (const auto& [prefix, title] : {std::pair{"link", "links (nvJitLink)"}, std::pair{"nvvm", "libNVVM compiles"}}) {
    const std::string p = prefix;
    const std::int64_t served = counter(counters, p + "_hits"), missed = counter(counters, p + "_misses");
    const std::int64_t passed = counter(counters, p + "_uncacheable");
    if (served + missed + passed == 0) continue;
    other_libraries = true;
    all_hits += served;
    all_lookups += served + missed;
    all_uncacheable += passed;
    fmt::print("{:<17} {} hits, {} misses ({}), {} uncacheable, {:.3f} s saved\n", title, served, missed,
               rate(served, served + missed), passed, static_cast<double>(counter(counters, p + "_saved_ns")) / 1e9);
  }
  if (other_libraries) {
    fmt::print("all libraries     {} hits, {} misses ({}), {} uncacheable\n", all_hits, all_lookups - all_hits,
               rate(all_hits, all_lookups), all_uncacheable);
  }
  if (const std::int64_t api =
          counter(counters, "api_hits") + counter(counters, "api_misses") + counter(counters, "api_stores");
      api > 0 || held.api_entries > 0) {
    fmt::print("C API look-ups    {} hits, {} misses ({}), {} stores (ProgramCache, include/nvrtc_cache.h)\n",
               counter(counters, "api_hits"), counter(counters, "api_misses"),
               rate(counter(counters, "api_hits"), counter(counters, "api_hits") + counter(counters, "api_misses")),
               counter(counters, "api_stores"));
  }
  fmt::print("stores            {}\n", counter(counters, "stores"));
  fmt::print("errors            {}\n", counter(counters, "errors"));
  fmt::print("corrupt dropped   {}\n", counter(counters, "corrupt"));
  fmt::print("evictions         {} entries, {} (to stay under max_size)\n", counter(counters, "evictions"),
             human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(0, counter(counters, "evicted_bytes")))));
  fmt::print("results           {} ({})\n", held.results, human_bytes(held.result_bytes));
  fmt::print("manifests         {} ({}; the index of direct-mode lookups)\n", held.manifests,
             human_bytes(held.manifest_bytes));
  for (const LibraryShare& l : libraries) {
    fmt::print("  {:<15} {} ({})\n", l.name + " " + l.version, l.results, human_bytes(l.bytes));
  }
  if (held.api_entries > 0)
    fmt::print("C API entries     {} ({}; ProgramCache, include/nvrtc_cache.h)\n", held.api_entries,
               human_bytes(held.api_bytes));
  if (held.markers > 0)
    fmt::print("directory markers {} (where JIT-LTO compiles and links were stored from: miss.working_directory)\n",
               held.markers);
  if (held.other > 0) fmt::print("other entries     {}\n", held.other);
  fmt::print("size              {} stored, compressed ({} of the {} cap)\n", human_bytes(s.size_bytes()),
             percent_of(s.size_bytes(), config.max_size_bytes), human_bytes(config.max_size_bytes));
  const store::MapUsage usage = s.map_usage();
  fmt::print("store file        {} in use ({} of the cap; eviction starts at 75%)\n", human_bytes(usage.used_bytes),
             percent_of(usage.used_bytes, config.max_size_bytes));
  fmt::print("time saved        {:.3f} s\n", static_cast<double>(counter(counters, "saved_ns")) / 1e9);
  fmt::print("moved aside       {} damaged stores (the newest {} are kept)\n", moved_aside, store::kMovedAsideKept);
  fmt::print("waited            {} compiles, {:.3f} s (for another compile of the same program)\n",
             counter(counters, "waited"), static_cast<double>(counter(counters, "wait_ns")) / 1e9);
  print_reasons_of_every_library(counters);
  for (const auto& [index, values] : tiers(counters)) {
    const std::string url = tier_url_now(config, index);
    fmt::print("tier {}{}\n", index, url.empty() ? "" : " (" + url + " in `remote` now)");
    for (const auto& [what, value] : values) {
      // A hit through the index reads a manifest and then a result from the tier: one result served.
      const std::string shown = what == "hits"         ? "hits (results served)"
                                : what == "index_hits" ? "index hits (manifests)"
                                                       : what;
      fmt::print("  {:<22} {}\n", shown, value);
    }
  }
  if (!top.empty()) {
    fmt::print("costliest compiles cached (compile time, key, program)\n");
    for (const EntryInfo& e : top) {
      fmt::print("  {:>10}  {}  {}\n", human_duration(e.nanos()), e.key_hex.substr(0, 16), program_name(e));
    }
  }
}

struct StatsArguments {
  bool json = false;
  bool zero = false;
  bool show = false;  // with zero: show, then zero what was shown (ccache's -s -z)
};

// The counts of `counters` and `more` together; `zeroed_at` is a time, the later one is kept.
store::Counters merged(store::Counters counters, const store::Counters& more) {
  for (const auto& [name, value] : more) {
    std::int64_t& sum = counters[name];
    sum = name == "zeroed_at" ? std::max(sum, value) : sum + value;
  }
  return counters;
}

int stats(const StatsArguments& arguments) {
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  const store::Counters own = opened.store->counters();
  // What this user's processes counted while they could not write the cache (store/read_only_counts.h).
  std::string problem;
  std::unique_ptr<store::CounterFile> elsewhere =
      store::open_read_only_counts(opened.directory, config.fallback_dir, /*create=*/false, &problem);
  const std::string counted_elsewhere =
      elsewhere ? store::read_only_counts_directory(opened.directory, config.fallback_dir) : "";
  const store::Counters counters = elsewhere ? merged(own, elsewhere->read()) : own;
  if (!arguments.zero || arguments.show) {
    const std::size_t moved_aside = store::moved_aside_stores(opened.directory);
    std::vector<EntryInfo> entries = read_entries(*opened.store);
    const std::vector<LibraryShare> libraries = by_library(entries);
    const std::vector<EntryInfo> top = costliest(std::move(entries));
    const Composition held = composition(*opened.store);
    if (arguments.json)
      print_json(config, opened, counters, counted_elsewhere, top, moved_aside, held, libraries);
    else
      print_human(config, opened, counters, counted_elsewhere, top, moved_aside, held, libraries);
  }
  if (arguments.zero) {
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    if (elsewhere && !elsewhere->zero()) {
      fmt::print(stderr, "nvrtc-cache: stats -z failed: the counters in {} could not be zeroed\n", counted_elsewhere);
      return 1;
    }
    if (opened.read_only) {
      // The cache's own counts are not this user's to zero: the user's own file holds them negated.
      if (!elsewhere &&
          !(elsewhere = store::open_read_only_counts(opened.directory, config.fallback_dir, true, &problem))) {
        fmt::print(stderr, "nvrtc-cache: stats -z failed: the cache is read-only ({})\n", problem);
        return 1;
      }
      for (const auto& [name, value] : own) {
        if (name != "zeroed_at") (void)elsewhere->add(name, -value);
      }
      (void)elsewhere->add("zeroed_at", now);
    } else {
      // Subtracts what was read (and shown): counts merged meanwhile by other processes are kept.
      // zeroed_at becomes now.
      store::Counters negated = own;
      for (auto& [name, value] : negated) value = -value;
      negated["zeroed_at"] += now;
      if (const store::Status status = opened.store->add_counters(negated); !status) {
        fmt::print(stderr, "nvrtc-cache: stats -z failed: {}\n", status.message());
        return 1;
      }
    }
    if (!arguments.json) fmt::print("statistics zeroed in {} (entries kept)\n", opened.directory);
  }
  return 0;
}

int clear(bool compact) {
  const core::Config config = load_settings();
  store::OpenedCache opened = open_cache_reporting(config);
  if (!opened.store) return 1;
  const store::Status status = opened.store->clear();
  if (!status) {
    fmt::print(stderr, "nvrtc-cache: clear failed: {}\n", status.message());
    return 1;
  }
  (void)opened.store->add_counters({{"zeroed_at", static_cast<std::int64_t>(std::time(nullptr))}});
  fmt::print("cleared {}\n", config.cache_dir);
  if (!compact) return 0;
  opened.store.reset();  // compaction needs the store closed in this process (tools/cache/compact.h)
  return report_compaction(compact_store(opened.directory + "/store"));
}

}  // namespace

void add_stats_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand(
      "stats",
      "Show the statistics: hits, misses, hit rate, time saved, why compiles missed or were not cacheable, "
      "per-tier counts, results and manifests held, the size against the cap, and the costliest compiles cached, "
      "summed over every process that used the cache since the last `stats -z`.");
  auto arguments = std::make_shared<StatsArguments>();
  command->add_flag("--json", arguments->json, "machine-readable output (schema_version 2)");
  command->add_flag("-z,--zero", arguments->zero, "zero the statistics; entries are kept");
  command->add_flag("--show", arguments->show, "with -z: show the statistics, then zero them (ccache's -s -z)");
  command->callback([&outcome, arguments] { outcome.exit_code = stats(*arguments); });
}

void add_clear_command(CLI::App& app, Outcome& outcome) {
  CLI::App* command = app.add_subcommand("clear", "Remove every entry and reset the statistics.");
  auto compact = std::make_shared<bool>(false);
  command->add_flag("--compact", *compact, kCompactHelp);
  command->callback([&outcome, compact] { outcome.exit_code = clear(*compact); });
}

}  // namespace nvrtc_cache::tools
