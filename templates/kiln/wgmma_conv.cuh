//===- wgmma_conv.cuh - convolutions on tensor cores ---------*- CUDA -*-===//
//
// conv2d and conv_transpose2d of any stride and groups, output channels
// a multiple of 8 a group, NCHW tensors; f32 ones in TF32 products (Passes
// 1: Kiln's `high` and `medium`; x and w rounded to nearest, not truncated
// by the tensor cores) or 3xTF32 (Passes 3: `highest`, as wgmma.cuh's
// linear, adding each tap's tensor-core sums into an fp32 total); f16 and
// bf16 ones (TX: x, w and bias of one type) at every precision in products
// of their type (wgmma k16, exact; the weight kept in TX too), or, where
// the patch leaves room for only two stages beside its transposed copy
// (WgmmaConvLayout::k16 false: conv2d's stride 2), in TF32 products, exact
// for their values, the weight in f32; the patch in TX either way (half
// the shared memory and copies), the sums in f32:
//   wgmmaConv<Conv2dParams<...> or ConvTranspose2dParams<...>, HasBias,
//             Passes, NB, PhaseBlocks, Vec, Image, PingPong, Stream, Epi,
//             TX>(x, w, bias, epilogue [, image, launches, imageFlag
//             [, tickets]])
// (Epi and TX deduced from the arguments.)
// epilogue(i, v, live) takes y's elements i.. i + Vec - 1 (NCHW index) in
// v (Vec 2: adjacent columns, below); live is false for a tile's pixels
// past y's edges, for which i is 0 and it must store nothing. It runs for
// them too so that no branch guards its loads (a residual input's), which
// the compiler then issues many at a time (with a branch, one at a time,
// each waited for: 2x as long at 130 x 130, bench/NOTES.md v38).
// With Image, each block copies its part of the weight from `image` (parts
// x (PhaseBlocks: phases) of WgmmaConvLayout::imageBytes, as shared
// memory keeps it), which the grid first writes where *imageFlag is set
// (the parameters changed; block 0 clears it; streamed, a null imageFlag:
// at every launch) and then waits at gridSync(launches): a cooperative
// launch.
// Without it, each block gathers and rounds its part from w itself.
// tickets: 2 x parts counters, zero before the first launch (each launch
// leaves them zero), from which the blocks take their items one at a time.
//
// y[n][co][oh][ow] = bias[co] + sum over ci, kh, kw of x[n][ci][ih][iw] *
// w(ci, co, kh, kw), x outside its image reading 0, where conv2d has ih =
// oh SH + kh DH - PH and w[co][ci][kh][kw], conv_transpose2d oh = ih SH -
// PH + kh DH and w[ci][co][kh][kw] (likewise iw). ConvStore{y} stores it.
//
// An implicit GEMM read and written in NCHW: M = a tile's 16 x 16 output
// pixels of one image, N = NB output channels (Cout / NB parts, each on
// blocks of its own, and within one of the convolution's groups), K =
// (tap, input channel of that group). conv2d's stride spaces a
// tile's patch rows and columns (a tap's fragments read every SH-th row
// and SW-th column of the patch: 2-way bank conflicts at stride 2, and a
// patch about SH SW times the stride-1 one's, so 2 stages and narrower
// parts where they would not fit). conv_transpose2d of stride
// s computes each output phase (the rows s j + r, likewise columns) apart:
// tap kh feeds phase r only where r + PH - kh DH is a multiple of s, then
// from input row j + (r + PH - kh DH) / s, so a phase is a stride-1
// correlation over its taps and no zero is multiplied (convTapInPhase,
// convTapShift; tiling.cuh). Each block keeps its part of the weight in
// shared memory, K-major and 128-byte swizzled (slices of NB x 32 floats),
// which wgmma reads as its B operand. Warpgroup 0 (the producer) copies
// each tile's input patch, 16 channels at a time (zeros past Cin), into a
// ring of 3 stages with 16-byte cp.async (8 or 4 bytes where W does not
// allow 16; halves of odd W one value at a time through registers; zeros
// outside the image; 2 stages where 3 do not fit); warpgroups 1 and 2 (the
// consumers) each multiply 8 rows of the tile: their A operand comes from
// registers (wgmma's RS form), each thread loading its fragments from the
// patch with one shared-memory load per value (channel planes apart so
// that a warp's loads meet no bank conflict: WgmmaConvLayout; a warp's m64
// blocks are neighbouring rows, so that at input row stride 1 the row taps
// of a column tap share their fragments, each patch row loaded once a step:
// shared memory bounds these kernels, and that halves L2_19's loads); k16
// halves instead have the producer transpose each stage once it has landed
// (8 x 8 blocks: ldmatrix.trans, stmatrix; a pixel's 8 channels in 16
// bytes) and load a block's fragments with one ldmatrix (shared by the row
// taps too in ping-pong conv2d). A tap's fragments are the patch shifted
// by its offsets, so no im2col copy exists.
// Persistent: the blocks of each part take its work items (tile, group of
// phases), the groups of a tile consecutive (their stores interleave in
// L2), one at a time from tickets (the grid then works on neighbouring
// items at one time, however fast each block runs), or without tickets
// block b items b / parts, + gridDim.x / parts, .... A group is one phase,
// or at TF32 and column stride 2 both column phases of a row phase, in
// TF32's two accumulator buffers: a thread then holds adjacent output
// columns and stores them as pairs (Vec 2, even Wo).
// PhaseBlocks instead gives each block one phase and only that phase's taps of
// the weight (the scheduler's choice where all taps would leave narrow parts;
// its items are dealt out, tickets unused).
// Stream (with Image: the input channels a stage, 16 or 8; halves in k16
// products, 16) keeps no weight in shared memory: each stage of the ring
// holds its channels' weight for every tap beside the patch
// (WgmmaConvLayout::stream: rows of 64 or 32 bytes, swizzled so; halves'
// of 32), which the producer's thread 0
// copies from the part's image in
// one bulk copy completing on the stage's barrier; wgmma reads it after
// the fragments' loads, so the consumers release a stage only once their
// products of the next have waited out its last (a weight of 1 MiB, 3 x 3
// from 512 channels in parts of 128, would otherwise take parts of 8:
// 6.7x as long, bench/NOTES.md v39).
// A strided conv_transpose2d whose items take both column phases of a
// row phase streams only that row phase's taps (WgmmaConvLayout::
// rowImages: an image for each part and row phase, the producer copying
// from the item's).
// PingPong (TF32, one accumulator buffer, up to 64 channels) gives each
// consumer every other item whole (4 m64 blocks), in turn: one's stores
// overlap the other's products (the scheduler's choice where the products
// outlast a tile's stores).
//
// Requires (the scheduler checks, the template asserts): a group's
// output channels CoutG % NB == 0 with NB 8, 16, 32, 64 or 128 (3xTF32: 32
// at most; 128 not with both column phases of a tile, whose two
// accumulator buffers would not fit the registers), 16-byte aligned x, the
// weight part and the ring within shared memory
// (WgmmaConvLayout::sharedBytes()). H200, L2_19's [128, 64,
// 256, 256] conv_transpose2d (ping-pong): 2.8-2.9 ms, about 220 TFLOP/s
// (cuDNN's TF32 kernel on NHWC: 2.5 ms; PyTorch's NCHW call: 6.7 ms on an
// H100); in f16, k16: 2.0 ms.
//
// Launch: block 384 (kWgmmaThreads), grid up to wgmmaConvItems(...) x
// parts (one block per SM, a multiple of the parts), dynamic shared memory
// WgmmaConvLayout::sharedBytes(), __launch_bounds__(384, 1). Compiles to a
// trap off sm_90a (the scheduler never picks it there).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WGMMA_CONV_CUH
#define KILN_WGMMA_CONV_CUH

#include "kiln/conv.cuh"
#include "kiln/reduce.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {

/// The epilogue of a convolution whose output channels are reduced (Op) in
/// it: epi(i, v) runs the elementwise nodes on y's element i (NCHW index),
/// stores what the group returns and leaves the reduction's operand in
/// v[0]; done(k, r) gets pixel k's result (y's index without the channel)
/// and runs the nodes after the reduction.
template <ReduceOp Op, class Epi, class Done> struct ConvTail {
  static constexpr ReduceOp kOp = Op;
  Epi epi;
  Done done;
};
template <class E> struct ConvTailOf { static constexpr bool kTail = false; };
template <ReduceOp Op, class Epi, class Done>
struct ConvTailOf<ConvTail<Op, Epi, Done>> {
  static constexpr bool kTail = true;
};

#ifdef KILN_HAS_WGMMA
namespace wg {

/// Op over a pixel's N values, N / 4 in each lane of its quad (lanes 4 q to
/// 4 q + 3); every lane of the quad gets the result, as reduce.cuh's
/// reduceOne gives it: min and max propagate NaN, sums in double, and
/// logsumexp shifts by the max unless that is infinite. Every lane of the
/// warp must call it (shuffles).
template <ReduceOp Op, int N>
__device__ __forceinline__ float quadReduce(const float (&v)[N / 4]) {
  if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
    ReduceAcc<Op> a;
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      a.add(v[i]);
    a.merge(4);
    return a.v;
  } else if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Mean) {
    SumAcc a;
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      a.add(v[i]);
    a.merge(4);
    return Op == ReduceOp::Sum ? static_cast<float>(a.v)
                               : static_cast<float>(a.v / N);
  } else {
    ReduceAcc<ReduceOp::Max> mx;
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      mx.add(v[i]);
    mx.merge(4);
    const float shift = isinf(mx.v) ? 0.0f : mx.v;
    SumAcc sum;
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      sum.v += expf(v[i] - shift);
    sum.merge(4); // (NaN max: every lane of the quad takes it, below)
    const float r = logf(static_cast<float>(sum.v)) + shift;
    return mx.v != mx.v ? mx.v : r;
  }
}

#define KILN_CONV_D4 "%0, %1, %2, %3"
#define KILN_CONV_D8 KILN_CONV_D4 ", %4, %5, %6, %7"
#define KILN_CONV_D16 KILN_CONV_D8 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define KILN_CONV_D32                                                          \
  KILN_CONV_D16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "    \
                "%27, %28, %29, %30, %31"
#define KILN_CONV_OUT4(d, o)                                                   \
  "+f"(d[o + 0]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3])
#define KILN_CONV_OUT8(d) KILN_CONV_OUT4(d, 0), KILN_CONV_OUT4(d, 4)
#define KILN_CONV_OUT16(d)                                                     \
  KILN_CONV_OUT8(d), KILN_CONV_OUT4(d, 8), KILN_CONV_OUT4(d, 12)
#define KILN_CONV_OUT32(d)                                                     \
  KILN_CONV_OUT16(d), KILN_CONV_OUT4(d, 16), KILN_CONV_OUT4(d, 20),            \
      KILN_CONV_OUT4(d, 24), KILN_CONV_OUT4(d, 28)

/// One m64nNk8 product of TF32 (N: its n, a string), A from registers
/// (operands %A to %A + 3), B from shared memory (%D); the products are
/// added to the accumulators where operand %P is nonzero, else replace them.
/// The accumulators' operands last (they hold commas).
#define KILN_CONV_RS_TF32(N, ACC, A, D, P, ...)                                \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" P ", 0;\n"                 \
               "wgmma.mma_async.sync.aligned.m64n" N "k8.f32.tf32.tf32 "       \
               "{" ACC "}, {%" A "}, %" D ", p, 1, 1;\n}\n"                    \
               : __VA_ARGS__                                                   \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB),       \
                 "r"(accumulate))

/// d (+)= A * B in TF32 with the accumulators' width (n128, n64, n32, n16
/// or n8): A from registers (wgmmaTf32RsN128's layout), B from shared
/// memory; d = A * B where accumulate is 0.
template <int NB>
__device__ __forceinline__ void convMma(float (&d)[NB / 2],
                                        const unsigned (&a)[4], u64 descB,
                                        int accumulate = 1) {
  if constexpr (NB == 128)
    wgmmaTf32RsN128(d, a, descB, accumulate);
  else if constexpr (NB == 64)
    KILN_CONV_RS_TF32("64", KILN_CONV_D32, "32, %33, %34, %35", "36", "37",
                      KILN_CONV_OUT32(d));
  else if constexpr (NB == 32)
    KILN_CONV_RS_TF32("32", KILN_CONV_D16, "16, %17, %18, %19", "20", "21",
                      KILN_CONV_OUT16(d));
  else if constexpr (NB == 16)
    KILN_CONV_RS_TF32("16", KILN_CONV_D8, "8, %9, %10, %11", "12", "13",
                      KILN_CONV_OUT8(d));
  else
    KILN_CONV_RS_TF32("8", KILN_CONV_D4, "4, %5, %6, %7", "8", "9",
                      KILN_CONV_OUT4(d, 0));
}

/// One m64nNk16 product of f16 or bf16 (SHAPE names both), A from registers
/// (operands %A to %A + 3), B K-major from shared memory (%D), no
/// transpose; the accumulators' operands last (they hold commas).
#define KILN_CONV_RS16(SHAPE, ACC, A, D, ...)                                  \
  asm volatile("wgmma.mma_async.sync.aligned." SHAPE " {" ACC "}, {%" A        \
               "}, %" D ", 1, 1, 1, 0;\n"                                      \
               : __VA_ARGS__                                                   \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB))

/// d (+)= A * B, m64nNBk16 in f16 or bf16 (Kind): A from registers (a0..a3
/// of this thread: rows g and g + 8 of its warp's 16, K 2t, 2t + 1 and
/// those + 8, two values a register, g = lane / 4, t = lane % 4), B from
/// shared memory.
template <WgmmaKind Kind, int NB>
__device__ __forceinline__ void convMma16(float (&d)[NB / 2],
                                          const unsigned (&a)[4], u64 descB) {
  static_assert(Kind == kWgmmaBf16 || Kind == kWgmmaF16, "16-bit operands");
  // The bf16 or f16 form of one shape (N: its n, a string).
#define KILN_CONV_RS16_KIND(N, ACC, A, D, ...)                                 \
  if constexpr (Kind == kWgmmaBf16)                                            \
    KILN_CONV_RS16("m64n" N "k16.f32.bf16.bf16", ACC, A, D, __VA_ARGS__);      \
  else                                                                         \
    KILN_CONV_RS16("m64n" N "k16.f32.f16.f16", ACC, A, D, __VA_ARGS__)
  if constexpr (NB == 128) {
    KILN_CONV_RS16_KIND("128", KILN_WGMMA_D64, "64, %65, %66, %67", "68",
                        KILN_WGMMA_OUT64(d, 0));
  } else if constexpr (NB == 64) {
    KILN_CONV_RS16_KIND("64", KILN_CONV_D32, "32, %33, %34, %35", "36",
                        KILN_CONV_OUT32(d));
  } else if constexpr (NB == 32) {
    KILN_CONV_RS16_KIND("32", KILN_CONV_D16, "16, %17, %18, %19", "20",
                        KILN_CONV_OUT16(d));
  } else if constexpr (NB == 16) {
    KILN_CONV_RS16_KIND("16", KILN_CONV_D8, "8, %9, %10, %11", "12",
                        KILN_CONV_OUT8(d));
  } else {
    KILN_CONV_RS16_KIND("8", KILN_CONV_D4, "4, %5, %6, %7", "8",
                        KILN_CONV_OUT4(d, 0));
  }
#undef KILN_CONV_RS16_KIND
}

/// Four 8 x 8 blocks of 16-bit values from shared memory: lanes 8 j to 8 j
/// + 7 give the addresses of block j's 8 rows (16 bytes each); lane l gets
/// row l / 4, columns 2 (l % 4) and + 1 of block j in r[j] (Trans: of the
/// block transposed).
template <bool Trans>
__device__ __forceinline__ void loadMatrices(unsigned (&r)[4], unsigned addr) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                 "{%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/// The inverse of loadMatrices<false>: r[j] into block j's rows at the
/// addresses lanes 8 j to 8 j + 7 give.
__device__ __forceinline__ void storeMatrices(unsigned addr,
                                              const unsigned (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 "
               "[%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

/// Arrives on b once this thread's cp.async copies so far have landed (the
/// barrier counts the arrival among those it expects).
__device__ __forceinline__ void arriveOnCopies(u64 *b) {
  asm volatile(
      "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem(b))
      : "memory");
}

/// barrierArrive(b) where `arrive`, without a branch.
__device__ __forceinline__ void barrierArriveIf(u64 *b, bool arrive) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n"
      "@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(smem(b)),
      "r"(static_cast<int>(arrive))
      : "memory");
}

/// Adds `bytes` to what phase of b in progress waits for (bulk copies
/// completing on it).
__device__ __forceinline__ void expectBytes(u64 *b, unsigned bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem(b)),
      "r"(bytes)
      : "memory");
}

/// `bytes` (a multiple of 16) from global src to shared dst in one bulk
/// copy (the async proxy), which completes them on barrier b.
__device__ __forceinline__ void bulkCopy(unsigned dst, const void *src,
                                         unsigned bytes, u64 *b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(smem(b))
               : "memory");
}

} // namespace wg
#endif

/// Stores a convolution's output values (wgmmaConv's default epilogue).
struct ConvStore {
  float *y;
  template <int V>
  __device__ __forceinline__ void operator()(i64 i, float (&v)[V],
                                             bool live = true) const {
    if (live)
#pragma unroll
      for (int e = 0; e < V; ++e)
        y[i + e] = v[e];
  }
};

template <class G, bool HasBias, int Passes = 1,
          int NB = wgmmaConvChannels(
              G::CoutG, Passes, Passes == 1 && G::kTransposed && G::SW == 2),
          bool PhaseBlocks = false, int Vec = 1, bool Image = false,
          bool PingPong = false, int Stream = 0, class Epi = ConvStore,
          class TX = float>
__device__ __forceinline__ void
wgmmaConv(const TX *__restrict__ x, const TX *__restrict__ w,
          const typename SameType<TX>::type *__restrict__ bias, Epi epi,
          float *image = nullptr, unsigned long long *launches = nullptr,
          unsigned *imageFlag = nullptr, unsigned *tickets = nullptr) {
  static_assert(G::CoutG % NB == 0 && NB % 8 == 0 && NB <= 128 &&
                    (NB <= 64 || NB == 128) && (Passes == 1 || NB <= 32),
                "the output channels in parts of 8 to 128 (3xTF32: 32)");
  static_assert(Passes == 1 || Passes == 3, "TF32 or 3xTF32");
  // f16 and bf16 tensors: the patch kept in their type, each value exact in
  // TF32 (so one pass, and no rounding).
  static_assert(sizeof(TX) == 4 || sizeof(TX) == 2, "f32, f16 or bf16");
  constexpr bool Half = sizeof(TX) == 2;
  static_assert(!Half || Passes == 1, "f16 and bf16 products are exact");
  constexpr bool Tr = G::kTransposed;
  constexpr WgmmaConvLayout L(Tr, G::KH, G::KW, G::SH, G::SW, G::PH, G::PW,
                              G::DH, G::DW, G::CinG, NB, Passes, PhaseBlocks,
                              sizeof(TX), true, Stream);
  static_assert(!Stream || (Image && (!L.k16 || Stream == 16)),
                "the weight streamed: from the images; in k16 products, "
                "stages of 16 channels");
  static_assert(L.sharedBytes() <= kWgmmaConvSharedLimit, "fits shared memory");
#ifdef KILN_HAS_WGMMA
  using namespace wg;
  // The convolution's groups: a block's part of the output channels lies in
  // one, whose Cin = CinG input channels (from x's channel channelGroup *
  // CinG) it reduces.
  constexpr int Cin = G::CinG, H = G::H, W = G::W, Ho = G::Ho, Wo = G::Wo;
  constexpr int Cout = G::Cout, CoutG = G::CoutG, Parts = Cout / NB;
  constexpr int SliceBytes = NB * 128; // NB channels x 32 of K
  constexpr int KT = G::KHW, T = kWgmmaConvTile;
  constexpr int CC = L.channels, S = L.stages;
  // Streamed: a tap's weight rows in a stage (its CC channels' bytes).
  constexpr int RowB = L.streamRowBytes();
  constexpr int Chunks = (Cin + CC - 1) / CC; // stages a tile (zeros past Cin)
  // Weight slices a tap: 128 bytes of input channels each (32 f32, 64
  // halves).
  constexpr bool K16 = L.k16; // halves' own products (else TF32's)
  constexpr int PerSlice = K16 ? 64 : 32, SPT = (Cin + PerSlice - 1) / PerSlice;
  // Output phases: conv_transpose2d's stride s computes the rows o = s j +
  // r of each phase r apart (only the taps that feed them: no zeros).
  constexpr int SH = Tr ? G::SH : 1, SW = Tr ? G::SW : 1, Phases = SH * SW;
  // conv2d's stride: output pixel (j, i) of a tap reads input (IH j + dy,
  // IW i + dx).
  constexpr int IH = Tr ? 1 : G::SH, IW = Tr ? 1 : G::SW;
  // A phase's taps (at least 1: a phase of none still takes its share).
  constexpr auto phaseWeight = [](int r) {
    const int n = convPhaseTaps(Tr, G::KH, SH, G::PH, G::DH, r / SW) *
                  convPhaseTaps(Tr, G::KW, SW, G::PW, G::DW, r % SW);
    return n > 0 ? n : 1;
  };
  constexpr int tilesR = ((Ho + SH - 1) / SH + T - 1) / T;
  constexpr int tilesC = ((Wo + SW - 1) / SW + T - 1) / T;
  constexpr int tiles = static_cast<int>(wgmmaConvItems(G::N, Ho, Wo, SH, SW) /
                                         Phases); // < 2^31: checked
  // This block's part of the output channels. Its work items: without
  // PhaseBlocks, (tile, phase) pairs k = first, first + stride, ... (tile k
  // / Phases, phase k % Phases: a tile's phases on neighbouring blocks, so
  // their interleaved stores meet in L2); with them, the tiles of one phase
  // (k = tile), each phase on a share of the blocks: one of each part, and
  // the rest in proportion to its taps (a phase of none still writes the
  // bias), so that a block keeps its phase's taps of the weight alone.
  const int part = blockIdx.x % Parts, rank = blockIdx.x / Parts;
  const int channelGroup = part * NB / CoutG; // conv groups (not phases')
  int phase = 0, first = rank, stride = gridDim.x / Parts;
  // TF32 at column stride 2 (without PhaseBlocks): an item takes both
  // column phases of a row phase, each in its own accumulators (TF32's
  // second buffer), so the patch is read once for both and a thread holds
  // adjacent output columns: with Vec 2 (even Wo) it stores them as pairs.
  constexpr int CP = Passes == 1 && SW == 2 && !PhaseBlocks ? 2 : 1;
  static_assert(Vec == 1 || (Vec == 2 && (CP == 2 || SW == 1) && Wo % 2 == 0),
                "pairs of columns: both column phases or column stride 1, "
                "even rows");
  static_assert(NB <= 64 || CP == 1,
                "128 channels take one accumulator buffer's registers");
  // PingPong: each consumer warpgroup takes every other item of the block
  // whole (4 m64 blocks: 16 rows), so that one's stores overlap the other's
  // products; TF32 with one accumulator buffer of up to 64 channels.
  static_assert(!PingPong || (Passes == 1 && CP == 1 && NB <= 64),
                "ping-pong: TF32, one buffer, 64 channels at most");
  constexpr int MB = PingPong ? 4 : 2; // m64 blocks a consumer
  constexpr int Groups = Phases / CP;  // an item's phases: one, or a row's
  constexpr int items = PhaseBlocks ? tiles : tiles * Groups;
  if constexpr (PhaseBlocks) {
    const int spare = stride - Phases; // >= 0: the scheduler's
    constexpr int weights = [] {
      int w = 0;
      for (int r = 0; r < Phases; ++r)
        w += phaseWeight(r);
      return w;
    }();
    int before = 0;
    for (int r = 0; r < Phases; ++r) {
      const int start = r + spare * before / weights;
      const int end = r + 1 + spare * (before + phaseWeight(r)) / weights;
      if (rank >= start && rank < end)
        phase = r, first = rank - start, stride = end - start;
      before += phaseWeight(r);
    }
  }
  const int rh = phase / SW, rw = phase % SW; // PhaseBlocks' phase
  // At input row stride 1 the row taps of a column tap share fragments
  // (below). TF32 keeps two steps' rows in flight: its consumers take 216
  // registers and the producer 72 (128 x 72 + 256 x 216 = 384 x 168). k16, in
  // ping-pong conv2d only, two halves' (by m64 block): 208 and 80 (its
  // producer's transposes spilled at 72); its conv_transpose2d (L2_19) ran
  // 12-18% slower so, for reasons not found (bench/NOTES.md v29). conv2d's
  // stride 2 (9 rows for 12 products) would serialise TF32's wgmmas.
  // 3xTF32 shares rows too (one output phase, 3 row taps at most), with
  // three accumulator sets: its consumers take 224 and the producer 56.
  constexpr bool RowReuse = wgmmaConvSharesRows(Tr, IH, Passes, K16, PingPong,
                                                (G::KH - 1) * G::DH, Phases);
  // Whether a block keeps tap t of the weight (in shared memory or a
  // stage): with PhaseBlocks only its phase's (row phase ch, column phase
  // cw), streamed from row images its item's row phase's, else all; and
  // tap t's place among those kept.
  constexpr bool RowImages = L.rowImages;
  constexpr auto tapKept = [](int t, int ch, int cw) {
    return (!PhaseBlocks && !RowImages) ||
           (convTapInPhase(Tr, t / G::KW, SH, G::PH, G::DH, ch) &&
            (!PhaseBlocks ||
             convTapInPhase(Tr, t % G::KW, SW, G::PW, G::DW, cw)));
  };
  constexpr auto keptTap = [](int t, int ch, int cw) {
    int o = 0;
#pragma unroll
    for (int t0 = 0; t0 < KT; ++t0) // (KT: unrolled whole, then folded)
      o += t0 < t && tapKept(t0, ch, cw) ? 1 : 0;
    return o;
  };
  // Registers a thread (3 x 168 in all, setmaxnreg's multiples of 8):
  // 3xTF32 sharing rows holds three accumulator sets and total, so its
  // consumers take 224 (at 216 ptxas serialised the wgmmas, C7512: 1.5x as
  // slow at 8 and 16 input channels, bench/NOTES.md v51).
  constexpr int ProducerRegs = !RowReuse     ? 96
                               : K16         ? 80
                               : Passes == 3 ? 56
                                             : 72;
  constexpr int ConsumerRegs = !RowReuse     ? 200
                               : K16         ? 208
                               : Passes == 3 ? 224
                                             : 216;
  extern __shared__ unsigned char wgmmaShared[];
  __shared__ u64 full[S], empty[S];
  // The block's items in the order it takes them: item i's index (or an
  // end: below) in slot i % Slots once itemFull[i % Slots] completes. The
  // producer's thread 0 can be at most S stages, so S items, ahead of the
  // slowest reader of a slot, and writes two ends past its last item:
  // S + 3 slots are never overwritten unread.
  constexpr int Slots = S + 3;
  __shared__ int itemOf[Slots];
  __shared__ u64 itemFull[Slots];
  unsigned char *base = alignedShared(wgmmaShared);
  TX *patch = reinterpret_cast<TX *>(base + L.weightBytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      // The producer's threads (once their copies land: arriveOnCopies);
      // every consumer thread (an arrival releases its own reads).
      barrierInit(&full[s], 128);
      barrierInit(&empty[s], PingPong ? 128 : 256);
    }
    for (int s = 0; s < Slots; ++s)
      barrierInit(&itemFull[s], 1); // the producer's thread 0
  }
  // The weight of a block (part's NB output channels, phase (rh, rw)'s
  // taps) as its shared memory keeps it, written into dst by threads first,
  // first + step, ...: the phase's o-th tap in slices o * SPT + ci / 32, row
  // r (channel part * NB + r), ci % 32 in the row's 16-byte chunks swizzled
  // by r % 8 (as the wgmma descriptor expects), zeros for the channels past
  // Cin of the last stage; 3xTF32: its TF32 big parts, then the small ones
  // (v - big, rounded) in as many slices after them.
  constexpr int CinP = Chunks * CC, Kept = L.taps;
  auto fill = [&](unsigned char *dst, int ofPart, int rowPhase, int colPhase,
                  i64 first, i64 step) {
    for (int t = 0, o = 0; t < KT; ++t) {
      if (!tapKept(t, rowPhase, colPhase))
        continue;
      for (i64 i = first; i < NB * CinP; i += step) {
        const int ci = static_cast<int>(i % CinP);
        const int r = static_cast<int>(i / CinP), co = ofPart * NB + r;
        // w: conv2d [Cout][CinG][KH][KW], conv_transpose2d [Cin][CoutG][KH]
        // [KW] (input channel group * CinG + ci, output co % CoutG).
        const TX v =
            ci >= Cin ? TX{}
            : Tr ? w[((co / CoutG * Cin + ci) * CoutG + co % CoutG) * KT + t]
                 : w[(co * Cin + ci) * KT + t];
        // Channel cs of the slice in 16-byte chunks of e values. Streamed:
        // stage ci / CC's tap o, rows of RowB bytes (64- or 32-byte
        // swizzle), small parts Kept * NB rows on.
        const int cs = ci % PerSlice, e = K16 ? 8 : 4;
        const unsigned off =
            Stream ? ci / CC * L.streamBytes + (o * NB + r) * RowB +
                         (swizzledChunk<RowB>(ci % CC / e, r) << 4) +
                         ci % e * (16 / e)
                   : (o * SPT + ci / PerSlice) * SliceBytes + r * 128 +
                         (swizzledChunk<128>(cs / e, r) << 4) +
                         (cs % e) * (16 / e);
        constexpr int SmallAt =
            Stream ? Kept * NB * RowB : Kept * SPT * SliceBytes;
        if constexpr (K16) {
          *reinterpret_cast<TX *>(dst + off) = v; // exact: no rounding
        } else if constexpr (Passes == 3) {
          float big, small;
          splitOne(v, big, small);
          *reinterpret_cast<float *>(dst + off) = big;
          *reinterpret_cast<float *>(dst + SmallAt + off) = small;
        } else {
          *reinterpret_cast<float *>(dst + off) = roundTf32(toFloat(v));
        }
      }
      ++o;
    }
  };
  if constexpr (Image) {
    // The weight transformed once (when the parameters change: imageFlag),
    // every block's image in global memory, parts x L.images (PhaseBlocks:
    // phases; row images: row phases) of L.imageBytes, the grid's threads
    // sharing each; then each block copies its own, 16 bytes a copy.
    constexpr int Images = L.images;
    // (Streamed without a flag: made at every launch, the parameters not
    // known to stay.)
    if ((Stream && imageFlag == nullptr) || *imageFlag != 0) {
      const i64 thread =
          static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
      for (int m = 0; m < Parts * Images; ++m)
        fill(reinterpret_cast<unsigned char *>(image) +
                 static_cast<i64>(m) * L.imageBytes,
             m / Images, PhaseBlocks ? m % Images / SW : m % Images,
             PhaseBlocks ? m % Images % SW : 0, thread,
             static_cast<i64>(gridDim.x) * blockDim.x);
      // Streamed, the images are read by bulk copies (the async proxy).
      if constexpr (Stream)
        asm volatile("fence.proxy.async.global;" ::: "memory");
      // Every thread has read the flag before its block arrives here, so
      // block 0 may clear it once past.
      gridSync(launches);
      if (blockIdx.x == 0 && threadIdx.x == 0 && (!Stream || imageFlag))
        *imageFlag = 0;
    }
    const unsigned char *src =
        reinterpret_cast<const unsigned char *>(image) +
        static_cast<i64>(part * Images + (PhaseBlocks ? phase : 0)) *
            L.imageBytes;
    for (int i = threadIdx.x; i < L.weightBytes / 16; i += blockDim.x)
      copy16(smem(base) + 16 * i, src + 16 * i, true);
    copyCommit();
    copyWait<0>();
  } else {
    fill(base, part, rh, rw, threadIdx.x, blockDim.x);
  }
  // The bias of this thread's channels, kept in registers up to 64 channels
  // (128 and ping-pong: read in the epilogue, beside the accumulators; kept,
  // ping-pong spilled, and L2_19's ran 35% slower without spilling:
  // bench/NOTES.md v26), else in shared memory: read from global memory in
  // the epilogue, each load waited behind the other consumer's stores
  // (bench/NOTES.md v30). Nor with both column phases of a tile in 64
  // channels (two accumulator buffers of 64): ptxas spilled the bias there
  // (56-108 bytes), and an H200 ran such conv_transpose2d's 3-10% faster
  // with it in shared memory (bench/NOTES.md v46).
  constexpr bool BiasKept = NB <= 64 && !PingPong && !(CP == 2 && NB == 64);
  // Where y's rows are not whole 32-byte sectors and not even (odd Wo: even
  // ones take Vec 2's pairs, 16 columns a store too), the epilogue's stores
  // run 16 columns long (see its PairStores branch): runs of 8 split every
  // sector between two stores, and with a second output or a residual read
  // such kernels ran 2.4x as long as their aligned twins (bench/NOTES.md
  // v37). Aligned rows keep runs of 8: the shuffle cost silu's epilogues
  // 1.5-4.5% there.
  constexpr bool PairStores = Vec == 1 && CP == 1 && SW == 1 && Wo % 8 != 0;
  __shared__ float biasShared[HasBias && !BiasKept ? NB : 1];
  static_assert(sizeof(full) + sizeof(empty) + sizeof(itemOf) +
                        sizeof(itemFull) + sizeof(biasShared) <=
                    kWgmmaConvStaticShared,
                "the static shared memory within its reserve");
  if constexpr (HasBias && !BiasKept)
    for (int i = threadIdx.x; i < NB; i += blockDim.x)
      biasShared[i] = toFloat(bias[part * NB + i]);
  fenceAsyncProxy();
  __syncthreads();
  const int role = threadIdx.x / 128;
  if (role == 0) {
    // The producer: each tile's patch (the same for every phase), 16
    // channels a stage, whole chunks of CW columns a copy (16 bytes where W
    // is a multiple of 16 bytes' worth, else 8 or 4 bytes: x's rows are as
    // aligned as W makes them, and the patch starts at a multiple of 16
    // bytes' worth, or of 8 where the layout takes 8-byte copies to fit:
    // L.chunk; halves of odd W one at a time through registers), zeros
    // outside the image and past Cin.
    // (The producer spilled on 72 with 3xTF32's code; 96 + 200 fits the
    // SM's registers: 128 x 96 + 256 x 200 < 64 Ki.)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(ProducerRegs));
    const int p = threadIdx.x;
    constexpr int E = sizeof(TX);
    constexpr int CW = W % (16 / E) == 0 && L.chunk * E >= 16 ? 16 / E
                       : W % (8 / E) == 0 && L.chunk * E >= 8 ? 8 / E
                       : W % (4 / E) == 0                     ? 4 / E
                                                              : 1;
    constexpr bool Copies = CW * E >= 4; // cp.async takes 4 bytes or more
    constexpr int chunksW = L.rowW / CW;
    // Halves: stage j's channel planes transposed once its copies have
    // landed (every producer thread's: named barrier 5), 8 x 8 blocks at a
    // time (ldmatrix.trans from 8 planes, stmatrix as 8 pixels' rows), so
    // that one ldmatrix reads a tap's A fragments; then the stage is full.
    auto transposeStage = [&](int j) {
      asm volatile("bar.sync 5, 128;" ::: "memory");
      const int lane = p % 32;
      const unsigned planes = smem(patch) + j % S * L.stageBytes();
      const unsigned rows = planes + L.transposedOffset();
      constexpr int Groups8 = L.pixels / 8, Blocks = CC / 8 * Groups8;
      // A warp's turn: 4 x 4 blocks (4 loads in flight, then their
      // stores); the warps' turns 64 blocks apart.
      for (int b0 = p / 32 * 16; b0 < Blocks; b0 += 64) {
        unsigned r[4][4];
        int at[4];
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          // Block b0 + 4 v + lane / 8 (the last again past the end), its
          // row lane % 8: channel 8 cg + lane % 8 of pixels 8 pg on.
          const int blk = min(b0 + 4 * v + lane / 8, Blocks - 1);
          const int cg = blk / Groups8, pg = blk % Groups8;
          at[v] = cg * L.pixels + 8 * pg + lane % 8;
          if (b0 + 4 * v < Blocks)
            loadMatrices<true>(
                r[v], planes + ((8 * cg + lane % 8) * L.plane + 8 * pg) * 2);
        }
#pragma unroll
        for (int v = 0; v < 4; ++v)
          if (b0 + 4 * v < Blocks)
            storeMatrices(rows + at[v] * 16, r[v]);
      }
      barrierArrive(&full[j % S]); // releases the stores
    };
    // Thread 0 takes the block's items: with tickets, the next of its
    // part's counter (tickets[2 part]; the grid's blocks then work on
    // neighbouring tiles, whose patches overlap and whose stores share
    // sectors, at one time: with items dealt out in advance the blocks
    // drifted apart on an H100, and L2_19's convolution read 1.5x its input
    // from DRAM); else first, first + stride, ... After its last, an end
    // (-1) for the consumers, and with PingPong a second (-2) for the
    // consumer whose turn follows. Each block takes exactly one ticket past
    // the items; the last to do so (tickets[2 part + 1] counts them) resets
    // both counters for the next launch.
    const bool dealt = PhaseBlocks || !tickets; // by phase: dealt out
    unsigned ticket = 0;
    if (!dealt && p == 0)
      ticket = atomicAdd(&tickets[2 * part], 1u);
    auto publish = [&](int i, int k) {
      itemOf[i % Slots] = k;
      barrierArrive(&itemFull[i % Slots]);
    };
    int it = 0;
    for (int i = 0;; ++i) {
      if (p == 0) {
        int k = -1;
        if (dealt) {
          k = first + i * stride < items ? first + i * stride : -1;
        } else if (ticket < static_cast<unsigned>(items)) {
          k = static_cast<int>(ticket);
          ticket = atomicAdd(&tickets[2 * part], 1u); // the next, in flight
        } else if (atomicAdd(&tickets[2 * part + 1], 1u) ==
                   gridDim.x / Parts - 1) {
          atomicExch(&tickets[2 * part], 0u);
          atomicExch(&tickets[2 * part + 1], 0u);
        }
        publish(i, k);
        if (k < 0 && PingPong)
          publish(i + 1, -2);
      }
      barrierWait(&itemFull[i % Slots], (i / Slots) & 1);
      const int k = itemOf[i % Slots];
      if (k < 0)
        break;
      const int tile = PhaseBlocks ? k : k / Groups;
      const int n = tile / (tilesR * tilesC);
      const int ih0 = IH * (tile / tilesC % tilesR * T) + L.dyMin;
      const int iw0 = IW * (tile % tilesC * T) + L.left;
      for (int chunk = 0; chunk < Chunks; ++chunk, ++it) {
        const int s = it % S;
        if (it >= S)
          barrierWait(&empty[s], (it / S - 1) & 1);
        const unsigned dst = smem(patch) + s * L.stageBytes();
        // Streamed: the stage's weight in one bulk copy from the part's
        // image, its bytes expected before thread 0's own arrival.
        if (Stream && p == 0) {
          const int im = part * L.images + (PhaseBlocks ? phase
                                            : RowImages ? k % Groups
                                                        : 0);
          expectBytes(&full[s], L.streamBytes);
          bulkCopy(dst + L.stageWeightOffset(),
                   reinterpret_cast<const unsigned char *>(image) +
                       static_cast<i64>(im * Chunks + chunk) * L.streamBytes,
                   L.streamBytes, &full[s]);
        }
        const TX *src = x + (static_cast<i64>(n) * G::Cin + channelGroup * Cin +
                             chunk * CC) *
                                H * W;
        // Chunk e of the stage: where it goes in the stage (at, in
        // elements) and where it comes from (nullptr: zeros).
        constexpr int Elems = CC * L.rows * chunksW;
        auto source = [&](int e, int &at) -> const TX * {
          const int row = e / chunksW, cj = e % chunksW; // chunk cj of row
          const int ci = row / L.rows, r = row % L.rows;
          const int ih = ih0 + r, iw = iw0 + CW * cj;
          at = ci * L.plane + r * L.rowW + CW * cj;
          const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W &&
                          (Cin % CC == 0 || chunk * CC + ci < Cin);
          return in ? src + (static_cast<i64>(ci) * H + ih) * W + iw : nullptr;
        };
        if constexpr (Copies) {
          for (int e = p; e < Elems; e += 128) {
            int at;
            const TX *from = source(e, at);
            copyAsync<E * CW>(dst + at * E, from ? from : x, from != nullptr);
          }
          if constexpr (K16)
            copyCommit();
          else
            arriveOnCopies(&full[s]);
        } else {
          // Halves of odd W: 8 loads in flight a thread, then their stores.
          TX *stage = patch + s * (L.stageBytes() / E);
          for (int e0 = p; e0 < Elems; e0 += 8 * 128) {
            TX v[8];
            int at[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) {
              const TX *from =
                  e0 + 128 * u < Elems ? source(e0 + 128 * u, at[u]) : nullptr;
              v[u] = from ? *from : TX{};
            }
#pragma unroll
            for (int u = 0; u < 8; ++u)
              if (e0 + 128 * u < Elems)
                stage[at[u]] = v[u];
          }
          if constexpr (!K16)
            barrierArrive(&full[s]); // releases the stores
        }
        // Halves: the stage before this one (its copies landed: at most
        // this one's group in flight).
        if (K16 && it > 0) {
          copyWait<1>();
          transposeStage(it - 1);
        }
      }
    }
    if (K16 && it > 0) {
      copyWait<0>();
      transposeStage(it - 1);
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(ConsumerRegs));
  // A consumer: pixel rows 8c + 2q + b of the tile (m64 block b = 0, 1),
  // columns g and g + 8 (fragment rows g, g + 8 of warp q); channels
  // 8j + 2tq + e of acc[b][4j + 2h + e].
  const int c = role - 1, lane = threadIdx.x % 32, q = threadIdx.x / 32 % 4;
  const int g = lane / 4, tq = lane % 4;
  // The tile row of this thread's m64 block m (PingPong: all 16 rows, 4q +
  // m). A warp's blocks are neighbouring rows, so that the row taps of one
  // column tap share fragments (block m at row shift dy + 1 reads block m +
  // 1's at dy).
  const int rowBase = PingPong ? 4 * q : 8 * c + 2 * q;
  auto rowOf = [&](int m) { return rowBase + m; };
  // TF32 products: this thread's A fragment of a block whose pixel (row g,
  // channel tq) is at f in the patch (rows g + 8: 8 columns on; channels +
  // 4: 4 planes on), one shared-memory load a value.
  auto loadTf32 = [&](unsigned(&a)[4], const TX *f) {
    a[0] = __float_as_uint(toFloat(f[0]));
    a[1] = __float_as_uint(toFloat(f[8 * IW]));
    a[2] = __float_as_uint(toFloat(f[4 * L.plane]));
    a[3] = __float_as_uint(toFloat(f[4 * L.plane + 8 * IW]));
  };
  const unsigned wBase = smem(base);
  float b[BiasKept ? NB / 4 : 1];
#pragma unroll
  for (int j = 0; j < (BiasKept ? NB / 8 : 0); ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e)
      b[2 * j + e] =
          HasBias ? toFloat(bias[part * NB + 8 * j + 2 * tq + e]) : 0.f;
  // PingPong: the consumers take the block's items in turn (consumer c
  // items c, c + 2, ...), and each starts an item's products only once the
  // other has finished its previous item's (named barriers 3 and 4: the
  // other arrives, this one waits), so that neither waits on a stage two
  // phases ahead (an mbarrier tells only a phase's parity); the stores of
  // one item overlap the products of the next. At the first end the
  // consumer waits its turn and hands it on once more, at the second it
  // only waits: every arrival is waited for.
  for (int i = PingPong ? c : 0;; i += PingPong ? 2 : 1) {
    barrierWait(&itemFull[i % Slots], (i / Slots) & 1);
    const int k = itemOf[i % Slots];
    if (PingPong && i > 0)
      asm volatile("bar.sync %0, 256;" ::"r"(3 + c) : "memory");
    if (k < 0) {
      if (PingPong && k == -1)
        asm volatile("bar.arrive %0, 256;" ::"r"(4 - c) : "memory");
      break;
    }
    int it = i * Chunks; // its stages
    const int tile = PhaseBlocks ? k : k / Groups;
    if constexpr (!PhaseBlocks)
      phase = k % Groups; // CP 2: the row phase
    // TF32: the products accumulate in acc (buffer 0). 3xTF32: each tap's
    // (16 of K) accumulate in acc[tap % 2] (its first product replacing
    // what was there: Replace) and are added into total in fp32 once done,
    // while the next tap's run (as the linear's kWgmmaPromoteK: tensor-core
    // sums over 144 of K, a stage's, left L2_19 22% less accurate than
    // fp32). TF32 never touches total, and has buffer 1 only with CP 2 (the
    // second column phase's sums).
    // (3xTF32 sharing rows: a step's big*big products, 8 channels of each
    // row tap, 24 of K for 3 x 3, in acc[step % 2], added into total two
    // steps later; its small*big and big*small ones, 2^-11 of those, over
    // the stage in accS, whose truncation in the tensor cores is as small.)
    constexpr int RowTaps = G::KH;
    constexpr int Bufs = Passes == 3 || CP == 2 ? 2 : 1;
    float acc[Bufs][MB][NB / 2], total[MB][NB / 2], accS[MB][NB / 2];
#pragma unroll
    for (int m = 0; m < MB; ++m)
#pragma unroll
      for (int i = 0; i < NB / 2; ++i) {
#pragma unroll
        for (int u = 0; u < Bufs; ++u)
          acc[u][m][i] = 0.f;
        total[m][i] = 0.f;
        accS[m][i] = 0.f;
      }
    // A tap's first product replaces acc[buf] (by-phase blocks: acc[buf] is
    // zeroed once added, which spilled less than replacing there).
    constexpr bool Replace = !PhaseBlocks;
    // total += sums (their products are done): acc[buf], or accS.
    auto addIntoTotal = [&](float(&sums)[MB][NB / 2]) {
      pin(sums[0]);
      pin(sums[1]);
#pragma unroll
      for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int i = 0; i < NB / 2; ++i) {
          total[m][i] += sums[m][i];
          if constexpr (!Replace)
            sums[m][i] = 0.f;
        }
    };
    auto promote = [&](int buf) { addIntoTotal(acc[buf]); };
    auto promoteSmall = [&] { addIntoTotal(accS); };
    // Streamed, wgmma reads a stage's weight after its fragments are
    // loaded: the stage before is released once this stage's products have
    // waited out its last ones (after one step; after two where 3xTF32
    // keeps two in flight, which with one step a tap, stages of 8
    // channels, would add up a tap whose products are not done).
    constexpr int InFlight =
        Passes == 3 && !RowReuse && Groups == 1 && !PhaseBlocks && CC == 16 ? 2
                                                                            : 1;
    for (int chunk = 0; chunk < Chunks; ++chunk, ++it) {
      const int s = it % S;
      // (A predicated arrival: a branch between the products serialised
      // them, C7513. The steps are unrolled, so `waited` is known.)
      int waited = 0; // this stage's steps waited on
      auto stepDone = [&] {
        if constexpr (Stream)
          if (++waited == InFlight)
            barrierArriveIf(&empty[(it + S - 1) % S], chunk > 0);
      };
      barrierWait(&full[s], (it / S) & 1);
      // Streamed: the descriptor of the stage's weight (a tap's rows NB *
      // RowB bytes on, in its units of 16 bytes).
      const unsigned wAt =
          smem(patch) + s * L.stageBytes() + L.stageWeightOffset();
      const u64 dStage = Stream ? swizzledDescriptor<RowB>(wAt) : 0;
      if constexpr (Passes == 1 && !Half) {
        // TF32: the stage rounded to nearest in place, once, by both
        // consumers (the tensor cores would truncate: a bias that grows
        // with K where x is of one sign, the error 2.5x PyTorch's on [0, 1)
        // inputs). Rounding each fragment as it is loaded cost up to 25%
        // where the products are few (9 roundings a value for 3 x 3).
        // tf32Operand rather than cvt.rna: the same products, in two
        // instructions a value, not three (3 x 3 64 -> 128 silu 1% faster,
        // bench/NOTES.md v49).
        // (PingPong: by the stage's consumer alone, named barrier 1 + c.)
        float4 *st =
            reinterpret_cast<float4 *>(patch) + s * (L.stageBytes() / 16);
        constexpr int Rounders = PingPong ? 128 : 256;
        for (int i = PingPong ? threadIdx.x % 128 : threadIdx.x - 128;
             i < L.patchBytes() / 16; i += Rounders) {
          float4 v = st[i];
          v.x = tf32Operand(v.x), v.y = tf32Operand(v.y);
          v.z = tf32Operand(v.z), v.w = tf32Operand(v.w);
          st[i] = v;
        }
        if constexpr (PingPong)
          asm volatile("bar.sync %0, 128;" ::"r"(1 + c) : "memory");
        else
          asm volatile("bar.sync 1, 256;" ::: "memory");
      }
      // Halves: this lane's row of the A fragments' 8 x 8 blocks (j = lane
      // / 8: columns 8 (j % 2) on, channels 8 (j / 2) on), in bytes.
      const unsigned R = smem(patch) + s * L.stageBytes() +
                         L.transposedOffset() + lane / 16 * L.pixels * 16 +
                         IW * (lane / 8 % 2 * 8 + lane % 8) * 16;
      // This phase's taps (each phase unrolled with its offsets known):
      // step u = KS t + ks runs tap t on channels 8 ks + tq and + 4 of the
      // stage (halves, KS 1: all 16); o counts the phase's taps before t.
      constexpr int KS = K16 ? 1 : CC / 8;
#pragma unroll
      for (int ph = 0; ph < Phases; ++ph) {
        if (ph / CP != phase)
          continue;
        const int ch = ph / SW, cw = ph % SW; // rh, rw, known
        int o = 0;
        if constexpr (RowReuse) {
          // Input rows unstrided: a column tap's steps (kw, ks; k16: kw) run
          // its row taps together, on fragments loaded once: block m at row
          // tap kh reads the patch row m + dy(kh) - dyMin past its warp's
          // first (TF32 in ping-pong, 4 blocks and 3 row taps: 6 rows of
          // fragments for 12 products; shared memory bounds these kernels,
          // bench/NOTES.md v29).
          constexpr int Rows = MB + L.dyMax - L.dyMin;
          const TX *P = patch + s * (L.stageBytes() / sizeof(TX)) +
                        tq * L.plane + IW * g + rowBase * L.rowW - L.left;
#pragma unroll
          for (int step = 0; step < KS * G::KW; ++step) {
            const int kw = step / KS, ks = step % KS;
            if (!convTapInPhase(Tr, kw, SW, G::PW, G::DW, cw))
              continue;
            const int dx = convTapShift(Tr, kw, SW, G::PW, G::DW, cw);
            // Whether a row tap of this phase reads fragment row r into an
            // m64 block of m0 to m1 - 1.
            auto needed = [&](int r, int m0, int m1) {
              bool any = false;
#pragma unroll
              for (int kh = 0; kh < G::KH; ++kh)
                if (convTapInPhase(Tr, kh, SH, G::PH, G::DH, ch)) {
                  const int m =
                      r - convTapShift(Tr, kh, SH, G::PH, G::DH, ch) + L.dyMin;
                  any = any || (m >= m0 && m < m1);
                }
              return any;
            };
            auto kept = [&](int t) { return keptTap(t, ch, cw); };
            // Where tap t's weight for this stage's channels starts in
            // shared memory.
            auto slice = [&](int t) {
              return wBase +
                     (kept(t) * SPT + chunk * CC / PerSlice) * SliceBytes;
            };
            // The descriptor of tap t's weight at TF32 step ks of this
            // stage (3xTF32: its big parts; small: the small ones, Kept taps
            // on).
            auto tapWeight = [&](int t, int ks, bool small = false) {
              const int kStep = (chunk * CC % PerSlice) / 8 + ks;
              const u64 db = Stream
                                 ? dStage + (kept(t) * NB * RowB >> 4) + 2 * ks
                                 : descriptor(slice(t)) + 2 * kStep;
              if (!small)
                return db;
              return Stream ? db + (Kept * NB * RowB >> 4)
                            : descriptor(slice(t) + Kept * SPT * SliceBytes) +
                                  2 * kStep;
            };
            if constexpr (K16) {
              // k16 (ping-pong): the m64 blocks in two halves, each a commit
              // group of its own over all the step's row taps (blocks 0-1
              // read rows 0-3, 2-3 rows 2-5 for L2_19: 8 loads for 12
              // products); a half's rows loaded once its products of the
              // step before are done, while the other half's run.
              unsigned a[2][Rows][4];
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int m0 = h * MB / 2, m1 = (h + 1) * MB / 2;
                mmaWait<1>();
                // (Streamed: the step before's second half, the last to
                // read its stage, is done now.)
                if (h == 1)
                  stepDone();
#pragma unroll
                for (int r = 0; r < Rows; ++r)
                  if (needed(r, m0, m1))
                    loadMatrices<false>(
                        a[h][r],
                        R + ((rowBase + r) * L.rowW + dx - L.left) * 16);
#pragma unroll
                for (int m = m0; m < m1; ++m)
                  pin(acc[0][m]);
                mmaFence();
#pragma unroll
                for (int kh = 0; kh < G::KH; ++kh) {
                  if (!convTapInPhase(Tr, kh, SH, G::PH, G::DH, ch))
                    continue;
                  const int t = kh * G::KW + kw;
                  const u64 db = Stream
                                     ? dStage + (kept(t) * NB * RowB >> 4)
                                     : descriptor(slice(t)) +
                                           2 * ((chunk * CC % PerSlice) / 16);
                  const int dy = convTapShift(Tr, kh, SH, G::PH, G::DH, ch);
#pragma unroll
                  for (int m = m0; m < m1; ++m)
                    convMma16<WgmmaElem<TX>::kind, NB>(
                        acc[0][m], a[h][m + dy - L.dyMin], db);
                }
                mmaCommit();
              }
            } else {
              // The rows' fragments, then every m64 block's accumulators
              // settled before the fence (ptxas serialised the wgmmas,
              // warnings C7519 and C7520, where zeros were set after it).
              unsigned a[Rows][4];
#pragma unroll
              for (int r = 0; r < Rows; ++r)
                if (needed(r, 0, MB))
                  loadTf32(a[r], P + ks * 8 * L.plane + r * L.rowW + dx);
              if constexpr (Passes == 3) {
                // Each row split once for its row taps (small*big +
                // big*small + big*big). One step in flight past each
                // commit.
                unsigned big[Rows][4], small[Rows][4];
#pragma unroll
                for (int r = 0; r < Rows; ++r)
                  if (needed(r, 0, MB))
                    splitFragment(a[r], big[r], small[r]);
#pragma unroll
                for (int r = 0; r < Rows; ++r)
                  if (needed(r, 0, MB))
                    pin(big[r]), pin(small[r]); // (split before the fence)
                // The step's big*big products (its row taps') accumulate
                // in acc[step % 2], the first replacing, after the step two
                // before's sums there, done since the last step's wait, are
                // added into total; the small ones in accS, replaced at the
                // stage's first step. That step waits for the stage
                // before's last products (behind its loads and split) and
                // adds its last two steps' sums and accS. So no column tap
                // ends in a wait for its products, and the big sums, whose
                // truncation in the tensor cores bounds the error, run
                // over 3 wgmmas (24 of K) where each row tap's set for a
                // column tap ran over 6 (16 of K): 2-6% faster, more
                // accurate from 16 input channels (bench/NOTES.md v51).
                constexpr int Steps = KS * G::KW;
                if (step == 0 && chunk > 0) {
                  mmaWait<0>();
                  promote(0);
                  if constexpr (Steps > 1)
                    promote(1);
                  promoteSmall();
                } else if (step >= 2) {
                  promote(step % 2);
                }
#pragma unroll
                for (int m = 0; m < MB; ++m)
                  pin(acc[step % 2][m]), pin(accS[m]);
                mmaFence();
#pragma unroll
                for (int kh = 0; kh < RowTaps; ++kh) {
                  const int t = kh * G::KW + kw;
                  const u64 db = tapWeight(t, ks),
                            dbSmall = tapWeight(t, ks, true);
                  const int dy = convTapShift(Tr, kh, SH, G::PH, G::DH, ch);
#pragma unroll
                  for (int m = 0; m < MB; ++m) {
                    const int r = m + dy - L.dyMin;
                    convMma<NB>(accS[m], small[r], db, step != 0 || kh != 0);
                    convMma<NB>(accS[m], big[r], dbSmall);
                    convMma<NB>(acc[step % 2][m], big[r], db, kh != 0);
                  }
                }
                mmaCommit();
                mmaWait<1>();
                stepDone();
              } else {
#pragma unroll
                for (int m = 0; m < MB; ++m)
                  pin(acc[CP == 2 ? cw : 0][m]);
                mmaFence();
#pragma unroll
                for (int kh = 0; kh < G::KH; ++kh) {
                  if (!convTapInPhase(Tr, kh, SH, G::PH, G::DH, ch))
                    continue;
                  const u64 db = tapWeight(kh * G::KW + kw, ks);
                  const int dy = convTapShift(Tr, kh, SH, G::PH, G::DH, ch);
#pragma unroll
                  for (int m = 0; m < MB; ++m)
                    convMma<NB>(acc[CP == 2 ? cw : 0][m], a[m + dy - L.dyMin],
                                db);
                }
                mmaCommit();
                mmaWait<1>(); // the step before is done: its fragments are free
                stepDone();
              }
            }
          }
        } else {
#pragma unroll
          for (int u = 0; u < KS * KT; ++u) {
            const int t = u / KS, ks = u % KS;
            const int kh = t / G::KW, kw = t % G::KW;
            if (!convTapInPhase(Tr, kh, SH, G::PH, G::DH, ch) ||
                !convTapInPhase(Tr, kw, SW, G::PW, G::DW, cw))
              continue;
            const int dy = convTapShift(Tr, kh, SH, G::PH, G::DH, ch);
            const int dx = convTapShift(Tr, kw, SW, G::PW, G::DW, cw);
            // The step's place in its slice (32 bytes of K a step).
            const int kStep = (chunk * CC % PerSlice) / (K16 ? 16 : 8) + ks;
            const unsigned slice =
                wBase +
                (keptTap(t, ch, cw) * SPT + chunk * CC / PerSlice) * SliceBytes;
            // Streamed: the tap's rows in the stage, its step's 32 bytes.
            const u64 db =
                Stream ? dStage + (keptTap(t, ch, cw) * NB * RowB >> 4) + 2 * ks
                       : descriptor(slice) + 2 * kStep;
            const int buf = Passes == 3 ? o % 2 : CP == 2 ? cw : 0;
            // Where m64 block m's fragments start in the patch (elements).
            auto at = [&](int m) {
              return (IH * rowOf(m) + dy - L.dyMin) * L.rowW + dx - L.left;
            };
            unsigned a[MB][4];
            if constexpr (K16) {
              // The m64 blocks in two halves, each a commit group of its
              // own: a half's fragments are loaded (one ldmatrix a block)
              // once its products of the step before are done, while the
              // other half's run. (Fragments for every block twice over,
              // the step before's and this one's, spilled in ping-pong.)
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                mmaWait<1>();
                if (h == 1) // (as above)
                  stepDone();
#pragma unroll
                for (int m = h * MB / 2; m < (h + 1) * MB / 2; ++m) {
                  loadMatrices<false>(a[m], R + at(m) * 16);
                  pin(acc[buf][m]);
                }
                mmaFence();
#pragma unroll
                for (int m = h * MB / 2; m < (h + 1) * MB / 2; ++m)
                  convMma16<WgmmaElem<TX>::kind, NB>(acc[buf][m], a[m], db);
                mmaCommit();
              }
            } else {
              const TX *P = patch + s * (L.stageBytes() / sizeof(TX)) +
                            tq * L.plane + IW * g + ks * 8 * L.plane;
              // The blocks' fragments, then every m64 block's accumulators
              // settled before the fence (ping-pong's four too: ptxas
              // serialised the wgmmas, warnings C7519 and C7520, where zeros
              // were set after it).
#pragma unroll
              for (int m = 0; m < MB; ++m)
                loadTf32(a[m], P + at(m));
#pragma unroll
              for (int m = 0; m < MB; ++m)
                pin(acc[buf][m]);
              if constexpr (Passes == 3) {
                // x's big and small parts in registers, w's in shared
                // memory: small*big + big*small + big*big.
                const u64 dbSmall =
                    Stream ? db + (Kept * NB * RowB >> 4)
                           : descriptor(slice + Kept * SPT * SliceBytes) +
                                 2 * kStep;
                unsigned big[2][4], small[2][4];
#pragma unroll
                for (int m = 0; m < 2; ++m)
                  splitFragment(a[m], big[m], small[m]);
                mmaFence();
#pragma unroll
                for (int m = 0; m < 2; ++m) {
                  convMma<NB>(acc[buf][m], small[m], db, !Replace || ks != 0);
                  convMma<NB>(acc[buf][m], big[m], dbSmall);
                  convMma<NB>(acc[buf][m], big[m], db);
                }
              } else {
                mmaFence();
#pragma unroll
                for (int m = 0; m < MB; ++m)
                  convMma<NB>(acc[buf][m], a[m], db);
              }
              mmaCommit();
              // The step before is done (its fragments are free), or with
              // 3xTF32 where the phase is known when compiled the step two
              // before: two steps' products in flight, so that a step's
              // loads and split run behind both (with phases chosen at run
              // time ptxas keeps every phase's fragments apart, and
              // serialised the wgmmas: C7512). 3xTF32 then adds up the tap
              // before, whose last step is now done: at this tap's first
              // step with one in flight, its last with two.
              mmaWait<InFlight>();
              stepDone();
              if (Passes == 3 && o > 0 && ks == (InFlight == 2 ? KS - 1 : 0))
                promote((o - 1) % 2);
            }
            o += ks == KS - 1 ? 1 : 0;
          }
        }
        if (Passes == 3 && o > 0) {
          mmaWait<0>();
          promote((o - 1) % 2);
        }
        // Rows shared by phase blocks: the phase is known only at run time,
        // so ptxas keeps every phase's fragments apart while products are
        // in flight (C7512, serialised wgmmas); none crosses from one stage
        // to the next. So, too, with a row phase chosen at run time and
        // one stage a tile (Cin 16: C7515 otherwise, TF32 and k16; 3xTF32
        // waits above), where the wait costs nothing: the tile's products
        // are all done there.
        if ((RowReuse && PhaseBlocks) ||
            (Passes == 1 && Groups > 1 && Chunks == 1 && ph % CP == CP - 1))
          mmaWait<0>();
      }
      // This thread's fragment loads from the stage are done (streamed: at
      // the next stage's steps, or below).
      if constexpr (!Stream)
        barrierArrive(&empty[s]);
    }
    mmaWait<0>();
    if constexpr (Passes == 3 && RowReuse) { // the last steps' sums, accS
      promote(0);
      if constexpr ((K16 ? 1 : CC / 8) * G::KW > 1)
        promote(1);
      promoteSmall();
    }
    if constexpr (Stream)
      barrierArrive(&empty[(it - 1) % S]);
    if (PingPong) // the other consumer's turn
      asm volatile("bar.arrive %0, 256;" ::"r"(4 - c) : "memory");
#pragma unroll
    for (int cw = 0; cw < CP; ++cw)
#pragma unroll
      for (int m = 0; m < MB; ++m)
        pin(acc[cw][m]);
    if constexpr (Passes == 3) {
#pragma unroll
      for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int i = 0; i < NB / 2; ++i)
          acc[0][m][i] = total[m][i];
    }
    const int n = tile / (tilesR * tilesC);
    const int oh0 = tile / tilesC % tilesR * T, ow0 = tile % tilesC * T;
    const int py = CP == 2 ? phase : phase / SW;
    // The bias of this thread's channel 8 j + 2 tq + e of the part.
    auto biasOf = [&](int j, int e) {
      float bv = 0.f;
      if constexpr (HasBias && BiasKept)
        bv = b[2 * j + e];
      else if constexpr (HasBias)
        bv = biasShared[8 * j + 2 * tq + e];
      return bv;
    };
    if constexpr (ConvTailOf<Epi>::kTail) {
      // The channels reduced (one part: NB is Cout): each pixel's values
      // through the epilogue, NB / 4 a thread, combined over its quad;
      // the quad's first thread passes the result on.
      static_assert(Parts == 1 && Vec == 1, "a tile holds every channel");
#pragma unroll
      for (int m = 0; m < MB; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int cw = 0; cw < CP; ++cw) {
            const int oh = SH * (oh0 + rowOf(m)) + py;
            const int ow = SW * (ow0 + g + 8 * h) + (CP == 2 ? cw : phase % SW);
            const bool inside = !((Ho % (T * SH) != 0 && oh >= Ho) ||
                                  (Wo % (T * SW) != 0 && ow >= Wo));
            float vals[NB / 4];
#pragma unroll
            for (int j = 0; j < NB / 8; ++j)
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                const int co = 8 * j + 2 * tq + e;
                float v[1] = {acc[cw][m][4 * j + 2 * h + e] + biasOf(j, e)};
                if (inside)
                  epi.epi(((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo +
                              ow,
                          v);
                vals[2 * j + e] = v[0];
              }
            const float r = quadReduce<Epi::kOp, NB>(vals);
            if (inside && tq == 0)
              epi.done((static_cast<i64>(n) * Ho + oh) * Wo + ow, r);
          }
    } else if constexpr (Vec == 2 && CP == 1) {
      // Pairs of neighbouring columns (even Wo, column stride 1): lanes g
      // and g ^ 1 trade two values, so that the even lane holds columns g, g
      // + 1 and the odd one g + 7, g + 8 of each of its channels; each
      // store instruction then writes 16 contiguous columns (two pairs a
      // quad's lane) of four channels, half the stores of one value.
      const bool odd = g & 1;
      const int ow = ow0 + g + (odd ? 7 : 0);
#pragma unroll
      for (int m = 0; m < MB; ++m)
#pragma unroll
        for (int j = 0; j < NB / 8; ++j) {
          const int oh = SH * (oh0 + rowOf(m)) + py;
          const bool inside =
              !((Ho % (T * SH) != 0 && oh >= Ho) || (Wo % T != 0 && ow >= Wo));
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float bv = biasOf(j, e);
            const float v0 = acc[0][m][4 * j + e] + bv;     // column g
            const float v1 = acc[0][m][4 * j + 2 + e] + bv; // column g + 8
            const float got = __shfl_xor_sync(0xffffffffu, odd ? v0 : v1, 4);
            const int co = part * NB + 8 * j + 2 * tq + e;
            const i64 row = ((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo;
            float v[2] = {odd ? got : v0, odd ? v1 : got};
            epi(inside ? row + ow : 0, v, inside);
          }
        }
    } else if constexpr (PairStores) {
      // Lanes tq and tq ^ 1 trade a value, so that each store writes 16
      // columns of two channels (64 contiguous bytes a channel row: the
      // even lane's channel, then the odd lane's), not 8 columns of four.
      const bool odd = tq & 1;
#pragma unroll
      for (int m = 0; m < MB; ++m)
#pragma unroll
        for (int j = 0; j < NB / 8; ++j) {
          const int oh = SH * (oh0 + rowOf(m)) + py;
          const int ow = ow0 + g + (odd ? 8 : 0);
          const bool inside =
              !((Ho % (T * SH) != 0 && oh >= Ho) || (Wo % T != 0 && ow >= Wo));
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float bv = biasOf(j, e);
            const float v0 = acc[0][m][4 * j + e] + bv;     // column g
            const float v1 = acc[0][m][4 * j + 2 + e] + bv; // column g + 8
            const float got = __shfl_xor_sync(0xffffffffu, odd ? v0 : v1, 1);
            const int co = part * NB + 8 * j + 2 * (tq & 2) + e;
            const i64 row = ((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo;
            float even[1] = {odd ? got : v0}, next[1] = {odd ? v1 : got};
            epi(inside ? row + ow : 0, even, inside);
            epi(inside ? row + 2 * static_cast<i64>(Ho) * Wo + ow : 0, next,
                inside);
          }
        }
    } else {
#pragma unroll
      for (int m = 0; m < MB; ++m)
#pragma unroll
        for (int j = 0; j < NB / 8; ++j) {
          const int oh = SH * (oh0 + rowOf(m)) + py;
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int co = part * NB + 8 * j + 2 * tq + e;
              const i64 row =
                  ((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo;
              const float bv = biasOf(j, e);
              // Column phase cw's value (acc[cw] with CP 2).
              auto value = [&](int cw) {
                return acc[cw][m][4 * j + 2 * h + e] + bv;
              };
              const int ow =
                  SW * (ow0 + g + 8 * h) + (CP == 2 ? 0 : phase % SW);
              if constexpr (Vec == 2) {
                // Wo even: ow + 1 < Wo where ow < Wo.
                float v[2] = {value(0), value(1)};
                const bool inside = !((Ho % (T * SH) != 0 && oh >= Ho) ||
                                      (Wo % (T * SW) != 0 && ow >= Wo));
                epi(inside ? row + ow : 0, v, inside);
              } else {
#pragma unroll
                for (int cw = 0; cw < CP; ++cw) {
                  float v[1] = {value(cw)};
                  const bool inside = !((Ho % (T * SH) != 0 && oh >= Ho) ||
                                        (Wo % (T * SW) != 0 && ow + cw >= Wo));
                  epi(inside ? row + ow + cw : 0, v, inside);
                }
              }
            }
        }
    }
  }
#else
  (void)x, (void)w, (void)bias, (void)epi, (void)image, (void)launches,
      (void)imageFlag, (void)tickets;
  __trap(); // never scheduled off sm_90a
#endif
}

} // namespace kiln

#endif
