//===- Plan.cpp - kiln plan and kiln compile ------------------------------===//
//
// `kiln plan` prints the fusion plan: one kernel per group, what it fuses,
// how it is launched and the bytes it must move. `kiln compile` generates
// and compiles every kernel into the cache; it needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Engine.h"
#include "Execute.h"
#include "FileUtil.h"
#include "IR/ClipText.h"
#include "IR/Printer.h"
#include "Nvrtc.h"
#include "PlanPrinter.h"
#include "Specialize.h"
#include "Verifier.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

/// The graph's input shapes once --bind binds every named dim.
llvm::Expected<std::vector<llvm::SmallVector<int64_t, 6>>>
boundInputShapes(const Graph &g, const ParsedArgs &args) {
  DimBindings b;
  if (args.has("--bind")) {
    llvm::Expected<DimBindings> p = parseBindings(args.all("--bind"));
    if (!p)
      return asUsageError(p.takeError());
    b = std::move(*p);
  }
  llvm::Expected<std::unique_ptr<Graph>> s = specialize(g, b);
  if (!s)
    return s.takeError();
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  for (const Value *in : (*s)->inputs()) {
    if (!in->shape().isStatic())
      return usageError("input '{}' has shape {} with a named dim; give its "
                        "size with --bind, e.g. --bind {}=1024",
                        in->name(), in->shape().str(),
                        (*s)->symbols().empty() ? std::string("N")
                                                : (*s)->symbols()[0]);
    shapes.push_back(in->shape().sizes());
  }
  return shapes;
}

namespace {
struct BoundGraph {
  std::unique_ptr<Graph> graph;
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
};
} // namespace

/// The graph file named by the first positional argument, with --bind
/// applied.
static llvm::Expected<BoundGraph> loadBoundGraph(const ParsedArgs &args) {
  llvm::Expected<std::unique_ptr<Graph>> g = loadGraph(args.positional[0]);
  if (!g)
    return g.takeError();
  auto shapes = boundInputShapes(**g, args);
  if (!shapes)
    return shapes.takeError();
  return BoundGraph{std::move(*g), std::move(*shapes)};
}

/// --arch as given ("" when absent); an empty or unknown arch is an error
/// that lists the ones NVRTC compiles for.
static llvm::Expected<std::string> archOption(const ParsedArgs &args) {
  if (!args.has("--arch"))
    return std::string();
  std::string arch = args.get("--arch");
  if (llvm::Error e = rt::checkArch(arch))
    return usageError("--arch: {}", llvm::toString(std::move(e)));
  return arch;
}

const OptionSpec kMatmulPrecisionOption = {
    "--matmul-precision", "MODE",
    "how f32 linear and matmul multiply, in PyTorch's names: highest "
    "(fp32-accurate, the default), high (TF32) or medium (bf16 allowed; "
    "TF32 on f32 tensors, as cuBLAS)"};

llvm::Expected<MatmulPrecision> matmulPrecisionOption(const ParsedArgs &args) {
  if (!args.has("--matmul-precision"))
    return MatmulPrecision::Highest;
  std::string mode = args.get("--matmul-precision");
  if (std::optional<MatmulPrecision> p = parsePrecision(mode))
    return *p;
  return usageError("kiln {}: --matmul-precision: '{}' is not a precision; "
                    "use highest (fp32-accurate, the default), high (TF32) "
                    "or medium (bf16 allowed)",
                    args.command, mode);
}

llvm::Expected<CompileOptions> compileOptions(const ParsedArgs &args) {
  CompileOptions opts = CompileOptions::fromEnvironment();
  llvm::Expected<MatmulPrecision> precision = matmulPrecisionOption(args);
  if (!precision)
    return precision.takeError();
  opts.matmulPrecision = *precision;
  // The CLI uploads each parameter once (kiln run, bench), and plan and
  // compile show and cache the kernels those run.
  opts.constantParams = true;
  return opts;
}

llvm::Expected<std::unique_ptr<Executable>>
compileFromArgs(const ParsedArgs &args, CompileOptions opts) {
  llvm::Expected<BoundGraph> b = loadBoundGraph(args);
  if (!b)
    return b.takeError();
  llvm::Expected<std::string> arch = archOption(args);
  if (!arch)
    return arch.takeError();
  opts.arch = *arch;
  return Executable::compile(*b->graph, b->shapes, opts);
}

static int runPlan(const ParsedArgs &args) {
  if (args.has("--dot")) {
    FileRoles roles;
    roles.reads("the graph", args.positional[0]);
    roles.writes("--dot", args.get("--dot"));
    if (llvm::Error e = roles.check())
      return reportError(std::move(e));
  }
  // Planning needs no compile: generate for the target only.
  llvm::Expected<CompileOptions> options = compileOptions(args);
  if (!options)
    return reportError(options.takeError());
  CompileOptions opts = std::move(*options);
  opts.compileOnly = true;
  opts.generateOnly = true;
  auto exe = compileFromArgs(args, opts);
  if (!exe)
    return reportError(exe.takeError());
  for (const std::string &w : unusedValueWarnings((*exe)->graph()))
    llvm::errs() << w << "\n";
  if (args.has("--dot")) {
    if (llvm::Error e =
            writeFileAtomically(args.get("--dot"), [&](llvm::raw_ostream &os) {
              os << planDot(**exe);
            }))
      return reportError(std::move(e));
    llvm::errs() << "wrote the plan as Graphviz to " << args.get("--dot")
                 << "\n";
  }
  llvm::outs() << planText(**exe, opts.matmulPrecision);
  return ExitOk;
}

static int runCompile(const ParsedArgs &args) {
  llvm::Expected<CompileOptions> options = compileOptions(args);
  if (!options)
    return reportError(options.takeError());
  CompileOptions opts = std::move(*options);
  opts.compileOnly = true;
  opts.onKernelReady = kernelProgress();
  auto exe = compileFromArgs(args, opts);
  if (!exe)
    return reportError(exe.takeError());
  double total = 0;
  size_t unstored = 0;
  for (size_t i = 0; i < (*exe)->kernels().size(); ++i) {
    const KernelBuild &b = (*exe)->builds()[i];
    unstored += b.source == rt::CacheLookup::Source::Compiled && !b.stored;
    const char *how =
        b.source == rt::CacheLookup::Source::Compiled ? "miss, compiled"
        : b.source == rt::CacheLookup::Source::Disk   ? "hit (disk)"
                                                      : "hit (memory)";
    llvm::outs() << fmt::format("{:<40} {:<16} {:8.1f} ms  key {}\n",
                                (*exe)->kernels()[i].name, how, b.compileMs,
                                b.key.substr(0, 12));
    if (!b.log.empty())
      llvm::errs() << clipLongWords(b.log) << "\n";
    total += b.compileMs;
  }
  // Kernels compile several at once, so the sum of their times can exceed
  // the time until all were ready.
  llvm::errs() << fmt::format(
      "{} kernel(s) for {} ready in {:.1f} ms: {} compiled, {} from the "
      "cache; compile times sum to {:.1f} ms\n",
      (*exe)->kernels().size(), (*exe)->target().arch, (*exe)->kernelsReadyMs(),
      (*exe)->compiledKernels(), (*exe)->cachedKernels(), total);
  // Filling the cache is the command's purpose: a kernel it could not store
  // fails it, unless the user turned the disk cache off.
  if (unstored == 0)
    return ExitOk;
  if (opts.cache.disableDisk) {
    llvm::errs() << "note: KILN_CACHE_DISABLE is set: the kernels were "
                    "compiled, and none was stored\n";
    return ExitOk;
  }
  llvm::errs() << fmt::format(
      "error: {} compiled kernel{} could not be stored in the kernel cache "
      "(see the warning above); a later process will compile {} again\n",
      unstored, unstored == 1 ? "" : "s", unstored == 1 ? "it" : "them");
  return ExitUserError;
}

static const std::vector<OptionSpec> kTargetOptions = {
    {"--bind", "NAME=SIZE", "bind a named dim, e.g. --bind N=1024", true},
    {"--arch", "SM",
     "target arch, e.g. sm_90 (default: the GPU's, else "
     "sm_90)"},
    kMatmulPrecisionOption,
};

const CommandSpec &planCommand() {
  static std::vector<OptionSpec> options = [] {
    auto o = kTargetOptions;
    o.push_back({"--dot", "FILE", "also write the plan as Graphviz"});
    return o;
  }();
  static const CommandSpec spec = {
      "plan",
      "print the fusion plan: kernels, fused ops, launch shapes, bytes",
      "kiln plan FILE [--bind NAME=SIZE]... [--arch SM] "
      "[--matmul-precision MODE] [--dot FILE]",
      "Partitions FILE into fusion groups and schedules one kernel for "
      "each at the\nconcrete shapes. Prints, per kernel, the ops it fuses, "
      "what it reads and\nwrites, its launch shape and strategy, and the "
      "bytes it must move.\nNeeds no GPU (the target defaults to sm_90, an "
      "H100/H200, when there is none).\n--matmul-precision picks how f32 "
      "linear multiplies (on sm_90: 3xTF32 or TF32\ntensor cores); the "
      "last line names the target and the precision.",
      options,
      1,
      1,
      runPlan};
  return spec;
}

const CommandSpec &compileCommand() {
  static const CommandSpec spec = {
      "compile",
      "generate and compile every kernel of a graph into the cache",
      "kiln compile FILE [--bind NAME=SIZE]... [--arch SM] "
      "[--matmul-precision MODE]",
      "Generates the kernels of FILE and compiles them with NVRTC into the "
      "kernel\ncache ($KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else "
      "~/.cache/kiln), so a\nlater run starts warm. Prints each kernel's "
      "cache hit or miss and compile\ntime. Needs no GPU: without one, "
      "kernels are scheduled for sm_90 with 132 SMs\n(an H100 or H200 "
      "SXM); on a GPU with another SM count, kernels whose\nschedule "
      "depends on it (GroupNorm teams) differ and miss. Each\n"
      "--matmul-precision has kernels, and cache entries, of its own.\n"
      "KILN_PRINT_SOURCE=1 prints the generated source.",
      kTargetOptions,
      1,
      1,
      runCompile};
  return spec;
}

} // namespace kiln::cli
