//===- Codegen.cpp - Fusion groups to CUDA C++ kernels --------------------===//
#include "codegen/Codegen.h"
#include "codegen/Emitters.h"

#include "IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/xxhash.h"

#include <cctype>

#include <fmt/format.h>

namespace kiln {

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

/// The emitter of the schedule's kind, then the kernel's launch from the
/// schedule and its self-describing name: kind, fused ops, a hash of the
/// source.
llvm::Expected<EmittedKernel> emitKernel(const FusionGroup &g,
                                         const Schedule &s) {
  llvm::Expected<EmittedKernel> k = [&] {
    switch (s.kind) {
    case GroupKind::Pointwise:
      return emitPointwise(g, s);
    case GroupKind::Reduction:
      return emitReduction(g, s);
    case GroupKind::GroupNorm:
      return emitGroupNorm(g, s);
    case GroupKind::Contraction:
      return emitContraction(g, s);
    case GroupKind::Convolution:
      return emitConvolution(g, s);
    }
    llvm_unreachable("bad group kind");
  }();
  if (!k)
    return k.takeError();
  k->grid = s.launch.grid;
  k->gridY = s.launch.gridY;
  k->block = s.launch.block;
  k->sharedBytes = s.launch.sharedBytes;
  k->cooperative = s.launch.cooperative;
  k->archSpecific = s.archSpecific;
  k->strategy = s.reason;
  uint64_t h = llvm::xxHash64(k->source);
  k->name = fmt::format("{}_{:06x}", g.describe(), h & 0xffffff);
  size_t pos;
  while ((pos = k->source.find("KILN_NAME")) != std::string::npos)
    k->source.replace(pos, 9, k->name);
  return k;
}

} // namespace kiln
