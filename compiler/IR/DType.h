//===- DType.h - Element types ---------------------------------*- C++ -*-===//
//
// The element types a Kiln value can hold. f64 is accepted everywhere on the
// host side (tensor files, the reference evaluator); code generation may
// refuse it with a clear message.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_DTYPE_H
#define KILN_IR_DTYPE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace kiln {

#define KILN_DTYPES(X)                                                         \
  X(F32, "f32", 4)                                                             \
  X(F16, "f16", 2)                                                             \
  X(BF16, "bf16", 2)                                                           \
  X(F64, "f64", 8)                                                             \
  X(I64, "i64", 8)                                                             \
  X(Bool, "bool", 1)

enum class DType : uint8_t {
#define X(E, S, B) E,
  KILN_DTYPES(X)
#undef X
};

/// The .kg spelling: "f32", "bf16", ...
llvm::StringRef dtypeName(DType t);
/// Parses the .kg spelling; nullopt when unknown.
std::optional<DType> parseDType(llvm::StringRef s);
/// Bytes per element.
unsigned dtypeSize(DType t);
bool isFloat(DType t);
bool isIntegral(DType t); // i64 and bool
/// f16 or bf16: half-width floats, which kernels compute in f32.
bool isHalf(DType t);

/// Kiln holds i64 values in double on the host (the reference evaluator,
/// initialisers): exact only within +-(2^53 - 1).
constexpr double kMaxExactInteger = 9007199254740991.0;

/// PyTorch's type promotion between two tensors of the same category rank
/// (bool < integer < floating); f16 with bf16 gives f32 as in PyTorch.
DType promoteTypes(DType a, DType b);

} // namespace kiln

#endif
