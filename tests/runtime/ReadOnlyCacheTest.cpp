//===- ReadOnlyCacheTest.cpp - A cache directory we may not write ---------===//
//
// A cache directory that can be read but not written (shared read-only, or
// on a read-only mount) still serves its entries; what is compiled is kept
// in memory, with one warning that it could not be stored. Tests run as
// root, whom permission bits do not stop, so the checks run on a thread
// that drops the capabilities that bypass them (capabilities are per
// thread; the test's other threads keep theirs).
//
//===----------------------------------------------------------------------===//
#include "CacheDirectory.h"
#include "KernelCache.h"
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace kiln::rt {
namespace {

namespace fs = std::filesystem;
using Source = CacheLookup::Source;
using test::filesUnder;
using test::patternRequest;
using test::ScopedTempDir;

/// Runs `body` on a thread of its own that permission bits apply to: as
/// root, the thread first drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
/// CAP_FOWNER from its effective and permitted sets. False when it could
/// not drop them (then `body` did not run).
bool onThreadWithoutOverride(const std::function<void()> &body) {
  bool ok = true;
  std::thread t([&] {
    if (::geteuid() == 0) {
      __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
      __user_cap_data_struct data[2] = {};
      const uint32_t drop = (1u << CAP_DAC_OVERRIDE) |
                            (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER);
      ok = ::syscall(SYS_capget, &hdr, data) == 0;
      data[0].effective &= ~drop;
      data[0].permitted &= ~drop;
      ok = ok && ::syscall(SYS_capset, &hdr, data) == 0;
    }
    if (ok)
      body();
  });
  t.join();
  return ok;
}

/// chmod of `dir` and every directory under it.
void chmodTree(const std::string &dir, mode_t mode) {
  ASSERT_EQ(::chmod(dir.c_str(), mode), 0) << dir;
  for (const auto &e : fs::recursive_directory_iterator(dir)) {
    if (e.is_directory()) {
      ASSERT_EQ(::chmod(e.path().c_str(), mode), 0) << e.path();
    }
  }
}

CacheOptions optionsFor(const std::string &dir, llvm::raw_ostream &warnings) {
  CacheOptions o;
  o.directory = dir;
  o.warnings = &warnings;
  return o;
}

KernelMetadata meta() {
  KernelMetadata m;
  m.kernelName = "fill_pattern";
  m.graph = "test";
  return m;
}

CacheLookup lookup(KernelCache &cache, const CompileRequest &req) {
  return test::lookupOk(cache, req, meta());
}

TEST(ReadOnlyCache, ServesItsEntriesAndKeepsWhatItCompilesInMemory) {
  ScopedTempDir tmp;
  std::string dir = tmp.path() + "/cache";
  CompileRequest stored = patternRequest();
  CompileRequest other = patternRequest();
  other.source += "// another kernel\n";
  {
    std::string w;
    llvm::raw_string_ostream os(w);
    KernelCache fill(optionsFor(dir, os), "0.1.0");
    EXPECT_TRUE(lookup(fill, stored).stored);
  }
  std::vector<std::string> before = filesUnder(dir);
  chmodTree(dir, 0500);
  bool readOnly = false;
  bool dropped = onThreadWithoutOverride([&] {
    int fd = ::open((dir + "/probe").c_str(), O_CREAT | O_WRONLY, 0600);
    readOnly = fd < 0;
    if (fd >= 0)
      ::close(fd);
    if (!readOnly)
      return;
    std::string warnings;
    llvm::raw_string_ostream os(warnings);
    KernelCache cache(optionsFor(dir, os), "0.1.0");
    EXPECT_EQ(cache.directory(), dir) << warnings;
    EXPECT_EQ(lookup(cache, stored).source, Source::Disk) << warnings;
    EXPECT_EQ(warnings, "") << "a hit needs no warning";
    CacheLookup miss = lookup(cache, other);
    EXPECT_EQ(miss.source, Source::Compiled);
    EXPECT_FALSE(miss.stored);
    EXPECT_EQ(lookup(cache, other).source, Source::Memory);
    EXPECT_EQ(lookup(cache, patternRequest("sm_80")).source, Source::Compiled);
    os.flush();
    EXPECT_EQ(std::count(warnings.begin(), warnings.end(), '\n'), 1)
        << warnings;
    EXPECT_EQ(warnings.rfind("kiln: cannot store kernels in the kernel "
                             "cache directory " +
                                 dir + " (",
                             0),
              0u)
        << warnings;
    EXPECT_NE(warnings.find("the kernels compiled now are kept in memory "
                            "only, and the entries already there are still "
                            "used\n"),
              std::string::npos)
        << warnings;
  });
  chmodTree(dir, 0700);
  if (!dropped || !readOnly)
    GTEST_SKIP() << "cannot make a directory read-only here: this thread "
                    "could not drop CAP_DAC_OVERRIDE";
  EXPECT_EQ(filesUnder(dir), before) << "the read-only cache was written";
}

} // namespace
} // namespace kiln::rt
