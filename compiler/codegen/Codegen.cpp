//===- Codegen.cpp - Fusion groups to CUDA C++ kernels --------------------===//
#include "codegen/Codegen.h"
#include "codegen/Emitters.h"

#include "IR/Diagnostics.h"

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
  if (arch == "sm_86" || arch == "sm_87" || arch == "sm_89" || arch == "sm_120")
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
      s += fmt::format("{}float *__restrict__ {}", p.isOutput ? "" : "const ",
                       names[i]);
  }
  return s;
}

static std::string cName(const std::string &prefix, const std::string &name) {
  std::string s = prefix;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

ParamList tensorParams(const FusionGroup &g) {
  ParamList pl;
  for (const Value *v : g.inputs) {
    pl.params.push_back({KernelParam::Kind::Tensor, v, false});
    pl.names.push_back(cName("in_", v->name()));
  }
  for (const Value *v : g.outputs) {
    pl.params.push_back({KernelParam::Kind::Tensor, v, true});
    pl.names.push_back(cName("out_", v->name()));
  }
  return pl;
}

int vectorWidth(int64_t n) { return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1; }

unsigned gridFor(int64_t items, int64_t perBlock, int perSM,
                 const TargetInfo &t) {
  int64_t blocks = (items + perBlock - 1) / perBlock;
  return static_cast<unsigned>(std::max<int64_t>(
      1, std::min<int64_t>(blocks, int64_t(perSM) * t.multiprocessors)));
}

uint64_t groupBytes(const FusionGroup &g) {
  uint64_t b = 0;
  for (const Value *v : g.inputs)
    b += static_cast<uint64_t>(v->shape().numElements()) * 4;
  for (const Value *v : g.outputs)
    b += static_cast<uint64_t>(v->shape().numElements()) * 4;
  return b;
}

/// GPU kernels handle f32 tensors; say so for anything else.
static llvm::Error checkDTypes(const FusionGroup &g) {
  for (const Node *n : g.nodes())
    for (const Value *v : n->operands())
      if (v && !v->isLiteral() && v->dtype() != DType::F32)
        return diag(
            n->loc(),
            "'{}' is {}; GPU code generation supports f32 tensors only so "
            "far (run it with the reference evaluator, or cast it to f32)",
            v->name(), dtypeName(v->dtype()).str());
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
