// The embedded templates are exactly the files templates/kiln/*.cuh, and
// tiling.cuh works as plain host C++ (the emitter includes it).

#include "Templates.h"
#include "kiln/tiling.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(EmbeddedTemplates, AreTheFilesOnDiskByteForByte) {
  std::map<std::string, std::string> onDisk;
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "templates";
  for (const auto &entry : fs::directory_iterator(dir / "kiln"))
    if (entry.is_regular_file() && entry.path().extension() == ".cuh")
      onDisk["kiln/" + entry.path().filename().string()] =
          readFile(entry.path());
  ASSERT_FALSE(onDisk.empty());

  std::map<std::string, std::string_view> embedded;
  for (const kiln::EmbeddedFile &f : kiln::embeddedTemplates())
    embedded[f.name] = f.text;
  std::string diskNames, embeddedNames;
  for (const auto &[name, text] : onDisk)
    diskNames += name + " ";
  for (const auto &[name, text] : embedded)
    embeddedNames += name + " ";
  ASSERT_EQ(diskNames, embeddedNames) << "rebuild after adding a .cuh?";

  for (const auto &[name, text] : onDisk)
    EXPECT_TRUE(embedded[name] == text) << name << " differs from the disk";
}

TEST(EmbeddedTemplates, AreSortedAndNulTerminated) {
  auto files = kiln::embeddedTemplates();
  EXPECT_TRUE(std::is_sorted(
      files.begin(), files.end(), [](const auto &a, const auto &b) {
        return std::string_view(a.name) < std::string_view(b.name);
      }));
  for (const kiln::EmbeddedFile &f : files)
    EXPECT_EQ(f.text.data()[f.text.size()], '\0') << f.name;
}

// The host reads the same launch numbers as the templates.
static_assert(kiln::kGemmLarge.threads() == 256 &&
              kiln::kGemmSmall.threads() == 256 &&
              kiln::kConvWide.threads() == 256 &&
              kiln::kConvNarrow.threads() == 256 &&
              kiln::kConvLarge.threads() == 256);

TEST(Tiling, LaunchGeometry) {
  // linear 37x45x29: one small tile; 32768x4096x1024: 32 x 256 large tiles.
  EXPECT_EQ(kiln::pickGemmTile(37, 45, 29).bp, kiln::kGemmSmall.bp);
  EXPECT_EQ(kiln::gemmBlocks(37, 45, kiln::kGemmSmall), 1);
  EXPECT_EQ(kiln::pickGemmTile(32768, 4096, 1024).bp, kiln::kGemmLarge.bp);
  EXPECT_EQ(kiln::gemmBlocks(32768, 4096, kiln::kGemmLarge), 32 * 256);
  // L2_19: conv_transpose2d 256 -> 258, 128 * 258 * 258 pixels, 64 channels.
  EXPECT_EQ(kiln::convTranspose2dOutSize(256, 3, 1, 0, 1, 0), 258);
  const long long pixels = 128ll * 258 * 258;
  EXPECT_EQ(kiln::pickConvTile(pixels, 64).bq, 64);
  EXPECT_EQ(kiln::convBlocks(pixels, 64, kiln::kConvWide),
            (pixels + 255) / 256);
  // PyTorch's output sizes.
  EXPECT_EQ(kiln::conv2dOutSize(17, 3, 2, 1, 2), 8);
  EXPECT_EQ(kiln::convTranspose2dOutSize(7, 3, 2, 1, 1, 1), 14);
}

} // namespace
