//===- Pipeline.cpp - The passes, in order --------------------------------===//
#include "Pipeline.h"

#include "IR/Printer.h"
#include "Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

namespace kiln {

namespace {

bool printIR() {
  static const bool on = [] {
    const char *v = std::getenv("KILN_PRINT_IR");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

/// Times one pass and, with KILN_PRINT_IR set, prints the graph after it.
class PassLog {
public:
  explicit PassLog(const char *pass)
      : pass_(pass), start_(std::chrono::steady_clock::now()) {}
  void done(const Graph &g) const {
    if (!printIR())
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start_)
                    .count();
    llvm::errs() << fmt::format("// ---- after {} ({:.3f} ms)\n", pass_, ms)
                 << printGraph(g, PrintOptions{true});
  }

private:
  const char *pass_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace

llvm::Expected<std::unique_ptr<Graph>>
prepareForExecution(const Graph &g, const DimBindings &bindings) {
  // 1. The input may come from a pass or hand-built IR: check it first.
  PassLog verify("verify");
  if (llvm::Error e = verifyGraph(g))
    return e;
  verify.done(g);

  // 2. Bind named dims. Every op's shape rule runs again on the concrete
  //    sizes, so a binding that breaks a rule is a located error here.
  PassLog spec("specialize");
  llvm::Expected<std::unique_ptr<Graph>> s = specialize(g, bindings);
  if (!s)
    return s.takeError();
  spec.done(**s);

  // 3. Specialisation rebuilds the graph; the result must verify too.
  //    (Later passes slot in after this one: canonicalisation, CSE/DCE,
  //    fusion partitioning, scheduling, code generation.)
  if (llvm::Error e = verifyGraph(**s))
    return e;
  return s;
}

} // namespace kiln
