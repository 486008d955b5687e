//===- ops.cuh - Elementwise ops with PyTorch's f32 semantics ---*- CUDA
//-*-===//
//
// The helpers the per-op CUDA expressions call (compiler/ops/Unary.cpp and
// Binary.cpp). Each follows PyTorch's CUDA kernel for f32, including NaN:
// relu, clamp, maximum and minimum propagate it (fmaxf alone would not).
// geluErf computes the same function by another route (see there), as
// accurately and with the same special values.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_CUH
#define KILN_OPS_CUH

namespace kiln {

__device__ __forceinline__ float nanMax(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}
__device__ __forceinline__ float nanMin(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
}
__device__ __forceinline__ float relu(float x) {
  return x != x ? x : (x > 0.0f ? x : 0.0f);
}
__device__ __forceinline__ float leakyRelu(float x, float slope) {
  return x > 0.0f ? x : x * slope;
}
/// 2^f and 1 / d by the SFU: ex2.approx.ftz (2 ulp) and rcp.approx.ftz (1
/// ulp), subnormal inputs and results flushed to zero.
__device__ __forceinline__ float exp2Approx(float f) {
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(f));
  return e;
}
__device__ __forceinline__ float rcpApprox(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
/// 1 + expf(-x), as CUDA's expf computes it inlined there (the scale and
/// the 1 in one fused multiply-add), in one block of PTX: the same
/// instructions, which NVRTC's front end then does not have to optimise
/// once per call (L2_37's epilogue inlines 128 of them: about 0.5 s of its
/// compile). CUDA's expf: t = sat(a log2(e) / 252 + 1/2), j = t 252 + 2^23
/// + 1 rounded down (2^(j - 2^23 - 127) as a float is j << 23), then
/// 2^(a log2(e) - (j - 2^23 - 127)) by ex2.approx, a = -x.
__device__ __forceinline__ float onePlusExpNeg(float x) {
  float d;
  asm("{\n"
      "  .reg .f32 t, j, r, f, e, s;\n"
      "  .reg .b32 b;\n"
      "  fma.rn.sat.f32 t, %1, 0fBBBB989D, 0f3F000000;\n"
      "  fma.rm.f32 j, t, 0f437C0000, 0f4B400001;\n"
      "  add.f32 r, j, 0fCB40007F;\n"
      "  mov.b32 b, j;\n"
      "  shl.b32 b, b, 23;\n"
      "  mov.b32 s, b;\n"
      "  neg.f32 r, r;\n"
      "  fma.rn.f32 f, %1, 0fBFB8AA3B, r;\n"
      "  fma.rn.f32 f, %1, 0fB2A57060, f;\n"
      "  ex2.approx.ftz.f32 e, f;\n"
      "  fma.rn.f32 %0, s, e, 0f3F800000;\n"
      "}"
      : "=f"(d)
      : "f"(x));
  return d;
}
/// The sigmoid and swish as PyTorch defines them, 1 / (1 + expf(-x)) and
/// x / (1 + expf(-x)), with the division a reciprocal by rcp.approx.ftz
/// (1 ulp) and no branch: within 3.91 ulp of the true value wherever the
/// sigmoid is a normal float (bench/proto/sigmoid_ulp.cu runs every float;
/// PyTorch's expf and IEEE division: 3.43). IEEE division calls a slow path
/// behind a branch, which stalls an epilogue unrolled over 128 values (L2_37:
/// 0.36 ms of the tensor-core linear's 1.46); v19-v44's branch-free
/// division with IEEE's bits, a Newton step, a residual step and selects
/// for the special cases, took 10 instructions more a swish, which made a
/// convolution's silu epilogue its bound (3 x 3 8 -> 64: 0.73 ms, 0.53
/// with this; bench/NOTES.md v45). The swish divides by d / 4, whose
/// reciprocal stays normal (d < 2^128), so x / d is normal where it is in
/// f32; the sigmoid's 1 / d below 2^-126 (x < -87.3) is 0, as ftz flushes.
/// 1 + e^-x overflows below x = -88.7 as in PyTorch: the sigmoid 0, the
/// swish -0 (NaN at -inf).
__device__ __forceinline__ float sigmoid(float x) {
  return rcpApprox(onePlusExpNeg(x));
}
__device__ __forceinline__ float swish(float x) {
  const float r = rcpApprox(onePlusExpNeg(x) * 0.25f);
  return x * 0.25f * r;
}
/// The short forms, for the epilogues of tensor-core products whose
/// results carry a larger error anyway (TF32 products, about 3e-4 of a
/// convolution's value, or results rounded to f16 or bf16; never 3xTF32):
/// e^-x as 2^(-x log2(e)), the exponent in one rounding (log2(e) in two
/// parts) and no range reduction, then rcp.approx.ftz. The exponent's
/// rounding (half an ulp of |x| log2(e)) makes the error grow with |x|:
/// over all 2^32 floats (bench/proto/sigmoid_ulp.cu, H200) within 14.5 ulp
/// for x >= -16 and 46.7 ulp for x >= -87 (relative 5.6e-6), against 3.91
/// for the forms above. 5 and 7 instructions instead of about 10 and 12
/// (3 x 3 8 -> 64 silu, 512 x 512: 0.541 -> 0.450 ms; bench/NOTES.md v48).
/// The same special values: ex2.approx.ftz over and underflows as e^-x
/// does, NaN stays NaN; the swish takes e^-x / 4 (exponent - 2) and
/// multiplies by x / 4 so that its reciprocal stays normal to x = -88.7.
__device__ __forceinline__ float sigmoidShort(float x) {
  const float f = fmaf(x, -1.44269502f, x * -1.92596299e-8f);
  return rcpApprox(1.0f + exp2Approx(f));
}
__device__ __forceinline__ float swishShort(float x) {
  const float f = fmaf(x, -1.44269502f, fmaf(x, -1.92596299e-8f, -2.0f));
  return x * 0.25f * rcpApprox(0.25f + exp2Approx(f));
}
/// gelu(x) = x * Phi(x), Phi the normal CDF, as PyTorch's exact (erf) form.
/// Phi comes from its tail e(a) = Phi(-a) = 2^-(1 + a * P(a)), a = |x|, P of
/// degree 7 fitted weighted-minimax on [0, 6] (tools/fit_gelu.py); beyond 6
/// the tail is taken as 0. |Phi error| <= 1.3e-7 with ex2.approx's 2 ulp,
/// about what 0.5f * (1 + erff(x / sqrt 2)) gives, in 15 instructions
/// instead of about 25 (erff's two branches of selected coefficients). In
/// the negative tail the error stays that absolute one, not relative to the
/// tiny result: about 1e-5 of it at x = -3.25, 2e-3 at -4.5, 8% at -5.75,
/// and -0 below -6 (|gelu| < 6e-9); PyTorch's erf form, whose 1 + erf
/// rounds to multiples of 6e-8 there, does no better (with glibc's erff:
/// 4% at -5, -0 from -5.75).
/// NaN stays NaN; gelu(inf) = inf and gelu(-inf) = NaN (-inf * 0), as in
/// PyTorch.
__device__ __forceinline__ float geluErf(float x) {
  const float a = fabsf(x);
  float p = 2.834912948e-06f;
  p = fmaf(p, a, -3.937768997e-05f);
  p = fmaf(p, a, 1.861802302e-04f);
  p = fmaf(p, a, 1.369364036e-04f);
  p = fmaf(p, a, -7.063420024e-03f);
  p = fmaf(p, a, 5.249617994e-02f);
  p = fmaf(p, a, 4.592081904e-01f);
  p = fmaf(p, a, 1.151105165e+00f);
  float e = exp2Approx(-fmaf(a, p, 1.0f));
  e = a < 6.0f ? e : 0.0f;
  return x * (x < 0.0f ? e : 1.0f - e);
}
__device__ __forceinline__ float geluTanh(float x) {
  const float beta = 0.79788456080286535588f, kappa = 0.044715f;
  float inner = beta * (x + kappa * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
/// lo = hi = NaN: two bounds of which one was NaN, every result NaN (as
/// PyTorch; the bounds are literals, so the test folds away).
__device__ __forceinline__ float clamp(float x, float lo, float hi) {
  return lo != lo ? lo : x != x ? x : fminf(fmaxf(x, lo), hi);
}
__device__ __forceinline__ float hardswish(float x) {
  return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
}
__device__ __forceinline__ float mish(float x) {
  return x * tanhf(log1pf(expf(x)));
}
__device__ __forceinline__ float softplus(float x, float beta,
                                          float threshold) {
  return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}

} // namespace kiln

#endif
