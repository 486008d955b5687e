//===- CacheCliTest.cpp - kiln cache, as a user runs it -------------------===//
//
// Runs `kiln compile` (NVRTC, no GPU) and `kiln cache ...` as processes on
// a cache directory of the test's own (KILN_CACHE_DIR, inherited by the
// children) and checks exit codes, output and the JSON against the entries
// that compile made.
//
//===----------------------------------------------------------------------===//
#include "CliHarness.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sys/stat.h>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Result = kiln::test::CliResult;
using kiln::test::readFile;

const char *const kGraph =
    KILN_SOURCE_DIR "/tests/data/kg/cache_four_kernels.kg";
const char *const kGraphName = "gemm_gn_sum_bias";

class CacheCli : public kiln::test::CliFixture {
protected:
  void SetUp() override {
    CliFixture::SetUp();
    cache_ = tmp("cache");
    // Children inherit the environment (LLVM 14's ExecuteAndWait does not
    // apply an explicit one).
    ::setenv("KILN_CACHE_DIR", cache_.c_str(), 1);
    for (const char *v :
         {"KILN_CACHE_MAX_SIZE", "KILN_CACHE_DISABLE", "KILN_RECOMPILE"})
      ::unsetenv(v);
  }
  void TearDown() override {
    ::chmod(cache_.c_str(), 0700);
    CliFixture::TearDown();
    ::unsetenv("KILN_CACHE_DIR");
  }

  /// `kiln compile` of the example graph; kernel name -> "hit"/"miss".
  std::map<std::string, std::string> compile(const std::string &n = "5",
                                             const std::string &arch = "") {
    std::vector<std::string> args = {"compile", kGraph, "--bind", "N=" + n};
    if (!arch.empty())
      args.insert(args.end(), {"--arch", arch});
    Result r = kiln(args);
    EXPECT_EQ(r.code, 0) << r.err;
    std::map<std::string, std::string> how;
    llvm::SmallVector<llvm::StringRef, 8> lines;
    llvm::StringRef(r.out).split(lines, '\n', -1, false);
    for (llvm::StringRef l : lines)
      how[l.split(' ').first.str()] = l.contains("miss") ? "miss" : "hit";
    return how;
  }
  json jsonOf(const std::vector<std::string> &args, int code = 0) {
    Result r = kiln(args);
    EXPECT_EQ(r.code, code) << r.err;
    try {
      return json::parse(r.out);
    } catch (const json::exception &e) {
      ADD_FAILURE() << e.what() << "\n" << r.out;
      return json::object();
    }
  }
  std::vector<std::string> entryFiles() {
    std::vector<std::string> out;
    if (fs::exists(cache_))
      for (const auto &e : fs::recursive_directory_iterator(cache_))
        if (e.path().extension() == ".kentry")
          out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  bool anyTempFiles() {
    for (const auto &e : fs::recursive_directory_iterator(cache_))
      if (e.path().string().find(".tmp.") != std::string::npos)
        return true;
    return false;
  }

  std::string cache_;
  std::string kiln_ = kiln::test::kilnBinary();
};

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST_F(CacheCli, EveryCommandHasHelp) {
  Result top = kiln({"--help"});
  EXPECT_TRUE(contains(top.out, "  cache    inspect and manage the kernel "
                                "cache"))
      << top.out;
  EXPECT_FALSE(contains(top.out, "cache list")) << "subcommands listed";
  for (const char *sub :
       {"", "list", "show", "verify", "export", "import", "why"}) {
    std::vector<std::string> args = {"cache"};
    if (*sub)
      args.push_back(sub);
    args.push_back("--help");
    Result r = kiln(args);
    EXPECT_EQ(r.code, 0) << sub;
    std::string usage = *sub ? std::string("usage: kiln cache ") + sub
                             : std::string("usage: kiln cache [-s]");
    EXPECT_EQ(r.out.rfind(usage, 0), 0u) << r.out;
  }
  Result h = kiln({"cache", "--help"});
  for (const char *opt :
       {"-s, --show-stats", "-z, --zero-stats", "-C, --clear", "-c, --cleanup",
        "-M, --max-size SIZE", "-p, --show-config"})
    EXPECT_TRUE(contains(h.out, opt)) << opt;
  Result typo = kiln({"cache", "lsit"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.err, "unknown subcommand 'lsit'; did you mean "
                                 "'list'?"))
      << typo.err;
  Result badFormat = kiln({"cache", "list", "--format", "xml"});
  EXPECT_EQ(badFormat.code, 2);
  EXPECT_TRUE(contains(badFormat.err, "--format must be text or json"));
}

TEST_F(CacheCli, StatsListAndShowDescribeTheCompiledKernels) {
  std::map<std::string, std::string> first = compile();
  ASSERT_EQ(first.size(), 4u);
  for (const auto &[k, how] : first)
    EXPECT_EQ(how, "miss") << k;
  for (const auto &[k, how] : compile())
    EXPECT_EQ(how, "hit") << k;

  json s = jsonOf({"cache", "-s", "--format", "json"})["stats"];
  EXPECT_EQ(s["directory"], cache_);
  EXPECT_EQ(s["entries"], 4);
  EXPECT_EQ(s["hits"], 4);
  EXPECT_EQ(s["misses"], 4);
  EXPECT_EQ(s["hitRate"], 0.5);
  EXPECT_GT(s["compileMsSaved"].get<double>(), 0);
  EXPECT_EQ(s["maxBytes"], uint64_t(1) << 30);
  uint64_t onDisk = 0;
  for (const std::string &f : entryFiles())
    onDisk += fs::file_size(f);
  EXPECT_GE(s["bytes"].get<uint64_t>(), onDisk);
  Result text = kiln({"cache"}); // -s is the default
  EXPECT_TRUE(contains(text.out, "entries              4\n")) << text.out;
  EXPECT_TRUE(contains(text.out, "hit rate             50.0%\n")) << text.out;

  json list = jsonOf({"cache", "list", "--format", "json"});
  ASSERT_EQ(list["entries"].size(), 4u);
  std::vector<std::string> files = entryFiles();
  for (const json &e : list["entries"]) {
    std::string key = e["key"];
    EXPECT_TRUE(first.count(e["kernel"])) << e["kernel"];
    EXPECT_EQ(e["graph"], kGraphName);
    EXPECT_EQ(e["arch"], "sm_90");
    EXPECT_EQ(e["hits"], 1);
    EXPECT_GT(e["compileMs"].get<double>(), 0);
    EXPECT_EQ(e["path"],
              cache_ + "/" + key.substr(0, 2) + "/" + key + ".kentry");
    EXPECT_TRUE(std::count(files.begin(), files.end(), e["path"]));
  }
  // Sorted by size, largest first; filtered by kernel name.
  json bySize = jsonOf({"cache", "list", "--sort", "size", "--format", "json"});
  for (size_t i = 1; i < bySize["entries"].size(); ++i)
    EXPECT_GE(bySize["entries"][i - 1]["bytes"], bySize["entries"][i]["bytes"]);
  Result gn = kiln({"cache", "list", "--kernel", "gn_"});
  EXPECT_EQ(gn.code, 0);
  llvm::SmallVector<llvm::StringRef, 8> rows;
  llvm::StringRef(gn.out).split(rows, '\n', -1, false);
  ASSERT_EQ(rows.size(), 3u) << gn.out; // header, one row, summary
  EXPECT_TRUE(rows[0].startswith("KEY           KERNEL")) << rows[0].str();
  EXPECT_TRUE(rows[1].contains(" gn_")) << rows[1].str();
  EXPECT_TRUE(rows[1].contains(" sm_90 ")) << rows[1].str();
  EXPECT_EQ(rows[2],
            "1 shown of 4 entries, " + rows[2].split(", ").second.str());
  Result bad = kiln({"cache", "list", "--sort", "colour"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.err, "unknown field 'colour'"));

  // show: a short prefix is enough.
  const json &gemm = *std::find_if(
      list["entries"].begin(), list["entries"].end(), [](const json &e) {
        return llvm::StringRef(e["kernel"].get<std::string>())
            .startswith("gemm_linear");
      });
  std::string key = gemm["key"];
  json show = jsonOf({"cache", "show", key.substr(0, 10), "--format", "json"});
  EXPECT_EQ(show["key"], key);
  EXPECT_EQ(show["kernel"], gemm["kernel"]);
  EXPECT_EQ(show["group"], "0:gemm_linear");
  EXPECT_TRUE(contains(show["shapes"], "x=f32[5, 128]")) << show["shapes"];
  EXPECT_TRUE(contains(show["source"], "__global__"));
  EXPECT_TRUE(contains(show["source"], gemm["kernel"].get<std::string>()));
  ASSERT_TRUE(show["ptx"].is_string()) << show.value("ptxNote", "");
  EXPECT_TRUE(contains(show["ptx"], ".target sm_90"));
  EXPECT_TRUE(
      contains(show["ptx"], ".entry " + gemm["kernel"].get<std::string>()));
  if (show["sass"].is_null())
    EXPECT_TRUE(contains(show["sassNote"], "cuobjdump nor nvdisasm is "
                                           "installed"));
  else
    EXPECT_TRUE(contains(show["sass"], "sm_90"));
  Result source =
      kiln({"cache", "show", key.substr(0, 10), "--only", "source"});
  EXPECT_EQ(source.out, show["source"].get<std::string>());
  Result meta =
      kiln({"cache", "show", key.substr(0, 10), "--only", "metadata"});
  EXPECT_TRUE(contains(meta.out, "key          " + key + "\n")) << meta.out;
  EXPECT_TRUE(contains(meta.out, "graph        " + std::string(kGraphName)));
  Result missing = kiln({"cache", "show", "zz"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_TRUE(contains(missing.err, "'zz' is not a cache key"));
}

TEST_F(CacheCli, WhySaysWhichKernelsHitAndWhatDiffersForAMiss) {
  compile("5");
  json hit =
      jsonOf({"cache", "why", kGraph, "--bind", "N=5", "--format", "json"});
  EXPECT_EQ(hit["graph"], kGraphName);
  EXPECT_EQ(hit["hits"], 4);
  EXPECT_EQ(hit["misses"], 0);
  json list = jsonOf({"cache", "list", "--format", "json"});
  std::map<std::string, std::string> keyOfGroup;
  for (const json &e : list["entries"])
    keyOfGroup[e["group"]] = e["key"];
  for (const json &k : hit["kernels"])
    EXPECT_EQ(k["key"], keyOfGroup[k["group"]]);

  // Other shapes: every kernel misses; the nearest is the same group at N=5
  // and only the source differs, in its shapes.
  json shapes =
      jsonOf({"cache", "why", kGraph, "--bind", "N=9", "--format", "json"});
  EXPECT_EQ(shapes["misses"], 4);
  for (const json &k : shapes["kernels"]) {
    EXPECT_EQ(k["status"], "miss");
    EXPECT_EQ(k["nearest"]["key"], keyOfGroup[k["group"]]);
    ASSERT_EQ(k["differences"].size(), 1u) << k.dump();
    EXPECT_EQ(k["differences"][0]["part"], "source");
    EXPECT_TRUE(contains(k["differences"][0]["detail"], "shapes differ"));
  }
  // Another arch: only the arch differs.
  json arch = jsonOf({"cache", "why", kGraph, "--bind", "N=5", "--arch",
                      "sm_80", "--format", "json"});
  for (const json &k : arch["kernels"]) {
    ASSERT_FALSE(k["nearest"].is_null());
    bool sawArch = false;
    for (const json &d : k["differences"])
      if (d["part"] == "arch") {
        sawArch = true;
        EXPECT_EQ(d["here"], "sm_80");
        EXPECT_EQ(d["entry"], "sm_90");
      }
    EXPECT_TRUE(sawArch) << k.dump();
  }
  Result text = kiln({"cache", "why", kGraph, "--bind", "N=9"});
  EXPECT_TRUE(contains(text.out, std::string(kGraphName) +
                                     " for sm_90, matmul precision highest: 4 "
                                     "kernel(s), 0 would hit, 4 would miss"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "differs in source: the shapes differ: "
                                 "here x=f32[9, 128]"))
      << text.out;
}

// The graph's linear (K = 128) runs FFMA at highest, alone; at high it runs
// on TF32 tensor cores with the group_norm, the sum and the add in its
// epilogue: one kernel, which misses until a compile at that precision
// adds it.
TEST_F(CacheCli, WhyComparesAtTheGivenMatmulPrecision) {
  compile("5");
  const std::vector<std::string> why = {
      "cache", "why",      kGraph, "--bind", "N=5", "--matmul-precision",
      "high",  "--format", "json"};
  json high = jsonOf(why);
  EXPECT_EQ(high["matmulPrecision"], "high");
  EXPECT_EQ(high["hits"], 0);
  EXPECT_EQ(high["misses"], 1);
  ASSERT_EQ(high["kernels"].size(), 1u);
  EXPECT_EQ(high["kernels"][0]["group"], "0:gemm_linear_group_norm_sum_add");
  json highest =
      jsonOf({"cache", "why", kGraph, "--bind", "N=5", "--format", "json"});
  EXPECT_EQ(highest["matmulPrecision"], "highest");
  EXPECT_EQ(highest["hits"], 4);

  Result c =
      kiln({"compile", kGraph, "--bind", "N=5", "--matmul-precision", "high"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(jsonOf(why)["hits"], 1);
  Result text = kiln(
      {"cache", "why", kGraph, "--bind", "N=5", "--matmul-precision", "high"});
  EXPECT_TRUE(contains(text.out, " for sm_90, matmul precision high: 1 "
                                 "kernel(s), 1 would hit, 0 would miss"))
      << text.out;
}

/// Damages the entry file at `path` the way `how` says.
void damage(const std::string &path, const std::string &how) {
  std::string bytes = readFile(path);
  if (how == "truncate")
    bytes.resize(bytes.size() / 2);
  else if (how == "flip")
    bytes[bytes.size() / 2] ^= 0x04;
  else
    bytes.clear();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_F(CacheCli, VerifyCatchesDamagedEntriesAndUseRecompilesThem) {
  compile();
  std::vector<std::string> files = entryFiles();
  ASSERT_EQ(files.size(), 4u);
  const char *hows[] = {"truncate", "flip", "zero"};
  for (int i = 0; i < 3; ++i)
    damage(files[i], hows[i]);
  Result v = kiln({"cache", "verify"});
  EXPECT_EQ(v.code, 1);
  EXPECT_TRUE(contains(v.out, "4 entries in " + cache_ + ": 1 good, 3 bad"))
      << v.out;
  json j = jsonOf({"cache", "verify", "--format", "json"}, 1);
  std::map<std::string, std::string> problem;
  for (const json &b : j["bad"])
    problem[b["path"]] = b["problem"];
  ASSERT_EQ(problem.size(), 3u);
  EXPECT_TRUE(contains(problem[files[0]], "truncated")) << problem[files[0]];
  EXPECT_TRUE(contains(problem[files[1]], "checksum mismatch"));
  EXPECT_EQ(problem[files[2]], "empty file (0 bytes)");

  // Used again, the three are reported, removed and compiled anew.
  Result again = kiln({"compile", kGraph, "--bind", "N=5"});
  EXPECT_EQ(again.code, 0);
  EXPECT_EQ(llvm::StringRef(again.out).count("miss, compiled"), 3u)
      << again.out;
  EXPECT_TRUE(contains(again.err, "4 kernel(s) for sm_90 ready in "))
      << again.err;
  EXPECT_TRUE(contains(again.err, " ms: 3 compiled, 1 from the cache"))
      << again.err;
  EXPECT_EQ(llvm::StringRef(again.err).count("removed corrupt kernel cache "
                                             "entry"),
            3u)
      << again.err;
  EXPECT_EQ(kiln({"cache", "verify"}).code, 0);

  // verify --fix removes bad entries and exits 0; the rest stay.
  damage(files[3], "flip");
  Result fix = kiln({"cache", "verify", "--fix"});
  EXPECT_EQ(fix.code, 0) << fix.out;
  EXPECT_TRUE(contains(fix.out, "removed 1 bad entry")) << fix.out;
  EXPECT_EQ(entryFiles().size(), 3u);
  Result clean = kiln({"cache", "verify"});
  EXPECT_EQ(clean.code, 0);
  EXPECT_TRUE(contains(clean.out, "3 good, 0 bad")) << clean.out;
}

TEST_F(CacheCli, EightProcessesCompilingTheSameGraphLeaveOneEntryEach) {
  std::vector<llvm::StringRef> argv = {kiln_, "compile", kGraph, "--bind",
                                       "N=7"};
  std::vector<llvm::sys::ProcessInfo> procs;
  std::vector<std::string> logs;
  for (int i = 0; i < 8; ++i) {
    std::string name = "process";
    name.push_back(char('0' + i));
    logs.push_back(tmp(name));
    const std::string &out = logs.back();
    llvm::Optional<llvm::StringRef> redirects[] = {
        llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef(out)};
    procs.push_back(
        llvm::sys::ExecuteNoWait(kiln_, argv, llvm::None, redirects));
  }
  for (size_t i = 0; i < procs.size(); ++i) {
    llvm::sys::ProcessInfo done = llvm::sys::Wait(procs[i], 0, true);
    EXPECT_EQ(done.ReturnCode, 0) << readFile(logs[i]);
  }
  EXPECT_EQ(entryFiles().size(), 4u);
  EXPECT_FALSE(anyTempFiles());
  json v = jsonOf({"cache", "verify", "--format", "json"});
  EXPECT_EQ(v["checked"], 4);
  EXPECT_EQ(v["good"], 4);
  json s = jsonOf({"cache", "-s", "--format", "json"})["stats"];
  EXPECT_EQ(s["hits"].get<int>() + s["misses"].get<int>(), 32);
  EXPECT_GE(s["misses"], 4);
  for (const auto &[k, how] : compile("7"))
    EXPECT_EQ(how, "hit") << k;
}

TEST_F(CacheCli, TheLimitIsKeptAndSettingsSayWhereTheyCameFrom) {
  json p = jsonOf({"cache", "-p", "--format", "json"})["config"];
  EXPECT_EQ(p["directory"]["value"], cache_);
  EXPECT_EQ(p["directory"]["source"], "environment");
  EXPECT_EQ(p["directory"]["where"], "KILN_CACHE_DIR");
  EXPECT_EQ(p["max_size"]["source"], "default");
  EXPECT_EQ(p["max_size"]["bytes"], uint64_t(1) << 30);
  EXPECT_EQ(p["configFileExists"], false);

  compile();
  uint64_t total = jsonOf({"cache", "--format", "json"})["stats"]["bytes"];
  // A limit of half the cache: -M evicts down to 90% of it.
  std::string half = std::to_string(total / 2) + "B";
  Result m = kiln({"cache", "-M", half});
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_TRUE(contains(m.out, "max_size = " + half)) << m.out;
  EXPECT_TRUE(contains(m.out, "cleanup: removed ")) << m.out;
  json s = jsonOf({"cache", "-s", "--format", "json"})["stats"];
  EXPECT_LE(s["bytes"].get<uint64_t>(), total / 2);
  EXPECT_EQ(s["maxBytes"], total / 2);
  p = jsonOf({"cache", "-p", "--format", "json"})["config"];
  EXPECT_EQ(p["max_size"]["source"], "config file");
  EXPECT_EQ(p["max_size"]["where"], cache_ + "/kiln.conf:3");
  // Compiling more keeps it under the limit.
  compile("6");
  EXPECT_LE(
      jsonOf({"cache", "--format", "json"})["stats"]["bytes"].get<uint64_t>(),
      total / 2);

  ::setenv("KILN_CACHE_MAX_SIZE", "1MiB", 1);
  Result text = kiln({"cache", "-p"});
  EXPECT_TRUE(contains(text.out, "max_size    1.0 MiB"));
  EXPECT_TRUE(contains(text.out, "environment (KILN_CACHE_MAX_SIZE)\n"))
      << text.out;
  Result note = kiln({"cache", "-M", "2GiB"});
  EXPECT_TRUE(contains(note.err, "KILN_CACHE_MAX_SIZE=1MiB is set, and the "
                                 "environment overrides"))
      << note.err;
  ::unsetenv("KILN_CACHE_MAX_SIZE");
  Result badSize = kiln({"cache", "-M", "lots"});
  EXPECT_EQ(badSize.code, 2);
  EXPECT_TRUE(contains(badSize.err, "-M/--max-size: 'lots' is not a size"));

  // -z zeroes the counters, -C removes every entry.
  Result z = kiln({"cache", "-z", "-s"});
  EXPECT_TRUE(contains(z.out, "statistics zeroed\n")) << z.out;
  EXPECT_TRUE(contains(z.out, "hits                 0\n")) << z.out;
  Result c = kiln({"cache", "-C"});
  EXPECT_EQ(c.code, 0);
  EXPECT_TRUE(contains(c.out, "cleared " + cache_ + ": removed ")) << c.out;
  EXPECT_TRUE(entryFiles().empty());
  Result empty = kiln({"cache", "list"});
  EXPECT_EQ(empty.out, "the kernel cache in " + cache_ + " is empty\n");
}

TEST_F(CacheCli, AnUnsafeDirectoryIsRefused) {
  compile();
  ASSERT_EQ(::chmod(cache_.c_str(), 0777), 0);
  std::string why = "kernel cache directory " + cache_ +
                    " is not safe to use: it is writable by other users "
                    "(mode 0777)";
  for (std::vector<std::string> args : {std::vector<std::string>{"cache", "-s"},
                                        {"cache", "list"},
                                        {"cache", "verify"},
                                        {"cache", "-C"}}) {
    Result r = kiln(args);
    EXPECT_EQ(r.code, 1) << args[1];
    EXPECT_TRUE(contains(r.err, why)) << r.err;
    EXPECT_TRUE(contains(r.err, "chmod 700 " + cache_)) << r.err;
  }
  EXPECT_EQ(entryFiles().size(), 4u) << "-C cleared an unsafe directory";
  // The compiler warns, compiles in memory and writes nothing there; kiln
  // compile, whose purpose is to fill the cache, then fails.
  Result c = kiln({"compile", kGraph, "--bind", "N=3"});
  EXPECT_EQ(c.code, 1);
  EXPECT_TRUE(contains(c.err, why)) << c.err;
  EXPECT_TRUE(contains(c.err, "compiled in memory only"));
  EXPECT_TRUE(contains(c.err, "error: 4 compiled kernels could not be "
                              "stored in the kernel cache"))
      << c.err;
  EXPECT_EQ(llvm::StringRef(c.out).count("miss, compiled"), 4u);
  EXPECT_EQ(entryFiles().size(), 4u);
}

TEST_F(CacheCli, ExportAndImportWarmAnotherCache) {
  compile();
  std::string archive = tmp("warm.kca");
  Result ex = kiln({"cache", "export", archive});
  EXPECT_EQ(ex.code, 0) << ex.err;
  EXPECT_TRUE(contains(ex.out, "exported 4 entries")) << ex.out;
  std::string first = cache_;
  cache_ = tmp("other");
  ::setenv("KILN_CACHE_DIR", cache_.c_str(), 1);
  Result im = kiln({"cache", "import", archive});
  EXPECT_EQ(im.code, 0) << im.err;
  EXPECT_TRUE(contains(im.out, "imported 4 entries")) << im.out;
  for (const auto &[k, how] : compile())
    EXPECT_EQ(how, "hit") << k;
  Result twice = kiln({"cache", "import", archive});
  EXPECT_TRUE(contains(twice.out, "imported 0 entries (0 B) into " + cache_ +
                                      "; 4 already present"))
      << twice.out;

  // A damaged archive: the bad entry is refused, exit 1.
  std::string bytes = readFile(archive);
  bytes[bytes.find("\nentry ", 20) + 300] ^= 0x01; // inside entry 2
  std::ofstream(tmp("bad.kca"), std::ios::binary) << bytes;
  cache_ = tmp("third");
  ::setenv("KILN_CACHE_DIR", cache_.c_str(), 1);
  Result bad = kiln({"cache", "import", tmp("bad.kca")});
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(contains(bad.err, "error: refused ")) << bad.err;
  EXPECT_EQ(entryFiles().size(), 3u);
  Result notArchive = kiln({"cache", "import", kGraph});
  EXPECT_EQ(notArchive.code, 1);
  EXPECT_TRUE(contains(notArchive.err, "not a Kiln cache archive"));
}

TEST_F(CacheCli, RecompileAndDisableBypassTheDisk) {
  compile();
  ::setenv("KILN_RECOMPILE", "1", 1);
  for (const auto &[k, how] : compile())
    EXPECT_EQ(how, "miss") << k;
  ::unsetenv("KILN_RECOMPILE");
  ::setenv("KILN_CACHE_DISABLE", "1", 1);
  for (const auto &[k, how] : compile("11"))
    EXPECT_EQ(how, "miss") << k;
  EXPECT_EQ(entryFiles().size(), 4u) << "disabled, yet written";
  Result s = kiln({"cache", "-s"});
  EXPECT_TRUE(contains(s.out, "disk cache           off (disable = true, "
                              "from the environment)"))
      << s.out;
  ::unsetenv("KILN_CACHE_DISABLE");
}

} // namespace
