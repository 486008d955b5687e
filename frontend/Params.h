//===- Params.h - Parameter initialisers and binding -----------*- C++ -*-===//
//
// A graph's parameters take their values from a safetensors file by name,
// else from their initialiser. Random initialisers are counter-based (see
// docs/format.md, "Initialisers"): element i depends only on the seed and
// i, so the host and any device produce the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_PARAMS_H
#define KILN_FRONTEND_PARAMS_H

#include "HostTensor.h"
#include "Safetensors.h"

#include "IR/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// The splitmix64 finaliser of docs/format.md (the output of the standard
/// splitmix64 generator whose state was x before the step).
uint64_t splitmix64(uint64_t x);
/// u(s, k) = (splitmix64(s ^ splitmix64(k)) >> 11) * 2^-53, in [0, 1).
double counterUniform(uint64_t seed, uint64_t k);
/// Element i of an initialiser, in double.
double initializerValue(const Initializer &init, uint64_t i);

/// A tensor filled by `init`, values computed in double and rounded to
/// `dtype`.
HostTensor makeInitialized(const Initializer &init, DType dtype,
                           llvm::ArrayRef<int64_t> shape);

struct BoundParams {
  /// One per g.params(), in order.
  std::vector<HostTensor> values;
  /// File entries the graph does not use, one line each, whole:
  /// "FILE: warning: tensor 'x' (f32[4]) is not a parameter of ...".
  std::vector<std::string> warnings;
};

/// Binds every parameter of `g` (which must have static parameter shapes):
/// the file's tensor of the same name, whose dtype and shape must match
/// exactly, else its initialiser. `file` may be null (no file given);
/// `fileName` names it in messages.
llvm::Expected<BoundParams> bindParams(const Graph &g,
                                       const SafetensorsFile *file,
                                       llvm::StringRef fileName);

} // namespace kiln

#endif
