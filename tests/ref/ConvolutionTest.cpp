//===- ConvolutionTest.cpp - Reference conv2d and conv_transpose2d --------===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {
RefTensor conv(bool transposed, const RefTensor &x, const RefTensor &w,
               const RefTensor *bias, const Conv2dOptions &o) {
  GraphBuilder b("conv");
  Value *xv = b.input("x", DType::F32, Shape::fromSizes(x.shape));
  Value *wv = b.param("w", DType::F32, Shape::fromSizes(w.shape));
  std::vector<RefTensor> params = {w};
  Operand bv = std::nullopt;
  if (bias) {
    bv = b.param("b", DType::F32, Shape::fromSizes(bias->shape));
    params.push_back(*bias);
  }
  b.output(transposed ? b.convTranspose2d(xv, wv, bv, o)
                      : b.conv2d(xv, wv, bv, o));
  std::vector<RefTensor> out = run(b, {x}, params);
  return out.empty() ? RefTensor() : out[0];
}
} // namespace

TEST(RefConvolution, Conv2dDirectLoop) {
  const int64_t N = 2, Cin = 4, H = 9, W = 8, Cout = 6, G = 2, KH = 3, KW = 2;
  Conv2dOptions o;
  o.strideH = 2, o.strideW = 1, o.padH = 1, o.padW = 2;
  o.dilationH = 2, o.dilationW = 3, o.groups = G;
  RefTensor x = randomTensor({N, Cin, H, W}, 51);
  RefTensor w = randomTensor({Cout, Cin / G, KH, KW}, 52);
  RefTensor bias = randomTensor({Cout}, 53);
  RefTensor y = conv(false, x, w, &bias, o);
  int64_t OH = (H + 2 * o.padH - o.dilationH * (KH - 1) - 1) / o.strideH + 1;
  int64_t OW = (W + 2 * o.padW - o.dilationW * (KW - 1) - 1) / o.strideW + 1;
  RefTensor want(DType::F32, {N, Cout, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Cout; ++co)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double s = bias.data[co];
          int64_t g = co / (Cout / G);
          for (int64_t ci = 0; ci < Cin / G; ++ci)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t iy = oy * o.strideH - o.padH + ky * o.dilationH;
                int64_t ix = ox * o.strideW - o.padW + kx * o.dilationW;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                  continue;
                int64_t c = g * (Cin / G) + ci;
                s += x.data[((n * Cin + c) * H + iy) * W + ix] *
                     w.data[((co * (Cin / G) + ci) * KH + ky) * KW + kx];
              }
          want.data[((n * Cout + co) * OH + oy) * OW + ox] = s;
        }
  expectClose(y, want);
  // Unbatched input gives sample 0 of the batched result.
  RefTensor x0(DType::F32, {Cin, H, W});
  x0.data.assign(x.data.begin(), x.data.begin() + Cin * H * W);
  RefTensor y0 = conv(false, x0, w, &bias, o),
            want0(DType::F32, {Cout, OH, OW});
  want0.data.assign(want.data.begin(), want.data.begin() + Cout * OH * OW);
  expectClose(y0, want0);
}

TEST(RefConvolution, ConvTranspose2dScatter) {
  const int64_t N = 2, Cin = 4, H = 5, W = 3, G = 2, CoutG = 3, KH = 3, KW = 2;
  Conv2dOptions o;
  o.strideH = o.strideW = 2, o.padH = o.padW = 1;
  o.outputPadH = o.outputPadW = 1, o.dilationH = o.dilationW = 2;
  o.groups = G;
  RefTensor x = randomTensor({N, Cin, H, W}, 54);
  RefTensor w = randomTensor({Cin, CoutG, KH, KW}, 55);
  RefTensor bias = randomTensor({G * CoutG}, 56);
  RefTensor y = conv(true, x, w, &bias, o);
  int64_t Cout = G * CoutG;
  int64_t OH = (H - 1) * 2 - 2 + 2 * (KH - 1) + 1 + 1;
  int64_t OW = (W - 1) * 2 - 2 + 2 * (KW - 1) + 1 + 1;
  RefTensor want(DType::F32, {N, Cout, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Cout; ++co)
      for (int64_t i = 0; i < OH * OW; ++i)
        want.data[(n * Cout + co) * OH * OW + i] = bias.data[co];
  // Each input element scatters its weights into the output.
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ci = 0; ci < Cin; ++ci)
      for (int64_t iy = 0; iy < H; ++iy)
        for (int64_t ix = 0; ix < W; ++ix) {
          double v = x.data[((n * Cin + ci) * H + iy) * W + ix];
          int64_t g = ci / (Cin / G);
          for (int64_t cl = 0; cl < CoutG; ++cl)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t oy = iy * 2 - 1 + ky * 2, ox = ix * 2 - 1 + kx * 2;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW)
                  continue;
                int64_t co = g * CoutG + cl;
                want.data[((n * Cout + co) * OH + oy) * OW + ox] +=
                    v * w.data[((ci * CoutG + cl) * KH + ky) * KW + kx];
              }
        }
  expectClose(y, want);
}

TEST(RefConvolution, PointwiseConvIsLinearOverChannels) {
  const int64_t N = 2, Cin = 5, Cout = 3, H = 4, W = 3;
  RefTensor x = randomTensor({N, Cin, H, W}, 57);
  RefTensor w = randomTensor({Cout, Cin, 1, 1}, 58),
            bias = randomTensor({Cout}, 59);
  RefTensor y = conv(false, x, w, &bias, {});
  // Rearrange x to [N, H, W, Cin], apply linear, compare channel by channel.
  GraphBuilder b("lin");
  Value *xv = b.input("x", DType::F32, {N * H * W, Cin});
  Value *wv = b.param("w", DType::F32, {Cout, Cin});
  Value *bv = b.param("b", DType::F32, {Cout});
  b.output(b.linear(xv, wv, bv));
  RefTensor xt(DType::F32, {N * H * W, Cin}), w2 = w;
  w2.shape = {Cout, Cin};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cin; ++c)
      for (int64_t p = 0; p < H * W; ++p)
        xt.data[(n * H * W + p) * Cin + c] = x.data[(n * Cin + c) * H * W + p];
  std::vector<RefTensor> lin = run(b, {xt}, {w2, bias});
  ASSERT_EQ(lin.size(), 1u);
  RefTensor want(DType::F32, {N, Cout, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cout; ++c)
      for (int64_t p = 0; p < H * W; ++p)
        want.data[(n * Cout + c) * H * W + p] =
            lin[0].data[(n * H * W + p) * Cout + c];
  expectClose(y, want);
}
