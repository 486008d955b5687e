//===- OfflineOptions.h - Compile options for tests without a GPU -*- C++ -*-//
#ifndef KILN_TESTS_CODEGEN_OFFLINEOPTIONS_H
#define KILN_TESTS_CODEGEN_OFFLINEOPTIONS_H

#include "Engine.h"

#include <string>

namespace kiln {

/// Compiles for `arch` with no GPU and no disk cache; with `generateOnly`,
/// stops before NVRTC.
inline CompileOptions offlineOptions(bool generateOnly,
                                     const std::string &arch = "sm_90") {
  CompileOptions opts;
  opts.arch = arch;
  opts.compileOnly = true;
  opts.generateOnly = generateOnly;
  opts.cache.disableDisk = true;
  return opts;
}

} // namespace kiln

#endif
