#include "RuntimeTestUtil.h"

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
