//===- common.cuh - Basics shared by every Kiln kernel template -*- CUDA
//-*-===//
//
// Compiled by NVRTC with no host headers: only what is defined here and in
// the other kiln/*.cuh files is available. Templates are parameterised by
// template arguments (shapes are compile-time constants), never by textual
// substitution; the emitter instantiates them from a generated kernel.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMMON_CUH
#define KILN_COMMON_CUH

// +infinity as a float, also in member initialisers that nvcc's host pass
// reads (a prototype built with nvcc), where __int_as_float does not exist
// and NVRTC lacks the builtin.
#ifdef __CUDA_ARCH__
#define KILN_INFINITY __int_as_float(0x7f800000)
#else
#define KILN_INFINITY __builtin_huge_valf()
#endif

namespace kiln {

typedef long long i64;
typedef unsigned long long u64;

/// int when every offset below Bound fits in 32 bits, else i64 (no
/// <type_traits> under NVRTC).
template <bool Small> struct OffsetPick { using type = int; };
template <> struct OffsetPick<false> { using type = i64; };
/// Offsets that run a little past the last element (a loop's last step, a
/// prefetch distance) stay in 32 bits only when this margin fits too.
constexpr i64 kOffsetMargin = i64(1) << 20;
template <i64 Bound>
using OffsetFor =
    typename OffsetPick<(Bound + kOffsetMargin < (i64(1) << 31))>::type;

/// The identity, for templates over storage types (kiln/half.cuh adds
/// f16 and bf16).
__device__ __forceinline__ float toFloat(float v) { return v; }

/// T itself, in a context that does not deduce it (a storage-type template
/// whose bias may be nullptr).
template <class T> struct SameType { using type = T; };

/// Loads N consecutive floats from p (16-byte aligned when N is 4 or 8,
/// 8-byte when N == 2).
template <int N>
__device__ __forceinline__ void loadVec(const float *p, float (&v)[N]) {
  if constexpr (N == 8) {
    float4 a = reinterpret_cast<const float4 *>(p)[0];
    float4 b = reinterpret_cast<const float4 *>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else if constexpr (N == 4) {
    float4 t = *reinterpret_cast<const float4 *>(p);
    v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
  } else if constexpr (N == 2) {
    float2 t = *reinterpret_cast<const float2 *>(p);
    v[0] = t.x, v[1] = t.y;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      v[i] = p[i];
  }
}

template <int N>
__device__ __forceinline__ void storeVec(float *p, const float (&v)[N]) {
  if constexpr (N == 8) {
    reinterpret_cast<float4 *>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4 *>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else if constexpr (N == 4) {
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else if constexpr (N == 2) {
    *reinterpret_cast<float2 *>(p) = make_float2(v[0], v[1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      p[i] = v[i];
  }
}

/// Streaming store (evict-first): for outputs no kernel of this launch reads.
template <int N>
__device__ __forceinline__ void storeVecStreaming(float *p,
                                                  const float (&v)[N]) {
  if constexpr (N == 4) {
    __stcs(reinterpret_cast<float4 *>(p), make_float4(v[0], v[1], v[2], v[3]));
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      __stcs(p + i, v[i]);
  }
}

/// Asks L2 to fetch `bytes` (a multiple of 16) at p (16-byte aligned) for
/// loads that come later: one instruction, no registers, nothing to wait
/// for. A no-op before sm_90 (no bulk prefetch there).
__device__ __forceinline__ void prefetchL2(const void *p, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes)
               : "memory");
#else
  (void)p, (void)bytes;
#endif
}

/// The prefetch callable of a kernel that prefetches nothing.
struct NoPrefetch {
  __device__ __forceinline__ void operator()(i64, unsigned) const {}
};

/// x rounded to f32 once, for every use: an add with a rounding mode, which
/// ptxas does not fuse into an FMA. Without it ptxas may fuse the multiply
/// that made x into each use (an FMA sees the product unrounded), so that
/// two uses read two different values: a GroupNorm's statistics one, its
/// normalisation another. A group of one value then normalised to about
/// 1e-13 rather than 0 (NormFuzz seed 301's case 81; with it, 0 on an
/// H200: bench/NOTES.md v50). x + -0 is x for every x, -0 included; NaN
/// stays NaN.
__device__ __forceinline__ float rounded(float x) {
  float r;
  asm("add.rn.f32 %0, %1, 0f80000000;" : "=f"(r) : "f"(x));
  return r;
}

/// Sum over the `Width` lanes of each aligned group of a warp (Width a power
/// of two <= 32); every lane of the group gets the total.
template <int Width> __device__ __forceinline__ float groupSum(float v) {
#pragma unroll
  for (int o = Width / 2; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o, Width);
  return v;
}

} // namespace kiln

#endif
