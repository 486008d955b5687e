//===- PrecisionCliTest.cpp - --matmul-precision, as a user gives it ------===//
//
// Every command that compiles takes --matmul-precision (PyTorch's names:
// highest, high, medium). `kiln plan` shows which kernel each precision gets
// for linear and names the precision on its last line; a bad value is a
// usage error. No GPU needed.
//
//===----------------------------------------------------------------------===//
#include "CliHarness.h"

#include <gtest/gtest.h>

namespace {

using Result = kiln::test::CliResult;
using kiln::test::contains;
using kiln::test::src;
using kiln::test::unwrapped;

class PrecisionCli : public kiln::test::CliFixture {
protected:
  /// `kiln plan` of L2_62 (a linear of K = 8192, then GroupNorm) for
  /// `arch`, at `precision` ("" leaves the option out).
  Result plan(const std::string &arch, const std::string &precision) {
    std::vector<std::string> args = {
        "plan", src("examples/l2_62.kg"), "--bind", "N=1024", "--arch", arch};
    if (!precision.empty())
      args.insert(args.end(), {"--matmul-precision", precision});
    return kiln(args);
  }
};

const char *const kPrecisions[] = {"highest", "high", "medium"};

TEST_F(PrecisionCli, OnSm90HighestIs3xTf32AndTheOthersTf32) {
  Result byDefault = plan("sm_90", "");
  ASSERT_EQ(byDefault.code, 0) << byDefault.err;
  EXPECT_TRUE(contains(byDefault.out, "schedule wgmmaLinear bn=128 stages=4 "
                                      "passes=3"))
      << byDefault.out;
  EXPECT_TRUE(contains(byDefault.out, "target sm_90, 132 SMs, matmul "
                                      "precision highest\n"))
      << byDefault.out;
  EXPECT_EQ(plan("sm_90", "highest").out, byDefault.out);

  // medium may use bf16; Kiln runs f32 tensors at TF32 (as cuBLAS does).
  for (const char *p : {"high", "medium"}) {
    Result r = plan("sm_90", p);
    ASSERT_EQ(r.code, 0) << p << "\n" << r.err;
    EXPECT_TRUE(contains(r.out, "schedule wgmmaLinear")) << r.out;
    EXPECT_TRUE(contains(r.out, " passes=1")) << r.out;
    EXPECT_FALSE(contains(r.out, "passes=3")) << r.out;
    EXPECT_TRUE(contains(r.out, "TF32 tensor cores (wgmma)")) << r.out;
    EXPECT_TRUE(contains(r.out, std::string("target sm_90, 132 SMs, matmul "
                                            "precision ") +
                                    p + "\n"))
        << r.out;
  }
}

TEST_F(PrecisionCli, OnSm80EveryPrecisionRunsFfma) {
  for (const char *p : kPrecisions) {
    Result r = plan("sm_80", p);
    ASSERT_EQ(r.code, 0) << p << "\n" << r.err;
    EXPECT_TRUE(contains(r.out, "schedule gemmNT ")) << p << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "; FFMA tiles of ")) << p << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "wgmma")) << p << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, std::string("matmul precision ") + p + "\n"))
        << r.out;
  }
}

// Checked before anything compiles, by every command that takes it.
TEST_F(PrecisionCli, ABadPrecisionIsAUsageErrorNamingTheChoices) {
  const std::string kg = src("examples/l2_62_small.kg");
  const std::vector<std::vector<std::string>> commands = {
      {"plan"}, {"compile"}, {"run"}, {"bench"}, {"cache", "why"}};
  for (const std::vector<std::string> &cmd : commands) {
    std::string name = cmd.size() == 1 ? cmd[0] : cmd[0] + " " + cmd[1];
    std::vector<std::string> args = cmd;
    args.insert(args.end(), {kg, "--matmul-precision", "fast"});
    Result r = kiln(args);
    EXPECT_EQ(r.code, 2) << name << "\n" << r.err;
    EXPECT_EQ(r.err, "error: kiln " + name +
                         ": --matmul-precision: 'fast' is not a precision; "
                         "use highest (fp32-accurate, the default), high "
                         "(TF32) or medium (bf16 allowed)\n")
        << name;
    EXPECT_EQ(r.out, "") << name;
  }
  // The names are PyTorch's, lower case; an empty value is no name either.
  Result upper = plan("sm_90", "HIGH");
  EXPECT_EQ(upper.code, 2);
  EXPECT_TRUE(contains(upper.err, "'HIGH' is not a precision")) << upper.err;
  Result empty = kiln({"plan", kg, "--matmul-precision="});
  EXPECT_EQ(empty.code, 2);
  EXPECT_TRUE(contains(empty.err, "'' is not a precision")) << empty.err;
  Result twice = kiln({"plan", kg, "--matmul-precision", "high",
                       "--matmul-precision", "medium"});
  EXPECT_EQ(twice.code, 2);
  EXPECT_TRUE(contains(twice.err, "option '--matmul-precision' is given "
                                  "twice"))
      << twice.err;
}

TEST_F(PrecisionCli, EveryCommandThatCompilesListsTheOption) {
  const std::vector<std::vector<std::string>> commands = {
      {"plan"}, {"compile"}, {"run"}, {"bench"}, {"cache", "why"}};
  for (std::vector<std::string> args : commands) {
    args.push_back("--help");
    Result r = kiln(args);
    EXPECT_EQ(r.code, 0) << args[0];
    EXPECT_TRUE(contains(r.out, "[--matmul-precision MODE]")) << "usage line\n"
                                                              << r.out;
    EXPECT_TRUE(contains(r.out, "  --matmul-precision MODE ")) << "options\n"
                                                               << r.out;
    EXPECT_TRUE(contains(unwrapped(r.out),
                         "highest (fp32-accurate, the default), high "
                         "(TF32) or medium (bf16 allowed"))
        << r.out;
  }
  // Commands that compile nothing do not take it.
  Result check = kiln({"check", "--help"});
  EXPECT_FALSE(contains(check.out, "--matmul-precision")) << check.out;
}

} // namespace
