//===- EmitReduction.cpp - Reductions with prologue and epilogue ----------===//
#include "codegen/Emitters.h"

#include "schedule/Scheduler.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace kiln {

const char *reduceOpName(OpKind k) {
  switch (k) {
  case OpKind::Min:
    return "Min";
  case OpKind::Max:
    return "Max";
  case OpKind::Sum:
    return "Sum";
  case OpKind::Mean:
    return "Mean";
  case OpKind::LogSumExp:
    return "LogSumExp";
  default:
    llvm_unreachable("not a reduction");
  }
}

/// "((o / s) % n) * stride + ..." mapping an index over `dims` of `x`
/// (row-major over those dims) to a flat index of x.
static std::string gatherIndex(const Shape &x, llvm::ArrayRef<int64_t> dims,
                               const std::string &idx) {
  // Over an empty dim there is no index to map (and no `% 0` to emit).
  if (llvm::any_of(dims, [&](int64_t d) { return x[d].size == 0; }))
    return "0";
  std::vector<int64_t> xstride(x.rank());
  int64_t s = 1;
  for (size_t k = x.rank(); k-- > 0;)
    xstride[k] = s, s *= x[k].size;
  std::string out;
  int64_t sub = 1;
  for (size_t j = dims.size(); j-- > 0;) {
    int64_t d = dims[j], n = x[d].size;
    if (n == 1)
      continue;
    std::string t = sub == 1 ? idx : fmt::format("({} / {})", idx, sub);
    if (j != 0)
      t = fmt::format("({} % {})", t, n);
    if (xstride[d] != 1)
      t = fmt::format("{} * {}", t, xstride[d]);
    out += out.empty() ? t : " + " + t;
    sub *= n;
  }
  return out.empty() ? "0" : "(" + out + ")";
}

llvm::Expected<EmittedKernel> emitReduction(const FusionGroup &g,
                                            const Schedule &s) {
  const Node &r = *g.anchor;
  const Shape &x = r.operand(0)->shape();
  llvm::Expected<ReductionShape> rs = reductionShape(r);
  if (!rs)
    return rs.takeError();
  const llvm::SmallVector<int64_t, 4> &red = rs->reduced, &kept = rs->kept;
  const int64_t numOut = rs->outputs, len = rs->length;
  const bool warpPerOutput = s.get("warpPerOutput");

  ParamList pl = tensorParams(g);
  auto param = [&](const Value *v) { return pl.of(v); };
  // Prologue at one input element.
  ExprEmitter pro(x, 1, "i", param);
  std::string load;
  for (const Node *n : g.prologue)
    pro.emit(*n, load);
  std::string in = pro.get(r.operand(0), load);
  // Epilogue at one output element.
  const Shape &os = r.result()->shape();
  ExprEmitter epi(os, 1, "o", param);
  epi.bind(r.result(), "acc");
  std::string store;
  for (const Node *n : g.epilogue)
    epi.emit(*n, store);
  for (const Value *v : g.outputs)
    epi.store(v, pl.of(v), store);

  EmittedKernel k;
  k.source = fmt::format(
      "// Kiln reduction: {} of {} over dims {} ({} outputs of {} "
      "elements).\n"
      "{}#include \"kiln/ops.cuh\"\n"
      "#include \"kiln/reduce.cuh\"\n\n"
      "extern \"C\" __global__ void __launch_bounds__({})\n"
      "KILN_NAME({}) {{\n"
      "  auto load = [&](kiln::i64 o, kiln::i64 r) -> float {{\n"
      "    const kiln::i64 i = {} + {};\n"
      "{}    return {}[0];\n"
      "  }};\n"
      "  auto store = [&](kiln::i64 o, float value) {{\n"
      "    float acc[1] = {{{}}};\n"
      "{}  }};\n"
      "  kiln::reduce<kiln::ReduceOp::{}, {}ll, {}ll, {}>(load, store);\n"
      "}}\n",
      opName(r.op()).str(), x.str(), fmt::join(red, ","), numOut, len,
      pl.halfInclude(), s.launch.block, pl.signature(),
      gatherIndex(x, kept, "o"), gatherIndex(x, red, "r"), load, in,
      roundTo(r.result()->dtype(), "value"), store, reduceOpName(r.op()),
      numOut, len, warpPerOutput ? "true" : "false");
  k.params = pl.params;
  k.bytes = groupBytes(g);
  k.flops = static_cast<double>(x.numElements()) * (1 + g.prologue.size());
  return k;
}

} // namespace kiln
