//===- Precision.cpp - Matmul precision names
//------------------------------===//
#include "schedule/Precision.h"

namespace kiln {

llvm::StringRef precisionName(MatmulPrecision p) {
  switch (p) {
  case MatmulPrecision::Highest:
    return "highest";
  case MatmulPrecision::High:
    return "high";
  case MatmulPrecision::Medium:
    return "medium";
  }
  return "highest";
}

std::optional<MatmulPrecision> parsePrecision(llvm::StringRef s) {
  for (MatmulPrecision p : {MatmulPrecision::Highest, MatmulPrecision::High,
                            MatmulPrecision::Medium})
    if (s == precisionName(p))
      return p;
  return std::nullopt;
}

} // namespace kiln
