#include "IR/OpInfo.h"

#include "ops/Families.h"

#include "llvm/ADT/StringMap.h"

#include <cassert>

namespace kiln {

static OpTable buildTable() {
  OpTable t;
#define KILN_OP(E, S, F)                                                       \
  entry(t, OpKind::E).kind = OpKind::E;                                        \
  entry(t, OpKind::E).name = S;                                                \
  entry(t, OpKind::E).family = OpFamily::F;
#include "IR/Ops.def"
  registerContractionOps(t);
  registerConvolutionOps(t);
  registerNormalizationOps(t);
  registerReductionOps(t);
  registerBinaryOps(t);
  registerUnaryOps(t);
  for ([[maybe_unused]] const OpInfo &info : t)
    assert(info.infer && "op registered without a shape rule");
  return t;
}

static const OpTable &table() {
  static const OpTable t = buildTable();
  return t;
}

const OpInfo &getOpInfo(OpKind kind) {
  return table()[static_cast<unsigned>(kind)];
}

llvm::StringRef opName(OpKind kind) { return getOpInfo(kind).name; }

llvm::ArrayRef<OpInfo> allOps() { return table(); }

const OpInfo *lookupOp(llvm::StringRef name) {
  static const llvm::StringMap<const OpInfo *> byName = [] {
    llvm::StringMap<const OpInfo *> m;
    for (const OpInfo &info : table()) {
      m[info.name] = &info;
      for (const char *alias : info.aliases)
        m[alias] = &info;
    }
    return m;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : it->second;
}

const AttrSpec *OpInfo::findAttr(llvm::StringRef attrName) const {
  for (const AttrSpec &s : attrs)
    if (attrName == s.name || (s.alias && attrName == s.alias))
      return &s;
  return nullptr;
}

int OpInfo::findOperand(llvm::StringRef operandName) const {
  for (size_t i = 0; i < operands.size(); ++i)
    if (operandName == operands[i].name)
      return static_cast<int>(i);
  return -1;
}

unsigned OpInfo::numRequiredOperands() const {
  unsigned n = 0;
  for (const OperandSpec &s : operands)
    n += !s.optional;
  return n;
}

} // namespace kiln
