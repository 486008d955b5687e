//===- ScheduleGroupNorm.cpp - How a GroupNorm slice is held on chip ------===//
//
// A slice (one sample, one group) of up to 1024 elements is held in the
// registers of a team of lanes (gnWarp). Larger slices are split over a
// team of blocks whose parts fit in shared memory (gnTeam), two blocks per
// SM, with as many teams as fill the GPU; when there are fewer slices than
// teams would need, the teams grow instead, so the whole GPU works even for
// a handful of slices. A group with a tail (a per-sample min/max and what
// follows it) becomes one cooperative kernel: the GroupNorm pass feeds
// atomics, then a grid barrier, then the tail.
//
//===----------------------------------------------------------------------===//
#include "schedule/Scheduler.h"

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
constexpr int kWarpThreads = 256;
constexpr int kTeamThreads = 512;
constexpr int kTeamBlocksPerSM = 2;
constexpr int64_t kMinPart = 2048; // elements per block worth a block
// Elements of a block's next part that gnTeam keeps in flight into L2 ahead
// of its loads (16 KiB): L1_35 4.26 -> 4.18 ms, L2_19's GroupNorm 1.81 ->
// 1.65 ms; 12288 was slower than none on L1_35 (bench/NOTES.md v5).
constexpr int64_t kTeamPrefetch = 4096;

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

/// 8 when every tensor the kernel reads or writes is f16 or bf16 (16-byte
/// loads of 8 elements), else 4. On the H100, L2_37's tail (swish, + bias,
/// GroupNorm) in f16 took 0.273 ms at 8 against 0.325 at 4, L1_35's shape
/// 3.45 against 3.49 ms; gelu + bias (pointwise) 0.206 against 0.197 ms, so
/// pointwise kernels stay at 4 (bench/NOTES.md v14).
int maxVectorWidth(const FusionGroup &g) {
  auto half = [](const Value *v) { return isHalf(v->dtype()); };
  return llvm::all_of(g.inputs, half) && llvm::all_of(g.outputs, half) ? 8 : 4;
}

/// One vector per lane where the slice allows; then as many slices per
/// team as keep 8 (light lanes, six blocks per SM, or eight for small teams
/// with no prologue) or 16 floats per lane in flight (four blocks per SM,
/// at most 64 registers), the blocks looping over the slices.
void scheduleWarp(const FusionGroup &g, const GnShape &gs, int vec,
                  const TargetInfo &t, Schedule &s) {
  int64_t vecs = gs.slice / vec;
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
                             std::max(1, t.maxThreadsPerSM / kWarpThreads));
  int rows = static_cast<int>(std::clamp<int64_t>(
      (light ? kWarpLightFloats : 16) / (int64_t(chunks) * vec), 1, 8));
  s.kernel = "gnWarp";
  s.set("team", team);
  s.set("chunks", chunks);
  s.set("rows", rows);
  s.set("blocksPerSM", perSM);
  s.launch.block = kWarpThreads;
  s.launch.grid =
      gridFor(gs.slices, int64_t(kWarpThreads / team) * rows, perSM, t);
  s.reason = fmt::format("registers: {} lanes x {} x {} floats per "
                         "slice, {} slices per team at once",
                         team, chunks, vec, rows);
}

/// A half input's values are exact in its dtype after the prologue (each
/// op rounds to it), so its part is kept in that dtype: half the bytes on
/// chip, teams of half the blocks, half the team barriers per byte.
void scheduleTeam(const FusionGroup &g, const GnShape &gs, int vec,
                  const TargetInfo &t, Schedule &s) {
  const int partBytes =
      static_cast<int>(dtypeSize(g.anchor->operand(0)->dtype()));
  TeamPlan p = planTeams(gs, vec, partBytes, t);
  const int64_t prefetch = vec >= 4 ? kTeamPrefetch : 0;
  s.kernel = "gnTeam";
  s.set("teamBlocks", p.teamBlocks);
  s.set("teams", p.teams);
  s.set("chunk", p.chunk);
  s.set("smem", p.smem);
  s.set("partBytes", partBytes);
  s.set("prefetch", prefetch);
  s.set("blocksPerSM", kTeamBlocksPerSM);
  s.launch.block = kTeamThreads;
  s.launch.grid = static_cast<unsigned>(p.teams * p.teamBlocks);
  s.launch.sharedBytes = static_cast<unsigned>(p.smem * partBytes);
  s.launch.cooperative = p.teamBlocks > 1;
  s.reason = fmt::format(
      "{} team(s) of {} block(s) per slice, {} KiB of each part on chip{}",
      p.teams, p.teamBlocks, p.smem * partBytes / 1024,
      p.smem < p.chunk ? " (the rest re-read)" : "");
  if (prefetch)
    s.reason += fmt::format(", L2 prefetch {} KiB ahead of the loads",
                            prefetch * 4 / 1024);
}

} // namespace

GnShape gnShape(const FusionGroup &g) {
  const Node &gn = *g.anchor;
  const Shape &x = gn.operand(0)->shape();
  GnShape s;
  s.n = x[0].size;
  s.c = x[1].size;
  s.groups = gn.getInt("groups");
  s.hw = x.numElements() / std::max<int64_t>(1, s.n * s.c);
  s.slice = s.c / s.groups * s.hw;
  s.slices = s.n * s.groups;
  return s;
}

llvm::Expected<Schedule> scheduleGroupNorm(const FusionGroup &g,
                                           const TargetInfo &t) {
  const Shape &x = g.anchor->operand(0)->shape();
  const GnShape gs = gnShape(g);
  // Vec consecutive elements share a channel (for the affine) and a slice.
  // They must also share a row when some operand broadcasts along the
  // innermost dim; when every operand has x's shape they need not (a row of
  // 258 floats then still moves in 16-byte vectors).
  const int maxVec = maxVectorWidth(g);
  int vec = vectorWidth(std::gcd(gs.hw > 1 ? gs.hw : gs.c, gs.slice), maxVec);
  // Where every operand has x's shape, only the affine's channel varies
  // along a slice: a vector may then straddle two channels (hw >= vec), the
  // affine choosing per element (EmitGroupNorm). L2_19's 258 x 258 planes
  // (hw % 8 == 4) in bf16, GroupNorm + relu on an H200: 0.859 ms in 4-wide
  // vectors, 0.841 in 8-wide ones (256 x 256 planes, 8-wide anyway: 0.700;
  // bench/NOTES.md v28).
  // (A parameter only where set, so that other plans read as before.)
  bool straddle = false;
  if (!allOperandsShaped(g, x)) {
    vec = vectorWidth(std::gcd<int64_t>(vec, x[x.rank() - 1].size), maxVec);
  } else if (const int wider = vectorWidth(gs.slice, maxVec);
             gs.hw > 1 && gs.hw >= wider && wider > vec) {
    vec = wider;
    straddle = true;
  }
  Schedule s;
  s.kind = GroupKind::GroupNorm;
  s.set("vec", vec);
  if (straddle)
    s.set("straddle", 1);
  // 64-bit index arithmetic only where 32 bits (unsigned) cannot hold it.
  s.set("wide", x.numElements() >= (int64_t(1) << 32));
  if (gs.slice <= kWarpMaxSlice)
    scheduleWarp(g, gs, vec, t, s);
  else
    scheduleTeam(g, gs, vec, t, s);
  if (g.tail) {
    s.launch.cooperative = true;
    s.reason += fmt::format("; then the {} per sample and what follows it, "
                            "after a grid barrier",
                            opName(g.tail->op()).str());
  }
  return s;
}

} // namespace kiln
