//===- EmitContraction.cpp - linear, matmul, conv2d, conv_transpose2d -----===//
//
// Renders the simple shared-memory tiled kernels (templates/kiln/gemm.cuh,
// conv.cuh); the templates pick the same tile the schedule records
// (kiln/tiling.cuh), so the host's launch shape and the device's agree.
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitters.h"

#include "schedule/Scheduler.h"

#include "kiln/tiling.cuh"

#include <fmt/format.h>

namespace kiln {

static std::string kernelHead(const ParamList &pl, const char *include) {
  return fmt::format("#include \"kiln/{}\"\n\nextern \"C\" __global__ void "
                     "__launch_bounds__(256, 2)\nKILN_NAME({}) {{\n",
                     include, pl.signature());
}

static EmittedKernel emitLinear(const FusionGroup &g, const Schedule &s) {
  const Node &n = *g.anchor;
  const Value *bias = n.operand(2);
  const LinearShape l = linearShape(n);
  const int64_t m = l.m, k = l.k, nOut = l.n;
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  if (s.kernel == "wgmmaLinear") {
    kk.source = fmt::format(
        "// Kiln linear: [{}, {}] x [{}, {}]^T{}, {}.\n#include "
        "\"kiln/wgmma.cuh\"\n\nextern \"C\" __global__ void "
        "__launch_bounds__({}, 1)\nKILN_NAME({}) {{\n"
        "  kiln::wgmmaLinear<kiln::GemmShape<{}, {}, {}>, "
        "kiln::WgmmaConfig<{}, {}, {}>, {}>({}, {}, {}, {});\n}}\n",
        m, k, nOut, k, bias ? " + bias" : "", s.reason, kWgmmaThreads,
        pl.signature(), m, nOut, k, s.get("bn"), s.get("stages"),
        s.get("passes"), bias ? "true" : "false", pl.of(n.operand(0)),
        pl.of(n.operand(1)), bias ? pl.of(bias) : "nullptr", pl.of(n.result()));
    kk.flops = 2.0 * m * nOut * k;
    kk.params = pl.params;
    return kk;
  }
  kk.source = fmt::format(
      "// Kiln linear: [{}, {}] x [{}, {}]^T{}.\n{}"
      "  kiln::gemmNT<kiln::GemmShape<{}, {}, {}>, {}>({}, {}, {}, {});\n}}\n",
      m, k, nOut, k, bias ? " + bias" : "", kernelHead(pl, "gemm.cuh"), m, nOut,
      k, bias ? "true" : "false", pl.of(n.operand(0)), pl.of(n.operand(1)),
      bias ? pl.of(bias) : "nullptr", pl.of(n.result()));
  kk.flops = 2.0 * m * nOut * k;
  kk.params = pl.params;
  return kk;
}

static llvm::Expected<EmittedKernel> emitMatmul(const FusionGroup &g) {
  const Node &n = *g.anchor;
  llvm::Expected<MatmulLayout> l = matmulLayout(n);
  if (!l)
    return l.takeError();
  std::string map;
  for (const MatmulLayout::Run &r : l->runs)
    map += fmt::format("{}{}, {}ll, {}ll", map.empty() ? "" : ", ", r.count,
                       r.sa, r.sb);
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln matmul: {} x {} -> {}.\n{}"
      "  kiln::gemmNN<kiln::GemmShape<{}, {}, {}>{}>({}, {}, {});\n}}\n",
      l->a.str(), l->b.str(), l->c.str(), kernelHead(pl, "gemm.cuh"), l->m,
      l->n, l->k, map.empty() ? "" : ", kiln::BatchMap<" + map + ">",
      pl.of(n.operand(0)), pl.of(n.operand(1)), pl.of(n.result()));
  kk.flops = 2.0 * l->batches * l->m * l->n * l->k;
  kk.params = pl.params;
  return kk;
}

llvm::Expected<EmittedKernel> emitContraction(const FusionGroup &g,
                                              const Schedule &s) {
  llvm::Expected<EmittedKernel> k =
      s.kernel == "gemmNN" ? emitMatmul(g) : emitLinear(g, s);
  if (k)
    k->bytes = groupBytes(g);
  return k;
}

llvm::Expected<EmittedKernel> emitConvolution(const FusionGroup &g,
                                              const Schedule &s) {
  const Node &n = *g.anchor;
  const bool transposed = s.kernel == "convTranspose2d";
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape(),
              &y = n.result()->shape();
  const Value *bias = n.operand(2);
  const ConvShape c = convShape(n);
  const int64_t cin = c.cin, groups = c.groups, cout = c.cout;
  auto st = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  std::string params =
      fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}",
                  c.batch, cin, c.h, c.w, cout, w[2].size, w[3].size, st[0],
                  st[1], pad[0], pad[1], dil[0], dil[1], groups);
  if (transposed) {
    auto op = n.getInts("output_padding");
    params += fmt::format(", {}, {}", op[0], op[1]);
  }
  const int64_t pixels = c.pixels();
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format("// Kiln {}: {} * {} -> {}.\n{}"
                          "  kiln::{}<kiln::{}<{}>, {}>({}, {}, {}, {});\n}}\n",
                          opName(n.op()).str(), x.str(), w.str(), y.str(),
                          kernelHead(pl, "conv.cuh"), s.kernel,
                          transposed ? "ConvTranspose2dParams" : "Conv2dParams",
                          params, bias ? "true" : "false", pl.of(n.operand(0)),
                          pl.of(n.operand(1)), bias ? pl.of(bias) : "nullptr",
                          pl.of(n.result()));
  kk.flops = 2.0 * pixels * cout * (cin / groups) * w[2].size * w[3].size;
  kk.params = pl.params;
  kk.bytes = groupBytes(g);
  return kk;
}

} // namespace kiln
