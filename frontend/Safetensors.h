//===- Safetensors.h - The .safetensors weight format ----------*- C++ -*-===//
//
// Parameter files, in the format PyTorch users save weights in: a u64
// little-endian header length N, N bytes of JSON mapping each tensor name
// to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data
// buffer that follows) plus an optional "__metadata__" string map, then the
// data buffer. The tensors must fill the data buffer exactly, as the format
// requires: no overlap, no hole, no bytes after the last. Dtypes F32, F16,
// BF16, F64, I64 and BOOL. Every structural problem is a user error naming
// the file and the tensor. A pipe is read as far as the header says (the
// header itself at most 100 MB, as in the format's own implementation).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_SAFETENSORS_H
#define KILN_FRONTEND_SAFETENSORS_H

#include "HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

struct SafetensorsFile {
  /// In name order.
  std::vector<std::pair<std::string, HostTensor>> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor of that name, or nullptr.
  const HostTensor *find(llvm::StringRef name) const;
};

llvm::Expected<SafetensorsFile> readSafetensors(llvm::StringRef path);

/// Parses the bytes of a .safetensors file; `name` is used in messages.
llvm::Expected<SafetensorsFile> parseSafetensors(llvm::StringRef bytes,
                                                 llvm::StringRef name);

/// Writes the tensors in name order, packed, the header padded with spaces
/// to a multiple of 8 bytes; atomically (temporary file + rename). Duplicate
/// names are an error.
llvm::Error
writeSafetensors(llvm::StringRef path,
                 llvm::ArrayRef<std::pair<std::string, HostTensor>> tensors,
                 const std::map<std::string, std::string> &metadata = {});

/// The safetensors spelling of a dtype: "F32", "BF16", "BOOL", ...
llvm::StringRef safetensorsDTypeName(DType t);

} // namespace kiln

#endif
