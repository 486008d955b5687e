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
//  - Contraction: linear or matmul. Where its kernel takes a fused epilogue
//    (PartitionOptions::contractionEpilogue says so: linear on Hopper's
//    tensor cores), the elementwise nodes over its result shape that follow
//    it (L2_37's swish and + bias), then a group_norm of their value whose
//    groups lie in one tile (`norm`), then the elementwise nodes over its
//    shape that read the normalised values (L2_62's leaky_relu and x + x);
//    then, optionally, a tail as a GroupNorm group's: a min, max, sum, mean
//    or logsumexp over the last dims (at least the last) of that last
//    stage's values (L2_75's min over dim 1), and the elementwise nodes
//    after it.
//  - Convolution: conv2d, conv_transpose2d. Where its kernel takes a fused
//    epilogue (contractionEpilogue again: the tensor-core convolution), the
//    elementwise nodes over its result shape that follow it, as a
//    contraction's, unless a group_norm reads their value: its kernel
//    computes them as a prologue as it reads the values it reads anyway,
//    while the convolution's stores do not overlap its products.
//
// Bounds (so that NVRTC's time stays about linear in the graph's size): a
// group reads at most 256 tensors, and its elementwise nodes' compile
// weights (OpInfo::compileWeight, an add is 1, a sigmoid 4) sum to at most
// 1000. A chain beyond that is cut: the value at the cut goes through
// memory and the next group reads it (one more kernel, the same results).
// NVRTC's time grows faster than a kernel's size (2000 add/mul/sigmoid
// nodes in one kernel: 6.2 s; cut into five: 2.1 s in all).
//
// Horizontal fusion: after the above, a pointwise group joins an earlier
// pointwise group of the same result shape that reads a tensor it reads,
// when both are at the same depth (the longest chain of groups feeding
// each; then neither depends on the other) and together they have at most
// 256 parameters (tensors read plus outputs) and 1000 units: 3000 siblings
// y_i = add(x, i) become 12 kernels of up to 255 outputs, not 3000 kernels.
// Siblings at different depths stay apart even when independent.
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

#include <functional>
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
  /// Contraction only: a group_norm of the anchor's result or an epilogue
  /// value, computed in the kernel's epilogue, and the elementwise nodes
  /// after it over its shape (they read its result, each other and values
  /// from outside the group).
  const Node *norm = nullptr;
  std::vector<const Node *> normEpilogue;
  /// GroupNorm: a per-sample min/max of the anchor or an epilogue value;
  /// contraction: a min, max, sum, mean or logsumexp over the last dims of
  /// its last stage's values (normEpilogue's, or without a norm the
  /// epilogue's). Then the elementwise nodes after it (one result shape).
  const Node *tail = nullptr;
  std::vector<const Node *> tailEpilogue;
  std::vector<const Value *> inputs;
  std::vector<const Value *> outputs;

  /// Every node of the group in topological order.
  std::vector<const Node *> nodes() const;
  /// "gn_swish_add": kind then the fused ops, for kernel names.
  std::string describe() const;
  /// "y = linear, z = group_norm": each node's result and op, for plans.
  std::string nodesText() const;
};

struct FusionPlan {
  /// One kernel each, in launch order.
  std::vector<FusionGroup> groups;
  /// Groups whose every output is empty: no kernel.
  std::vector<FusionGroup> empty;
};

struct PartitionOptions {
  /// Whether the kernel of contraction `anchor` runs a fused epilogue of
  /// elementwise nodes, and, when `norm` is given, that group_norm in it
  /// too. Unset: contractions stay alone.
  std::function<bool(const Node &anchor, const Node *norm)> contractionEpilogue;
};

FusionPlan partitionGraph(const Graph &g, const PartitionOptions &opts = {});

/// Whether op `k` is computed elementwise (the Binary and Unary families).
bool isElementwise(OpKind k);

} // namespace kiln

#endif
