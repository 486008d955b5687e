#include "IR/DType.h"

#include "llvm/Support/ErrorHandling.h"

namespace kiln {

llvm::StringRef dtypeName(DType t) {
  switch (t) {
#define X(E, S, B)                                                             \
  case DType::E:                                                               \
    return S;
    KILN_DTYPES(X)
#undef X
  }
  llvm_unreachable("bad dtype");
}

std::optional<DType> parseDType(llvm::StringRef s) {
#define X(E, S, B)                                                             \
  if (s == S)                                                                  \
    return DType::E;
  KILN_DTYPES(X)
#undef X
  return std::nullopt;
}

unsigned dtypeSize(DType t) {
  switch (t) {
#define X(E, S, B)                                                             \
  case DType::E:                                                               \
    return B;
    KILN_DTYPES(X)
#undef X
  }
  llvm_unreachable("bad dtype");
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

bool isIntegral(DType t) { return t == DType::I64 || t == DType::Bool; }

bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

DType promoteTypes(DType a, DType b) {
  if (a == b)
    return a;
  if (a == DType::Bool)
    return b;
  if (b == DType::Bool)
    return a;
  if (a == DType::I64)
    return b;
  if (b == DType::I64)
    return a;
  // Both floating and different.
  if (a == DType::F64 || b == DType::F64)
    return DType::F64;
  return DType::F32; // f16/bf16/f32 mixes
}

} // namespace kiln
