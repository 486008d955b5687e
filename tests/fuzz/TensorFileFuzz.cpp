//===- TensorFileFuzz.cpp - Fuzz target for .npy and .safetensors ---------===//
//
// The first byte picks the format (even: .npy, odd: .safetensors); the rest
// is the file. A corrupt file must give an error, never a crash; a file that
// parses must describe itself consistently (every tensor holds exactly the
// bytes its dtype and shape need, names are unique). Violations abort.
//
//===----------------------------------------------------------------------===//
#include "IR/Diagnostics.h"
#include "Npy.h"
#include "Safetensors.h"

#include <cstdio>
#include <cstdlib>
#include <set>

using namespace kiln;

namespace {

void require(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "tensor file oracle failed: %s\n", what);
  std::abort();
}

void checkTensor(const HostTensor &t) {
  std::optional<uint64_t> size = checkedByteSize(t.dtype, t.shape);
  require(size.has_value(), "a parsed shape overflows");
  require(*size == t.bytes.size(), "bytes disagree with dtype and shape");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    llvm::Expected<HostTensor> t = parseNpy(bytes, "fuzz.npy");
    if (!t) {
      require(!errorToString(t.takeError()).empty(), "empty error message");
      return 0;
    }
    checkTensor(*t);
    return 0;
  }
  llvm::Expected<SafetensorsFile> f = parseSafetensors(bytes, "fuzz");
  if (!f) {
    require(!errorToString(f.takeError()).empty(), "empty error message");
    return 0;
  }
  std::set<std::string> names;
  for (const auto &[name, t] : f->tensors) {
    require(names.insert(name).second, "duplicate tensor name");
    checkTensor(t);
  }
  return 0;
}
