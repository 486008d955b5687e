//===- SpecializeTest.cpp - Binding named dims ----------------------------===//
#include "Specialize.h"
#include "Builder.h"
#include "Pipeline.h"
#include "Verifier.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

using Sizes = llvm::SmallVector<int64_t, 6>;

/// y = add(x[N, 1], b[1, C, 1, 1]) -> [1, C, N, 1] with C = 8; plus a
/// broadcast of N against a fixed 5.
std::unique_ptr<Graph> graph() {
  GraphBuilder b("s");
  Value *x = b.input("x", DType::F32, {"N", 1});
  Value *u = b.input("u", DType::F32, {"N", 3});
  Value *bias = b.param("bias", DType::F32, {1, 8, 1, 1});
  Value *five = b.param("five", DType::F32, {5, 1});
  b.output(b.add(x, bias));
  b.output(b.add(u, five));
  return cantFail(b.finish());
}

TEST(Specialize, BindsAndRebuilds) {
  std::unique_ptr<Graph> g = graph();
  EXPECT_EQ(g->outputs()[0]->type().str(), "f32[1, 8, N, 1]");
  EXPECT_EQ(g->outputs()[1]->type().str(), "f32[5, 3]");
  llvm::Expected<DimBindings> b = bindDims(*g, {Sizes{5, 1}, Sizes{5, 3}});
  ASSERT_TRUE(static_cast<bool>(b));
  EXPECT_EQ(bindingsStr(*b), "N=5");
  std::unique_ptr<Graph> s = cantFail(specialize(*g, *b));
  EXPECT_EQ(s->outputs()[0]->type().str(), "f32[1, 8, 5, 1]");
  EXPECT_EQ(s->inputs()[0]->type().str(), "f32[5, 1]");
  EXPECT_EQ(s->nodes().size(), g->nodes().size());
  EXPECT_EQ(s->outputs()[0]->name(), g->outputs()[0]->name());
  // The original is untouched.
  EXPECT_EQ(g->inputs()[0]->type().str(), "f32[N, 1]");
}

TEST(Specialize, ABindingThatBreaksABroadcastIsLocated) {
  std::unique_ptr<Graph> g = graph();
  DimBindings b = cantFail(bindDims(*g, {Sizes{3, 1}, Sizes{3, 3}}));
  llvm::Expected<std::unique_ptr<Graph>> s = specialize(*g, b);
  ASSERT_FALSE(static_cast<bool>(s));
  EXPECT_EQ(errorToString(s.takeError()),
            "error: add: cannot broadcast [3, 3] with [5, 1]: dimension 0 is "
            "3 in one and 5 in the other (each pair of dims, aligned on the "
            "right, must be equal or 1)");
  // N = 1 and N = 5 are both fine.
  EXPECT_TRUE(static_cast<bool>(
      specialize(*g, cantFail(bindDims(*g, {Sizes{1, 1}, Sizes{1, 3}})))));
}

TEST(Specialize, BindingErrors) {
  std::unique_ptr<Graph> g = graph();
  auto err = [&](std::vector<Sizes> shapes) {
    llvm::Expected<DimBindings> b = bindDims(*g, shapes);
    return b ? std::string("ok") : errorToString(b.takeError());
  };
  EXPECT_EQ(err({Sizes{4, 1}}), "error: graph 's' takes 2 inputs, got 1");
  EXPECT_EQ(err({Sizes{4, 1, 1}, Sizes{4, 3}}),
            "error: input 'x' has shape [4, 1, 1] (rank 3), but the graph "
            "declares [N, 1] (rank 2)");
  EXPECT_EQ(err({Sizes{4, 2}, Sizes{4, 3}}),
            "error: input 'x' has shape [4, 2], but the graph declares "
            "[N, 1]: dim 1 must be 1");
  EXPECT_EQ(err({Sizes{4, 1}, Sizes{6, 3}}),
            "error: named dim 'N' is 4 in input 'x' but 6 in input 'u' "
            "[6, 3]; every use of a name must have the same size");
  EXPECT_EQ(err({Sizes{4, 1}, Sizes{4, 3}}), "ok");
  EXPECT_EQ(err({Sizes{int64_t(1) << 31, 1}, Sizes{4, 3}}),
            "error: input 'x' has shape [2147483648, 1]: a dim may be at most "
            "2^31 - 1");
}

TEST(Specialize, ParseBindings) {
  DimBindings b = cantFail(parseBindings({"N=1024", "M=3"}));
  EXPECT_EQ(bindingsStr(b), "M=3, N=1024");
  llvm::Expected<DimBindings> huge = parseBindings({"N=2147483648"});
  ASSERT_FALSE(static_cast<bool>(huge));
  EXPECT_EQ(errorToString(huge.takeError()),
            "error: bad binding 'N=2147483648': a dim may be at most 2^31 - 1");
  EXPECT_TRUE(static_cast<bool>(parseBindings({"N=2147483647"})));
  for (const char *bad : {"N", "N=", "=4", "N=-1", "N=x"}) {
    llvm::Expected<DimBindings> r = parseBindings({bad});
    ASSERT_FALSE(static_cast<bool>(r)) << bad;
    EXPECT_EQ(errorToString(r.takeError()),
              fmt::format("error: bad binding '{}': write NAME=SIZE, e.g. "
                          "N=1024",
                          bad));
  }
  std::unique_ptr<Graph> g = graph();
  // A name the graph does not use (a typo, most likely).
  llvm::Expected<std::unique_ptr<Graph>> typo =
      specialize(*g, cantFail(parseBindings({"N=4", "n=4"})));
  ASSERT_FALSE(static_cast<bool>(typo));
  EXPECT_EQ(errorToString(typo.takeError()),
            "error: 'n' is bound to 4, but graph 's' has no named dim 'n' "
            "(its named dims: N)");
  llvm::Expected<std::unique_ptr<Graph>> s = specialize(*g, {});
  ASSERT_FALSE(static_cast<bool>(s));
  EXPECT_EQ(errorToString(s.takeError()),
            "error: named dim 'N' of 'x' f32[N, 1] is not bound; bind it with "
            "an input of that shape (or --bind N=SIZE)");
}

} // namespace

namespace {

TEST(Pipeline, PreparesAStaticVerifiedGraph) {
  std::unique_ptr<Graph> g = graph();
  llvm::Expected<std::unique_ptr<Graph>> p =
      prepareForExecution(*g, {{"N", 5}});
  ASSERT_TRUE(static_cast<bool>(p)) << errorToString(p.takeError());
  for (const auto &v : (*p)->values())
    EXPECT_TRUE(v->shape().isStatic()) << v->name();
  EXPECT_EQ(errorToString(verifyGraph(**p)), "");
}

TEST(Pipeline, RefusesAMalformedGraphBeforeSpecialising) {
  std::unique_ptr<Graph> g = graph();
  g->setType(*g->outputs()[0], TensorType{DType::F16, {1, 8, "N", 1}});
  llvm::Expected<std::unique_ptr<Graph>> p =
      prepareForExecution(*g, {{"N", 5}});
  ASSERT_FALSE(static_cast<bool>(p));
  EXPECT_EQ(errorToString(p.takeError()),
            "error: '%0' is recorded as f16[1, 8, N, 1] but add gives "
            "f32[1, 8, N, 1]");
}

} // namespace
