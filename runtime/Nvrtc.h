//===- Nvrtc.h - The NVRTC run-time compiler -------------------*- C++ -*-===//
//
// compileCuda turns one generated CUDA C++ translation unit into a cubin for
// one architecture. Kiln's templates arrive as in-memory headers, so no
// source tree is needed at run time. A failed compile returns an error that
// carries NVRTC's log and the path where the generated source was saved.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_NVRTC_H
#define KILN_RUNTIME_NVRTC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

/// "13.0" — the NVRTC this binary runs with (part of the kernel cache key).
std::string nvrtcVersionString();

/// Success when NVRTC compiles for `arch` ("sm_90", "sm_90a", "sm_100f")
/// and it is sm_80 or newer, as Kiln's kernels need; otherwise an error that
/// lists the archs it could be.
llvm::Error checkArch(llvm::StringRef arch);

/// A header NVRTC may #include by `name` ("kiln/groupnorm.cuh").
struct SourceHeader {
  std::string name;
  std::string_view text;
};

struct CompileRequest {
  std::string source;   // the whole translation unit
  std::string fileName; // for NVRTC's messages: "<kernel name>.cu"
  std::vector<SourceHeader> headers;
  std::string arch;                 // "sm_90", "sm_80"
  std::vector<std::string> options; // extra NVRTC options, in order
  /// Every option that decides the cubin, arch included, in order (for
  /// cache keys).
  std::vector<std::string> allOptions() const;
  /// What NVRTC is given: allOptions(), then --no-cache where NVRTC has a
  /// program cache of its own (12.9 and later).
  std::vector<std::string> nvrtcOptions() const;
};

/// Whether this NVRTC keeps a program cache of its own (12.9 and later).
bool nvrtcHasOwnCache();

struct CompileResult {
  std::vector<char> cubin;
  std::string ptx; // the PTX NVRTC made on the way (kiln cache show)
  std::string log; // NVRTC's warnings; empty when there were none
  double compileMs = 0;
};

/// Compiles `req` to a cubin. On failure the error text holds NVRTC's log
/// and the path of a file holding the generated source (written under
/// $TMPDIR or /tmp as kiln-failed-<fileName>). NVRTC's own program cache
/// is turned off (nvrtcOptions): Kiln's kernel cache does that work, and
/// NVRTC's costs ~200 ms of start-up per process.
llvm::Expected<CompileResult> compileCuda(const CompileRequest &req);

} // namespace kiln::rt

#endif
