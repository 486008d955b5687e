//===- KernelsLinalg.cpp - matmul and linear ------------------------------===//
#include "ref/Kernels.h"
#include "ref/Parallel.h"

#include <cassert>

namespace kiln::ref {

namespace {
/// C[m, n] = sum_k A[m, k] * B[k, n] for row-major blocks at the pointers.
void gemm(const double *a, const double *b, double *c, int64_t m, int64_t n,
          int64_t k) {
  parallelFor(m, double(m) * n * k, [&](int64_t begin, int64_t end) {
    std::vector<double> products(k);
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t l = 0; l < k; ++l)
          products[l] = a[i * k + l] * b[l * n + j];
        c[i * n + j] = sum(products);
      }
  });
}
} // namespace

RefTensor matmul(const RefTensor &a, const RefTensor &b, DType dt,
                 llvm::ArrayRef<int64_t> outSizes) {
  llvm::SmallVector<int64_t, 6> sa(a.shape), sb(b.shape);
  if (sa.size() == 1)
    sa.insert(sa.begin(), 1);
  if (sb.size() == 1)
    sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  assert(sb[sb.size() - 2] == k && "matmul inner dims differ");
  llvm::ArrayRef<int64_t> batchA = llvm::ArrayRef<int64_t>(sa).drop_back(2);
  llvm::ArrayRef<int64_t> batchB = llvm::ArrayRef<int64_t>(sb).drop_back(2);
  llvm::SmallVector<int64_t, 6> batch(std::max(batchA.size(), batchB.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    size_t fromEnd = batch.size() - i;
    int64_t da = fromEnd <= batchA.size() ? batchA[batchA.size() - fromEnd] : 1;
    int64_t db = fromEnd <= batchB.size() ? batchB[batchB.size() - fromEnd] : 1;
    batch[i] = da == 1 ? db : da; // as broadcasting: 0 against 1 is 0
  }
  // Each batch entry of A and B, read through broadcast strides in units of
  // whole matrices.
  auto stA = broadcastStrides(batchA, batch),
       stB = broadcastStrides(batchB, batch);
  RefTensor out(dt, outSizes);
  int64_t numBatch = RefTensor::numElements(batch);
  assert(out.numel() == numBatch * m * n && "matmul result size mismatch");
  llvm::SmallVector<int64_t, 6> strides = RefTensor::stridesOf(batch);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    int64_t offA = 0, offB = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      int64_t idx = (bi / strides[d]) % batch[d];
      offA += idx * stA[d];
      offB += idx * stB[d];
    }
    gemm(a.data.data() + offA * m * k, b.data.data() + offB * k * n,
         out.data.data() + bi * m * n, m, n, k);
  }
  return out;
}

RefTensor linear(const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                 DType dt, llvm::ArrayRef<int64_t> outSizes) {
  int64_t in = w.shape[1], outF = w.shape[0];
  int64_t rows = 1; // every dim of x but the last (which may be 0)
  for (size_t d = 0; d + 1 < x.shape.size(); ++d)
    rows *= x.shape[d];
  RefTensor out(dt, outSizes);
  assert(out.numel() == rows * outF && "linear result size mismatch");
  parallelFor(rows, double(rows) * outF * in, [&](int64_t begin, int64_t end) {
    std::vector<double> products(in + 1);
    for (int64_t r = begin; r < end; ++r)
      for (int64_t o = 0; o < outF; ++o) {
        for (int64_t i = 0; i < in; ++i)
          products[i] = x.data[r * in + i] * w.data[o * in + i];
        products[in] = bias ? bias->data[o] : 0.0;
        out.data[r * outF + o] = sum(products);
      }
  });
  return out;
}

} // namespace kiln::ref
