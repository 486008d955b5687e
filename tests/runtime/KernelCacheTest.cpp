#include "KernelCache.h"
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::rt {
namespace {

namespace fs = std::filesystem;
using Source = CacheLookup::Source;
using test::filesUnder;
using test::patternRequest;
using test::ScopedEnv;
using test::ScopedTempDir;

/// A cache on `dir` whose warnings are collected in `warnings`.
struct TestCache {
  TestCache(const std::string &dir, const std::string &version = "0.1.0")
      : os(warnings), cache(options(dir, os), version) {}
  static CacheOptions options(const std::string &dir, llvm::raw_ostream &os) {
    CacheOptions o;
    o.directory = dir;
    o.disableDisk = dir.empty(); // never the user's real cache
    o.warnings = &os;
    return o;
  }
  std::string warnings;
  llvm::raw_string_ostream os;
  KernelCache cache;
};

KernelMetadata patternMeta() {
  KernelMetadata m;
  m.kernelName = "fill_pattern";
  m.graph = "test";
  m.group = "g0";
  m.shapes = "out=u32[1000]";
  m.launch = "grid 4, block 256";
  return m;
}

CacheLookup lookup(KernelCache &cache, const CompileRequest &req) {
  return test::lookupOk(cache, req, patternMeta());
}

size_t lineCount(const std::string &s) {
  return std::count(s.begin(), s.end(), '\n');
}

TEST(KernelCache, MissThenMemoryHitThenDiskHit) {
  ScopedTempDir tmp;
  CompileRequest req = patternRequest();
  TestCache first(tmp.path());
  CacheLookup a = lookup(first.cache, req);
  EXPECT_EQ(a.source, Source::Compiled);
  EXPECT_GT(a.compileMs, 0);
  CacheLookup b = lookup(first.cache, req);
  EXPECT_EQ(b.source, Source::Memory);
  EXPECT_EQ(b.compileMs, 0);
  EXPECT_EQ(b.cubin, a.cubin); // the same shared bytes

  TestCache second(tmp.path());
  CacheLookup c = lookup(second.cache, req);
  EXPECT_EQ(c.source, Source::Disk);
  EXPECT_EQ(c.compileMs, 0);
  EXPECT_EQ(*c.cubin, *a.cubin);
  EXPECT_EQ(c.key, a.key);
  EXPECT_EQ(lookup(second.cache, req).source, Source::Memory);
  EXPECT_EQ(first.warnings + second.warnings, "");
}

TEST(KernelCache, EntryHoldsMetadataSourceAndCubin) {
  ScopedTempDir tmp;
  TestCache tc(tmp.path(), "9.9.9");
  CompileRequest req = patternRequest("sm_80");
  CacheLookup r = lookup(tc.cache, req);
  std::string path = tc.cache.entryPath(r.key);
  EXPECT_EQ(path,
            tmp.path() + "/" + r.key.substr(0, 2) + "/" + r.key + ".kentry");
  llvm::Expected<CacheEntry> e = readCacheEntry(path);
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(e->key, r.key);
  EXPECT_EQ(e->source, req.source);
  EXPECT_EQ(e->cubin, *r.cubin);
  EXPECT_EQ(e->meta.kernelName, "fill_pattern");
  EXPECT_EQ(e->meta.shapes, "out=u32[1000]");
  EXPECT_EQ(e->meta.launch, "grid 4, block 256");
  EXPECT_EQ(e->meta.arch, "sm_80");
  EXPECT_EQ(e->meta.options, req.allOptions());
  EXPECT_EQ(e->meta.nvrtcVersion, nvrtcVersionString());
  EXPECT_EQ(e->meta.kilnVersion, "9.9.9");
  EXPECT_GT(e->meta.compileMs, 0);
  EXPECT_GT(e->created, 0);
  EXPECT_GE(e->lastUsed, e->created);
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  std::getline(in, magic);
  EXPECT_EQ(magic, "KILNCACHE 1");
}

TEST(KernelCache, KeyCoversEveryInput) {
  TestCache tc("", "0.1.0");
  CompileRequest base = patternRequest();
  std::string key = tc.cache.keyOf(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(tc.cache.keyOf(patternRequest()), key) << "not deterministic";

  auto differs = [&](const char *what, CompileRequest req) {
    EXPECT_NE(tc.cache.keyOf(req), key) << what;
  };
  CompileRequest r = base;
  r.source += "\n";
  differs("source", r);
  r = base;
  r.options = {"-lineinfo"};
  differs("options", r);
  r = base;
  r.arch = "sm_80";
  differs("arch", r);
  r = base;
  r.headers[0].name = "kiln/other.cuh";
  differs("header name", r);
  std::string text = std::string(test::PatternHeader) + "\n";
  r = base;
  r.headers[0].text = text;
  differs("header text", r);
  TestCache other("", "0.2.0");
  EXPECT_NE(other.cache.keyOf(base), key) << "kiln version";
  // Fields are length-prefixed: moving bytes between two fields changes it.
  CompileRequest a = base, b = base;
  a.options = {"-DA", "-DB"};
  b.options = {"-DA-DB"};
  EXPECT_NE(tc.cache.keyOf(a), tc.cache.keyOf(b));
}

enum class Damage { Truncate, FlipMiddleByte, FlipLastByte, ZeroLength };

class CorruptEntry : public testing::TestWithParam<Damage> {};

void damage(const std::string &path, Damage how) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  switch (how) {
  case Damage::Truncate:
    bytes.resize(bytes.size() / 2);
    break;
  case Damage::FlipMiddleByte:
    bytes[bytes.size() / 2] ^= 0x10;
    break;
  case Damage::FlipLastByte:
    bytes[bytes.size() - 2] ^= 0x01; // inside the checksum
    break;
  case Damage::ZeroLength:
    bytes.clear();
    break;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST_P(CorruptEntry, IsReportedOnceRemovedAndRecompiled) {
  ScopedTempDir tmp;
  CompileRequest req = patternRequest();
  TestCache writer(tmp.path());
  CacheLookup good = lookup(writer.cache, req);
  std::string path = writer.cache.entryPath(good.key);
  damage(path, GetParam());
  EXPECT_FALSE(bool(readCacheEntry(path)));

  TestCache reader(tmp.path());
  CacheLookup again = lookup(reader.cache, req);
  EXPECT_EQ(again.source, Source::Compiled);
  EXPECT_EQ(*again.cubin, *good.cubin);
  EXPECT_EQ(lineCount(reader.warnings), 1u) << reader.warnings;
  EXPECT_NE(reader.warnings.find(path), std::string::npos) << reader.warnings;
  EXPECT_NE(reader.warnings.find("corrupt"), std::string::npos);
  // Rewritten whole: a third cache reads it from disk, warning nothing.
  llvm::Expected<CacheEntry> e = readCacheEntry(path);
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  TestCache third(tmp.path());
  EXPECT_EQ(lookup(third.cache, req).source, Source::Disk);
  EXPECT_EQ(third.warnings, "");
}

INSTANTIATE_TEST_SUITE_P(Damages, CorruptEntry,
                         testing::Values(Damage::Truncate,
                                         Damage::FlipMiddleByte,
                                         Damage::FlipLastByte,
                                         Damage::ZeroLength),
                         [](const testing::TestParamInfo<Damage> &info) {
                           switch (info.param) {
                           case Damage::Truncate:
                             return "Truncated";
                           case Damage::FlipMiddleByte:
                             return "MiddleByteFlipped";
                           case Damage::FlipLastByte:
                             return "ChecksumByteFlipped";
                           case Damage::ZeroLength:
                             return "ZeroLength";
                           }
                           return "Unknown";
                         });

TEST(KernelCache, DirectoriesAreCreatedPrivate) {
  ScopedTempDir tmp;
  std::string dir = tmp.path() + "/a/b/cache";
  TestCache tc(dir);
  EXPECT_EQ(tc.cache.directory(), dir);
  CacheLookup r = lookup(tc.cache, patternRequest());
  for (const std::string &d : {tmp.path() + "/a", tmp.path() + "/a/b", dir,
                               dir + "/" + r.key.substr(0, 2)}) {
    struct stat st;
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }
}

TEST(KernelCache, AnUnusableDirectoryWarnsOnceAndCompilesInMemory) {
  ScopedTempDir tmp;
  std::string file = tmp.path() + "/a-file";
  std::ofstream(file) << "in the way\n";
  ScopedEnv env("KILN_CACHE_DIR", file + "/cache");
  CacheOptions opts = cacheOptionsFromEnvironment();
  EXPECT_EQ(opts.directory, file + "/cache");
  std::string warnings;
  llvm::raw_string_ostream os(warnings);
  opts.warnings = &os;
  KernelCache cache(opts, "0.1.0");
  EXPECT_EQ(cache.directory(), "");
  EXPECT_EQ(lookup(cache, patternRequest()).source, Source::Compiled);
  EXPECT_EQ(lookup(cache, patternRequest()).source, Source::Memory);
  EXPECT_EQ(lineCount(warnings), 1u) << warnings;
  EXPECT_NE(warnings.find("kiln: kernel cache directory " + file +
                          "/cache is not usable ("),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("); compiling in memory only"), std::string::npos);
}

TEST(KernelCache, EnvironmentCanDisableTheDisk) {
  for (const char *v : {"1", "true", "YES"}) {
    ScopedEnv env("KILN_CACHE_DISABLE", v);
    EXPECT_TRUE(cacheOptionsFromEnvironment().disableDisk) << v;
  }
  ScopedEnv env("KILN_CACHE_DISABLE", "0");
  EXPECT_FALSE(cacheOptionsFromEnvironment().disableDisk);
  CacheOptions off;
  off.disableDisk = true;
  KernelCache cache(off, "0.1.0");
  EXPECT_EQ(cache.directory(), "");
  EXPECT_EQ(cache.entryPath("abcd"), "");
}

TEST(KernelCache, ConcurrentProcessesLeaveOneWholeEntry) {
  ScopedTempDir tmp;
  CompileRequest req = patternRequest();
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char c;
      (void)::read(go[0], &c, 1); // returns when the parent closes its end
      std::string warnings;
      llvm::raw_string_ostream os(warnings);
      KernelCache cache(TestCache::options(tmp.path(), os), "0.1.0");
      llvm::Expected<CacheLookup> r = cache.getOrCompile(req, patternMeta());
      bool ok = r && r->cubin && test::isElf(*r->cubin) && warnings.empty();
      if (!r)
        llvm::consumeError(r.takeError());
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]); // start them all at once
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  TestCache check(tmp.path());
  std::string key = check.cache.keyOf(req);
  // One entry, no temporary files; beside it only the counters and the
  // cleanup lock.
  std::vector<std::string> entries;
  for (const std::string &f : filesUnder(tmp.path())) {
    llvm::StringRef name = llvm::StringRef(f).rsplit('/').second;
    if (name.endswith(".kentry"))
      entries.push_back(f);
    else
      EXPECT_TRUE(name == "stats" || name == "lock") << f;
  }
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], check.cache.entryPath(key));
  EXPECT_EQ(CacheDirectory(tmp.path()).stats().misses, 8);
  llvm::Expected<CacheEntry> e = readCacheEntry(entries[0]);
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(lookup(check.cache, req).source, Source::Disk);
}

TEST(KernelCache, ReadingAMissingEntryNamesTheFile) {
  llvm::Expected<CacheEntry> e = readCacheEntry("/nonexistent/x.kentry");
  ASSERT_FALSE(bool(e));
  EXPECT_NE(llvm::toString(e.takeError()).find("/nonexistent/x.kentry"),
            std::string::npos);
}

} // namespace
} // namespace kiln::rt
