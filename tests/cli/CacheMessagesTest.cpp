//===- CacheMessagesTest.cpp - What kiln says, as a user reads it ---------===//
//
// Runs the built `kiln` as a process on a cache directory of the test's own
// (KILN_CACHE_DIR, inherited by the children) and checks what it prints:
// huge names cut in tables and messages (and whole in JSON), one prefix a
// message, and a read-only cache directory (clearing it fails with one
// error; compiling from it serves its entries).
//
// Tests run as root, whom permission bits do not stop: the read-only cases
// run kiln under `setpriv` with the capabilities that bypass them dropped,
// and are skipped, saying why, where that cannot be done.
//
//===----------------------------------------------------------------------===//
#include "CacheDirectory.h"
#include "CacheFiles.h"
#include "CacheFormat.h"
#include "CliHarness.h"
#include "KernelCache.h"
#include "Npy.h"
#include "Safetensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Result = test::CliResult;
using test::contains;
using test::readFile;

size_t count(const std::string &s, const std::string &part) {
  return llvm::StringRef(s).count(part);
}

/// The longest line of `s`.
size_t longestLine(const std::string &s) {
  size_t longest = 0;
  for (llvm::StringRef rest = s; !rest.empty();) {
    auto [line, next] = rest.split('\n');
    longest = std::max(longest, line.size());
    rest = next;
  }
  return longest;
}

const char *const kGraph =
    KILN_SOURCE_DIR "/tests/data/kg/cache_four_kernels.kg";
const size_t kHuge = size_t(1) << 20;
/// What a message makes of `n` copies of `c`: 200 characters in all.
std::string cutInMessage(char c, size_t n = kHuge) {
  std::string note = "...(" + std::to_string(n) + " chars)";
  return std::string(200 - note.size(), c) + note;
}

/// A made-up entry whose key parts are consistent (as CacheDirectoryTest
/// makes them): enough for list, show and clear, no NVRTC needed.
rt::CacheEntry fakeEntry(const std::string &kernel, const std::string &graph) {
  rt::CacheEntry e;
  e.source = "// " + kernel.substr(0, 16) + "\n";
  rt::KernelMetadata &m = e.meta;
  m.kernelName = kernel;
  m.graph = graph;
  m.group = "0:pw_relu";
  m.shapes = "x=f32[4]";
  m.sourceHash = rt::sha256Hex(e.source);
  m.headersHash = rt::sha256Hex(graph.substr(0, 16));
  m.arch = "sm_90";
  m.options = {"--gpu-architecture=sm_90", "-std=c++17"};
  m.nvrtcVersion = "13.0";
  m.kilnVersion = "0.1.0";
  m.compileMs = 100;
  e.key = rt::cacheKey(rt::cacheKeyParts(m));
  e.cubin.assign(64, 'c');
  e.cubin[0] = 0x7f, e.cubin[1] = 'E', e.cubin[2] = 'L', e.cubin[3] = 'F';
  e.created = e.lastUsed = 1700000000;
  return e;
}

class CacheMessages : public test::CliFixture {
protected:
  void SetUp() override {
    CliFixture::SetUp();
    cache_ = tmp("cache");
    ASSERT_EQ(::mkdir(cache_.c_str(), 0700), 0);
    // Children inherit the environment (LLVM 14's ExecuteAndWait does not
    // apply an explicit one).
    ::setenv("KILN_CACHE_DIR", cache_.c_str(), 1);
    for (const char *v :
         {"KILN_CACHE_MAX_SIZE", "KILN_CACHE_DISABLE", "KILN_RECOMPILE"})
      ::unsetenv(v);
  }
  void TearDown() override {
    chmodTree(cache_, 0700);
    CliFixture::TearDown();
    ::unsetenv("KILN_CACHE_DIR");
  }

  /// Runs `program` so that permission bits stop it: as root, under
  /// setpriv without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER.
  Result withoutOverride(const std::string &program,
                         std::vector<std::string> args) {
    if (::geteuid() != 0)
      return exec(program, args);
    args.insert(args.begin(),
                {"--bounding-set=-dac_override,-dac_read_search,-fowner", "--",
                 program});
    return exec(setpriv_, args);
  }
  /// "" when a directory of mode 0500 stops withoutOverride from writing;
  /// otherwise why it does not (the read-only tests skip, saying so).
  std::string cannotMakeReadOnly() {
    if (::geteuid() == 0) {
      llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("setpriv");
      if (!p)
        return "running as root and setpriv (util-linux) is not installed, "
               "so a read-only directory cannot be made";
      setpriv_ = *p;
    }
    std::string probe = tmp("probe");
    EXPECT_EQ(::mkdir(probe.c_str(), 0500), 0);
    Result r = withoutOverride("/bin/sh", {"-c", ": > " + probe + "/file"});
    ::chmod(probe.c_str(), 0700);
    if (r.code == 0)
      return "a directory of mode 0500 is still writable here (setpriv "
             "could not drop CAP_DAC_OVERRIDE)";
    return "";
  }
  /// chmod of `dir` and every directory under it.
  static void chmodTree(const std::string &dir, mode_t mode) {
    std::error_code ec;
    if (!fs::exists(dir, ec))
      return;
    ::chmod(dir.c_str(), mode);
    for (const auto &e : fs::recursive_directory_iterator(dir, ec))
      if (e.is_directory())
        ::chmod(e.path().c_str(), mode);
  }
  /// Writes `e` into the cache; returns its path.
  std::string put(const rt::CacheEntry &e) {
    std::string path = rt::CacheDirectory(cache_).entryPath(e.key);
    fs::create_directories(fs::path(path).parent_path());
    ::chmod(fs::path(path).parent_path().c_str(), 0700);
    EXPECT_EQ(rt::writeFileAtomically(path, rt::encodeCacheEntry(e)), "");
    return path;
  }
  std::vector<std::string> entryFiles() {
    std::vector<std::string> out;
    for (const auto &e : fs::recursive_directory_iterator(cache_))
      if (e.path().extension() == ".kentry")
        out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  void write(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  /// A graph with parameter w, its input x.npy, and a parameter file that
  /// holds w and a tensor named `extra` that the graph does not use.
  std::vector<std::string> runWithExtraParam(const std::string &extra) {
    write(tmp("g.kg"), "graph g(x: f32[2]) {\n  param w: f32[2] = zeros\n"
                       "  y = add(x, w)\n  return y\n}\n");
    EXPECT_FALSE(
        static_cast<bool>(writeNpy(tmp("x.npy"), HostTensor(DType::F32, {2}))));
    EXPECT_FALSE(static_cast<bool>(writeSafetensors(
        tmp("p.safetensors"), {{"w", HostTensor(DType::F32, {2})},
                               {extra, HostTensor(DType::F32, {1})}})));
    return {"run",     tmp("g.kg"),         "--device", "cpu",
            "--input", "x=" + tmp("x.npy"), "--params", tmp("p.safetensors")};
  }

  std::string cache_, setpriv_;
  std::string kiln_ = test::kilnBinary();
};

TEST_F(CacheMessages, ListCutsHugeNamesAndItsJsonKeepsThemWhole) {
  put(fakeEntry("pw_relu_1a2b3c", "small"));
  put(fakeEntry(std::string(kHuge, 'k'), std::string(kHuge, 'g')));
  Result r = kiln({"cache", "list", "--sort", "kernel"});
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 500);
  EXPECT_LT(longestLine(r.out), 250u) << r.out.substr(0, 500);
  // The kernel column is cut at 48 characters, the graph column at 40.
  std::string kernel = std::string(30, 'k') + "...(1048576 chars)";
  std::string graph = std::string(22, 'g') + "...(1048576 chars)";
  EXPECT_TRUE(contains(r.out, "  " + kernel + "  " + graph + "  sm_90  "))
      << r.out;
  // Every row has its graph under the GRAPH heading.
  llvm::SmallVector<llvm::StringRef, 4> lines;
  llvm::StringRef(r.out).split(lines, '\n', -1, false);
  ASSERT_EQ(lines.size(), 4u) << r.out; // heading, 2 rows, total
  size_t at = lines[0].find("GRAPH");
  EXPECT_EQ(lines[1].substr(at, 22), std::string(22, 'g')) << r.out;
  EXPECT_EQ(lines[2].substr(at, 6), "small ") << r.out;

  Result j = kiln({"cache", "list", "--format", "json", "--sort", "kernel"});
  ASSERT_EQ(j.code, 0);
  json entries = json::parse(j.out)["entries"];
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["kernel"].get<std::string>(), std::string(kHuge, 'k'));
  EXPECT_EQ(entries[0]["graph"].get<std::string>(), std::string(kHuge, 'g'));
}

TEST_F(CacheMessages, ErrorsCutTheHugeNamesTheyEcho) {
  // A graph calling an op whose name is 1 MiB long.
  std::string op(kHuge, 'f');
  write(tmp("huge.kg"),
        "graph g(x: f32[2]) {\n  y = " + op + "(x)\n  return y\n}\n");
  Result check = kiln({"check", tmp("huge.kg")});
  EXPECT_EQ(check.code, 1);
  EXPECT_LT(check.err.size(), 1000u) << check.err.substr(0, 1000);
  EXPECT_TRUE(contains(check.err, "'" + cutInMessage('f') + "'"))
      << check.err.substr(0, 1000);
  // A command and a file name of 100000 characters (an argument may be at
  // most 128 KiB).
  std::string word(100000, 'c');
  Result command = kiln({word});
  EXPECT_EQ(command.code, 2);
  EXPECT_EQ(command.err.rfind("error: unknown command '" +
                                  cutInMessage('c', word.size()) +
                                  "'; the commands are ",
                              0),
            0u)
      << command.err.substr(0, 1000);
  Result file = kiln({"check", tmp(word)});
  EXPECT_EQ(file.code, 1);
  EXPECT_LT(file.err.size(), 1000u) << file.err.substr(0, 1000);
  EXPECT_TRUE(contains(file.err, "...(")) << file.err.substr(0, 1000);
  // A parameter file's tensor named with 1 MiB: one warning line, cut.
  Result run = kiln(runWithExtraParam(std::string(kHuge, 'e')));
  EXPECT_EQ(run.code, 0) << run.err.substr(0, 1000);
  EXPECT_TRUE(contains(run.err, tmp("p.safetensors") + ": warning: tensor '" +
                                    cutInMessage('e') +
                                    "' (f32[1]) is not a parameter of graph "
                                    "'g'; ignored\n"))
      << run.err.substr(0, 1000);
  EXPECT_LT(run.err.size(), 1000u);
}

TEST_F(CacheMessages, EachMessageHasOnePrefix) {
  Result run = kiln(runWithExtraParam("unused"));
  EXPECT_EQ(run.code, 0) << run.err;
  // "FILE: warning: ...", not "warning: FILE: warning: ...".
  std::string warning = tmp("p.safetensors") +
                        ": warning: tensor 'unused' (f32[1]) is not a "
                        "parameter of graph 'g'; ignored\n";
  EXPECT_EQ(run.err.substr(0, warning.size()), warning) << run.err;
  EXPECT_EQ(count(run.err, "warning:"), 1u) << run.err;

  Result command = kiln({"frob"});
  EXPECT_EQ(command.code, 2);
  EXPECT_EQ(command.err.rfind("error: unknown command 'frob'", 0), 0u)
      << command.err;

  // The unsafe-directory message is the compiler's warning after "kiln: "
  // and kiln cache's error after "error: ", never both.
  ASSERT_EQ(::chmod(cache_.c_str(), 0777), 0);
  for (const char *sub : {"-s", "list"}) {
    Result r = kiln({"cache", sub});
    EXPECT_EQ(r.code, 1) << sub;
    EXPECT_EQ(r.err.rfind("error: kernel cache directory " + cache_ +
                              " is not safe to use: ",
                          0),
              0u)
        << r.err;
    EXPECT_EQ(count(r.err, "error:"), 1u) << r.err;
    EXPECT_FALSE(contains(r.err, "kiln:")) << r.err;
  }
}

TEST_F(CacheMessages, ClearingAReadOnlyCacheSaysOnlyWhatFailed) {
  if (std::string why = cannotMakeReadOnly(); !why.empty())
    GTEST_SKIP() << why;
  std::string path = put(fakeEntry("pw_relu_1a2b3c", "small"));
  chmodTree(cache_, 0500);
  Result r = withoutOverride(kiln_, {"cache", "-C"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "") << "no 'removed 0 entries' beside the error";
  EXPECT_EQ(r.err, "error: 1 entry of the kernel cache could not be removed "
                   "(the first: cannot remove " +
                       path +
                       ": Permission denied); make the cache directory and "
                       "its subdirectories writable ('chmod -R u+w " +
                       cache_ + "') and run 'kiln cache -C' again\n");
  EXPECT_EQ(entryFiles(), std::vector<std::string>{path});
  // Done as it says, it clears.
  chmodTree(cache_, 0700);
  Result again = withoutOverride(kiln_, {"cache", "-C"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err, "");
  EXPECT_TRUE(contains(again.out, "cleared " + cache_ + ": removed 1 entry"))
      << again.out;
  EXPECT_TRUE(entryFiles().empty());
}

TEST_F(CacheMessages, AReadOnlyCacheServesItsEntries) {
  if (std::string why = cannotMakeReadOnly(); !why.empty())
    GTEST_SKIP() << why;
  Result fill = kiln({"compile", kGraph, "--bind", "N=5"});
  ASSERT_EQ(fill.code, 0) << fill.err;
  std::vector<std::string> entries = entryFiles();
  ASSERT_EQ(entries.size(), 4u);
  chmodTree(cache_, 0500);
  // Every kernel a hit, nothing to store: no warning, exit 0.
  Result hits = withoutOverride(kiln_, {"compile", kGraph, "--bind", "N=5"});
  EXPECT_EQ(hits.code, 0) << hits.err;
  EXPECT_EQ(count(hits.out, "hit (disk)"), 4u) << hits.out;
  EXPECT_FALSE(contains(hits.err, "kiln:")) << hits.err;
  EXPECT_FALSE(contains(hits.err, "error")) << hits.err;
  // Other shapes compile, in memory: one warning, and kiln compile, whose
  // purpose is to store them, fails.
  Result misses = withoutOverride(kiln_, {"compile", kGraph, "--bind", "N=7"});
  EXPECT_EQ(misses.code, 1);
  EXPECT_EQ(count(misses.out, "miss, compiled"), 4u) << misses.out;
  EXPECT_EQ(count(misses.err, "kiln: cannot store kernels in the kernel "
                              "cache directory " +
                                  cache_ + " ("),
            1u)
      << misses.err;
  EXPECT_TRUE(contains(misses.err, "error: 4 compiled kernels could not be "
                                   "stored in the kernel cache"))
      << misses.err;
  // kiln cache reads it.
  Result list = withoutOverride(kiln_, {"cache", "list"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_TRUE(contains(list.out, "4 entries")) << list.out;
  EXPECT_EQ(withoutOverride(kiln_, {"cache", "-s"}).code, 0);
  EXPECT_EQ(entryFiles(), entries);
}

} // namespace
