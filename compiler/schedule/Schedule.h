//===- Schedule.h - How one fusion group runs, as plain data ---*- C++ -*-===//
//
// A scheduler (Scheduler.h) turns a fusion group, its concrete shapes and
// the target into a Schedule: which template runs it, with which
// parameters, at which launch shape, and why. An emitter (codegen/) renders
// a Schedule into CUDA C++ and decides nothing, so a schedule can be
// printed (`kiln plan`), unit-tested without emitting, and replaced (a
// tuner sets its parameters by name).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SCHEDULE_SCHEDULE_H
#define KILN_SCHEDULE_SCHEDULE_H

#include "fusion/Partition.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kiln {

/// How a kernel is launched.
struct LaunchShape {
  unsigned grid = 1, block = 1;
  unsigned gridY = 1;       // batches (matmul) or groups (convolutions)
  unsigned sharedBytes = 0; // dynamic shared memory
  bool cooperative = false; // every block resident at once
};

/// One named parameter of the chosen template (a count, a size, or 0/1).
struct ScheduleParam {
  std::string name;
  int64_t value;
};

struct Schedule {
  GroupKind kind = GroupKind::Pointwise;
  /// The device template that runs the group: "pointwise", "reduce",
  /// "gnWarp", "gnTeam", "wgmmaLinear", "gemmNT", "gemmNN", "conv2d",
  /// "convTranspose2d".
  std::string kernel;
  /// The template's parameters, in the order they print.
  llvm::SmallVector<ScheduleParam, 8> params;
  LaunchShape launch;
  /// The template uses arch-specific features (wgmma): the kernel is
  /// compiled for the target's "a" arch (sm_90a), which runs on that arch
  /// only.
  bool archSpecific = false;
  /// Why, in words, for `kiln plan`: "3 team(s) of 88 block(s) per slice".
  std::string reason;

  /// The value of parameter `name`, which must be present.
  int64_t get(llvm::StringRef name) const;
  /// The value of parameter `name`, or `absent` where it is not set.
  int64_t get(llvm::StringRef name, int64_t absent) const;
  /// Sets parameter `name`, adding it after the others when absent.
  void set(llvm::StringRef name, int64_t value);
  /// "gnTeam vec=4 teamBlocks=88 ...": the template and its parameters.
  std::string templateStr() const;
  /// templateStr() and the launch: "...; grid 264 x block 512, 95232 B
  /// shared, cooperative"
  std::string str() const;
};

} // namespace kiln

#endif
