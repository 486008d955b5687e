//===- build_l2_75.cpp - Building the L2_75 graph with the C++ API --------===//
//
// Builds KernelBench L2_75 (Linear -> GroupNorm -> min -> broadcast add) in
// code and prints it in .kg form. The output is the same graph as
// examples/l2_75.kg (a test checks that they print identically).
//
//===----------------------------------------------------------------------===//
#include "Builder.h"
#include "IR/Printer.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace kiln;

int main() {
  const int64_t in = 8192, out = 8192, groups = 512;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  auto uniform = [&](uint64_t seed) {
    return Initializer{Initializer::Kind::Uniform, -bound, bound, seed};
  };

  GraphBuilder b("gemm_gn_min_bias_l2_75");
  Value *x = b.input("x", DType::F32, {"N", in});
  Value *w = b.param("w", DType::F32, {out, in}, uniform(1));
  Value *bias0 = b.param("b", DType::F32, {out}, uniform(2));
  Value *gamma =
      b.param("gamma", DType::F32, {out}, Initializer{Initializer::Kind::Ones});
  Value *beta =
      b.param("beta", DType::F32, {out}, Initializer{Initializer::Kind::Zeros});
  Value *bias = b.param("bias", DType::F32, {1, out, 1, 1},
                        Initializer{Initializer::Kind::Randn, 0, 0, 3});

  Value *y = b.call(OpKind::Linear, {x, w, bias0}, {}, "y");
  Value *g = b.call(OpKind::GroupNorm, {y, gamma, beta},
                    {{"groups", Attr::ofInt(groups), {}}}, "g");
  Value *m = b.call(
      OpKind::Min, {g},
      {{"dim", Attr::ofInts({1}), {}}, {"keepdim", Attr::ofBool(true), {}}},
      "m");
  Value *result = b.call(OpKind::Add, {m, bias}, {}, "out");
  b.output(result);

  llvm::Expected<std::unique_ptr<Graph>> graph = b.finish();
  if (!graph) {
    llvm::errs() << errorToString(graph.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << printGraph(**graph, PrintOptions{/*types=*/true});
  return 0;
}
