#include "IR/OpInfo.h"

#include "llvm/ADT/StringMap.h"

namespace kiln {

// getOpInfo and allOps are defined with the table in ops/OpTable.cpp.

llvm::StringRef opName(OpKind kind) { return getOpInfo(kind).name; }

const OpInfo *lookupOp(llvm::StringRef name) {
  static const llvm::StringMap<const OpInfo *> byName = [] {
    llvm::StringMap<const OpInfo *> m;
    for (const OpInfo &info : allOps()) {
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
