// NVRTC compiles the contraction templates (gemm.cuh, conv.cuh), and every
// embedded header on its own, for each target arch, with the embedded
// headers only -- no GPU needed. ptxas must report no register spills in the
// contraction kernels.

#include "Templates.h"

#include "kiln/tiling.cuh"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

namespace {

struct Compiled {
  bool ok = false;
  std::string log;
  size_t cubinBytes = 0;
};

/// Compiles source for arch ("sm_90") with NVRTC directly, the embedded
/// templates as its only headers.
Compiled compile(const std::string &source, const std::string &arch,
                 const char *fileName) {
  std::vector<const char *> names, texts;
  for (const kiln::EmbeddedFile &f : kiln::embeddedTemplates()) {
    names.push_back(f.name);
    texts.push_back(f.text.data()); // NUL-terminated
  }
  Compiled out;
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), fileName,
                         static_cast<int>(names.size()), texts.data(),
                         names.data()) != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  const std::string archOption = "--gpu-architecture=" + arch;
  const char *options[] = {archOption.c_str(), "-std=c++17",
                           "--ptxas-options=-v"};
  out.ok = nvrtcCompileProgram(prog, 3, options) == NVRTC_SUCCESS;
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  out.log.resize(logSize);
  nvrtcGetProgramLog(prog, out.log.data());
  if (out.ok)
    nvrtcGetCUBINSize(prog, &out.cubinBytes);
  nvrtcDestroyProgram(&prog);
  return out;
}

/// The ptxas lines reporting a spill of more than 0 bytes ("no report" if
/// ptxas reported nothing).
std::string spills(const std::string &log) {
  if (log.find("bytes spill stores") == std::string::npos)
    return "no ptxas report";
  static const std::regex spill("[1-9][0-9]* bytes spill (stores|loads)");
  std::string found;
  for (std::sregex_iterator it(log.begin(), log.end(), spill), end; it != end;
       ++it)
    found += it->str() + "\n";
  return found;
}

/// ptxas's spills in `log` (as spills() reports them), leaving out those of
/// kernels named *_3xtf32* of 4 bytes at most: 3xTF32's convolutions that
/// share rows keep 128 registers of sums (an accumulator set a row tap and
/// total) beside two steps' fragments, and ptxas spills one value in some
/// (here a channel reduction's epilogue and paired stores of odd rows;
/// none of the sweep's or L2_19's kernels, bench/NOTES.md v41).
std::string spillsBeyond3xTf32s(const std::string &log) {
  if (log.find("bytes spill stores") == std::string::npos)
    return "no ptxas report";
  static const std::regex kernel(
      "Function properties for ([A-Za-z0-9_]+)\\n[^\\n]*?([0-9]+) bytes "
      "spill stores, ([0-9]+) bytes spill loads");
  std::string found;
  for (std::sregex_iterator it(log.begin(), log.end(), kernel), end; it != end;
       ++it) {
    const std::string name = (*it)[1].str();
    const int stores = std::stoi((*it)[2].str()),
              loads = std::stoi((*it)[3].str());
    const int allowed = name.find("_3xtf32") != std::string::npos ? 4 : 0;
    if (stores > allowed || loads > allowed)
      found += it->str() + "\n";
  }
  return found;
}

// Kernels as the emitter writes them.
const char *const kGemmSource = R"(
#include "kiln/gemm.cuh"
#define KERNEL(name, Cfg) extern "C" __global__ void \
  __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) name

using kiln::GemmShape;
using kiln::BatchMap;
using Odd = GemmShape<37, 45, 29>;
using Big = GemmShape<32768, 4096, 1024>;
using Huge = GemmShape<1 << 20, 4096, 64>; // M*N > 2^31
static_assert(kiln::GemmAuto<Odd>::type::BP == kiln::kGemmSmall.bp, "");
static_assert(kiln::GemmAuto<Big>::type::BP == kiln::kGemmLarge.bp, "");

KERNEL(linear_odd_bias, kiln::GemmSmall)(const float *x, const float *w,
                                        const float *b, float *y) {
  kiln::gemmNT<Odd, true>(x, w, b, y);
}
KERNEL(linear_odd_large, kiln::GemmLarge)(const float *x, const float *w,
                                         float *y) {
  kiln::gemmNT<Odd, false, kiln::GemmLarge>(x, w, nullptr, y);
}
KERNEL(linear_big_bias, kiln::GemmLarge)(const float *x, const float *w,
                                        const float *b, float *y) {
  kiln::gemmNT<Big, true>(x, w, b, y);
}
KERNEL(linear_big_relu, kiln::GemmLarge)(const float *x, const float *w,
                                        float *y) {
  kiln::gemmNT<Big, false>(x, w, nullptr, y, [](float v, int, int) {
    return v > 0.f ? v : 0.f;
  });
}
KERNEL(linear_huge, kiln::GemmLarge)(const float *x, const float *w,
                                    const float *b, float *y) {
  kiln::gemmNT<Huge, true>(x, w, b, y);
}
// a [3, 1, 37, 29] x b [4, 29, 45]
KERNEL(matmul_bcast2, kiln::GemmSmall)(const float *a, const float *b,
                                      float *c) {
  kiln::gemmNN<Odd, BatchMap<3, 37 * 29, 0, 4, 0, 29 * 45>>(a, b, c);
}
// a [5, 33, 20] x b [20, 52]
KERNEL(matmul_bshared, kiln::GemmSmall)(const float *a, const float *b,
                                       float *c) {
  kiln::gemmNN<GemmShape<33, 52, 20>, BatchMap<5, 33 * 20, 0>>(a, b, c);
}
// a [2, 512, 1024] x b [2, 1024, 768]
KERNEL(matmul_big, kiln::GemmLarge)(const float *a, const float *b, float *c) {
  kiln::gemmNN<GemmShape<512, 768, 1024>, BatchMap<2, 512 * 1024, 1024 * 768>,
               kiln::GemmLarge>(a, b, c);
}
)";

const char *const kConvSource = R"(
#include "kiln/conv.cuh"
#define KERNEL(name, Cfg) extern "C" __global__ void \
  __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) name

// stride 2, padding 1, dilation 2, groups 2
using C1 = kiln::Conv2dParams<2, 6, 17, 19, 8, 3, 3, 2, 2, 1, 1, 2, 2, 2>;
using C2 = kiln::Conv2dParams<8, 64, 56, 56, 128, 3, 3, 1, 1, 1, 1>;
// L2_19: x [128, 64, 256, 256] -> y [128, 64, 258, 258]
using T1 = kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>;
// stride 2, padding 1, output_padding 1, groups 2
using T2 =
    kiln::ConvTranspose2dParams<2, 6, 7, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 2, 1, 1>;
static_assert(C1::Ho == 8 && C1::Wo == 9, "");
static_assert(T1::Ho == 258 && T1::Wo == 258 && T1::K == 576, "");
static_assert(T2::Ho == 14 && T2::Wo == 18, "");
static_assert(kiln::ConvAuto<T1>::type::BQ == 64, "");

KERNEL(conv2d_s2p1d2g2, kiln::ConvAuto<C1>::type)(const float *x,
    const float *w, const float *b, float *y) {
  kiln::conv2d<C1, true>(x, w, b, y);
}
KERNEL(conv2d_k3_128, kiln::ConvAuto<C2>::type)(const float *x,
    const float *w, float *y) {
  kiln::conv2d<C2, false>(x, w, nullptr, y);
}
KERNEL(conv_transpose2d_l2_19, kiln::ConvAuto<T1>::type)(const float *x,
    const float *w, const float *b, float *y) {
  kiln::convTranspose2d<T1, true>(x, w, b, y);
}
KERNEL(conv_transpose2d_odd, kiln::ConvAuto<T2>::type)(const float *x,
    const float *w, const float *b, float *y) {
  kiln::convTranspose2d<T2, true>(x, w, b, y);
}
)";

// linear on Hopper tensor cores, in each precision, as the emitter writes it.
const char *const kWgmmaSource = R"(
#include "kiln/half.cuh"
#include "kiln/wgmma.cuh"
#define KERNEL(name) extern "C" __global__ void __launch_bounds__(384, 1) name

using kiln::GemmShape;
using kiln::WgmmaConfig;
using kiln::WgmmaEpilogue;
using Odd = GemmShape<129, 257, 36>;       // every tile edge
using L2_62 = GemmShape<1024, 8192, 8192>; // and L2_75
using L2_37 = GemmShape<32768, 4096, 1024>;
using Tiny = GemmShape<7, 9, 4>;
using kiln::NoPost;

KERNEL(tf32_odd)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaLinear<Odd, WgmmaConfig<256, 4, 1>, true, WgmmaEpilogue<1, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f);
}
KERNEL(tf32_odd_narrow)(const float *x, const float *w, float *y) {
  kiln::wgmmaLinear<Odd, WgmmaConfig<128, 6, 1>, false, WgmmaEpilogue<1, 0>>(
      x, w, nullptr, kiln::StoreLinear{y}, NoPost{}, 0.f);
}
KERNEL(tf32x3_odd)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaLinear<Odd, WgmmaConfig<128, 4, 3>, true, WgmmaEpilogue<1, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f);
}
KERNEL(tf32_l2_62)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaLinear<L2_62, WgmmaConfig<256, 4, 1>, true, WgmmaEpilogue<2, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f);
}
// Runs of 8 halves: the quad transposes its accumulators first.
KERNEL(bf16_runs)(const kiln::bf16 *x, const kiln::bf16 *w,
                  const kiln::bf16 *b, kiln::bf16 *y) {
  kiln::wgmmaLinear<GemmShape<129, 264, 40>, WgmmaConfig<256, 4, 1>, true,
                    WgmmaEpilogue<8, 0>>(x, w, b, kiln::StoreLinear{y},
                                         NoPost{}, 0.f);
}
// Split-K: each tile's K slices shared out over 4 blocks (unevenly: 33
// slices), the last to finish adding the partial sums.
KERNEL(tf32_split_k)(const float *x, const float *w, const float *b, float *y,
                     float *parts, unsigned long long *arrivals) {
  kiln::wgmmaLinear<GemmShape<129, 257, 1028>,
                    WgmmaConfig<256, 4, 1, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitNone, false, 4>,
                    true, WgmmaEpilogue<1, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f, nullptr, nullptr, nullptr,
      (kiln::NoTail *)nullptr, kiln::WgmmaSplitK{parts, arrivals});
}
KERNEL(bf16_split_k)(const kiln::bf16 *x, const kiln::bf16 *w, kiln::bf16 *y,
                     float *parts, unsigned long long *arrivals) {
  kiln::wgmmaLinear<GemmShape<64, 136, 4096>,
                    WgmmaConfig<128, 6, 1, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitNone, false, 16>,
                    false, WgmmaEpilogue<8, 0>>(
      x, w, nullptr, kiln::StoreLinear{y}, NoPost{}, 0.f, nullptr, nullptr,
      nullptr, (kiln::NoTail *)nullptr, kiln::WgmmaSplitK{parts, arrivals});
}
KERNEL(tf32_tiny)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaLinear<Tiny, WgmmaConfig<128, 6, 1>, true, WgmmaEpilogue<1, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f);
}
// f16 and bf16 storage: their own wgmma, 64 of K a slice.
KERNEL(bf16_odd)(const kiln::bf16 *x, const kiln::bf16 *w,
                 const kiln::bf16 *b, kiln::bf16 *y) {
  kiln::wgmmaLinear<GemmShape<129, 257, 40>, WgmmaConfig<256, 4, 1>, true,
                    WgmmaEpilogue<1, 0>>(x, w, b, kiln::StoreLinear{y},
                                         NoPost{}, 0.f);
}
KERNEL(f16_narrow)(const kiln::f16 *x, const kiln::f16 *w, kiln::f16 *y) {
  kiln::wgmmaLinear<GemmShape<300, 128, 1024>, WgmmaConfig<128, 6, 1>, false,
                    WgmmaEpilogue<2, 0>>(x, w, nullptr, kiln::StoreLinear{y},
                                         NoPost{}, 0.f);
}
// 3xTF32 with w split once per launch into `parts`.
KERNEL(tf32x3_split_w)(const float *x, const float *w, const float *b,
                       float *y, float *parts, unsigned long long *launches) {
  kiln::wgmmaLinear<Odd,
                    WgmmaConfig<128, 4, 3, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitEachLaunch>,
                    true, WgmmaEpilogue<1, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f, parts, launches);
}
// The same, split again only when the host sets *flag.
KERNEL(tf32x3_split_w_flagged)(const float *x, const float *w, const float *b,
                               float *y, float *parts,
                               unsigned long long *launches, unsigned *flag) {
  kiln::wgmmaLinear<Odd,
                    WgmmaConfig<128, 4, 3, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitFlagged>,
                    true, WgmmaEpilogue<1, 0>>(
      x, w, b, kiln::StoreLinear{y}, NoPost{}, 0.f, parts, launches, flag);
}
// matmul's K x N right operand transposed before the tiles: TF32 each
// launch, 3xTF32 (transposed and split) when the host sets *flag.
KERNEL(tf32_transposed)(const float *x, const float *w, float *y,
                        float *parts, unsigned long long *launches) {
  kiln::wgmmaLinear<Odd,
                    WgmmaConfig<256, 4, 1, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitEachLaunch, true>,
                    false, WgmmaEpilogue<1, 0>>(
      x, w, nullptr, kiln::StoreLinear{y}, NoPost{}, 0.f, parts, launches);
}
KERNEL(tf32x3_transposed_flagged)(const float *x, const float *w, float *y,
                                  float *parts, unsigned long long *launches,
                                  unsigned *flag) {
  kiln::wgmmaLinear<Odd,
                    WgmmaConfig<128, 4, 3, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitFlagged, true>,
                    false, WgmmaEpilogue<1, 0>>(
      x, w, nullptr, kiln::StoreLinear{y}, NoPost{}, 0.f, parts, launches,
      flag);
}
// A batched matmul (kiln::BatchMap: a [2, 3, M, K] x b [2, 1, K, N]), each
// of b's two matrices transposed and split before the tiles.
KERNEL(tf32x3_batched)(const float *x, const float *w, float *y, float *parts,
                       unsigned long long *launches) {
  kiln::wgmmaLinear<Odd,
                    WgmmaConfig<128, 4, 3, kiln::kWgmmaGroupM,
                                kiln::kWgmmaSplitEachLaunch, true>,
                    false, WgmmaEpilogue<1, 0>,
                    kiln::BatchMap<2, 3 * 129 * 36, 36 * 257, 3, 129 * 36, 0>>(
      x, w, nullptr, kiln::StoreLinear{y}, NoPost{}, 0.f, parts, launches);
}
// GroupNorm of 16 columns in the epilogue, then leaky_relu and x + x.
KERNEL(tf32x3_l2_62_gn)(const float *x, const float *w, const float *b,
                        float *out) {
  auto pre = [&](kiln::i64, float (&)[2], bool) {};
  auto post = [&](kiln::i64 i, float (&v)[2], bool live) {
    for (int l = 0; l < 2; ++l) {
      const float t = v[l] > 0.f ? v[l] : v[l] * 0.01f;
      v[l] = t + t;
    }
    if (live)
      kiln::storeVec<2>(out + i, v);
  };
  kiln::wgmmaLinear<L2_62, WgmmaConfig<128, 4, 3>, true, WgmmaEpilogue<2, 16>>(
      x, w, b, pre, post, 1e-5f);
}
// swish, + bias, then GroupNorm of 64 columns with gamma and beta.
KERNEL(tf32_l2_37_gn)(const float *x, const float *w, const float *b,
                      const float *bias, const float *gamma,
                      const float *beta, float *out) {
  auto pre = [&](kiln::i64 i, float (&v)[2], bool) {
    const unsigned ii = i; // as the emitter indexes: 32 bits, unsigned
    float b[2];
    kiln::loadVec<2>(bias + ii % 4096, b);
    for (int l = 0; l < 2; ++l)
      v[l] = v[l] / (1.f + expf(-v[l])) + b[l];
  };
  auto post = [&](kiln::i64 i, float (&v)[2], bool live) {
    const unsigned ii = i;
    float g[2], o[2];
    kiln::loadVec<2>(gamma + ii % 4096, g);
    kiln::loadVec<2>(beta + ii % 4096, o);
    for (int l = 0; l < 2; ++l)
      v[l] = v[l] * g[l] + o[l];
    if (live)
      kiln::storeVec<2>(out + i, v);
  };
  kiln::wgmmaLinear<L2_37, WgmmaConfig<256, 4, 1>, true, WgmmaEpilogue<2, 64>>(
      x, w, b, pre, post, 1e-5f);
}
// A tail: each row's min over the tiles (keys), then, after the consumers'
// grid barrier, out[n][m] = min[m] + bias[n] (L2_75's pattern).
KERNEL(tf32_row_min)(const float *x, const float *w, const float *bias,
                     float *out, unsigned *keys, unsigned *barrier) {
  kiln::WgmmaTail<kiln::ReduceOp::Min, 1> tail{keys};
  auto pre = [&](kiln::i64, float (&)[1], bool) {}; // v: the tail's operand
  kiln::wgmmaLinear<Odd, WgmmaConfig<256, 4, 1>, false, WgmmaEpilogue<1, 0>>(
      x, w, nullptr, pre, NoPost{}, 0.f, nullptr, nullptr, nullptr, &tail);
  if (threadIdx.x < 128)
    return;
  kiln::gridBarrier<kiln::WgmmaConsumers>(barrier);
  for (int o = blockIdx.x * 256 + kiln::WgmmaConsumers::thread(); o < 257 * 129;
       o += gridDim.x * 256)
    out[o] = kiln::tailValue<true>(__ldcg(keys + o % 129)) + bias[o / 129];
  kiln::tailRestore<kiln::WgmmaConsumers>(keys, 129, barrier);
}
// A logsumexp tail: partials per row and column tile, combined in order
// after the first barrier into the keys (as floats), then a second.
KERNEL(tf32x3_row_lse)(const float *x, const float *w, float *out,
                       unsigned *keys, unsigned *barrier, void *parts) {
  kiln::WgmmaTail<kiln::ReduceOp::LogSumExp, 1> tail{keys, parts};
  auto pre = [&](kiln::i64, float (&)[1], bool) {};
  kiln::wgmmaLinear<Odd, WgmmaConfig<128, 4, 3>, false, WgmmaEpilogue<1, 0>>(
      x, w, nullptr, pre, NoPost{}, 0.f, nullptr, nullptr, nullptr, &tail);
  if (threadIdx.x < 128)
    return;
  kiln::gridBarrier<kiln::WgmmaConsumers>(barrier);
  kiln::wgmmaTailFinish<kiln::WgmmaConsumers, 129, 3, 257>(tail);
  kiln::gridBarrier<kiln::WgmmaConsumers>(barrier, 2);
  for (int o = blockIdx.x * 256 + kiln::WgmmaConsumers::thread(); o < 129;
       o += gridDim.x * 256)
    out[o] = __uint_as_float(keys[o]);
  kiln::tailRestore<kiln::WgmmaConsumers>(keys, 129, barrier);
}
// A mean over two rows a key (a [B, T, N] result's samples).
KERNEL(tf32_row_mean)(const float *x, const float *w, float *out,
                      unsigned *keys, unsigned *barrier, void *parts) {
  kiln::WgmmaTail<kiln::ReduceOp::Mean, 3> tail{keys, parts};
  auto pre = [&](kiln::i64, float (&)[1], bool) {};
  kiln::wgmmaLinear<Odd, WgmmaConfig<256, 4, 1>, false, WgmmaEpilogue<1, 0>>(
      x, w, nullptr, pre, NoPost{}, 0.f, nullptr, nullptr, nullptr, &tail);
  if (threadIdx.x < 128)
    return;
  kiln::gridBarrier<kiln::WgmmaConsumers>(barrier);
  kiln::wgmmaTailFinish<kiln::WgmmaConsumers, 129, 2, 3 * 257>(tail);
  kiln::gridBarrier<kiln::WgmmaConsumers>(barrier, 2);
  for (int o = blockIdx.x * 256 + kiln::WgmmaConsumers::thread(); o < 43;
       o += gridDim.x * 256)
    out[o] = __uint_as_float(keys[o]);
  kiln::tailRestore<kiln::WgmmaConsumers>(keys, 43, barrier);
}
)";

/// The PTX NVRTC makes of `source` for `arch` ("" when it fails).
std::string ptxOf(const std::string &source, const std::string &arch) {
  std::vector<const char *> names, texts;
  for (const kiln::EmbeddedFile &f : kiln::embeddedTemplates()) {
    names.push_back(f.name);
    texts.push_back(f.text.data());
  }
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "ptx.cu",
                         static_cast<int>(names.size()), texts.data(),
                         names.data()) != NVRTC_SUCCESS)
    return "";
  const std::string archOption = "--gpu-architecture=compute_" + arch.substr(3);
  const char *options[] = {archOption.c_str(), "-std=c++17"};
  std::string ptx;
  if (nvrtcCompileProgram(prog, 2, options) == NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetPTXSize(prog, &size);
    ptx.resize(size);
    nvrtcGetPTX(prog, ptx.data());
  }
  nvrtcDestroyProgram(&prog);
  return ptx;
}

// The sigmoid and swish of an epilogue divide by rcp.approx.ftz, without
// a branch: IEEE division's slow path is a call behind one, and v30's
// special cases written as ternaries became four branches a swish, which
// ran a convolution's epilogue (128 values unrolled) one value after
// another (3 x 3 8 -> 64 with silu 0.95 -> 0.76 ms without them on an
// H100: bench/NOTES.md v30).
TEST(EpilogueOps, SigmoidAndSwishHaveNoBranch) {
  const char *source = R"(
#include "kiln/ops.cuh"
extern "C" __global__ void act(const float *x, float *y) {
  float v[16];
#pragma unroll
  for (int i = 0; i < 16; ++i)
    v[i] = x[threadIdx.x + 32 * i];
#pragma unroll
  for (int i = 0; i < 16; ++i)
    y[threadIdx.x + 32 * i] = kiln::swish(v[i]) + kiln::sigmoid(v[i]);
}
)";
  const std::string ptx = ptxOf(source, "sm_90a");
  ASSERT_NE(ptx.find("rcp.approx.ftz.f32"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("bra"), std::string::npos) << ptx;
}

// On sm_90a each variant compiles without spills into wgmma that ptxas
// keeps asynchronous (it warns when it must serialise them).
TEST(WgmmaCompile, EveryVariantUsesTensorCoresOnSm90a) {
  Compiled c = compile(kWgmmaSource, "sm_90a", "wgmma_test.cu");
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_EQ(spills(c.log), "") << c.log;
  EXPECT_EQ(c.log.find("serializ"), std::string::npos) << c.log;
  const std::string ptx = ptxOf(kWgmmaSource, "sm_90a");
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("cvt.rna.tf32.f32"), std::string::npos); // 3xTF32 split
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"),
            std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
            std::string::npos);
  // The grid barrier after splitting w once.
  EXPECT_NE(ptx.find("atom.add.release.gpu.global.u64"), std::string::npos);
  EXPECT_NE(ptx.find("ld.acquire.gpu.global.u64"), std::string::npos);
  // The tail: the quads' atomics, the consumers' named barrier.
  EXPECT_NE(ptx.find("atom.global.max.u32"), std::string::npos);
  EXPECT_NE(ptx.find("bar.sync 1, 256"), std::string::npos);
}

// Convolutions on Hopper tensor cores (wgmma_conv.cuh): L2_19's
// conv_transpose2d (3 stages), a dilated and padded conv2d, a padded
// 64-channel conv2d (2 stages), a 1 x 1 conv2d of 48 channels (a half-used
// weight slice), 8 input channels (zeros to 16) into 128 output channels
// (two parts of 64), 40 output channels (parts of 8), strided
// conv_transposed2d (4 output phases: kernel 3 with output_padding, kernel
// 4; parts of 16), a fused epilogue, 3xTF32 variants (the strided
// conv_transpose2d apart: it spills, WgmmaConvCompile.Strided3xTf32), and
// the weight copied from the blocks' images (made once: a grid barrier), at
// TF32 and, by phase, 3xTF32; conv2d of stride 2 (kernel 3, also in 3xTF32,
// and 1 x 1); two groups (conv2d at TF32, conv_transpose2d at 3xTF32); rows
// of 14 and 21 floats (8- and 4-byte copies).
const char *const kWgmmaConvSource = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name) extern "C" __global__ void __launch_bounds__(384, 1) name

KERNEL(convt_l2_19)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true>(x, w, b, kiln::ConvStore{y});
}
KERNEL(conv_dilated)(const float *x, const float *w, const float *b,
                     float *y) {
  kiln::wgmmaConv<
      kiln::Conv2dParams<3, 32, 29, 44, 64, 3, 3, 1, 1, 2, 2, 2, 2>, true>(
      x, w, b, kiln::ConvStore{y});
}
KERNEL(conv_pad_two_stages)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 19, 24, 64, 3, 3, 1, 1, 1, 1>,
                  false>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(conv_1x1_cin48)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 48, 17, 20, 64, 1, 1>, false>(
      x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(conv_cin8_cout128)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 8, 17, 20, 128, 3, 3, 1, 1, 1, 1>,
                  false>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(conv_cout40)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 16, 17, 20, 40, 1, 1>, false>(
      x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(convt_s2_k3)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<4, 64, 33, 36, 32, 3, 3, 2, 2,
                                              1, 1, 1, 1, 1, 1, 1>,
                  true>(x, w, b, kiln::ConvStore{y});
}
KERNEL(convt_s2_k4_relu)(const float *x, const float *w, const float *b,
                         float *y) {
  auto relu = [&](kiln::i64 i, float (&v)[1], bool live) {
    if (live)
      y[i] = fmaxf(v[0], 0.f);
  };
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<4, 64, 33, 36, 64, 4, 4, 2, 2,
                                              1, 1>,
                  true, 1, 16>(x, w, b, relu);
}
// 3xTF32 (highest): 32 output channels a block at most, m64n32k8.
KERNEL(convt_l2_19_3xtf32)(const float *x, const float *w, const float *b,
                           float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 3>(x, w, b, kiln::ConvStore{y});
}
KERNEL(conv_pad_3xtf32)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 19, 24, 64, 3, 3, 1, 1, 1, 1>,
                  false, 3>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(conv_s2_k3)(const float *x, const float *w, const float *b,
                   float *y) {
  kiln::wgmmaConv<
      kiln::Conv2dParams<2, 32, 37, 44, 64, 3, 3, 2, 2, 1, 1>, true>(
      x, w, b, kiln::ConvStore{y});
}
KERNEL(conv_s2_3xtf32)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 16, 29, 32, 32, 3, 3, 2, 2, 1, 1>,
                  false, 3>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(conv_1x1_s2)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 30, 32, 128, 1, 1, 2, 2>, false,
                  1, 64>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(convt_l2_19_image)(const float *x, const float *w, const float *b,
                          float *y, float *image, unsigned long long *launches,
                          unsigned *flag) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 1, 64, false, 1, true>(x, w, b, kiln::ConvStore{y},
                                               image, launches, flag);
}
KERNEL(conv_grouped)(const float *x, const float *w, const float *b,
                     float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 32, 23, 28, 64, 3, 3, 1, 1, 1, 1, 1,
                                     1, 2>,
                  true>(x, w, b, kiln::ConvStore{y});
}
KERNEL(convt_grouped_3xtf32)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 32, 13, 16, 32, 3, 3, 1, 1,
                                              1, 1, 1, 1, 2>,
                  false, 3>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(conv_w14)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1>,
                  true>(x, w, b, kiln::ConvStore{y});
}
KERNEL(convt_w21)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 32, 13, 21, 32, 3, 3, 2, 2,
                                              1, 1, 1, 1, 1, 1, 1>,
                  false>(x, w, nullptr, kiln::ConvStore{y});
}
KERNEL(convt_s2_k4_by_phase_image)(const float *x, const float *w, float *y,
                                   float *image, unsigned long long *launches,
                                   unsigned *flag) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 64, 9, 12, 32, 4, 4, 2, 2, 1,
                                              1>,
                  false, 3, 32, true, 1, true>(
      x, w, nullptr, kiln::ConvStore{y}, image, launches, flag);
}
)";

TEST(WgmmaConvCompile, EveryVariantUsesTensorCoresOnSm90a) {
  Compiled c = compile(kWgmmaConvSource, "sm_90a", "wgmma_conv_test.cu");
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_EQ(spillsBeyond3xTf32s(c.log), "") << c.log;
  EXPECT_EQ(c.log.find("C75"), std::string::npos) << c.log; // no waits added
  const std::string ptx = ptxOf(kWgmmaConvSource, "sm_90a");
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("cvt.rna.tf32.f32"), std::string::npos); // 3xTF32
  EXPECT_NE(ptx.find("cp.async.mbarrier.arrive.noinc"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.ca.shared.global [%r"), std::string::npos);
  EXPECT_NE(ptx.find("], 8, %r"), std::string::npos); // 8-byte copies
  EXPECT_NE(ptx.find("], 4, %r"), std::string::npos); // 4-byte copies
  EXPECT_NE(ptx.find("atom.add.release.gpu.global.u64"), std::string::npos);
  for (const char *arch : {"sm_90", "sm_80"}) {
    Compiled other = compile(kWgmmaConvSource, arch, "wgmma_conv_test.cu");
    ASSERT_TRUE(other.ok) << arch << ":\n" << other.log;
    EXPECT_EQ(ptxOf(kWgmmaConvSource, arch).find("wgmma"), std::string::npos)
        << arch;
  }
}

// 3xTF32 on a strided conv_transpose2d of kernel 3 compiles to tensor
// cores, with a 16-byte spill under NVRTC (none under nvcc with the same
// options): NVVM merges the four phases' unrolled code. Known, left in
// bench/NOTES.md. (A strided conv2d in 3xTF32 spilled 32 bytes until its
// fragments were read with ld.shared; it is among the variants above.)
TEST(WgmmaConvCompile, Strided3xTf32) {
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
extern "C" __global__ void __launch_bounds__(384, 1)
convt_s2_k3_3xtf32(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<4, 64, 33, 36, 64, 3, 3, 2, 2,
                                              1, 1, 1, 1, 1, 1, 1>,
                  true, 3>(x, w, b, kiln::ConvStore{y});
}
)";
  Compiled c = compile(source, "sm_90a", "wgmma_conv_s2_test.cu");
  ASSERT_TRUE(c.ok) << c.log;
  const std::string ptx = ptxOf(source, "sm_90a");
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32"),
            std::string::npos);
  EXPECT_NE(ptx.find("cvt.rna.tf32.f32"), std::string::npos);
}

/// The PTX of convolution kernels `source`, which must compile for sm_90a
/// without spills (spillsBeyond3xTf32s) or waits that ptxas adds between
/// wgmmas (C7513/C7519/C7520), into each of `wgmmas` (by default m64n64k8
/// and m64n32k8 TF32).
std::string convPtxOnTensorCores(const char *source, const char *file,
                                 std::initializer_list<const char *> wgmmas = {
                                     "m64n64k8.f32.tf32.tf32",
                                     "m64n32k8.f32.tf32.tf32"}) {
  Compiled c = compile(source, "sm_90a", file);
  EXPECT_TRUE(c.ok) << c.log;
  EXPECT_EQ(spillsBeyond3xTf32s(c.log), "") << c.log;
  EXPECT_EQ(c.log.find("C75"), std::string::npos) << c.log;
  const std::string ptx = ptxOf(source, "sm_90a");
  for (const char *w : wgmmas)
    EXPECT_NE(ptx.find(std::string("wgmma.mma_async.sync.aligned.") + w),
              std::string::npos)
        << w;
  return ptx;
}

// conv2d 4 x 4 of stride 2 whose patch leaves no room at 16-byte copies
// (34 x 40 pixels a stage, 87.5 KiB): the layout takes 8-byte ones (rows
// of 36 starting 2 columns before the tile's, even where the input's rows
// would take 16-byte copies), which fit beside the weight at 128 input
// channels (TF32) and 64 (3xTF32); 32 keeps 16-byte copies.
// The scheduler picks them only where no part fits otherwise.
TEST(WgmmaConvCompile, NarrowCopiesWhereThePatchDoesNotFit) {
  constexpr auto layout = [](int cin, int passes) {
    return kiln::WgmmaConvLayout(false, 4, 4, 2, 2, 1, 1, 1, 1, cin, 8, passes,
                                 false);
  };
  for (const auto &[cin, passes, chunk] :
       {std::tuple{128, 1, 2}, std::tuple{64, 3, 2}, std::tuple{32, 1, 4}}) {
    const kiln::WgmmaConvLayout l = layout(cin, passes);
    EXPECT_EQ(l.chunk, chunk) << cin;
    EXPECT_EQ(l.left, chunk == 2 ? -2 : -4) << cin;
    EXPECT_EQ(l.rowW, chunk == 2 ? 36 : 40) << cin;
    EXPECT_LE(l.sharedBytes(), kiln::kWgmmaConvSharedLimit) << cin;
    EXPECT_EQ(l.stages, 2) << cin;
  }
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name)                                                           \
  extern "C" __global__ void __launch_bounds__(384, 1)                         \
  name(const float *x, const float *w, const float *b, float *y)
KERNEL(conv_k4_s2_cin128) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 128, 30, 32, 16, 4, 4, 2, 2, 1, 1>,
                  true, 1, 8>(x, w, b, kiln::ConvStore{y});
}
KERNEL(conv_k4_s2_cin64_3xtf32) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 30, 32, 16, 4, 4, 2, 2, 1, 1>,
                  true, 3, 8>(x, w, b, kiln::ConvStore{y});
}
)";
  const std::string ptx = convPtxOnTensorCores(
      source, "wgmma_conv_narrow_copies_test.cu", {"m64n8k8.f32.tf32.tf32"});
  // 8-byte copies of the patch (32-wide rows would take 16), none of 16.
  EXPECT_NE(ptx.find("cp.async.ca.shared.global"), std::string::npos);
  EXPECT_EQ(ptx.find("cp.async.cg.shared.global"), std::string::npos);
}

// The weight streamed through the ring (conv2d 3 x 3 from 256 input
// channels: kept whole, a part of 128 channels would take 576 KiB): no
// weight kept, each stage its 16 channels' weight for every tap after its
// patch (1024-aligned), 128 x 64 bytes a tap, 3xTF32's small parts after
// the big ones; a part's image every stage's. Parts of 128 (TF32: 2
// stages), 64 (ping-pong) and 32 (3xTF32: 3) compile to tensor cores with
// one bulk copy a stage and 64-byte swizzled descriptors, without spills
// or serialised wgmmas; so do 4 x 4 of stride 2 from 128 channels in stages
// of 8 (rows of 32 bytes: a patch of 34 x 40 pixels leaves room for parts
// of 128 only so), and a strided conv_transpose2d by phase and by row
// phase (TF32, a tile's column phases together: kernel 4 of stride 2 keeps
// 8 of its 16 taps a stage, an image for each part and row phase; in parts
// of 64, two accumulator buffers of 64 channels, the bias in shared memory:
// kept in registers, ptxas spilled it).
TEST(WgmmaConvCompile, StreamedWeight) {
  constexpr kiln::WgmmaConvLayout tf32(false, 3, 3, 1, 1, 1, 1, 1, 1, 256, 128,
                                       1, false, 4, true, 16);
  static_assert(tf32.weightBytes == 0 && tf32.streamBytes == 9 * 128 * 64);
  static_assert(tf32.imageBytes == 16 * tf32.streamBytes);
  static_assert(tf32.stageWeightOffset() % kiln::kWgmmaAlign == 0 &&
                tf32.stageBytes() % kiln::kWgmmaAlign == 0);
  static_assert(tf32.stages == 2 &&
                tf32.sharedBytes() <= kiln::kWgmmaConvSharedLimit);
  constexpr kiln::WgmmaConvLayout x3(false, 3, 3, 1, 1, 1, 1, 1, 1, 256, 32, 3,
                                     false, 4, true, 16);
  static_assert(x3.streamBytes == 2 * 9 * 32 * 64 && x3.stages == 3);
  constexpr kiln::WgmmaConvLayout k4(false, 4, 4, 2, 2, 1, 1, 1, 1, 128, 128, 1,
                                     false, 4, true, 8);
  static_assert(k4.channels == 8 && k4.streamBytes == 16 * 128 * 32 &&
                k4.imageBytes == 16 * k4.streamBytes && k4.stages == 2 &&
                k4.sharedBytes() <= kiln::kWgmmaConvSharedLimit);
  constexpr kiln::WgmmaConvLayout rows(true, 4, 4, 2, 2, 1, 1, 1, 1, 256, 64, 1,
                                       false, 4, true, 16);
  static_assert(rows.rowImages && rows.taps == 8 && rows.images == 2);
  static_assert(rows.streamBytes == 8 * 64 * 64 &&
                rows.imageBytes == 16 * rows.streamBytes && rows.stages == 3 &&
                rows.sharedBytes() <= kiln::kWgmmaConvSharedLimit);
  // Kernel 3 with output_padding 1: row phases of 2 and 1 taps, 6 kept.
  constexpr kiln::WgmmaConvLayout k3(true, 3, 3, 2, 2, 1, 1, 1, 1, 136, 64, 1,
                                     false, 4, true, 16);
  static_assert(k3.rowImages && k3.taps == 6 && k3.images == 2);
  // Not in 3xTF32 (no column phases together), nor by phase.
  static_assert(!kiln::WgmmaConvLayout(true, 4, 4, 2, 2, 1, 1, 1, 1, 256, 32, 3,
                                       false, 4, true, 16)
                     .rowImages);
  static_assert(!kiln::WgmmaConvLayout(true, 4, 4, 2, 2, 1, 1, 1, 1, 256, 64, 1,
                                       true, 4, true, 16)
                     .rowImages);
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name)                                                           \
  extern "C" __global__ void __launch_bounds__(384, 1)                         \
  name(const float *x, const float *w, const float *b, float *y,               \
       float *image, unsigned long long *launches, unsigned *flag,             \
       unsigned *tickets)
using G = kiln::Conv2dParams<2, 256, 20, 24, 128, 3, 3, 1, 1, 1, 1>;
KERNEL(conv_stream_128) {
  kiln::wgmmaConv<G, true, 1, 128, false, 1, true, false, 16>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(conv_stream_64_ping_pong) {
  kiln::wgmmaConv<G, true, 1, 64, false, 1, true, true, 16>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(conv_stream_3xtf32) {
  kiln::wgmmaConv<G, true, 3, 32, false, 1, true, false, 16>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
using K4 = kiln::Conv2dParams<2, 128, 30, 32, 128, 4, 4, 2, 2, 1, 1>;
KERNEL(conv_stream_k4_s2_8) {
  kiln::wgmmaConv<K4, true, 1, 128, false, 1, true, false, 8>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
using T4 =
    kiln::ConvTranspose2dParams<2, 256, 16, 20, 128, 4, 4, 2, 2, 1, 1>;
KERNEL(convt_stream_by_phase) {
  kiln::wgmmaConv<T4, true, 1, 64, true, 1, true, false, 16>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(convt_stream_rows_64) {
  kiln::wgmmaConv<T4, true, 1, 64, false, 2, true, false, 16>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(convt_stream_rows_32) {
  kiln::wgmmaConv<T4, true, 1, 32, false, 2, true, false, 16>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(conv_stream_k4_s2_8_3xtf32) {
  kiln::wgmmaConv<K4, true, 3, 32, false, 1, true, false, 8>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
)";
  const std::string ptx =
      convPtxOnTensorCores(source, "wgmma_conv_stream_test.cu",
                           {"m64n128k8.f32.tf32.tf32", "m64n64k8.f32.tf32.tf32",
                            "m64n32k8.f32.tf32.tf32"});
  EXPECT_NE(ptx.find("cp.async.bulk.shared::cluster.global.mbarrier"),
            std::string::npos);
  EXPECT_NE(ptx.find("mbarrier.expect_tx"), std::string::npos);
}

// Ping-pong consumers (each a whole 16 x 16 tile, in turn): tensor cores on
// sm_90a, the named barriers that order the consumers' turns, and the
// rounding barrier of one warpgroup (128 threads); parts of 64 (conv2d and
// L2_19's conv_transpose2d, 258-wide rows) and of 32 with one stage a tile
// (16 input channels). No spill, and no wait that ptxas inserts between
// wgmmas (C7519/C7520: it did where four m64 blocks' zeros were set after
// the fence, and the bias kept in registers spilled: bench/NOTES.md v26).
// L2_19's, as Kiln emits it, takes its tiles from a counter (tickets).
TEST(WgmmaConvCompile, PingPong) {
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
extern "C" __global__ void __launch_bounds__(384, 1)
conv_ping_pong(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 37, 44, 64, 3, 3, 1, 1, 1, 1>,
                  true, 1, 64, false, 1, false, true>(x, w, b,
                                                       kiln::ConvStore{y});
}
extern "C" __global__ void __launch_bounds__(384, 1)
convt_ping_pong(const float *x, const float *w, const float *b, float *y,
                float *image, unsigned long long *launches, unsigned *flag,
                unsigned *tickets) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 1, 64, false, 1, true, true>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
extern "C" __global__ void __launch_bounds__(384, 1)
conv_ping_pong_cin16(const float *x, const float *w, const float *b,
                     float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 16, 37, 44, 32, 3, 3, 1, 1, 1, 1>,
                  true, 1, 32, false, 1, false, true>(x, w, b,
                                                       kiln::ConvStore{y});
}
)";
  const std::string ptx = convPtxOnTensorCores(source, "wgmma_conv_pp_test.cu");
  EXPECT_NE(ptx.find("bar.arrive"), std::string::npos);
  EXPECT_NE(ptx.find(", 128;"), std::string::npos); // bar.sync 1 + c, 128
  // The fragments and the rounding pass read shared memory as such
  // (wg::alignedShared), not through generic loads.
  EXPECT_NE(ptx.find("ld.shared.u32"), std::string::npos);
  EXPECT_EQ(ptx.find("ld.u32"), std::string::npos);
  EXPECT_NE(ptx.find("atom.global.add.u32"), std::string::npos);
}

// Output rows that are not whole 32-byte sectors (Wo % 8 != 0): the
// epilogue pairs lanes (one shuffle a pair of values) so that each store is
// 16 contiguous columns of two channels; rows of whole sectors keep runs of
// 8 and no shuffle (bench/NOTES.md v37). 3xTF32 here (PingPong compiles
// L2_19's TF32 kernel, 258 x 258, with its pairs); no spill and no wait that
// ptxas adds.
TEST(WgmmaConvCompile, PairedStoresWhereRowsSplitSectors) {
  const char *split = R"(
#include "kiln/wgmma_conv.cuh"
extern "C" __global__ void __launch_bounds__(384, 1)
conv_3xtf32_21(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<3, 32, 19, 21, 32, 3, 3, 1, 1, 1, 1>,
                  true, 3, 32>(x, w, b, kiln::ConvStore{y});
}
)";
  const char *whole = R"(
#include "kiln/wgmma_conv.cuh"
extern "C" __global__ void __launch_bounds__(384, 1)
conv_256(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 40, 256, 64, 3, 3, 1, 1, 1, 1>,
                  true, 1, 64, false, 1, false, true>(x, w, b,
                                                       kiln::ConvStore{y});
}
)";
  EXPECT_NE(convPtxOnTensorCores(split, "wgmma_conv_paired_test.cu",
                                 {"m64n32k8.f32.tf32.tf32"})
                .find("shfl.sync.bfly"),
            std::string::npos);
  EXPECT_EQ(convPtxOnTensorCores(whole, "wgmma_conv_runs8_test.cu",
                                 {"m64n64k8.f32.tf32.tf32"})
                .find("shfl.sync"),
            std::string::npos);
}

// Even rows at column stride 1 with Vec 2: lanes g and g ^ 1 trade a value
// (one shuffle a pair), and the epilogue stores pairs of neighbouring
// columns (st.global.v2), ping-pong TF32 and 3xTF32; no spill and no wait
// that ptxas adds.
TEST(WgmmaConvCompile, NeighbourColumnPairs) {
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name)                                                           \
  extern "C" __global__ void __launch_bounds__(384, 1)                         \
  name(const float *x, const float *w, const float *b, float *y)
KERNEL(conv_pairs_ping_pong) {
  auto pairs = [&](kiln::i64 i, float (&v)[2], bool live) {
    if (live)
      *reinterpret_cast<float2 *>(y + i) = make_float2(v[0], v[1]);
  };
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 37, 44, 64, 3, 3, 1, 1, 1, 1>,
                  true, 1, 64, false, 2, false, true>(x, w, b, pairs);
}
KERNEL(convt_pairs_3xtf32) {
  auto pairs = [&](kiln::i64 i, float (&v)[2], bool live) {
    if (live)
      *reinterpret_cast<float2 *>(y + i) = make_float2(v[0], v[1]);
  };
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 32, 19, 20, 32, 3, 3>, true,
                  3, 32, false, 2>(x, w, b, pairs);
}
)";
  const std::string ptx =
      convPtxOnTensorCores(source, "wgmma_conv_pairs_test.cu");
  EXPECT_NE(ptx.find("shfl.sync.bfly"), std::string::npos);
  EXPECT_NE(ptx.find("st.global.v2.f32"), std::string::npos);
}

// A reduction over the channels in the epilogue (ConvTail: one part of the
// output channels, each pixel's values combined over a quad of lanes):
// ping-pong TF32 into a min, 3xTF32 into a logsumexp, and a strided
// conv_transpose2d (both column phases a tile) into a mean. No spill and
// no wait that ptxas adds; the quads' shuffles are there.
TEST(WgmmaConvCompile, ChannelTails) {
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name)                                                           \
  extern "C" __global__ void __launch_bounds__(384, 1)                         \
  name(const float *x, const float *w, const float *b, float *y, float *m)
#define TAIL(op)                                                               \
  auto epi = [&](kiln::i64 i, float (&v)[1]) { y[i] = v[0]; };                \
  auto done = [&](kiln::i64 k, float r) { m[k] = r; };                         \
  kiln::ConvTail<kiln::ReduceOp::op, decltype(epi), decltype(done)> tail{epi,  \
                                                                         done}
KERNEL(conv_min_ping_pong) {
  TAIL(Min);
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 19, 24, 64, 3, 3, 1, 1, 1, 1>,
                  true, 1, 64, false, 1, false, true>(x, w, b, tail);
}
KERNEL(conv_logsumexp_3xtf32) {
  TAIL(LogSumExp);
  kiln::wgmmaConv<kiln::Conv2dParams<3, 32, 21, 30, 32, 3, 3, 1, 1, 1, 1>,
                  true, 3, 32>(x, w, b, tail);
}
KERNEL(convt_mean_column_phases) {
  TAIL(Mean);
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 32, 13, 21, 32, 3, 3, 2, 2,
                                              1, 1, 1, 1, 1, 1, 1>,
                  true, 1, 32>(x, w, b, tail);
}
)";
  const std::string ptx = convPtxOnTensorCores(
      source, "wgmma_conv_tail_test.cu",
      {"m64n64k8.f32.tf32.tf32", "m64n32k8.f32.tf32.tf32"});
  EXPECT_NE(ptx.find("shfl.sync.bfly"), std::string::npos);
  EXPECT_NE(ptx.find("ex2.approx"), std::string::npos); // logsumexp's expf
}

// A strided conv_transpose2d with both column phases a tile (TF32), its row
// phase chosen at run time, and one stage a tile (16 input channels): no
// product stays in flight past the row phase's code (ptxas serialised the
// wgmmas, C7515, where one did), kernels 3 and 4.
TEST(WgmmaConvCompile, ColumnPhasesOfOneStage) {
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
extern "C" __global__ void __launch_bounds__(384, 1)
convt_k3_cin16(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<3, 16, 11, 13, 32, 3, 3, 2, 2,
                                              1, 1>,
                  true, 1, 32>(x, w, b, kiln::ConvStore{y});
}
extern "C" __global__ void __launch_bounds__(384, 1)
convt_k4_cin16_vec2(const float *x, const float *w, const float *b,
                    float *y) {
  auto pairs = [&](kiln::i64 i, float (&v)[2], bool live) {
    if (live) {
      y[i] = v[0];
      y[i + 1] = v[1];
    }
  };
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 16, 15, 16, 32, 4, 4, 2, 2,
                                              1, 1>,
                  true, 1, 32, false, 2>(x, w, b, pairs);
}
)";
  convPtxOnTensorCores(source, "wgmma_conv_column_phases_test.cu",
                       {"m64n32k8.f32.tf32.tf32"});
}

/// How often `what` occurs in `text`.
size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

// 3xTF32's split of x (wg::split): two integer instructions a rounding where
// cvt.rna.tf32.f32 took four, so cvt.rna is left to the weight's parts
// (made once); a tap's first product replaces its accumulators (no zeros
// set between taps); where the phase is known when compiled and rows are
// not shared (conv2d of stride 2), two steps' products stay in flight
// (wgmma.wait_group 2), by phase one (ptxas serialised the wgmmas with two
// there: C7512). L2_19's rows are shared: each patch row loaded and split
// once for its 3 row taps, 4 rows a step for 6 products (96 loads a stage
// of 16 channels, 144 without). No spill and no wait that ptxas adds.
// L2_19's conv at highest 12.1 -> 10.6 ms on an H100 (bench/NOTES.md v31),
// then 10.9 -> 9.0 on an H200 with rows shared (v41).
TEST(WgmmaConvCompile, SplitOf3xTf32) {
  const char *source = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name)                                                           \
  extern "C" __global__ void __launch_bounds__(384, 1)                         \
  name(const float *x, const float *w, const float *b, float *y, float *image, \
       unsigned long long *launches, unsigned *flag, unsigned *tickets)
KERNEL(convt_l2_19_3xtf32) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 3, 32, false, 2, true, false>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(convt_k4_by_phase_3xtf32) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<32, 64, 128, 128, 64, 4, 4, 2,
                                              2, 1, 1, 1, 1, 1, 0, 0>,
                  true, 3, 32, true, 1, true, false>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
KERNEL(conv_s2_3xtf32) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 32, 37, 44, 64, 3, 3, 2, 2, 1, 1>,
                  true, 3, 32, false, 1, true, false>(
      x, w, b, kiln::ConvStore{y}, image, launches, flag, tickets);
}
)";
  const std::string ptx = convPtxOnTensorCores(
      source, "wgmma_conv_split_test.cu", {"m64n32k8.f32.tf32.tf32"});
  // Each kernel's PTX: from its .entry to the next one's (or the end).
  auto kernel = [&](const std::string &name) {
    const size_t at = ptx.find(".entry " + name);
    EXPECT_NE(at, std::string::npos) << name;
    if (at == std::string::npos)
      return std::string();
    return ptx.substr(at, ptx.find(".entry ", at + 1) - at);
  };
  const std::string l2_19 = kernel("convt_l2_19_3xtf32"),
                    byPhase = kernel("convt_k4_by_phase_3xtf32"),
                    stride2 = kernel("conv_s2_3xtf32");
  for (const std::string *k : {&l2_19, &byPhase, &stride2}) {
    // cvt.rna for the weight's big and small parts alone (36 taps' splits
    // inlined would be 72 or more); x's roundings clear the low 13 bits
    // (tf32Bits: 0xffffe000), two a value, in every tap's split.
    EXPECT_LE(occurrences(*k, "cvt.rna.tf32.f32"), 4u);
    EXPECT_GE(occurrences(*k, ", -8192;"), 72u);
  }
  // The fragments' loads (f32), 4 rows x 4 values a step, 6 steps a stage.
  EXPECT_EQ(occurrences(l2_19, "ld.shared.f32"), 96u);
  EXPECT_EQ(l2_19.find("wgmma.wait_group.sync.aligned 2;"), std::string::npos);
  EXPECT_NE(stride2.find("wgmma.wait_group.sync.aligned 2;"),
            std::string::npos);
  EXPECT_EQ(byPhase.find("wgmma.wait_group.sync.aligned 2;"),
            std::string::npos);
}

// TF32 at input row stride 1: a column tap's row taps share fragments, each
// patch row loaded once a step (4 values a thread) however many m64 blocks
// and taps read it. A stage of 16 channels is 3 column taps x 2 steps of 8
// channels; L2_19's ping-pong consumer (4 blocks, 3 row taps) loads 6 rows a
// step, 144 values (288 if each tap loaded its own); a conv2d of two blocks
// a consumer 4 rows, 96 (not 144); by phase (kernel 4, stride 2: 2 x 2 taps
// a phase, 4 phases unrolled, ping-pong) 5 rows, 320 (not 512). No spill
// and no wait added between wgmmas: by phase, none of a stage's products
// stays in flight past it (it did, C7512).
TEST(WgmmaConvCompile, RowTapsShareFragments) {
  const char *head = R"(
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name) extern "C" __global__ void __launch_bounds__(384, 1) name
)";
  const std::string pingPong = std::string(head) + R"(
KERNEL(convt_l2_19)(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 1, 64, false, 1, false, true>(x, w, b,
                                                       kiln::ConvStore{y});
}
)";
  const std::string twoBlocks = std::string(head) + R"(
KERNEL(conv_two_blocks)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 32, 37, 44, 64, 3, 3, 1, 1, 1, 1>,
                  false, 1, 64>(x, w, nullptr, kiln::ConvStore{y});
}
)";
  const std::string byPhase = std::string(head) + R"(
KERNEL(convt_by_phase)(const float *x, const float *w, float *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 128, 33, 36, 64, 4, 4, 2, 2,
                                              1, 1>,
                  false, 1, 64, true, 1, false, true>(x, w, nullptr,
                                                      kiln::ConvStore{y});
}
)";
  const std::pair<const std::string *, size_t> cases[] = {
      {&pingPong, 144}, {&twoBlocks, 96}, {&byPhase, 320}};
  for (const auto &[source, loads] : cases) {
    const std::string ptx = convPtxOnTensorCores(
        source->c_str(), "wgmma_conv_rows_test.cu", {"m64n64k8.f32.tf32.tf32"});
    // Besides the fragments, the producer and the consumers each read an
    // item's index from its slot.
    EXPECT_EQ(occurrences(ptx, "ld.shared.u32"), loads + 2) << *source;
  }
}

/// The head of the half convolution tests' sources: the templates, and an
/// epilogue storing y in its type.
const std::string kHalfConvHead = R"(
#include "kiln/half.cuh"
#include "kiln/wgmma_conv.cuh"
#define KERNEL(name) extern "C" __global__ void __launch_bounds__(384, 1) name
template <class T> struct StoreHalf {
  T *y;
  __device__ void operator()(kiln::i64 i, float (&v)[1], bool live) const {
    if (live)
      kiln::storeVec<1>(y + i, v);
  }
};
)";

// f16 and bf16 convolutions (TX: the patch kept in halves, products in
// their type): L2_19's conv_transpose2d in ping-pong with the weight's
// images (16-byte copies), a conv2d of 30-wide rows (4-byte copies), a
// strided conv_transpose2d of 21-wide rows (one value at a time, through
// registers). Tensor cores, no spill, no added wait.
TEST(WgmmaConvCompile, Halves) {
  const std::string source = kHalfConvHead + R"(
KERNEL(convt_l2_19_bf16)(const kiln::bf16 *x, const kiln::bf16 *w,
                         const kiln::bf16 *b, kiln::bf16 *y, float *image,
                         unsigned long long *launches, unsigned *flag) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 1, 64, false, 1, true, true>(
      x, w, b, StoreHalf<kiln::bf16>{y}, image, launches, flag);
}
KERNEL(conv_w30_f16)(const kiln::f16 *x, const kiln::f16 *w,
                     const kiln::f16 *b, kiln::f16 *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 32, 19, 30, 64, 3, 3, 1, 1, 1, 1>,
                  true, 1, 64>(x, w, b, StoreHalf<kiln::f16>{y});
}
KERNEL(convt_w21_f16)(const kiln::f16 *x, const kiln::f16 *w, kiln::f16 *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 32, 13, 21, 32, 3, 3, 2, 2,
                                              1, 1, 1, 1, 1, 1, 1>,
                  false, 1, 32>(x, w, nullptr, StoreHalf<kiln::f16>{y});
}
)";
  const std::string ptx =
      convPtxOnTensorCores(source.c_str(), "wgmma_conv_half_test.cu",
                           {"m64n64k16.f32.bf16.bf16", "m64n64k16.f32.f16.f16",
                            "m64n32k16.f32.f16.f16"});
  // Each stage transposed once (ldmatrix.trans, stmatrix), the fragments
  // read by ldmatrix, never through generic loads; no TF32 product.
  EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
            std::string::npos);
  EXPECT_NE(ptx.find("stmatrix.sync.aligned.m8n8.x4.shared.b16"),
            std::string::npos);
  EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
            std::string::npos);
  EXPECT_EQ(ptx.find("tf32"), std::string::npos);
  EXPECT_EQ(ptx.find("ld.u16"), std::string::npos);
  EXPECT_EQ(ptx.find("ld.u32"), std::string::npos);
}

// f16 and bf16 weights streamed through the ring (wide channels: 3 x 3
// from 256 into parts of 128), in k16 products: a tap's 16 channels a row
// of 32 bytes (32-byte swizzle), beside the patch and its transposed copy;
// conv2d and a conv_transpose2d. Tensor cores, one bulk copy a stage, no
// spill, no added wait. (Ping-pong in parts of 64, and by phase in 128,
// spill in the epilogue: measured faster all the same, bench/NOTES.md v40.)
TEST(WgmmaConvCompile, HalvesStreamedWeight) {
  constexpr kiln::WgmmaConvLayout l(false, 3, 3, 1, 1, 1, 1, 1, 1, 256, 128, 1,
                                    false, 2, true, 16);
  static_assert(l.k16 && l.streamRowBytes() == 32 &&
                l.streamBytes == 9 * 128 * 32 &&
                l.imageBytes == 16 * l.streamBytes && l.stages == 3 &&
                l.sharedBytes() <= kiln::kWgmmaConvSharedLimit);
  const std::string source = kHalfConvHead + R"(
KERNEL(conv_stream_bf16)(const kiln::bf16 *x, const kiln::bf16 *w,
                         const kiln::bf16 *b, kiln::bf16 *y, float *image,
                         unsigned long long *launches, unsigned *flag,
                         unsigned *tickets) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 256, 20, 24, 128, 3, 3, 1, 1, 1, 1>,
                  true, 1, 128, false, 1, true, false, 16>(
      x, w, b, StoreHalf<kiln::bf16>{y}, image, launches, flag, tickets);
}
KERNEL(convt_stream_f16)(const kiln::f16 *x, const kiln::f16 *w,
                         const kiln::f16 *b, kiln::f16 *y, float *image,
                         unsigned long long *launches, unsigned *flag,
                         unsigned *tickets) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<2, 256, 16, 21, 128, 3, 3, 1,
                                              1, 1, 1>,
                  true, 1, 128, false, 1, true, false, 16>(
      x, w, b, StoreHalf<kiln::f16>{y}, image, launches, flag, tickets);
}
)";
  const std::string ptx = convPtxOnTensorCores(
      source.c_str(), "wgmma_conv_half_stream_test.cu",
      {"m64n128k16.f32.bf16.bf16", "m64n128k16.f32.f16.f16"});
  EXPECT_NE(ptx.find("cp.async.bulk.shared::cluster.global.mbarrier"),
            std::string::npos);
  EXPECT_EQ(ptx.find("tf32"), std::string::npos);
}

// As ColumnPhasesOfOneStage, in bf16 (k16 products, each row of fragments
// loaded for its tap): 16 input channels into a strided conv_transpose2d.
TEST(WgmmaConvCompile, HalvesColumnPhasesOfOneStage) {
  const std::string source = kHalfConvHead + R"(
KERNEL(convt_k3_cin16_bf16)(const kiln::bf16 *x, const kiln::bf16 *w,
                            const kiln::bf16 *b, kiln::bf16 *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<3, 16, 11, 13, 32, 3, 3, 2, 2,
                                              1, 1>,
                  true, 1, 32>(x, w, b, StoreHalf<kiln::bf16>{y});
}
)";
  convPtxOnTensorCores(source.c_str(), "wgmma_conv_half_phases_test.cu",
                       {"m64n32k16.f32.bf16.bf16"});
}

// k16 conv2d in ping-pong: the row taps share fragments too, one ldmatrix
// a block row, in two commit groups of two m64 blocks each (blocks 0-1 read
// rows 0-3, 2-3 rows 2-5): 8 loads for each of 3 column taps, 24 a stage
// (36 if each tap loaded its own). conv_transpose2d keeps a load a tap
// (L2_19 in f16 ran 12-18% slower with the sharing: bench/NOTES.md v29).
// No spill, no added wait.
TEST(WgmmaConvCompile, HalvesRowTapsShareFragments) {
  const std::string conv = kHalfConvHead + R"(
KERNEL(conv_ping_pong_f16)(const kiln::f16 *x, const kiln::f16 *w,
                           const kiln::f16 *b, kiln::f16 *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 64, 37, 44, 64, 3, 3, 1, 1, 1, 1>,
                  true, 1, 64, false, 1, false, true>(
      x, w, b, StoreHalf<kiln::f16>{y});
}
)";
  const std::string convt = kHalfConvHead + R"(
KERNEL(convt_l2_19_f16)(const kiln::f16 *x, const kiln::f16 *w,
                        const kiln::f16 *b, kiln::f16 *y) {
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>,
                  true, 1, 64, false, 1, false, true>(
      x, w, b, StoreHalf<kiln::f16>{y});
}
)";
  const std::pair<const std::string *, size_t> cases[] = {{&conv, 24},
                                                          {&convt, 36}};
  for (const auto &[source, loads] : cases) {
    const std::string ptx =
        convPtxOnTensorCores(source->c_str(), "wgmma_conv_half_rows_test.cu",
                             {"m64n64k16.f32.f16.f16"});
    EXPECT_EQ(occurrences(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
              loads)
        << *source;
  }
}

// A half conv2d of stride 2, whose patch leaves room for two stages only
// beside a transposed copy, multiplies in TF32 instead (exact for half
// values; WgmmaConvLayout::k16 false): rows of 34 (4-byte copies) and 33
// (through registers). Tensor cores, no spill, no transposition.
TEST(WgmmaConvCompile, HalvesOfLargePatchesInTf32) {
  static_assert(
      !kiln::WgmmaConvLayout(false, 3, 3, 2, 2, 1, 1, 1, 1, 32, 64, 1, false, 2)
           .k16);
  static_assert(
      kiln::WgmmaConvLayout(true, 3, 3, 1, 1, 0, 0, 1, 1, 64, 64, 1, false, 2)
          .k16);
  const std::string source = kHalfConvHead + R"(
KERNEL(conv_s2_w34_f16)(const kiln::f16 *x, const kiln::f16 *w,
                        const kiln::f16 *b, kiln::f16 *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 32, 20, 34, 64, 3, 3, 2, 2, 1, 1>,
                  true, 1, 64>(x, w, b, StoreHalf<kiln::f16>{y});
}
KERNEL(conv_s2_w33_bf16)(const kiln::bf16 *x, const kiln::bf16 *w,
                         kiln::bf16 *y) {
  kiln::wgmmaConv<kiln::Conv2dParams<2, 32, 31, 33, 32, 3, 3, 2, 2, 1, 1>,
                  false, 1, 32>(x, w, nullptr, StoreHalf<kiln::bf16>{y});
}
)";
  const std::string ptx =
      convPtxOnTensorCores(source.c_str(), "wgmma_conv_half_s2_test.cu");
  EXPECT_EQ(ptx.find("ldmatrix"), std::string::npos);
  EXPECT_NE(ptx.find("ld.shared.u16"), std::string::npos);
}

// The depthwise conv2d (depthwise.cuh) compiles on every arch without
// spills: 3 x 3 with a fused epilogue (64-row tiles), 5 x 5 with stride 2,
// dilation 2 and a channel multiplier of 2 (16 rows), 7 x 7 over partial
// tiles (32 rows).
TEST(DepthwiseCompile, EveryArch) {
  const char *source = R"(
#include "kiln/depthwise.cuh"
#define KERNEL(name) extern "C" __global__ void __launch_bounds__(256) name
KERNEL(dw3_relu)(const float *x, const float *w, const float *b, float *y) {
  auto relu = [&](kiln::i64 i, float (&v)[1]) { y[i] = fmaxf(v[0], 0.f); };
  kiln::depthwiseConv2d<
      kiln::Conv2dParams<32, 64, 256, 256, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64>,
      true, 64>(x, w, b, relu);
}
KERNEL(dw5_s2_d2_mul2)(const float *x, const float *w, float *y) {
  auto store = [&](kiln::i64 i, float (&v)[1]) { y[i] = v[0]; };
  kiln::depthwiseConv2d<
      kiln::Conv2dParams<2, 8, 29, 31, 16, 5, 5, 2, 2, 4, 4, 2, 2, 8>, false,
      16>(x, w, nullptr, store);
}
KERNEL(dw7)(const float *x, const float *w, const float *b, float *y) {
  auto store = [&](kiln::i64 i, float (&v)[1]) { y[i] = v[0]; };
  kiln::depthwiseConv2d<
      kiln::Conv2dParams<2, 16, 37, 70, 16, 7, 7, 1, 1, 3, 3, 1, 1, 16>, true,
      32>(x, w, b, store);
}
)";
  for (const char *arch : {"sm_90a", "sm_90", "sm_80"}) {
    Compiled c = compile(source, arch, "depthwise_test.cu");
    ASSERT_TRUE(c.ok) << arch << ":\n" << c.log;
    EXPECT_EQ(spills(c.log), "") << arch << ":\n" << c.log;
  }
}

// Elsewhere the template compiles (the scheduler never picks it there).
TEST(WgmmaCompile, CompilesToATrapOffSm90a) {
  for (const char *arch : {"sm_90", "sm_80"}) {
    Compiled c = compile(kWgmmaSource, arch, "wgmma_test.cu");
    ASSERT_TRUE(c.ok) << arch << ":\n" << c.log;
    EXPECT_EQ(ptxOf(kWgmmaSource, arch).find("wgmma"), std::string::npos)
        << arch;
  }
}

class ContractionCompile : public testing::TestWithParam<std::string> {};

TEST_P(ContractionCompile, Gemm) {
  Compiled c = compile(kGemmSource, GetParam(), "gemm_test.cu");
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_GT(c.cubinBytes, 0u);
  EXPECT_EQ(spills(c.log), "") << c.log;
}

TEST_P(ContractionCompile, Conv) {
  Compiled c = compile(kConvSource, GetParam(), "conv_test.cu");
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_GT(c.cubinBytes, 0u);
  EXPECT_EQ(spills(c.log), "") << c.log;
}

// Each header compiles on its own (includes what it uses).
TEST_P(ContractionCompile, EveryHeaderAlone) {
  for (const kiln::EmbeddedFile &f : kiln::embeddedTemplates()) {
    Compiled c = compile(std::string("#include \"") + f.name + "\"\n",
                         GetParam(), "header_test.cu");
    EXPECT_TRUE(c.ok) << f.name << ":\n" << c.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, ContractionCompile,
                         testing::Values("sm_90", "sm_80"),
                         [](const auto &info) { return info.param; });

} // namespace
