//===- wgmma.cuh - linear on Hopper tensor cores (wgmma) -------*- CUDA -*-===//
//
// linear (F.linear) on sm_90a tensor cores, f32 storage:
//   wgmmaLinear<GemmShape<M, N, K>, WgmmaConfig<BN, Stages, Passes>, HasBias,
//               WgmmaEpilogue<Vec, GroupCols>>(x, w, bias, pre, post, eps)
//   y[m][n] = sum_k x[m][k] * w[n][k] + bias[n], then the epilogue (pre,
//   a GroupNorm over GroupCols-column groups, post: see WgmmaEpilogue).
// Passes 1: TF32 products (Kiln's `high`). Passes 3: error-compensated
// 3xTF32 (`highest`): each operand is split in shared memory into
// big = tf32(v) and small = tf32(v - big), both rounded to nearest; the
// tensor cores' big*big products of each 32-wide K slice are added into an
// fp32 total (kWgmmaPromoteK), and small*big + big*small accumulate beside
// them, so the result is as accurate as an fp32 SGEMM (docs/precision.md
// has the figures). Passes 1 reads x and w as they are: the tensor cores
// use the top 19 bits of each (TF32, truncated). With WgmmaConfig's SplitW
// (3xTF32 over many row tiles, or with constant parameters), w is split
// once per launch instead, or once for as long as it stays the same, into
// the `parts` workspace (2 N K floats) passed after eps with a launch
// counter (`launches`, zero when allocated) and, for the latter, a flag
// (WgmmaSplitW): every block splits a share, the blocks wait for each other
// (wg::gridSync: the launch must be cooperative), and the producer copies
// big and small parts as they are.
//
// matmul: with WgmmaConfig's TransposeW, w is matmul's right operand (K x
// N), transposed (and split) into `parts` the same way; with a Batch
// (kiln::BatchMap, gemm.cuh: the output's batch dims in runs, broadcasting
// either operand) the tiles run batch after batch, M being a batch's rows,
// each of w's Batch::kCountB matrices transposed at its own offset. A tail
// (WgmmaTail) gathers a min or max of the epilogue's last values per row;
// the caller finishes it after a grid barrier of the consumers.
//
// A block computes 128 x BN tiles of y, one after another (persistent), and
// has three warpgroups (384 threads). Warpgroup 0 is the producer: it copies
// 32-wide K slices of x and w into a ring of `Stages` shared-memory buffers
// with cp.async (16 bytes a thread, zero-filled outside the operands), 128-byte
// swizzled as wgmma expects, splits them (Passes 3), and signals each full
// buffer on an mbarrier. Warpgroups 1 and 2 are consumers: each multiplies 64
// rows of the tile with wgmma.mma_async m64nBNk8 (both operands K-major in
// shared memory, as linear's are) and frees the buffer on another mbarrier. The
// producer keeps Stages - 2 slices in flight ahead of the consumers.
//
// Split-K (WgmmaConfig's SplitK > 1, where the tiles are too few to fill
// the GPU): the work items are the tiles' shares of their K slices; each
// item's sums go to the WgmmaSplitK workspace, and the last of a tile's
// blocks to finish adds them in order and runs the epilogue
// (wg::finishSplit).
//
// Launch: block 384 (kWgmmaThreads), grid (any number of blocks up to
// wgmmaBlocks(M, N, BN) * Batch::kCount * SplitK: each runs every
// gridDim.x-th work item; the scheduler launches one per SM), dynamic
// shared memory wgmmaSharedBytes(BN, Stages, Passes) (over 48 KiB: the
// host raises the kernel's limit). Declare the kernel with
// __launch_bounds__(384, 1) (setmaxnreg needs it). Requires K % 4 == 0 (16
// byte rows) and 16-byte aligned x and w; M, N and K need not divide the
// tile. Compiles to nothing on other arches (the scheduler never picks it
// there).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WGMMA_CUH
#define KILN_WGMMA_CUH

#include "kiln/contraction.cuh"
#include "kiln/gemm.cuh"
#include "kiln/groupnorm.cuh"
#include "kiln/reduce.cuh"

namespace kiln {
// f16 and bf16 storage (kiln/half.cuh, which a kernel with such tensors
// includes; f32 kernels parse none of it).
struct f16;
struct bf16;
} // namespace kiln

namespace kiln {

template <int BN_, int Stages_, int Passes_, int GroupM_ = kWgmmaGroupM,
          int SplitW_ = kWgmmaSplitNone, bool TransposeW_ = false,
          int SplitK_ = 1>
struct WgmmaConfig {
  static constexpr int BM = kWgmmaBM, BN = BN_, BK = kWgmmaBK;
  static constexpr int kGroupM = GroupM_; // tileOrigin's band of row tiles
  static constexpr int kStages = Stages_, kPasses = Passes_;
  /// 3xTF32 with w split by every block before its tiles (wg::splitAll),
  /// into a workspace of w's big and small parts (WgmmaSplitW); the producer
  /// then copies both instead of splitting each tile's slices.
  static constexpr int kSplitW = SplitW_;
  /// w given as matmul's right operand, K x N: transposed before the tiles
  /// (wg::transposeAll, and split for 3xTF32) into the workspace, as often
  /// as SplitW says (EachLaunch or Flagged).
  static constexpr bool kTransposeW = TransposeW_;
  /// Split-K: each tile's K slices shared out over SplitK blocks, whose
  /// partial sums the last of them to finish adds up (wg::finishSplit)
  /// before the epilogue, in the WgmmaSplitK workspace.
  static constexpr int kSplitK = SplitK_;
  static_assert(SplitK_ >= 1, "split-K: one share or more");
  static_assert(!SplitW_ || Passes_ == 3 || TransposeW_,
                "only 3xTF32 splits w");
  static_assert(!TransposeW_ || SplitW_ != kWgmmaSplitNone,
                "a transposed w is made before the tiles");
  /// The producer copies w's parts from the workspace (not split per tile).
  static constexpr bool kPartsGiven = SplitW_ != kWgmmaSplitNone;
  static constexpr int kLag = Stages_ - 2; // slices the producer runs ahead
  /// Arrivals that free a slot: the lead lane of each consumer warp (its
  /// wgmma reads shared memory through the async proxy, complete at its
  /// wait), or, for 3xTF32, whose consumers read x's slice with ordinary
  /// loads, every consumer thread.
  static constexpr int kEmptyArrivals = Passes_ == 3 ? 256 : 8;
  static_assert(BN == 128 || BN == 256, "wgmma n");
  static_assert(Stages_ >= 3, "the ring needs a slice in flight");
  static_assert(Passes_ == 1 || Passes_ == 3, "TF32 or 3xTF32");
  static_assert(Passes_ == 1 || BN == 128, "3xTF32 keeps two accumulators");
  static constexpr int kABytes = BM * BK * 4, kBBytes = BN * BK * 4;
  /// One ring slot: x's and w's slices, then (3xTF32) w's small parts
  /// (x's are split in registers).
  static constexpr int kStageBytes = kABytes + kBBytes * (Passes_ == 3 ? 2 : 1);
  static_assert(wgmmaSharedBytes(BN_, Stages_, Passes_) ==
                    kStageBytes * Stages_ + kWgmmaAlign,
                "host and device agree on shared memory");
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 &&                          \
    defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KILN_HAS_WGMMA 1

namespace wg {

__device__ __forceinline__ unsigned smem(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// The first kWgmmaAlign-aligned byte of dynamic shared memory from s,
/// reached by arithmetic on s itself: the compiler then still knows that
/// loads through it read shared memory (ld.shared), where a round trip of
/// the address through an integer leaves generic loads, which wait in the
/// L1TEX path (ncu on L2_19's convolution: 48% of the warps' cycles).
__device__ __forceinline__ unsigned char *alignedShared(unsigned char *s) {
  return s + (kWgmmaAlign - smem(s) % kWgmmaAlign) % kWgmmaAlign;
}

__device__ __forceinline__ void barrierInit(u64 *b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)),
               "r"(count)
               : "memory");
}

__device__ __forceinline__ void barrierArrive(u64 *b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(b))
               : "memory");
}

/// Waits until phase `parity` of barrier b has completed.
__device__ __forceinline__ void barrierWait(u64 *b, unsigned parity) {
  unsigned done;
  do {
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(smem(b)), "r"(parity)
                 : "memory");
  } while (!done);
}

/// 16 bytes from global src to shared dst; zeros when !valid.
__device__ __forceinline__ void copy16(unsigned dst, const void *src,
                                       bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

/// Bytes (4, 8 or 16) from global src to shared dst; zeros when !valid.
template <int Bytes>
__device__ __forceinline__ void copyAsync(unsigned dst, const void *src,
                                          bool valid) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async sizes");
  if constexpr (Bytes == 16)
    copy16(dst, src, valid);
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst),
                 "l"(src), "n"(Bytes), "r"(valid ? Bytes : 0)
                 : "memory");
}

__device__ __forceinline__ void copyCommit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// Waits until at most N of this thread's copy groups are pending.
template <int N> __device__ __forceinline__ void copyWait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/// Makes this thread's shared-memory writes visible to wgmma (the async
/// proxy).
__device__ __forceinline__ void fenceAsyncProxy() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ float roundTf32(float v) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return __uint_as_float(r);
}

/// 3xTF32 multiplies x = bx + sx by w = bw + sw as bx*bw + bx*sw + sx*bw:
/// a small part meets only the other operand's big part, whose sign is its
/// value's and which is 0 only where its value is. So an infinity goes to
/// small, with big 0 (inf * w then keeps w's sign; in big it would also
/// meet w's small part, of either sign or 0: inf - inf or inf * 0, NaN).
/// Only inf * inf (an infinite x and w) gives NaN (0 * inf). splitOne is
/// one value's parts, each rounded to TF32 (as cvt.rna.tf32.f32): an
/// infinity, v's or that of finite v rounded past TF32's largest value, in
/// small with big 0; a NaN in small (big may be one too, and one whose
/// payload is in its low 13 bits alone reads as infinite in big).
__device__ __forceinline__ void splitOne(float v, float &big, float &small) {
  big = roundTf32(v);
  small = isfinite(big) ? roundTf32(v - big)
          : isnan(v)    ? __uint_as_float(0x7fc00000u)
                        : big;
  big = isinf(big) ? 0.f : big;
}

/// v's bits rounded to TF32 as cvt.rna.tf32.f32 rounds (to nearest, ties
/// away from zero), in two integer instructions where cvt.rna takes three
/// (a test that passes infinities and NaNs through, the add, the mask:
/// H200 SASS, bench/NOTES.md v49): for finite v only, and v past the
/// largest TF32 value becomes infinite.
__device__ __forceinline__ unsigned tf32Bits(float v) {
  return (__float_as_uint(v) + 0x1000u) & 0xffffe000u;
}

/// v as the tensor cores read a TF32 operand after cvt.rna.tf32.f32: half
/// of TF32's last place added to the bits, the 13 low ones left for the
/// tensor cores to drop, in two instructions (the NaN test and the add)
/// where cvt.rna takes three.
/// Finite values and infinities round as cvt.rna rounds them (past TF32's
/// largest value to infinity); a NaN stays as it is (the carry would take
/// one whose top mantissa bits are all set out of its exponent: 0x7fffffff
/// to -0). Only for operands that reach the tensor cores alone: the low
/// bits stay set.
__device__ __forceinline__ float tf32Operand(float v) {
  return isnan(v) ? v : __uint_as_float(__float_as_uint(v) + 0x1000u);
}

/// v = big + small, each element rounded to TF32 (as splitOne would, in
/// about half the instructions: the split bounds 3xTF32's convolutions,
/// bench/NOTES.md v31). An infinity, v's or that of finite v rounded past
/// the largest TF32 value, is small's with big 0, as in splitOne; a NaN v
/// leaves a NaN in small (one that survives the rounding; big may be one
/// too). Tested once per four (small is finite unless one of them is): a
/// test per element cost 50%.
__device__ __forceinline__ void split(const float4 &v, float4 &big,
                                      float4 &small) {
  big = make_float4(
      __uint_as_float(tf32Bits(v.x)), __uint_as_float(tf32Bits(v.y)),
      __uint_as_float(tf32Bits(v.z)), __uint_as_float(tf32Bits(v.w)));
  small = make_float4(v.x - big.x, v.y - big.y, v.z - big.z, v.w - big.w);
  if (!isfinite(small.x + small.y + small.z + small.w)) {
    // small is inf - inf (v infinite: big is v), -inf or inf (rounded past
    // TF32), or NaN (v NaN: a NaN whose bits survive tf32Bits).
    auto carry = [](float v, float &big, float &small) {
      if (isfinite(small))
        return;
      if (isnan(v)) {
        small = __uint_as_float(0x7fc00000u);
      } else {
        small = big;
        big = 0.f;
      }
    };
    carry(v.x, big.x, small.x), carry(v.y, big.y, small.y);
    carry(v.z, big.z, small.z), carry(v.w, big.w, small.w);
  }
  small = make_float4(
      __uint_as_float(tf32Bits(small.x)), __uint_as_float(tf32Bits(small.y)),
      __uint_as_float(tf32Bits(small.z)), __uint_as_float(tf32Bits(small.w)));
}

/// A fragment's four values split as split() does, into the bits of
/// wgmma's A operands (big's and small's registers in v's order).
__device__ __forceinline__ void
splitFragment(const float4 &v, unsigned (&big)[4], unsigned (&small)[4]) {
  float4 hi, lo;
  split(v, hi, lo);
  big[0] = __float_as_uint(hi.x), small[0] = __float_as_uint(lo.x);
  big[1] = __float_as_uint(hi.y), small[1] = __float_as_uint(lo.y);
  big[2] = __float_as_uint(hi.z), small[2] = __float_as_uint(lo.z);
  big[3] = __float_as_uint(hi.w), small[3] = __float_as_uint(lo.w);
}
/// The same for a fragment held as bits (a TF32 A operand's registers).
__device__ __forceinline__ void splitFragment(const unsigned (&a)[4],
                                              unsigned (&big)[4],
                                              unsigned (&small)[4]) {
  splitFragment(make_float4(__uint_as_float(a[0]), __uint_as_float(a[1]),
                            __uint_as_float(a[2]), __uint_as_float(a[3])),
                big, small);
}

/// Every block of the grid waits here for the others, after its writes
/// (the launch must be cooperative). `launches` counts the blocks'
/// arrivals over all launches and is never reset: a launch's blocks wait
/// for the next multiple of gridDim.x (every launch of a kernel has the
/// same grid, and launches on its workspace do not overlap). The release
/// and acquire make each block's writes visible to every block after it.
__device__ __forceinline__ void gridSync(unsigned long long *launches) {
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long old, now;
    asm volatile("atom.add.release.gpu.global.u64 %0, [%1], 1;"
                 : "=l"(old)
                 : "l"(launches)
                 : "memory");
    const unsigned long long target = (old / gridDim.x + 1) * gridDim.x;
    for (;;) {
      asm volatile("ld.acquire.gpu.global.u64 %0, [%1];"
                   : "=l"(now)
                   : "l"(launches)
                   : "memory");
      if (now >= target)
        break;
      __nanosleep(64);
    }
  }
  __syncthreads();
}

/// w's n floats (n % 4 == 0) split into big[n] and small[n] (`parts`), the
/// float4s shared out over every thread of the grid.
__device__ __forceinline__ void splitAll(const float *__restrict__ w,
                                         float *__restrict__ parts, i64 n) {
  const float4 *in = reinterpret_cast<const float4 *>(w);
  float4 *big = reinterpret_cast<float4 *>(parts);
  float4 *small = reinterpret_cast<float4 *>(parts + n);
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x;
       i < n / 4; i += static_cast<i64>(gridDim.x) * blockDim.x)
    split(in[i], big[i], small[i]);
}

/// b's `batches` matrices (each K x N, row-major: matmul's right operand)
/// transposed into out (N x K each, at the same offsets: the K-major w the
/// tiles read); with Split (f32), 3xTF32's parts instead: big in out, small
/// after all of them. Each warp moves 32 x 32 tiles through its own 32 x 33
/// elements of `scratch` (the ring), so that both
/// sides are coalesced: a lane loads its column of the tile's 32 rows at
/// once, so that each warp keeps 32 loads in flight (one tile a block at a
/// time, with a block barrier between, moved only about 0.35 TB/s).
template <bool Split, class E>
__device__ __forceinline__ void transposeAll(const E *__restrict__ b,
                                             E *__restrict__ out, int K, int N,
                                             int batches, E *scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  E *tile = scratch + warp * 32 * 33;
  const int tilesN = (N + 31) / 32, perMatrix = (K + 31) / 32 * tilesN;
  const i64 nk = static_cast<i64>(N) * K, all = nk * batches;
  const i64 tiles = static_cast<i64>(perMatrix) * batches;
  for (i64 t = static_cast<i64>(blockIdx.x) * warps + warp; t < tiles;
       t += static_cast<i64>(gridDim.x) * warps) {
    // Matrix t / perMatrix (at the same offset in b and out).
    const i64 base = t / perMatrix * nk;
    const int tm = static_cast<int>(t % perMatrix);
    const int k0 = tm / tilesN * 32, n0 = tm % tilesN * 32;
    E v[32];
#pragma unroll
    for (int r = 0; r < 32; ++r) {
      const int k = k0 + r, n = n0 + lane;
      v[r] = k < K && n < N ? b[base + static_cast<i64>(k) * N + n] : E();
    }
#pragma unroll
    for (int r = 0; r < 32; ++r)
      tile[r * 33 + lane] = v[r];
    __syncwarp();
#pragma unroll 8
    for (int r = 0; r < 32; ++r) {
      const int n = n0 + r, k = k0 + lane;
      if (n >= N || k >= K)
        continue;
      const E x = tile[lane * 33 + r];
      const i64 at = base + static_cast<i64>(n) * K + k;
      if constexpr (Split) {
        static_assert(sizeof(E) == 4, "3xTF32 splits f32");
        float big, small;
        splitOne(x, big, small);
        out[at] = big;
        out[all + at] = small;
      } else {
        out[at] = x;
      }
    }
    __syncwarp(); // the tile is read before the next is written
  }
}

/// A K-major operand tile in shared memory at `addr` whose rows of RowBytes
/// (128, 64 or 32) are swizzled by as many bytes (wgmma's layout types 1,
/// 2, 3), 8-row groups 8 RowBytes apart (and so aligned).
template <int RowBytes>
__device__ __forceinline__ u64 swizzledDescriptor(unsigned addr) {
  static_assert(RowBytes == 128 || RowBytes == 64 || RowBytes == 32,
                "128-, 64- or 32-byte swizzle");
  constexpr u64 layout = RowBytes == 128 ? 1 : RowBytes == 64 ? 2 : 3;
  return static_cast<u64>((addr & 0x3FFFF) >> 4) | (u64(1) << 16) |
         (u64(8 * RowBytes >> 4) << 32) | (layout << 62);
}

/// Rows of 128 bytes (the linear's tiles and the kept conv weight).
__device__ __forceinline__ u64 descriptor(unsigned addr) {
  return swizzledDescriptor<128>(addr);
}

/// Where 16-byte chunk `chunk` of row `row` lies in its row (a chunk
/// index) in swizzledDescriptor<RowBytes>'s layout: xor the row's place in
/// the swizzle's 1024-byte period, row % 8 for 128-byte rows, row / 2 % 4
/// for 64, row / 4 % 2 for 32.
template <int RowBytes>
__device__ __forceinline__ constexpr int swizzledChunk(int chunk, int row) {
  return chunk ^ (row / (128 / RowBytes) % (RowBytes / 16));
}

__device__ __forceinline__ void mmaFence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void mmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void mmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// Keeps the compiler from moving accesses of `r` across a wgmma fence or
/// wait.
template <int R> __device__ __forceinline__ void pin(float (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
    asm volatile("" : "+f"(r[i])::"memory");
}
template <int R> __device__ __forceinline__ void pin(unsigned (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
    asm volatile("" : "+r"(r[i])::"memory");
}

// The accumulator operands of an m64nN wgmma (N / 2 floats a thread): the
// register lists, and the constraints of 64 of them from d[o].
#define KILN_WGMMA_D64                                                         \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "     \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "     \
  "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "     \
  "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "     \
  "%58, %59, %60, %61, %62, %63"
#define KILN_WGMMA_D128                                                        \
  KILN_WGMMA_D64                                                               \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, "        \
  "%77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, "     \
  "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, "      \
  "%104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, "         \
  "%115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, "         \
  "%126, %127"
#define KILN_WGMMA_OUT128(d) KILN_WGMMA_OUT64(d, 0), KILN_WGMMA_OUT64(d, 64)
#define KILN_WGMMA_OUT64(d, o)                                                 \
  "+f"(d[o + 0]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]),              \
      "+f"(d[o + 4]), "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7]),          \
      "+f"(d[o + 8]), "+f"(d[o + 9]), "+f"(d[o + 10]), "+f"(d[o + 11]),        \
      "+f"(d[o + 12]), "+f"(d[o + 13]), "+f"(d[o + 14]), "+f"(d[o + 15]),      \
      "+f"(d[o + 16]), "+f"(d[o + 17]), "+f"(d[o + 18]), "+f"(d[o + 19]),      \
      "+f"(d[o + 20]), "+f"(d[o + 21]), "+f"(d[o + 22]), "+f"(d[o + 23]),      \
      "+f"(d[o + 24]), "+f"(d[o + 25]), "+f"(d[o + 26]), "+f"(d[o + 27]),      \
      "+f"(d[o + 28]), "+f"(d[o + 29]), "+f"(d[o + 30]), "+f"(d[o + 31]),      \
      "+f"(d[o + 32]), "+f"(d[o + 33]), "+f"(d[o + 34]), "+f"(d[o + 35]),      \
      "+f"(d[o + 36]), "+f"(d[o + 37]), "+f"(d[o + 38]), "+f"(d[o + 39]),      \
      "+f"(d[o + 40]), "+f"(d[o + 41]), "+f"(d[o + 42]), "+f"(d[o + 43]),      \
      "+f"(d[o + 44]), "+f"(d[o + 45]), "+f"(d[o + 46]), "+f"(d[o + 47]),      \
      "+f"(d[o + 48]), "+f"(d[o + 49]), "+f"(d[o + 50]), "+f"(d[o + 51]),      \
      "+f"(d[o + 52]), "+f"(d[o + 53]), "+f"(d[o + 54]), "+f"(d[o + 55]),      \
      "+f"(d[o + 56]), "+f"(d[o + 57]), "+f"(d[o + 58]), "+f"(d[o + 59]),      \
      "+f"(d[o + 60]), "+f"(d[o + 61]), "+f"(d[o + 62]), "+f"(d[o + 63])

/// One wgmma.mma_async with both operands from shared memory (K-major
/// descriptors) and the accumulators `acc`: SHAPE is the shape and types,
/// A, B and P the operand numbers of descA, descB and `accumulate`, TAIL
/// what follows the scales (the transposes, 0 0, for f16 and bf16).
#define KILN_WGMMA_SS(SHAPE, ACC, OUTS, A, B, P, TAIL)                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" P ", 0;\n"                 \
               "wgmma.mma_async.sync.aligned." SHAPE " {" ACC "}, %" A ", %" B \
               ", p, 1, 1" TAIL ";\n}\n"                                       \
               : OUTS                                                          \
               : "l"(descA), "l"(descB), "r"(accumulate))

/// The operand kinds of the wgmma template: TF32 from f32 storage (8 of K an
/// instruction), bf16 and f16 (16 of K). Every kind reads 32 bytes of each
/// 128-byte K row an instruction.
enum WgmmaKind { kWgmmaTf32, kWgmmaBf16, kWgmmaF16 };
template <class T> struct WgmmaElem;
template <> struct WgmmaElem<float> {
  static constexpr WgmmaKind kind = kWgmmaTf32;
};
template <> struct WgmmaElem<bf16> {
  static constexpr WgmmaKind kind = kWgmmaBf16;
};
template <> struct WgmmaElem<f16> {
  static constexpr WgmmaKind kind = kWgmmaF16;
};

/// d[BN / 2] (+)= A * B, m64nBN of kind Kind, both operands from shared
/// memory.
template <WgmmaKind Kind, int BN>
__device__ __forceinline__ void wgmmaSS(float (&d)[BN / 2], u64 descA,
                                        u64 descB, int accumulate) {
  static_assert(BN == 128 || BN == 256, "wgmma n");
  if constexpr (BN == 128 && Kind == kWgmmaTf32)
    KILN_WGMMA_SS("m64n128k8.f32.tf32.tf32", KILN_WGMMA_D64,
                  KILN_WGMMA_OUT64(d, 0), "64", "65", "66", "");
  else if constexpr (BN == 128 && Kind == kWgmmaBf16)
    KILN_WGMMA_SS("m64n128k16.f32.bf16.bf16", KILN_WGMMA_D64,
                  KILN_WGMMA_OUT64(d, 0), "64", "65", "66", ", 0, 0");
  else if constexpr (BN == 128)
    KILN_WGMMA_SS("m64n128k16.f32.f16.f16", KILN_WGMMA_D64,
                  KILN_WGMMA_OUT64(d, 0), "64", "65", "66", ", 0, 0");
  else if constexpr (Kind == kWgmmaTf32)
    KILN_WGMMA_SS("m64n256k8.f32.tf32.tf32", KILN_WGMMA_D128,
                  KILN_WGMMA_OUT128(d), "128", "129", "130", "");
  else if constexpr (Kind == kWgmmaBf16)
    KILN_WGMMA_SS("m64n256k16.f32.bf16.bf16", KILN_WGMMA_D128,
                  KILN_WGMMA_OUT128(d), "128", "129", "130", ", 0, 0");
  else
    KILN_WGMMA_SS("m64n256k16.f32.f16.f16", KILN_WGMMA_D128,
                  KILN_WGMMA_OUT128(d), "128", "129", "130", ", 0, 0");
}

/// d[64] (+)= A * B, m64n128k8 TF32, A from registers (a0..a3 of this
/// thread: rows g and g + 8, columns t and t + 4 of its warp's 16 rows,
/// g = lane / 4, t = lane % 4), B from shared memory.
__device__ __forceinline__ void wgmmaTf32RsN128(float (&d)[64],
                                                const unsigned (&a)[4],
                                                u64 descB, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
               "{" KILN_WGMMA_D64 "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
               : KILN_WGMMA_OUT64(d, 0)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB),
                 "r"(accumulate));
}

/// The tile `tile` of y. Tiles go in bands of GroupM row tiles: down a
/// band's column of tiles, then to its next column, then to the next band.
/// The blocks running at once then share both x's rows (GroupM tiles) and
/// w's rows (a few columns) in L2: with one band over all rows (row tiles
/// first) x is read again for every column, with a band of one row tile w
/// for every row.
/// Batched (a matmul's batch dims), the tiles of batch t come before
/// those of batch t + 1.
template <int M, int N, class Cfg>
__device__ __forceinline__ void tileOrigin(int tile, int &t, int &m0, int &n0) {
  constexpr int tilesM = (M + Cfg::BM - 1) / Cfg::BM;
  constexpr int tilesN = (N + Cfg::BN - 1) / Cfg::BN;
  t = tile / (tilesM * tilesN);
  tile -= t * (tilesM * tilesN);
  constexpr int G = Cfg::kGroupM < tilesM ? Cfg::kGroupM : tilesM;
  constexpr int perBand = G * tilesN;
  const int firstM = tile / perBand * G;
  const int rows = tilesM - firstM < G ? tilesM - firstM : G;
  const int inBand = tile % perBand;
  m0 = (firstM + inBand % rows) * Cfg::BM;
  n0 = inBand / rows * Cfg::BN;
}

/// Share `share` of T slices split SplitK ways: `count` slices from
/// `first` (T / SplitK each, one more for the first T % SplitK shares; a
/// count known at compile time where SplitK divides T).
template <int T, int SplitK>
__device__ __forceinline__ void shareOf(int share, int &first, int &count) {
  constexpr int each = T / SplitK, more = T % SplitK;
  first = share * each + (share < more ? share : more);
  count = each + (more != 0 && share < more ? 1 : 0);
}

/// The producer warpgroup: fills the ring with the K slices of x (rows
/// m0...) and w (rows n0...) of each of this block's work items in turn (a
/// tile's share of its K slices: all of them without split-K), splits them
/// (Passes 3), and marks them full. The slices of the next item are copied
/// while the consumers run the last one's epilogue.
template <class Shape, class Cfg, class Batch, class E>
__device__ __forceinline__ void
produce(const E *__restrict__ x, const E *__restrict__ w,
        const E *__restrict__ wSmall, unsigned char *ring, u64 *full,
        u64 *empty, int items) {
  constexpr int M = Shape::M, N = Shape::N, K = Shape::K;
  constexpr int S = Cfg::kStages, Lag = Cfg::kLag;
  // A slice is 128 bytes of each row: 32 of K in f32, 64 in f16 or bf16;
  // a thread's 16-byte chunk holds CE of K.
  constexpr int SK = 128 / sizeof(E), CE = 16 / sizeof(E);
  constexpr int T = (K + SK - 1) / SK;
  constexpr int RowsA = Cfg::BM / 16, RowsB = Cfg::BN / 16;
  const int p = threadIdx.x;
  const int chunk = p % 8, row0 = p / 8; // rows row0 + 16 i
  const unsigned inRow = static_cast<unsigned>(
      row0 * 128 + (swizzledChunk<128>(chunk, row0) << 4));
  const unsigned base = smem(ring);
  // Slice u (counted over all of this block's tiles) has landed: split it
  // and mark it full.
  auto finish = [&](int u) {
    const int s = u % S;
    copyWait<Lag>();
    if constexpr (Cfg::kPasses == 3 && !Cfg::kPartsGiven) {
      // Split the chunks of w this thread copied: big in place, small
      // beside (x is split in the consumers' registers).
      unsigned char *slot = ring + s * Cfg::kStageBytes + Cfg::kABytes + inRow;
#pragma unroll 8
      for (int i = 0; i < RowsB; ++i) {
        float4 *big = reinterpret_cast<float4 *>(slot + i * 2048);
        float4 *small =
            reinterpret_cast<float4 *>(slot + i * 2048 + Cfg::kBBytes);
        float4 hi, lo;
        split(*big, hi, lo);
        *big = hi;
        *small = lo;
      }
    }
    fenceAsyncProxy();
    barrierArrive(&full[s]);
  };
  int it = 0; // slices issued
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    const int tile = item / Cfg::kSplitK, share = item % Cfg::kSplitK;
    int t, m0, n0;
    tileOrigin<M, N, Cfg>(tile, t, m0, n0);
    // Batch t's matrices (a transposed w at b's offsets).
    i64 offA = 0, offB = 0;
    if constexpr (Batch::kCount > 1)
      Batch::offsets(t, offA, offB);
    // This thread's rows of x and w inside the operands: rows row0 + 16 i
    // for i < rowsA (rowsB): one count each, not a predicate per row.
    const int rowsA = M % Cfg::BM == 0 ? RowsA : (M - m0 - row0 + 15) / 16;
    const int rowsB = N % Cfg::BN == 0 ? RowsB : (N - n0 - row0 + 15) / 16;
    const E *xs = x + offA + static_cast<i64>(m0 + row0) * K + chunk * CE;
    const E *ws = w + offB + static_cast<i64>(n0 + row0) * K + chunk * CE;
    int first, count;
    shareOf<T, Cfg::kSplitK>(share, first, count);
    for (int u = first; u < first + count; ++u, ++it) {
      const int s = it % S;
      if (it >= S)
        barrierWait(&empty[s], (it / S - 1) & 1);
      const unsigned a = base + s * Cfg::kStageBytes + inRow;
      const unsigned b = a + Cfg::kABytes;
      const int k = u * SK;
      const bool kIn = K % SK == 0 || k + chunk * CE < K;
      // Rows and columns outside the operands are zero-filled and read
      // nothing (the source pointer then stays inside the operand).
#pragma unroll
      for (int i = 0; i < RowsA; ++i) {
        const bool in = kIn && i < rowsA;
        copy16(a + i * 2048, in ? xs + static_cast<i64>(16 * i) * K + k : x,
               in);
      }
#pragma unroll
      for (int i = 0; i < RowsB; ++i) {
        const bool in = kIn && i < rowsB;
        copy16(b + i * 2048, in ? ws + static_cast<i64>(16 * i) * K + k : w,
               in);
        if constexpr (Cfg::kPasses == 3 && Cfg::kPartsGiven)
          copy16(b + Cfg::kBBytes + i * 2048,
                 in ? ws - w + wSmall + static_cast<i64>(16 * i) * K + k
                    : wSmall,
                 in);
      }
      copyCommit();
      if (it >= Lag)
        finish(it - Lag);
    }
  }
  // The last Lag slices; empty groups keep copyWait's count uniform.
  for (int d = 0; d < Lag; ++d, ++it) {
    copyCommit();
    if (it >= Lag)
      finish(it - Lag);
  }
}

/// x's part of this thread in one K slice, as 3xTF32's A operands in
/// registers (wgmmaTf32RsN128's layout): big[ks] and small[ks] for each
/// 8-wide step. `rows` is the slice's row g of this warp (row g + 8 is
/// 1024 bytes on); chunks are swizzled by g, as the producer wrote them.
__device__ __forceinline__ void splitFragments(const unsigned char *rows, int g,
                                               int tq, unsigned (&big)[4][4],
                                               unsigned (&small)[4][4]) {
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
    // Register r: row g + 8 (r % 2), column 8 ks + tq + 4 (r / 2).
    auto at = [&](int r) {
      return *reinterpret_cast<const float *>(
          rows + (r & 1) * 1024 + (((2 * ks + (r >> 1)) ^ g) << 4) + tq * 4);
    };
    splitFragment(make_float4(at(0), at(1), at(2), at(3)), big[ks], small[ks]);
  }
}

/// One consumer warpgroup: rows [64 c, 64 c + 64) of the tile, the sum
/// over the item's share of K left in acc.
/// Passes 1: both operands from shared memory.
/// Passes 3: x's part is split in registers (splitFragments), w's big and
/// small parts come from shared memory; each slice's small*big + big*small
/// + big*big accumulate in acc from zero and are added into `total` in
/// fp32 (kWgmmaPromoteK). (A separate accumulator for the small products
/// was a little more accurate, but with x in registers it does not fit.)
template <class Shape, class Cfg, class E>
__device__ __forceinline__ void
consume(unsigned char *ring, u64 *full, u64 *empty, int c, int &it, int share,
        float (&acc)[Cfg::BN / 2], float (&total)[Cfg::BN / 2]) {
  constexpr int K = Shape::K, S = Cfg::kStages;
  constexpr int SK = 128 / sizeof(E); // of K in a slice (produce)
  constexpr int T = (K + SK - 1) / SK;
  static_assert(Cfg::kSplitK <= T, "every share of K has a slice");
  // The item's slices (produce's): share `share` of split-K's.
  int first, count;
  shareOf<T, Cfg::kSplitK>(share, first, count);
  (void)first;
  static_assert(kWgmmaPromoteK == Cfg::BK, "3xTF32 promotes every slice");
  static_assert(Cfg::BK == 32, "splitFragments reads four 8-wide steps");
  const int lane = threadIdx.x % 32, q = threadIdx.x / 32 % 4;
  const bool leader = lane == 0;
  int held = -1; // Passes 1: the slot still read by the wgmma in flight
  // `it` counts the slices over all of this block's tiles (the ring's
  // phases run on across tiles).
  for (int t = 0; t < count; ++t, ++it) {
    const int s = it % S;
    barrierWait(&full[s], (it / S) & 1);
    const unsigned a = smem(ring) + s * Cfg::kStageBytes + c * 64 * 128;
    const unsigned b = smem(ring) + s * Cfg::kStageBytes + Cfg::kABytes;
    if constexpr (Cfg::kPasses == 3) {
      unsigned big[4][4], small[4][4];
      splitFragments(ring + s * Cfg::kStageBytes +
                         (c * 64 + q * 16 + lane / 4) * 128,
                     lane / 4, lane % 4, big, small);
      pin(acc);
      mmaFence();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        const u64 db = descriptor(b) + 2 * ks;
        const u64 dbSmall = descriptor(b + Cfg::kBBytes) + 2 * ks;
        wgmmaTf32RsN128(acc, small[ks], db, ks != 0);
        wgmmaTf32RsN128(acc, big[ks], dbSmall, 1);
        wgmmaTf32RsN128(acc, big[ks], db, 1);
      }
      mmaCommit();
      mmaWait<0>(); // the fragments and acc are free again
      pin(acc);
      // Every thread frees the slot (kEmptyArrivals): an arrival releases
      // only its own thread's reads of x's slice (splitFragments), and the
      // producer's next copies into the slot must come after all of them.
      barrierArrive(&empty[s]);
#pragma unroll
      for (int i = 0; i < Cfg::BN / 2; ++i)
        total[i] += acc[i];
    } else {
      pin(acc);
      mmaFence();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        // An instruction's K (8 in TF32, 16 in f16 and bf16) is 32 bytes
        // along the swizzled row: 2 in descriptor units.
        wgmmaSS<WgmmaElem<E>::kind, Cfg::BN>(acc, descriptor(a) + 2 * ks,
                                             descriptor(b) + 2 * ks,
                                             t != 0 || ks != 0);
      }
      mmaCommit();
      mmaWait<1>(); // the previous slice's products are done
      if (held >= 0 && leader)
        barrierArrive(&empty[held]);
      held = s;
    }
  }
  mmaWait<0>();
  pin(acc);
  if (held >= 0 && leader)
    barrierArrive(&empty[held]);
  if constexpr (Cfg::kPasses == 3) {
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; ++i)
      acc[i] = total[i];
  }
}

} // namespace wg
#endif

/// What follows the products in a wgmmaLinear (the fused epilogue):
///   pre(ii, v, live)
///                v[Vec] = y[ii .. ii + Vec) (bias added, ii = m * N + n):
///                the elementwise nodes after the linear, storing what the
///                group writes, and leaving in v what the GroupNorm reads;
///   GroupNorm    when GroupCols > 0: each row's GroupCols-column groups,
///                normalised in registers (the groups lie in one tile);
///   post(ii, v, live)
///                v = the normalised values: the affine, the nodes after,
///                the stores (not called when GroupCols == 0).
/// Without a GroupNorm, pre runs for a tile's elements past y's edges too,
/// with live false and ii 0: it must store nothing then. So no branch
/// guards its loads (a residual input's), which the compiler then issues
/// many at a time, as it does where the tiles divide y (bench/NOTES.md
/// v38: with a branch, one at a time, each waited for). With one, pre and
/// post see only y's elements (live true).
/// Vec is 8 for f16 and bf16 without a GroupNorm where 8 divides N (runs of
/// 8 columns, 16 bytes), else 2 where N is even (pairs of columns), else 1.
template <int Vec, int GroupCols> struct WgmmaEpilogue {
  static constexpr int kVec = Vec, kGroupCols = GroupCols;
};

/// The epilogue that stores y = x w^T (+ bias) and nothing else (rounded
/// to E).
template <class E> struct StoreLinear {
  E *y;
  template <int Vec>
  __device__ __forceinline__ void operator()(i64 ii, float (&v)[Vec],
                                             bool live = true) const {
    if (live)
      storeVec<Vec>(y + ii, v);
  }
};
template <class E> StoreLinear(E *) -> StoreLinear<E>;

/// A fused row reduction (the group's tail: a min, max, sum, mean or
/// logsumexp over the last dims of the epilogue's last values, each key
/// gathering RowsPerKey whole rows of N). The epilogue's last stage (`post`
/// with a GroupNorm, else `pre`) leaves the tail's operand in v; the
/// template gathers each of a thread's two rows (mTop, mTop + 8) over a
/// tile (wg::RowAcc) and combines them over the quad that shares the rows.
/// Then one lane of the quad adds a min or max to keys[row / RowsPerKey]
/// with an atomic (tailKey's order), or stores the tile's partial for the
/// row in `parts` ([column tile][row]: a double sum, or logsumexp's max and
/// sum of exponentials); after a grid barrier wgmmaTailFinish combines the
/// partials in order (deterministic) into keys[] as floats.
template <ReduceOp Op, int RowsPerKey> struct WgmmaTail {
  static constexpr bool kActive = true;
  static constexpr ReduceOp kOp = Op;
  static constexpr int kRowsPerKey = RowsPerKey;
  unsigned *keys;
  void *parts = nullptr; // sum, mean, logsumexp
};

/// No tail (kOp only names the unused RowAcc's type).
struct NoTail {
  static constexpr bool kActive = false;
  static constexpr ReduceOp kOp = ReduceOp::Max;
};

/// Logsumexp's running state as reduce.cuh computes it: m the max (NaN
/// when any value is), s = sum of exp(x - shift(m)), shift(m) = m, or 0
/// where m is infinite.
struct LseState {
  float m = -KILN_INFINITY, s = 0.f;
  static __device__ __forceinline__ float shift(float m) {
    return isinf(m) ? 0.f : m;
  }
  __device__ __forceinline__ void merge(float m2, float s2) {
    const float top = nanMax(m, m2);
    if (top != top) {
      m = top;
      return;
    }
    const float to = shift(top);
    // An empty side (s 0) adds nothing (its exp could overflow: 0 * inf).
    s = (s != 0.f ? s * expf(shift(m) - to) : 0.f) +
        (s2 != 0.f ? s2 * expf(shift(m2) - to) : 0.f);
    m = top;
  }
  __device__ __forceinline__ void add(float x) {
    merge(x, isinf(x) ? (x > 0 ? x : 0.f) : 1.f);
  }
};

/// A sum, mean or logsumexp tail after the tiles and a grid barrier: each
/// of the Rows / RowsPerKey keys combines the partials of its rows, column
/// tile by column tile, in that order (the same result every run), and
/// stores its value's bits in keys[] (mean: over Count values). A min or
/// max's keys are final already. Every thread of `Team` calls it.
template <class Team, long long Rows, int Tiles, long long Count, class Tail>
__device__ __forceinline__ void wgmmaTailFinish(const Tail &tail) {
  constexpr ReduceOp Op = Tail::kOp;
  if constexpr (Op != ReduceOp::Min && Op != ReduceOp::Max) {
    constexpr long long R = Tail::kRowsPerKey, keys = Rows / R;
    for (long long k = static_cast<long long>(blockIdx.x) * Team::threads() +
                       Team::thread();
         k < keys; k += static_cast<long long>(gridDim.x) * Team::threads()) {
      float value;
      if constexpr (Op == ReduceOp::LogSumExp) {
        const float2 *p = static_cast<const float2 *>(tail.parts);
        LseState st;
        for (long long r = k * R; r < (k + 1) * R; ++r)
          for (int t = 0; t < Tiles; ++t) {
            const float2 v = __ldcg(p + t * Rows + r);
            st.merge(v.x, v.y);
          }
        value = st.m != st.m ? st.m : logf(st.s) + LseState::shift(st.m);
      } else {
        const double *p = static_cast<const double *>(tail.parts);
        double sum = 0;
        for (long long r = k * R; r < (k + 1) * R; ++r)
          for (int t = 0; t < Tiles; ++t)
            sum += __ldcg(p + t * Rows + r);
        value = static_cast<float>(Op == ReduceOp::Sum ? sum : sum / Count);
      }
      tail.keys[k] = __float_as_uint(value);
    }
  }
}

/// The consumer warpgroups of a wgmmaLinear block (threads 128 to 383), as
/// a gridBarrier / tailRestore team: the producer has returned by the tail.
/// Named barrier 1 (__syncthreads is 0).
struct WgmmaConsumers {
  static __device__ __forceinline__ void sync() {
    asm volatile("bar.sync 1, 256;" ::: "memory");
  }
  static __device__ __forceinline__ bool leader() { return threadIdx.x == 128; }
  static __device__ __forceinline__ int thread() { return threadIdx.x - 128; }
  static __device__ __forceinline__ int threads() { return 256; }
};

/// T, in a parameter that takes no part in deducing T.
template <class T> struct NoDeduce { using type = T; };

/// Passed as `post` when there is no GroupNorm.
struct NoPost {
  template <int Vec>
  __device__ __forceinline__ void operator()(i64, float (&)[Vec],
                                             bool = true) const {}
};

/// Split-K's workspace (WgmmaConfig's SplitK > 1): each item's partial
/// sums (SplitK per tile, each 256 consumer threads' BN / 2 floats, as
/// float4s a thread apart), and a count of arrivals per tile (zero when
/// allocated, never reset: a launch adds SplitK to each).
struct WgmmaSplitK {
  float *parts = nullptr;
  unsigned long long *arrivals = nullptr;
};

#ifdef KILN_HAS_WGMMA
namespace wg {

/// A thread's gathering of one row's values of a tile for a tail (Op), and
/// its quad's combination (lanes 4 apart hold other columns of the row).
template <ReduceOp Op> struct RowAcc {
  unsigned key = 0; // min, max: tailKey's order
  double sum = 0;   // sum, mean
  LseState lse;     // logsumexp
  __device__ __forceinline__ void add(float x) {
    if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
      const unsigned k = tailKey<Op == ReduceOp::Min>(x);
      key = k > key ? k : key;
    } else if constexpr (Op == ReduceOp::LogSumExp) {
      lse.add(x);
    } else {
      sum += x;
    }
  }
  /// Every lane of the warp calls it.
  __device__ __forceinline__ void quad() {
#pragma unroll
    for (int d = 1; d < 4; d *= 2) {
      if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
        const unsigned o = __shfl_xor_sync(0xffffffffu, key, d);
        key = o > key ? o : key;
      } else if constexpr (Op == ReduceOp::LogSumExp) {
        const float om = __shfl_xor_sync(0xffffffffu, lse.m, d);
        const float os = __shfl_xor_sync(0xffffffffu, lse.s, d);
        lse.merge(om, os);
      } else {
        sum += __shfl_xor_sync(0xffffffffu, sum, d);
      }
    }
  }
  /// Row `row`'s part from column tile `tile` of `tiles`, over `rows` rows.
  template <class Tail>
  __device__ __forceinline__ void put(const Tail *tail, i64 row, int tile,
                                      i64 rows) const {
    if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max)
      atomicMax(tail->keys + row / Tail::kRowsPerKey, key);
    else if constexpr (Op == ReduceOp::LogSumExp)
      static_cast<float2 *>(tail->parts)[tile * rows + row] =
          make_float2(lse.m, lse.s);
    else
      static_cast<double *>(tail->parts)[tile * rows + row] = sum;
  }
};

/// One butterfly stage over a quad (lanes D apart, D = 1 or 2): for each
/// pair (e[i], e[i + D]) with i & D clear, the lower lane (tq & D clear)
/// keeps e[i] and puts its partner's e[i] in e[i + D]; the upper keeps
/// e[i + D] and puts its partner's e[i + D] in e[i]. Lane bit D and element
/// bit D trade places: stages 2 then 1 make a 4 x 4 transpose (lane tq's
/// e[j] becomes lane j's e[tq]). Every lane of the warp calls it.
template <int D>
__device__ __forceinline__ void quadExchange(float2 (&e)[4], int tq) {
  const bool upper = (tq & D) != 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (i & D)
      continue;
    const float2 send = upper ? e[i] : e[i + D];
    float2 got;
    got.x = __shfl_xor_sync(0xffffffffu, send.x, D);
    got.y = __shfl_xor_sync(0xffffffffu, send.y, D);
    if (upper)
      e[i] = got;
    else
      e[i + D] = got;
  }
}

/// Split-K: this block's sums over share `share` of tile `tile`'s K (acc)
/// go to the workspace; the last of the tile's SplitK blocks to arrive
/// (the arrivals count, after a fence) adds all the shares in order into
/// acc (the same result every run) and returns true, to run the epilogue;
/// the others return false. Every consumer thread calls it.
template <int SplitK, int BN>
__device__ __forceinline__ bool finishSplit(float (&acc)[BN / 2],
                                            const WgmmaSplitK &work, int tile,
                                            int share) {
  constexpr int V = BN / 8; // a thread's float4s
  const int ct = WgmmaConsumers::thread(), threads = WgmmaConsumers::threads();
  float4 *parts = reinterpret_cast<float4 *>(work.parts) +
                  static_cast<i64>(tile) * SplitK * V * threads + ct;
#pragma unroll
  for (int i = 0; i < V; ++i)
    parts[(share * V + i) * threads] =
        make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
  __threadfence();
  WgmmaConsumers::sync();
  __shared__ bool lastOne;
  if (WgmmaConsumers::leader())
    lastOne = atomicAdd(work.arrivals + tile, 1ull) % SplitK == SplitK - 1;
  WgmmaConsumers::sync();
  if (!lastOne)
    return false;
  __threadfence();
  // Every share from L2 (written during this launch), this block's too:
  // the order is the shares', whichever block adds them. Eight float4s at
  // a time, share after share (a loop: unrolled, NVRTC took 2 s; all of a
  // share's float4s at once spilled).
#pragma unroll
  for (int i0 = 0; i0 < V; i0 += 8) {
#pragma unroll 1
    for (int s = 0; s < SplitK; ++s) {
#pragma unroll
      for (int i = i0; i < i0 + 8; ++i) {
        const float4 p = __ldcg(parts + (s * V + i) * threads);
        float *a = acc + 4 * i;
        if (s == 0) // not 0 + p: -0 stays -0
          a[0] = p.x, a[1] = p.y, a[2] = p.z, a[3] = p.w;
        else
          a[0] += p.x, a[1] += p.y, a[2] += p.z, a[3] += p.w;
      }
    }
  }
  return true;
}

/// The epilogue over one consumer's accumulators (rows mTop + 8 h of the
/// tile, columns n0 + 8 j + 2 (lane % 4) + e: accumulator 4 j + 2 h + e),
/// a block of J 8-column steps at a time: a GroupNorm group's (J = G / 8),
/// or all of them without one. A block's values are finished (normalised,
/// stored) before the next block's elementwise nodes start, which bounds
/// the registers the compiler's scheduling may hold at once.
template <int M, int N, class Cfg, class Epi, bool HasBias, class E, class Pre,
          class Post, class Tail>
__device__ __forceinline__ void
epilogue(float (&acc)[Cfg::BN / 2], i64 rowBase, int m0, int n0, int c,
         const E *__restrict__ bias, Pre &pre, Post &post, float eps,
         const Tail *tail, i64 rows) {
  constexpr int Vec = Epi::kVec, G = Epi::kGroupCols;
  // The tail's gathering of the thread's two rows (WgmmaTail).
  RowAcc<Tail::kOp> ta[2];
  auto addKeys = [&](int h, const float *v, int count) {
    if constexpr (Tail::kActive) {
#pragma unroll
      for (int l = 0; l < Vec; ++l)
        if (l < count)
          ta[h].add(v[l]);
    }
  };
  static_assert(Vec >= 4   ? N % Vec == 0 && G == 0 && Vec * sizeof(E) == 16
                : Vec == 2 ? N % 2 == 0
                           : Vec == 1,
                "runs of 16 bytes (no GroupNorm) and pairs need N to divide");
  static_assert(G == 0 || (Cfg::BN % (G > 0 ? G : 1) == 0 && G % 8 == 0),
                "a group lies in the tile, over whole 8-column blocks");
  constexpr int J = G > 0 ? G / 8 : Cfg::BN / 8; // steps per block
  const int lane = threadIdx.x % 32, q = threadIdx.x / 32 % 4;
  const int mTop = m0 + c * 64 + q * 16 + lane / 4;
  if constexpr (Vec == 8) {
    // Runs of 8 columns (f16, bf16: 16 bytes): over each group of four
    // 8-column steps the quad transposes its values (quadExchange 2, then
    // 1), so that lane tq holds step j0 + tq's 8 columns of its rows and
    // the quad's four runs are 64 contiguous bytes of a row. Pairs stored
    // 4 bytes a lane, and the stores took a quarter of a bf16 GEMM's time
    // at K = 1024. (f32 gains nothing from runs of 4: its pairs already
    // fill 32-byte sectors.)
    const int tq = lane % 4;
#pragma unroll
    for (int j0 = 0; j0 < Cfg::BN / 8; j0 += 4) {
      float2 e[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          e[h][j] = make_float2(acc[4 * (j0 + j) + 2 * h],
                                acc[4 * (j0 + j) + 2 * h + 1]);
        quadExchange<2>(e[h], tq);
        quadExchange<1>(e[h], tq);
      }
      const int n = n0 + 8 * (j0 + tq);
      const bool colIn = N % Cfg::BN == 0 || n < N;
      float b[8] = {};
      if (HasBias)
        loadVec<8>(bias + (colIn ? n : 0), b);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = mTop + 8 * h;
        const bool in = colIn && (M % Cfg::BM == 0 || m < M);
        float v[8];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          v[2 * i] = e[h][i].x + b[2 * i],
                v[2 * i + 1] = e[h][i].y + b[2 * i + 1];
        pre(in ? (rowBase + m) * N + n : 0, v, in);
        addKeys(h, v, in ? 8 : 0);
      }
    }
  } else {
#pragma unroll
    for (int j0 = 0; j0 < Cfg::BN / 8; j0 += J) {
      // The elementwise nodes, pair by pair; bias pairs loaded once for both
      // rows. Columns beyond N: a whole block (groups lie in the tile), or,
      // without a GroupNorm, single steps.
#pragma unroll
      for (int j = j0; j < j0 + J; ++j) {
        const int n = n0 + 8 * j + 2 * (lane % 4);
        const bool colIn = N % Cfg::BN == 0 || n < N;
        const bool pair = N % Cfg::BN == 0 || n + 1 < N;
        const float b0 = HasBias ? toFloat(bias[colIn ? n : 0]) : 0.f;
        const float b1 = HasBias && pair ? toFloat(bias[n + 1]) : 0.f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int m = mTop + 8 * h;
          const bool in = colIn && (M % Cfg::BM == 0 || m < M);
          // With a GroupNorm, the elements past y's edges are left out
          // (pre, the statistics and post then keep their registers:
          // without the branch, L2_62's kernel at 1000 rows spilled).
          if constexpr (G > 0)
            if (!in)
              continue;
          float &a0 = acc[4 * j + 2 * h], &a1 = acc[4 * j + 2 * h + 1];
          const i64 ii = in ? (rowBase + m) * N + n : 0;
          constexpr bool keys = G == 0; // pre is the last stage
          if constexpr (Vec == 2) {
            float v[2] = {a0 + b0, a1 + b1};
            pre(ii, v, in);
            if constexpr (keys)
              addKeys(h, v, in ? 2 : 0);
            a0 = v[0], a1 = v[1];
          } else {
            float v[1] = {a0 + b0};
            pre(ii, v, in);
            if constexpr (keys)
              addKeys(h, v, in ? 1 : 0);
            a0 = v[0];
            const bool both = in && pair;
            v[0] = a1 + b1;
            pre(both ? ii + 1 : 0, v, both);
            if constexpr (keys)
              addKeys(h, v, both ? 1 : 0);
            a1 = v[0];
          }
        }
      }
      if constexpr (G > 0) {
        if (N % Cfg::BN != 0 && n0 + 8 * j0 >= N)
          continue; // a whole group beyond N
        // The group's G columns of a row: G / 4 values in each lane of a
        // quad; two passes over the registers, as gnWarp.
        constexpr float invN = 1.0f / G;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float sum = 0.f;
#pragma unroll
          for (int j = j0; j < j0 + J; ++j)
            sum += acc[4 * j + 2 * h] + acc[4 * j + 2 * h + 1];
          const float mean = groupSum<4>(sum) * invN;
          float s1 = 0.f, s2 = 0.f;
#pragma unroll
          for (int j = j0; j < j0 + J; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float d = acc[4 * j + 2 * h + e] - mean;
              s1 += d;
              s2 += d * d;
            }
          const GnStats st =
              gnFinishFloat(mean, groupSum<4>(s1), groupSum<4>(s2), invN, eps);
#pragma unroll
          for (int j = j0; j < j0 + J; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              float &v = acc[4 * j + 2 * h + e]; // as gnNormalize
              v = fmaf(v - st.meanHi, st.rstd, st.lowShift);
            }
        }
#pragma unroll
        for (int j = j0; j < j0 + J; ++j) {
          const int n = n0 + 8 * j + 2 * (lane % 4);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int m = mTop + 8 * h;
            if (M % Cfg::BM != 0 && m >= M)
              continue;
            const i64 ii = (rowBase + m) * N + n;
            if constexpr (Vec == 2) {
              float v[2] = {acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]};
              post(ii, v, true);
              addKeys(h, v, 2);
            } else {
              float v[1] = {acc[4 * j + 2 * h]};
              post(ii, v, true);
              addKeys(h, v, 1);
              if (n + 1 < N) {
                v[0] = acc[4 * j + 2 * h + 1];
                post(ii + 1, v, true);
                addKeys(h, v, 1);
              }
            }
          }
        }
      }
    }
  }
  if constexpr (Tail::kActive) {
    // The quad's four lanes hold the same rows (other columns).
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      ta[h].quad();
      const int m = mTop + 8 * h;
      if ((M % Cfg::BM == 0 || m < M) && lane % 4 == 0)
        ta[h].put(tail, rowBase + m, n0 / Cfg::BN, rows);
    }
  }
}

} // namespace wg
#endif

/// linear with its fused epilogue (WgmmaEpilogue above). Without an
/// epilogue: wgmmaLinear<Shape, Cfg, HasBias, WgmmaEpilogue<Vec, 0>>(x, w,
/// bias, StoreLinear{y}, NoPost{}, 0.f). With a tail (WgmmaTail), the
/// consumers return after adding their last tile's keys, and the caller
/// finishes the tail (gridBarrier and tailRestore with WgmmaConsumers);
/// the producer returns first.
template <class Shape, class Cfg, bool HasBias, class Epi,
          class Batch = NoBatch, class E, class Pre, class Post,
          class Tail = NoTail>
__device__ __forceinline__ void
wgmmaLinear(const E *__restrict__ x, const E *w,
            const typename NoDeduce<E>::type *__restrict__ bias, Pre pre,
            Post post, float eps, typename NoDeduce<E>::type *parts = nullptr,
            unsigned long long *launches = nullptr,
            unsigned *splitFlag = nullptr, Tail *tail = nullptr,
            WgmmaSplitK splitK = {}) {
#ifdef KILN_HAS_WGMMA
  constexpr int M = Shape::M, N = Shape::N, S = Cfg::kStages;
  static_assert(Shape::K % (16 / sizeof(E)) == 0, "16-byte rows");
  static_assert(Cfg::kPasses == 1 || sizeof(E) == 4,
                "3xTF32 splits f32 operands; f16 and bf16 products are exact");
  static_assert(wgmmaBlocks(M, N, Cfg::BN) * Batch::kCount * Cfg::kSplitK <
                    (1ll << 31),
                "work items");
  static_assert(Batch::kCount == 1 || Cfg::kTransposeW,
                "batches: a matmul's (b transposed before the tiles)");
  extern __shared__ unsigned char wgmmaShared[];
  __shared__ u64 full[S], empty[S];
  unsigned char *ring = wg::alignedShared(wgmmaShared);
  // Persistent: block b runs items b, b + gridDim.x, ...: item i is share
  // i % SplitK of tile i / SplitK's K slices (tileOrigin).
  constexpr int items = static_cast<int>(wgmmaBlocks(M, N, Cfg::BN) *
                                         Batch::kCount * Cfg::kSplitK);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      wg::barrierInit(&full[s], 128);
      wg::barrierInit(&empty[s], Cfg::kEmptyArrivals);
    }
  }
  __syncthreads();
  // What the producer copies: w (and nothing), or w's parts.
  const E *wBig = w, *wSmall = nullptr;
  if constexpr (Cfg::kPartsGiven) {
    // Flagged: every thread reads the flag before its block arrives at the
    // barrier after the split, so block 0 may clear it once past it.
    constexpr int K = Shape::K;
    const bool redo = Cfg::kSplitW == kWgmmaSplitEachLaunch || *splitFlag != 0;
    if (redo) {
      if constexpr (Cfg::kTransposeW) {
        static_assert(kWgmmaThreads / 32 * 32 * 33 * sizeof(E) <=
                          Cfg::kStageBytes * S,
                      "the transposition's tiles fit the ring");
        wg::transposeAll<Cfg::kPasses == 3>(w, parts, K, N, Batch::kCountB,
                                            reinterpret_cast<E *>(ring));
      } else if constexpr (sizeof(E) == 4) {
        wg::splitAll(w, parts, static_cast<i64>(N) * K);
      }
      wg::gridSync(launches);
      if (Cfg::kSplitW == kWgmmaSplitFlagged && blockIdx.x == 0 &&
          threadIdx.x == 0)
        *splitFlag = 0;
    }
    wBig = parts;
    if constexpr (Cfg::kPasses == 3)
      wSmall = parts + static_cast<i64>(N) * K * Batch::kCountB;
  }
  const int role = threadIdx.x / 128;
  // Registers (ptxas allocates each role within its count; 128 * 40 +
  // 256 * 232 and 128 * 72 + 256 * 208 both fit the SM's 64 Ki): the
  // consumers keep 128 accumulators (3xTF32: and 32 for x's parts) and the
  // epilogue's values; the producer spilled on 40 where M or N does not
  // divide the tile (its row counts), and the consumers of L2_37's
  // epilogue on 208.
  constexpr bool whole = M % Cfg::BM == 0 && N % Cfg::BN == 0;
  if (role == 0) {
    if constexpr (whole)
      asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else
      asm volatile("setmaxnreg.dec.sync.aligned.u32 72;");
    wg::produce<Shape, Cfg, Batch, E>(x, wBig, wSmall, ring, full, empty,
                                      items);
    return;
  }
  if constexpr (whole)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  else
    asm volatile("setmaxnreg.inc.sync.aligned.u32 208;");
  const int c = role - 1;
  int it = 0;
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    const int tile = item / Cfg::kSplitK, share = item % Cfg::kSplitK;
    int t, m0, n0;
    wg::tileOrigin<M, N, Cfg>(tile, t, m0, n0);
    // Passes 1 never touches total: it costs no registers.
    float acc[Cfg::BN / 2], total[Cfg::BN / 2];
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; ++i)
      acc[i] = 0.f, total[i] = 0.f;
    wg::consume<Shape, Cfg, E>(ring, full, empty, c, it, share, acc, total);
    if constexpr (Cfg::kSplitK > 1)
      if (!wg::finishSplit<Cfg::kSplitK, Cfg::BN>(acc, splitK, tile, share))
        continue;
    const i64 rowBase = Batch::kCount > 1 ? static_cast<i64>(t) * M : 0;
    wg::epilogue<M, N, Cfg, Epi, HasBias>(acc, rowBase, m0, n0, c, bias, pre,
                                          post, eps, tail,
                                          static_cast<i64>(M) * Batch::kCount);
  }
#else
  (void)x, (void)w, (void)bias, (void)pre, (void)post, (void)eps, (void)parts,
      (void)launches, (void)splitFlag, (void)tail, (void)splitK;
  __trap(); // never scheduled off sm_90a
#endif
}

} // namespace kiln

#endif
