//===- EmitContraction.cpp - linear, matmul, conv2d, conv_transpose2d -----===//
//
// Simple shared-memory tiled kernels (templates/kiln/gemm.cuh, conv.cuh)
// with the tile picked by the same constexpr functions the templates use
// (kiln/tiling.cuh), so the host's launch shape and the device's agree.
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitters.h"

#include "IR/Diagnostics.h"
#include "ops/Families.h"

#include "kiln/tiling.cuh"

#include <fmt/format.h>

#include <algorithm>

namespace kiln {

static std::string kernelHead(const ParamList &pl, const char *include) {
  return fmt::format("#include \"kiln/{}\"\n\nextern \"C\" __global__ void "
                     "__launch_bounds__(256, 2)\nKILN_NAME({}) {{\n",
                     include, pl.signature());
}

/// `blocks` as grid.x, which holds at most 2^31 - 1 of them.
static llvm::Expected<unsigned> gridX(const Node &n, int64_t blocks) {
  if (blocks < (int64_t(1) << 31))
    return static_cast<unsigned>(blocks);
  return diag(n.loc(),
              "{} of {} needs {} blocks, more than a GPU grid holds (2^31 - "
              "1); Kiln's GPU kernel cannot run it",
              opName(n.op()).str(), n.operand(0)->shape().str(), blocks);
}

static llvm::Expected<EmittedKernel> emitLinear(const FusionGroup &g) {
  const Node &n = *g.anchor;
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape();
  const Value *bias = n.operand(2);
  int64_t m = 1; // the rows: every dim of x but the last
  for (size_t d = 0; d + 1 < x.rank(); ++d)
    m *= x[d].size;
  const int64_t k = w[1].size, nOut = w[0].size;
  if (m >= (int64_t(1) << 31) || nOut * k >= (int64_t(1) << 31))
    return diag(n.loc(),
                "linear of {} x {} is too large for Kiln's GPU kernel: its "
                "{} rows and its weight's {} elements must each stay below "
                "2^31",
                x.str(), w.str(), m, nOut * k);
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln linear: [{}, {}] x [{}, {}]^T{}.\n{}"
      "  kiln::gemmNT<kiln::GemmShape<{}, {}, {}>, {}>({}, {}, {}, {});\n}}\n",
      m, k, nOut, k, bias ? " + bias" : "", kernelHead(pl, "gemm.cuh"), m, nOut,
      k, bias ? "true" : "false", pl.of(n.operand(0)), pl.of(n.operand(1)),
      bias ? pl.of(bias) : "nullptr", pl.of(n.result()));
  TileShape t = pickGemmTile(m, nOut, k);
  llvm::Expected<unsigned> grid = gridX(n, gemmBlocks(m, nOut, t));
  if (!grid)
    return grid.takeError();
  kk.grid = *grid;
  kk.block = static_cast<unsigned>(t.threads());
  kk.flops = 2.0 * m * nOut * k;
  kk.strategy = fmt::format("FFMA tiles of {}x{}", t.bq, t.bp);
  kk.params = pl.params;
  return kk;
}

/// `s` with a dim of 1 inserted before its last `fromEnd` dims.
static Shape withUnitDim(const Shape &s, size_t fromEnd) {
  llvm::SmallVector<int64_t, 6> sizes;
  for (const Dim &d : s.dims())
    sizes.push_back(d.size);
  sizes.insert(sizes.end() - fromEnd, 1);
  return Shape::fromSizes(sizes);
}

static llvm::Expected<EmittedKernel> emitMatmul(const FusionGroup &g) {
  const Node &n = *g.anchor;
  const Shape &a0 = n.operand(0)->shape(), &b0 = n.operand(1)->shape(),
              &c0 = n.result()->shape();
  // A 1-D operand is a matrix of one row (a) or one column (b), as in
  // PyTorch; the result then has that dim removed. The memory layouts are
  // the same, so the kernel multiplies the 2-D forms.
  const bool rowA = a0.rank() == 1, colB = b0.rank() == 1;
  const Shape a = rowA ? withUnitDim(a0, 1) : a0;
  const Shape b = colB ? withUnitDim(b0, 0) : b0;
  Shape c = c0;
  if (rowA)
    c = withUnitDim(c, colB ? 0 : 1);
  if (colB)
    c = withUnitDim(c, 0);
  const int64_t m = a[a.rank() - 2].size, k = a[a.rank() - 1].size,
                nn = b[b.rank() - 1].size;
  // Output batch dims with each operand's element stride (0: broadcast).
  struct Run {
    int64_t count, sa, sb;
  };
  std::vector<Run> dims;
  const size_t batch = c.rank() - 2;
  int64_t sa = m * k, sb = k * nn;
  std::vector<Run> rev;
  for (size_t i = batch; i-- > 0;) {
    int64_t size = c[i].size;
    size_t ai = i + a.rank() - c.rank(), bi = i + b.rank() - c.rank();
    bool inA = i + a.rank() >= c.rank() && a[ai].size == size && size > 1;
    bool inB = i + b.rank() >= c.rank() && b[bi].size == size && size > 1;
    rev.push_back({size, inA ? sa : 0, inB ? sb : 0});
    if (i + a.rank() >= c.rank())
      sa *= a[ai].size;
    if (i + b.rank() >= c.rank())
      sb *= b[bi].size;
  }
  for (size_t i = rev.size(); i-- > 0;) {
    Run r = rev[i];
    if (r.count == 1)
      continue;
    if (!dims.empty() && dims.back().sa == r.sa * r.count &&
        dims.back().sb == r.sb * r.count) {
      dims.back() = {dims.back().count * r.count, r.sa, r.sb};
      continue;
    }
    dims.push_back(r);
  }
  if (dims.size() > 3)
    return diag(n.loc(),
                "matmul batch dims {} x {} do not merge into three "
                "runs; Kiln's GPU kernel cannot take them yet",
                a.str(), b.str());
  int64_t count = 1;
  std::string map;
  for (const Run &r : dims) {
    count *= r.count;
    map += fmt::format("{}{}, {}ll, {}ll", map.empty() ? "" : ", ", r.count,
                       r.sa, r.sb);
  }
  if (count > 65535)
    return diag(n.loc(),
                "matmul with {} batches is more than the GPU "
                "kernel's 65535",
                count);
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln matmul: {} x {} -> {}.\n{}"
      "  kiln::gemmNN<kiln::GemmShape<{}, {}, {}>{}>({}, {}, {});\n}}\n",
      a.str(), b.str(), c.str(), kernelHead(pl, "gemm.cuh"), m, nn, k,
      map.empty() ? "" : ", kiln::BatchMap<" + map + ">", pl.of(n.operand(0)),
      pl.of(n.operand(1)), pl.of(n.result()));
  TileShape t = pickGemmTile(m, nn, k);
  llvm::Expected<unsigned> grid = gridX(n, gemmBlocks(m, nn, t));
  if (!grid)
    return grid.takeError();
  kk.grid = *grid;
  kk.gridY = static_cast<unsigned>(count);
  kk.block = static_cast<unsigned>(t.threads());
  kk.flops = 2.0 * count * m * nn * k;
  kk.strategy =
      fmt::format("FFMA tiles of {}x{}, {} batch(es)", t.bq, t.bp, count);
  kk.params = pl.params;
  return kk;
}

llvm::Expected<EmittedKernel> emitContraction(const FusionGroup &g,
                                              const TargetInfo &) {
  llvm::Expected<EmittedKernel> k =
      g.anchor->op() == OpKind::Linear ? emitLinear(g) : emitMatmul(g);
  if (k)
    k->bytes = groupBytes(g);
  return k;
}

llvm::Expected<EmittedKernel> emitConvolution(const FusionGroup &g,
                                              const TargetInfo &) {
  const Node &n = *g.anchor;
  const bool transposed = n.op() == OpKind::ConvTranspose2d;
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape(),
              &y = n.result()->shape();
  const Value *bias = n.operand(2);
  const bool batched = x.rank() == 4;
  const int64_t batch = batched ? x[0].size : 1;
  const int64_t cin = x[x.rank() - 3].size, h = x[x.rank() - 2].size,
                wd = x[x.rank() - 1].size;
  const int64_t groups = n.getInt("groups");
  const int64_t cout = transposed ? w[1].size * groups : w[0].size;
  auto st = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  std::string params =
      fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}",
                  batch, cin, h, wd, cout, w[2].size, w[3].size, st[0], st[1],
                  pad[0], pad[1], dil[0], dil[1], groups);
  if (transposed) {
    auto op = n.getInts("output_padding");
    params += fmt::format(", {}, {}", op[0], op[1]);
  }
  const int64_t ho = y[y.rank() - 2].size, wo = y[y.rank() - 1].size;
  const int64_t pixels = batch * ho * wo;
  // The template computes in int: the padded input, the dilated kernel and
  // the output pixels must fit.
  int64_t largest = std::max(pixels, w.numElements());
  for (int i = 0; i < 2; ++i) {
    const int64_t in = i ? wd : h, out = i ? wo : ho;
    largest = std::max({largest, in + 2 * pad[i], out + 2 * pad[i],
                        dil[i] * (w[2 + i].size - 1) + 1});
  }
  // What conv.cuh asserts too: an input image and an output image in int.
  largest = std::max({largest, cin * h * wd, cout * ho * wo});
  if (largest >= (int64_t(1) << 31))
    return diag(n.loc(),
                "{} of {} into {} is too large for Kiln's GPU kernel: its "
                "sizes (an input or output image, padded input, dilated "
                "kernel, output pixels) must stay below 2^31",
                opName(n.op()).str(), x.str(), y.str());
  if (groups > 65535) // grid.y
    return attrError(n, "groups",
                     "{} groups are more than Kiln's GPU kernel takes (65535)",
                     groups);
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln {}: {} * {} -> {}.\n{}"
      "  kiln::{}<kiln::{}<{}>, {}>({}, {}, {}, {});\n}}\n",
      opName(n.op()).str(), x.str(), w.str(), y.str(),
      kernelHead(pl, "conv.cuh"), transposed ? "convTranspose2d" : "conv2d",
      transposed ? "ConvTranspose2dParams" : "Conv2dParams", params,
      bias ? "true" : "false", pl.of(n.operand(0)), pl.of(n.operand(1)),
      bias ? pl.of(bias) : "nullptr", pl.of(n.result()));
  TileShape t = pickConvTile(pixels, cout / groups);
  llvm::Expected<unsigned> grid =
      gridX(n, convBlocks(pixels, cout / groups, t));
  if (!grid)
    return grid.takeError();
  kk.grid = *grid;
  kk.gridY = static_cast<unsigned>(groups);
  kk.block = static_cast<unsigned>(t.threads());
  kk.flops = 2.0 * pixels * cout * (cin / groups) * w[2].size * w[3].size;
  kk.strategy = fmt::format("implicit GEMM, FFMA tiles of {}x{}", t.bp, t.bq);
  kk.params = pl.params;
  kk.bytes = groupBytes(g);
  return kk;
}

} // namespace kiln
