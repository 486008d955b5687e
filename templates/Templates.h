//===- Templates.h - The CUDA templates embedded in the binary --*- C++ -*-===//
//
// Every templates/kiln/*.cuh is embedded at build time (EmbedTemplates.cmake),
// so generated kernels can #include "kiln/<name>.cuh" with NVRTC and no
// source tree.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEMPLATES_TEMPLATES_H
#define KILN_TEMPLATES_TEMPLATES_H

#include "llvm/ADT/ArrayRef.h"

#include <string_view>

namespace kiln {

struct EmbeddedFile {
  /// The include name, relative to templates/: "kiln/gemm.cuh".
  const char *name;
  /// The file's bytes, unchanged. text.data()[text.size()] is '\0', so
  /// text.data() can be handed to nvrtcCreateProgram as a header.
  std::string_view text;
};

/// Every embedded template, sorted by name (byte order).
llvm::ArrayRef<EmbeddedFile> embeddedTemplates();

} // namespace kiln

#endif
