//===- KernelsConv.cpp - conv2d and conv_transpose2d ----------------------===//
//
// Both are written as gathers: each output element sums the input elements
// and weights that reach it, so the result is one accurate sum per element.
//
//===----------------------------------------------------------------------===//
#include "ref/Kernels.h"
#include "ref/Parallel.h"

#include <cassert>

namespace kiln::ref {

namespace {
/// Sizes shared by both convolutions, with an unbatched input seen as N=1.
struct ConvDims {
  int64_t n, cin, h, w; // input
  int64_t cout, oh, ow; // output
  int64_t kh, kw;       // kernel
  int64_t cinG, coutG;  // channels per group
};

ConvDims convDims(const RefTensor &x, const RefTensor &w,
                  llvm::ArrayRef<int64_t> outSizes, const ConvParams &p,
                  bool transposed) {
  size_t r = x.rank();
  ConvDims d;
  d.n = r == 4 ? x.shape[0] : 1;
  d.cin = x.shape[r - 3];
  d.h = x.shape[r - 2];
  d.w = x.shape[r - 1];
  d.cout = outSizes[r - 3];
  d.oh = outSizes[r - 2];
  d.ow = outSizes[r - 1];
  d.kh = w.shape[2];
  d.kw = w.shape[3];
  d.cinG = d.cin / p.groups;
  d.coutG = d.cout / p.groups;
  assert((transposed ? w.shape[1] == d.coutG : w.shape[1] == d.cinG) &&
         "convolution weight does not match its input");
  return d;
}

double biasAt(const RefTensor *bias, int64_t c) {
  return bias ? bias->data[c] : 0.0;
}

/// Computes every output element of a convolution: bias[co] plus the sum of
/// the input * weight terms that gather(n, co, oy, ox, terms) appends. One
/// (sample, output channel) plane per parallel step.
template <typename Gather>
RefTensor convolve(const ConvDims &d, const RefTensor *bias, DType dt,
                   llvm::ArrayRef<int64_t> outSizes, const Gather &gather) {
  RefTensor out(dt, outSizes);
  double work = double(out.numel()) * d.cinG * d.kh * d.kw;
  parallelFor(d.n * d.cout, work, [&](int64_t begin, int64_t end) {
    std::vector<double> terms;
    double *o = out.data.data() + begin * d.oh * d.ow;
    for (int64_t plane = begin; plane < end; ++plane) {
      int64_t n = plane / d.cout, co = plane % d.cout;
      for (int64_t oy = 0; oy < d.oh; ++oy)
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          terms.assign(1, biasAt(bias, co));
          gather(n, co, oy, ox, terms);
          *o++ = sum(terms);
        }
    }
  });
  return out;
}

/// The input position that kernel tap k sends to output position o, or -1
/// when none does: o = i * stride - padding + k * dilation.
int64_t transposedSource(int64_t o, int64_t k, int64_t stride, int64_t pad,
                         int64_t dil, int64_t size) {
  int64_t t = o + pad - k * dil;
  if (t < 0 || t % stride != 0 || t / stride >= size)
    return -1;
  return t / stride;
}
} // namespace

RefTensor conv2d(const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                 const ConvParams &p, DType dt,
                 llvm::ArrayRef<int64_t> outSizes) {
  ConvDims d = convDims(x, w, outSizes, p, false);
  return convolve(
      d, bias, dt, outSizes,
      [&](int64_t n, int64_t co, int64_t oy, int64_t ox,
          std::vector<double> &terms) {
        int64_t g = co / d.coutG;
        for (int64_t ci = 0; ci < d.cinG; ++ci)
          for (int64_t ky = 0; ky < d.kh; ++ky) {
            int64_t iy = oy * p.stride[0] - p.padding[0] + ky * p.dilation[0];
            if (iy < 0 || iy >= d.h)
              continue;
            for (int64_t kx = 0; kx < d.kw; ++kx) {
              int64_t ix = ox * p.stride[1] - p.padding[1] + kx * p.dilation[1];
              if (ix < 0 || ix >= d.w)
                continue;
              int64_t c = g * d.cinG + ci;
              terms.push_back(
                  x.data[((n * d.cin + c) * d.h + iy) * d.w + ix] *
                  w.data[((co * d.cinG + ci) * d.kh + ky) * d.kw + kx]);
            }
          }
      });
}

RefTensor convTranspose2d(const RefTensor &x, const RefTensor &w,
                          const RefTensor *bias, const ConvParams &p, DType dt,
                          llvm::ArrayRef<int64_t> outSizes) {
  ConvDims d = convDims(x, w, outSizes, p, true);
  return convolve(
      d, bias, dt, outSizes,
      [&](int64_t n, int64_t co, int64_t oy, int64_t ox,
          std::vector<double> &terms) {
        int64_t g = co / d.coutG, cl = co % d.coutG;
        for (int64_t ky = 0; ky < d.kh; ++ky) {
          int64_t iy = transposedSource(oy, ky, p.stride[0], p.padding[0],
                                        p.dilation[0], d.h);
          if (iy < 0)
            continue;
          for (int64_t kx = 0; kx < d.kw; ++kx) {
            int64_t ix = transposedSource(ox, kx, p.stride[1], p.padding[1],
                                          p.dilation[1], d.w);
            if (ix < 0)
              continue;
            for (int64_t ci = g * d.cinG; ci < (g + 1) * d.cinG; ++ci)
              terms.push_back(
                  x.data[((n * d.cin + ci) * d.h + iy) * d.w + ix] *
                  w.data[((ci * d.coutG + cl) * d.kh + ky) * d.kw + kx]);
          }
        }
      });
}

} // namespace kiln::ref
