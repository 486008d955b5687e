//===- reduce.cuh - Reductions over any set of dims -------------*- CUDA
//-*-===//
//
// reduce<Op, NumOut, Len, WarpPerOutput>(load, store): output o (0 <= o <
// NumOut) combines load(o, r) for r in [0, Len); store(o, value) writes it
// (and runs the fused epilogue). The generated load maps (o, r) to the input
// element and applies the fused prologue.
//
// WarpPerOutput: one warp per output, lanes striding r -- for reductions
// over the innermost dim, where consecutive r are consecutive in memory.
// Otherwise one thread per output, looping over r -- consecutive threads
// then read consecutive kept elements.
//
// min/max propagate NaN (torch.amin/amax); sum and mean accumulate in
// double; logsumexp shifts by the max unless it is infinite, as PyTorch.
// Over no elements (Len 0), as PyTorch: sum 0, mean NaN, logsumexp -inf.
// Launch: 1-D blocks of a multiple of 32 threads, any 1-D grid.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_REDUCE_CUH
#define KILN_REDUCE_CUH

#include "kiln/common.cuh"
#include "kiln/ops.cuh"

namespace kiln {

enum class ReduceOp { Min, Max, Sum, Mean, LogSumExp };

template <ReduceOp Op> struct ReduceAcc {
  // Min and Max.
  float v = Op == ReduceOp::Min ? KILN_INFINITY : -KILN_INFINITY;
  __device__ void add(float x) {
    v = Op == ReduceOp::Min ? nanMin(v, x) : nanMax(v, x);
  }
  __device__ void merge(int width) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
      if (o >= width)
        continue;
      add(__shfl_xor_sync(0xffffffffu, v, o));
    }
  }
};

struct SumAcc {
  double v = 0;
  __device__ void add(float x) { v += x; }
  __device__ void merge(int width) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      if (o < width)
        v += __shfl_xor_sync(0xffffffffu, v, o);
  }
};

/// Combines load(o, r) over r in [first, Len) step `step` into acc.
template <i64 Len, class Acc, class F>
__device__ __forceinline__ void accumulate(Acc &acc, i64 first, int step, F f) {
  for (i64 r = first; r < Len; r += step)
    acc.add(f(r));
}

template <ReduceOp Op, i64 Len, int Width, class Load>
__device__ __forceinline__ float reduceOne(i64 o, int lane, Load load) {
  auto at = [&](i64 r) { return load(o, r); };
  if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
    ReduceAcc<Op> acc;
    accumulate<Len>(acc, lane, Width, at);
    acc.merge(Width);
    return acc.v;
  } else if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Mean) {
    SumAcc acc;
    accumulate<Len>(acc, lane, Width, at);
    acc.merge(Width);
    if constexpr (Op == ReduceOp::Sum)
      return static_cast<float>(acc.v);
    else if constexpr (Len == 0)
      return __int_as_float(0x7fc00000); // the mean of nothing, as PyTorch
    else
      return static_cast<float>(acc.v / Len);
  } else {
    ReduceAcc<ReduceOp::Max> mx;
    accumulate<Len>(mx, lane, Width, at);
    mx.merge(Width);
    if (mx.v != mx.v)
      return mx.v;
    float shift = isinf(mx.v) ? 0.0f : mx.v;
    SumAcc s;
    for (i64 r = lane; r < Len; r += Width)
      s.v += expf(at(r) - shift);
    s.merge(Width);
    return logf(static_cast<float>(s.v)) + shift;
  }
}

template <ReduceOp Op, i64 NumOut, i64 Len, bool WarpPerOutput, class Load,
          class Store>
__device__ __forceinline__ void reduce(Load load, Store store) {
  if constexpr (WarpPerOutput) {
    const int lane = threadIdx.x % 32;
    const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
    for (i64 o = static_cast<i64>(blockIdx.x) * (blockDim.x / 32) +
                 threadIdx.x / 32;
         o < NumOut; o += warps) {
      float v = reduceOne<Op, Len, 32>(o, lane, load);
      if (lane == 0)
        store(o, v);
    }
  } else {
    const i64 threads = static_cast<i64>(gridDim.x) * blockDim.x;
    for (i64 o = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
         o < NumOut; o += threads)
      store(o, reduceOne<Op, Len, 1>(o, 0, load));
  }
}

} // namespace kiln

#endif
