//===- half.cuh - f16 and bf16 storage, computed in f32 ---------*- CUDA
//-*-===//
//
// Tensors stored as f16 or bf16 are loaded into float registers, every op is
// computed in float, and each op's result is rounded to its dtype (roundTo),
// as PyTorch's eager kernels do for half types: they compute in float (their
// opmath type) and store each result in the tensor's dtype. So a fused chain
// gives what the same ops give one kernel each. Included only by kernels with
// f16 or bf16 tensors; no CUDA header is needed (NVRTC's fp16 headers are
// large to parse).
//
// Conversions round to nearest even; float -> f16 overflows to infinity; NaN
// stays NaN. Loads and stores of N == 8 (16 bytes), 4 (8 bytes) and 2 (4
// bytes) need that alignment, as the float ones do.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_HALF_CUH
#define KILN_HALF_CUH

#include "kiln/common.cuh"

namespace kiln {

/// Storage types: distinct types, so that loadVec and storeVec overload on
/// them; the bits are IEEE binary16 and bfloat16.
struct f16 {
  unsigned short bits;
};
struct bf16 {
  unsigned short bits;
};

__device__ __forceinline__ float halfBitsToFloat(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short floatToHalfBits(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float bf16BitsToFloat(unsigned short h) {
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}
/// Round to nearest even: one instruction from sm_80 on; before, on the
/// bits (NaN becomes a quiet NaN of the same sign).
__device__ __forceinline__ unsigned short floatToBf16Bits(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<unsigned short>(((u >> 16) & 0x8000u) | 0x7fc0u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
#endif
}

__device__ __forceinline__ float toFloat(f16 h) {
  return halfBitsToFloat(h.bits);
}
__device__ __forceinline__ float toFloat(bf16 h) {
  return bf16BitsToFloat(h.bits);
}

/// x rounded to f16 or bf16 and back: the value an op of that dtype stores.
__device__ __forceinline__ float roundF16(float x) {
  return halfBitsToFloat(floatToHalfBits(x));
}
__device__ __forceinline__ float roundBF16(float x) {
  return bf16BitsToFloat(floatToBf16Bits(x));
}

template <class T> struct HalfBits;
template <> struct HalfBits<f16> {
  static __device__ __forceinline__ float load(unsigned short h) {
    return halfBitsToFloat(h);
  }
  static __device__ __forceinline__ unsigned short store(float f) {
    return floatToHalfBits(f);
  }
};
template <> struct HalfBits<bf16> {
  static __device__ __forceinline__ float load(unsigned short h) {
    return bf16BitsToFloat(h);
  }
  static __device__ __forceinline__ unsigned short store(float f) {
    return floatToBf16Bits(f);
  }
};

/// Loads N consecutive f16 or bf16 values from p as floats.
template <int N, class T>
__device__ __forceinline__ void loadHalfVec(const T *p, float (&v)[N]) {
  using B = HalfBits<T>;
  if constexpr (N == 8) {
    const uint4 t = *reinterpret_cast<const uint4 *>(p);
    const unsigned w[4] = {t.x, t.y, t.z, t.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
      v[2 * i] = B::load(w[i] & 0xffffu), v[2 * i + 1] = B::load(w[i] >> 16);
  } else if constexpr (N == 4) {
    const uint2 t = *reinterpret_cast<const uint2 *>(p);
    v[0] = B::load(t.x & 0xffffu), v[1] = B::load(t.x >> 16);
    v[2] = B::load(t.y & 0xffffu), v[3] = B::load(t.y >> 16);
  } else if constexpr (N == 2) {
    const unsigned t = *reinterpret_cast<const unsigned *>(p);
    v[0] = B::load(t & 0xffffu), v[1] = B::load(t >> 16);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      v[i] = B::load(p[i].bits);
  }
}

/// Stores N floats to p as f16 or bf16 (rounded to nearest even).
template <int N, class T>
__device__ __forceinline__ void storeHalfVec(T *p, const float (&v)[N]) {
  using B = HalfBits<T>;
  auto pair = [](float lo, float hi) {
    return static_cast<unsigned>(B::store(lo)) |
           static_cast<unsigned>(B::store(hi)) << 16;
  };
  if constexpr (N == 8) {
    *reinterpret_cast<uint4 *>(p) = make_uint4(
        pair(v[0], v[1]), pair(v[2], v[3]), pair(v[4], v[5]), pair(v[6], v[7]));
  } else if constexpr (N == 4) {
    *reinterpret_cast<uint2 *>(p) =
        make_uint2(pair(v[0], v[1]), pair(v[2], v[3]));
  } else if constexpr (N == 2) {
    *reinterpret_cast<unsigned *>(p) = pair(v[0], v[1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      p[i].bits = B::store(v[i]);
  }
}

template <int N>
__device__ __forceinline__ void loadVec(const f16 *p, float (&v)[N]) {
  loadHalfVec<N>(p, v);
}
template <int N>
__device__ __forceinline__ void loadVec(const bf16 *p, float (&v)[N]) {
  loadHalfVec<N>(p, v);
}
template <int N>
__device__ __forceinline__ void storeVec(f16 *p, const float (&v)[N]) {
  storeHalfVec<N>(p, v);
}
template <int N>
__device__ __forceinline__ void storeVec(bf16 *p, const float (&v)[N]) {
  storeHalfVec<N>(p, v);
}

/// prefetchL2 (kiln/common.cuh) of the whole 16-byte blocks inside the `n`
/// elements at p, which need not be aligned: a half tensor's part starts at
/// any multiple of 4 elements.
template <class T>
__device__ __forceinline__ void prefetchL2Within(const T *p, unsigned n) {
  const u64 a = reinterpret_cast<u64>(p);
  const u64 first = (a + 15) & ~u64(15);
  const u64 last = (a + u64(n) * sizeof(T)) & ~u64(15);
  if (last > first)
    prefetchL2(reinterpret_cast<const void *>(first),
               static_cast<unsigned>(last - first));
}

} // namespace kiln

#endif
