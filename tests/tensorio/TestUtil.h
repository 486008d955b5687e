//===- TestUtil.h - Helpers for the tensor file tests ----------*- C++ -*-===//
#ifndef KILN_TESTS_TENSORIO_TESTUTIL_H
#define KILN_TESTS_TENSORIO_TESTUTIL_H

#include "HostTensor.h"
#include "IR/Diagnostics.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

namespace kiln::test {

/// A fresh directory, removed with its contents at the end of the scope.
class TempDir {
public:
  TempDir() {
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory("kiln-tensorio", path_);
    EXPECT_FALSE(ec) << ec.message();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path_); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path_);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

private:
  llvm::SmallString<256> path_;
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The user-facing text of an Expected's error ("" when it succeeded).
template <typename T> std::string errorText(llvm::Expected<T> v) {
  if (v)
    return "";
  return errorToString(v.takeError());
}

inline std::string errorText(llvm::Error e) {
  return e ? errorToString(std::move(e)) : "";
}

/// Little-endian bytes of a value.
template <typename T> std::string le(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

/// A tensor with element i = f(i).
template <typename F>
HostTensor makeTensor(DType dt, llvm::ArrayRef<int64_t> shape, F f) {
  HostTensor t(dt, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, f(i));
  return t;
}

} // namespace kiln::test

#endif
