//===- OpTable.cpp - The op table, built from the families -----*- C++ -*-===//
//
// Defines getOpInfo and allOps (declared in IR/OpInfo.h): one OpInfo per op
// of IR/Ops.def, filled in by each family's register function. It lives in
// ops/ because it names the families; IR/ includes nothing from ops/.
//
//===----------------------------------------------------------------------===//
#include "ops/Families.h"

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

llvm::ArrayRef<OpInfo> allOps() { return table(); }

} // namespace kiln
