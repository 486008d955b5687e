//===- Pipeline.h - From a parsed graph to kernel sources ------*- C++ -*-===//
//
// The stages, in order, live in Pipeline.cpp alone:
//
//   verify -> specialise -> verify -> partition -> schedule -> emit
//
// With PipelineOptions::printIR (KILN_PRINT_IR=1 at the CLI) each stage
// prints what it produced (the graph, the plan, the schedules, the source
// sizes) and its time to stderr.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINE_H
#define KILN_PIPELINE_H

#include "IR/Graph.h"
#include "Specialize.h"
#include "codegen/Kernel.h"
#include "fusion/Partition.h"
#include "schedule/Precision.h"
#include "schedule/Schedule.h"

#include <functional>
#include <memory>
#include <vector>

namespace kiln {

struct PipelineOptions {
  /// The GPU the kernels are scheduled for.
  TargetInfo target;
  /// How f32 contractions are computed.
  MatmulPrecision precision = MatmulPrecision::Highest;
  /// CompileOptions::constantParams.
  bool constantParams = false;
  /// Stop after specialising (kiln check, the reference evaluator).
  bool specializeOnly = false;
  /// Print each stage's result and time to stderr.
  bool printIR = false;
  /// Print every generated kernel's source to stderr.
  bool printSource = false;
  /// Called with each group's schedule before it is emitted: a tuner (or a
  /// test) may change its parameters and launch. The emitter renders what
  /// it gets; a schedule the templates cannot take fails in NVRTC.
  std::function<void(size_t group, Schedule &)> adjustSchedule;
};

/// What the pipeline produced. Without specializeOnly, schedules[i] and
/// kernels[i] belong to plan.groups[i].
struct CompiledGraph {
  std::unique_ptr<Graph> graph; // specialised: static shapes, verified
  FusionPlan plan;
  std::vector<Schedule> schedules;
  std::vector<EmittedKernel> kernels;
};

/// Runs every stage on `g` with the named dims bound by `bindings`; `g` is
/// unchanged. Errors: located user errors from any stage.
llvm::Expected<CompiledGraph> runPipeline(const Graph &g,
                                          const DimBindings &bindings,
                                          const PipelineOptions &opts);

/// runPipeline up to specialisation: the static-shaped, verified graph.
llvm::Expected<std::unique_ptr<Graph>>
prepareForExecution(const Graph &g, const DimBindings &bindings,
                    bool printIR = false);

} // namespace kiln

#endif
