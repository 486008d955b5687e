// Every float through each sigmoid and swish variant of sigmoid.cuh against
// float64. Where the sigmoid is a normal float (x >= -87): the largest
// error in units of the last place of the true value, and how many results
// are not the float nearest it. Below -87 every variant's 1 + e^-x
// overflows as PyTorch's does (sigmoid 0 or subnormal): there, the largest
// difference from variant 0 (PyTorch's), in subnormal steps (2^-149)
// for the sigmoid and in ulps for the swish. NaN and infinities must match
// variant 0 exactly.
//   nvcc -O3 -arch=sm_90a -std=c++17 -I templates -I bench/proto \
//        bench/proto/sigmoid_ulp.cu -o sigmoid_ulp
#include "proto_util.cuh"
#include "sigmoid.cuh"

__device__ double ulpOf(double r) {
  const double a = fabs(r);
  if (a < 0x1p-126)
    return 0x1p-149;
  int e;
  frexp(a, &e); // a = f 2^e, f in [0.5, 1)
  return ldexp(1.0, e - 24);
}

__device__ bool same(float a, float b) {
  return (a != a && b != b) || __float_as_uint(a) == __float_as_uint(b);
}

enum Stat {
  MaxSig,   // x 1000
  BadSig,   // not nearest
  MaxSwish, // x 1000
  BadSwish,
  TailSig,   // x 1000, against variant 0
  TailSwish, // x 1000, against variant 0
  Special,
  DiffersSig, // x >= -87, bits unlike variant 0's
  DiffersSwish,
  MaxSig16,   // x 1000, x >= -16
  MaxSwish16, // x 1000, x >= -16
  Count
};

template <int V> __global__ void sweep(unsigned long long *stats) {
  unsigned long long s[Count] = {};
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32);
       i += (u64)gridDim.x * blockDim.x) {
    const float x = __uint_as_float(unsigned(i));
    const float sg = proto::sigmoid<V>(x), sw = proto::swish<V>(x);
    const float sg0 = proto::sigmoid<0>(x), sw0 = proto::swish<0>(x);
    if (!isfinite(x)) {
      s[Special] += !same(sg, sg0) + !same(sw, sw0);
      continue;
    }
    if (x < -87.0f) {
      s[TailSig] = max(s[TailSig], (unsigned long long)(fabs(double(sg) - sg0) /
                                                        0x1p-149 * 1000));
      s[TailSwish] =
          max(s[TailSwish],
              (unsigned long long)(fabs(double(sw) - sw0) / ulpOf(sw0) * 1000));
      continue;
    }
    const double xd = x, sd = 1.0 / (1.0 + exp(-xd)), swd = xd * sd;
    s[MaxSig] = max(s[MaxSig], (unsigned long long)(fabs(double(sg) - sd) /
                                                    ulpOf(sd) * 1000));
    s[MaxSwish] = max(s[MaxSwish], (unsigned long long)(fabs(double(sw) - swd) /
                                                        ulpOf(swd) * 1000));
    if (x >= -16.0f) {
      s[MaxSig16] =
          max(s[MaxSig16],
              (unsigned long long)(fabs(double(sg) - sd) / ulpOf(sd) * 1000));
      s[MaxSwish16] =
          max(s[MaxSwish16],
              (unsigned long long)(fabs(double(sw) - swd) / ulpOf(swd) * 1000));
    }
    s[BadSig] += sg != float(sd);
    s[BadSwish] += sw != float(swd);
    s[DiffersSig] += !same(sg, sg0);
    s[DiffersSwish] += !same(sw, sw0);
  }
  for (int k = 0; k < Count; ++k)
    if (k == BadSig || k == BadSwish || k == Special || k == DiffersSig ||
        k == DiffersSwish)
      atomicAdd(&stats[k], s[k]);
    else
      atomicMax(&stats[k], s[k]);
}

template <int V> static void run(const char *name) {
  unsigned long long *d, h[Count];
  CK(cudaMalloc(&d, sizeof h));
  CK(cudaMemset(d, 0, sizeof h));
  sweep<V><<<132 * 16, 256>>>(d);
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf(
      "%s\n  x >= -87: sigmoid max %.3f ulp, %llu not nearest; swish "
      "max %.3f ulp, %llu not nearest; unlike variant 0: %llu sigmoids, %llu "
      "swishes\n  x < -87 against variant 0: "
      "sigmoid %.3f subnormal steps, swish %.3f ulp; NaN/inf "
      "mismatches %llu\n  x >= -16: sigmoid max %.3f ulp, swish max %.3f "
      "ulp\n",
      name, h[MaxSig] / 1e3, h[BadSig], h[MaxSwish] / 1e3, h[BadSwish],
      h[DiffersSig], h[DiffersSwish], h[TailSig] / 1e3, h[TailSwish] / 1e3,
      h[Special], h[MaxSig16] / 1e3, h[MaxSwish16] / 1e3);
  CK(cudaFree(d));
}

// One sigmoid and one swish per thread, for reading each variant's SASS.
template <int V> __global__ void sass(float *p) {
  p[threadIdx.x] = proto::sigmoid<V>(p[threadIdx.x]) +
                   proto::swish<V>(p[threadIdx.x + 1024]);
}
template __global__ void sass<0>(float *);
template __global__ void sass<1>(float *);
template __global__ void sass<2>(float *);
template __global__ void sass<5>(float *);

int main() {
  run<0>("0 expf, IEEE division (PyTorch's)");
  run<1>("1 expf, rcp.approx.ftz (Kiln since v45)");
  run<2>("2 expf, branch-free reciprocal and quotient (v19-v44)");
  run<3>("3 __expf, __fdividef");
  run<4>("4 expFlush, branch-free reciprocal and quotient");
  run<5>("5 kiln::sigmoidShort and swishShort (ex2.approx, rcp.approx.ftz)");
  return 0;
}
