#include "tools/cache/entries.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <map>

#include <fmt/format.h>

#include "core/program_label.h"
#include "direct/manifest.h"
#include "keying/cache_key.h"
#include "platform/c_runtime.h"

namespace nvrtc_cache::tools {
namespace {

std::string hex_of(std::string_view bytes) {
  std::string out;
  for (const unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

}  // namespace

std::vector<EntryInfo> read_entries(store::LmdbStore& store, store::Status* walked) {
  std::vector<EntryInfo> results;
  struct Named {
    std::string manifest_hex;
    direct::DependencySet dependencies;
  };
  std::map<std::string, Named> named;  // result store key -> the manifest naming it (newest first)
  const store::Status status = store.for_each_with_access(
      [&](std::string_view key, std::optional<std::string_view> payload, std::optional<store::AccessRecord> access) {
        if (key.size() != kStoreKeySize) return;
        if (key[0] == 'M' && payload) {
          if (auto manifest = direct::decode_manifest(*payload)) {
            for (auto& r : manifest->results) {
              named.try_emplace(direct::result_store_key(r.result_key), Named{hex_of(key.substr(1)), r.dependencies});
            }
          }
        } else if (key[0] == 'R' || key[0] == 'L') {
          EntryInfo info;
          info.prefix = key[0];
          info.key_hex = hex_of(key.substr(1));
          if (payload && key[0] == 'R') info.entry = core::decode_entry(*payload);
          if (payload && key[0] == 'L') info.handle = core::decode_handle_entry(*payload);
          info.access = access;
          info.stored_bytes = payload ? payload->size() : 0;
          results.push_back(std::move(info));
        }
      });
  for (EntryInfo& info : results) {
    std::string store_key = "R";  // the manifests' results, as their NVRTC store keys
    for (std::size_t i = 0; i + 1 < info.key_hex.size(); i += 2) {
      store_key.push_back(static_cast<char>(std::stoi(info.key_hex.substr(i, 2), nullptr, 16)));
    }
    if (auto it = named.find(store_key); it != named.end()) {
      info.manifest_hex = it->second.manifest_hex;
      info.dependencies = it->second.dependencies;
    }
  }
  if (walked) *walked = status;
  return results;
}

const char* EntryInfo::kind() const {
  if (prefix != 'L') return "compile";
  return handle && handle->library == core::JitLibrary::nvvm ? "nvvm" : "link";
}

std::uint64_t EntryInfo::nanos() const {
  if (handle) return handle->nanos;
  return entry ? entry->compile_nanos : 0;
}

std::uint64_t EntryInfo::output_bytes() const {
  if (handle) return handle->payload_bytes();
  return entry ? entry->payload_bytes() : 0;
}

std::vector<std::string> EntryInfo::options() const {
  if (handle) return handle->description.options;
  return entry && entry->description ? entry->description->options : std::vector<std::string>{};
}

std::string compile_status(const EntryInfo& e) {
  if (e.damaged()) return "damaged";
  if (e.handle) return e.handle->rc == 0 ? "ok" : fmt::format("error {}", e.handle->rc);
  switch (e.entry->compile_rc) {
    case NVRTC_SUCCESS:
      return "ok";
    case NVRTC_ERROR_COMPILATION:
      return "compile error";
    case NVRTC_ERROR_INVALID_OPTION:
      return "bad option";
    default:
      return fmt::format("error {}", e.entry->compile_rc);
  }
}

std::optional<core::LibraryVersion> EntryInfo::library() const {
  if (handle) return handle->description.library;
  if (entry && entry->description) return entry->description->library;
  return std::nullopt;
}

const char* EntryInfo::library_name() const {
  if (prefix != 'L') return "NVRTC";
  if (handle) return core::library_name(handle->library);
  return "nvJitLink or libNVVM";
}

nlohmann::ordered_json library_json(const EntryInfo& e) {
  const std::optional<core::LibraryVersion> library = e.library();
  nlohmann::ordered_json j;
  j["name"] = e.library_name();
  j["version"] = core::version_text(library);
  j["major"] = library ? nlohmann::ordered_json(library->major) : nlohmann::ordered_json();
  j["minor"] = library ? nlohmann::ordered_json(library->minor) : nlohmann::ordered_json();
  j["build_id"] = core::build_id_hex(library);
  return j;
}

std::string program_label(const EntryInfo& e) {
  if (e.damaged()) return "(damaged)";
  if (e.handle) {
    const bool nvvm = e.handle->library == core::JitLibrary::nvvm;
    return core::handle_label(
        e.kind(), e.handle->description.input_names, nvvm,
        nvvm && !e.handle->outputs.empty() ? std::string_view(e.handle->outputs.front().bytes) : std::string_view());
  }
  if (!e.entry->description) return "(unrecorded)";
  const core::EntryDescription& d = *e.entry->description;
  std::vector<std::string> expressions;
  for (const core::RecordedLoweredName& n : e.entry->lowered_names) expressions.push_back(n.expression);
  return core::nvrtc_program_label(d.program_name, expressions, e.entry->ptx.bytes, d.options);
}

std::string architecture_of(const std::vector<std::string>& options) {
  for (std::size_t i = 0; i < options.size(); ++i) {
    std::string_view o = options[i];
    for (std::string_view flag : {"-arch", "--gpu-architecture", "--gpu-architecture", "-gpu-architecture"}) {
      if (o == flag && i + 1 < options.size()) return options[i + 1];
      if (o.starts_with(flag) && o.size() > flag.size() && o[flag.size()] == '=') {
        return std::string(o.substr(flag.size() + 1));
      }
    }
  }
  return "";
}

std::optional<std::int64_t> parse_duration(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) return std::nullopt;
  const std::int64_t number = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit == "s")
    scale = 1;
  else if (unit == "m")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else if (unit == "w")
    scale = 7 * 86400;
  else
    return std::nullopt;
  return number * scale;  // at most 10^12 weeks: no overflow
}

std::string human_duration(std::uint64_t nanos) {
  const double seconds = static_cast<double>(nanos) / 1e9;
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  return fmt::format("{:.1f} ms", seconds * 1e3);
}

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  // Three significant digits: "1.23 MiB", "12.3 MiB", "123 MiB" (rounding may carry: "1024 KiB").
  if (value < 10) return fmt::format("{:.2f} {}", value, kUnits[unit]);
  if (value < 100) return fmt::format("{:.1f} {}", value, kUnits[unit]);
  return fmt::format("{:.0f} {}", value, kUnits[unit]);
}

std::string human_time(std::int64_t unix_seconds) {
  if (unix_seconds <= 0) return "-";
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  const std::tm local = platform::local_time(t);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &local);
  return text;
}

namespace {
std::string join_options(const EntryInfo& e) {
  std::string joined;
  for (const std::string& o : e.options()) joined += (joined.empty() ? "" : " ") + o;
  return joined;
}
}  // namespace

std::optional<EntryInfo> find_entry_named(std::vector<EntryInfo> entries, const std::string& name,
                                          std::string* problem) {
  std::vector<EntryInfo> matches;
  for (EntryInfo& e : entries) {
    const bool given = e.entry && e.entry->description && e.entry->description->program_name == name;
    if (given || program_label(e) == name) matches.push_back(std::move(e));
  }
  if (matches.size() == 1) return std::move(matches.front());
  if (matches.empty()) {
    *problem = "no program is named '" + name + "' (give a name `nvrtc-cache ls` shows, or a key prefix)";
  } else {
    *problem = fmt::format("{} entries are named '{}'; give a key prefix:", matches.size(), name);
    for (const auto& m : matches) *problem += "\n  " + m.key_hex + "  " + join_options(m);
  }
  return std::nullopt;
}

std::optional<EntryInfo> find_entry(std::vector<EntryInfo> entries, const std::string& prefix, std::string* problem) {
  std::string lower = prefix;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.size() < 4 || lower.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return find_entry_named(std::move(entries), prefix, problem);
  }
  // The result key `ls` shows, or the program's key the log names (its manifest's): a program key
  // names the newest of its results.
  std::vector<EntryInfo> matches;
  for (EntryInfo& e : entries) {
    if (e.key_hex.starts_with(lower)) matches.push_back(std::move(e));
  }
  if (matches.empty()) {
    for (EntryInfo& e : entries) {
      if (!e.manifest_hex.empty() && e.manifest_hex.starts_with(lower)) matches.push_back(std::move(e));
    }
    if (matches.size() > 1 && std::all_of(matches.begin(), matches.end(), [&](const EntryInfo& m) {
          return m.manifest_hex == matches.front().manifest_hex;
        })) {
      auto newest = std::max_element(matches.begin(), matches.end(), [](const EntryInfo& a, const EntryInfo& b) {
        return (a.access ? a.access->created : 0) < (b.access ? b.access->created : 0);
      });
      return std::move(*newest);
    }
  }
  if (matches.size() == 1) return std::move(matches.front());
  if (matches.empty()) {
    std::string by_name;
    if (std::optional<EntryInfo> named = find_entry_named(std::move(entries), prefix, &by_name)) return named;
    *problem = "no entry's key (nor program key) starts with " + lower + ", and " + by_name;
  } else {
    *problem = fmt::format("{} entries' keys start with {}; give more digits:", matches.size(), lower);
    for (const auto& m : matches) *problem += "\n  " + m.key_hex;
  }
  return std::nullopt;
}

}  // namespace nvrtc_cache::tools
