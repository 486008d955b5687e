//===- ScheduleContraction.cpp - linear, matmul and the convolutions ------===//
//
// linear on Hopper's tensor cores (templates/kiln/wgmma.cuh: TF32 or
// 3xTF32 by precision, with the group's fused epilogue) where the shape and
// the precision allow (wgmmaSchedule); otherwise, and for matmul and the
// convolutions, simple shared-memory FFMA tiles (gemm.cuh, conv.cuh). Tiles
// are picked by the same constexpr functions the templates use
// (kiln/tiling.cuh), so the host's launch shape and the device's agree.
//
//===----------------------------------------------------------------------===//
#include "schedule/Scheduler.h"

#include "IR/Diagnostics.h"
#include "ops/Families.h"

#include "kiln/tiling.cuh"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallPtrSet.h>

#include <algorithm>
#include <optional>

namespace kiln {

namespace {

/// `blocks` as grid.x, which holds at most 2^31 - 1 of them.
llvm::Expected<unsigned> gridX(const Node &n, int64_t blocks) {
  if (blocks < (int64_t(1) << 31))
    return static_cast<unsigned>(blocks);
  return diag(n.loc(),
              "{} of {} needs {} blocks, more than a GPU grid holds (2^31 - "
              "1); Kiln's GPU kernel cannot run it",
              opName(n.op()).str(), n.operand(0)->shape().str(), blocks);
}

/// A schedule of `kernel` in tiles `t` over `blocks` blocks (grid.x) and
/// `gridY` batches or groups.
llvm::Expected<Schedule> tiledSchedule(const Node &n, GroupKind kind,
                                       const char *kernel, const TileShape &t,
                                       int64_t blocks, int64_t gridY) {
  llvm::Expected<unsigned> grid = gridX(n, blocks);
  if (!grid)
    return grid.takeError();
  Schedule s;
  s.kind = kind;
  s.kernel = kernel;
  s.set("bp", t.bp);
  s.set("bq", t.bq);
  s.set("bk", t.bk);
  s.set("tp", t.tp);
  s.set("tq", t.tq);
  s.launch.grid = *grid;
  s.launch.gridY = static_cast<unsigned>(gridY);
  s.launch.block = static_cast<unsigned>(t.threads());
  return s;
}

/// `s` with a dim of 1 inserted before its last `fromEnd` dims.
Shape withUnitDim(const Shape &s, size_t fromEnd) {
  llvm::SmallVector<int64_t, 6> sizes;
  for (const Dim &d : s.dims())
    sizes.push_back(d.size);
  sizes.insert(sizes.end() - fromEnd, 1);
  return Shape::fromSizes(sizes);
}

/// 3xTF32 is used from this K up: measured at least as accurate as cuBLAS
/// SGEMM there (docs/precision.md); below it FFMA is, and costs little.
constexpr int64_t kMin3xTf32K = 512;

/// 3xTF32 splits w once per run, before the tiles, from this many row
/// tiles up (each reads all of w, so each would split it again). The split
/// moves 12 bytes per weight; it saves about 15% of the products' time
/// (H200: L2_37's GEMM 3.00 -> 2.53 ms with a 0.017 ms split; L2_62's
/// 1.495 -> 1.27 with a 0.22 ms split), which pays from about 8 row tiles;
/// 32 keeps it clear of the break-even.
constexpr int64_t kSplitWRowTiles = 32;

/// Split-K (WgmmaConfig's SplitK) where the tiles fill at most half of the
/// SMs: each tile's K slices shared out over up to kMaxSplitK blocks, each
/// with kSplitKMinSlices slices at least (its ring's fill costs about
/// `stages` slices). The last of a tile's blocks adds the others' partial
/// sums alone (128 KiB each at 128 x 256), which bounds the split.
constexpr int64_t kMaxSplitK = 16, kSplitKMinSlices = 16;

/// linear on Hopper's tensor cores (kiln/wgmma.cuh), when the shape and the
/// precision allow it; nullopt otherwise.
std::optional<Schedule> wgmmaSchedule(const LinearShape &l, const TargetInfo &t,
                                      MatmulPrecision precision) {
  // f16 and bf16 products are exact in the f32 accumulators: one pass at
  // every precision (as cuBLAS's half GEMMs).
  const bool half = isHalf(l.dtype);
  const bool accurate = precision == MatmulPrecision::Highest && !half;
  // 16-byte rows for cp.async; K = 0 is the FFMA kernel's (bias only).
  // The template's sizes are ints.
  constexpr int64_t kIntMax = (int64_t(1) << 31) - 1;
  if (!t.hasWgmma() || l.k == 0 || l.k % (half ? 8 : 4) != 0 ||
      (accurate && l.k < kMin3xTf32K) || l.m > kIntMax || l.n > kIntMax ||
      l.k > kIntMax)
    return std::nullopt;
  const int passes = accurate ? 3 : 1;
  // 3xTF32 keeps three accumulators: 128 columns. TF32 takes 256 where the
  // output is that wide (less shared-memory traffic per product).
  const int bn = accurate || l.n <= 128 ? 128 : 256;
  const int stages = accurate ? 4 : bn == 256 ? 4 : 6;
  const int shared = wgmmaSharedBytes(bn, stages, passes);
  const long long blocks = wgmmaBlocks(l.m, l.n, bn) * l.batches;
  if (shared > t.maxSharedPerBlock || blocks >= (int64_t(1) << 31))
    return std::nullopt;
  const int64_t sms = std::max(1, t.multiprocessors);
  const int64_t slices = (l.k + 128 / dtypeSize(l.dtype) - 1) /
                         (128 / dtypeSize(l.dtype)); // of 128 bytes a row
  const int64_t splitK =
      blocks == 0 || blocks * 2 > sms
          ? 1
          : std::clamp<int64_t>(
                std::min<int64_t>(
                    {sms / blocks, slices / kSplitKMinSlices, kMaxSplitK}),
                1, kMaxSplitK);
  Schedule s;
  s.kind = GroupKind::Contraction;
  s.kernel = "wgmmaLinear";
  s.set("bn", bn);
  s.set("stages", stages);
  s.set("passes", passes);
  s.set("splitW", kWgmmaSplitNone); // setSplitW
  s.set("splitK", splitK);
  // Persistent: a block per SM at most, each running every grid-th work
  // item (a tile, or a tile's share of K: the next item's slices load
  // during the last one's epilogue).
  s.launch.grid =
      static_cast<unsigned>(std::min<long long>(blocks * splitK, sms));
  s.set("tiles", blocks);
  s.launch.block = kWgmmaThreads;
  s.launch.sharedBytes = static_cast<unsigned>(shared);
  s.archSpecific = true;
  s.reason = fmt::format(
      "{} tensor cores (wgmma), {} tiles of {}x{} on {} persistent blocks, {} "
      "stages",
      half       ? dtypeName(l.dtype).str()
      : accurate ? "3xTF32 (fp32-accurate)"
                 : "TF32",
      blocks, kWgmmaBM, bn, s.launch.grid, stages);
  if (splitK > 1)
    s.reason += fmt::format(", K split {} ways ({} slices each or more)",
                            splitK, slices / splitK);
  return s;
}

/// Makes w before the tiles (WgmmaSplitW `mode`: each run, or when its
/// parameter changes) into a workspace of `floats`, and says so: "w split
/// into a workspace of 32.0 MiB each run" (KiB below 1 MiB). The blocks wait
/// for each other after it: all resident, a cooperative launch.
void setSplitW(Schedule &s, WgmmaSplitW mode, const std::string &what,
               int64_t floats) {
  s.set("splitW", mode);
  s.launch.cooperative = true;
  const double bytes = 4.0 * floats;
  s.reason += fmt::format(
      ", {} into a workspace of {} {}", what,
      bytes < (1 << 20) ? fmt::format("{:.0f} KiB", bytes / 1024)
                        : fmt::format("{:.1f} MiB", bytes / (1 << 20)),
      mode == kWgmmaSplitFlagged ? "when its parameter changes" : "each run");
}

/// The columns of each group of `norm` when the wgmma epilogue can
/// normalise them (contractionTakesEpilogue), else 0.
int64_t epilogueGroupCols(const Node &anchor, const Node &norm) {
  const Shape &x = norm.operand(0)->shape();
  if (x.rank() != 2 || x != anchor.result()->shape())
    return 0;
  const int64_t cols = x[1].size / norm.getInt("groups");
  return cols % 8 == 0 && 128 % cols == 0 ? cols : 0;
}

/// A tensor-core kernel that multiplies in one pass (TF32 products, about
/// 3e-4 of a convolution's value at `high` and `medium`; or f16 and bf16
/// tensors, whose results round to 2^-11 or 2^-8) takes its epilogue's
/// sigmoid and swish in their short forms, within 5.6e-6 of the value
/// (codegen's ExprEmitter::shortMath, templates/kiln/ops.cuh): "shortMath"
/// 1 where the epilogue has one. 3xTF32 (`highest`) keeps the accurate
/// forms.
static void setShortMath(Schedule &s, const FusionGroup &g) {
  auto isShort = [](const Node *e) { return hasShortForm(e->op()); };
  if (s.get("passes") != 1 || (llvm::none_of(g.epilogue, isShort) &&
                               llvm::none_of(g.normEpilogue, isShort)))
    return;
  s.set("shortMath", 1);
  s.reason += ", the epilogue's sigmoid and swish in short forms";
}

/// The tensor-core kernel's schedule `s` with group g's fused epilogue: the
/// GroupNorm's group columns, and the reason's words for it.
void addEpilogue(Schedule &s, const FusionGroup &g) {
  if (g.norm)
    s.set("groupCols", epilogueGroupCols(*g.anchor, *g.norm));
  if (!g.epilogue.empty() || g.norm)
    s.reason += fmt::format(", epilogue of {} node(s){}",
                            g.epilogue.size() + g.normEpilogue.size(),
                            g.norm ? " and the group_norm" : "");
  setShortMath(s, g);
  // A tail: a min or max's keys combined with atomics across tiles, a sum,
  // mean or logsumexp's partials per tile combined in order after a grid
  // barrier (every block resident: a cooperative launch); then another
  // barrier before the nodes after it.
  if (g.tail) {
    const bool minMax =
        g.tail->op() == OpKind::Min || g.tail->op() == OpKind::Max;
    // The tail's loop runs on the consumers alone (8 warps an SM): 8
    // elements a thread per step keep enough loads in flight (one a step:
    // L2_75's tail took 0.09 ms on the H200).
    s.set("tailUnroll", 8);
    s.launch.cooperative = true;
    s.reason += fmt::format(
        ", then its {} over {} value(s) per key ({}) and {} node(s) after it",
        opName(g.tail->op()).str(),
        g.tail->operand(0)->shape().numElements() /
            std::max<int64_t>(1, g.tail->result()->shape().numElements()),
        minMax ? "atomics, a grid barrier"
               : "a partial per tile, combined in order after a grid barrier",
        g.tailEpilogue.size());
  }
}

/// Why f16 or bf16 contraction `n` has no GPU kernel here: Hopper's tensor
/// cores only, `needs` (the shape they take), and `why` not.
llvm::Error refuseHalf(const Node &n, llvm::StringRef needs,
                       const std::string &why) {
  const std::string op = opName(n.op()).str();
  return diag(n.loc(),
              "{0} of {1} x {2} in {3}: the GPU runs f16 and bf16 {0} on "
              "Hopper's tensor cores only (sm_90, sm_90a), {4} {5}; give it "
              "f32 operands, or run it with the reference evaluator",
              op, n.operand(0)->shape().str(), n.operand(1)->shape().str(),
              dtypeName(n.result()->dtype()).str(), needs, why);
}

llvm::Expected<Schedule> scheduleLinear(const FusionGroup &g,
                                        const TargetInfo &tg,
                                        MatmulPrecision precision,
                                        bool constantParams) {
  const Node &n = *g.anchor;
  const LinearShape l = linearShape(n);
  if (l.m >= (int64_t(1) << 31) || l.n * l.k >= (int64_t(1) << 31))
    return diag(n.loc(),
                "linear of {} x {} is too large for Kiln's GPU kernel: its "
                "{} rows and its weight's {} elements must each stay below "
                "2^31",
                n.operand(0)->shape().str(), n.operand(1)->shape().str(), l.m,
                l.n * l.k);
  if (std::optional<Schedule> s = wgmmaSchedule(l, tg, precision)) {
    // 3xTF32 over many row tiles splits w once before them: each run, or,
    // for a constant parameter, when it changes. (Kept everywhere, it would
    // save L2_62's per-tile splits too, but hold two more copies of w: 512
    // MiB there.)
    if (s->get("passes") == 3 &&
        (l.m + kWgmmaBM - 1) / kWgmmaBM >= kSplitWRowTiles)
      setSplitW(*s,
                constantParams && n.operand(1)->isParam()
                    ? kWgmmaSplitFlagged
                    : kWgmmaSplitEachLaunch,
                "w split", 2 * l.n * l.k);
    addEpilogue(*s, g);
    return std::move(*s);
  }
  if (!g.epilogue.empty() || g.norm || g.tail)
    return diag(n.loc(), "internal error: the FFMA linear kernel takes no "
                         "fused epilogue (the partitioner gave it one)");
  if (isHalf(l.dtype))
    return refuseHalf(n, "with K a multiple of 8, and",
                      tg.hasWgmma() ? fmt::format("K is {}", l.k)
                                    : "the target is " + tg.arch);
  TileShape t = pickGemmTile(l.m, l.n, l.k);
  llvm::Expected<Schedule> s = tiledSchedule(
      n, GroupKind::Contraction, "gemmNT", t, gemmBlocks(l.m, l.n, t), 1);
  if (s)
    s->reason = fmt::format("FFMA tiles of {}x{}", t.bq, t.bp);
  return s;
}

llvm::Expected<Schedule> scheduleMatmul(const FusionGroup &g,
                                        const TargetInfo &tg,
                                        MatmulPrecision precision,
                                        bool constantParams) {
  const Node &n = *g.anchor;
  llvm::Expected<MatmulLayout> l = matmulLayout(n);
  if (!l)
    return l.takeError();
  // The tensor-core linear, with the right operand (each of its matrices)
  // transposed (and split, 3xTF32) into a workspace before the tiles: per
  // run, or, for a constant parameter, when it changes. A 2-D right
  // operand (x @ W, x of any batch dims) is one linear; a batched one runs
  // batch after batch.
  if (std::optional<LinearShape> ls = wgmmaMatmulShape(n)) {
    if (std::optional<Schedule> s = wgmmaSchedule(*ls, tg, precision)) {
      const bool split = s->get("passes") == 3;
      const int64_t matrices = n.operand(1)->shape().numElements() /
                               std::max<int64_t>(1, ls->n * ls->k);
      setSplitW(
          *s,
          constantParams && n.operand(1)->isParam() ? kWgmmaSplitFlagged
                                                    : kWgmmaSplitEachLaunch,
          fmt::format("{} {} x {}{} transposed{}",
                      matrices > 1 ? "the right operand's" : "the", ls->k,
                      ls->n,
                      matrices > 1 ? fmt::format(" matrices ({})", matrices)
                                   : " operand",
                      split ? " and split" : ""),
          (split ? 2 : 1) * n.operand(1)->shape().numElements());
      if (ls->batches > 1)
        s->reason += fmt::format(", {} batches", ls->batches);
      addEpilogue(*s, g);
      return std::move(*s);
    }
  }
  if (!g.epilogue.empty() || g.norm || g.tail)
    return diag(n.loc(), "internal error: the FFMA matmul kernel takes no "
                         "fused epilogue (the partitioner gave it one)");
  // gemmNN puts the batches on grid.y (the tensor-core kernel has no such
  // bound: its tiles run batch after batch).
  if (l->batches > 65535)
    return diag(n.loc(),
                "matmul with {} batches is more than the FFMA kernel takes "
                "(65535; on Hopper's tensor cores, where K % 4 == 0, there "
                "is no such bound)",
                l->batches);
  if (isHalf(n.result()->dtype()))
    return refuseHalf(n,
                      "with a right operand of 2 or more dims and K a "
                      "multiple of 8;",
                      !tg.hasWgmma() ? "the target is " + tg.arch
                      : n.operand(1)->shape().rank() < 2
                          ? std::string("the right operand is a vector")
                          : fmt::format("K is {}", l->k));
  TileShape t = pickGemmTile(l->m, l->n, l->k);
  llvm::Expected<Schedule> s =
      tiledSchedule(n, GroupKind::Contraction, "gemmNN", t,
                    gemmBlocks(l->m, l->n, t), l->batches);
  if (s)
    s->reason = fmt::format("FFMA tiles of {}x{}, {} batch(es)", t.bq, t.bp,
                            l->batches);
  return s;
}

} // namespace

llvm::Expected<MatmulLayout> matmulLayout(const Node &n) {
  const Shape &a0 = n.operand(0)->shape(), &b0 = n.operand(1)->shape(),
              &c0 = n.result()->shape();
  // A 1-D operand is a matrix of one row (a) or one column (b), as in
  // PyTorch; the result then has that dim removed. The memory layouts are
  // the same, so the kernel multiplies the 2-D forms.
  const bool rowA = a0.rank() == 1, colB = b0.rank() == 1;
  MatmulLayout l{rowA ? withUnitDim(a0, 1) : a0,
                 colB ? withUnitDim(b0, 0) : b0,
                 c0,
                 0,
                 0,
                 0,
                 {},
                 1};
  const Shape &a = l.a, &b = l.b;
  if (rowA)
    l.c = withUnitDim(l.c, colB ? 0 : 1);
  if (colB)
    l.c = withUnitDim(l.c, 0);
  const Shape &c = l.c;
  l.m = a[a.rank() - 2].size;
  l.k = a[a.rank() - 1].size;
  l.n = b[b.rank() - 1].size;
  // Output batch dims with each operand's element stride (0: broadcast).
  const size_t batch = c.rank() - 2;
  int64_t sa = l.m * l.k, sb = l.k * l.n;
  std::vector<MatmulLayout::Run> rev;
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
    MatmulLayout::Run r = rev[i];
    if (r.count == 1)
      continue;
    if (!l.runs.empty() && l.runs.back().sa == r.sa * r.count &&
        l.runs.back().sb == r.sb * r.count) {
      l.runs.back() = {l.runs.back().count * r.count, r.sa, r.sb};
      continue;
    }
    l.runs.push_back(r);
  }
  if (l.runs.size() > 3)
    return diag(n.loc(),
                "matmul batch dims {} x {} do not merge into three "
                "runs; Kiln's GPU kernel cannot take them yet",
                a.str(), b.str());
  for (const MatmulLayout::Run &r : l.runs)
    l.batches *= r.count;
  return l;
}

llvm::Expected<Schedule> scheduleContraction(const FusionGroup &g,
                                             const TargetInfo &t,
                                             MatmulPrecision precision,
                                             bool constantParams) {
  return g.anchor->op() == OpKind::Linear
             ? scheduleLinear(g, t, precision, constantParams)
             : scheduleMatmul(g, t, precision, constantParams);
}

static std::optional<Schedule>
wgmmaConvSchedule(const Node &n, const ConvShape &c, const TargetInfo &t,
                  MatmulPrecision precision, bool constantParams = false,
                  bool residual = false);

/// Whether the tensor-core convolution of schedule `s` can reduce over the
/// channels in its epilogue: one part of the output channels (each tile
/// holds every channel of its pixels) and one group.
static bool convTakesChannelTail(const Schedule &s, const ConvShape &c) {
  return c.groups == 1 && s.get("nb") == c.cout;
}

/// The fewest values of w a block of the tensor-core convolution gathers
/// for it to copy a made-once image of them instead (wgmmaConvSchedule).
constexpr int64_t kConvImageMinGather = 8192;

/// The least K (taps x input channels, rounded up to 16) for which the
/// tensor-core convolution takes 128 output channels a block.
constexpr int64_t kConvWideMinK = 64;

/// The fewest input channels a group of a grouped convolution has for it to
/// run on tensor cores: fewer leave most of each 16-channel stage zeros (a
/// depthwise conv2d, one channel a group, runs depthwise.cuh's kernel;
/// groups of 2 to 7 channels the FFMA tiles).
constexpr int64_t kConvMinGroupChannels = 8;

/// The least K for which a convolution's consumers take its items in turn
/// (ping-pong) in parts of 64 channels: f32 tensors, and f16 or bf16 ones
/// (in their k16 products or in TF32's).
constexpr int64_t kConvPingPongMinK = 64, kConvPingPongMinKHalves = 288;

/// Whether a convolution reads and writes tensors of one dtype, f32, f16
/// or bf16 (the tensor-core and depthwise templates' TX).
static bool oneFloatType(const Node &n) {
  const DType t = n.result()->dtype();
  return (t == DType::F32 || isHalf(t)) &&
         llvm::all_of(n.operands(),
                      [&](const Value *v) { return !v || v->dtype() == t; });
}

/// Whether a convolution keeps the tile arithmetic of the tensor-core and
/// depthwise layouts (int, kiln/tiling.cuh) in range: in each dim a stride
/// of at most 64, padding of at most 2^16 and a dilated kernel of at most
/// 512 (larger patches fit no shared memory anyway), and images of fewer
/// than 2^30 rows and columns. The fusion pass asks before the scheduler's
/// size checks, so this may not lean on them.
static bool convTilesInRange(const Node &n, const ConvShape &c) {
  auto stride = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  const Shape &w = n.operand(1)->shape();
  constexpr int64_t maxExtent = 512, maxStride = 64, maxPad = 1 << 16,
                    maxImage = int64_t{1} << 30;
  for (int i = 0; i < 2; ++i) {
    const int64_t k = w[2 + i].size;
    if (stride[i] < 1 || stride[i] > maxStride || pad[i] < 0 ||
        pad[i] > maxPad || dil[i] < 1 || dil[i] > maxExtent || k < 1 ||
        k > maxExtent || (k - 1) * dil[i] + 1 > maxExtent)
      return false;
  }
  return llvm::all_of(std::initializer_list<int64_t>{c.h, c.w, c.ho, c.wo},
                      [&](int64_t v) { return v < maxImage; });
}

/// A depthwise conv2d (one input channel a group) in kiln/depthwise.cuh,
/// any precision (fp32 products): f32, f16 or bf16 tensors (one dtype; the
/// input kept as f32 in shared memory), at most 64 taps, the input a
/// block's output tile reads within its static shared memory; nullopt
/// otherwise (the FFMA tiles run it, one output channel of their 32 used).
static std::optional<Schedule> depthwiseSchedule(const Node &n,
                                                 const ConvShape &c) {
  auto stride = n.getInts("stride"), dil = n.getInts("dilation");
  const Shape &w = n.operand(1)->shape();
  const int64_t kh = w[2].size, kw = w[3].size;
  if (n.op() != OpKind::Conv2d || !oneFloatType(n) || c.groups != c.cin ||
      !convTilesInRange(n, c) || kh * kw > 64 || c.pixels() < 1)
    return std::nullopt;
  const int rows = depthwiseRows(
      static_cast<int>(c.ho), static_cast<int>(kh), static_cast<int>(kw),
      static_cast<int>(stride[0]), static_cast<int>(stride[1]),
      static_cast<int>(dil[0]), static_cast<int>(dil[1]));
  if (rows == 0)
    return std::nullopt;
  const long long blocks = depthwiseBlocks(
      c.batch, c.cout, static_cast<int>(c.ho), static_cast<int>(c.wo), rows);
  if (blocks >= (1ll << 31))
    return std::nullopt;
  Schedule s;
  s.kind = GroupKind::Convolution;
  s.kernel = "depthwiseConv2d";
  s.set("rows", rows);
  s.set("cols", kDepthwiseCols);
  s.set("vec", 1); // the epilogue's values a call
  s.launch.grid = static_cast<unsigned>(blocks);
  s.launch.block = kDepthwiseThreads;
  s.reason = fmt::format(
      "direct depthwise (fp32 FMA), {}x{} output tiles of one channel plane "
      "a block, the input they read in shared memory ({:.1f} KiB)",
      rows, kDepthwiseCols,
      depthwiseSharedBytes(rows, kh, kw, stride[0], stride[1], dil[0], dil[1]) /
          1024.0);
  return s;
}

bool contractionTakesEpilogue(const Node &anchor, const Node *norm,
                              const TargetInfo &t, MatmulPrecision precision) {
  // The tensor-core and depthwise convolutions': elementwise nodes, no
  // group_norm yet; the tensor-core one's a reduction over the channels
  // where its tiles hold them all (convTakesChannelTail).
  if (getOpInfo(anchor.op()).family == OpFamily::Convolution) {
    const ConvShape c = convShape(anchor);
    std::optional<Schedule> s = wgmmaConvSchedule(anchor, c, t, precision);
    if (norm && getOpInfo(norm->op()).family == OpFamily::Reduction)
      return s && convTakesChannelTail(*s, c);
    return !norm && (s || depthwiseSchedule(anchor, c));
  }
  // The tensor-core kernel's: an f32 linear, or a matmul it runs.
  std::optional<LinearShape> l;
  if (anchor.op() == OpKind::Linear && anchor.result()->dtype() == DType::F32)
    l = linearShape(anchor);
  else if (anchor.op() == OpKind::Matmul &&
           anchor.result()->dtype() == DType::F32)
    l = wgmmaMatmulShape(anchor);
  if (!l || !wgmmaSchedule(*l, t, precision))
    return false;
  return !norm || epilogueGroupCols(anchor, *norm) > 0;
}

/// A convolution on Hopper's tensor cores (kiln/wgmma_conv.cuh), TF32 at
/// high and medium, 3xTF32 at highest, when the shape fits the template:
/// conv2d of any stride or conv_transpose2d of any stride (one pass per
/// output phase), one group or groups of kConvMinGroupChannels input
/// channels or more, output channels a multiple of 8 a group (input rows
/// of any width: copied 16, 8 or 4 bytes at a time as W allows), the
/// weight of a block's output channels (the most of 128, 64 or 32 at
/// highest, that fit) and two stages of the patch within shared memory;
/// nullopt otherwise (the FFMA kernel runs it). With constantParams, w a
/// parameter and a block's part of it large enough, the blocks' images of
/// the weight (as shared memory keeps them: rounded, 3xTF32's parts,
/// swizzled) are made once into a workspace when the parameter changes,
/// and each block copies its own (field `image`: their bytes; 0 where each
/// block gathers its part from w). `residual`: the epilogue reads a tensor
/// of the output's size (pairs of columns then only where rows split
/// sectors, see vec).
static std::optional<Schedule>
wgmmaConvSchedule(const Node &n, const ConvShape &c, const TargetInfo &t,
                  MatmulPrecision precision, bool constantParams,
                  bool residual) {
  auto stride = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  const Shape &w = n.operand(1)->shape();
  const bool transposed = n.op() == OpKind::ConvTranspose2d;
  // A block reduces over one group's input channels (cinG) for a part of
  // its output channels (coutG).
  if (c.groups < 1 || c.cin % c.groups != 0 || c.cout % c.groups != 0)
    return std::nullopt;
  const int64_t cinG = c.cin / c.groups, coutG = c.cout / c.groups;
  if (!t.hasWgmma() || !oneFloatType(n) || cinG < 1 || coutG < 8 ||
      c.pixels() < 1 || coutG % 8 != 0 ||
      (c.groups > 1 && cinG < kConvMinGroupChannels) || !convTilesInRange(n, c))
    return std::nullopt;
  // The weight's slices of 32 input channels, ceil(cinG / 32) a tap,
  // counted in int64 before the layout's int: fewer than 2^15 keep its
  // bytes below 2^30 (parts of 128 channels, 3xTF32's two copies); 2^15
  // take 32 MiB even in parts of 8, far beyond shared memory.
  if ((cinG + 31) / 32 > (int64_t{1} << 15) / (w[2].size * w[3].size))
    return std::nullopt;
  // What a block's layout may take: the device's opt-in limit less the
  // kernel's own __shared__ variables (tiling.cuh).
  const int sharedLimit = t.maxSharedPerBlock - kWgmmaConvStaticShared;
  // f16 and bf16 convolutions multiply in their type where three stages
  // fit, else in TF32 (exact for their values; WgmmaConvLayout::k16): one
  // pass at every precision.
  const bool half = isHalf(n.result()->dtype());
  const bool accurate = precision == MatmulPrecision::Highest && !half;
  const int passes = accurate ? 3 : 1;
  // Output phases: conv_transpose2d's stride (conv2d's spaces the input
  // the tiles read, in the layout).
  const int sh = transposed ? static_cast<int>(stride[0]) : 1,
            sw = transposed ? static_cast<int>(stride[1]) : 1;
  // K a block runs: its taps x the input channels (rounded up to 16).
  auto kOf = [&](const WgmmaConvLayout &l) {
    return int64_t{l.taps} * ((cinG + 15) / 16 * 16);
  };
  auto layoutFor = [&](int nb, bool phaseBlocks, bool narrowCopies = true,
                       int stream = 0) {
    return WgmmaConvLayout(
        transposed, static_cast<int>(w[2].size), static_cast<int>(w[3].size),
        static_cast<int>(stride[0]), static_cast<int>(stride[1]),
        static_cast<int>(pad[0]), static_cast<int>(pad[1]),
        static_cast<int>(dil[0]), static_cast<int>(dil[1]),
        static_cast<int>(cinG), nb, passes, phaseBlocks, half ? 2 : 4,
        narrowCopies, stream);
  };
  // The widest part of the output channels whose weight fits. 128 only
  // with one accumulator buffer (not both column phases of a tile) and a K
  // of kConvWideMinK or more: an H100 ran 3 x 3 32 -> 128 (K 288) 20%
  // faster in parts of 128 than of 64 (x read once, rounded once, half the
  // fragment loads a product); an H200 1 x 1 convolutions from 64 and 128
  // channels 22-39% (f32, bf16, f16, stride 2), from 32 1%, but from 16
  // (K 16, a tile's stores with no products beside them) 23% slower
  // (bench/NOTES.md v44).
  // Parts that fit with 16-byte copies first; 8-byte ones (the layout's
  // fallback: rows 4 columns narrower) only where no part fits otherwise.
  auto widest = [&](bool phaseBlocks) {
    int first = wgmmaConvChannels(static_cast<int>(coutG), passes,
                                  passes == 1 && sw == 2 && !phaseBlocks);
    if (first == 128 && kOf(layoutFor(first, phaseBlocks)) < kConvWideMinK)
      first = 64;
    auto fits = [&](int nb, bool narrowCopies) {
      return layoutFor(nb, phaseBlocks, narrowCopies).sharedBytes() <=
             sharedLimit;
    };
    int nb = first;
    while (nb > 8 && !fits(nb, false))
      nb /= 2;
    if (!fits(nb, false))
      for (nb = first; nb > 8 && !fits(nb, true);)
        nb /= 2;
    return nb;
  };
  // Blocks of one output phase each keep that phase's taps alone: only
  // where every phase's taps would leave parts narrower than 32 channels
  // (m64n16 and m64n8 products; x read once a part). Otherwise a tile's
  // phases run on neighbouring blocks, whose interleaved stores meet in L2:
  // an H100 ran the strided kernel-3 sweep graphs 1.8x slower by phase,
  // whose phases of 1 to 4 taps cost alike for their stores, and kernel 4
  // 64 -> 64 (parts of 32 or, by phase, 64) 6% slower (bench/NOTES.md).
  int nb = widest(false);
  const int keptWhole = nb; // a tile's phases together, all taps kept
  bool phaseBlocks = false;
  if (sh * sw > 1 && nb < 32 && widest(true) > nb)
    nb = widest(true), phaseBlocks = true;
  // Halves: products in their type (k16: twice TF32's rate) in parts down
  // to 32 channels rather than TF32's in wider ones (3 x 3 32 -> 128: k16's
  // weight and stages do not fit in parts of 128).
  for (int narrower = nb / 2;
       half && !layoutFor(nb, phaseBlocks).k16 && narrower >= 32; narrower /= 2)
    if (const WgmmaConvLayout l = layoutFor(narrower, phaseBlocks);
        l.k16 && l.sharedBytes() <= sharedLimit) {
      nb = narrower;
      break;
    }
  // A convolution whose weight stays in shared memory only in parts
  // narrower than 64 channels (3xTF32: 32; ResNet's 3 x 3 from 128
  // channels, K = 1152, or 3 x 3 of stride 2 from 64, whose patch is 4x
  // stride 1's) streams it instead, each stage of the ring holding its
  // channels' weight beside the patch (from the blocks' images: made once
  // for a constant parameter, else at every launch), in the widest parts
  // that fit:
  // stages of 16 input channels, or of 8 where only they fit wider parts
  // (conv2d 4 x 4 of stride 2 from 128 channels: a patch of 34 x 40 pixels,
  // 85 KiB at 16 channels; parts of 128 then, not 32). A strided
  // conv_transpose2d streams by phase (each block one output phase, its
  // images that phase's taps alone), from parts of 32 only where those
  // were by phase too. An H200 ran conv_transpose2d 4 x 4 of stride 2 256
  // -> 128 (by phase in parts of 32) in 0.357 ms streamed by phase in parts
  // of 128 (0.745 kept whole; 0.497 streamed in parts of 64, where ptxas
  // spills 10 instructions in parts of 128, all in the epilogue, once a
  // tile), and 64 -> 64 (parts of 32, a tile's column phases together) 27%
  // slower streamed by phase (bench/NOTES.md v40). f16 and bf16 stream
  // too: in their own (k16) products a tap's 16 channels a row of 32 bytes
  // (32-byte swizzle); where k16's stages do not fit (conv2d of stride 2:
  // the patch's transposed copy) or hold 8 channels, in TF32 products as
  // f32 (exact: the patch kept in halves, the weight's images in TF32).
  const bool streamByPhase = sh * sw > 1;
  const int wide = passes == 1 && (!streamByPhase || phaseBlocks) ? 64 : 32;
  int stream = 0; // the input channels a stage where streamed
  // Parts of 64 kept whole stream in parts of 128 too, where Cout and K
  // would take them (K of kConvWideMinK or more): x read once, a fragment
  // load for twice the products. An H200 ran 3 x 3 64 -> 128 11% faster
  // (0.732 -> 0.651 ms, the sweep's graph; bf16 17%), 64 -> 256 16% and
  // bf16 32 -> 128 21%; by phase, conv_transpose2d 4 x 4 of stride 2 128
  // -> 128 9% and 96 -> 128 2-4% (bench/NOTES.md v40).
  const bool wider = passes == 1 && (!streamByPhase || phaseBlocks) &&
                     nb == 64 && coutG % 128 == 0 &&
                     kOf(layoutFor(128, streamByPhase, true,
                                   kWgmmaConvChannels)) >= kConvWideMinK;
  // A strided conv_transpose2d in one pass (TF32, f16 or bf16 products)
  // whose weight stays whole only in parts narrower than 64 channels
  // streams in parts of 64 with a tile's column phases together, each
  // stage holding its row phase's taps alone (WgmmaConvLayout::rowImages):
  // half the fragment loads a product of parts of 32, and stores of whole
  // rows, not by phase's every other column. An H200 ran 4 x 4 of stride 2
  // 64 -> 64 23% faster so than in parts of 32 kept whole (bf16: 27%),
  // 128 -> 64 25% than by phase in 64 (bf16: 30%), and 256 -> 128 9% than
  // streamed by phase in 128; with the bias in shared memory (wgmma_conv.cuh)
  // 64 -> 64 and 128 -> 64 32% (bench/NOTES.md v46).
  const bool rowStream =
      streamByPhase && passes == 1 && sw == 2 && keptWhole < 64 &&
      coutG % 64 == 0 &&
      layoutFor(64, false, true, kWgmmaConvChannels).sharedBytes() <=
          sharedLimit;
  if (rowStream)
    nb = 64, stream = kWgmmaConvChannels, phaseBlocks = false;
  else if ((nb < wide || wider) && coutG > nb)
    for (int channels : {kWgmmaConvChannels, 8}) {
      int streamed =
          wgmmaConvChannels(static_cast<int>(coutG), passes,
                            passes == 1 && sw == 2 && !streamByPhase);
      while (streamed > nb &&
             layoutFor(streamed, streamByPhase, true, channels).sharedBytes() >
                 sharedLimit)
        streamed /= 2;
      if (streamed > nb)
        nb = streamed, stream = channels, phaseBlocks = streamByPhase;
    }
  WgmmaConvLayout layout = layoutFor(nb, phaseBlocks, true, stream);
  // TF32 at column stride 2: an item takes both column phases (as the
  // template's CP). Where the rows are even, the epilogue stores pairs of
  // neighbouring columns: both phases' values, or with one phase a tile at
  // column stride 1 a value and its neighbour's (traded between lanes g and
  // g ^ 1), half the stores and their indices. Not that trade at rows of
  // whole sectors where the epilogue reads a residual: H200 (bench/NOTES.md
  // v38), it made conv2d 3 x 3 64 -> 64 + residual + relu 7% slower at 256
  // x 256 and 6% at 128 x 128, and saved 5-6% without a residual (silu,
  // relu); rows not of whole sectors keep it (130 x 130: equal).
  const int colPhases = passes == 1 && sw == 2 && !phaseBlocks ? 2 : 1;
  const bool trade = sw == 1 && !(residual && c.wo % 8 == 0);
  const int vec = (colPhases == 2 || trade) && c.wo % 2 == 0 ? 2 : 1;
  const long long items = wgmmaConvItems(c.batch, static_cast<int>(c.ho),
                                         static_cast<int>(c.wo), sh, sw) /
                          colPhases;
  const long long parts = c.cout / nb;
  // Blocks at least: one of each part (with phaseBlocks, of each phase).
  const long long fewest = parts * (phaseBlocks ? sh * sw : 1);
  if (layout.sharedBytes() > sharedLimit || items >= (1ll << 31) ||
      fewest > std::max(1, t.multiprocessors))
    return std::nullopt;
  Schedule s;
  s.kind = GroupKind::Convolution;
  s.kernel = "wgmmaConv";
  s.set("passes", passes);
  s.set("nb", nb);
  s.set("phaseBlocks", phaseBlocks);
  s.set("vec", vec);
  // Ping-pong consumers (each a whole item, one's stores beside the other's
  // products; TF32 with one accumulator buffer): in parts of 32, or of 64
  // with K = taps x Cin of kConvPingPongMinK or more. An H100 ran L2_19's
  // conv_transpose2d 20% faster so, 3 x 3 16 -> 32 and 8 -> 32 9% and 5%,
  // 64 -> 64 8% and kernel 4 128 -> 64 12%, but 16 -> 64 (K 144) 14% slower
  // (bench/NOTES.md v26; v25's losses were register spills and generic
  // loads); with the tiles from a counter and paired stores since, an H200
  // ran that 16 -> 64 24% faster so, 1 x 1 128 -> 64 (K 128) 6% and 3 x 3
  // 8 -> 64 (K 144) 2%; in bf16's k16 products 16 -> 64 5% faster but 8 ->
  // 64 16% slower; and at stride 2 from 16 channels (TF32 products)
  // ptxas spilled 72-108 bytes (as from 32, K 288, it already does: 92-104
  // bytes, not measured): so halves keep K 288 (bench/NOTES.md v44). Not
  // with the weight streamed by phase (a template test's spilled 24 bytes),
  // nor streamed in k16 products: an H200 ran bf16 3 x 3 128 -> 64 and 256
  // -> 64 5-7% faster without (their epilogue spilled 52 instructions in
  // ping-pong), but TF32's (bf16 3 x 3 s2 64 -> 64) 3% slower
  // (bench/NOTES.md v40).
  const bool pingPong =
      passes == 1 && colPhases == 1 &&
      !(stream > 0 && (phaseBlocks || layout.k16)) &&
      (nb == 32 || (nb == 64 && kOf(layout) >= (half ? kConvPingPongMinKHalves
                                                     : kConvPingPongMinK)));
  // Streamed ping-pong in TF32 on f32 whose stages of 16 channels leave
  // room for two takes stages of 8, three of them: the producer then fills
  // one while each consumer holds one. An H200 ran conv2d 3 x 3 of stride
  // 2 into 64 channels (a patch of 33 rows a tile) 7.7% faster so from 128
  // channels, 6.3% from 96 and 4.6% from 64, though ptxas spills 4 bytes
  // in them (bench/NOTES.md v49).
  if (pingPong && stream == kWgmmaConvChannels && !half &&
      layout.stages < kWgmmaConvStages) {
    const WgmmaConvLayout eight = layoutFor(nb, phaseBlocks, true, 8);
    if (eight.stages > layout.stages && eight.sharedBytes() <= sharedLimit)
      stream = 8, layout = eight;
  }
  if (stream > 0)
    s.set("stream", stream);
  s.set("pingPong", pingPong);
  s.set("tiles", items);
  s.set("stages", layout.stages);
  // The blocks of a part take its tiles one at a time from a counter (two
  // per part, a workspace: its bytes), so that the grid works on
  // neighbouring tiles at one time however fast each block runs: dealt out
  // in advance, the blocks of L2_19's convolution drifted apart on an H100,
  // whose DRAM then read 1.5x its input (halos and shared sectors no longer
  // met in L2) and which ran 1.3x slower (bench/NOTES.md v30). By phase,
  // the blocks of each phase keep dealing theirs out.
  s.set("tickets", phaseBlocks ? 0 : 8 * parts);
  // A block per SM at most, each on one part of the output channels (and
  // with phaseBlocks one output phase): the parts alternate along the
  // grid, so its size is a multiple of theirs, and each phase has a block
  // of each part at least.
  s.launch.grid = static_cast<unsigned>(
      std::max<long long>(
          std::min<long long>(items * parts, std::max(1, t.multiprocessors)),
          fewest) /
      parts * parts);
  s.launch.block = kWgmmaThreads;
  s.launch.sharedBytes = static_cast<unsigned>(layout.sharedBytes());
  s.archSpecific = true;
  s.reason = fmt::format(
      "implicit GEMM on {} tensor cores (wgmma), {} tiles of {}x{} pixels{} "
      "x {} channels on {} persistent blocks, the weight {} ({:.0f} KiB{})",
      accurate     ? "3xTF32 (fp32-accurate)"
      : layout.k16 ? dtypeName(n.result()->dtype()).str()
      : half       ? fmt::format("TF32 (exact for {})",
                                 dtypeName(n.result()->dtype()).str())
                   : "TF32",
      items * parts, kWgmmaConvTile, kWgmmaConvTile,
      sh * sw > 1 ? fmt::format(" (of {} output phases{})", sh * sw,
                                phaseBlocks      ? ", a phase a block"
                                : colPhases == 2 ? ", two column phases a tile"
                                                 : "")
      : stride[0] * stride[1] > 1
          ? fmt::format(" (input stride {}x{})", stride[0], stride[1])
          : "",
      nb, s.launch.grid,
      stream ? layout.rowImages ? "streamed through the ring beside the "
                                  "patch, a tile's row phase's taps alone"
                                : "streamed through the ring beside the patch"
             : "in shared memory",
      (stream ? layout.streamBytes : layout.weightBytes) / 1024.0,
      stream ? fmt::format(" a stage of {} input channels", stream) : "");
  if (c.groups > 1)
    s.reason +=
        fmt::format(", each block within one of the {} groups", c.groups);
  if (!phaseBlocks)
    s.reason += ", each block taking its next tile from a counter";
  if (pingPong)
    s.reason += ", its two consumer warpgroups a tile each in turn";
  if (wgmmaConvSharesRows(transposed,
                          transposed ? 1 : static_cast<int>(stride[0]), passes,
                          layout.k16, pingPong,
                          static_cast<int>((w[2].size - 1) * dil[0]), sh * sw))
    s.reason += ", each patch row's fragments loaded once for all row taps";
  // The images: one a part (with phaseBlocks, a part and phase), where a
  // block would gather at least kConvImageMinGather values of w. The
  // cooperative launch cost about 15 us (an H100: 2-3% of the 1 x 1 and
  // Cin 8 and 16 sweep graphs, whose blocks gather 2304 to 4608 values);
  // from 8192 values the copies saved 1-6%, and on L2_19 (36864) 15%
  // (bench/NOTES.md v25).
  // A streamed weight needs them: made at every launch where w may change
  // (not a constant parameter).
  const int64_t gathered = int64_t{layout.taps} * cinG * nb;
  const bool constantW = constantParams && n.operand(1)->isParam();
  const int64_t image =
      stream > 0 || (constantW && gathered >= kConvImageMinGather)
          ? parts * layout.images * static_cast<int64_t>(layout.imageBytes)
          : 0;
  s.set("image", image);
  if (image > 0)
    setSplitW(s, constantW ? kWgmmaSplitFlagged : kWgmmaSplitEachLaunch,
              "the weight's block images", image / 4);
  return s;
}

/// Whether g's epilogue reads a tensor of more than `perChannel` values
/// from outside the group (a residual; a bias-like vector does not count).
static bool epilogueReadsTensor(const FusionGroup &g, int64_t perChannel) {
  llvm::SmallPtrSet<const Value *, 8> made{g.anchor->result()};
  for (const Node *e : g.epilogue)
    made.insert(e->result());
  for (const Node *e : g.epilogue)
    for (const Value *v : e->operands())
      if (!made.count(v) && v->shape().numElements() > perChannel)
        return true;
  return false;
}

llvm::Expected<Schedule> scheduleConvolution(const FusionGroup &g,
                                             const TargetInfo &tg,
                                             MatmulPrecision precision,
                                             bool constantParams) {
  const Node &n = *g.anchor;
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape(),
              &y = n.result()->shape();
  const ConvShape c = convShape(n);
  const int64_t cin = c.cin, h = c.h, wd = c.w, cout = c.cout,
                groups = c.groups, ho = c.ho, wo = c.wo, pixels = c.pixels();
  auto pad = n.getInts("padding"), dil = n.getInts("dilation");
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
  if (std::optional<Schedule> s = wgmmaConvSchedule(
          n, c, tg, precision, constantParams, epilogueReadsTensor(g, cout))) {
    if (g.tail) {
      // The partitioner asked contractionTakesEpilogue, which schedules
      // alike; a tail's values are reduced one at a time (no pairs).
      if (!convTakesChannelTail(*s, c))
        return diag(g.tail->loc(),
                    "internal: the convolution's tiles do not hold every "
                    "channel for the fused {}",
                    opName(g.tail->op()).str());
      s->set("vec", 1);
      s->reason += fmt::format(", {} over the channels in the epilogue",
                               opName(g.tail->op()).str());
    }
    setShortMath(*s, g);
    return std::move(*s);
  }
  if (g.tail)
    return diag(g.tail->loc(),
                "internal: a {} fused into a convolution "
                "that does not run on tensor cores",
                opName(g.tail->op()).str());
  if (std::optional<Schedule> s = depthwiseSchedule(n, c))
    return std::move(*s);
  TileShape t = pickConvTile(pixels, cout / groups);
  llvm::Expected<Schedule> s = tiledSchedule(
      n, GroupKind::Convolution,
      n.op() == OpKind::ConvTranspose2d ? "convTranspose2d" : "conv2d", t,
      convBlocks(pixels, cout / groups, t), groups);
  if (s)
    s->reason = fmt::format("implicit GEMM, FFMA tiles of {}x{}", t.bp, t.bq);
  return s;
}

std::optional<LinearShape> wgmmaMatmulShape(const Node &n) {
  const Shape &b = n.operand(1)->shape();
  const DType t = n.result()->dtype();
  if (n.op() != OpKind::Matmul || b.rank() < 2 ||
      (t != DType::F32 && !isHalf(t)))
    return std::nullopt;
  llvm::Expected<MatmulLayout> l = matmulLayout(n);
  if (!l) {
    llvm::consumeError(l.takeError());
    return std::nullopt;
  }
  // A 2-D B has no batch dims, so the output's are x's, which is
  // contiguous: its batches of rows are one matrix of batches * m rows.
  if (b.rank() == 2)
    return LinearShape{l->batches * l->m, l->k, l->n, t};
  return LinearShape{l->m, l->k, l->n, t, l->batches};
}

LinearShape linearShape(const Node &n) {
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape();
  LinearShape l{1, w[1].size, w[0].size, n.operand(0)->dtype()};
  for (size_t d = 0; d + 1 < x.rank(); ++d)
    l.m *= x[d].size;
  return l;
}

ConvShape convShape(const Node &n) {
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape(),
              &y = n.result()->shape();
  const int64_t groups = n.getInt("groups");
  return {x.rank() == 4 ? x[0].size : 1,
          x[x.rank() - 3].size,
          x[x.rank() - 2].size,
          x[x.rank() - 1].size,
          n.op() == OpKind::ConvTranspose2d ? w[1].size * groups : w[0].size,
          groups,
          y[y.rank() - 2].size,
          y[y.rank() - 1].size};
}

} // namespace kiln
