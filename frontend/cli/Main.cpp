//===- Main.cpp - The kiln command-line tool ------------------------------===//
#include "Commands.h"
#include "ref/Parallel.h"

#include "CudaDriver.h"
#include "IR/ClipText.h"
#include "Nvrtc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <exception>
#include <new>

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

namespace kiln::cli {

static std::vector<const CommandSpec *> commands() {
  return {&checkCommand(),       &planCommand(),        &compileCommand(),
          &runCommand(),         &benchCommand(),       &opsCommand(),
          &cacheCommand(),       &cacheListCommand(),   &cacheShowCommand(),
          &cacheVerifyCommand(), &cacheExportCommand(), &cacheImportCommand(),
          &cacheWhyCommand()};
}

static std::string topHelp() {
  std::string out =
      "usage: kiln COMMAND [options]\n\n"
      "Kiln compiles chains of deep-learning ops, written as .kg graphs, "
      "into fused\nGPU kernels. See docs/format.md for the graph format.\n\n"
      "commands:\n";
  for (const CommandSpec *c : commands())
    if (!llvm::StringRef(c->name).contains(' ')) // not a subcommand
      out += fmt::format("  {:<8} {}\n", c->name, c->summary);
  out += "\noptions:\n"
         "  --version  print versions (kiln, NVRTC) and the GPU, if any\n"
         "  --help     show this help; 'kiln COMMAND --help' for a "
         "command\n\n"
         "exit codes: 0 success, 1 bad input (graph, data or parameter "
         "files),\n            2 bad command line, 3 internal error\n";
  return out;
}

static int printVersion() {
  llvm::outs() << "kiln " << KILN_VERSION << "\n"
               << "NVRTC " << rt::nvrtcVersionString() << "\n"
               << rt::describeDevices() << "\n";
  return ExitOk;
}

static int dispatch(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    llvm::errs() << topHelp();
    return ExitUsageError;
  }
  const std::string &first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    llvm::outs() << topHelp();
    return ExitOk;
  }
  if (first == "--version" || first == "version")
    return printVersion();
  // "kiln cache list ..." runs the command named "cache list".
  std::string two = args.size() > 1 ? first + " " + args[1] : "";
  for (const CommandSpec *c : commands()) {
    if (first != c->name && two != c->name)
      continue;
    if (first == c->name && !two.empty() &&
        llvm::any_of(commands(),
                     [&](const CommandSpec *s) { return two == s->name; }))
      continue;
    size_t words = first == c->name ? 1 : 2;
    std::vector<std::string> rest(args.begin() + words, args.end());
    for (const std::string &a : rest)
      if (a == "--help" || a == "-h") {
        llvm::outs() << helpText(*c);
        return ExitOk;
      }
    llvm::Expected<ParsedArgs> parsed = parseArgs(*c, rest);
    if (!parsed)
      return reportError(parsed.takeError()); // a UsageError: exit code 2
    return c->run(*parsed);
  }
  std::string names;
  for (const CommandSpec *c : commands())
    if (!llvm::StringRef(c->name).contains(' '))
      names += (names.empty() ? "" : ", ") + std::string(c->name);
  return reportError(usageError("unknown command '{}'; the commands are {} "
                                "(see 'kiln --help')",
                                first, names));
}

} // namespace kiln::cli

int main(int argc, char **argv) {
  // The environment is read here, at the edge (KILN_THREADS), and in
  // CompileOptions::fromEnvironment (the rest).
  if (const char *env = std::getenv("KILN_THREADS"))
    if (int v = std::atoi(env); v > 0)
      kiln::ref::setEvaluatorThreads(static_cast<unsigned>(v));
  // User errors travel as llvm::Error; an exception reaching here (out of
  // memory, say) is Kiln's failure, reported as such with exit code 3.
  try {
    return kiln::cli::dispatch(argc, argv);
  } catch (const std::bad_alloc &) {
    llvm::errs() << "internal error: out of memory\n";
  } catch (const std::exception &e) {
    llvm::errs() << "internal error: " << kiln::clipLongWords(e.what())
                 << "\nplease report this with the command that caused it\n";
  }
  return kiln::cli::ExitInternalError;
}
