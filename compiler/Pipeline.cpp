//===- Pipeline.cpp - The stages, in order --------------------------------===//
#include "Pipeline.h"

#include "IR/Printer.h"
#include "Verifier.h"
#include "codegen/Codegen.h"
#include "schedule/Scheduler.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace kiln {

namespace {

/// Times one stage and, when printing, prints what it produced.
class StageLog {
public:
  StageLog(const char *stage, bool print)
      : stage_(stage), print_(print), start_(std::chrono::steady_clock::now()) {
  }
  void done(const std::string &what) const {
    if (!print_)
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start_)
                    .count();
    llvm::errs() << fmt::format("// ---- after {} ({:.3f} ms)\n", stage_, ms)
                 << what;
  }

private:
  const char *stage_;
  bool print_;
  std::chrono::steady_clock::time_point start_;
};

std::string graphText(const Graph &g) {
  return printGraph(g, PrintOptions{true});
}

/// "group 0 (groupnorm): y = group_norm, m = min -> out"
std::string planText(const FusionPlan &plan) {
  std::string s;
  auto values = [](const std::vector<const Value *> &vs) {
    std::string l;
    for (const Value *v : vs)
      l += fmt::format("{}{}", l.empty() ? "" : ", ", v->name());
    return l.empty() ? std::string("-") : l;
  };
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const FusionGroup &g = plan.groups[i];
    s += fmt::format("group {} ({}): {}; reads {}; writes {}\n", i,
                     groupKindName(g.kind).str(), g.nodesText(),
                     values(g.inputs), values(g.outputs));
  }
  for (const FusionGroup &g : plan.empty)
    s += fmt::format("no kernel (empty results): {}\n", g.nodesText());
  return s;
}

} // namespace

llvm::Expected<std::unique_ptr<Graph>>
prepareForExecution(const Graph &g, const DimBindings &bindings, bool printIR) {
  // 1. The input may come from a pass or hand-built IR: check it first.
  StageLog verify("verify", printIR);
  if (llvm::Error e = verifyGraph(g))
    return e;
  verify.done(graphText(g));

  // 2. Bind named dims. Every op's shape rule runs again on the concrete
  //    sizes, so a binding that breaks a rule is a located error here.
  StageLog spec("specialize", printIR);
  llvm::Expected<std::unique_ptr<Graph>> s = specialize(g, bindings);
  if (!s)
    return s.takeError();
  spec.done(graphText(**s));

  // 3. Specialisation rebuilds the graph; the result must verify too (sizes
  //    that fit 64-bit indexing among it).
  if (llvm::Error e = verifyGraph(**s))
    return e;
  return s;
}

llvm::Expected<CompiledGraph> runPipeline(const Graph &g,
                                          const DimBindings &bindings,
                                          const PipelineOptions &opts) {
  CompiledGraph out;
  // 1-3. Verify, specialise, verify.
  llvm::Expected<std::unique_ptr<Graph>> spec =
      prepareForExecution(g, bindings, opts.printIR);
  if (!spec)
    return spec.takeError();
  out.graph = std::move(*spec);
  if (opts.specializeOnly)
    return out;

  // 4. Fusion groups, each one kernel, in an order that respects every
  //    data dependency (needs static shapes).
  StageLog partition("partition", opts.printIR);
  PartitionOptions popts;
  popts.contractionEpilogue = [&](const Node &anchor, const Node *norm) {
    return contractionTakesEpilogue(anchor, norm, opts.target, opts.precision);
  };
  out.plan = partitionGraph(*out.graph, popts);
  partition.done(planText(out.plan));

  // 5. A schedule per group for the concrete shapes and the target: the
  //    template, its parameters, the launch shape, and why.
  StageLog schedule("schedule", opts.printIR);
  std::string schedules;
  for (size_t i = 0; i < out.plan.groups.size(); ++i) {
    llvm::Expected<Schedule> s = scheduleGroup(
        out.plan.groups[i], opts.target, opts.precision, opts.constantParams);
    if (!s)
      return s.takeError();
    if (opts.adjustSchedule)
      opts.adjustSchedule(i, *s);
    schedules += fmt::format("group {}: {}\n", i, s->str());
    out.schedules.push_back(std::move(*s));
  }
  schedule.done(schedules);

  // 6. CUDA C++ for each group, rendered from its schedule alone.
  StageLog emit("emit", opts.printIR);
  std::string sizes;
  for (size_t i = 0; i < out.plan.groups.size(); ++i) {
    llvm::Expected<EmittedKernel> k =
        emitKernel(out.plan.groups[i], out.schedules[i]);
    if (!k)
      return k.takeError();
    sizes += fmt::format("{}: {} bytes of source\n", k->name, k->source.size());
    if (opts.printSource)
      llvm::errs() << "// ===== " << k->name << " =====\n" << k->source;
    out.kernels.push_back(std::move(*k));
  }
  emit.done(sizes);
  return out;
}

} // namespace kiln
