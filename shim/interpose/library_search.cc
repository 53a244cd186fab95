#include "shim/interpose/library_search.h"

#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>
#include <utility>

namespace nvrtc_cache::shim::interpose {
namespace {

using Identity = std::pair<dev_t, ino_t>;

std::optional<Identity> identity_of(const std::string& path, bool want_directory) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (want_directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return std::nullopt;
  return Identity{st.st_dev, st.st_ino};
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string joined(const std::string& dir, std::string_view rest) {
  if (dir.empty()) return std::string(rest);
  return dir.back() == '/' ? dir + std::string(rest) : dir + "/" + std::string(rest);
}

// Existing paths matching `pattern`, sorted (glob's order).
std::vector<std::string> globbed(const std::string& pattern) {
  std::vector<std::string> found;
  glob_t matches{};
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) found.emplace_back(matches.gl_pathv[i]);
  }
  ::globfree(&matches);
  return found;
}

std::string resolved(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : path;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  while (true) {
    const auto at = text.find(separator);
    parts.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return std::string(text);
}

// The value of `key = value` in a pyvenv.cfg, or "".
std::string config_value(const std::string& cfg, std::string_view key) {
  std::ifstream in(cfg);
  for (std::string line; std::getline(in, line);) {
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    if (trimmed(std::string_view(line).substr(0, equals)) == key)
      return trimmed(std::string_view(line).substr(equals + 1));
  }
  return "";
}

// "3.11" from an interpreter's resolved name (python3.11) or a pyvenv.cfg's version (3.11.2); "".
std::string python_version(const std::string& resolved_executable, const std::string& cfg) {
  std::string name = base_of(resolved_executable);
  if (name.starts_with("python3.") && name.size() > 8) return name.substr(6);
  std::string version = cfg.empty() ? "" : config_value(cfg, "version");
  if (version.empty() && !cfg.empty()) version = config_value(cfg, "version_info");
  const auto first = version.find('.');
  if (first == std::string::npos) return "";
  const auto second = version.find('.', first + 1);
  return version.substr(0, second);
}

void add_existing(std::vector<std::string>& into, const std::string& dir) {
  if (identity_of(dir, true) && std::find(into.begin(), into.end(), dir) == into.end()) into.push_back(dir);
}

// site.getsitepackages() of a prefix: lib/pythonX.Y/site-packages, and Debian's dist-packages.
void add_prefix_site_packages(std::vector<std::string>& into, const std::string& prefix, const std::string& version) {
  const std::string lib_python = version.empty() ? "lib/python3*" : "lib/python" + version;
  if (prefix == "/usr") {  // Debian's layout (its site.py): /usr/local first, then /usr
    for (const std::string& dir : globbed("/usr/local/" + lib_python + "/dist-packages")) add_existing(into, dir);
    add_existing(into, "/usr/lib/python3/dist-packages");
    for (const std::string& dir : globbed("/usr/" + lib_python + "/dist-packages")) add_existing(into, dir);
  }
  for (const std::string& dir : globbed(joined(prefix, lib_python + "/site-packages"))) add_existing(into, dir);
}

void add_user_site_packages(std::vector<std::string>& into, const std::string& home, const std::string& version) {
  if (home.empty()) return;
  const std::string lib_python = version.empty() ? "lib/python3*" : "lib/python" + version;
  for (const std::string& dir : globbed(joined(home, ".local/" + lib_python + "/site-packages")))
    add_existing(into, dir);
}

void search_dir(std::vector<FoundLibrary>& found, std::set<Identity>& seen, const std::set<Identity>& skip,
                const LibrarySpec& spec, const std::string& dir, const std::string& via) {
  if (dir.empty()) return;
  const auto dir_identity = identity_of(dir, true);
  if (!dir_identity || skip.count(*dir_identity)) return;
  for (const std::string& soname : spec.sonames) {
    const std::string path = joined(dir, soname);
    const auto file = identity_of(path, false);
    if (file && seen.insert(*file).second) found.push_back({path, via});
  }
}

void search_root(std::vector<FoundLibrary>& found, std::set<Identity>& seen, const std::set<Identity>& skip,
                 const LibrarySpec& spec, const std::string& root, const std::string& via) {
  if (root.empty()) return;
  for (const std::string& dir : spec.root_dirs) search_dir(found, seen, skip, spec, joined(root, dir), via);
}

}  // namespace

LibrarySpec spec_of(RealLibrary library) {
  switch (library) {
    case RealLibrary::kNvrtc:
      return {{"libnvrtc.so.13", "libnvrtc.so.12"}, {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}, {"lib64", "lib"}};
    case RealLibrary::kNvJitLink:
      return {
          {"libnvJitLink.so.13", "libnvJitLink.so.12"}, {"nvidia/cu13/lib", "nvidia/nvjitlink/lib"}, {"lib64", "lib"}};
    case RealLibrary::kNvvm:
      // pathfinder's anchor is nvvm/lib64; toolkit 13's packages put libnvvm in lib64 as well.
      return {{"libnvvm.so.4", "libnvvm.so"},
              {"nvidia/cu13/lib", "nvidia/cuda_nvcc/nvvm/lib64"},
              {"nvvm/lib64", "lib64", "lib"}};
  }
  return {};
}

const char* override_variable(RealLibrary library) {
  switch (library) {
    case RealLibrary::kNvrtc:
      return "NVRTC_CACHE_REAL_NVRTC";
    case RealLibrary::kNvJitLink:
      return "NVRTC_CACHE_REAL_NVJITLINK";
    case RealLibrary::kNvvm:
      return "NVRTC_CACHE_REAL_NVVM";
  }
  return "";
}

const char* library_name(RealLibrary library) {
  switch (library) {
    case RealLibrary::kNvrtc:
      return "NVRTC";
    case RealLibrary::kNvJitLink:
      return "nvJitLink";
    case RealLibrary::kNvvm:
      return "libNVVM";
  }
  return "";
}

std::vector<FoundLibrary> search_library(const LibrarySpec& spec, const SearchRoots& roots) {
  std::vector<FoundLibrary> found;
  std::set<Identity> seen;
  std::set<Identity> skip;
  for (const std::string& dir : roots.skip_dirs) {
    if (auto identity = identity_of(dir, true)) skip.insert(*identity);
  }
  for (const std::string& wheel_dir : spec.wheel_dirs) {  // pathfinder: each wheel directory in every site
    for (const std::string& site : roots.site_packages) {
      search_dir(found, seen, skip, spec, joined(site, wheel_dir), "site-packages");
    }
  }
  search_root(found, seen, skip, spec, roots.conda_prefix, "conda");
  for (const std::string& dir : roots.loader_dirs) search_dir(found, seen, skip, spec, dir, "system");
  search_root(found, seen, skip, spec, roots.cuda_path,
              roots.cuda_path_variable.empty() ? "CUDA_PATH" : roots.cuda_path_variable);
  for (const std::string& root : roots.toolkit_roots) search_root(found, seen, skip, spec, root, root);
  return found;
}

std::optional<FoundLibrary> find_library(const LibrarySpec& spec, const SearchRoots& roots) {
  std::vector<FoundLibrary> found = search_library(spec, roots);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<std::string> interpreter_site_packages(const std::string& executable, const std::string& home) {
  std::vector<std::string> sites;
  if (executable.empty()) return sites;
  const std::string bin = parent_of(executable);
  std::string cfg;
  for (const std::string& dir : {bin, parent_of(bin)}) {
    if (exists(joined(dir, "pyvenv.cfg"))) {
      cfg = joined(dir, "pyvenv.cfg");
      break;
    }
  }
  const std::string real = resolved(executable);
  const std::string version = python_version(real, cfg);
  if (cfg.empty()) {  // PEP 370: the user's site first
    add_user_site_packages(sites, home, version);
    add_prefix_site_packages(sites, parent_of(parent_of(real)), version);
    return sites;
  }
  const std::string venv = parent_of(cfg);
  add_prefix_site_packages(sites, venv, version);
  if (config_value(cfg, "include-system-site-packages") == "true") {
    add_user_site_packages(sites, home, version);
    const std::string base_bin = config_value(cfg, "home");
    add_prefix_site_packages(sites, base_bin.empty() ? parent_of(parent_of(real)) : parent_of(base_bin), version);
  }
  return sites;
}

namespace {

// One file of the loader's configuration, its includes read where they stand (as ldconfig does).
void read_ld_so_conf(const std::string& file, std::vector<std::string>& dirs, std::set<std::string>& read) {
  if (read.size() >= 256 || !read.insert(file).second) return;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string entry = trimmed(line);
    if (entry.empty()) continue;
    if (entry.starts_with("include") && entry.size() > 7 && (entry[7] == ' ' || entry[7] == '\t')) {
      std::string pattern = trimmed(std::string_view(entry).substr(8));
      if (!pattern.starts_with("/")) pattern = joined(parent_of(file), pattern);
      for (const std::string& included : globbed(pattern)) read_ld_so_conf(included, dirs, read);
    } else if (entry.starts_with("/") && std::find(dirs.begin(), dirs.end(), entry) == dirs.end()) {
      dirs.push_back(entry);
    }
  }
}

}  // namespace

std::vector<std::string> ld_so_conf_dirs(const std::string& conf) {
  std::vector<std::string> dirs;
  std::set<std::string> read;
  read_ld_so_conf(conf, dirs, read);
  return dirs;
}

SearchRoots roots_of_this_process(const std::vector<std::string>& extra_site_packages, bool virtual_env) {
  SearchRoots roots;
  const char* home = std::getenv("HOME");
  const std::string home_dir = home ? home : "";
  std::vector<std::string> interpreters;
  if (base_of(resolved("/proc/self/exe")).starts_with("python")) {
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string argv0;
    std::getline(cmdline, argv0, '\0');
    if (!argv0.empty() && argv0.find('/') == std::string::npos) {  // found on PATH, as Python does
      const char* path = std::getenv("PATH");
      for (const std::string& dir : split(path ? path : "", ':')) {
        if (!dir.empty() && ::access(joined(dir, argv0).c_str(), X_OK) == 0) {
          argv0 = joined(dir, argv0);
          break;
        }
      }
    }
    interpreters.push_back(argv0.find('/') == std::string::npos ? "/proc/self/exe" : argv0);
  }
  if (const char* venv = std::getenv("VIRTUAL_ENV"); virtual_env && venv && *venv) {
    interpreters.push_back(joined(venv, "bin/python"));
  }
  for (const std::string& interpreter : interpreters) {
    for (std::string& site : interpreter_site_packages(interpreter, home_dir)) add_existing(roots.site_packages, site);
  }
  for (const std::string& site : extra_site_packages) add_existing(roots.site_packages, site);
  if (const char* conda = std::getenv("CONDA_PREFIX")) roots.conda_prefix = conda;
  for (const char* variable : {"CUDA_PATH", "CUDA_HOME"}) {
    if (const char* value = std::getenv(variable); value && *value) {
      roots.cuda_path = value;
      roots.cuda_path_variable = variable;
      break;
    }
  }
  if (const char* path = std::getenv("LD_LIBRARY_PATH")) {
    for (std::string& dir : split(path, ':')) {
      if (!dir.empty()) roots.loader_dirs.push_back(std::move(dir));  // an empty entry (the working directory): never
    }
  }
  for (std::string& dir : ld_so_conf_dirs("/etc/ld.so.conf")) roots.loader_dirs.push_back(std::move(dir));
  for (const char* dir : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) roots.loader_dirs.emplace_back(dir);
  return roots;
}

}  // namespace nvrtc_cache::shim::interpose
