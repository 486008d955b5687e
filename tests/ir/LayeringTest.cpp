// compiler/IR/ is the bottom layer of the compiler: ops/ (the families'
// shape rules, reference evaluation and CUDA expressions) and every other
// compiler/ folder build on it, so no file under compiler/IR/ may include a
// header from another compiler/ folder (issue 25 broke an IR/ <-> ops/ loop).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(Layering, IRIncludesNothingFromOtherCompilerFolders) {
  const fs::path compiler = fs::path(KILN_SOURCE_DIR) / "compiler";
  const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  unsigned files = 0;
  for (const auto &entry : fs::recursive_directory_iterator(compiler / "IR")) {
    if (!entry.is_regular_file())
      continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (unsigned lineNo = 1; std::getline(in, line); ++lineNo) {
      std::smatch m;
      if (!std::regex_search(line, m, include))
        continue;
      const std::string target = m[1];
      // Headers outside compiler/ (llvm/, fmt/) are not Kiln's layers.
      if (target.rfind("IR/", 0) == 0 || !fs::exists(compiler / target))
        continue;
      ADD_FAILURE() << fs::relative(entry.path(), KILN_SOURCE_DIR).string()
                    << ":" << lineNo << " includes \"" << target
                    << "\"; IR/ must not depend on other compiler/ folders";
    }
  }
  EXPECT_GT(files, 0u);
}

} // namespace
