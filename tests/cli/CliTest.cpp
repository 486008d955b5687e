//===- CliTest.cpp - The kiln command line, as a user runs it -------------===//
//
// Runs the built `kiln` binary (and the builder example) as processes and
// checks exit codes, stdout and stderr, the way a new user would meet them.
//
//===----------------------------------------------------------------------===//
#include "CliHarness.h"
#include "Npy.h"
#include "Safetensors.h"
#include "ref/Compare.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace kiln;

namespace {

using Result = test::CliResult;
using test::contains;
using test::readFile;
using test::src;

class Cli : public test::CliFixture {};

const char *kFlagships[] = {"l1_35", "l2_19", "l2_37", "l2_62", "l2_75"};

TEST_F(Cli, HelpAndVersion) {
  Result r = kiln({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: kiln COMMAND"), std::string::npos);
  for (const char *cmd : {"check", "run", "ops"}) {
    EXPECT_NE(r.out.find(std::string("  ") + cmd), std::string::npos) << cmd;
    Result h = kiln({cmd, "--help"});
    EXPECT_EQ(h.code, 0) << cmd;
    EXPECT_EQ(h.out.rfind(std::string("usage: kiln ") + cmd, 0), 0u) << cmd;
  }
  // Every help text fits a terminal of 80 columns: option help and long
  // usage lines wrap (frontend/cli/Args.cpp), descriptions are written so.
  for (llvm::StringRef cmd :
       {"", "check", "plan", "compile", "run", "bench", "ops", "cache",
        "cache list", "cache show", "cache verify", "cache export",
        "cache import", "cache why"}) {
    llvm::SmallVector<llvm::StringRef, 2> words;
    cmd.split(words, ' ', -1, /*KeepEmpty=*/false);
    std::vector<std::string> args(words.begin(), words.end());
    args.push_back("--help");
    Result h = kiln(args);
    EXPECT_EQ(h.code, 0) << h.err;
    for (llvm::StringRef rest = h.out; !rest.empty();) {
      auto [line, next] = rest.split('\n');
      EXPECT_LE(line.size(), 80u) << line.str();
      rest = next;
    }
  }
  Result v = kiln({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("kiln 0.", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("NVRTC 13."), std::string::npos) << v.out;
  // Either a GPU is listed or the reason there is none is given.
  EXPECT_TRUE(v.out.find("GPU 0:") != std::string::npos ||
              v.out.find("no GPU: ") != std::string::npos)
      << v.out;
}

TEST_F(Cli, UsageErrorsExitWithTwo) {
  Result none = kiln({});
  EXPECT_EQ(none.code, 2);
  Result bad = kiln({"frob"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: unknown command 'frob'; the commands are "
                     "check, plan, compile, run, bench, ops, cache (see 'kiln "
                     "--help')\n");
  Result typo = kiln({"check", src("examples/l2_75.kg"), "--bnd", "N=1"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err, "error: kiln check: unknown option '--bnd'; did you "
                      "mean '--bind'? (see 'kiln check --help')\n");
  Result missing = kiln({"check"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "error: kiln check: expected 1 argument; usage: "
                         "kiln check FILE [--bind NAME=SIZE]... "
                         "[--no-types]\n");
  Result noValue = kiln({"run", src("examples/l2_75_small.kg"), "--input"});
  EXPECT_EQ(noValue.code, 2);
  EXPECT_NE(noValue.err.find("option '--input' needs a value"),
            std::string::npos);
}

TEST_F(Cli, CheckPrintsATypedGraphThatParsesBack) {
  for (const char *id : kFlagships)
    for (std::string suffix : {"", "_small"}) {
      std::string path = src("examples/" + std::string(id) + suffix + ".kg");
      Result r = kiln({"check", path});
      ASSERT_EQ(r.code, 0) << path << "\n" << r.err;
      EXPECT_NE(r.err.find("ok: 1 input"), std::string::npos) << r.err;
      std::string again = tmp("again.kg");
      write(again, r.out);
      Result r2 = kiln({"check", again});
      EXPECT_EQ(r2.code, 0) << r2.err;
      EXPECT_EQ(r2.out, r.out) << path;
    }
}

TEST_F(Cli, CheckWithBindingShowsPyTorchsBroadcast) {
  Result r = kiln({"check", src("examples/l2_75.kg"), "--bind", "N=1024"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("out: f32[1, 8192, 1024, 1] = add(m, bias)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("x: f32[1024, 8192]"), std::string::npos) << r.out;
  // A binding too large for 64-bit indexing is refused, as plan and run
  // refuse it; a bad binding is a bad command line.
  std::string cube = tmp("cube.kg");
  write(cube, "graph g(x: f32[N, N, N]) {\n  y = relu(x)\n  return y\n}\n");
  Result huge = kiln({"check", cube, "--bind", "N=2147483647"});
  EXPECT_EQ(huge.code, 1);
  EXPECT_NE(huge.err.find("has more than 2^60 elements"), std::string::npos)
      << huge.err;
  Result bad = kiln({"check", src("examples/l2_75.kg"), "--bind", "N=abc"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: bad binding 'N=abc': write NAME=SIZE, e.g. "
                     "N=1024\n");
}

TEST_F(Cli, CheckReportsBadInputWithALocation) {
  Result nofile = kiln({"check", tmp("nope.kg")});
  EXPECT_EQ(nofile.code, 1);
  EXPECT_NE(nofile.err.find(tmp("nope.kg")), std::string::npos) << nofile.err;
  std::string bad = tmp("bad.kg");
  write(bad, "graph g(x: f32[4, 3]) {\n  y = matmul(x, x)\n  return y\n}\n");
  Result r = kiln({"check", bad});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, bad + ":2:7: error: matmul: inner dims differ: 'x' [4, 3] "
                         "contracts 3 against 4 of 'x' [4, 3]\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(Cli, RunMatchesPyTorchOnEveryFlagship) {
  for (const char *id : kFlagships) {
    std::string name = std::string(id) + "_small";
    std::string out = tmp(name + "_out.npy");
    Result r =
        kiln({"run", src("examples/" + name + ".kg"), "--input",
              "x=" + src("examples/data/" + name + "_x.npy"), "--params",
              src("examples/data/" + name + ".safetensors"), "--output", out});
    ASSERT_EQ(r.code, 0) << name << "\n" << r.err;
    EXPECT_NE(r.err.find("float64 reference evaluator"), std::string::npos);
    EXPECT_NE(r.out.find("NaN 0"), std::string::npos) << r.out;
    HostTensor got = cantFail(readNpy(out));
    HostTensor want =
        cantFail(readNpy(src("examples/data/" + name + "_expected.npy")));
    EXPECT_EQ(got.dtype, DType::F32);
    // The output file is f32: each element carries one f32 rounding.
    Comparison c = compareTensors(toRef(got), toRef(want), 1e-6, 1e-6);
    EXPECT_TRUE(c.ok()) << name << ": " << c.firstMismatch;
    EXPECT_LT(c.relError, 1e-7) << name;
  }
}

TEST_F(Cli, RunExplainsBadInputs) {
  std::string kg = src("examples/l2_75_small.kg");
  std::string x = src("examples/data/l2_75_small_x.npy");
  Result noInput = kiln({"run", kg});
  EXPECT_EQ(noInput.code, 2);
  EXPECT_EQ(noInput.err, "error: graph input 'x' f32[N, 128] has no data; "
                         "pass --input x=FILE.npy\n");
  Result wrongName = kiln({"run", kg, "--input", "y=" + x});
  EXPECT_EQ(wrongName.code, 2);
  EXPECT_NE(wrongName.err.find("the graph has no input named 'y' (it has: "
                               "x)"),
            std::string::npos)
      << wrongName.err;
  // A float64 array where the graph wants f32.
  std::string f64 = tmp("x64.npy");
  ASSERT_FALSE(static_cast<bool>(writeNpy(
      f64, cantFail(readNpy(src("examples/data/l2_75_small_expected.npy"))))));
  Result wrongType = kiln({"run", kg, "--input", "x=" + f64});
  EXPECT_EQ(wrongType.code, 1);
  EXPECT_NE(wrongType.err.find("is f64[1, 256, 5, 1], but the graph declares "
                               "f32[N, 128]"),
            std::string::npos)
      << wrongType.err;
  // Right dtype, wrong shape: the named dim binds, the fixed one must match.
  std::string wrongShape = tmp("x3.npy");
  HostTensor t(DType::F32, {5, 64});
  ASSERT_FALSE(static_cast<bool>(writeNpy(wrongShape, t)));
  Result shape = kiln({"run", kg, "--input", wrongShape});
  EXPECT_EQ(shape.code, 1);
  EXPECT_EQ(shape.err, "error: input 'x' has shape [5, 64], but the graph "
                       "declares [N, 128]: dim 1 must be 128\n");
}

// Option values that cannot be, or options that do not go together, are a
// bad command line (exit code 2), found before the graph runs; two outputs
// to one file would silently keep only the last.
TEST_F(Cli, RunRefusesOptionsThatCannotWorkTogether) {
  std::string kg = tmp("two.kg");
  write(kg, "graph g(x: f32[3]) {\n  a = relu(x)\n  b = neg(x)\n"
            "  return a, b\n}\n");
  std::string x = tmp("x.npy");
  HostTensor t(DType::F32, {3});
  ASSERT_FALSE(static_cast<bool>(writeNpy(x, t)));
  const std::string out = tmp("out.npy");
  struct Case {
    std::vector<std::string> args;
    const char *err;
  } cases[] = {
      {{"--device", "tpu"},
       "error: --device takes auto, gpu or cpu, not 'tpu'"},
      {{"--device", "cpu", "--check"},
       "error: --check compares the GPU's outputs with the float64 "
       "reference, which is what --device cpu runs: leave out one of them"},
      {{"--tolerance", "1e-3"},
       "error: --tolerance is for --check; add "
       "--check"},
      {{"--check", "--tolerance", "nan"},
       "error: --tolerance takes a number >= 0, got 'nan'"},
      {{"--max-memory", "0"},
       "error: --max-memory takes a positive number "
       "of GiB (at most 2^33), got '0'"},
      {{"--output", "b="},
       "error: --output b=: no file is named; write "
       "--output b=FILE"},
      {{"--output", "a=" + out, "--output", "b=" + tmp("./out.npy")},
       "error: --output 'a' and --output 'b' are both written to "},
  };
  for (const Case &c : cases) {
    std::vector<std::string> args = {"run", kg, "--input", "x=" + x};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Result r = kiln(args);
    EXPECT_EQ(r.code, 2) << c.err;
    EXPECT_EQ(r.err.rfind(c.err, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "") << c.err;
  }
  EXPECT_FALSE(llvm::sys::fs::exists(out));
  Result ok = kiln({"run", kg, "--input", "x=" + x, "--device", "cpu",
                    "--output", "a=" + out, "--output", "b=" + tmp("b.npy")});
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST_F(Cli, RunUsesInitialisersWithoutAParamsFile) {
  Result r = kiln({"run", src("examples/l2_62_small.kg"), "--input",
                   src("examples/data/l2_62_small_x.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("out: f32[6, 256]", 0), 0u) << r.out;
}

// A batch of 0, as PyTorch allows: no kernel, every result empty (on the
// GPU where there is one, else on the reference evaluator).
TEST_F(Cli, AnEmptyBatchRunsWithNoKernel) {
  std::string kg = src("examples/l2_75_small.kg");
  std::string x = tmp("x0.npy"), out = tmp("out0.npy");
  ASSERT_FALSE(
      static_cast<bool>(writeNpy(x, HostTensor(DType::F32, {0, 128}))));
  Result r = kiln({"run", kg, "--input", x, "--output", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "out: f32[1, 256, 0, 1]  empty\n");
  HostTensor got = cantFail(readNpy(out));
  EXPECT_EQ(got.shape, (llvm::SmallVector<int64_t, 6>{1, 256, 0, 1}));
  Result plan = kiln({"plan", kg, "--bind", "N=0"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("no kernel: y = linear\n  writes  y f32[0, 256] "
                          "(empty)\n"),
            std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("0 kernels for 4 nodes"), std::string::npos)
      << plan.out;
  // A binding of a name the graph does not have is reported, not ignored.
  Result typo = kiln({"plan", kg, "--bind", "N=0", "--bind", "M=3"});
  EXPECT_EQ(typo.code, 1);
  EXPECT_EQ(typo.err, "error: 'M' is bound to 3, but graph "
                      "'gemm_gn_min_bias_l2_75' has no named dim 'M' (its "
                      "named dims: N)\n");
}

// An arch NVRTC does not compile for is reported before any work, with the
// ones it does (an empty one too: it used to mean sm_90); so is one NVRTC
// knows but Kiln's kernels are too new for.
TEST_F(Cli, AnUnknownArchIsReported) {
  std::string kg = src("examples/l2_75_small.kg");
  for (const char *arch : {"garbage", "sm_35", ""}) {
    Result r = kiln({"plan", kg, "--bind", "N=2", "--arch", arch});
    EXPECT_EQ(r.code, 2) << arch;
    EXPECT_EQ(r.err.rfind(fmt::format("error: --arch: '{}' is not an arch "
                                      "NVRTC ",
                                      arch),
                          0),
              0u)
        << r.err;
    EXPECT_NE(r.err.find("sm_90"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("sm_75"), std::string::npos) << r.err;
  }
  Result old = kiln({"compile", kg, "--bind", "N=2", "--arch", "sm_75"});
  EXPECT_EQ(old.code, 2);
  EXPECT_EQ(old.err, "error: --arch: 'sm_75' is older than Kiln's kernels "
                     "allow: they need sm_80 or newer (Ampere's warp "
                     "reductions and asynchronous copies)\n");
  EXPECT_EQ(kiln({"plan", kg, "--bind", "N=2", "--arch", "sm_80"}).code, 0);
}

TEST_F(Cli, BuilderExamplePrintsTheSameGraphAsTheFile) {
  Result built =
      exec(std::string(KILN_BINARY_DIR) + "/examples/build_l2_75", {});
  ASSERT_EQ(built.code, 0) << built.err;
  Result parsed = kiln({"check", src("examples/l2_75.kg")});
  ASSERT_EQ(parsed.code, 0) << parsed.err;
  EXPECT_EQ(built.out, parsed.out);
}

// The flagship demo (README's first command runs it): on the reference
// evaluator with --cpu; by default on the GPU where there is one (this
// test then checks Kiln's kernels against PyTorch's golden answers), else
// on the CPU too.
TEST_F(Cli, TheDemoMatchesPyTorch) {
  const std::string demo = std::string(KILN_BINARY_DIR) + "/examples/kiln_demo";
  Result cpu = exec(demo, {"--cpu"});
  EXPECT_EQ(cpu.code, 0) << cpu.out << cpu.err;
  EXPECT_TRUE(contains(cpu.out, "2. Small shapes on the reference evaluator"))
      << cpu.out;
  EXPECT_TRUE(contains(cpu.out, "All five workloads match PyTorch."))
      << cpu.out;
  Result plain = exec(demo, {});
  EXPECT_EQ(plain.code, 0) << plain.out << plain.err;
  EXPECT_TRUE(contains(plain.out, "All five workloads match PyTorch."))
      << plain.out;
  Result help = exec(demo, {"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out.rfind("usage: kiln_demo [--cpu]", 0), 0u) << help.out;
  Result bad = exec(demo, {"--gpu"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "kiln_demo: unknown option '--gpu' (see 'kiln_demo "
                     "--help')\n");
}

TEST_F(Cli, RunTakesAndWritesSafetensorsForBf16) {
  std::string kg = tmp("bf16.kg");
  write(kg, "graph g(x: bf16[N, 3]) {\n  y = gelu(x)\n  return y\n}\n");
  HostTensor x(DType::BF16, {2, 3});
  const double values[] = {-2.5, -0.75, 0.0, 0.5, 1.25, 3.0};
  for (int i = 0; i < 6; ++i)
    x.set(i, values[i]); // all exact in bf16
  std::string in = tmp("x.safetensors"), out = tmp("y.safetensors");
  ASSERT_FALSE(static_cast<bool>(writeSafetensors(in, {{"x", x}})));
  Result r = kiln({"run", kg, "--input", in, "--output", "y=" + out});
  ASSERT_EQ(r.code, 0) << r.err;
  SafetensorsFile f = cantFail(readSafetensors(out));
  const HostTensor *y = f.find("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->typeStr(), "bf16[2, 3]");
  for (int i = 0; i < 6; ++i) {
    double v = values[i], want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    EXPECT_NEAR(y->get(i), want, std::fabs(want) / 128 + 1e-30) << v;
  }
  // .npy cannot hold bf16: a clear error, not a silent conversion.
  Result npy = kiln({"run", kg, "--input", in, "--output", tmp("y.npy")});
  EXPECT_EQ(npy.code, 1);
  EXPECT_EQ(npy.err.substr(npy.err.find("error:")),
            "error: output 'y' is bf16, which .npy cannot hold (numpy has no "
            "bfloat16); write it as --output y=FILE.safetensors\n");
  // An f32 .npy where the graph wants bf16 gets an honest hint.
  std::string f32 = tmp("x32.npy");
  ASSERT_FALSE(
      static_cast<bool>(writeNpy(f32, HostTensor(DType::F32, {2, 3}))));
  Result wrong = kiln({"run", kg, "--input", f32});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("but the graph declares bf16[N, 3]; numpy has no "
                           "bfloat16: save it with safetensors instead"),
            std::string::npos)
      << wrong.err;
}

// On the CPU, f16 results are rounded op by op as on the GPU and in
// PyTorch: 1 + 0.0004 is 1 in f16, so y * 1000 is 1000, where rounding
// only the output would give f16(1000.4) = 1000.5.
TEST_F(Cli, CpuRunRoundsHalfResultsOpByOp) {
  std::string kg = tmp("f16.kg");
  write(kg, "graph g(x: f16[2]) {\n  y = add(x, 0.0004)\n"
            "  z = mul(y, 1000.0)\n  return z\n}\n");
  HostTensor x(DType::F16, {2});
  x.set(0, 1.0);
  x.set(1, -2.0);
  std::string in = tmp("x16.npy"), out = tmp("z16.npy");
  ASSERT_FALSE(static_cast<bool>(writeNpy(in, x)));
  Result r =
      kiln({"run", kg, "--device", "cpu", "--input", in, "--output", out});
  ASSERT_EQ(r.code, 0) << r.err;
  HostTensor z = cantFail(readNpy(out));
  EXPECT_EQ(z.get(0), 1000.0);
  EXPECT_EQ(z.get(1), -2000.0); // -2 + 0.0004 is -2 in f16 too
}

TEST_F(Cli, ThreadedEvaluationIsBitIdentical) {
  // Large enough that linear and the convolutions split across threads.
  std::string kg = tmp("threads.kg");
  write(kg, "graph t(x: f32[2, 8, 34, 34], v: f32[64, 300]) {\n"
            "  param w: f32[16, 8, 3, 3] = uniform(-0.1, 0.1, seed=1)\n"
            "  param wt: f32[16, 4, 3, 3] = uniform(-0.1, 0.1, seed=2)\n"
            "  param wl: f32[256, 300] = uniform(-0.1, 0.1, seed=3)\n"
            "  c = conv2d(x, w, padding=1)\n"
            "  t = conv_transpose2d(c, wt, stride=2)\n"
            "  l = linear(v, wl)\n"
            "  return t, l\n}\n");
  HostTensor x(DType::F32, {2, 8, 34, 34}), v(DType::F32, {64, 300});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, std::sin(0.37 * double(i)));
  for (int64_t i = 0; i < v.numel(); ++i)
    v.set(i, std::cos(0.11 * double(i)));
  ASSERT_FALSE(static_cast<bool>(writeNpy(tmp("x.npy"), x)));
  ASSERT_FALSE(static_cast<bool>(writeNpy(tmp("v.npy"), v)));
  // The child inherits KILN_THREADS from this process (LLVM 14's
  // ExecuteAndWait does not apply an explicit environment).
  auto run = [&](const char *threads) {
    std::string suffix = threads;
    ASSERT_EQ(setenv("KILN_THREADS", threads, 1), 0);
    Result r = kiln({"run", kg, "--input", "x=" + tmp("x.npy"), "--input",
                     "v=" + tmp("v.npy"), "--output",
                     "t=" + tmp("t" + suffix + ".npy"), "--output",
                     "l=" + tmp("l" + suffix + ".npy")});
    unsetenv("KILN_THREADS");
    EXPECT_EQ(r.code, 0) << r.err;
  };
  run("1");
  run("64");
  for (const char *out : {"t", "l"}) {
    std::string one = readFile(tmp(std::string(out) + "1.npy"));
    EXPECT_FALSE(one.empty());
    EXPECT_EQ(one, readFile(tmp(std::string(out) + "64.npy"))) << out;
  }
}

TEST_F(Cli, OpsListsEveryOp) {
  Result r = kiln({"ops"});
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("group_norm(input, weight?, bias?, groups=int, "
                       "eps=1e-05)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("swish(input)  (also silu)"), std::string::npos);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 34);
}

} // namespace
