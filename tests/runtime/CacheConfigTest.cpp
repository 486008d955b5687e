#include "CacheConfig.h"
#include "KernelCache.h"
#include "RuntimeTestUtil.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kiln::rt {
namespace {

using test::ScopedEnv;
using test::ScopedTempDir;

uint64_t sizeOf(const char *text) {
  llvm::Expected<uint64_t> v = parseSize(text);
  if (!v) {
    ADD_FAILURE() << text << ": " << llvm::toString(v.takeError());
    return ~uint64_t(0);
  }
  return *v;
}

std::string sizeError(const char *text) {
  llvm::Expected<uint64_t> v = parseSize(text);
  if (v)
    return "parsed as " + std::to_string(*v);
  return llvm::toString(v.takeError());
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Clears every cache variable for the life of the object.
struct CleanEnv {
  ScopedEnv max{"KILN_CACHE_MAX_SIZE", ""}, off{"KILN_CACHE_DISABLE", ""},
      again{"KILN_RECOMPILE", ""};
};

TEST(CacheConfig, SizesTakeDecimalAndBinaryUnits) {
  EXPECT_EQ(sizeOf("0"), 0u);
  EXPECT_EQ(sizeOf("0 GiB"), 0u);
  EXPECT_EQ(sizeOf("512B"), 512u);
  EXPECT_EQ(sizeOf("40kB"), 40000u);
  EXPECT_EQ(sizeOf("500MB"), 500000000u);
  EXPECT_EQ(sizeOf("2GB"), 2000000000u);
  EXPECT_EQ(sizeOf("3 G"), 3000000000u);
  EXPECT_EQ(sizeOf("64KiB"), 65536u);
  EXPECT_EQ(sizeOf("1.5MiB"), 1572864u);
  EXPECT_EQ(sizeOf(" 2GiB "), uint64_t(2) << 30);
  EXPECT_EQ(sizeOf("1gib"), uint64_t(1) << 30);
  EXPECT_NE(sizeError("2").find("'2' has no unit"), std::string::npos);
  EXPECT_NE(sizeError("2 parsecs").find("unknown unit 'parsecs'"),
            std::string::npos);
  EXPECT_NE(sizeError("GiB").find("is not a size"), std::string::npos);
  EXPECT_NE(sizeError("-1GiB").find("is not a size"), std::string::npos);
  EXPECT_NE(sizeError("1.2.3GB").find("is not a size"), std::string::npos);
  EXPECT_NE(sizeError("99999999TiB").find("too large"), std::string::npos);
  // 0 is no limit; a positive size that rounds to 0 bytes is not that.
  EXPECT_EQ(sizeOf("0.5B"), 1u);
  EXPECT_NE(sizeError("0.3B").find("'0.3B' is less than a byte"),
            std::string::npos);
  EXPECT_NE(sizeError("0.0001kB").find("less than a byte"), std::string::npos);

  EXPECT_EQ(formatSize(734), "734 B");
  EXPECT_EQ(formatSize(49357), "48.2 KiB");
  EXPECT_EQ(formatSize(uint64_t(1) << 30), "1.0 GiB");
}

TEST(CacheConfig, EnvironmentOverridesTheFileWhichOverridesTheDefault) {
  ScopedTempDir tmp;
  CleanEnv clean;
  ScopedEnv dir("KILN_CACHE_DIR", tmp.path() + "/");
  CacheSettings d = resolveCacheSettings();
  EXPECT_EQ(d.directory, tmp.path()); // trailing '/' dropped
  EXPECT_EQ(d.maxBytes, DefaultCacheMaxBytes);
  EXPECT_FALSE(d.disable);
  EXPECT_FALSE(d.recompile);
  EXPECT_FALSE(d.configExists);
  ASSERT_EQ(d.settings.size(), 4u);
  EXPECT_EQ(d.settings[0].name, "directory");
  EXPECT_EQ(d.settings[0].source, CacheSetting::Source::Environment);
  EXPECT_EQ(d.settings[0].where, "KILN_CACHE_DIR");
  for (size_t i = 1; i < 4; ++i)
    EXPECT_EQ(d.settings[i].source, CacheSetting::Source::Default) << i;
  EXPECT_EQ(d.settings[1].value, "1.0 GiB");

  std::ofstream(tmp.path() + "/kiln.conf") << "# mine\n"
                                              "max_size = 2GiB  # roomy\n"
                                              "recompile = yes\n";
  CacheSettings f = resolveCacheSettings();
  EXPECT_TRUE(f.configExists);
  EXPECT_EQ(f.maxBytes, uint64_t(2) << 30);
  EXPECT_TRUE(f.recompile);
  EXPECT_EQ(f.settings[1].source, CacheSetting::Source::ConfigFile);
  EXPECT_EQ(f.settings[1].where, tmp.path() + "/kiln.conf:2");
  EXPECT_EQ(f.settings[3].where, tmp.path() + "/kiln.conf:3");
  EXPECT_TRUE(f.problems.empty());
  CacheOptions o = cacheOptionsFromEnvironment();
  EXPECT_EQ(o.maxBytes, uint64_t(2) << 30);
  EXPECT_TRUE(o.recompile);

  ScopedEnv max("KILN_CACHE_MAX_SIZE", "100MB");
  ScopedEnv again("KILN_RECOMPILE", "0");
  CacheSettings e = resolveCacheSettings();
  EXPECT_EQ(e.maxBytes, 100000000u);
  EXPECT_FALSE(e.recompile);
  EXPECT_EQ(e.settings[1].source, CacheSetting::Source::Environment);
  EXPECT_EQ(e.settings[1].where, "KILN_CACHE_MAX_SIZE");
  EXPECT_EQ(e.settings[3].source, CacheSetting::Source::Environment);
}

TEST(CacheConfig, BadValuesAreReportedAndSkipped) {
  ScopedTempDir tmp;
  CleanEnv clean;
  ScopedEnv dir("KILN_CACHE_DIR", tmp.path());
  ScopedEnv max("KILN_CACHE_MAX_SIZE", "lots");
  std::ofstream(tmp.path() + "/kiln.conf") << "max_size = 64MiB\n"
                                              "max_sise = 1GiB\n"
                                              "directory = /elsewhere\n"
                                              "disable = maybe\n"
                                              "just words\n";
  CacheSettings s = resolveCacheSettings();
  EXPECT_EQ(s.maxBytes, uint64_t(64) << 20); // the file's, not the env's
  EXPECT_FALSE(s.disable);
  ASSERT_EQ(s.problems.size(), 5u) << llvm::join(s.problems, "\n");
  std::string all = llvm::join(s.problems, "\n");
  std::string conf = tmp.path() + "/kiln.conf";
  EXPECT_NE(all.find(conf + ":2: unknown setting 'max_sise'"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(conf + ":3: unknown setting 'directory' (the "
                            "directory is set with KILN_CACHE_DIR"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(conf + ":4: 'maybe' is not a yes/no value"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(conf + ":5: expected 'name = value'"), std::string::npos)
      << all;
  EXPECT_NE(all.find("KILN_CACHE_MAX_SIZE=lots: 'lots' is not a size"),
            std::string::npos)
      << all;

  // The KernelCache warns each of them once.
  CacheOptions o = cacheOptionsFromEnvironment();
  std::string warnings;
  llvm::raw_string_ostream os(warnings);
  o.warnings = &os;
  KernelCache cache(o, "0.1.0");
  EXPECT_EQ(std::count(warnings.begin(), warnings.end(), '\n'), 5) << warnings;
  EXPECT_NE(warnings.find("kiln: kernel cache setting: "), std::string::npos);
}

TEST(CacheConfig, SettingAValueKeepsTheOtherLines) {
  ScopedTempDir tmp;
  std::string dir = tmp.path() + "/new/cache";
  ASSERT_FALSE(bool(setCacheConfigValue(dir, "max_size", "2GiB")));
  std::string text = readText(dir + "/kiln.conf");
  EXPECT_NE(text.find("\nmax_size = 2GiB\n"), std::string::npos) << text;
  std::ofstream(dir + "/kiln.conf", std::ios::app) << "recompile = no # why\n";
  ASSERT_FALSE(bool(setCacheConfigValue(dir, "max_size", "0")));
  text = readText(dir + "/kiln.conf");
  EXPECT_EQ(text.find("2GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("\nmax_size = 0\nrecompile = no # why\n"),
            std::string::npos)
      << text;
}

} // namespace
} // namespace kiln::rt
