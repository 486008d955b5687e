//===- GpuKernelsTest.cpp - Generated kernels against the reference -------===//
//
// Every kernel kind on the GPU against the float64 reference evaluator:
// fresh random data per case (never zeros), sizes that do not divide the
// block or vector width, NaN and large-offset inputs, outputs poisoned with
// NaN before each run. Skipped, with the reason, where there is no GPU.
//
//===----------------------------------------------------------------------===//
#include "Execute.h"
#include "GpuCases.h"
#include "GpuExecute.h"
#include "Parser.h"

#include "kiln/tiling.cuh"

#include <gtest/gtest.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <thread>
#include <utility>

namespace kiln {
namespace {

/// A test that needs the GPU, skipped (with the reason) where there is none.
class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto dev = rt::Device::open(0);
    if (!dev) {
      std::string why = llvm::toString(dev.takeError());
      GTEST_SKIP() << "no GPU here, GPU tests skipped: " << why;
    }
  }
};

class GpuKernels : public GpuTest,
                   public ::testing::WithParamInterface<Case> {};

HostTensor randomTensor(DType dtype, llvm::ArrayRef<int64_t> shape,
                        std::mt19937_64 &rng, double offset, double nanRate,
                        double infRate = 0) {
  HostTensor t(dtype, shape);
  std::uniform_real_distribution<double> u(-1.0, 1.0), p(0.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double r = p(rng), v = offset + u(rng);
    t.set(i, r < nanRate             ? NAN
             : r < nanRate + infRate ? std::copysign(INFINITY, v)
                                     : v);
  }
  return t;
}

/// Compares one run's outputs with the float64 reference on `inputs`; each
/// op's result is rounded to its dtype there (f16, bf16 and f32), as the
/// kernels store them and keep them between ops (EvalOptions::
/// roundToStorage, roundF32).
void expectMatches(const Case &c, const Graph &g, GpuSession &s,
                   const std::vector<HostTensor> &inputs, int run) {
  auto outs = s.downloadOutputs();
  ASSERT_TRUE(static_cast<bool>(outs)) << llvm::toString(outs.takeError());
  EvalOptions eo;
  eo.roundToStorage = true;
  eo.roundF32 = true;
  auto ref = executeReference(g, inputs, nullptr, "", eo);
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  for (size_t o = 0; o < outs->size(); ++o) {
    const HostTensor &gpu = (*outs)[o];
    const RefTensor &want = ref->outputs[o];
    ASSERT_EQ(gpu.numel(), want.numel());
    // An f16 or bf16 result whose f32 value lies next to a rounding
    // boundary may round one way here and the other in the reference: one
    // ulp of the dtype (bf16 0.4%), which over a few outputs outweighs any
    // tolerance on the norm. Such flips leave the norm, and must be few:
    // a wrong rounding (truncation) would flip about half of them
    // (Case::flipShare).
    const int mantissa = gpu.dtype == DType::F16    ? 10
                         : gpu.dtype == DType::BF16 ? 7
                                                    : 0;
    auto ulp = [&](double v) {
      const int e = std::max(std::ilogb(v == 0 ? 1e-300 : v),
                             gpu.dtype == DType::F16 ? -14 : -126);
      return std::ldexp(1.0, e - mantissa);
    };
    double num = 0, den = 0;
    int64_t nanBad = 0, flips = 0;
    for (int64_t i = 0; i < gpu.numel(); ++i) {
      double a = gpu.get(i), b = want.data[i];
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
        bool same = (std::isnan(a) && std::isnan(b)) || a == b;
        nanBad += !same;
        continue;
      }
      den += b * b;
      if (mantissa > 0 && a != b &&
          std::abs(a - b) <= ulp(std::max(std::abs(a), std::abs(b)))) {
        ++flips;
        continue;
      }
      num += (a - b) * (a - b);
    }
    const auto allowed =
        static_cast<int64_t>(c.flipShare * static_cast<double>(gpu.numel()));
    EXPECT_LE(flips, std::max<int64_t>(2, allowed))
        << "one-ulp differences in output " << o << " of " << c.name << ", run "
        << run;
    double rel = std::sqrt(num / std::max(den, 1e-300));
    EXPECT_EQ(nanBad, 0) << "NaN/inf pattern differs (or unwritten "
                            "elements) in output "
                         << o << ", run " << run;
    EXPECT_LE(rel, c.tol) << "output " << o << " of " << c.name << ", run "
                          << run;
  }
}

// Four runs of one executable, each on fresh inputs with poisoned outputs.
// Run 0 records the CUDA graph, run 1 replays it (and checks that a kernel
// leaves its workspace, barrier counters and tail keys, as the next launch
// needs it), run 2 moves the inputs and outputs to new buffers (the graph's
// arguments are updated), run 3 launches kernel by kernel.
TEST_P(GpuKernels, MatchesReference) {
  const Case &c = GetParam();
  auto g = parseGraph(c.kg, c.name + ".kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  std::mt19937_64 rng(std::random_device{}());
  auto fresh = [&] {
    std::vector<HostTensor> inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i)
      inputs.push_back(randomTensor((*g)->inputs()[i]->dtype(), c.shapes[i],
                                    rng, c.offset, c.nanRate, c.infRate));
    if (c.nanAt >= 0)
      inputs[0].set(c.nanAt, NAN);
    return inputs;
  };
  std::vector<HostTensor> inputs = fresh();
  CompileOptions opts;
  opts.matmulPrecision = c.precision;
  opts.constantParams = c.constantParams;
  auto s = prepareGpu(**g, inputs, nullptr, "", opts);
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  rt::Device &dev = *s->exe->device();
  // The old buffers stay allocated, so that no new one reuses an address.
  std::vector<rt::Buffer> retired;
  auto moveTo = [&](std::vector<rt::Buffer> &bs) {
    for (rt::Buffer &b : bs) {
      auto fresh = dev.alloc(b.size());
      ASSERT_TRUE(static_cast<bool>(fresh))
          << llvm::toString(fresh.takeError());
      retired.push_back(std::exchange(b, std::move(*fresh)));
    }
  };
  for (int run = 0; run < 4; ++run) {
    if (run == 2) {
      moveTo(s->inputs);
      moveTo(s->outputs);
      ASSERT_FALSE(HasFatalFailure()) << "cannot move the buffers";
    }
    s->exe->setGraphLaunches(run < 3);
    if (run > 0) {
      inputs = fresh();
      for (size_t i = 0; i < inputs.size(); ++i)
        ASSERT_FALSE(static_cast<bool>(dev.copyToDevice(
            s->inputs[i].ptr(), inputs[i].bytes.data(), inputs[i].byteSize())));
    }
    ASSERT_FALSE(static_cast<bool>(s->poisonOutputs()));
    ASSERT_FALSE(static_cast<bool>(s->run()));
    expectMatches(c, **g, *s, inputs, run);
  }
  s->exe->setGraphLaunches(true);
  EXPECT_EQ(s->exe->launchMode().rfind("CUDA graph", 0), 0u)
      << s->exe->launchMode();
  for (const EmittedKernel &k : s->exe->kernels())
    RecordProperty(k.name, k.strategy);
}

INSTANTIATE_TEST_SUITE_P(All, GpuKernels, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(ConvFuzz, GpuKernels,
                         ::testing::ValuesIn(convFuzzCases(40)),
                         [](const auto &info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(LinearFuzz, GpuKernels,
                         ::testing::ValuesIn(linearFuzzCases(40)),
                         [](const auto &info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(NormFuzz, GpuKernels,
                         ::testing::ValuesIn(normFuzzCases(40)),
                         [](const auto &info) { return info.param.name; });

/// Tests of elementwise functions point by point.
using GpuGelu = GpuTest;
using GpuSigmoid = GpuTest;

/// out = gelu(x) over x: f32[N].
llvm::Expected<std::unique_ptr<Graph>> geluGraph() {
  return parseGraph("graph g(x: f32[N]) {\n  out = gelu(x)\n  return out\n}\n",
                    "gelu.kg");
}

/// Runs the graph `text` (every output a function of its one input x:
/// f32[N]) on `xs` and checks each output point by point against float64:
/// NaN and infinities exactly where the reference has them, a zero's sign
/// where the reference's is exact (x = +-0), else |gpu - ref| <=
/// bound(x, ref). The worst error over bound goes to the test's record.
void expectPointByPoint(llvm::StringRef text, const std::vector<float> &xs,
                        llvm::function_ref<double(double, double)> bound) {
  auto g = parseGraph(text, "pointwise.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  HostTensor x(DType::F32, {static_cast<int64_t>(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i)
    x.set(static_cast<int64_t>(i), xs[i]);
  std::vector<HostTensor> inputs;
  inputs.push_back(std::move(x));
  CompileOptions opts;
  auto s = prepareGpu(**g, inputs, nullptr, "", opts);
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  ASSERT_FALSE(static_cast<bool>(s->poisonOutputs()));
  ASSERT_FALSE(static_cast<bool>(s->run()));
  auto outs = s->downloadOutputs();
  ASSERT_TRUE(static_cast<bool>(outs)) << llvm::toString(outs.takeError());
  auto ref = executeReference(**g, inputs, nullptr, "");
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  ASSERT_EQ(outs->size(), ref->outputs.size());
  for (size_t o = 0; o < outs->size(); ++o) {
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double got = (*outs)[o].get(static_cast<int64_t>(i));
      const double want = ref->outputs[o].data[i];
      bool ok;
      if (std::isnan(want) || std::isinf(want))
        ok = std::isnan(want) ? std::isnan(got) : got == want;
      else if (xs[i] == 0.0f && want == 0.0)
        ok = got == 0.0 && std::signbit(got) == std::signbit(want);
      else {
        const double err = std::abs(got - want), b = bound(xs[i], want);
        worst = std::max(worst, err / b);
        ok = err <= b;
      }
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << "output " << o << " at x = " << xs[i] << ": " << got
                      << ", float64 " << want;
    }
    EXPECT_EQ(bad, 0) << "output " << o;
    ::testing::Test::RecordProperty(
        fmt::format("output{}_worst_error_over_bound", o),
        std::to_string(worst));
  }
}

// gelu (the erf form) point by point against float64 over [-12, 12] and the
// special values. Bound: Phi within 1.5e-7 and the product's rounding, i.e.
// |gpu - ref| <= 1.5e-7 |x| + 1.2e-7 |ref| (+ 1e-38 for denormals); NaN
// and inf exactly where the reference has them (gelu(-inf) is NaN, as in
// PyTorch).
TEST_F(GpuGelu, MatchesFloat64PointByPoint) {
  std::vector<float> xs = {NAN,     INFINITY, -INFINITY, 0.0f,    -0.0f,
                           1e-30f,  -1e-30f,  1e30f,     -1e30f,  5.999f,
                           -5.999f, 6.0f,     -6.0f,     6.001f,  -6.001f,
                           1e-45f,  -1e-45f,  3.4e38f,   -3.4e38f};
  const int n = 240001; // odd: not a multiple of any vector width
  for (int i = 0; i < n; ++i)
    xs.push_back(-12.0f + 24.0f * static_cast<float>(i) / (n - 1));
  // (1e-38: a denormal result may flush to zero.)
  expectPointByPoint("graph g(x: f32[N]) {\n  out = gelu(x)\n  return out\n}\n",
                     xs, [](double x, double want) {
                       return 1.5e-7 * std::abs(x) + 1.2e-7 * std::abs(want) +
                              1e-38;
                     });
}

// sigmoid and swish (kiln/ops.cuh: expf, then rcp.approx.ftz in place of
// IEEE division) point by point over [-90, 90], the subnormal-result tail
// and the special values. Bound: 4 ulp (2.4e-7 relative), what
// bench/proto/sigmoid_ulp.cu measures on every float where the sigmoid is a
// normal float; below x = -87.3 the sigmoid flushes to 0, and below -88.7
// 1 + e^-x overflows in f32 as in PyTorch, so results under 1e-36 may be 0.
TEST_F(GpuSigmoid, SigmoidAndSwishMatchFloat64PointByPoint) {
  std::vector<float> xs = {
      NAN,     INFINITY, -INFINITY, 0.0f,   -0.0f,   1e-30f,  -1e-30f,
      1e30f,   -1e30f,   -86.9f,    -87.5f, -88.7f,  -88.8f,  -89.0f,
      -103.0f, -104.0f,  88.8f,     1e-45f, -1e-45f, 3.4e38f, -3.4e38f};
  const int n = 360001; // odd: not a multiple of any vector width
  for (int i = 0; i < n; ++i)
    xs.push_back(-90.0f + 180.0f * static_cast<float>(i) / (n - 1));
  expectPointByPoint(
      "graph g(x: f32[N]) {\n  s = sigmoid(x)\n  w = "
      "swish(x)\n  return s, w\n}\n",
      xs, [](double, double want) { return 2.4e-7 * std::abs(want) + 1e-36; });
}

// With constant parameters a 3xTF32 linear over 33 row tiles splits w once
// and keeps the parts (a matmul its transposed right operand, a
// tensor-core convolution its blocks' images of the weight): scaling w by 2
// (exact in f32, in the split and in TF32's rounding) must scale y by
// exactly 2 once the kernel splits again: after paramsUpdated(), or when
// run() gets another parameter buffer; until then y stays as it was (the
// documented contract: the parts are derived from the old values).
struct ConstantParamsCase {
  const char *name, *graph;
  std::vector<int64_t> x; // the input's shape
  MatmulPrecision precision;
};

class GpuConstantParams
    : public GpuTest,
      public ::testing::WithParamInterface<ConstantParamsCase> {};

TEST_P(GpuConstantParams, SplitWeightsFollowTheParameters) {
  auto g = parseGraph(GetParam().graph, "constant.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  std::mt19937_64 rng(11);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomTensor(DType::F32, GetParam().x, rng, 0, 0));
  CompileOptions opts;
  opts.constantParams = true;
  opts.matmulPrecision = GetParam().precision;
  auto s = prepareGpu(**g, inputs, nullptr, "", opts);
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  ASSERT_EQ(s->exe->schedules()[0].get("splitW"), kWgmmaSplitFlagged)
      << s->exe->schedules()[0].str();
  rt::Device &dev = *s->exe->device();
  // TF32 (high): about 3e-4 measured, within GpuCases' tf32Tol.
  Case c{"constant parameters",
         "",
         {GetParam().x},
         0,
         0,
         GetParam().precision == MatmulPrecision::High ? 3e-3 : 2e-6};
  auto runOnce = [&]() -> std::vector<float> {
    EXPECT_FALSE(static_cast<bool>(s->poisonOutputs()));
    EXPECT_FALSE(static_cast<bool>(s->run()));
    auto outs = s->downloadOutputs();
    EXPECT_TRUE(static_cast<bool>(outs)) << llvm::toString(outs.takeError());
    std::vector<float> y((*outs)[0].numel());
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = static_cast<float>((*outs)[0].get(static_cast<int64_t>(i)));
    return y;
  };
  const std::vector<float> y1 = runOnce();
  expectMatches(c, **g, *s, inputs, 0);
  // w times `scale`, written into `dst`.
  const size_t wCount =
      static_cast<size_t>((**g).params()[0]->shape().numElements());
  std::vector<float> w(wCount);
  ASSERT_FALSE(static_cast<bool>(
      dev.copyToHost(w.data(), s->params[0].ptr(), wCount * 4)));
  auto writeScaled = [&](rt::DevicePtr dst, float scale) {
    std::vector<float> v(w);
    for (float &e : v)
      e *= scale;
    ASSERT_FALSE(
        static_cast<bool>(dev.copyToDevice(dst, v.data(), wCount * 4)));
    ASSERT_FALSE(static_cast<bool>(dev.synchronize()));
  };
  auto expectScaled = [&](const std::vector<float> &y, float scale,
                          const char *what) {
    size_t bad = 0;
    for (size_t i = 0; i < y.size(); ++i)
      bad += !(y[i] == scale * y1[i]);
    EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << y.size()
                       << " elements are not " << scale << " y";
  };
  // In place, unannounced: the kept parts are still w's.
  writeScaled(s->params[0].ptr(), 2.f);
  expectScaled(runOnce(), 1.f, "2 w in place, before paramsUpdated");
  // Announced: split again.
  s->exe->paramsUpdated();
  expectScaled(runOnce(), 2.f, "2 w after paramsUpdated");
  expectScaled(runOnce(), 2.f, "2 w, the run after");
  // Another buffer: split again, without being told.
  auto other = dev.alloc(wCount * 4);
  ASSERT_TRUE(static_cast<bool>(other)) << llvm::toString(other.takeError());
  writeScaled(other->ptr(), 4.f);
  std::swap(s->params[0], *other);
  expectScaled(runOnce(), 4.f, "4 w in another buffer");
}

INSTANTIATE_TEST_SUITE_P(
    LinearMatmulAndConvolutions, GpuConstantParams,
    ::testing::Values(
        ConstantParamsCase{"linear",
                           "graph lin(x: f32[M, 512]) {\n"
                           "  param w: f32[200, 512] = uniform(-1, 1, seed=1)\n"
                           "  y = linear(x, w)\n  return y\n}\n",
                           {4100, 512},
                           MatmulPrecision::Highest},
        ConstantParamsCase{"matmul",
                           "graph mm(x: f32[M, 512]) {\n"
                           "  param w: f32[512, 200] = uniform(-1, 1, seed=1)\n"
                           "  y = matmul(x, w)\n  return y\n}\n",
                           {4100, 512},
                           MatmulPrecision::Highest},
        // Two parts of the output channels, each block's image copied.
        ConstantParamsCase{"conv2d",
                           "graph c(x: f32[N, 24, 19, 20]) {\n"
                           "  param w: f32[128, 24, 3, 3] = uniform(-1, 1, "
                           "seed=1)\n"
                           "  y = conv2d(x, w, padding=1)\n  return y\n}\n",
                           {3, 24, 19, 20},
                           MatmulPrecision::High},
        // Blocks by output phase (each phase's taps), 3xTF32's parts.
        ConstantParamsCase{"conv_transpose2d",
                           "graph ct(x: f32[N, 64, 9, 12]) {\n"
                           "  param w: f32[64, 32, 4, 4] = uniform(-1, 1, "
                           "seed=1)\n"
                           "  y = conv_transpose2d(x, w, stride=2, padding=1)\n"
                           "  return y\n}\n",
                           {2, 64, 9, 12},
                           MatmulPrecision::Highest}),
    [](const ::testing::TestParamInfo<ConstantParamsCase> &i) {
      return std::string(i.param.name);
    });

// Executable::compile creates the device's context on another thread while
// the kernels compile, and the calling thread must come out with it
// current: a thread that never touched the device compiles, uploads, runs
// and matches the reference.
TEST_F(GpuGelu, CompilesAndRunsOnAThreadThatNeverUsedTheDevice) {
  auto g = geluGraph();
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  std::mt19937_64 rng(7);
  std::vector<HostTensor> inputs;
  inputs.push_back(randomTensor(DType::F32, {4099}, rng, 0, 0));
  std::thread worker([&] {
    CompileOptions opts;
    auto s = prepareGpu(**g, inputs, nullptr, "", opts);
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    EXPECT_GT(rt::driverStartMs(), 0.0);
    EXPECT_GE(s->exe->kernelsReadyMs(), s->exe->contextWaitMs());
    ASSERT_FALSE(static_cast<bool>(s->poisonOutputs()));
    ASSERT_FALSE(static_cast<bool>(s->run()));
    Case c{"gelu on a fresh thread", "", {{4099}}};
    expectMatches(c, **g, *s, inputs, 0);
  });
  worker.join();
}

} // namespace
} // namespace kiln
