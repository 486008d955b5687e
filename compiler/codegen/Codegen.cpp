//===- Codegen.cpp - Fusion groups to CUDA C++ kernels --------------------===//
#include "codegen/Codegen.h"
#include "codegen/Emitters.h"

#include "IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/xxhash.h"

#include <cctype>

#include <fmt/format.h>

namespace kiln {

TargetInfo defaultTarget(const std::string &arch) {
  TargetInfo t;
  t.arch = arch;
  if (arch == "sm_90" || arch == "sm_90a")
    return t;
  t.multiprocessors = 108; // A100
  t.maxSharedPerBlock = 163 * 1024;
  t.maxSharedPerSM = 164 * 1024;
  t.l2Bytes = 40 * 1024 * 1024;
  // ptxas warns that 2048 is out of range on each of these (sm_120a alike).
  llvm::StringRef base = llvm::StringRef(arch).rtrim("af");
  static const llvm::StringRef k1536[] = {"sm_86",  "sm_87",  "sm_88", "sm_89",
                                          "sm_110", "sm_120", "sm_121"};
  if (llvm::is_contained(k1536, base))
    t.maxThreadsPerSM = 1536;
  return t;
}

std::string ParamList::of(const Value *v) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].value == v)
      return names[i];
  llvm_unreachable("value is not a parameter of this kernel");
}

std::string ParamList::signature() const {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i)
      s += ", ";
    const KernelParam &p = params[i];
    if (p.kind == KernelParam::Kind::Workspace)
      s += names[i];
    else
      s += fmt::format("{}{} *__restrict__ {}", p.isOutput ? "" : "const ",
                       cudaStorageType(p.value->dtype()), names[i]);
  }
  return s;
}

bool ParamList::hasHalf() const {
  return llvm::any_of(params, [](const KernelParam &p) {
    return p.kind == KernelParam::Kind::Tensor && isHalf(p.value->dtype());
  });
}

std::string ParamList::halfInclude() const {
  return hasHalf() ? "#include \"kiln/half.cuh\"\n" : "";
}

static std::string cName(const std::string &prefix, const std::string &name) {
  std::string s = prefix;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

ParamList tensorParams(const FusionGroup &g) {
  ParamList pl;
  // Names that differ only in characters C cannot spell ("_x" and "%x")
  // meet in cName: the later one takes a number.
  auto add = [&](const Value *v, bool output) {
    pl.params.push_back({KernelParam::Kind::Tensor, v, output});
    std::string base = cName(output ? "out_" : "in_", v->name()), name = base;
    for (int k = 2; llvm::is_contained(pl.names, name); ++k)
      name = fmt::format("{}_{}", base, k);
    pl.names.push_back(name);
  };
  for (const Value *v : g.inputs)
    add(v, false);
  for (const Value *v : g.outputs)
    add(v, true);
  return pl;
}

int vectorWidth(int64_t n, int maxVec) {
  if (maxVec >= 8 && n % 8 == 0)
    return 8;
  return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
}

int maxVectorWidth(const ParamList &pl) {
  const bool allHalf = llvm::all_of(pl.params, [](const KernelParam &p) {
    return p.kind != KernelParam::Kind::Tensor || isHalf(p.value->dtype());
  });
  return allHalf ? 8 : 4;
}

unsigned gridFor(int64_t items, int64_t perBlock, int perSM,
                 const TargetInfo &t) {
  int64_t blocks = (items + perBlock - 1) / perBlock;
  return static_cast<unsigned>(std::max<int64_t>(
      1, std::min<int64_t>(blocks, int64_t(perSM) * t.multiprocessors)));
}

uint64_t groupBytes(const FusionGroup &g) {
  uint64_t b = 0;
  for (const Value *v : g.inputs)
    b +=
        static_cast<uint64_t>(v->shape().numElements()) * dtypeSize(v->dtype());
  for (const Value *v : g.outputs)
    b +=
        static_cast<uint64_t>(v->shape().numElements()) * dtypeSize(v->dtype());
  return b;
}

/// GPU kernels handle f32 tensors, and f16 and bf16 ones outside
/// contractions and convolutions; say so for anything else.
static llvm::Error checkDTypes(const FusionGroup &g) {
  const bool halfOk =
      g.kind != GroupKind::Contraction && g.kind != GroupKind::Convolution;
  for (const Node *n : g.nodes())
    for (const Value *v : n->operands()) {
      if (!v || v->isLiteral() || v->dtype() == DType::F32 ||
          (halfOk && isHalf(v->dtype())))
        continue;
      if (isHalf(v->dtype()))
        return diag(n->loc(),
                    "'{}' is {}; GPU {} kernels take f32 tensors only so far "
                    "(elementwise ops, reductions and group_norm take f16 and "
                    "bf16; run it with the reference evaluator, or give "
                    "this op f32 operands)",
                    v->name(), dtypeName(v->dtype()).str(),
                    opName(g.anchor->op()).str());
      return diag(n->loc(),
                  "'{}' is {}; GPU code generation supports f32, f16 and "
                  "bf16 tensors only so far (run it with the reference "
                  "evaluator, or convert it to a float dtype)",
                  v->name(), dtypeName(v->dtype()).str());
    }
  return llvm::Error::success();
}

llvm::Expected<std::vector<EmittedKernel>>
generateKernels(const Graph &graph, const FusionPlan &plan,
                const TargetInfo &target) {
  std::vector<EmittedKernel> out;
  for (const FusionGroup &g : plan.groups) {
    if (llvm::Error e = checkDTypes(g))
      return e;
    llvm::Expected<EmittedKernel> k = [&] {
      switch (g.kind) {
      case GroupKind::Pointwise:
        return emitPointwise(g, target);
      case GroupKind::Reduction:
        return emitReduction(g, target);
      case GroupKind::GroupNorm:
        return emitGroupNorm(g, target);
      case GroupKind::Contraction:
        return emitContraction(g, target);
      case GroupKind::Convolution:
        return emitConvolution(g, target);
      }
      llvm_unreachable("bad group kind");
    }();
    if (!k)
      return k.takeError();
    // Self-describing name: kind, fused ops, a hash of the source.
    uint64_t h = llvm::xxHash64(k->source);
    k->name = fmt::format("{}_{:06x}", g.describe(), h & 0xffffff);
    size_t pos;
    while ((pos = k->source.find("KILN_NAME")) != std::string::npos)
      k->source.replace(pos, 9, k->name);
    out.push_back(std::move(*k));
  }
  (void)graph;
  return out;
}

} // namespace kiln
