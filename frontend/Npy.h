//===- Npy.h - NumPy .npy files --------------------------------*- C++ -*-===//
//
// Inputs and outputs of the `kiln` CLI. Reads format versions 1.0, 2.0 and
// 3.0 with dtypes <f4, <f2, <f8, <i8, |b1 (and big-endian forms, swapped on
// read); writes version 1.0 (2.0 when the header needs it) with the data
// aligned to 64 bytes, as NumPy does. Errors name the file. A pipe is read
// as far as the header says, and refused at once when it is no .npy file.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_NPY_H
#define KILN_FRONTEND_NPY_H

#include "HostTensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace kiln {

llvm::Expected<HostTensor> readNpy(llvm::StringRef path);

/// Parses the bytes of a .npy file; `name` is used in error messages.
llvm::Expected<HostTensor> parseNpy(llvm::StringRef bytes,
                                    llvm::StringRef name);

/// Writes atomically (temporary file + rename). bf16 has no NumPy dtype
/// and is refused with an error.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &t);

} // namespace kiln

#endif
