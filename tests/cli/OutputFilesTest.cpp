//===- OutputFilesTest.cpp - No output replaces a file the user keeps -----===//
//
// Runs the built `kiln` as a user would: an output named like the graph,
// an input, the parameters file or another output — spelled otherwise,
// through a symbolic link or a hard link — is refused before any work, and
// the file is left as it was; outputs are written whole or not at all.
// Also: memory limits before allocation, initialiser ranges, unused values
// and the reference's progress lines.
//
//===----------------------------------------------------------------------===//
#include "CliHarness.h"
#include "Device.h"
#include "Npy.h"
#include "Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;

namespace {

using Result = test::CliResult;
using test::readFile;

class OutputFiles : public test::CliFixture {
protected:
  void SetUp() override {
    CliFixture::SetUp();
    kg_ = tmp("g.kg");
    write(kg_, "graph g(x: f32[3]) {\n  param w: f32[3] = ones\n"
               "  a = add(x, w)\n  b = neg(x)\n  return a, b\n}\n");
    x_ = tmp("x.npy");
    HostTensor t(DType::F32, {3});
    for (int i = 0; i < 3; ++i)
      t.set(i, i + 0.5);
    ASSERT_FALSE(static_cast<bool>(writeNpy(x_, t)));
    params_ = tmp("p.safetensors");
    HostTensor w(DType::F32, {3});
    ASSERT_FALSE(static_cast<bool>(writeSafetensors(params_, {{"w", w}})));
  }
  /// `kiln run` of the test graph on the CPU with `extra` options.
  Result run(const std::vector<std::string> &extra) {
    std::vector<std::string> args = {"run",      kg_,     "--input",  "x=" + x_,
                                     "--params", params_, "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    return kiln(args);
  }
  /// The folder's file names, for "nothing else was left behind".
  std::vector<std::string> listing() {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir_, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(std::string(llvm::sys::path::filename(it->path())));
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string kg_, x_, params_;
};

// Every spelling of a file the command reads, as an output: exit 2 before
// any work, nothing on stdout, the file byte for byte as it was.
TEST_F(OutputFiles, AnOutputThatIsAFileTheCommandReadsIsRefused) {
  ASSERT_EQ(::symlink(x_.c_str(), tmp("link.npy").c_str()), 0);
  ASSERT_EQ(::link(x_.c_str(), tmp("hard.npy").c_str()), 0);
  ASSERT_EQ(::symlink(kg_.c_str(), tmp("graph_link").c_str()), 0);
  const std::string sub = tmp("sub");
  ASSERT_FALSE(llvm::sys::fs::create_directory(sub));
  struct Case {
    std::string output, what;
  } cases[] = {
      {x_, "input 'x'"},
      {tmp("./x.npy"), "input 'x'"},
      {sub + "/../x.npy", "input 'x'"},
      {tmp("link.npy"), "input 'x'"},
      {tmp("hard.npy"), "input 'x'"},
      {kg_, "the graph"},
      {tmp("graph_link"), "the graph"},
      {params_, "the parameters file"},
  };
  const std::string graphText = readFile(kg_), xBytes = readFile(x_),
                    paramBytes = readFile(params_);
  for (const Case &c : cases) {
    Result r = run({"--output", "a=" + c.output});
    EXPECT_EQ(r.code, 2) << c.output << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.output;
    EXPECT_NE(r.err.find("error: --output 'a' would write " + c.output +
                         ", which is " + c.what),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("write the output to another file"), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(readFile(kg_), graphText);
  EXPECT_EQ(readFile(x_), xBytes);
  EXPECT_EQ(readFile(params_), paramBytes);

  // Two outputs to one file, however spelled, would keep only the last.
  Result two = run(
      {"--output", "a=" + tmp("o.npy"), "--output", "b=" + sub + "/../o.npy"});
  EXPECT_EQ(two.code, 2) << two.err;
  EXPECT_EQ(two.err.rfind("error: --output 'a' and --output 'b' are both "
                          "written to ",
                          0),
            0u)
      << two.err;
  EXPECT_FALSE(llvm::sys::fs::exists(tmp("o.npy")));

  // plan's --dot and bench's --json and --output follow the same rule;
  // both are refused before the GPU is looked for.
  Result dot = kiln({"plan", kg_, "--dot", tmp("graph_link")});
  EXPECT_EQ(dot.code, 2) << dot.err;
  EXPECT_EQ(dot.err, "error: --dot would write " + tmp("graph_link") +
                         ", which is the graph (" + kg_ +
                         "): that would replace it; write the output to "
                         "another file\n");
  Result json = kiln({"bench", kg_, "--input", "x=" + x_, "--json", x_});
  EXPECT_EQ(json.code, 2) << json.err;
  EXPECT_NE(json.err.find("--json would write " + x_ + ", which is input 'x'"),
            std::string::npos)
      << json.err;
  Result bench = kiln({"bench", kg_, "--input", "x=" + x_, "--json",
                       tmp("f.json"), "--output", "b=" + tmp("f.json")});
  EXPECT_EQ(bench.code, 2) << bench.err;
  EXPECT_NE(bench.err.find("are both written to"), std::string::npos)
      << bench.err;
  EXPECT_EQ(readFile(kg_), graphText);
  EXPECT_EQ(readFile(x_), xBytes);
}

// A symbolic link given as an output is written through: the link stays
// and the file it names gets the output (even when that file is new); a
// file that existed keeps its permissions; no temporary file is left.
TEST_F(OutputFiles, OutputsAreWrittenThroughLinksAndWholeOrNotAtAll) {
  ASSERT_EQ(::symlink("target.npy", tmp("link.npy").c_str()), 0);
  Result r = run(
      {"--output", "a=" + tmp("link.npy"), "--output", "b=" + tmp("b.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status(tmp("link.npy"), st, /*follow=*/false));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::symlink_file);
  llvm::Expected<HostTensor> a = readNpy(tmp("target.npy"));
  ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(a->get(i), i + 0.5); // x + w, w all zeros from the file

  ASSERT_EQ(::chmod(tmp("b.npy").c_str(), 0640), 0);
  Result again = run({"--output", "b=" + tmp("b.npy")});
  ASSERT_EQ(again.code, 0) << again.err;
  ASSERT_FALSE(llvm::sys::fs::status(tmp("b.npy"), st));
  EXPECT_EQ(st.permissions(), llvm::sys::fs::perms(0640));
  std::vector<std::string> want = {"b.npy",         "g.kg",       "link.npy",
                                   "p.safetensors", "target.npy", "x.npy"};
  EXPECT_EQ(listing(), want);

  // A run that fails leaves the earlier output as it was.
  const std::string before = readFile(tmp("b.npy"));
  Result failed =
      run({"--output", "b=" + tmp("b.npy"), "--max-memory", "0.00000001"});
  EXPECT_EQ(failed.code, 1) << failed.err;
  EXPECT_EQ(readFile(tmp("b.npy")), before);
  EXPECT_EQ(listing(), want);
}

// A parameter of any size is measured against the memory limit before it
// is made: a located refusal naming it, at once, instead of "internal
// error: out of memory".
TEST_F(OutputFiles, HugeParametersAreRefusedBeforeTheyAreAllocated) {
  std::string big = tmp("big.kg");
  write(big, "graph big(x: f32[3]) {\n"
             "  param w: f32[2147483647, 1024] = ones\n"
             "  y = mul(w, 2.0)\n  return y\n}\n");
  Result r = kiln({"run", big, "--input", "x=" + x_, "--device", "cpu"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("error: evaluating graph 'big' needs"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("more than the limit of 8.0 GiB"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the largest is parameter 'w' f32[2147483647, 1024], "
                       "16.0 TiB"),
            std::string::npos)
      << r.err;
  // Above what the machine has (16 TiB is more than any host here), the
  // machine's memory bounds it.
  Result raised = kiln({"run", big, "--input", "x=" + x_, "--device", "cpu",
                        "--max-memory", "1000000"});
  EXPECT_EQ(raised.code, 1) << raised.err;
  EXPECT_NE(raised.err.find("of memory available on this machine; the "
                            "largest is parameter 'w'"),
            std::string::npos)
      << raised.err;
  EXPECT_EQ(raised.err.find("internal error"), std::string::npos);
}

// kiln bench makes random inputs for bound sizes on the host: sizes beyond
// its memory are refused before anything is made (or a GPU looked for).
TEST_F(OutputFiles, BenchRefusesRandomInputsBeyondTheHostsMemory) {
  std::string kg = tmp("b.kg");
  write(kg, "graph b(x: f32[N, 1048576]) {\n  y = relu(x)\n  return y\n}\n");
  Result r = kiln({"bench", kg, "--bind", "N=100000000"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("error: the random inputs of graph 'b' need 381.5 TiB"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the largest is input 'x' f32[100000000, 1048576]"),
            std::string::npos)
      << r.err;
}

// On the GPU: the device's free memory bounds the tensors, or --max-memory
// when given, before the parameters are made or uploaded.
TEST_F(OutputFiles, HugeParametersAreRefusedBeforeTheyReachTheGpu) {
  if (llvm::Expected<rt::DeviceTraits> d = rt::Device::probe(0); !d) {
    std::string why = llvm::toString(d.takeError());
    GTEST_SKIP() << "no GPU here: " << why;
  }
  std::string big = tmp("big.kg");
  write(big, "graph big(x: f32[3]) {\n"
             "  param w: f32[2147483647, 1024] = ones\n"
             "  y = mul(w, 2.0)\n  return y\n}\n");
  Result gpu = kiln({"run", big, "--input", "x=" + x_, "--device", "gpu"});
  EXPECT_EQ(gpu.code, 1) << gpu.err;
  EXPECT_NE(gpu.err.find("the largest is parameter 'w' f32[2147483647, 1024], "
                         "8.0 TiB"),
            std::string::npos)
      << gpu.err;
  Result capped = kiln({"run", kg_, "--input", "x=" + x_, "--device", "gpu",
                        "--max-memory", "0.000000001"});
  EXPECT_EQ(capped.code, 1) << capped.err;
  EXPECT_NE(capped.err.find("(--max-memory)"), std::string::npos) << capped.err;
}

// What PyTorch's torch.full refuses, and i64 values Kiln cannot hold
// exactly, are refused at the declaration by `kiln check`.
TEST_F(OutputFiles, InitialiserValuesOutsideTheirDtypeAreLocatedErrors) {
  struct Case {
    const char *decl, *err;
  } cases[] = {
      {"i64[2] = full(1e300)",
       "g.kg:2:9: error: parameter 'p' is i64, but full(1e+300) is beyond "
       "+-(2^53 - 1), the integers Kiln keeps exactly; use a smaller value\n"},
      {"f32[2] = full(1e300)",
       "g.kg:2:9: error: parameter 'p' is f32, but full(1e+300) overflows it "
       "(its largest finite value is 3.4028234663852886e+38; PyTorch refuses "
       "it too); use a value within range\n"},
      {"f16[2] = uniform(-70000, 1, seed=1)",
       "g.kg:2:9: error: parameter 'p' is f16, but uniform(-70000.0, 1.0, "
       "seed=1) overflows it (its largest finite value is 65504.0; PyTorch "
       "refuses it too); use a value within range\n"},
  };
  for (const Case &c : cases) {
    write(tmp("g.kg"), fmt::format("graph g(x: f32[2]) {{\n  param p: {}\n"
                                   "  y = add(x, p)\n  return y\n}}\n",
                                   c.decl));
    Result r = kiln({"check", tmp("g.kg")});
    EXPECT_EQ(r.code, 1) << c.decl;
    EXPECT_EQ(r.err, tmp(c.err)) << c.decl;
  }
  // In range, inf and NaN stay allowed (torch.full takes them).
  for (const char *ok : {"f16[2] = full(65504)", "f32[2] = full(inf)",
                         "i64[2] = full(-9007199254740991)"}) {
    write(tmp("g.kg"), fmt::format("graph g(x: f32[2]) {{\n  param p: {}\n"
                                   "  y = add(x, p)\n  return y\n}}\n",
                                   ok));
    Result r = kiln({"check", tmp("g.kg")});
    EXPECT_EQ(r.code, 0) << ok << "\n" << r.err;
  }
}

// A value nothing reads and the graph does not return is most often a
// typo: check and plan say so, at its declaration.
TEST_F(OutputFiles, UnusedValuesAreWarnedAbout) {
  std::string kg = tmp("u.kg");
  write(kg, "graph u(x: f32[4], z: f32[4]) {\n  param w: f32[4] = ones\n"
            "  a = relu(x)\n  b = neg(a)\n  return a\n}\n");
  const std::string want =
      kg +
      ":1:20: warning: input 'z' is never used: no op reads it and the "
      "graph does not return it\n" +
      kg +
      ":2:9: warning: parameter 'w' is never used: no op reads it and "
      "the graph does not return it\n" +
      kg +
      ":4:7: warning: value 'b' is never used: no op reads it and the "
      "graph does not return it\n";
  Result check = kiln({"check", kg});
  EXPECT_EQ(check.code, 0) << check.err;
  EXPECT_EQ(check.err.substr(0, want.size()), want);
  Result plan = kiln({"plan", kg});
  EXPECT_EQ(plan.code, 0) << plan.err;
  EXPECT_EQ(plan.err, want);
  // A graph that uses everything gets no warning.
  Result clean = kiln({"plan", kg_});
  EXPECT_EQ(clean.code, 0) << clean.err;
  EXPECT_EQ(clean.err, "");
}

// The reference announces only nodes that take a while: not a tiny linear.
TEST_F(OutputFiles, TheReferenceAnnouncesOnlyHeavyNodes) {
  std::string kg = tmp("lin.kg");
  write(kg, "graph lin(x: f32[N, 512]) {\n"
            "  param w: f32[512, 512] = uniform(-0.1, 0.1, seed=1)\n"
            "  y = linear(x, w)\n  return y\n}\n");
  auto input = [&](int64_t rows) {
    HostTensor t(DType::F32, {rows, 512});
    std::string path = tmp(fmt::format("x{}.npy", rows));
    EXPECT_FALSE(static_cast<bool>(writeNpy(path, t)));
    return path;
  };
  Result tiny =
      kiln({"run", kg, "--input", "x=" + input(2), "--device", "cpu"});
  EXPECT_EQ(tiny.code, 0) << tiny.err;
  EXPECT_EQ(tiny.err.find("computing"), std::string::npos) << tiny.err;
  Result heavy =
      kiln({"run", kg, "--input", "x=" + input(256), "--device", "cpu"});
  EXPECT_EQ(heavy.code, 0) << heavy.err;
  EXPECT_NE(heavy.err.find("[1/1] computing y = linear f32[256, 512] ..."),
            std::string::npos)
      << heavy.err;
}

} // namespace
