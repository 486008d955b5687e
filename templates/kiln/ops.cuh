//===- ops.cuh - Elementwise ops with PyTorch's f32 semantics ---*- CUDA
//-*-===//
//
// The helpers the per-op CUDA expressions call (compiler/ops/Unary.cpp and
// Binary.cpp). Each follows PyTorch's CUDA kernel for f32, including NaN:
// relu, clamp, maximum and minimum propagate it (fmaxf alone would not).
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
__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}
__device__ __forceinline__ float swish(float x) {
  return x / (1.0f + expf(-x));
}
__device__ __forceinline__ float geluErf(float x) {
  return x * 0.5f * (1.0f + erff(x * 0.70710678118654752440f));
}
__device__ __forceinline__ float geluTanh(float x) {
  const float beta = 0.79788456080286535588f, kappa = 0.044715f;
  float inner = beta * (x + kappa * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
__device__ __forceinline__ float clamp(float x, float lo, float hi) {
  return x != x ? x : fminf(fmaxf(x, lo), hi);
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
