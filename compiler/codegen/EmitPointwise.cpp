//===- EmitPointwise.cpp - Fused elementwise kernels ----------------------===//
#include "codegen/Emitters.h"

#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

namespace kiln {

static constexpr unsigned kPointwiseThreads = 256;
/// Groups of more elementwise nodes than this compute one element in a
/// non-inlined device function, called once per vector lane: NVRTC then
/// compiles the chain once instead of once per lane (see emitChain). Below
/// about 60 nodes the call costs more run time than it saves (H100, chains
/// of transcendentals: 56 nodes 2.7% slower; 64 nodes 2.5% faster and 195
/// -> 66 ms to compile; 100 nodes 11% faster; bench/NOTES.md v13).
static constexpr size_t kOutlineNodes = 60;

/// The per-element function of a long chain: one float per group input,
/// the group's outputs returned in a struct (in registers). Returns its
/// source; `call` receives the kernel-body statements that load the inputs
/// (Vec lanes), call it per lane and bind each output to a register array.
static std::string emitChain(const FusionGroup &g, ExprEmitter &ex,
                             std::string &call) {
  ExprEmitter one(g.prologue.front()->result()->shape(), 1, "0",
                  [](const Value *) -> std::string {
                    llvm_unreachable("every leaf is bound to an argument");
                  });
  std::string args, body, callArgs;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string a = fmt::format("a{}", i), in = fmt::format("in{}", i);
    args += fmt::format("{}float {}", i ? ", " : "", a);
    body += fmt::format("  float {}[1] = {{{}}};\n", in, a);
    one.bind(g.inputs[i], in);
    callArgs +=
        fmt::format("{}{}", i ? ", " : "", ex.lane(g.inputs[i], call, "l"));
  }
  for (const Node *n : g.prologue)
    one.emit(*n, body);
  std::string fn = fmt::format("struct ChainOut {{\n  float o[{}];\n}};\n\n"
                               "static __device__ __noinline__ ChainOut "
                               "chain({}) {{\n{}  ChainOut r;\n",
                               g.outputs.size(), args, body);
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    fn += fmt::format("  r.o[{}] = {}[0];\n", k, one.get(g.outputs[k], fn));
    call += fmt::format("    float r{}[{}];\n", k, ex.vec());
  }
  fn += "  return r;\n}\n\n";
  call += fmt::format("#pragma unroll\n    for (int l = 0; l < {}; ++l) {{\n"
                      "      const ChainOut c = chain({});\n",
                      ex.vec(), callArgs);
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    call += fmt::format("      r{}[l] = c.o[{}];\n", k, k);
    ex.bind(g.outputs[k], fmt::format("r{}", k));
  }
  call += "    }\n";
  return fn;
}

llvm::Expected<EmittedKernel> emitPointwise(const FusionGroup &g,
                                            const TargetInfo &t) {
  const Shape &domain = g.prologue.front()->result()->shape();
  const int64_t numel = domain.numElements();
  const int vec = vectorWidth(innermostSize(domain));
  const bool wide = numel >= (int64_t(1) << 31);

  ParamList pl = tensorParams(g);
  ExprEmitter ex(domain, vec, wide ? "i" : "ii",
                 [&](const Value *v) { return pl.of(v); });
  std::string body, chainFn;
  if (g.prologue.size() > kOutlineNodes) {
    chainFn = emitChain(g, ex, body);
  } else {
    for (const Node *n : g.prologue)
      ex.emit(*n, body);
  }
  for (const Value *v : g.outputs)
    ex.store(v, pl.of(v), body);

  EmittedKernel k;
  k.source = fmt::format(
      "// Kiln pointwise kernel over {} ({} elements, {} per thread step).\n"
      "#include \"kiln/ops.cuh\"\n"
      "#include \"kiln/pointwise.cuh\"\n\n"
      "{}extern \"C\" __global__ void __launch_bounds__({})\n"
      "KILN_NAME({}) {{\n"
      "  kiln::pointwise<{}ll, {}>([&](kiln::i64 i) {{\n"
      "    const {} ii = i;\n"
      "{}  }});\n"
      "}}\n",
      domain.str(), numel, vec, chainFn, kPointwiseThreads, pl.signature(),
      numel, vec, wide ? "kiln::i64" : "int", body);
  k.params = pl.params;
  k.block = kPointwiseThreads;
  k.grid = gridFor(numel / vec, kPointwiseThreads, 16, t);
  k.bytes = groupBytes(g);
  k.flops = static_cast<double>(numel) * g.prologue.size();
  k.strategy =
      fmt::format("{}-wide vectors, {} blocks of {}", vec, k.grid, k.block);
  return k;
}

} // namespace kiln
