//===- Check.cpp - kiln check: parse, infer, print the typed graph --------===//
#include "Commands.h"

#include "Execute.h"
#include "IR/Printer.h"
#include "Pipeline.h"
#include "Specialize.h"
#include "Verifier.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

int reportError(llvm::Error err) {
  bool usage = false;
  err = llvm::handleErrors(std::move(err),
                           [&](std::unique_ptr<UsageError> e) -> llvm::Error {
                             usage = true;
                             return llvm::Error(std::move(e));
                           });
  llvm::errs() << errorToString(std::move(err)) << "\n";
  return usage ? ExitUsageError : ExitUserError;
}

static int runCheck(const ParsedArgs &args) {
  llvm::Expected<std::unique_ptr<Graph>> g = loadGraph(args.positional[0]);
  if (!g)
    return reportError(g.takeError());
  std::unique_ptr<Graph> graph = std::move(*g);
  for (const std::string &w : unusedValueWarnings(*graph))
    llvm::errs() << w << "\n";
  if (args.has("--bind")) {
    llvm::Expected<DimBindings> b = parseBindings(args.all("--bind"));
    if (!b)
      return reportError(asUsageError(b.takeError()));
    // The pipeline's first stages, as plan and run take them (sizes that
    // fit 64-bit indexing among the checks).
    llvm::Expected<std::unique_ptr<Graph>> s = prepareForExecution(
        *graph, *b, CompileOptions::fromEnvironment().printIR);
    if (!s)
      return reportError(s.takeError());
    graph = std::move(*s);
  }
  PrintOptions opts;
  opts.types = !args.has("--no-types");
  llvm::outs() << printGraph(*graph, opts);
  size_t params = graph->params().size();
  llvm::errs() << fmt::format(
      "ok: {} input{}, {} parameter{}, {} node{}, "
      "{} output{}\n",
      graph->inputs().size(), graph->inputs().size() == 1 ? "" : "s", params,
      params == 1 ? "" : "s", graph->nodes().size(),
      graph->nodes().size() == 1 ? "" : "s", graph->outputs().size(),
      graph->outputs().size() == 1 ? "" : "s");
  return ExitOk;
}

const CommandSpec &checkCommand() {
  static const CommandSpec spec = {
      "check",
      "parse a .kg graph, infer every type, print the typed graph",
      "kiln check FILE [--bind NAME=SIZE]... [--no-types]",
      "Parses FILE, checks it (op schemas, shapes, PyTorch broadcasting and "
      "type\npromotion), and prints it back with the type of every value. "
      "Errors name\nfile:line:col. With --bind, named dims are replaced by "
      "sizes first, as running\nwould do.",
      {
          {"--bind", "NAME=SIZE", "bind a named dim, e.g. --bind N=1024", true},
          {"--no-types", nullptr, "print without type annotations"},
      },
      1,
      1,
      runCheck};
  return spec;
}

} // namespace kiln::cli
