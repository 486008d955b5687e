//===- EmitContraction.cpp - linear, matmul, conv2d, conv_transpose2d -----===//
//
// Renders the simple shared-memory tiled kernels (templates/kiln/gemm.cuh,
// conv.cuh); the templates pick the same tile the schedule records
// (kiln/tiling.cuh), so the host's launch shape and the device's agree.
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitters.h"

#include "codegen/Expr.h"
#include "ops/Families.h"

#include "schedule/Scheduler.h"

#include "kiln/tiling.cuh"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace kiln {

static std::string kernelHead(const ParamList &pl, const char *include) {
  return fmt::format("{}#include \"kiln/{}\"\n\nextern \"C\" __global__ void "
                     "__launch_bounds__(256, 2)\nKILN_NAME({}) {{\n",
                     pl.halfInclude(), include, pl.signature());
}

/// What a kernel derives from a parameter before its tiles (WgmmaSplitW
/// `mode`): `bytes` of it (elements of `type`), the count of the blocks'
/// arrivals at the grid barrier after it (zero when allocated, never reset:
/// wg::gridSync), and for what is kept across runs the flag that asks for
/// it again (set when the parameters change). Appends the workspaces to
/// pl's parameters and their declarations to `signature`; returns the
/// arguments that pass them on.
static std::string addDerivedWorkspaces(ParamList &pl, WgmmaSplitW mode,
                                        uint64_t bytes, llvm::StringRef type,
                                        std::string &signature) {
  KernelParam parts{KernelParam::Kind::Workspace};
  parts.bytes = bytes;
  KernelParam launches{KernelParam::Kind::Workspace};
  launches.bytes = 8;
  launches.zeroed = true;
  pl.params.push_back(parts);
  pl.params.push_back(launches);
  signature +=
      fmt::format(", {} *parts, unsigned long long *launches", type.str());
  std::string args = ", parts, launches";
  if (mode == kWgmmaSplitFlagged) {
    KernelParam flag{KernelParam::Kind::Workspace};
    flag.bytes = 4;
    flag.setOnNewParams = true;
    pl.params.push_back(flag);
    signature += ", unsigned *splitFlag";
    args += ", splitFlag";
  }
  return args;
}

/// Appends to `code` the stores of `stored` into their buffers, each value
/// computed first and the stores alone under the lambda's `live`: the
/// tensor-core templates run their epilogues for a tile's elements past the
/// result's edges too (live false, index 0), so that no branch guards the
/// epilogue's loads.
static void storeWhereLive(ExprEmitter &e, llvm::ArrayRef<const Value *> stored,
                           const ParamList &pl, std::string &code) {
  for (const Value *v : stored)
    e.get(v, code);
  std::string stores;
  for (const Value *v : stored)
    e.store(v, pl.of(v), stores);
  code += "    if (live) {\n";
  for (llvm::StringRef rest = stores; !rest.empty();) {
    auto [line, next] = rest.split('\n');
    code += "  " + line.str() + "\n";
    rest = next;
  }
  code += "    }\n";
}

/// linear on Hopper's tensor cores with its fused epilogue: `pre` runs the
/// elementwise nodes after the linear on pairs of columns (one column where
/// N is odd; runs of 8 for f16 and bf16 without a group_norm) and stores the
/// group's outputs among them; with a group_norm, the template normalises in
/// registers and `post` applies the affine, runs the nodes after it and
/// stores. A tail (a min or max over the last dims of the last stage's
/// values, then elementwise nodes over any shape) takes the keys of what
/// `pre` or `post` leaves in v; after the tiles the consumers wait for every
/// block and run the tail's loop. A matmul with a 2-D right operand runs the
/// same, that operand transposed into w first (WgmmaConfig's TransposeW).
static llvm::Expected<EmittedKernel> emitWgmmaLinear(const FusionGroup &g,
                                                     const Schedule &s) {
  const Node &n = *g.anchor;
  const bool matmul = n.op() == OpKind::Matmul;
  const Value *bias = matmul ? nullptr : n.operand(2), *y = n.result();
  const LinearShape l = matmul ? *wgmmaMatmulShape(n) : linearShape(n);
  ParamList pl = tensorParams(g);
  auto param = [&](const Value *v) { return pl.of(v); };
  const Shape &domain = y->shape();
  // f16 and bf16: runs of 8 columns (16-byte loads and stores) without a
  // group_norm, whose statistics need the accumulators' pairs; else pairs
  // where N is even (f32's pairs fill 32-byte sectors: runs of 4 gained
  // nothing on an H200).
  const int vec = isHalf(l.dtype) && !g.norm && l.n % 8 == 0 ? 8
                  : l.n % 2 == 0                             ? 2
                                                             : 1;
  // 32-bit unsigned index arithmetic where every index fits (cheaper
  // divisions for broadcast operands, as the GroupNorm kernels do).
  const std::string idxT =
      l.batches * l.m * l.n < (int64_t(1) << 31) ? "unsigned" : "kiln::i64";
  auto isOutput = [&](const Value *v) {
    return llvm::is_contained(g.outputs, v);
  };
  std::string functions;
  // pre: y -> the epilogue -> (the group_norm's input in v).
  std::string pre = fmt::format("    const {} ii = i;\n    (void)ii;\n", idxT);
  ExprEmitter pe(domain, vec, "ii", param);
  pe.shortMath(s.get("shortMath", 0)); // (the scheduler's setShortMath)
  pe.bind(y, "v"); // f32 (the scheduler gives halves no epilogue)
  // A tail reads the last stage's values (pre's without a group_norm,
  // else post's): that stage leaves its operand in v, where the template
  // takes the keys.
  const Value *tailIn = g.tail ? g.tail->operand(0) : nullptr;
  const int64_t keys = g.tail ? g.tail->result()->shape().numElements() : 0;
  // (A group_norm's computed input rounded once: copyIntoV.)
  auto leaveInV = [&](const std::string &a, std::string &code,
                      bool round = false) {
    if (a != "v")
      code += copyIntoV(vec, a, round);
  };
  llvm::SmallVector<const Value *, 4> live;
  for (const Node *e : g.epilogue)
    if (isOutput(e->result()) ||
        (g.norm && g.norm->operand(0) == e->result()) || e->result() == tailIn)
      live.push_back(e->result());
  pe.emitNodes(g.epilogue, live, "epilogue", pre, functions);
  llvm::SmallVector<const Value *, 4> stored;
  if (isOutput(y))
    stored.push_back(y);
  for (const Node *e : g.epilogue)
    if (isOutput(e->result()))
      stored.push_back(e->result());
  storeWhereLive(pe, stored, pl, pre);
  if (g.tail && !g.norm)
    leaveInV(pe.get(tailIn, pre), pre);
  std::string post = "    (void)ii;\n";
  int64_t groupCols = 0;
  float eps = 0.f;
  if (g.norm) {
    const Node &gn = *g.norm;
    const Value *x = gn.operand(0), *gamma = gn.operand(1),
                *beta = gn.operand(2);
    if (x != y)
      leaveInV(pe.get(x, pre), pre, true);
    groupCols = s.get("groupCols");
    eps = static_cast<float>(gn.getFloat("eps"));
    post = fmt::format("    const {} ii = i;\n    (void)ii;\n", idxT);
    std::string expr = "v[l]";
    auto affine = [&](const Value *p, const char *var) {
      if (!p)
        return;
      post += fmt::format("    float {}[{}];\n    kiln::loadVec<{}>({} + ii % "
                          "{}, {});\n",
                          var, vec, vec, pl.of(p), l.n, var);
    };
    affine(gamma, "gw");
    affine(beta, "gb");
    if (gamma)
      expr += " * gw[l]";
    if (beta)
      expr += " + gb[l]";
    post += fmt::format("    float gy[{}]; // {} = group_norm\n#pragma unroll\n"
                        "    for (int l = 0; l < {}; ++l) gy[l] = {};\n",
                        vec, gn.result()->name(), vec, expr);
    ExprEmitter po(domain, vec, "ii", param);
    po.shortMath(s.get("shortMath", 0));
    po.bind(gn.result(), "gy");
    llvm::SmallVector<const Value *, 4> postLive;
    for (const Node *e : g.normEpilogue)
      if (isOutput(e->result()) || e->result() == tailIn)
        postLive.push_back(e->result());
    po.emitNodes(g.normEpilogue, postLive, "normEpilogue", post, functions);
    llvm::SmallVector<const Value *, 4> postStored;
    if (isOutput(gn.result()))
      postStored.push_back(gn.result());
    for (const Node *e : g.normEpilogue)
      if (isOutput(e->result()))
        postStored.push_back(e->result());
    storeWhereLive(po, postStored, pl, post);
    if (g.tail)
      leaveInV(po.get(tailIn, post), post);
  }
  // w split before the tiles (3xTF32, WgmmaSplitW): its big and small
  // parts, the count of the blocks' arrivals at the barrier after the split
  // (zero when allocated, never reset: wg::splitOnce), and for a split kept
  // across runs the flag that asks for it again (set when the parameters
  // change).
  const int64_t splitW = s.get("splitW");
  std::string signature = pl.signature(), splitArgs;
  if (splitW != kWgmmaSplitNone) {
    // TF32 keeps a transposed w alone; 3xTF32 its big and small parts.
    // w's N K elements, or a matmul's right operand's (each matrix).
    const uint64_t bytes =
        (s.get("passes") == 3 ? 2 : 1) *
        static_cast<uint64_t>(matmul ? n.operand(1)->shape().numElements()
                                     : l.n * l.k) *
        dtypeSize(l.dtype);
    splitArgs =
        addDerivedWorkspaces(pl, static_cast<WgmmaSplitW>(splitW), bytes,
                             cudaStorageType(l.dtype), signature);
  }
  // wgmmaLinear's arguments after eps are positional (parts, launches,
  // splitFlag, tail, splitK): one that is passed needs nulls for the
  // split's before it.
  auto padSplitW = [&] {
    if (splitW == kWgmmaSplitNone)
      splitArgs = ", nullptr, nullptr, nullptr";
    else if (splitW != kWgmmaSplitFlagged)
      splitArgs += ", nullptr";
  };
  // The tail: its keys, then, after the tiles, the consumer warpgroups'
  // grid barrier and the tail's loop (the producer returns).
  std::string tailDecl, tailPhase;
  if (g.tail) {
    padSplitW();
    splitArgs += ", &tail";
    addTailWorkspaces(pl.params, keys);
    signature += kTailParams;
    // Each key gathers whole rows (the tail reduces the last dims). A sum,
    // mean or logsumexp keeps a partial per row and column tile (8 bytes:
    // a double, or a max and a sum), combined after the tiles (finish).
    const int64_t rows = l.batches * l.m,
                  perKey = rows / std::max<int64_t>(1, keys);
    const bool partial =
        g.tail->op() != OpKind::Min && g.tail->op() != OpKind::Max;
    std::string finish;
    if (partial) {
      const int64_t tiles = (l.n + s.get("bn") - 1) / s.get("bn");
      KernelParam parts{KernelParam::Kind::Workspace};
      parts.bytes = static_cast<uint64_t>(tiles * rows) * 8;
      pl.params.push_back(parts);
      signature += ", void *tailParts";
      finish = fmt::format("  kiln::wgmmaTailFinish<kiln::WgmmaConsumers, "
                           "{}ll, {}, {}ll>(tail);\n",
                           rows, tiles, perKey * l.n);
    }
    tailDecl = fmt::format("  kiln::WgmmaTail<kiln::ReduceOp::{}, {}> "
                           "tail{{keys{}}};\n",
                           reduceOpName(g.tail->op()), perKey,
                           partial ? ", tailParts" : "");
    tailPhase = "  if (threadIdx.x < 128)\n    return; // the producer\n" +
                emitTailPhase(g, pl, "kiln::WgmmaConsumers", keys,
                              static_cast<int>(s.get("tailUnroll")), finish);
  }
  // Split-K: the items' partial sums (each a 128 x BN tile's floats) and
  // the arrivals per tile (zero when allocated, never reset: each launch
  // adds SplitK), the last argument.
  const int64_t splitK = s.get("splitK");
  if (splitK > 1) {
    const int64_t tiles = s.get("tiles");
    KernelParam parts{KernelParam::Kind::Workspace};
    parts.bytes = static_cast<uint64_t>(tiles * splitK * kWgmmaBM) *
                  static_cast<uint64_t>(s.get("bn")) * 4;
    KernelParam arrivals{KernelParam::Kind::Workspace};
    arrivals.bytes = static_cast<uint64_t>(tiles) * 8;
    arrivals.zeroed = true;
    pl.params.push_back(parts);
    pl.params.push_back(arrivals);
    signature += ", float *splitParts, unsigned long long *splitArrivals";
    if (!g.tail) {
      padSplitW();
      splitArgs += ", (kiln::NoTail *)nullptr";
    }
    splitArgs += ", kiln::WgmmaSplitK{splitParts, splitArrivals}";
  }
  // A batched matmul's runs of batches (kiln::BatchMap, as gemmNN's).
  std::string batch;
  if (l.batches > 1) {
    llvm::Expected<MatmulLayout> ml = matmulLayout(n);
    if (!ml)
      return ml.takeError();
    for (const MatmulLayout::Run &r : ml->runs)
      batch += fmt::format("{}{}, {}ll, {}ll", batch.empty() ? "" : ", ",
                           r.count, r.sa, r.sb);
    batch = ", kiln::BatchMap<" + batch + ">";
  }
  const std::string what =
      matmul ? fmt::format("matmul: {}[{}, {}] x [{}, {}]",
                           l.batches > 1 ? fmt::format("{} x ", l.batches) : "",
                           l.m, l.k, l.k, l.n)
             : fmt::format("linear: [{}, {}] x [{}, {}]^T{}", l.m, l.k, l.n,
                           l.k, bias ? " + bias" : "");
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln {}, {}.\n{}#include "
      "\"kiln/ops.cuh\"\n#include \"kiln/wgmma.cuh\"\n\n{}"
      "extern \"C\" __global__ void __launch_bounds__({}, 1)\n"
      "KILN_NAME({}) {{\n{}"
      "  auto pre = [&](kiln::i64 i, float (&v)[{}], bool live = true) "
      "{{\n{}  }};\n"
      "  auto post = [&](kiln::i64 i, float (&v)[{}], bool live = true) "
      "{{\n{}  }};\n"
      "  kiln::wgmmaLinear<kiln::GemmShape<{}, {}, {}>, "
      "kiln::WgmmaConfig<{}, {}, {}{}>, {}, kiln::WgmmaEpilogue<{}, {}>{}>(\n"
      "      {}, {}, {}, pre, post, {}{});\n{}}}\n",
      what, s.reason, pl.halfInclude(), functions, kWgmmaThreads, signature,
      tailDecl, vec, pre, vec,
      g.norm ? post : "    (void)i, (void)v, (void)live;\n", l.m, l.n, l.k,
      s.get("bn"), s.get("stages"), s.get("passes"),
      splitW != kWgmmaSplitNone || splitK > 1
          ? fmt::format(", kiln::kWgmmaGroupM, {}{}{}", splitW,
                        matmul       ? ", true"
                        : splitK > 1 ? ", false"
                                     : "",
                        splitK > 1 ? fmt::format(", {}", splitK) : "")
          : "",
      bias ? "true" : "false", vec, groupCols, batch, pl.of(n.operand(0)),
      pl.of(n.operand(1)), bias ? pl.of(bias) : "nullptr", cudaFloat(eps),
      splitArgs, tailPhase);
  kk.flops = 2.0 * l.batches * l.m * l.n * l.k +
             static_cast<double>(domain.numElements()) *
                 (g.epilogue.size() + g.normEpilogue.size() + (g.norm ? 8 : 0) +
                  (g.tail ? 1 : 0));
  kk.params = pl.params;
  return kk;
}

static EmittedKernel emitLinear(const FusionGroup &g) {
  const Node &n = *g.anchor;
  const Value *bias = n.operand(2);
  const LinearShape l = linearShape(n);
  const int64_t m = l.m, k = l.k, nOut = l.n;
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln linear: [{}, {}] x [{}, {}]^T{}.\n{}"
      "  kiln::gemmNT<kiln::GemmShape<{}, {}, {}>, {}>({}, {}, {}, {});\n}}\n",
      m, k, nOut, k, bias ? " + bias" : "", kernelHead(pl, "gemm.cuh"), m, nOut,
      k, bias ? "true" : "false", pl.of(n.operand(0)), pl.of(n.operand(1)),
      bias ? pl.of(bias) : "nullptr", pl.of(n.result()));
  kk.flops = 2.0 * m * nOut * k;
  kk.params = pl.params;
  return kk;
}

static llvm::Expected<EmittedKernel> emitMatmul(const FusionGroup &g) {
  const Node &n = *g.anchor;
  llvm::Expected<MatmulLayout> l = matmulLayout(n);
  if (!l)
    return l.takeError();
  std::string map;
  for (const MatmulLayout::Run &r : l->runs)
    map += fmt::format("{}{}, {}ll, {}ll", map.empty() ? "" : ", ", r.count,
                       r.sa, r.sb);
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  kk.source = fmt::format(
      "// Kiln matmul: {} x {} -> {}.\n{}"
      "  kiln::gemmNN<kiln::GemmShape<{}, {}, {}>{}>({}, {}, {});\n}}\n",
      l->a.str(), l->b.str(), l->c.str(), kernelHead(pl, "gemm.cuh"), l->m,
      l->n, l->k, map.empty() ? "" : ", kiln::BatchMap<" + map + ">",
      pl.of(n.operand(0)), pl.of(n.operand(1)), pl.of(n.result()));
  kk.flops = 2.0 * l->batches * l->m * l->n * l->k;
  kk.params = pl.params;
  return kk;
}

llvm::Expected<EmittedKernel> emitContraction(const FusionGroup &g,
                                              const Schedule &s) {
  llvm::Expected<EmittedKernel> k = s.kernel == "gemmNN" ? emitMatmul(g)
                                    : s.kernel == "wgmmaLinear"
                                        ? emitWgmmaLinear(g, s)
                                        : emitLinear(g);
  if (k)
    k->bytes = groupBytes(g);
  return k;
}

/// The lambda `epilogue(i, v, live)` of the tensor-core and depthwise
/// convolutions (kiln/wgmma_conv.cuh, kiln/depthwise.cuh): their values go
/// through the group's epilogue one element at a time (a thread's values of
/// one channel lie 8 columns apart in the first), or in pairs of columns
/// (vec 2). For a tile's pixels past y's edges (live false) the template
/// passes index 0, which every operand has, and it stores nothing: its
/// loads need no branch around them.
static std::string convEpilogue(const FusionGroup &g, const Schedule &s,
                                const ParamList &pl, std::string &functions) {
  const Node &n = *g.anchor;
  const Value *y = n.result();
  auto param = [&](const Value *v) { return pl.of(v); };
  const Shape &domain = y->shape();
  std::string pre = fmt::format(
      "    const {} ii = i;\n    (void)ii;\n",
      domain.numElements() < (int64_t(1) << 31) ? "unsigned" : "kiln::i64");
  const int vec = static_cast<int>(s.get("vec"));
  ExprEmitter pe(domain, vec, "ii", param);
  pe.shortMath(s.get("shortMath", 0));
  // The 64-bit index where the tensor-core template's tiles cover y (no
  // pixel past its edges, whose index 0 would take a select a value) and
  // its consumers do not take turns: in ping-pong one consumer's stores
  // overlap the other's products, and there the stores, closer together,
  // slowed relu epilogues' products by 2-7% (an H200, bench/NOTES.md v47),
  // while kernels whose stores follow their products gained up to 10%.
  if (s.kernel == "wgmmaConv" && !s.get("pingPong")) {
    const bool transposed = n.op() == OpKind::ConvTranspose2d;
    const auto st = n.getInts("stride");
    const int64_t sh = transposed ? st[0] : 1, sw = transposed ? st[1] : 1;
    if (domain[2].size % (kWgmmaConvTile * sh) == 0 &&
        domain[3].size % (kWgmmaConvTile * sw) == 0)
      pe.flatIndex("i");
  }
  pe.bindRounded(y, "v", pre);
  auto isOutput = [&](const Value *v) {
    return llvm::is_contained(g.outputs, v);
  };
  // A tail (a reduction over the channels) reads an epilogue value or y,
  // which the epilogue leaves in v.
  const Value *tailIn = g.tail ? g.tail->operand(0) : nullptr;
  llvm::SmallVector<const Value *, 4> live;
  for (const Node *e : g.epilogue)
    if (isOutput(e->result()) || e->result() == tailIn)
      live.push_back(e->result());
  // (Past 60 nodes the chain becomes a function of this name, which must
  // not be the lambda's.)
  pe.emitNodes(g.epilogue, live, "convEpilogue", pre, functions);
  llvm::SmallVector<const Value *, 4> stored;
  if (isOutput(y))
    stored.push_back(y);
  for (const Value *v : live)
    if (isOutput(v))
      stored.push_back(v);
  storeWhereLive(pe, stored, pl, pre);
  if (g.tail) {
    const std::string a = pe.get(tailIn, pre);
    if (a != "v")
      pre += fmt::format("    v[0] = {}[0];\n", a);
  }
  std::string code = fmt::format(
      "  auto epilogue = [&](kiln::i64 i, float (&v)[{}], bool live = true) "
      "{{\n{}  }};\n",
      vec, pre);
  if (!g.tail)
    return code;
  // The tail's result r for pixel k (its index in the tail's shape), then
  // the nodes after it over that shape.
  const Value *m = g.tail->result();
  std::string post = fmt::format(
      "    const {} ii = k;\n    (void)ii;\n    float tv[1] = {{r}}; // {} = "
      "{}\n",
      m->shape().numElements() < (int64_t(1) << 31) ? "unsigned" : "kiln::i64",
      m->name(), opName(g.tail->op()).str());
  ExprEmitter te(m->shape(), 1, "ii", param);
  te.bind(m, "tv");
  for (const Node *e : g.tailEpilogue)
    te.emit(*e, post);
  if (isOutput(m))
    te.store(m, pl.of(m), post);
  for (const Node *e : g.tailEpilogue)
    if (isOutput(e->result()))
      te.store(e->result(), pl.of(e->result()), post);
  return code +
         fmt::format("  auto tail = [&](kiln::i64 k, float r) {{\n{}  }};\n",
                     post);
}

/// The tensor-core convolution's call (kiln/wgmma_conv.cuh), with the
/// workspaces its schedule asks for: the weight's blocks' images (field
/// image) and the counters its blocks take their tiles from (tickets),
/// appended to pl's parameters and `signature`.
static std::string wgmmaConvCall(const FusionGroup &g, const Schedule &s,
                                 ParamList &pl, const std::string &geometry,
                                 std::string &signature,
                                 std::string &functions) {
  const Node &n = *g.anchor;
  const Value *bias = n.operand(2);
  const std::string epilogue = convEpilogue(g, s, pl, functions);
  // The images with a flag (set when the parameters change), or without
  // (made at every launch: a streamed weight that may change).
  const bool image = s.get("image") > 0;
  const auto mode = static_cast<WgmmaSplitW>(s.get("splitW", 0));
  std::string args =
      image ? addDerivedWorkspaces(pl, mode,
                                   static_cast<uint64_t>(s.get("image")),
                                   "float", signature) +
                  (mode == kWgmmaSplitFlagged ? "" : ", nullptr")
            : "";
  if (s.get("tickets") > 0) {
    KernelParam tickets{KernelParam::Kind::Workspace};
    tickets.bytes = static_cast<uint64_t>(s.get("tickets"));
    tickets.zeroed = true;
    pl.params.push_back(tickets);
    signature += ", unsigned *tickets";
    args += image ? ", tickets" : ", nullptr, nullptr, nullptr, tickets";
  }
  // With a tail the epilogue and the tail's code travel together.
  const std::string epi =
      g.tail ? fmt::format("kiln::ConvTail<kiln::ReduceOp::{}, "
                           "decltype(epilogue), decltype(tail)>{{epilogue, "
                           "tail}}",
                           reduceOpName(g.tail->op()))
             : "epilogue";
  return fmt::format(
      "{}  kiln::wgmmaConv<{}, {}, {}, {}, {}, {}, {}, {}{}>({}, {}, {}, "
      "{}{});\n",
      epilogue, geometry, bias ? "true" : "false", s.get("passes"), s.get("nb"),
      s.get("phaseBlocks") ? "true" : "false", s.get("vec"),
      image ? "true" : "false", s.get("pingPong") ? "true" : "false",
      s.get("stream", 0) ? fmt::format(", {}", s.get("stream")) : "",
      pl.of(n.operand(0)), pl.of(n.operand(1)), bias ? pl.of(bias) : "nullptr",
      epi, args);
}

llvm::Expected<EmittedKernel> emitConvolution(const FusionGroup &g,
                                              const Schedule &s) {
  const Node &n = *g.anchor;
  const bool transposed = n.op() == OpKind::ConvTranspose2d;
  const Shape &x = n.operand(0)->shape(), &w = n.operand(1)->shape(),
              &y = n.result()->shape();
  const Value *bias = n.operand(2);
  const ConvShape c = convShape(n);
  const int64_t cin = c.cin, groups = c.groups, cout = c.cout;
  auto st = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  std::string params =
      fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}",
                  c.batch, cin, c.h, c.w, cout, w[2].size, w[3].size, st[0],
                  st[1], pad[0], pad[1], dil[0], dil[1], groups);
  if (transposed) {
    auto op = n.getInts("output_padding");
    params += fmt::format(", {}, {}", op[0], op[1]);
  }
  const std::string geometry = fmt::format(
      "kiln::{}<{}>", transposed ? "ConvTranspose2dParams" : "Conv2dParams",
      params);
  const int64_t pixels = c.pixels();
  ParamList pl = tensorParams(g);
  EmittedKernel kk;
  // The tensor-core (wgmma_conv.cuh) and depthwise (depthwise.cuh) kernels
  // with the fused epilogue, or the FFMA one.
  if (s.kernel == "wgmmaConv" || s.kernel == "depthwiseConv2d") {
    const bool wgmma = s.kernel == "wgmmaConv";
    std::string signature = pl.signature(), functions;
    const std::string call =
        wgmma ? wgmmaConvCall(g, s, pl, geometry, signature, functions)
              : fmt::format("{}  kiln::depthwiseConv2d<{}, {}, {}>({}, {}, "
                            "{}, epilogue);\n",
                            convEpilogue(g, s, pl, functions), geometry,
                            bias ? "true" : "false", s.get("rows"),
                            pl.of(n.operand(0)), pl.of(n.operand(1)),
                            bias ? pl.of(bias) : "nullptr");
    kk.source = fmt::format(
        "// Kiln {}: {} * {} -> {}, {}.\n{}#include \"kiln/ops.cuh\"\n"
        "#include \"kiln/{}\"\n\n{}extern \"C\" __global__ void "
        "__launch_bounds__({})\nKILN_NAME({}) {{\n{}}}\n",
        opName(n.op()).str(), x.str(), w.str(), y.str(), s.reason,
        pl.halfInclude(), wgmma ? "wgmma_conv.cuh" : "depthwise.cuh", functions,
        wgmma ? fmt::format("{}, 1", kWgmmaThreads)
              : std::to_string(kDepthwiseThreads),
        signature, call);
  } else {
    kk.source = fmt::format("// Kiln {}: {} * {} -> {}.\n{}"
                            "  kiln::{}<{}, {}>({}, {}, {}, {});\n}}\n",
                            opName(n.op()).str(), x.str(), w.str(), y.str(),
                            kernelHead(pl, "conv.cuh"), s.kernel, geometry,
                            bias ? "true" : "false", pl.of(n.operand(0)),
                            pl.of(n.operand(1)), bias ? pl.of(bias) : "nullptr",
                            pl.of(n.result()));
  }
  kk.flops = 2.0 * pixels * cout * (cin / groups) * w[2].size * w[3].size +
             static_cast<double>(y.numElements()) * g.epilogue.size();
  kk.params = pl.params;
  kk.bytes = groupBytes(g);
  return kk;
}

} // namespace kiln
