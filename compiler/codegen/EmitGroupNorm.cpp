//===- EmitGroupNorm.cpp - GroupNorm with prologue and epilogue -----------===//
//
// The scheduler. A slice (one sample, one group) of up to 1024 elements is
// held in the registers of a team of lanes (gnWarp). Larger slices are
// split over a team of blocks whose parts fit in shared memory (gnTeam), two
// blocks per SM, with as many teams as fill the GPU; when there are fewer
// slices than teams would need, the teams grow instead, so the whole GPU
// works even for a handful of slices. A group with a tail (a per-sample
// min/max and what follows it) becomes one cooperative kernel: the GroupNorm
// pass feeds atomics, then a grid barrier, then the tail (emitTail).
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitters.h"

#include "ops/Families.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace kiln {

namespace {
constexpr int64_t kWarpMaxSlice = 1024;
// gnWarp: lanes holding at most kWarpLightFloats of one slice take enough
// slices to keep that many floats each in flight, six blocks per SM (40
// registers); heavier lanes keep 16 floats in flight, four blocks per SM.
// Six blocks of 2 slices per team measured L2_37's GroupNorm 0.310 -> 0.298
// ms and L2_62's 0.0239 -> 0.0226 ms against four blocks of 4 slices
// (bench/NOTES.md v5).
constexpr int kWarpLightFloats = 8;
constexpr int kWarpLightBlocksPerSM = 6;
constexpr int kWarpBlocksPerSM = 4;
// Light lanes in teams of at most 4 (slices of up to 16 elements) with no
// prologue are bound by their loads' latency, not by instructions: eight
// blocks per SM (32 registers) took L2_62's GroupNorm from 0.0190 to 0.0185
// ms and L2_75's fused kernel from 0.0372 to 0.0363 ms in their graphs. In
// teams of 16 the same was 1% slower, and 16% slower with L2_37's swish
// prologue, which then spills (bench/NOTES.md v8).
constexpr int kWarpSmallTeam = 4;
constexpr int kWarpSmallBlocksPerSM = 8;
constexpr int kTeamThreads = 512;
constexpr int kTeamBlocksPerSM = 2;
constexpr int64_t kMinPart = 2048; // elements per block worth a block
// Elements of a block's next part that gnTeam keeps in flight into L2 ahead
// of its loads (16 KiB): L1_35 4.26 -> 4.18 ms, L2_19's GroupNorm 1.81 ->
// 1.65 ms; 12288 was slower than none on L1_35 (bench/NOTES.md v5).
constexpr int64_t kTeamPrefetch = 4096;

struct GnShape {
  int64_t n, c, groups, hw, slice, slices;
};

/// Team size, team count and part sizes for gnTeam.
struct TeamPlan {
  int64_t teamBlocks, teams, chunk, smem;
};

/// `partBytes`: the bytes of an element kept on chip (4, or 2 for a half
/// GroupNorm input).
TeamPlan planTeams(const GnShape &s, int vec, int partBytes,
                   const TargetInfo &t) {
  const int64_t blocks = int64_t(kTeamBlocksPerSM) * t.multiprocessors;
  // The part on chip, beside ~2 KiB of static shared memory.
  int64_t smemCap = (t.maxSharedPerSM / kTeamBlocksPerSM - 3072) / partBytes;
  smemCap =
      std::min<int64_t>(smemCap, (t.maxSharedPerBlock - 3072) / partBytes);
  smemCap -= smemCap % vec;
  TeamPlan p;
  p.teamBlocks = std::max<int64_t>(1, (s.slice + smemCap - 1) / smemCap);
  p.teamBlocks = std::min(p.teamBlocks, blocks);
  p.teams = std::max<int64_t>(1, std::min(blocks / p.teamBlocks, s.slices));
  // Spread spare blocks over the teams (fewer slices than teams, or a
  // remainder), keeping parts worth a block.
  p.teamBlocks =
      std::max(p.teamBlocks, std::min(blocks / p.teams, s.slice / kMinPart));
  auto chunkOf = [&](int64_t tb) {
    int64_t c = (s.slice + tb - 1) / tb;
    return (c + vec - 1) / vec * vec;
  };
  while (p.teamBlocks > 1 &&
         (p.teamBlocks - 1) * chunkOf(p.teamBlocks) >= s.slice)
    --p.teamBlocks;
  p.chunk = chunkOf(p.teamBlocks);
  p.smem = std::min(p.chunk, smemCap);
  return p;
}

/// Whether every tensor the prologue and epilogue read from outside the
/// group has the shape `x` (no broadcasting).
bool allOperandsShaped(const FusionGroup &g, const Shape &x) {
  llvm::SmallPtrSet<const Value *, 16> inside;
  inside.insert(g.anchor->result());
  for (const Node *n : g.prologue)
    inside.insert(n->result());
  for (const Node *n : g.epilogue)
    inside.insert(n->result());
  auto ok = [&](const Node *n) {
    return llvm::all_of(n->operands(), [&](const Value *v) {
      return !v || v->isLiteral() || inside.count(v) || v->shape() == x;
    });
  };
  return llvm::all_of(g.prologue, ok) && llvm::all_of(g.epilogue, ok);
}

/// Phase 2 of a GroupNorm kernel with a tail (after the grid barrier): the
/// tail's values from their keys, the tail epilogue over its shape, the
/// stores, a thread per element. (4-wide vectors along the output's last dim
/// larger than 1 measured slower on L2_75: 0.057 against 0.046 ms.)
std::string emitTail(const FusionGroup &g, const ParamList &pl, bool isMin) {
  const Value *m = g.tail->result();
  const Shape &domain = g.tailEpilogue.empty()
                            ? m->shape()
                            : g.tailEpilogue.front()->result()->shape();
  auto param = [&](const Value *v) { return pl.of(v); };
  auto gridLoop = [](int64_t numel, const std::string &body) {
    return fmt::format(
        "  for (kiln::i64 o = blockIdx.x * (kiln::i64)blockDim.x + "
        "threadIdx.x; o < {}ll; o += (kiln::i64)gridDim.x * blockDim.x) {{\n"
        "    const {} ii = o;\n{}  }}\n",
        numel, numel >= (int64_t(1) << 31) ? "kiln::i64" : "int", body);
  };
  auto tailValue = [&](const std::string &key) {
    return fmt::format(
        "    float tv[1] = {{kiln::tailValue<{}>(__ldcg(keys + {}))}}; // {}\n",
        isMin, key, m->name());
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
  std::string out = gridLoop(domain.numElements(), body);
  if (!own.empty())
    out += gridLoop(m->shape().numElements(), own);
  return out;
}

} // namespace

llvm::Expected<EmittedKernel> emitGroupNorm(const FusionGroup &g,
                                            const TargetInfo &t) {
  const Node &gn = *g.anchor;
  const Value *xin = gn.operand(0), *gamma = gn.operand(1),
              *beta = gn.operand(2);
  const Shape &x = xin->shape();
  GnShape s;
  s.n = x[0].size;
  s.c = x[1].size;
  s.groups = gn.getInt("groups");
  s.hw = x.numElements() / std::max<int64_t>(1, s.n * s.c);
  s.slice = s.c / s.groups * s.hw;
  s.slices = s.n * s.groups;
  // Vec consecutive elements share a channel (for the affine) and a slice.
  // They must also share a row when some operand broadcasts along the
  // innermost dim; when every operand has x's shape they need not (a row of
  // 258 floats then still moves in 16-byte vectors).
  const int64_t inner = x[x.rank() - 1].size;
  ParamList pl = tensorParams(g);
  const int maxVec = maxVectorWidth(pl);
  int vec = vectorWidth(std::gcd(s.hw > 1 ? s.hw : s.c, s.slice), maxVec);
  if (!allOperandsShaped(g, x))
    vec = vectorWidth(std::gcd<int64_t>(vec, inner), maxVec);
  // Index arithmetic (channel of the affine, broadcast operands) on the
  // 32-bit ii: unsigned, so that its divisions and remainders by constants
  // need no sign fix-ups (L2_37 2% faster; L1_35, L2_19 the same).
  const bool wide = x.numElements() >= (int64_t(1) << 32);
  const std::string idxT = wide ? "kiln::i64" : "unsigned";

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
  load += fmt::format("#pragma unroll\n    for (int l = 0; l < {}; ++l) "
                      "v[l] = {}[l];\n",
                      vec, xa);
  // store(i, y): affine per channel, the epilogue, the writes.
  ExprEmitter epi(x, vec, "ii", param);
  std::string store;
  std::string chan = s.hw == 1 ? fmt::format("(ii % {})", s.c)
                               : fmt::format("((ii / {}) % {})", s.hw, s.c);
  auto affine = [&](const Value *p, const char *var) {
    if (!p)
      return std::string();
    if (s.hw == 1 && vec > 1)
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
    const bool isMin = g.tail->op() == OpKind::Min;
    std::string a = epi.get(g.tail->operand(0), store);
    store +=
        fmt::format("    {{ unsigned k = 0; // {} = {}\n#pragma unroll\n"
                    "      for (int l = 0; l < {}; ++l) {{ const unsigned t = "
                    "kiln::tailKey<{}>({}[l]); k = t > k ? t : k; }}\n"
                    "      tail.add(ii / {}, k); }}\n",
                    g.tail->result()->name(), opName(g.tail->op()).str(), vec,
                    isMin, a, x.numElements() / s.n);
    tailParams = ", unsigned *__restrict__ keys, unsigned *barrier";
    tailCode = emitTail(g, pl, isMin);
  }

  const float eps = static_cast<float>(gn.getFloat("eps"));
  EmittedKernel k;
  k.params = pl.params;
  std::string call, header, prefetch;
  if (s.slice <= kWarpMaxSlice) {
    // One vector per lane where the slice allows; then as many slices
    // per team as keep 8 (light lanes, six blocks per SM, or eight for
    // small teams with no prologue) or 16 floats per lane in flight (four
    // blocks per SM, at most 64 registers), the blocks looping over the
    // slices.
    int64_t vecs = s.slice / vec;
    int team = static_cast<int>(
        std::min<uint64_t>(32, llvm::PowerOf2Ceil(std::max<int64_t>(1, vecs))));
    if (static_cast<int64_t>(team) > vecs)
      team = static_cast<int>(llvm::PowerOf2Floor(vecs));
    int chunks = static_cast<int>((vecs + team - 1) / team);
    const bool light = int64_t(chunks) * vec <= kWarpLightFloats;
    const bool small = light && team <= kWarpSmallTeam && g.prologue.empty();
    // No more blocks of 256 than the SM holds: a cooperative (tail) launch
    // needs all of them resident.
    const int perSM = std::min(small   ? kWarpSmallBlocksPerSM
                               : light ? kWarpLightBlocksPerSM
                                       : kWarpBlocksPerSM,
                               std::max(1, t.maxThreadsPerSM / 256));
    int rows = static_cast<int>(std::clamp<int64_t>(
        (light ? kWarpLightFloats : 16) / (int64_t(chunks) * vec), 1, 8));
    k.block = 256;
    int64_t perBlock = int64_t(256 / team) * rows;
    k.grid = gridFor(s.slices, perBlock, perSM, t);
    call =
        fmt::format("  kiln::gnWarp<{}ll, {}ll, {}, {}, {}, {}, Raw>("
                    "loadRaw, finish, store, step, {});\n",
                    s.slices, s.slice, team, vec, chunks, rows, cudaFloat(eps));
    header = fmt::format("__launch_bounds__(256, {}) KILN_NAME({}{})", perSM,
                         pl.signature(), tailParams);
    k.strategy = fmt::format("registers: {} lanes x {} x {} floats per "
                             "slice, {} slices per team at once",
                             team, chunks, vec, rows);
  } else {
    // A half input's values are exact in its dtype after the prologue (each
    // op rounds to it), so its part is kept in that dtype: half the bytes
    // on chip, teams of half the blocks, half the team barriers per byte.
    const DType in = g.anchor->operand(0)->dtype();
    const int partBytes = static_cast<int>(dtypeSize(in));
    TeamPlan p = planTeams(s, vec, partBytes, t);
    k.block = kTeamThreads;
    k.grid = static_cast<unsigned>(p.teams * p.teamBlocks);
    k.sharedBytes = static_cast<unsigned>(p.smem * partBytes);
    k.cooperative = p.teamBlocks > 1;
    // Per team: 3 buffers of the team's two sums, and two counters
    // (arrivals, departures); zero at rest, the kernel leaves them zero.
    KernelParam sums{KernelParam::Kind::Workspace};
    sums.bytes = static_cast<uint64_t>(p.teams) * 3 * 2 * 8;
    sums.zeroed = true;
    KernelParam counters{KernelParam::Kind::Workspace};
    counters.bytes = static_cast<uint64_t>(p.teams) * 2 * 4;
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
    const bool canPrefetch = vec >= 4;
    call = fmt::format(
        "  kiln::gnTeam<{}ll, {}ll, {}, {}, {}, {}ll, {}ll, Raw>(loadRaw, "
        "finish, store, step, {}, sums, counters, prefetch, {}ll{});\n",
        s.slices, s.slice, p.teamBlocks, kTeamThreads, vec, p.chunk, p.smem,
        cudaFloat(eps), canPrefetch ? kTeamPrefetch : 0,
        isHalf(in) ? fmt::format(", ({} *)nullptr", cudaStorageType(in)) : "");
    header =
        fmt::format("__launch_bounds__({}, {}) KILN_NAME({}, double "
                    "*sums, unsigned *counters{})",
                    kTeamThreads, kTeamBlocksPerSM, pl.signature(), tailParams);
    k.strategy = fmt::format(
        "{} team(s) of {} block(s) per slice, {} KiB of each part on chip{}",
        p.teams, p.teamBlocks, p.smem * partBytes / 1024,
        p.smem < p.chunk ? " (the rest re-read)" : "");
    if (canPrefetch)
      k.strategy += fmt::format(", L2 prefetch {} KiB ahead of the loads",
                                kTeamPrefetch * 4 / 1024);
  }
  if (g.tail) {
    // Keys and a grid barrier (arrivals, departures) between the two
    // phases; the last block out zeroes them again (tailRestore).
    KernelParam keys{KernelParam::Kind::Workspace};
    keys.bytes = static_cast<uint64_t>(s.n) * 4;
    keys.zeroed = true;
    KernelParam barrier{KernelParam::Kind::Workspace};
    barrier.bytes = 8;
    barrier.zeroed = true;
    k.params.push_back(keys);
    k.params.push_back(barrier);
    k.cooperative = true;
    rawType = "  kiln::GnTail tail{keys};\n" + rawType;
    step = "tail.flushWarp();";
    call += "  tail.flush();\n  kiln::gridBarrier(barrier);\n" + tailCode +
            fmt::format("  kiln::tailRestore(keys, {}, barrier);\n", s.n);
    k.strategy += fmt::format("; then the {} per sample and what follows it, "
                              "after a grid barrier",
                              opName(g.tail->op()).str());
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
