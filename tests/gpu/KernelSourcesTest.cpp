//===- KernelSourcesTest.cpp - Generated sources, fixed by their hashes ---===//
//
// No GPU needed. The source of every kernel generated for every case of the
// GPU suite (with its options) and every example graph (as the CLI compiles
// it: constant parameters), for sm_90 (132 SMs) and sm_80 (108),
// hashed and compared with tests/data/kernel_sources.txt: a change to the
// compiler that is meant to keep behaviour (a refactor) must keep every
// line. A change meant to alter kernels rewrites the file with
// KILN_UPDATE_GOLDEN=1, and the diff shows which kernels it touched.
//
//===----------------------------------------------------------------------===//
#include "Execute.h"
#include "GpuCases.h"
#include "Parser.h"
#include "codegen/OfflineOptions.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

namespace kiln {
namespace {

/// The examples at the shapes ExamplesCodegenTest plans them.
const std::pair<const char *, int64_t> kExamples[] = {
    {"l1_35", 112},     {"l1_35_small", 3},    {"l2_19", 128},
    {"l2_19_small", 2}, {"l2_37", 32768},      {"l2_37_small", 5},
    {"l2_62", 1024},    {"l2_62_small", 7},    {"l2_75", 1024},
    {"l2_75_small", 6}, {"decoder_block", 16}, {"decoder_block_small", 2},
};

/// "CASE ARCH INDEX NAME HASH" for each kernel of `g` at `shapes`.
void hashLines(const std::string &name, const Graph &g,
               const std::vector<llvm::SmallVector<int64_t, 6>> &shapes,
               std::string &out, MatmulPrecision precision,
               bool constantParams) {
  for (const char *arch : {"sm_90", "sm_80"}) {
    CompileOptions opts = offlineOptions(true, arch);
    opts.matmulPrecision = precision;
    opts.constantParams = constantParams;
    auto exe = Executable::compile(g, shapes, opts);
    if (!exe) {
      // A case the target refuses (a located error) is part of the record.
      out += fmt::format("{} {} error {:016x}\n", name, arch,
                         llvm::xxHash64(llvm::toString(exe.takeError())));
      continue;
    }
    const std::vector<EmittedKernel> &ks = (*exe)->kernels();
    for (size_t i = 0; i < ks.size(); ++i)
      out += fmt::format("{} {} {} {} {:016x}\n", name, arch, i, ks[i].name,
                         llvm::xxHash64(ks[i].source));
  }
}

TEST(KernelSources, MatchTheirRecordedHashes) {
  std::string text;
  for (const Case &c : cases()) {
    auto g = parseGraph(c.kg, c.name + ".kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    std::vector<llvm::SmallVector<int64_t, 6>> shapes;
    for (const std::vector<int64_t> &s : c.shapes)
      shapes.emplace_back(s.begin(), s.end());
    hashLines(c.name, **g, shapes, text, c.precision, c.constantParams);
  }
  for (const auto &[file, n] : kExamples) {
    auto g =
        loadGraph(std::string(KILN_SOURCE_DIR) + "/examples/" + file + ".kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    llvm::SmallVector<int64_t, 6> shape = (*g)->inputs()[0]->shape().sizes();
    shape[0] = n;
    // As the CLI compiles them (kiln plan, bench: constant parameters).
    hashLines(file, **g, {shape}, text, MatmulPrecision::Highest, true);
  }
  const std::string golden =
      std::string(KILN_SOURCE_DIR) + "/tests/data/kernel_sources.txt";
  if (std::getenv("KILN_UPDATE_GOLDEN")) {
    std::ofstream(golden) << text;
    GTEST_SKIP() << "rewrote " << golden;
  }
  auto want = llvm::MemoryBuffer::getFile(golden);
  ASSERT_TRUE(static_cast<bool>(want)) << golden << " is missing";
  llvm::SmallVector<llvm::StringRef, 0> got, exp;
  llvm::StringRef(text).split(got, '\n');
  (*want)->getBuffer().split(exp, '\n');
  for (size_t i = 0; i < std::max(got.size(), exp.size()); ++i) {
    llvm::StringRef a = i < got.size() ? got[i] : "(none)";
    llvm::StringRef b = i < exp.size() ? exp[i] : "(none)";
    ASSERT_EQ(a, b) << "line " << i + 1 << " of " << golden
                    << " (KILN_UPDATE_GOLDEN=1 rewrites it when the change "
                       "is meant)";
  }
}

} // namespace
} // namespace kiln
