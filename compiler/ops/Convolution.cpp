//===- Convolution.cpp - conv2d and conv_transpose2d ----------------------===//
#include "ops/Families.h"
#include "ref/Kernels.h"

namespace kiln {

static std::vector<AttrSpec> convAttrs(bool transposed) {
  std::vector<AttrSpec> attrs = {
      {"stride", AttrKind::IntList, Attr::ofInts({1, 1}), false, 2},
      {"padding", AttrKind::IntList, Attr::ofInts({0, 0}), false, 2},
  };
  if (transposed)
    attrs.push_back(
        {"output_padding", AttrKind::IntList, Attr::ofInts({0, 0}), false, 2});
  attrs.push_back(
      {"dilation", AttrKind::IntList, Attr::ofInts({1, 1}), false, 2});
  attrs.push_back({"groups", AttrKind::Int, Attr::ofInt(1)});
  return attrs;
}

/// Checks what conv2d and conv_transpose2d share; input [N, C, H, W] or
/// unbatched [C, H, W], weight rank 4 with static dims.
static llvm::Error checkConvCommon(const Node &n) {
  const Value &x = *n.operand(0), &w = *n.operand(1);
  KILN_TRY(requireFloat(n, x, "input"));
  KILN_TRY(requireSameDType(n));
  size_t r = x.shape().rank();
  if (r != 3 && r != 4)
    return opError(n, "input '{}' must be [N, C, H, W] or [C, H, W], got {}",
                   x.name(), x.type().str());
  KILN_TRY(requireRank(n, w, "weight", 4));
  for (size_t i = 0; i < 4; ++i)
    KILN_TRY(requireStaticDim(n, w, i, fmt::format("dim {}", i)));
  for (size_t i = r - 3; i < r; ++i)
    KILN_TRY(requireStaticDim(
        n, x, i, i == r - 3 ? "the channel dim" : "a spatial dim"));
  // Keep every size within kMaxDimSize so the output-size arithmetic below
  // cannot overflow int64 (the parser enforces this too; the builder does
  // not).
  for (const Value *v : {&x, &w})
    for (const Dim &d : v->shape())
      if (d.isStatic() && d.size > kMaxDimSize)
        return opError(n, "'{}' {} has a dim above {}", v->name(),
                       v->shape().str(), kMaxDimSize);
  // Only the batch and the output channels may be 0: PyTorch's results for
  // an empty input channel, spatial or kernel dim are not a convolution's.
  const size_t wFrom = n.op() == OpKind::ConvTranspose2d ? 2 : 1;
  for (const auto &[v, from] : {std::pair{&x, r - 3}, std::pair{&w, wFrom}})
    for (size_t i = from; i < v->shape().rank(); ++i)
      if (v->shape()[i] == Dim(0))
        return opError(n,
                       "'{}' {} has an empty dim {}; only the batch and the "
                       "output channels of a convolution may be empty",
                       v->name(), v->shape().str(), i);
  for (const auto &[name, a] : n.attrs()) {
    llvm::SmallVector<int64_t, 4> values;
    if (a.kind() == AttrKind::IntList)
      values.assign(a.getInts().begin(), a.getInts().end());
    else
      values.push_back(a.getInt());
    for (int64_t v : values)
      if (v > kMaxDimSize || v < -kMaxDimSize)
        return attrError(n, name, "{} {} is out of range (at most {})", name,
                         a.str(), kMaxDimSize);
  }
  int64_t groups = n.getInt("groups");
  if (groups <= 0)
    return attrError(n, "groups", "groups must be positive, got {}", groups);
  for (const char *a : {"stride", "dilation"})
    for (int64_t v : n.getInts(a))
      if (v <= 0)
        return attrError(n, a, "{} must be positive, got {}", a,
                         n.attr(a)->str());
  for (int64_t v : n.getInts("padding"))
    if (v < 0)
      return attrError(n, "padding", "padding must be non-negative, got {}",
                       n.attr("padding")->str());
  return llvm::Error::success();
}

static llvm::Error checkBias(const Node &n, int64_t cout) {
  const Value *b = n.operand(2);
  if (!b)
    return llvm::Error::success();
  KILN_TRY(requireRank(n, *b, "bias", 1));
  if (b->shape()[0] != Dim(cout))
    return opError(n, "bias '{}' {} must have {} entries (out_channels)",
                   b->name(), b->shape().str(), cout);
  return llvm::Error::success();
}

/// An output spatial dim within kMaxDimSize, as every dim (a padding of
/// 2^30 would otherwise make a shape no .kg file can state).
static llvm::Error checkOutputDim(const Node &n, int i, int64_t size) {
  if (size > kMaxDimSize)
    return opError(n,
                   "output spatial dim {} would be {}, above {}; reduce "
                   "padding {} or stride {}",
                   i, size, kMaxDimSize, n.attr("padding")->str(),
                   n.attr("stride")->str());
  return llvm::Error::success();
}

static llvm::Expected<TensorType> inferConv2d(const Node &n) {
  KILN_TRY(checkConvCommon(n));
  const Value &x = *n.operand(0), &w = *n.operand(1);
  size_t r = x.shape().rank();
  int64_t groups = n.getInt("groups");
  int64_t cin = x.shape()[r - 3].size, cout = w.shape()[0].size;
  if (w.shape()[1].size * groups != cin)
    return opError(n,
                   "input '{}' has {} channels, but weight '{}' {} with "
                   "groups={} expects {} (weight is [out_channels, "
                   "in_channels/groups, kH, kW])",
                   x.name(), cin, w.name(), w.shape().str(), groups,
                   w.shape()[1].size * groups);
  if (cout % groups != 0)
    return attrError(n, "groups",
                     "out_channels {} is not divisible by groups={}", cout,
                     groups);
  KILN_TRY(checkBias(n, cout));
  auto stride = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  Shape out;
  if (r == 4)
    out.push_back(x.shape()[0]);
  out.push_back(Dim(cout));
  for (int i = 0; i < 2; ++i) {
    int64_t in = x.shape()[r - 2 + i].size, k = w.shape()[2 + i].size;
    int64_t span = dil[i] * (k - 1) + 1;
    int64_t padded = in + 2 * pad[i];
    if (padded < span)
      return opError(n,
                     "input '{}' {} is too small: spatial dim {} is {} "
                     "(padded {}), less than the dilated kernel size {}",
                     x.name(), x.shape().str(), i, in, padded, span);
    KILN_TRY(checkOutputDim(n, i, (padded - span) / stride[i] + 1));
    out.push_back(Dim((padded - span) / stride[i] + 1));
  }
  return TensorType{x.dtype(), out};
}

static llvm::Expected<TensorType> inferConvTranspose2d(const Node &n) {
  KILN_TRY(checkConvCommon(n));
  const Value &x = *n.operand(0), &w = *n.operand(1);
  size_t r = x.shape().rank();
  int64_t groups = n.getInt("groups");
  int64_t cin = x.shape()[r - 3].size;
  if (w.shape()[0].size != cin)
    return opError(n,
                   "input '{}' has {} channels, but weight '{}' {} expects "
                   "{} (conv_transpose2d's weight is [in_channels, "
                   "out_channels/groups, kH, kW])",
                   x.name(), cin, w.name(), w.shape().str(), w.shape()[0].size);
  if (cin % groups != 0)
    return attrError(n, "groups",
                     "in_channels {} is not divisible by groups={}", cin,
                     groups);
  int64_t cout = w.shape()[1].size * groups;
  KILN_TRY(checkBias(n, cout));
  auto stride = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation"), outPad = n.getInts("output_padding");
  Shape out;
  if (r == 4)
    out.push_back(x.shape()[0]);
  out.push_back(Dim(cout));
  for (int i = 0; i < 2; ++i) {
    if (outPad[i] < 0 || (outPad[i] >= stride[i] && outPad[i] >= dil[i]))
      return attrError(n, "output_padding",
                       "output_padding {} must be non-negative and smaller "
                       "than either stride {} or dilation {}",
                       n.attr("output_padding")->str(), n.attr("stride")->str(),
                       n.attr("dilation")->str());
    int64_t in = x.shape()[r - 2 + i].size, k = w.shape()[2 + i].size;
    int64_t size =
        (in - 1) * stride[i] - 2 * pad[i] + dil[i] * (k - 1) + outPad[i] + 1;
    if (size <= 0)
      return opError(n, "output spatial dim {} would be {}; reduce padding {}",
                     i, size, n.attr("padding")->str());
    KILN_TRY(checkOutputDim(n, i, size));
    out.push_back(Dim(size));
  }
  return TensorType{x.dtype(), out};
}

static ref::ConvParams convParams(const Node &n) {
  ref::ConvParams p;
  auto stride = n.getInts("stride"), pad = n.getInts("padding"),
       dil = n.getInts("dilation");
  for (int i = 0; i < 2; ++i) {
    p.stride[i] = stride[i];
    p.padding[i] = pad[i];
    p.dilation[i] = dil[i];
  }
  p.groups = n.getInt("groups");
  return p;
}

static llvm::Expected<RefTensor>
evalConv2d(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  return ref::conv2d(*ops[0], *ops[1], ops[2], convParams(n),
                     n.result()->dtype(), n.result()->shape().sizes());
}

static llvm::Expected<RefTensor>
evalConvTranspose2d(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  return ref::convTranspose2d(*ops[0], *ops[1], ops[2], convParams(n),
                              n.result()->dtype(), n.result()->shape().sizes());
}

void registerConvolutionOps(OpTable &t) {
  OpInfo &conv = entry(t, OpKind::Conv2d);
  conv.operands = {{"input"}, {"weight"}, {"bias", true}};
  conv.attrs = convAttrs(false);
  conv.infer = inferConv2d;
  conv.eval = evalConv2d;

  OpInfo &convT = entry(t, OpKind::ConvTranspose2d);
  convT.operands = {{"input"}, {"weight"}, {"bias", true}};
  convT.attrs = convAttrs(true);
  convT.infer = inferConvTranspose2d;
  convT.eval = evalConvTranspose2d;
}

} // namespace kiln
