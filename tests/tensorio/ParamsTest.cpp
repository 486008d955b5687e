#include "Params.h"
#include "Builder.h"
#include "TestUtil.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

Initializer init(Initializer::Kind kind, double a = 0, double b = 0,
                 uint64_t seed = 0) {
  Initializer i;
  i.kind = kind;
  i.a = a;
  i.b = b;
  i.seed = seed;
  return i;
}

TEST(SplitMix64, MatchesTheStandardGenerator) {
  // The standard generator adds the golden gamma to its state and returns
  // the mix of the new state, so its n-th output from state s is
  // splitmix64(s + (n - 1) * gamma) in the doc's terms. Reference outputs
  // for states 0 and 1234567 (Vigna's splitmix64.c).
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(kGolden), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64(2 * kGolden), 0x06c45d188009454fULL);
  const uint64_t fromSeed[] = {6457827717110365317ULL, 3203168211198807973ULL,
                               9817491932198370423ULL, 4593380528125082431ULL,
                               16408922859458223821ULL};
  for (uint64_t n = 0; n < 5; ++n)
    EXPECT_EQ(splitmix64(1234567 + n * kGolden), fromSeed[n]) << n;
}

TEST(CounterUniform, KnownValues) {
  // Computed independently (Python integers) from docs/format.md.
  EXPECT_EQ(counterUniform(0, 0), 0.6524484863740322);
  EXPECT_EQ(counterUniform(1, 0), 0.03401170130434639);
  EXPECT_EQ(counterUniform(3, 7), 0.42056992093657886);
  EXPECT_EQ(counterUniform(42, 1000), 0.7243263955802648);
}

TEST(Initializers, KnownValues) {
  HostTensor u = makeInitialized(init(Initializer::Kind::Uniform, -0.1, 0.1, 3),
                                 DType::F64, {3});
  EXPECT_DOUBLE_EQ(u.get(0), 0.0562998570561494);
  EXPECT_DOUBLE_EQ(u.get(1), 0.005343599114365577);
  EXPECT_DOUBLE_EQ(u.get(2), 0.041665212341940705);
  HostTensor r = makeInitialized(init(Initializer::Kind::Randn, 0, 0, 1),
                                 DType::F64, {2, 2});
  EXPECT_DOUBLE_EQ(r.get(0), 0.22561074040692733);
  EXPECT_DOUBLE_EQ(r.get(1), 1.811370989213138);
  EXPECT_DOUBLE_EQ(r.get(2), 1.177602452154761);
  EXPECT_DOUBLE_EQ(r.get(3), 0.048865624134896896);
  // Rounded to the dtype from the double value.
  HostTensor r16 = makeInitialized(init(Initializer::Kind::Randn, 0, 0, 1),
                                   DType::F16, {2, 2});
  EXPECT_EQ(r16.get(1), 1.8115234375);
}

TEST(Initializers, ConstantKinds) {
  HostTensor z =
      makeInitialized(init(Initializer::Kind::Zeros), DType::F32, {2, 3});
  HostTensor o =
      makeInitialized(init(Initializer::Kind::Ones), DType::BF16, {4});
  HostTensor f =
      makeInitialized(init(Initializer::Kind::Full, 0.5), DType::F16, {});
  EXPECT_EQ(z.bytes, std::vector<uint8_t>(24, 0));
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(o.get(i), 1.0);
  EXPECT_EQ(f.get(0), 0.5);
  EXPECT_EQ(makeInitialized(init(Initializer::Kind::Ones), DType::F32, {0, 3})
                .numel(),
            0);
}

TEST(Initializers, Deterministic) {
  Initializer a = init(Initializer::Kind::Randn, 0, 0, 7);
  Initializer b = init(Initializer::Kind::Randn, 0, 0, 8);
  EXPECT_EQ(makeInitialized(a, DType::F32, {64}).bytes,
            makeInitialized(a, DType::F32, {64}).bytes);
  EXPECT_NE(makeInitialized(a, DType::F32, {64}).bytes,
            makeInitialized(b, DType::F32, {64}).bytes);
  // Element i depends only on (seed, i), not on the shape.
  HostTensor small = makeInitialized(a, DType::F64, {10});
  HostTensor big = makeInitialized(a, DType::F64, {4, 25});
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(small.get(i), big.get(i));
}

// Large tensors are filled on several threads (kiln bench's random inputs
// of a flagship: 1.9 billion elements); every element is still the
// generator's value at its index, in any dtype.
TEST(Initializers, LargeTensorsMatchTheGeneratorElementByElement) {
  Initializer u = init(Initializer::Kind::Uniform, 0, 1, 11);
  const int64_t n = (int64_t(3) << 20) + 7;
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    HostTensor t = makeInitialized(u, dt, {n});
    HostTensor one(dt, {1});
    for (int64_t i = 0; i < n; i += 4099) {
      one.set(0, initializerValue(u, static_cast<uint64_t>(i)));
      ASSERT_EQ(t.get(i), one.get(0)) << dtypeName(dt).str() << " at " << i;
    }
    one.set(0, initializerValue(u, static_cast<uint64_t>(n - 1)));
    EXPECT_EQ(t.get(n - 1), one.get(0));
  }
}

TEST(Initializers, UniformStatistics) {
  const int n = 100000;
  HostTensor t = makeInitialized(
      init(Initializer::Kind::Uniform, -2.0, 6.0, 11), DType::F64, {n});
  double sum = 0, lo = 1e9, hi = -1e9;
  for (int i = 0; i < n; ++i) {
    double v = t.get(i);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -2.0);
  EXPECT_LT(hi, 6.0);
  EXPECT_LT(lo, -1.99);
  EXPECT_GT(hi, 5.99);
  // The mean's standard error is 8 / sqrt(12 n) ~ 0.0073.
  EXPECT_NEAR(sum / n, 2.0, 0.04);
}

TEST(Initializers, RandnStatistics) {
  const int n = 100000;
  HostTensor t =
      makeInitialized(init(Initializer::Kind::Randn, 0, 0, 5), DType::F64, {n});
  double sum = 0, sq = 0;
  int beyond3 = 0;
  for (int i = 0; i < n; ++i) {
    double v = t.get(i);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sq += v * v;
    beyond3 += std::abs(v) > 3;
  }
  double mean = sum / n, var = sq / n - mean * mean;
  // Standard errors: mean 1/sqrt(n) ~ 0.0032, variance sqrt(2/n) ~ 0.0045.
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.03);
  // P(|z| > 3) = 0.0027: about 270 of 100k.
  EXPECT_GT(beyond3, 180);
  EXPECT_LT(beyond3, 370);
}

std::unique_ptr<Graph> linearGraph() {
  GraphBuilder b("lin");
  Value *x = b.input("x", DType::F32, {2, 4});
  Value *w = b.param("w", DType::F32, {8, 4});
  Value *bias =
      b.param("b", DType::F32, {8}, init(Initializer::Kind::Uniform, -1, 1, 3));
  b.output(b.linear(x, w, bias));
  llvm::Expected<std::unique_ptr<Graph>> g = b.finish();
  EXPECT_TRUE(!!g);
  return g ? std::move(*g) : nullptr;
}

SafetensorsFile fileWith(std::vector<std::pair<std::string, HostTensor>> t) {
  SafetensorsFile f;
  f.tensors = std::move(t);
  return f;
}

TEST(BindParams, FromFileAndInitialiser) {
  std::unique_ptr<Graph> g = linearGraph();
  HostTensor w = makeTensor(DType::F32, {8, 4}, [](int64_t i) { return i; });
  SafetensorsFile f = fileWith({{"w", w}});
  llvm::Expected<BoundParams> p = bindParams(*g, &f, "p.safetensors");
  ASSERT_TRUE(!!p) << errorText(p.takeError());
  ASSERT_EQ(p->values.size(), 2u);
  EXPECT_EQ(p->values[0].bytes, w.bytes);
  EXPECT_EQ(p->values[1].bytes,
            makeInitialized(init(Initializer::Kind::Uniform, -1, 1, 3),
                            DType::F32, {8})
                .bytes);
  EXPECT_TRUE(p->warnings.empty());
}

TEST(BindParams, FileOverridesInitialiser) {
  std::unique_ptr<Graph> g = linearGraph();
  HostTensor b = makeTensor(DType::F32, {8}, [](int64_t) { return 9; });
  SafetensorsFile f =
      fileWith({{"b", b}, {"w", HostTensor(DType::F32, {8, 4})}});
  llvm::Expected<BoundParams> p = bindParams(*g, &f, "p.safetensors");
  ASSERT_TRUE(!!p);
  EXPECT_EQ(p->values[1].get(7), 9.0);
}

TEST(BindParams, Missing) {
  std::unique_ptr<Graph> g = linearGraph();
  SafetensorsFile f;
  EXPECT_EQ(errorText(bindParams(*g, &f, "p.safetensors")),
            "error: parameter 'w' is not in p.safetensors and has no "
            "initialiser; add it to the file or give it one, e.g. `param w: "
            "f32[8, 4] = zeros`");
  EXPECT_EQ(errorText(bindParams(*g, nullptr, "")),
            "error: parameter 'w' has no initialiser and no parameters file "
            "was given; pass one with --params or give it an initialiser, "
            "e.g. `param w: f32[8, 4] = zeros`");
}

TEST(BindParams, Mismatch) {
  std::unique_ptr<Graph> g = linearGraph();
  SafetensorsFile f = fileWith({{"w", HostTensor(DType::F16, {8, 4})}});
  EXPECT_EQ(errorText(bindParams(*g, &f, "p.safetensors")),
            "error: parameter 'w' in p.safetensors is f16[8, 4] but the "
            "graph declares f32[8, 4]");
  f = fileWith({{"w", HostTensor(DType::F32, {4, 8})}});
  EXPECT_EQ(errorText(bindParams(*g, &f, "p.safetensors")),
            "error: parameter 'w' in p.safetensors is f32[4, 8] but the "
            "graph declares f32[8, 4]");
  f = fileWith({{"w", HostTensor(DType::F32, {32})}});
  EXPECT_EQ(errorText(bindParams(*g, &f, "p.safetensors")),
            "error: parameter 'w' in p.safetensors is f32[32] but the "
            "graph declares f32[8, 4]");
}

TEST(BindParams, UnusedEntriesWarn) {
  std::unique_ptr<Graph> g = linearGraph();
  SafetensorsFile f = fileWith({{"extra", HostTensor(DType::F16, {3})},
                                {"w", HostTensor(DType::F32, {8, 4})}});
  llvm::Expected<BoundParams> p = bindParams(*g, &f, "p.safetensors");
  ASSERT_TRUE(!!p);
  ASSERT_EQ(p->warnings.size(), 1u);
  EXPECT_EQ(p->warnings[0], "p.safetensors: warning: tensor 'extra' "
                            "(f16[3]) is not a parameter of graph 'lin'; "
                            "ignored");
}

TEST(BindParams, EndToEndThroughAFile) {
  TempDir dir;
  std::string path = dir.file("p.safetensors");
  std::vector<std::pair<std::string, HostTensor>> t;
  t.emplace_back("w",
                 makeTensor(DType::F32, {8, 4}, [](int64_t i) { return -i; }));
  ASSERT_EQ(errorText(writeSafetensors(path, t)), "");
  llvm::Expected<SafetensorsFile> f = readSafetensors(path);
  ASSERT_TRUE(!!f);
  std::unique_ptr<Graph> g = linearGraph();
  llvm::Expected<BoundParams> p = bindParams(*g, &*f, path);
  ASSERT_TRUE(!!p);
  EXPECT_EQ(p->values[0].get(31), -31.0);
}

TEST(BindParams, ErrorsCarryTheParamLocation) {
  Graph g("g", "m.kg");
  ASSERT_TRUE(!!g.addParam("w", TensorType{DType::F32, {8, 4}}, std::nullopt,
                           SourceLoc{"m.kg", 3, 9}));
  SafetensorsFile f;
  EXPECT_EQ(errorText(bindParams(g, &f, "p.safetensors")),
            "m.kg:3:9: error: parameter 'w' is not in p.safetensors and has "
            "no initialiser; add it to the file or give it one, e.g. `param "
            "w: f32[8, 4] = zeros`");
}

TEST(BindParams, NeedsStaticShapes) {
  Graph g("g");
  ASSERT_TRUE(!!g.addParam("w", TensorType{DType::F32, {"N", 4}},
                           init(Initializer::Kind::Zeros)));
  EXPECT_EQ(errorText(bindParams(g, nullptr, "")),
            "error: parameter 'w' has shape [N, 4]; parameters need static "
            "shapes");
}

} // namespace
