// Sigmoid and swish variants for the GEMM epilogue (sigmoid_ulp.cu checks
// them on every float, wgmma_linear --epilogue times them): IEEE division
// against kiln/ops.cuh's branch-free reciprocal and quotient, and an
// exponential without CUDA's denormal care.
#ifndef KILN_PROTO_SIGMOID_CUH
#define KILN_PROTO_SIGMOID_CUH

#include "kiln/ops.cuh"

namespace proto {

/// Kiln's division from v19 to v44 (kiln/ops.cuh then): 1 / d and x / d
/// for the sigmoid's denominator d = 1 + e^-x (d >= 1, or inf where e^-x
/// overflows): rcp.approx, subnormal results kept, and a Newton step, then
/// a residual step for the quotient; no branch, and on every one of the
/// 2^32 floats x the bits of IEEE division (sigmoid_ulp.cu). The special
/// cases are chosen with selp in PTX: written as ternaries, the front end
/// branched around the refinement (four branches a swish; bench/NOTES.md
/// v30). About 10 instructions more a swish than kiln::swish now, which
/// made a convolution's silu epilogue its bound (v45).
__device__ __forceinline__ float recipDenominator(float d) {
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(d));
  const float refined = fmaf(r, fmaf(-d, r, 1.0f), r);
  float y; // d == inf ? 0 : refined
  asm("{\n.reg .pred p;\nsetp.eq.f32 p, %1, 0f7F800000;\n"
      "selp.f32 %0, 0f00000000, %2, p;\n}"
      : "=f"(y)
      : "f"(d), "f"(refined));
  return y;
}
/// x / d as above, with x's sign (the residual step alone would turn -0
/// into +0); x / inf is 0 with x's sign (NaN for infinite x), and an
/// infinite or NaN x over a finite d is x.
__device__ __forceinline__ float divDenominator(float x, float d) {
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(d));
  const float q = x * r;
  const float refined = fmaf(r, fmaf(-d, q, x), q);
  float y; // d == inf ? x * 0 : |q| < inf ? copysign(refined, x) : q
  asm("{\n.reg .pred dInf, qBig;\n.reg .f32 t;\n"
      "setp.eq.f32 dInf, %1, 0f7F800000;\n"
      "setp.geu.f32 qBig, %2, 0f7F800000;\n"
      "selp.f32 t, %3, %4, qBig;\n"
      "selp.f32 %0, %5, t, dInf;\n}"
      : "=f"(y)
      : "f"(d), "f"(fabsf(q)), "f"(q), "f"(copysignf(refined, x)),
        "f"(x * 0.0f));
  return y;
}

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
// kiln::sigmoid and kiln::swish (expf, rcp.approx.ftz: since v45); 2 expf
// and the branch-free reciprocal and quotient (v19-v44); 3 the fast
// intrinsics; 4 as 2 with expFlush; 5 kiln::sigmoidShort and swishShort
// (tensor-core epilogues at TF32, since v48).
template <int V> __device__ __forceinline__ float sigmoid(float x) {
  if constexpr (V == 0)
    return 1.0f / (1.0f + expf(-x));
  else if constexpr (V == 1)
    return kiln::sigmoid(x);
  else if constexpr (V == 2)
    return recipDenominator(kiln::onePlusExpNeg(x));
  else if constexpr (V == 3)
    return __fdividef(1.0f, 1.0f + __expf(-x));
  else if constexpr (V == 5)
    return kiln::sigmoidShort(x);
  else
    return recipDenominator(1.0f + expFlush(-x));
}
template <int V> __device__ __forceinline__ float swish(float x) {
  if constexpr (V == 0)
    return x / (1.0f + expf(-x));
  else if constexpr (V == 1)
    return kiln::swish(x);
  else if constexpr (V == 2)
    return divDenominator(x, kiln::onePlusExpNeg(x));
  else if constexpr (V == 3)
    return __fdividef(x, 1.0f + __expf(-x));
  else if constexpr (V == 5)
    return kiln::swishShort(x);
  else
    return divDenominator(x, 1.0f + expFlush(-x));
}

} // namespace proto

#endif
