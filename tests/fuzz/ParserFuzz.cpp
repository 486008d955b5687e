//===- ParserFuzz.cpp - libFuzzer entry point for the .kg parser ----------===//
//
// The oracle: text that parses must print, parse back and print the same
// (with and without type annotations); text that does not parse must fail
// with a DiagError located inside the input (line 0 for whole-file errors).
// Any other outcome aborts. The same entry point is driven by libFuzzer
// (kiln_parser_fuzz) and by the deterministic replay test.
//
//===----------------------------------------------------------------------===//
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraph(input, "fuzz.kg");
  if (g)
    checkRoundTrip(**g, input);
  else
    checkError(g.takeError(), input);
  return 0;
}
