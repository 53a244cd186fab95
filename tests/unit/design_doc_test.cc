// docs/design.md's folder map against the tree: every top-level folder of the project is in the map,
// and every folder the map names exists, so the map cannot drift from the layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace nvrtc_cache {
namespace {

namespace fs = std::filesystem;

std::string folder_map() {
  std::ifstream in(std::string(NVRTC_CACHE_SOURCE_DIR) + "/docs/design.md");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t start = text.find("## Folder map");
  if (start == std::string::npos) return {};
  const std::size_t end = text.find("\n## ", start + 1);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(DesignDoc, TheFolderMapIsTheTree) {
  const std::string map = folder_map();
  ASSERT_FALSE(map.empty()) << "docs/design.md has no '## Folder map' section";
  const fs::path root = NVRTC_CACHE_SOURCE_DIR;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.starts_with(".") || name.starts_with("build") || name == "docs") continue;
    if (!fs::exists(entry.path() / "CMakeLists.txt") && name != "scripts" && name != "python") continue;
    EXPECT_NE(map.find("`" + name + "/"), std::string::npos) << name << "/ is missing from the folder map";
  }
  // The folders the table's first column names exist.
  const std::regex named("`([a-z_]+(?:/[a-z_0-9]+)*)/`");
  std::istringstream lines(map);
  int named_folders = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string first_cell = line.substr(0, line.find(" |", 2));
    for (auto it = std::sregex_iterator(first_cell.begin(), first_cell.end(), named); it != std::sregex_iterator();
         ++it) {
      ++named_folders;
      EXPECT_TRUE(fs::is_directory(root / (*it)[1].str()))
          << "the folder map names " << (*it)[1] << "/, which is not there";
    }
  }
  EXPECT_GT(named_folders, 10);
}

}  // namespace
}  // namespace nvrtc_cache
