//===- pointwise.cuh - Elementwise loops ------------------------*- CUDA
//-*-===//
//
// pointwise<Numel, Vec>(body): calls body(i) for every i = 0, Vec, 2*Vec, ...
// below Numel, spread over the grid (grid-stride, 64-bit when Numel needs
// it). The generated body loads Vec consecutive elements of each operand
// (16-byte loads when Vec is 4), computes the fused expression and stores.
// Two chunks per thread per iteration keep more loads in flight.
//
// Launch: any 1-D grid of 1-D blocks; the emitter picks
// min(ceil(chunks / threads), 8 * SMs) blocks.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_POINTWISE_CUH
#define KILN_POINTWISE_CUH

#include "kiln/common.cuh"

namespace kiln {

template <i64 Numel, int Vec, class Body>
__device__ __forceinline__ void pointwise(Body body) {
  static_assert(Numel % Vec == 0, "Vec must divide the element count");
  constexpr i64 chunks = Numel / Vec;
  if constexpr (chunks < (1ll << 31)) {
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned c = blockIdx.x * blockDim.x + threadIdx.x; c < chunks;
         c += stride)
      body(static_cast<i64>(c) * Vec);
  } else {
    const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
    for (i64 c = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
         c < chunks; c += stride)
      body(c * Vec);
  }
}

} // namespace kiln

#endif
