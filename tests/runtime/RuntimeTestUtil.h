//===- RuntimeTestUtil.h - Shared pieces of the runtime tests --*- C++ -*-===//
#ifndef KILN_TESTS_RUNTIME_RUNTIMETESTUTIL_H
#define KILN_TESTS_RUNTIME_RUNTIMETESTUTIL_H

#include "KernelCache.h"
#include "Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::rt::test {

/// A fresh directory, removed with everything in it at the end of the test.
class ScopedTempDir {
public:
  ScopedTempDir() {
    std::string tmpl = testing::TempDir() + "kiln-rt-XXXXXX";
    if (char *p = ::mkdtemp(tmpl.data()))
      path_ = p;
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed for " << tmpl;
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Sets an environment variable for the life of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) {
    if (const char *old = std::getenv(name)) {
      old_ = old;
      hadOld_ = true;
    }
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (hadOld_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::string old_;
  bool hadOld_ = false;
};

/// A header the test kernel includes by name.
inline constexpr std::string_view PatternHeader =
    "__device__ inline unsigned kiln_pattern(unsigned i) {\n"
    "  return i * 2654435761u + 7u;\n"
    "}\n";

/// Host twin of kiln_pattern.
inline unsigned pattern(unsigned i) { return i * 2654435761u + 7u; }

/// A tiny kernel: out[i] = kiln_pattern(i) for i < n.
inline CompileRequest patternRequest(const std::string &arch = "sm_90") {
  CompileRequest req;
  req.source = "#include \"kiln/pattern.cuh\"\n"
               "extern \"C\" __global__ void fill_pattern(unsigned *out,\n"
               "                                          unsigned n) {\n"
               "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n)\n"
               "    out[i] = kiln_pattern(i);\n"
               "}\n";
  req.fileName = "fill_pattern.cu";
  req.headers = {{"kiln/pattern.cuh", PatternHeader}};
  req.arch = arch;
  return req;
}

inline bool isElf(const std::vector<char> &bytes) {
  return bytes.size() > 4 && bytes[0] == 0x7f && bytes[1] == 'E' &&
         bytes[2] == 'L' && bytes[3] == 'F';
}

/// Every regular file under `dir`, sorted.
inline std::vector<std::string> filesUnder(const std::string &dir) {
  std::vector<std::string> out;
  for (const auto &e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// cache.getOrCompile(req, meta), which must succeed with an ELF cubin (a
/// test failure otherwise, and an empty lookup).
inline CacheLookup lookupOk(KernelCache &cache, const CompileRequest &req,
                            const KernelMetadata &meta) {
  llvm::Expected<CacheLookup> r = cache.getOrCompile(req, meta);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return {};
  }
  EXPECT_TRUE(r->cubin && isElf(*r->cubin));
  return *r;
}

} // namespace kiln::rt::test

#endif
