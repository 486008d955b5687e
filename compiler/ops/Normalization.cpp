//===- Normalization.cpp - group_norm -------------------------------------===//
#include "ops/Families.h"
#include "ref/Kernels.h"

namespace kiln {

// group_norm(input [N, C, *], weight? [C], bias? [C], groups, eps):
// statistics per sample and per group of C/groups channels over all spatial
// positions, biased variance, then the per-channel affine step.
static llvm::Expected<TensorType> inferGroupNorm(const Node &n) {
  const Value &x = *n.operand(0);
  KILN_TRY(requireFloat(n, x, "input"));
  KILN_TRY(requireSameDType(n));
  if (x.shape().rank() < 2)
    return opError(n, "input '{}' must be [N, C, ...], got {}", x.name(),
                   x.type().str());
  KILN_TRY(requireStaticDim(n, x, 1, "the channel dim"));
  int64_t c = x.shape()[1].size, groups = n.getInt("groups");
  if (groups <= 0)
    return attrError(n, "groups", "groups must be positive, got {}", groups);
  if (c % groups != 0)
    return attrError(n, "groups",
                     "{} channels of '{}' {} do not split into {} groups; "
                     "groups must divide the channel count",
                     c, x.name(), x.shape().str(), groups);
  for (unsigned i : {1u, 2u}) {
    const Value *p = n.operand(i);
    if (!p)
      continue;
    KILN_TRY(requireRank(n, *p, i == 1 ? "weight" : "bias", 1));
    if (p->shape()[0] != Dim(c))
      return opError(n, "{} '{}' {} must have {} entries, one per channel",
                     i == 1 ? "weight" : "bias", p->name(), p->shape().str(),
                     c);
  }
  return x.type();
}

static llvm::Expected<RefTensor>
evalGroupNorm(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  return ref::groupNorm(*ops[0], ops[1], ops[2], n.getInt("groups"),
                        n.getFloat("eps"), n.result()->dtype());
}

void registerNormalizationOps(OpTable &t) {
  OpInfo &gn = entry(t, OpKind::GroupNorm);
  gn.operands = {{"input"}, {"weight", true}, {"bias", true}};
  gn.attrs = {
      {"groups", AttrKind::Int, std::nullopt, true, 0, {}, "num_groups"},
      {"eps", AttrKind::Float, Attr::ofFloat(1e-5)},
  };
  gn.infer = inferGroupNorm;
  gn.eval = evalGroupNorm;
}

} // namespace kiln
