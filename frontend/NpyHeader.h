//===- NpyHeader.h - The dictionary in a .npy header -----------*- C++ -*-===//
//
// A .npy header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This reads and writes exactly that subset of Python syntax.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_NPYHEADER_H
#define KILN_FRONTEND_NPYHEADER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace kiln {

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  llvm::SmallVector<int64_t, 6> shape;
};

/// Parses the dict; errors name `path` and say what was expected. As in
/// NumPy, the keys must be exactly descr, fortran_order and shape.
llvm::Expected<NpyHeader> parseNpyHeader(llvm::StringRef text,
                                         llvm::StringRef path);

/// The dict as NumPy writes it, without padding or newline.
std::string formatNpyHeader(const NpyHeader &h);

} // namespace kiln

#endif
