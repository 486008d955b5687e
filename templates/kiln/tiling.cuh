//===- tiling.cuh - Tile shapes and launch geometry ------------*- CUDA -*-===//
//
// Plain C++17 (CUDA keywords only behind KILN_HOST_DEVICE), so that both
// NVRTC (through gemm.cuh and conv.cuh) and the host emitter
// (#include "kiln/tiling.cuh", templates/ is on its path) read the same
// numbers: which tile a problem gets, how many threads a block has, how many
// blocks a grid has. The emitter writes the chosen TileShape into the kernel
// as kiln::TileConfig<bp, bq, bk, tp, tq, minBlocks> (or leaves the template
// argument out to get the pick* choice) and launches with the grid that the
// functions below return.
//
// A contraction computes D[p][q] = sum_k P(p, k) * Q(k, q). One block owns a
// bp x bq tile of D; its threads each own tp x tq accumulators. p is the dim
// along which consecutive threads (lanes) lie -- the dim that is contiguous
// in the output, so stores coalesce: for gemm p = n (output column), q = m;
// for conv p = output pixel (n, oh, ow), q = output channel.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TILING_CUH
#define KILN_TILING_CUH

// Device code (nvcc, NVRTC) evaluates these functions too, in static_asserts.
#ifdef __CUDACC__
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

namespace kiln {

struct TileShape {
  int bp, bq, bk; // block tile: bp x bq outputs, bk terms per step
  int tp, tq;     // per-thread accumulators: tp (strided by bp/tp) x tq
  int minBlocks;  // for __launch_bounds__(threads(), minBlocks)
  KILN_HOST_DEVICE constexpr int threads() const {
    return (bp / tp) * (bq / tq);
  }
};

// Every tile below has 256 threads.
inline constexpr TileShape kGemmLarge{128, 128, 8, 8, 8, 2};
inline constexpr TileShape kGemmSmall{64, 64, 8, 4, 4, 2};
inline constexpr TileShape kConvWide{256, 64, 8, 8, 8, 2};   // Cout/g <= 64
inline constexpr TileShape kConvNarrow{256, 32, 8, 8, 4, 2}; // Cout/g <= 32
inline constexpr TileShape kConvLarge{128, 128, 8, 8, 8, 2}; // Cout/g > 64

KILN_HOST_DEVICE constexpr long long ceilDiv(long long a, long long b) {
  return (a + b - 1) / b;
}

// --- gemm (gemm.cuh) ---------------------------------------------------------
// Launch: block (threads(), 1, 1); grid (gemmBlocks(M, N, t), batches, 1)
// with batches = 1 for gemmNT (linear) and the BatchMap's count for gemmNN.

/// Blocks along grid.x: one per bp x bq tile of the [M, N] output.
KILN_HOST_DEVICE constexpr long long gemmBlocks(long long m, long long n,
                                                TileShape t) {
  return ceilDiv(n, t.bp) * ceilDiv(m, t.bq);
}

/// The large tile once it alone fills every SM of an H100 (132) with a
/// block; the small tile otherwise, to spread a small problem wider.
KILN_HOST_DEVICE constexpr TileShape pickGemmTile(long long m, long long n,
                                                  long long k) {
  return gemmBlocks(m, n, kGemmLarge) >= 132 ? kGemmLarge : kGemmSmall;
}

// --- linear on Hopper tensor cores (wgmma.cuh) ------------------------------
// Launch: block (kWgmmaThreads, 1, 1); grid (wgmmaBlocks(M, N, bn), 1, 1);
// dynamic shared memory wgmmaSharedBytes(bn, stages, passes).

inline constexpr int kWgmmaThreads = 384; // a producer, two consumers
inline constexpr int kWgmmaBM = 128, kWgmmaBK = 32;
inline constexpr int kWgmmaAlign = 1024; // the 128-byte swizzle's period
/// Row tiles per band of the persistent kernel's tile order (tileOrigin).
inline constexpr int kWgmmaGroupM = 16;
/// 3xTF32 adds the tensor cores' partial sums into fp32 every this many of K
/// (every slice): measured, every 128 leaves 1e-6 relative error, every 32
/// 2.5e-7 (cuBLAS SGEMM: 1.2e-6 at K = 8192), and is no slower.
inline constexpr int kWgmmaPromoteK = 32;

/// WgmmaConfig's SplitW (the schedule's splitW): 3xTF32's w split by each
/// tile's producer (None), once per launch into a workspace (EachLaunch),
/// or into a workspace that persists across launches, again only when the
/// kernel's flag is set (Flagged: the host sets it when the parameters
/// change, the kernel clears it).
enum WgmmaSplitW {
  kWgmmaSplitNone = 0,
  kWgmmaSplitEachLaunch = 1,
  kWgmmaSplitFlagged = 2
};

KILN_HOST_DEVICE constexpr long long wgmmaBlocks(long long m, long long n,
                                                 int bn) {
  return ceilDiv(m, kWgmmaBM) * ceilDiv(n, bn);
}

/// The ring of `stages` slots (x's and w's K slices, and w's small parts
/// for 3xTF32), plus slack to align it.
KILN_HOST_DEVICE constexpr int wgmmaSharedBytes(int bn, int stages,
                                                int passes) {
  return stages * (kWgmmaBM + bn * (passes == 3 ? 2 : 1)) * kWgmmaBK * 4 +
         kWgmmaAlign;
}

// --- conv (conv.cuh) -------------------------------------------------------
// Launch: block (threads(), 1, 1); grid (convBlocks(P, Cout / groups, t),
// groups, 1) with P = N * Ho * Wo output pixels.

KILN_HOST_DEVICE constexpr int conv2dOutSize(int in, int k, int stride, int pad,
                                             int dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

KILN_HOST_DEVICE constexpr int convTranspose2dOutSize(int in, int k, int stride,
                                                      int pad, int dil,
                                                      int outPad) {
  return (in - 1) * stride - 2 * pad + dil * (k - 1) + outPad + 1;
}

/// Blocks along grid.x: one per bp x bq tile of [pixels, Cout per group].
KILN_HOST_DEVICE constexpr long long
convBlocks(long long pixels, long long coutPerGroup, TileShape t) {
  return ceilDiv(pixels, t.bp) * ceilDiv(coutPerGroup, t.bq);
}

/// The tile whose bq best fits the output channels of one group.
KILN_HOST_DEVICE constexpr TileShape pickConvTile(long long pixels,
                                                  long long coutPerGroup) {
  return coutPerGroup <= 32   ? kConvNarrow
         : coutPerGroup <= 64 ? kConvWide
                              : kConvLarge;
}

// --- depthwise conv2d (depthwise.cuh) --------------------------------------
// Launch: block (kDepthwiseThreads, 1, 1); grid (depthwiseBlocks(N, Cout,
// Ho, Wo, rows), 1, 1); the input tile in static shared memory.

/// A block's output tile: `rows` (16, 32 or 64: depthwiseRows) x
/// kDepthwiseCols of one channel plane; each thread a column and rows / 4
/// rows of it.
inline constexpr int kDepthwiseCols = 64, kDepthwiseThreads = 256;
inline constexpr int kDepthwiseSharedLimit = 48 * 1024; // static

/// The input rows (or columns) an output tile of `out` rows reads, one dim.
KILN_HOST_DEVICE constexpr int depthwiseSpan(int out, int k, int stride,
                                             int dil) {
  return (out - 1) * stride + (k - 1) * dil + 1;
}

/// The bytes of a block's input tile.
KILN_HOST_DEVICE constexpr int
depthwiseSharedBytes(int rows, int kh, int kw, int sh, int sw, int dh, int dw) {
  return depthwiseSpan(rows, kh, sh, dh) *
         depthwiseSpan(kDepthwiseCols, kw, sw, dw) * 4;
}

/// The tile's rows: 64 (more loads in flight a block, less halo: an H100
/// ran 3 x 3 over [32, 64, 256, 256] 19% faster than with 16), fewer where
/// the image has fewer rows or the input would not fit
/// kDepthwiseSharedLimit; 0 where even 16 do not fit.
KILN_HOST_DEVICE constexpr int depthwiseRows(int ho, int kh, int kw, int sh,
                                             int sw, int dh, int dw) {
  int rows = 64;
  while (rows > 16 &&
         (rows / 2 >= ho || depthwiseSharedBytes(rows, kh, kw, sh, sw, dh, dw) >
                                kDepthwiseSharedLimit))
    rows /= 2;
  return depthwiseSharedBytes(rows, kh, kw, sh, sw, dh, dw) <=
                 kDepthwiseSharedLimit
             ? rows
             : 0;
}

KILN_HOST_DEVICE constexpr long long
depthwiseBlocks(long long n, long long cout, int ho, int wo, int rows) {
  return n * cout * ceilDiv(ho, rows) * ceilDiv(wo, kDepthwiseCols);
}

// --- convolutions on Hopper tensor cores (wgmma_conv.cuh) ---------------
// Launch: block (kWgmmaThreads, 1, 1); grid (up to wgmmaConvItems(...) x
// parts, a multiple of parts), dynamic shared memory
// WgmmaConvLayout::sharedBytes().

/// Output tiles of 16 x 16 pixels of one image (of one output phase).
inline constexpr int kWgmmaConvTile = 16;
/// Input channels a stage of the patch ring holds, and the ring's stages
/// (two where three do not fit beside the weight).
inline constexpr int kWgmmaConvChannels = 16, kWgmmaConvStages = 3;
/// The kernel's own __shared__ variables (the ring's barriers, the item
/// slots, the bias of a part: under 700 bytes) take at most this, and the
/// layout the rest of Hopper's 227 KiB opt-in (a block asking for more in
/// all fails to launch).
inline constexpr int kWgmmaConvStaticShared = 1024;
inline constexpr int kWgmmaConvSharedLimit =
    227 * 1024 - kWgmmaConvStaticShared;

/// Whether kernel tap k (one dim) feeds output phase r: conv2d (stride 1)
/// has the one phase, conv_transpose2d's tap k feeds the output rows o = s j
/// + r with r + p - k d a multiple of s.
KILN_HOST_DEVICE constexpr bool convTapInPhase(bool transposed, int k, int s,
                                               int p, int d, int r) {
  return !transposed || (r + p - k * d) % s == 0;
}

/// The input row (one dim) tap k reads for output row j of its phase: j +
/// convTapShift(...). conv2d (stride 1): k d - p; conv_transpose2d: (r + p
/// - k d) / s, exact.
KILN_HOST_DEVICE constexpr int convTapShift(bool transposed, int k, int s,
                                            int p, int d, int r) {
  return transposed ? (r + p - k * d) / s : k * d - p;
}

/// The taps (one dim, of kSize) that feed output phase r.
KILN_HOST_DEVICE constexpr int convPhaseTaps(bool transposed, int kSize, int s,
                                             int p, int d, int r) {
  int n = 0;
  for (int k = 0; k < kSize; ++k)
    n += convTapInPhase(transposed, k, s, p, d, r) ? 1 : 0;
  return n;
}

/// The most taps (one dim) of any phase.
KILN_HOST_DEVICE constexpr int convMostPhaseTaps(bool transposed, int kSize,
                                                 int s, int p, int d) {
  int most = 0;
  for (int r = 0; r < (transposed ? s : 1); ++r) {
    const int n = convPhaseTaps(transposed, kSize, s, p, d, r);
    most = n > most ? n : most;
  }
  return most;
}

/// Where a convolution's input patch and weights lie in shared memory.
/// Output row o = s j + r (s: conv_transpose2d's stride, else 1) reads
/// input rows i j + convTapShift(...) of its taps (i: conv2d's stride, else
/// 1). A tile's patch, in x's elements of `elem` bytes (4: f32; 2: f16 and
/// bf16, kept so): rows from i j0 + dyMin, `rows` of them; columns from
/// i i0 + `left` (dxMin rounded down to 16 bytes' worth: 16-byte copies),
/// `rowW` of them (a multiple of that), `pixels` = rows x rowW.
///
/// Halves multiply in their type (`k16`: wgmma's k16) where three stages
/// fit and each holds 16 channels (not a weight streamed in stages of 8):
/// each stage also holds its patch transposed after its planes
/// (transposedOffset()): for each group of 8 channels, `pixels` rows of 16
/// bytes (a pixel's 8 values), which ldmatrix reads as the A fragments;
/// channel planes 8 mod 16 elements apart (the 16-byte rows of an 8 x 8
/// block of 8 planes in 8 distinct bank quads: the transposing
/// ldmatrix.trans meets no conflict), and the weights in halves. Otherwise
/// (a larger patch: conv2d's stride 2) they take f32's products and
/// weights (TF32, exact for half values) and no transposed copy, fragments
/// loaded value by value from planes 16 mod 32 elements apart (8 or 24 mod
/// 32 words: no conflict at strides 1 and 2).
///
/// f32: channel planes 8 or 24 mod 32 words apart, so a warp's fragment
/// loads hit 32 banks at stride 1, 2-way conflicts at conv2d's stride 2.
/// The weights, TF32-rounded (k16: as they are): for each tap
/// (phaseBlocks: each of the block's phase, at most `taps`), slices of nb
/// output channels x 128 bytes of input channels (32 f32 or 64 halves:
/// ceil(Cin / that) a tap), 3xTF32's small parts in as many after them.
///
/// `stream` (the weight too large to keep: parts of fewer output channels
/// otherwise) keeps no weight: each stage holds, after its patch (rounded
/// up to kWgmmaAlign), its `channels` input channels' weight for every tap,
/// streamBytes: for each tap nb rows of streamRowBytes() (TF32: 16
/// channels, 64 bytes, 64-byte swizzle; 8, where the patch of stride 2
/// leaves room only so for wider parts, 32 bytes, 32-byte swizzle; k16: 16
/// halves, 32 bytes), 3xTF32's small parts in as many after them. The
/// blocks' image holds each part's stages' weights one after another
/// (imageBytes). A strided conv_transpose2d whose items take both column
/// phases of a row phase (one pass at column stride 2, not phaseBlocks) streams
/// only that row phase's taps: an image for each (part, row phase), each
/// stage half the weight of kernel 4's 16 taps (rowImages).
struct WgmmaConvLayout {
  int dyMin = 0, dyMax = 0, dxMin = 0, dxMax = 0;
  int rows = 0, left = 0, rowW = 0, pixels = 0, plane = 0, taps = 0,
      weightBytes = 0, stages = 0;
  /// A stage's weight (stream) and a part's image of the weight, in bytes.
  int streamBytes = 0, imageBytes = 0;
  bool stream = false;
  /// Streamed, an image for each row phase (above).
  bool rowImages = false;
  /// A part's images: 1, its phases' (phaseBlocks) or its row phases'.
  int images = 1;
  /// Input channels a stage (kWgmmaConvChannels, or 8 where streamed so).
  int channels = kWgmmaConvChannels;
  int elem = 4;
  /// The producer's widest copy, in elements: the patch's rows start on
  /// (and span whole) such chunks.
  int chunk = 4;
  bool k16 = false;
  /// v rounded down to a multiple of n.
  KILN_HOST_DEVICE static constexpr int floorTo(int v, int n) {
    return v >= 0 ? v / n * n : -((-v + n - 1) / n * n);
  }
  /// v >= 0 rounded up to a multiple of kWgmmaAlign.
  KILN_HOST_DEVICE static constexpr int aligned(int v) {
    return (v + kWgmmaAlign - 1) / kWgmmaAlign * kWgmmaAlign;
  }
  /// The least and greatest shift over taps k < kSize and phases r < s.
  KILN_HOST_DEVICE static constexpr void
  shifts(bool transposed, int kSize, int s, int p, int d, int &lo, int &hi) {
    bool any = false;
    for (int r = 0; r < (transposed ? s : 1); ++r)
      for (int k = 0; k < kSize; ++k)
        if (convTapInPhase(transposed, k, s, p, d, r)) {
          const int v = convTapShift(transposed, k, s, p, d, r);
          lo = any && lo < v ? lo : v;
          hi = any && hi > v ? hi : v;
          any = true;
        }
  }
  KILN_HOST_DEVICE constexpr WgmmaConvLayout(
      bool transposed, int kh, int kw, int sh, int sw, int ph, int pw, int dh,
      int dw, int cin, int nb, int passes, bool phaseBlocks, int elemBytes = 4,
      bool narrowCopies = true, int streamChannels = 0)
      : stream(streamChannels > 0),
        channels(streamChannels > 0 ? streamChannels : kWgmmaConvChannels),
        elem(elemBytes) {
    shifts(transposed, kh, sh, ph, dh, dyMin, dyMax);
    shifts(transposed, kw, sw, pw, dw, dxMin, dxMax);
    // conv2d's stride spaces the tile's input rows and columns (a
    // conv_transpose2d's makes output phases instead).
    const int ish = transposed ? 1 : sh, isw = transposed ? 1 : sw;
    rows = ish * (kWgmmaConvTile - 1) + 1 + dyMax - dyMin;
    rowImages = stream && transposed && passes == 1 && sw == 2 && !phaseBlocks;
    const int mostRowTaps = convMostPhaseTaps(transposed, kh, sh, ph, dh);
    taps = phaseBlocks
               ? mostRowTaps * convMostPhaseTaps(transposed, kw, sw, pw, dw)
           : rowImages ? mostRowTaps * kw
                       : kh * kw;
    images = phaseBlocks ? sh * sw : rowImages ? sh : 1;
    place(isw, 16 / elem); // 16-byte copies
    // k16 products take a tap's 16 channels a step: not from stages of 8.
    k16 = elem == 2 && channels == kWgmmaConvChannels;
    arrange(cin, nb, passes);
    if (k16 && stages < kWgmmaConvStages) {
      k16 = false;
      arrange(cin, nb, passes);
    }
    // f32 patches that leave no room at 16-byte copies (conv2d 4 x 4 of
    // stride 2 from 128 input channels: rows of 40 for the 34 a tile
    // reads, 87.5 KiB a stage): 8-byte ones, rows of 36 (narrowCopies
    // false: the scheduler asking what fits without them).
    if (narrowCopies && elem == 4 && sharedBytes() > kWgmmaConvSharedLimit) {
      place(isw, 2);
      arrange(cin, nb, passes);
    }
  }
  /// The patch's columns for copies of c elements: its first column (a
  /// multiple of c past the tile's) and its rows' width (whole copies).
  KILN_HOST_DEVICE constexpr void place(int isw, int c) {
    chunk = c;
    left = floorTo(dxMin, chunk);
    rowW = (isw * (kWgmmaConvTile - 1) + 1 + dxMax - left + chunk - 1) / chunk *
           chunk;
    pixels = rows * rowW;
  }
  /// The planes' spacing, the weight's bytes and the stages for k16 (or
  /// not).
  KILN_HOST_DEVICE constexpr void arrange(int cin, int nb, int passes) {
    plane = pixels;
    if (k16)
      while (plane % 16 != 8)
        plane += 8;
    else if (elem == 4)
      for (plane = (plane + 3) / 4 * 4; plane % 32 != 8 && plane % 32 != 24;)
        plane += 4; // (rows of 8-byte copies: 2 mod 4 pixels at odd rows)
    else
      while (plane % 32 != 16)
        plane += 8;
    const int perSlice = k16 ? 64 : 32; // input channels a 128-byte row
    const int copies = passes == 3 ? 2 : 1;
    weightBytes = taps * ((cin + perSlice - 1) / perSlice) * nb * 128 * copies;
    imageBytes = weightBytes;
    if (stream) {
      streamBytes = taps * nb * streamRowBytes() * copies;
      imageBytes = (cin + channels - 1) / channels * streamBytes;
      weightBytes = 0;
    }
    stages = kWgmmaConvStages;
    while (stages > 2 && sharedBytes() > kWgmmaConvSharedLimit)
      --stages;
  }
  /// A streamed tap's row of a stage's weight: its channels in k16's
  /// halves, else in TF32's floats (bytes).
  KILN_HOST_DEVICE constexpr int streamRowBytes() const {
    return (k16 ? 2 : 4) * channels;
  }
  /// Where a stage's transposed copy starts (halves), in bytes.
  KILN_HOST_DEVICE constexpr int transposedOffset() const {
    return channels * plane * elem;
  }
  /// A stage's patch (and its transposed copy), in bytes.
  KILN_HOST_DEVICE constexpr int patchBytes() const {
    return transposedOffset() + (k16 ? channels / 8 * pixels * 16 : 0);
  }
  /// Where a stage's weight starts (stream), in bytes past the stage's.
  KILN_HOST_DEVICE constexpr int stageWeightOffset() const {
    return aligned(patchBytes());
  }
  KILN_HOST_DEVICE constexpr int stageBytes() const {
    return stream ? aligned(stageWeightOffset() + streamBytes) : patchBytes();
  }
  KILN_HOST_DEVICE constexpr int sharedBytes() const {
    return weightBytes + stages * stageBytes() + kWgmmaAlign;
  }
};

/// Whether wgmmaConv's row taps share their fragments (each patch row
/// loaded once a step for every tap and m64 block that reads it): at input
/// row stride 1 (conv2d's stride 1; conv_transpose2d's phases), in TF32
/// products, or in k16 ones in ping-pong conv2d (its conv_transpose2d ran
/// slower so); in 3xTF32 ones with one output phase and row taps 1 or 2
/// rows apart at most (rowSpan: (KH - 1) x DH), each row split once for
/// its row taps, whose sums take an accumulator set each. Read by the
/// template and by the plan's reason.
KILN_HOST_DEVICE constexpr bool
wgmmaConvSharesRows(bool transposed, int inputStrideH, int passes, bool k16,
                    bool pingPong, int rowSpan, int phases) {
  return inputStrideH == 1 &&
         (passes == 1 ? !k16 || (pingPong && !transposed)
                      : phases == 1 && rowSpan >= 1 && rowSpan <= 2);
}

/// The output channels a block of wgmmaConv takes at most (the
/// scheduler halves it while the weight does not fit): the widest of 128
/// (TF32 with one accumulator buffer: not both column phases a tile), 64
/// (TF32) or 32 (3xTF32), 16 and 8 that divides Cout.
KILN_HOST_DEVICE constexpr int wgmmaConvChannels(int cout, int passes,
                                                 bool columnPairs = false) {
  return cout % 128 == 0 && passes == 1 && !columnPairs ? 128
         : cout % 64 == 0 && passes == 1                ? 64
         : cout % 32 == 0                               ? 32
         : cout % 16 == 0                               ? 16
                                                        : 8;
}

/// Work items: 16 x 16 tiles of each output phase (s rows apart) of each
/// image, the phases of a tile consecutive.
KILN_HOST_DEVICE constexpr long long wgmmaConvItems(long long n, int ho, int wo,
                                                    int sh, int sw) {
  return n * ceilDiv(ceilDiv(ho, sh), kWgmmaConvTile) *
         ceilDiv(ceilDiv(wo, sw), kWgmmaConvTile) * sh * sw;
}

} // namespace kiln

#endif
