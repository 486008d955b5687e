//===- ShapeInferenceTest.cpp - Shape and dtype rules, as tables ----------===//
#include "InferHelpers.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::test;

namespace {

struct BroadcastCase {
  Shape a, b;
  std::string expected; // type string, or error text
};

TEST(Broadcast, Table) {
  const std::vector<BroadcastCase> cases = {
      {{3, 4}, {3, 4}, "f32[3, 4]"},
      {{3, 4}, {4}, "f32[3, 4]"},
      {{3, 1}, {1, 4}, "f32[3, 4]"},
      {{}, {2, 3}, "f32[2, 3]"},
      {{2, 3}, {}, "f32[2, 3]"},
      {{5, 1, 4}, {3, 1}, "f32[5, 3, 4]"},
      // L2_75's last step: (N, 1) + (1, C, 1, 1) -> (1, C, N, 1).
      {{1024, 1}, {1, 8192, 1, 1}, "f32[1, 8192, 1024, 1]"},
      {{0, 4}, {1, 4}, "f32[0, 4]"},
      {{0}, {1}, "f32[0]"},
      {{"N", 1}, {1, 8}, "f32[N, 8]"},
      {{"N", 8}, {"N", 1}, "f32[N, 8]"},
      {{"N", 8}, {5, 8}, "f32[5, 8]"},
      {{3, 4},
       {5, 4},
       "t.kg:3:7: error: add: cannot broadcast [3, 4] with [5, 4]: dimension "
       "0 is 3 in one and 5 in the other (each pair of dims, aligned on the "
       "right, must be equal or 1)"},
      {{2, 3},
       {2},
       "t.kg:3:7: error: add: cannot broadcast [2, 3] with [2]: dimension 1 "
       "is 3 in one and 2 in the other (each pair of dims, aligned on the "
       "right, must be equal or 1)"},
      {{"N", 4},
       {"M", 4},
       "t.kg:3:7: error: add: cannot broadcast [N, 4] with [M, 4]: dimension "
       "0 is N in one and M in the other (each pair of dims, aligned on the "
       "right, must be equal or 1; two different named dims may differ, so "
       "use one name for both)"},
  };
  for (const BroadcastCase &c : cases)
    EXPECT_EQ(infer(OpKind::Add, {Arg::f32(c.a), Arg::f32(c.b)}), c.expected)
        << c.a.str() << " + " << c.b.str();
}

TEST(Broadcast, EveryBinaryOpBroadcasts) {
  for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                    OpKind::Maximum, OpKind::Minimum, OpKind::Pow})
    EXPECT_EQ(infer(op, {Arg::f32({7, 1}), Arg::f32({1, 5, 1, 1})}),
              "f32[1, 5, 7, 1]")
        << opName(op).str();
}

struct PromoteCase {
  Arg a, b;
  OpKind op;
  std::string expected;
};

TEST(TypePromotion, Table) {
  auto T = [](DType d) { return Arg::t(d, {3}); };
  auto Z = [](DType d) { return Arg::t(d, {}); }; // rank-0 tensor
  const std::vector<PromoteCase> cases = {
      {T(DType::F32), T(DType::F32), OpKind::Add, "f32[3]"},
      {T(DType::F16), T(DType::F16), OpKind::Add, "f16[3]"},
      {T(DType::F16), T(DType::F32), OpKind::Add, "f32[3]"},
      {T(DType::F16), T(DType::BF16), OpKind::Mul, "f32[3]"},
      {T(DType::F32), T(DType::F64), OpKind::Add, "f64[3]"},
      {T(DType::I64), T(DType::F16), OpKind::Add, "f16[3]"},
      {T(DType::I64), T(DType::I64), OpKind::Add, "i64[3]"},
      {T(DType::Bool), T(DType::I64), OpKind::Add, "i64[3]"},
      // Python scalars never widen within a category...
      {T(DType::F16), Arg::f(2.5), OpKind::Add, "f16[3]"},
      {T(DType::F32), Arg::i(2), OpKind::Mul, "f32[3]"},
      {T(DType::I64), Arg::i(2), OpKind::Add, "i64[3]"},
      // ...but raise the category, taking the default dtype of it.
      {T(DType::I64), Arg::f(0.5), OpKind::Add, "f32[3]"},
      {T(DType::Bool), Arg::i(1), OpKind::Add, "i64[3]"},
      {Arg::f(1.0), T(DType::BF16), OpKind::Sub, "bf16[3]"},
      // Rank-0 tensors rank between dimensioned tensors and scalars.
      {T(DType::F32), Z(DType::F64), OpKind::Add, "f32[3]"},
      {T(DType::I64), Z(DType::F64), OpKind::Add, "f64[3]"},
      {Z(DType::F16), Z(DType::F32), OpKind::Add, "f32[]"},
      // True division of integers gives the default float type.
      {T(DType::I64), T(DType::I64), OpKind::Div, "f32[3]"},
      {T(DType::I64), Arg::i(2), OpKind::Div, "f32[3]"},
      {T(DType::I64), Arg::i(2), OpKind::Pow, "i64[3]"},
      {T(DType::I64), Arg::f(0.5), OpKind::Pow, "f32[3]"},
      {T(DType::I64), Arg::i(-1), OpKind::Pow,
       "t.kg:3:7: error: pow: integers to negative integer powers are not "
       "allowed (PyTorch refuses them too); write the exponent as -1.0 or "
       "make the base floating-point"},
      {T(DType::Bool), T(DType::Bool), OpKind::Add,
       "t.kg:3:7: error: add: arithmetic on bool tensors is not supported; "
       "both operands are bool"},
  };
  for (const PromoteCase &c : cases)
    EXPECT_EQ(infer(c.op, {c.a, c.b}), c.expected) << opName(c.op).str();
}

TEST(TypePromotion, NumbersOnlyAreRefused) {
  EXPECT_EQ(infer(OpKind::Add, {Arg::f(1.0), Arg::i(2)}),
            "t.kg:3:7: error: add needs at least one tensor operand; it was "
            "given only numbers");
}

TEST(UnaryTypes, Table) {
  auto I = Arg::t(DType::I64, {4});
  EXPECT_EQ(infer(OpKind::Relu, {Arg::f32({2, 3})}), "f32[2, 3]");
  EXPECT_EQ(infer(OpKind::Gelu, {Arg::t(DType::BF16, {5})}), "bf16[5]");
  EXPECT_EQ(infer(OpKind::Neg, {I}), "i64[4]");
  EXPECT_EQ(infer(OpKind::Abs, {I}), "i64[4]");
  EXPECT_EQ(infer(OpKind::Exp, {I}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Sigmoid, {Arg::t(DType::Bool, {4})}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Gelu, {I}),
            "t.kg:3:7: error: gelu: input 'a' is i64, but this op needs a "
            "floating-point tensor (f32, f16, bf16 or f64)");
  EXPECT_EQ(infer(OpKind::Neg, {Arg::t(DType::Bool, {4})}),
            "t.kg:3:7: error: neg: input 'a' is bool, which this op does not "
            "take");
}

TEST(Linear, Shapes) {
  auto F = [](Shape s) { return Arg::f32(std::move(s)); };
  EXPECT_EQ(infer(OpKind::Linear, {F({"N", 8192}), F({4096, 8192})}),
            "f32[N, 4096]");
  EXPECT_EQ(infer(OpKind::Linear, {F({2, 3, 16}), F({8, 16}), F({8})}),
            "f32[2, 3, 8]");
  EXPECT_EQ(infer(OpKind::Linear, {F({16}), F({8, 16})}), "f32[8]");
  EXPECT_EQ(infer(OpKind::Linear, {F({4, 1024}), F({4096, 1000})}),
            "t.kg:3:7: error: linear: input 'a' [4, 1024] has 1024 features "
            "in its last dim, but weight 'b' [4096, 1000] expects 1000; "
            "weight is [out_features, in_features] as in torch.nn.Linear");
  EXPECT_EQ(infer(OpKind::Linear, {F({4, 16}), F({8, 16}), F({16})}),
            "t.kg:3:7: error: linear: bias 'c' [16] must have 8 entries "
            "(out_features)");
  EXPECT_EQ(infer(OpKind::Linear, {F({4, 16}), F({16})}),
            "t.kg:3:7: error: linear: weight 'b' must have rank 2, but it is "
            "f32[16]");
  EXPECT_EQ(infer(OpKind::Linear, {F({4, 16}), Arg::t(DType::F16, {8, 16})}),
            "t.kg:3:7: error: linear: operands must share one dtype, but 'a' "
            "is f32 and 'b' is f16");
  EXPECT_EQ(infer(OpKind::Linear, {F({4, 16}), Arg::f(2.0)}),
            "t.kg:3:7: error: linear: operand 'weight' must be a tensor, not "
            "the number 2.0");
  EXPECT_EQ(infer(OpKind::Linear, {F({4, 16})}),
            "t.kg:3:7: error: linear is missing its operand 'weight'");
}

TEST(Matmul, Shapes) {
  auto F = [](Shape s) { return Arg::f32(std::move(s)); };
  const std::vector<std::tuple<Shape, Shape, std::string>> cases = {
      {{5}, {5}, "f32[]"},
      {{5}, {5, 3}, "f32[3]"},
      {{4, 5}, {5}, "f32[4]"},
      {{4, 5}, {5, 3}, "f32[4, 3]"},
      {{2, 1, 3, 4}, {5, 4, 2}, "f32[2, 5, 3, 2]"},
      {{7, 4, 5}, {5}, "f32[7, 4]"},
      {{5}, {7, 5, 3}, "f32[7, 3]"},
      {{4, 5},
       {6, 3},
       "t.kg:3:7: error: matmul: inner dims differ: 'a' [4, 5] contracts 5 "
       "against 6 of 'b' [6, 3]"},
      {{2, 4, 5},
       {3, 5, 6},
       "t.kg:3:7: error: matmul: cannot broadcast [2] with [3]: dimension 0 "
       "is 2 in one and 3 in the other (each pair of dims, aligned on the "
       "right, must be equal or 1)"},
  };
  for (const auto &[a, b, want] : cases)
    EXPECT_EQ(infer(OpKind::Matmul, {F(a), F(b)}), want)
        << a.str() << " @ " << b.str();
}

TEST(Conv, Shapes) {
  auto F = [](Shape s) { return Arg::f32(std::move(s)); };
  auto ints = [](std::initializer_list<int64_t> v) { return Attr::ofInts(v); };
  // L2_19: ConvTranspose2d(64, 64, 3, stride=1) on [128, 64, 256, 256].
  EXPECT_EQ(infer(OpKind::ConvTranspose2d,
                  {F({128, 64, 256, 256}), F({64, 64, 3, 3}), F({64})}),
            "f32[128, 64, 258, 258]");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({"N", 3, 32, 31}), F({8, 3, 3, 3})}),
            "f32[N, 8, 30, 29]");
  EXPECT_EQ(
      infer(OpKind::Conv2d, {F({2, 4, 17, 17}), F({6, 2, 3, 5})},
            {attr("stride", Attr::ofInt(2)), attr("padding", ints({1, 2})),
             attr("dilation", ints({2, 1})), attr("groups", Attr::ofInt(2))}),
      "f32[2, 6, 8, 9]");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({4, 9, 9}), F({5, 4, 3, 3})}),
            "f32[5, 7, 7]");
  EXPECT_EQ(
      infer(OpKind::ConvTranspose2d,
            {F({1, 4, 5, 6}), F({4, 3, 3, 3}), Arg::none()},
            {attr("stride", Attr::ofInt(2)), attr("padding", Attr::ofInt(1)),
             attr("output_padding", Attr::ofInt(1)),
             attr("dilation", Attr::ofInt(2)), attr("groups", Attr::ofInt(2))}),
      "f32[1, 6, 12, 14]");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({2, 4, 8, 8}), F({6, 3, 3, 3})}),
            "t.kg:3:7: error: conv2d: input 'a' has 4 channels, but weight "
            "'b' [6, 3, 3, 3] with groups=1 expects 3 (weight is "
            "[out_channels, in_channels/groups, kH, kW])");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({2, 4, 2, 8}), F({6, 4, 3, 3})}),
            "t.kg:3:7: error: conv2d: input 'a' [2, 4, 2, 8] is too small: "
            "spatial dim 0 is 2 (padded 2), less than the dilated kernel size "
            "3");
  EXPECT_EQ(infer(OpKind::ConvTranspose2d, {F({1, 4, 5, 6}), F({4, 3, 3, 3})},
                  {attr("output_padding", Attr::ofInt(1))}),
            "t.kg:3:7: error: conv_transpose2d: output_padding [1, 1] must be "
            "non-negative and smaller than either stride [1, 1] or dilation "
            "[1, 1]");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({2, "C", 8, 8}), F({6, 4, 3, 3})}),
            "t.kg:3:7: error: conv2d: the channel dim of 'a' must be a fixed "
            "size, but it is the named dim 'C'; only dims that do not change "
            "the kernel's structure (such as the batch) may be named");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({2, 4, 8, 8}), F({6, 4, 3, 3})},
                  {attr("dilation", Attr::ofInts({int64_t(1) << 62, 1}))}),
            "t.kg:3:7: error: conv2d: dilation [4611686018427387904, 1] is "
            "out of range (at most 2147483647)");
  EXPECT_EQ(infer(OpKind::ConvTranspose2d,
                  {F({2, 4, int64_t(1) << 40, 8}), F({4, 4, 3, 3})}),
            "t.kg:3:7: error: conv_transpose2d: 'a' [2, 4, 1099511627776, 8] "
            "has a dim above 2147483647");
  // Outputs above the largest dim (found by the parser fuzzer: a printed
  // shape that no longer parsed).
  EXPECT_EQ(infer(OpKind::Conv2d, {F({2, 4, 8, 8}), F({6, 4, 3, 3})},
                  {attr("padding", ints({1, int64_t(1) << 30}))}),
            "t.kg:3:7: error: conv2d: output spatial dim 1 would be "
            "2147483654, above 2147483647; reduce padding [1, 1073741824] or "
            "stride [1, 1]");
  EXPECT_EQ(infer(OpKind::ConvTranspose2d,
                  {F({2, 4, 8, 1178511305}), F({4, 4, 3, 3})},
                  {attr("stride", Attr::ofInt(2))}),
            "t.kg:3:7: error: conv_transpose2d: output spatial dim 1 would be "
            "2357022611, above 2147483647; reduce padding [0, 0] or stride "
            "[2, 2]");
  EXPECT_EQ(infer(OpKind::Conv2d, {F({2, 4, 8, 8}), F({6, 4, 3, 3})},
                  {attr("stride", Attr::ofInts({1, 2, 3}))}),
            "t.kg:3:7: error: conv2d: attribute 'stride' takes 2 values, got "
            "[1, 2, 3]");
}

TEST(GroupNorm, Shapes) {
  auto F = [](Shape s) { return Arg::f32(std::move(s)); };
  auto G = [](int64_t g) { return attr("groups", Attr::ofInt(g)); };
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({112, 64, 512, 512})}, {G(8)}),
            "f32[112, 64, 512, 512]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({"N", 8192}), F({8192}), F({8192})},
                  {G(512)}),
            "f32[N, 8192]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({2, 6, 5})},
                  {attr("num_groups", Attr::ofInt(3))}),
            "f32[2, 6, 5]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({2, 6, 5})}, {G(4)}),
            "t.kg:3:7: error: group_norm: 6 channels of 'a' [2, 6, 5] do not "
            "split into 4 groups; groups must divide the channel count");
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({2, 6}), F({3})}, {G(3)}),
            "t.kg:3:7: error: group_norm: weight 'b' [3] must have 6 entries, "
            "one per channel");
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({6})}, {G(3)}),
            "t.kg:3:7: error: group_norm: input 'a' must be [N, C, ...], got "
            "f32[6]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {F({2, 6})}),
            "t.kg:3:7: error: group_norm needs the attribute 'groups' (int)");
  EXPECT_EQ(infer(OpKind::GroupNorm, {Arg::t(DType::I64, {2, 6})}, {G(3)}),
            "t.kg:3:7: error: group_norm: input 'a' is i64, but this op needs "
            "a floating-point tensor (f32, f16, bf16 or f64)");
}

TEST(Reduction, Shapes) {
  auto F = [](Shape s) { return Arg::f32(std::move(s)); };
  auto dims = [](std::initializer_list<int64_t> d) {
    return attr("dim", Attr::ofInts(d));
  };
  auto keep = attr("keepdim", Attr::ofBool(true));
  EXPECT_EQ(infer(OpKind::Min, {F({1024, 8192})}, {dims({1}), keep}),
            "f32[1024, 1]");
  EXPECT_EQ(
      infer(OpKind::Min, {F({1024, 8192})}, {attr("dim", Attr::ofInt(1))}),
      "f32[1024]");
  EXPECT_EQ(infer(OpKind::Sum, {F({2, 3, 4})}, {dims({-1, 0})}), "f32[3]");
  EXPECT_EQ(infer(OpKind::Mean, {F({2, 3, 4})}, {dims({0, 2}), keep}),
            "f32[1, 3, 1]");
  EXPECT_EQ(infer(OpKind::Max, {F({2, 3, 4})}), "f32[]");
  EXPECT_EQ(infer(OpKind::LogSumExp, {F({2, 3})}, {keep}), "f32[1, 1]");
  EXPECT_EQ(infer(OpKind::Sum, {Arg::t(DType::Bool, {5})}), "i64[]");
  EXPECT_EQ(infer(OpKind::LogSumExp, {Arg::t(DType::I64, {5})}), "f32[]");
  EXPECT_EQ(infer(OpKind::Max, {F({})}, {dims({-1})}), "f32[]");
  EXPECT_EQ(infer(OpKind::Sum, {F({0, 3})}, {dims({0})}), "f32[3]");
  EXPECT_EQ(infer(OpKind::Min, {F({2, 3})}, {dims({2})}),
            "t.kg:3:7: error: min: dim 2 is out of range for 'a' [2, 3] "
            "(valid: -2 to 1)");
  EXPECT_EQ(infer(OpKind::Sum, {F({2, 3})}, {dims({1, -1})}),
            "t.kg:3:7: error: sum: dim 1 appears more than once in [1, -1]");
  EXPECT_EQ(infer(OpKind::Mean, {Arg::t(DType::I64, {5})}),
            "t.kg:3:7: error: mean: input 'a' is i64; mean needs a "
            "floating-point tensor (PyTorch refuses integer means too)");
  EXPECT_EQ(infer(OpKind::Max, {F({0, 3})}, {dims({0})}),
            "t.kg:3:7: error: max: cannot reduce over dim 0 of 'a' [0, 3]: it "
            "is empty and max has no identity");
}

TEST(Attributes, SchemaErrors) {
  auto x = Arg::f32({4});
  EXPECT_EQ(infer(OpKind::LeakyRelu, {x}, {attr("slope", Attr::ofFloat(0.1))}),
            "t.kg:3:7: error: leaky_relu has no attribute 'slope' (it takes: "
            "negative_slope)");
  EXPECT_EQ(infer(OpKind::Relu, {x}, {attr("inplace", Attr::ofBool(true))}),
            "t.kg:3:7: error: relu has no attribute 'inplace'; it takes none");
  EXPECT_EQ(infer(OpKind::LeakyRelu, {x},
                  {attr("negative_slope", Attr::ofString("x"))}),
            "t.kg:3:7: error: leaky_relu: attribute 'negative_slope' must be "
            "float, got \"x\"");
  EXPECT_EQ(
      infer(OpKind::LeakyRelu, {x}, {attr("negative_slope", Attr::ofInt(0))}),
      "f32[4]"); // an int is a fine float
  EXPECT_EQ(
      infer(OpKind::Gelu, {x}, {attr("approximate", Attr::ofString("fast"))}),
      "t.kg:3:7: error: gelu: attribute 'approximate' must be one of "
      "\"none\", \"tanh\", got \"fast\"");
  EXPECT_EQ(infer(OpKind::Clamp, {x}),
            "t.kg:3:7: error: clamp: give at least one of 'min' and 'max'");
  EXPECT_EQ(
      infer(OpKind::Clamp, {x},
            {attr("min", Attr::ofFloat(2)), attr("max", Attr::ofFloat(1))}),
      "t.kg:3:7: error: clamp: min 2.0 is greater than max 1.0");
  EXPECT_EQ(infer(OpKind::Clamp, {x},
                  {attr("max", Attr::ofInt(1)), attr("max", Attr::ofInt(2))}),
            "t.kg:3:7: error: clamp: attribute 'max' is given twice");
  EXPECT_EQ(infer(OpKind::Relu, {x, x}),
            "t.kg:3:7: error: relu takes at most 1 operand, got 2");
}

TEST(Attributes, CoercedAndOrdered) {
  Graph g("t");
  Value *x = *g.addInput("x", {DType::F32, {2, 4, 9, 9}});
  Value *w = *g.addInput("w", {DType::F32, {4, 4, 3, 3}});
  // Given out of schema order and in short forms.
  Value *r = *g.addNode(
      OpKind::Conv2d, {x, w},
      {{"groups", Attr::ofInt(1), {}}, {"stride", Attr::ofInt(2), {}}});
  const Node &n = *r->def();
  ASSERT_EQ(n.attrs().size(), 2u);
  EXPECT_EQ(n.attrs()[0].first, "stride");
  EXPECT_EQ(n.attrs()[0].second, Attr::ofInts({2, 2}));
  EXPECT_EQ(n.attrs()[1].first, "groups");
  EXPECT_EQ(n.getInts("padding"), (llvm::SmallVector<int64_t, 4>{0, 0}));
  EXPECT_FALSE(n.hasAttr("padding"));
  EXPECT_EQ(r->name(), "%0");
}

TEST(Graph, NamesAndOutputs) {
  Graph g("t", "g.kg");
  ASSERT_TRUE(static_cast<bool>(
      g.addInput("x", {DType::F32, {2}}, SourceLoc{"", 1, 9})));
  llvm::Expected<Value *> dup =
      g.addParam("x", {DType::F32, {2}}, std::nullopt, SourceLoc{"", 2, 9});
  ASSERT_FALSE(static_cast<bool>(dup));
  EXPECT_EQ(errorToString(dup.takeError()),
            "g.kg:2:9: error: 'x' is already defined (first defined at 1:9); "
            "each value is assigned once, pick another name");
  llvm::Expected<Value *> bad = g.addParam(
      "k", {DType::I64, {2}}, Initializer{Initializer::Kind::Randn, 0, 0, 1},
      SourceLoc{"", 3, 3});
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(errorToString(bad.takeError()),
            "g.kg:3:3: error: parameter 'k' is i64, but randn(seed=1) fills "
            "floating-point tensors only; use zeros, ones or full(...)");
  Value *lit = g.addLiteral(2, true);
  EXPECT_EQ(errorToString(g.addOutput(lit)),
            "g.kg: error: a graph output must be a tensor, not the number 2");
}

} // namespace
