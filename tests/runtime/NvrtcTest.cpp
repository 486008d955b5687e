#include "RuntimeTestUtil.h"

#include <nvrtc.h>

#include <fstream>
#include <sstream>

namespace kiln::rt {
namespace {

using test::patternRequest;

TEST(Nvrtc, CompilesACubinForEachArch) {
  for (const char *arch : {"sm_90", "sm_80"}) {
    llvm::Expected<CompileResult> r = compileCuda(patternRequest(arch));
    ASSERT_TRUE(bool(r)) << arch << ": " << llvm::toString(r.takeError());
    EXPECT_TRUE(test::isElf(r->cubin)) << arch << ": cubin is not ELF";
    EXPECT_GT(r->compileMs, 0) << arch;
  }
}

TEST(Nvrtc, AllOptionsAreTheArchTheStandardMinimalThenTheExtras) {
  CompileRequest req = patternRequest("sm_80");
  req.options = {"-lineinfo", "-DKILN_X=1"};
  std::vector<std::string> expected = {"--gpu-architecture=sm_80", "-std=c++17",
                                       "-minimal", "-lineinfo", "-DKILN_X=1"};
  EXPECT_EQ(req.allOptions(), expected); // no --use_fast_math by default
  llvm::Expected<CompileResult> r = compileCuda(req);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
}

// NVRTC is given the key's options and, where it has a program cache of its
// own (12.9 and later; CUDA 13 here), --no-cache: Kiln's cache does that
// work, and NVRTC's adds ~200 ms of start-up to a process's first compile.
TEST(Nvrtc, NvrtcGetsTheKeyOptionsAndNoCacheOfItsOwn) {
  CompileRequest req = patternRequest("sm_90");
  req.options = {"-lineinfo"};
  std::vector<std::string> expected = req.allOptions();
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  const bool ownCache = major > 12 || (major == 12 && minor >= 9);
  EXPECT_EQ(nvrtcHasOwnCache(), ownCache);
  if (ownCache)
    expected.push_back("--no-cache");
  EXPECT_EQ(req.nvrtcOptions(), expected);
  llvm::Expected<CompileResult> r = compileCuda(req); // NVRTC accepts them
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(test::isElf(r->cubin));
}

TEST(Nvrtc, ASyntaxErrorGivesTheLogAndTheSavedSource) {
  test::ScopedTempDir tmp;
  test::ScopedEnv env("TMPDIR", tmp.path());
  CompileRequest req = patternRequest();
  req.fileName = "broken_kernel.cu";
  req.source += "extern \"C\" __global__ void broken() { int x = ; }\n";
  llvm::Expected<CompileResult> r = compileCuda(req);
  ASSERT_FALSE(bool(r));
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(msg.find("NVRTC failed to compile broken_kernel.cu for sm_90:\n"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("broken_kernel.cu(8)"), std::string::npos)
      << "the log should name the line: " << msg;
  std::string path = tmp.path() + "/kiln-failed-broken_kernel.cu";
  EXPECT_NE(msg.find("the generated source is in " + path), std::string::npos)
      << msg;
  std::ifstream in(path);
  std::stringstream saved;
  saved << in.rdbuf();
  EXPECT_EQ(saved.str(), req.source);
}

TEST(Nvrtc, HeadersAreFoundByName) {
  CompileRequest req = patternRequest();
  req.headers.clear();
  llvm::Expected<CompileResult> r = compileCuda(req);
  ASSERT_FALSE(bool(r)) << "compiled without its header";
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(msg.find("kiln/pattern.cuh"), std::string::npos) << msg;
}

TEST(Nvrtc, VersionIsMajorDotMinor) {
  std::string v = nvrtcVersionString();
  EXPECT_NE(v, "unknown");
  EXPECT_NE(v.find('.'), std::string::npos) << v;
}

} // namespace
} // namespace kiln::rt
