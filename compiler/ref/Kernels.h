//===- Kernels.h - Float64 reference kernels -------------------*- C++ -*-===//
//
// The loops behind the reference evaluation of each op family (see
// OpInfo::eval, registered in compiler/ops/<Family>.cpp). They know nothing
// of the graph: callers pass the result dtype and sizes the node's type
// gives. Every kernel computes in double and follows PyTorch's semantics;
// operands are assumed valid (the shape rules have checked them).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_REF_KERNELS_H
#define KILN_REF_KERNELS_H

#include "ref/RefTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln::ref {

// --- Elementwise and reductions (KernelsElementwise.cpp) -------------------

/// Strides that read a tensor of `sizes` broadcast to `outSizes` (aligned on
/// the right, as PyTorch does): 0 for broadcast dims and for the leading
/// dims `sizes` lacks.
llvm::SmallVector<int64_t, 6>
broadcastStrides(llvm::ArrayRef<int64_t> sizes,
                 llvm::ArrayRef<int64_t> outSizes);

/// f applied to each element of x.
RefTensor mapUnary(const RefTensor &x, DType dt,
                   llvm::function_ref<double(double)> f);

/// f applied to the broadcast pairs of a and b; the result has `outSizes`.
RefTensor mapBinary(const RefTensor &a, const RefTensor &b, DType dt,
                    llvm::ArrayRef<int64_t> outSizes,
                    llvm::function_ref<double(double, double)> f);

/// f applied to every slice of x over the sorted `dims` (dims past x's rank
/// are ignored, so a rank-0 x is one slice); the results, in row-major
/// order of the kept dims, fill a tensor of `outSizes`.
RefTensor reduceSlices(const RefTensor &x, llvm::ArrayRef<int64_t> dims,
                       DType dt, llvm::ArrayRef<int64_t> outSizes,
                       llvm::function_ref<double(llvm::ArrayRef<double>)> f);

/// An accurate sum (Neumaier's compensated summation; the plain sum when
/// that is not finite, so infinities and NaN behave as IEEE says).
double sum(llvm::ArrayRef<double> v);

// --- Contractions (KernelsLinalg.cpp) ---------------------------------------

/// torch.matmul: 1-D operands gain (and lose) a unit dim, batch dims
/// broadcast.
RefTensor matmul(const RefTensor &a, const RefTensor &b, DType dt,
                 llvm::ArrayRef<int64_t> outSizes);

/// torch.nn.functional.linear: x [..., in] · w[out, in]ᵀ + bias[out].
RefTensor linear(const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                 DType dt, llvm::ArrayRef<int64_t> outSizes);

// --- Convolutions (KernelsConv.cpp) -----------------------------------------

struct ConvParams {
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};

/// torch.nn.functional.conv2d; x is [N, C, H, W] or unbatched [C, H, W],
/// w is [Cout, Cin/groups, kH, kW].
RefTensor conv2d(const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                 const ConvParams &p, DType dt,
                 llvm::ArrayRef<int64_t> outSizes);

/// torch.nn.functional.conv_transpose2d; w is [Cin, Cout/groups, kH, kW].
/// `outSizes` (which includes output_padding) fixes the output extent.
RefTensor convTranspose2d(const RefTensor &x, const RefTensor &w,
                          const RefTensor *bias, const ConvParams &p, DType dt,
                          llvm::ArrayRef<int64_t> outSizes);

// --- Normalisation (KernelsNorm.cpp) ----------------------------------------

/// torch.nn.functional.group_norm on x [N, C, *]: statistics per sample and
/// group over (C/groups x spatial), biased variance, then the per-channel
/// affine step with the optional weight and bias.
RefTensor groupNorm(const RefTensor &x, const RefTensor *weight,
                    const RefTensor *bias, int64_t groups, double eps,
                    DType dt);

} // namespace kiln::ref

#endif
