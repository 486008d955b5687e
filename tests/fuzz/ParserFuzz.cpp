//===- ParserFuzz.cpp - libFuzzer entry point for the .kg parser ----------===//
//
// The oracle: text that parses must print, parse back and print the same
// (with and without type annotations), and plan and generate its kernels
// (no NVRTC) with its named dims bound to 0 and to a small size, or fail
// with a message; text that does not parse must fail with a DiagError
// located inside the input (line 0 for whole-file errors). Any other
// outcome (a crash included) aborts. The same entry point is driven by
// libFuzzer (kiln_parser_fuzz) and by the deterministic replay test.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "IR/Printer.h"
#include "Parser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace kiln;

[[noreturn]] static void fail(llvm::StringRef what, llvm::StringRef input,
                              llvm::StringRef detail) {
  llvm::errs() << "parser fuzz oracle failed: " << what << "\n--- input ---\n"
               << input << "\n--- detail ---\n"
               << detail << "\n";
  std::abort();
}

/// Whether (line, col) lies inside `text`: a 1-based line that exists and a
/// column at most one past its end, or line 0 and col 0.
static bool insideText(llvm::StringRef text, unsigned line, unsigned col) {
  if (line == 0)
    return col == 0;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  text.split(lines, '\n');
  if (line > lines.size())
    return false;
  return col >= 1 && col <= lines[line - 1].size() + 1;
}

static void checkError(llvm::Error err, llvm::StringRef input) {
  llvm::handleAllErrors(
      std::move(err),
      [&](const DiagError &d) {
        if (d.loc().file != "fuzz.kg")
          fail("error not located in the input file", input, d.text());
        if (!insideText(input, d.loc().line, d.loc().col))
          fail("error located outside the input", input, d.loc().str());
        if (d.text().empty())
          fail("empty error message", input, "");
      },
      [&](const llvm::ErrorInfoBase &e) {
        fail("error is not a DiagError", input, e.message());
      });
}

static void checkRoundTrip(const Graph &g, llvm::StringRef input) {
  std::string printed = printGraph(g);
  for (bool types : {false, true}) {
    std::string text = types ? printGraph(g, PrintOptions{true}) : printed;
    llvm::Expected<std::unique_ptr<Graph>> again =
        parseGraph(text, "printed.kg");
    if (!again)
      fail("printed graph does not parse", input,
           text + "\n" + errorToString(again.takeError()));
    std::string reprinted = printGraph(**again);
    if (reprinted != printed)
      fail("printed graph does not print identically", input,
           printed + "\n--- reprinted ---\n" + reprinted);
  }
}

/// Plans and generates g's kernels for sm_90 with every named dim `size`.
static void checkCodegen(const Graph &g, llvm::StringRef input, int64_t size) {
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  for (const Value *in : g.inputs()) {
    llvm::SmallVector<int64_t, 6> s;
    for (const Dim &d : in->shape())
      s.push_back(d.isStatic() ? d.size : size);
    shapes.push_back(std::move(s));
  }
  CompileOptions opts;
  opts.arch = "sm_90";
  opts.compileOnly = true;
  opts.generateOnly = true;
  llvm::Expected<std::unique_ptr<Executable>> exe =
      Executable::compile(g, shapes, opts);
  if (!exe && llvm::toString(exe.takeError()).empty())
    fail("code generation failed with an empty message", input, "");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraph(input, "fuzz.kg");
  if (g) {
    checkRoundTrip(**g, input);
    checkCodegen(**g, input, 0);
    checkCodegen(**g, input, 1 + static_cast<int64_t>(size % 5));
  } else
    checkError(g.takeError(), input);
  return 0;
}
