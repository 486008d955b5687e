// Sigmoid and swish variants for the GEMM epilogue (sigmoid_ulp.cu checks
// them on every float, wgmma_linear --epilogue times them): IEEE division
// against kiln/ops.cuh's branch-free reciprocal and quotient, and an
// exponential without CUDA's denormal care.
#ifndef KILN_PROTO_SIGMOID_CUH
#define KILN_PROTO_SIGMOID_CUH

#include "kiln/ops.cuh"

namespace proto {

/// e^x for x where a result below 2^-126 may flush to 0 (1 + e^x does not
/// see it): x log2(e) as hi + lo exactly enough, 2^hi by ex2.approx, times
/// (1 + lo ln 2). Infinite or NaN x passes through hi alone.
__device__ __forceinline__ float expFlush(float x) {
  const float l2e = 1.44269502e+00f, l2eLo = 1.92596299e-08f;
  const float hi = x * l2e;
  float lo = fmaf(x, l2e, -hi);
  lo = fmaf(x, l2eLo, lo);
  lo = fabsf(x) < 128.0f ? lo : 0.0f;
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(hi));
  const float c = fmaf(e, lo * 0.693147182f, e);
  return e < __int_as_float(0x7f800000) ? c : e;
}

// Variants: 0 expf and IEEE division (Kiln's ops.cuh before v19); 1
// kiln::sigmoid and kiln::swish (expf, the branch-free reciprocal and
// quotient); 2 the same with expFlush; 3 the fast intrinsics.
template <int V> __device__ __forceinline__ float sigmoid(float x) {
  if constexpr (V == 0)
    return 1.0f / (1.0f + expf(-x));
  else if constexpr (V == 1)
    return kiln::sigmoid(x);
  else if constexpr (V == 2)
    return kiln::recipDenominator(1.0f + expFlush(-x));
  else
    return __fdividef(1.0f, 1.0f + __expf(-x));
}
template <int V> __device__ __forceinline__ float swish(float x) {
  if constexpr (V == 0)
    return x / (1.0f + expf(-x));
  else if constexpr (V == 1)
    return kiln::swish(x);
  else if constexpr (V == 2)
    return kiln::divDenominator(x, 1.0f + expFlush(-x));
  else
    return __fdividef(x, 1.0f + __expf(-x));
}

} // namespace proto

#endif
