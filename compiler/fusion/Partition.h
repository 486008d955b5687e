//===- Partition.h - The fusion partitioner --------------------*- C++ -*-===//
//
// partitionGraph splits a verified, specialised graph (static shapes) into
// fusion groups, each of which becomes one kernel:
//
//  - Pointwise: elementwise nodes of one result shape (operands may
//    broadcast into it). A value used by several nodes of the group is
//    computed once per element.
//  - Reduction: min/max/sum/mean/logsumexp, with the elementwise nodes that
//    compute its input as a prologue (when nothing else reads them) and the
//    elementwise nodes over its result shape as an epilogue.
//  - GroupNorm: group_norm with a prologue as above and an epilogue of
//    elementwise nodes over its shape (L2_62's leaky_relu and x + x); then,
//    optionally, a tail: a min or max of a GroupNorm value over every dim but
//    the batch (L2_75's min over dim 1), and elementwise nodes over one shape
//    that read the tail's result, other inputs and literals only (L2_75's
//    broadcast + bias).
//  - Contraction / Convolution: linear, matmul, conv2d, conv_transpose2d,
//    alone for now.
//
// A group whose every output has no elements (PyTorch's result is an empty
// tensor, e.g. a batch of 0) needs no kernel: it is listed in `empty`, not
// in `groups`, and the kernels that read its outputs read no element of them.
//
// Contract: every node lands in exactly one group (of either list); groups
// are listed in an order that respects every data dependency; a group's
// outputs are the values it defines that a later group or the graph's
// outputs read, and its inputs are the tensors (never literals) it reads
// from memory. Fusion never changes a result: each fused node is computed by
// the same expression on the same operands as it would be alone.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FUSION_PARTITION_H
#define KILN_FUSION_PARTITION_H

#include "IR/Graph.h"

#include <string>
#include <vector>

namespace kiln {

enum class GroupKind : uint8_t {
  Pointwise,
  Reduction,
  GroupNorm,
  Contraction,
  Convolution
};
llvm::StringRef groupKindName(GroupKind k);

struct FusionGroup {
  GroupKind kind = GroupKind::Pointwise;
  /// Elementwise nodes computing the anchor's input (or, for a pointwise
  /// group, all of its nodes), in topological order.
  std::vector<const Node *> prologue;
  /// The reduction, group_norm, contraction or convolution; null for
  /// pointwise groups.
  const Node *anchor = nullptr;
  /// Elementwise nodes over the anchor's result shape, in order.
  std::vector<const Node *> epilogue;
  /// GroupNorm only: a per-sample min/max of the anchor or an epilogue
  /// value, and the elementwise nodes after it (one result shape).
  const Node *tail = nullptr;
  std::vector<const Node *> tailEpilogue;
  std::vector<const Value *> inputs;
  std::vector<const Value *> outputs;

  /// Every node of the group in topological order.
  std::vector<const Node *> nodes() const;
  /// "gn_swish_add": kind then the fused ops, for kernel names.
  std::string describe() const;
};

struct FusionPlan {
  /// One kernel each, in launch order.
  std::vector<FusionGroup> groups;
  /// Groups whose every output is empty: no kernel.
  std::vector<FusionGroup> empty;
};

FusionPlan partitionGraph(const Graph &g);

/// Whether op `k` is computed elementwise (the Binary and Unary families).
bool isElementwise(OpKind k);

} // namespace kiln

#endif
