//===- EmitPointwise.cpp - Fused elementwise kernels ----------------------===//
#include "codegen/Emitters.h"

#include "IR/Shape.h"

#include <fmt/format.h>

namespace kiln {

llvm::Expected<EmittedKernel> emitPointwise(const FusionGroup &g,
                                            const Schedule &s) {
  const Shape &domain = g.prologue.front()->result()->shape();
  const int64_t numel = domain.numElements();
  const int vec = static_cast<int>(s.get("vec"));
  const bool wide = s.get("wide");

  ParamList pl = tensorParams(g);
  ExprEmitter ex(domain, vec, wide ? "i" : "ii",
                 [&](const Value *v) { return pl.of(v); });
  std::string body, functions;
  ex.emitNodes(g.prologue, g.outputs, "chain", body, functions);
  for (const Value *v : g.outputs)
    ex.store(v, pl.of(v), body);

  EmittedKernel k;
  k.source = fmt::format(
      "// Kiln pointwise kernel over {} ({} elements, {} per thread step).\n"
      "{}#include \"kiln/ops.cuh\"\n"
      "#include \"kiln/pointwise.cuh\"\n\n"
      "{}extern \"C\" __global__ void __launch_bounds__({})\n"
      "KILN_NAME({}) {{\n"
      "  kiln::pointwise<{}ll, {}>([&](kiln::i64 i) {{\n"
      "    const {} ii = i;\n"
      "{}  }});\n"
      "}}\n",
      domain.str(), numel, vec, pl.halfInclude(), functions, s.launch.block,
      pl.signature(), numel, vec, wide ? "kiln::i64" : "int", body);
  k.params = pl.params;
  k.bytes = groupBytes(g);
  k.flops = static_cast<double>(numel) * g.prologue.size();
  return k;
}

} // namespace kiln
