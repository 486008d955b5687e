// Every float through kiln::wg::split (3xTF32's parts of x: two integer
// instructions a rounding) against the parts cvt.rna.tf32.f32 gives
// (big = cvt(x), small = cvt(x - big)), and the same for kiln::wg::splitOne
// (one value's parts, for weights). Finite x whose rounding stays finite:
// the bits of both parts must be the same. Infinities, and finite x that
// rounds past the largest TF32 value: big 0, small the infinity cvt.rna
// gives (a small part meets only big parts, of their values' signs). NaN:
// big or small a NaN as the tensor cores read it (its low 13 bits
// dropped). Also split's speed against cvt.rna's in a loop.
//   nvcc -O3 -arch=sm_90a -std=c++17 -I templates -I bench/proto \
//        bench/proto/tf32_split.cu -o tf32_split
#include "kiln/wgmma.cuh"
#include "proto_util.cuh"

// The templates' functions (defined in the device pass for sm_90a only).
__device__ float roundTf32(float v) {
#ifdef KILN_HAS_WGMMA
  return kiln::wg::roundTf32(v);
#else
  return v;
#endif
}
__device__ void splitOne(float v, float &big, float &small) {
#ifdef KILN_HAS_WGMMA
  kiln::wg::splitOne(v, big, small);
#else
  big = v, small = 0.f;
#endif
}
// The parts as cvt.rna gives them (finite v, rounding to a finite big).
__device__ float smallPart(float v, float big) { return roundTf32(v - big); }
__device__ void split(const float4 &v, float4 &big, float4 &small) {
#ifdef KILN_HAS_WGMMA
  kiln::wg::split(v, big, small);
#else
  big = v, small = make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

enum Stat { Finite, FiniteDiffer, Special, SpecialBad, Over, OverBad, Count };

__device__ bool same(float a, float b) {
  return __float_as_uint(a) == __float_as_uint(b);
}

__global__ void sweep(unsigned long long *stats) {
  unsigned long long s[Count] = {};
  // Lanes i, i + 1 and both with the exponent's bits flipped (split tests
  // four at once: infinities and NaNs meet finite values, each float twice).
  for (unsigned long long i =
           (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) * 2;
       i < (1ull << 32); i += 2ull * gridDim.x * blockDim.x) {
    const unsigned a = unsigned(i), e = 0x7f800000u;
    const float4 v =
        make_float4(__uint_as_float(a), __uint_as_float(a + 1),
                    __uint_as_float(a ^ e), __uint_as_float((a + 1) ^ e));
    float4 big, small;
    split(v, big, small);
    const float vs[4] = {v.x, v.y, v.z, v.w};
    const float bs[4] = {big.x, big.y, big.z, big.w};
    const float ss[4] = {small.x, small.y, small.z, small.w};
    for (int k = 0; k < 8; ++k) {
      // k < 4: split's parts of lane k; k >= 4: splitOne's of lane k - 4.
      const float x = vs[k % 4];
      float b = bs[k % 4], sm = ss[k % 4];
      if (k >= 4)
        splitOne(x, b, sm);
      const float b0 = roundTf32(x);
      auto tf32 = [](float f) {
        return __uint_as_float(__float_as_uint(f) & 0xffffe000u);
      };
      if (isnan(x)) {
        ++s[Special];
        s[SpecialBad] += !isnan(tf32(b)) && !isnan(tf32(sm));
      } else if (isinf(x) || isinf(b0)) {
        ++(isinf(x) ? s[Special] : s[Over]);
        const bool ok = same(b, 0.f) && same(sm, b0);
        s[isinf(x) ? SpecialBad : OverBad] += !ok;
      } else {
        ++s[Finite];
        s[FiniteDiffer] += !same(b, b0) || !same(sm, smallPart(x, b0));
      }
    }
  }
  for (int k = 0; k < Count; ++k)
    atomicAdd(&stats[k], s[k]);
}

// The split of n values a thread, variant 0 cvt.rna (the parts as before),
// 1 split; the sum of the parts' bits keeps the work.
template <int V> __global__ void speed(const float4 *in, unsigned *out, int n) {
  float4 v = in[blockIdx.x * blockDim.x + threadIdx.x];
  unsigned acc = 0;
  for (int i = 0; i < n; ++i) {
    float4 big, small;
    if (V == 0) {
      big = make_float4(roundTf32(v.x), roundTf32(v.y), roundTf32(v.z),
                        roundTf32(v.w));
      small = make_float4(smallPart(v.x, big.x), smallPart(v.y, big.y),
                          smallPart(v.z, big.z), smallPart(v.w, big.w));
    } else {
      split(v, big, small);
    }
    acc += __float_as_uint(big.x) ^ __float_as_uint(small.y);
    acc += __float_as_uint(big.z) ^ __float_as_uint(small.w);
    v.x = __uint_as_float(__float_as_uint(v.x) + acc % 3);
    v.y += 1e-3f, v.z -= 1e-3f, v.w += v.x;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int V> static float timeSpeed(const float4 *in, unsigned *out) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  speed<V><<<132 * 8, 256>>>(in, out, 4096);
  CK(cudaEventRecord(a));
  speed<V><<<132 * 8, 256>>>(in, out, 4096);
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

int main() {
  unsigned long long *d, h[Count];
  CK(cudaMalloc(&d, sizeof h));
  CK(cudaMemset(d, 0, sizeof h));
  sweep<<<132 * 16, 256>>>(d);
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("each float twice by split and twice by splitOne: finite %llu "
              "(parts unlike cvt.rna's: %llu); "
              "inf/NaN %llu "
              "(wrong: %llu); rounded past TF32's largest %llu (wrong: "
              "%llu)\n",
              h[Finite], h[FiniteDiffer], h[Special], h[SpecialBad], h[Over],
              h[OverBad]);
  float4 *in;
  unsigned *out;
  const int threads = 132 * 8 * 256;
  CK(cudaMalloc(&in, threads * sizeof(float4)));
  CK(cudaMalloc(&out, threads * sizeof(unsigned)));
  CK(cudaMemset(in, 0x3f, threads * sizeof(float4)));
  std::printf("4096 splits of 4 values a thread, %d threads: cvt.rna %.3f "
              "ms, split %.3f ms\n",
              threads, timeSpeed<0>(in, out), timeSpeed<1>(in, out));
  return 0;
}
