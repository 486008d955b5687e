//===- EmitGroupNorm.cpp - GroupNorm with prologue and epilogue -----------===//
//
// Renders a GroupNorm group as its schedule says (schedule/
// ScheduleGroupNorm.cpp chooses): gnWarp or gnTeam from
// templates/kiln/groupnorm.cuh, with the prologue's loads, the affine and
// epilogue in `store`, and for a group with a tail the atomics, the grid
// barrier and the tail's own loop (emitTailPhase, which the tensor-core
// contraction's tail uses too).
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitters.h"

#include "ops/Families.h"
#include "schedule/Scheduler.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln {

namespace {

/// The keys of the tail operand's values (array `a` of `vec`), added to the
/// kernel's GnTail with tail.add(`at`, k).
std::string emitTailKey(const FusionGroup &g, const std::string &a, int vec,
                        const std::string &at) {
  return fmt::format("    {{ unsigned k = 0; // {} = {}\n#pragma unroll\n"
                     "      for (int l = 0; l < {}; ++l) {{ const unsigned t = "
                     "kiln::tailKey<{}>({}[l]); k = t > k ? t : k; }}\n"
                     "      tail.add({}, k); }}\n",
                     g.tail->result()->name(), opName(g.tail->op()).str(), vec,
                     g.tail->op() == OpKind::Min, a, at);
}

} // namespace

void addTailWorkspaces(std::vector<KernelParam> &params, int64_t keys) {
  KernelParam k{KernelParam::Kind::Workspace};
  k.bytes = static_cast<uint64_t>(keys) * 4;
  k.zeroed = true;
  KernelParam barrier{KernelParam::Kind::Workspace};
  barrier.bytes = 8;
  barrier.zeroed = true;
  params.push_back(k);
  params.push_back(barrier);
}

// (4-wide vectors along the output's last dim larger than 1 measured slower
// on L2_75's GroupNorm kernel: 0.057 against 0.046 ms.)
std::string emitTailPhase(const FusionGroup &g, const ParamList &pl,
                          const std::string &team, int64_t keys, int unroll,
                          const std::string &finish) {
  const Value *m = g.tail->result();
  const bool isMin = g.tail->op() == OpKind::Min;
  const Shape &domain = g.tailEpilogue.empty()
                            ? m->shape()
                            : g.tailEpilogue.front()->result()->shape();
  auto param = [&](const Value *v) { return pl.of(v); };
  const char *idx = domain.numElements() >= (int64_t(1) << 31) ||
                            m->shape().numElements() >= (int64_t(1) << 31)
                        ? "kiln::i64"
                        : "int";
  auto gridLoop = [&](int64_t numel, const std::string &body) {
    if (unroll == 1)
      return fmt::format(
          "  for (kiln::i64 o = blockIdx.x * (kiln::i64){0}::threads() + "
          "{0}::thread(); o < {1}ll; o += (kiln::i64)gridDim.x * "
          "{0}::threads()) {{\n    const {2} ii = o;\n{3}  }}\n",
          team, numel, idx, body);
    // `unroll` elements a thread per step, a team's width apart, with no
    // bounds check between them (their loads go ahead of the stores, in
    // flight together: checked one by one, each waited for the last, and
    // L2_75's tail took 0.056 ms); the thread's last few elements after.
    return fmt::format(
        "  {{\n  kiln::i64 o0 = blockIdx.x * (kiln::i64){0}::threads() * {4} + "
        "{0}::thread();\n"
        "  for (; o0 + ({4} - 1) * {0}::threads() < {1}ll; o0 += "
        "(kiln::i64)gridDim.x * {0}::threads() * {4}) {{\n#pragma unroll\n"
        "  for (int u = 0; u < {4}; ++u) {{\n"
        "    const {2} ii = o0 + u * {0}::threads();\n{3}  }}\n  }}\n"
        "  for (kiln::i64 o = o0; o < {1}ll; o += {0}::threads()) {{\n"
        "    const {2} ii = o;\n{3}  }}\n  }}\n",
        team, numel, idx, body, unroll);
  };
  // The keys are final after the barrier (its acquire; no block has read
  // them before it, so no L1 holds them). __ldcg is a strong load, which
  // the compiler keeps in order with the stores around it: unrolled, the
  // loop reads them plainly so that its loads go ahead together.
  auto tailValue = [&](const std::string &key) {
    const std::string load =
        unroll == 1 ? "__ldcg(keys + " + key + ")" : "keys[" + key + "]";
    return fmt::format("    float tv[1] = {{{}}}; // {}\n",
                       finish.empty()
                           ? fmt::format("kiln::tailValue<{}>({})", isMin, load)
                           : "__uint_as_float(" + load + ")",
                       m->name());
  };
  ExprEmitter te(domain, 1, "ii", param);
  std::string body = tailValue(broadcastIndex(m->shape(), domain, "ii"));
  te.bind(m, "tv");
  for (const Node *n : g.tailEpilogue)
    te.emit(*n, body);
  // The min/max itself, when returned, is stored over its own shape: the
  // epilogue's domain is larger when it broadcasts m (L2_75's add).
  const bool ownLoop = m->shape() != domain;
  std::string own;
  for (const Value *v : g.outputs) {
    if (v == m && ownLoop) {
      ExprEmitter tm(m->shape(), 1, "ii", param);
      own = tailValue("ii");
      tm.bind(m, "tv");
      tm.store(m, pl.of(m), own);
    } else if (v == m || llvm::is_contained(g.tailEpilogue, v->def())) {
      te.store(v, pl.of(v), body);
    }
  }
  std::string out = fmt::format("  kiln::gridBarrier<{}>(barrier);\n", team);
  if (!finish.empty())
    out += finish + fmt::format("  kiln::gridBarrier<{}>(barrier, 2);\n", team);
  out += gridLoop(domain.numElements(), body);
  if (!own.empty())
    out += gridLoop(m->shape().numElements(), own);
  return out + fmt::format("  kiln::tailRestore<{}>(keys, {}, barrier);\n",
                           team, keys);
}

llvm::Expected<EmittedKernel> emitGroupNorm(const FusionGroup &g,
                                            const Schedule &sc) {
  const Node &gn = *g.anchor;
  const Value *xin = gn.operand(0), *gamma = gn.operand(1),
              *beta = gn.operand(2);
  const Shape &x = xin->shape();
  const GnShape s = gnShape(g);
  ParamList pl = tensorParams(g);
  const int vec = static_cast<int>(sc.get("vec"));
  // Index arithmetic (channel of the affine, broadcast operands) on the
  // 32-bit ii: unsigned, so that its divisions and remainders by constants
  // need no sign fix-ups (L2_37 2% faster; L1_35, L2_19 the same).
  const std::string idxT = sc.get("wide") ? "kiln::i64" : "unsigned";

  auto param = [&](const Value *v) { return pl.of(v); };
  // loadRaw(i, r): the loads of every input streamed at x's shape, issued
  // early by the templates; finish(i, r, v): the prologue on them.
  llvm::SmallPtrSet<const Value *, 8> computed;
  for (const Node *n : g.prologue)
    computed.insert(n->result());
  llvm::SmallVector<const Value *, 4> streamed;
  auto noteLeaf = [&](const Value *v) {
    if (v && !v->isLiteral() && !computed.count(v) && v->shape() == x &&
        !llvm::is_contained(streamed, v))
      streamed.push_back(v);
  };
  for (const Node *n : g.prologue)
    for (const Value *v : n->operands())
      noteLeaf(v);
  noteLeaf(xin);
  ExprEmitter pro(x, vec, "ii", param);
  // The streamed loads index with the 64-bit i, the rest with ii: loads at
  // a 32-bit index made L1_35's kernel 7% slower (4.63 against 4.31 ms, one
  // process), stores at i 5% slower (4.54 ms).
  std::string rawType = "  struct Raw {", loadRaw;
  for (size_t i = 0; i < streamed.size(); ++i) {
    rawType += fmt::format(" float a{}[{}];", i, vec);
    loadRaw += fmt::format("    kiln::loadVec<{}>({} + i, r.a{});\n", vec,
                           pl.of(streamed[i]), i);
    pro.bind(streamed[i], fmt::format("r.a{}", i));
  }
  rawType += " };\n";
  // Long prologues and epilogues become functions (emitNodes).
  std::string functions;
  std::string load = "    (void)ii;\n";
  pro.emitNodes(g.prologue,
                computed.count(xin) ? llvm::ArrayRef<const Value *>(xin)
                                    : llvm::ArrayRef<const Value *>(),
                "prologue", load, functions);
  std::string xa = pro.get(xin, load);
  // A computed input is rounded once (copyIntoV).
  load += copyIntoV(vec, xa, computed.count(xin));
  // store(i, y): affine per channel, the epilogue, the writes.
  ExprEmitter epi(x, vec, "ii", param);
  std::string store;
  std::string chan = s.hw == 1 ? fmt::format("(ii % {})", s.c)
                               : fmt::format("((ii / {}) % {})", s.hw, s.c);
  auto affine = [&](const Value *p, const char *var) {
    if (!p)
      return std::string();
    if (sc.get("straddle", 0))
      // The vector's elements of channel q (b of them), then of the next.
      store += fmt::format(
          "    float {0}[{1}];\n    {{ const {2} q = ii / {3};\n"
          "      const int b = static_cast<int>((q + 1) * {3} - ii);\n"
          "      const float t0 = {4}, t1 = {5};\n"
          "      for (int l = 0; l < {1}; ++l) {0}[l] = l < b ? t0 : t1; }}\n",
          var, vec, idxT, s.hw,
          loadScalar(p, pl.of(p), fmt::format("q % {}", s.c)),
          loadScalar(p, pl.of(p), fmt::format("(q + 1) % {}", s.c)));
    else if (s.hw == 1 && vec > 1)
      store += fmt::format("    float {}[{}];\n    kiln::loadVec<{}>({} + "
                           "{}, {});\n",
                           var, vec, vec, pl.of(p), chan, var);
    else
      store += fmt::format("    float {}[{}];\n    {{ const float t = "
                           "{};\n      for (int l = 0; l < {}; ++l) "
                           "{}[l] = t; }}\n",
                           var, vec, loadScalar(p, pl.of(p), chan), vec, var);
    return fmt::format("{}[l]", var);
  };
  std::string ga = affine(gamma, "gw"), ba = affine(beta, "gb");
  std::string expr = "y[l]";
  if (!ga.empty())
    expr = fmt::format("{} * {}", expr, ga);
  if (!ba.empty())
    expr = fmt::format("{} + {}", expr, ba);
  store += fmt::format("    float gy[{}]; // {} = group_norm\n#pragma unroll\n"
                       "    for (int l = 0; l < {}; ++l) gy[l] = {};\n",
                       vec, gn.result()->name(), vec,
                       roundTo(gn.result()->dtype(), expr));
  epi.bind(gn.result(), "gy");
  llvm::SmallPtrSet<const Value *, 8> afterTail;
  if (g.tail)
    afterTail.insert(g.tail->result());
  for (const Node *n : g.tailEpilogue)
    afterTail.insert(n->result());
  // The epilogue values used after it: outputs, and the tail's operand.
  llvm::SmallVector<const Value *, 4> epiLive;
  auto noteLive = [&](const Value *v) {
    if (v->def() && llvm::is_contained(g.epilogue, v->def()) &&
        !llvm::is_contained(epiLive, v))
      epiLive.push_back(v);
  };
  for (const Value *v : g.outputs)
    if (!afterTail.count(v))
      noteLive(v);
  if (g.tail)
    noteLive(g.tail->operand(0));
  epi.emitNodes(g.epilogue, epiLive, "epilogue", store, functions);
  for (const Value *v : g.outputs)
    if (!afterTail.count(v))
      epi.store(v, pl.of(v), store);
  // The tail's per-sample min or max of a GroupNorm value, as atomics.
  std::string tailParams, tailCode, step;
  if (g.tail) {
    store += emitTailKey(g, epi.get(g.tail->operand(0), store), vec,
                         fmt::format("ii / {}", x.numElements() / s.n));
    tailCode = emitTailPhase(g, pl, "kiln::WholeBlock", s.n, 1);
    tailParams = kTailParams;
  }

  const float eps = static_cast<float>(gn.getFloat("eps"));
  EmittedKernel k;
  k.params = pl.params;
  std::string call, header, prefetch;
  if (sc.kernel == "gnWarp") {
    const int64_t perSM = sc.get("blocksPerSM");
    call = fmt::format("  kiln::gnWarp<{}ll, {}ll, {}, {}, {}, {}, Raw>("
                       "loadRaw, finish, store, step, {});\n",
                       s.slices, s.slice, sc.get("team"), vec, sc.get("chunks"),
                       sc.get("rows"), cudaFloat(eps));
    header = fmt::format("__launch_bounds__({}, {}) KILN_NAME({}{})",
                         sc.launch.block, perSM, pl.signature(), tailParams);
  } else {
    const DType in = g.anchor->operand(0)->dtype();
    const int64_t teams = sc.get("teams");
    // Per team: 3 buffers of the team's two sums, and two counters
    // (arrivals, departures); zero at rest, the kernel leaves them zero.
    KernelParam sums{KernelParam::Kind::Workspace};
    sums.bytes = static_cast<uint64_t>(teams) * 3 * 2 * 8;
    sums.zeroed = true;
    KernelParam counters{KernelParam::Kind::Workspace};
    counters.bytes = static_cast<uint64_t>(teams) * 2 * 4;
    counters.zeroed = true;
    k.params.push_back(sums);
    k.params.push_back(counters);
    // prefetch(i, bytes): every streamed input into L2 ahead of loadRaw.
    prefetch = "  auto prefetch = [&](kiln::i64 i, unsigned bytes) {";
    // gnTeam counts the bytes of floats; a half input's part may start
    // between 16-byte blocks.
    for (const Value *v : streamed)
      prefetch +=
          isHalf(v->dtype())
              ? fmt::format(" kiln::prefetchL2Within({} + i, bytes / "
                            "4);",
                            pl.of(v))
              : fmt::format(" kiln::prefetchL2({} + i, bytes);", pl.of(v));
    prefetch += " };\n";
    call = fmt::format(
        "  kiln::gnTeam<{}ll, {}ll, {}, {}, {}, {}ll, {}ll, Raw>(loadRaw, "
        "finish, store, step, {}, sums, counters, prefetch, {}ll{});\n",
        s.slices, s.slice, sc.get("teamBlocks"), sc.launch.block, vec,
        sc.get("chunk"), sc.get("smem"), cudaFloat(eps), sc.get("prefetch"),
        isHalf(in) ? fmt::format(", ({} *)nullptr", cudaStorageType(in)) : "");
    header = fmt::format("__launch_bounds__({}, {}) KILN_NAME({}, double "
                         "*sums, unsigned *counters{})",
                         sc.launch.block, sc.get("blocksPerSM"), pl.signature(),
                         tailParams);
  }
  if (g.tail) {
    addTailWorkspaces(k.params, s.n); // after gnTeam's
    rawType = "  kiln::GnTail tail{keys};\n" + rawType;
    step = "tail.flushWarp();";
    call += "  tail.flush();\n" + tailCode;
  }
  k.source = fmt::format(
      "// Kiln GroupNorm: {} slices of {} elements ({} groups over {}), "
      "{}-wide vectors.\n"
      "{}#include \"kiln/groupnorm.cuh\"\n"
      "#include \"kiln/ops.cuh\"\n\n"
      "{}extern \"C\" __global__ void {} {{\n{}"
      "  auto loadRaw = [&](kiln::i64 i, Raw &r) {{\n{}  }};\n"
      "  auto finish = [&](kiln::i64 i, const Raw &r, float (&v)[{}]) {{\n"
      "    const {} ii = i;\n{}  }};\n"
      "  auto store = [&](kiln::i64 i, float (&y)[{}]) {{\n"
      "    const {} ii = i;\n{}  }};\n"
      "  auto step = [&] {{ {} }};\n{}{}}}\n",
      s.slices, s.slice, s.groups, x.str(), vec, pl.halfInclude(), functions,
      header, rawType, loadRaw, vec, idxT, load, vec, idxT, store, step,
      prefetch, call);
  k.bytes = groupBytes(g);
  k.flops = static_cast<double>(x.numElements()) *
            (8 + g.prologue.size() + g.epilogue.size() + (g.tail ? 1 : 0));
  return k;
}

} // namespace kiln
