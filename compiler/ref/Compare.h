//===- Compare.h - Comparing results with a reference ----------*- C++ -*-===//
#ifndef KILN_REF_COMPARE_H
#define KILN_REF_COMPARE_H

#include "ref/RefTensor.h"

#include <string>

namespace kiln {

struct Comparison {
  bool shapeMatches = true;
  int64_t mismatches = 0;    // elements outside tolerance (NaN vs non-NaN too)
  double maxAbsError = 0;    // over elements where both are finite
  double relError = 0;       // ||got - want|| / ||want|| over finite elements
  std::string firstMismatch; // "at [1, 2]: got 0.5, want 0.25"
  bool ok() const { return shapeMatches && mismatches == 0; }
};

/// Compares element by element: NaN must meet NaN, an infinity the same
/// infinity, and finite values |got - want| <= atol + rtol * |want|.
Comparison compareTensors(const RefTensor &got, const RefTensor &want,
                          double rtol, double atol);

} // namespace kiln

#endif
