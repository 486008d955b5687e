//===- Precision.h - How exactly f32 contractions are computed -*- C++ -*-===//
//
// PyTorch's names (torch.set_float32_matmul_precision), Kiln's meanings:
//   highest  fp32-accurate: as accurate as cuBLAS SGEMM, measured; on Hopper
//            error-compensated 3xTF32 tensor-core products promoted into
//            fp32 (PyTorch: IEEE fp32 arithmetic). The default.
//   high     TF32 tensor-core products, f32 accumulation.
//   medium   bf16 products allowed (PyTorch's meaning); Kiln runs f32
//            tensors in TF32 as PyTorch does (more accurate, and measured no
//            slower than converting to bf16: docs/precision.md).
// docs/precision.md has the measured errors and which kernel each gets.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SCHEDULE_PRECISION_H
#define KILN_SCHEDULE_PRECISION_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kiln {

enum class MatmulPrecision { Highest, High, Medium };

/// "highest", "high", "medium".
llvm::StringRef precisionName(MatmulPrecision p);
/// The precision named `s`, as PyTorch spells it; nullopt otherwise.
std::optional<MatmulPrecision> parsePrecision(llvm::StringRef s);

} // namespace kiln

#endif
