//===- FloatBits.h - Exact float16/bfloat16/float32 conversion -*- C++ -*-===//
//
// Conversions between double and the IEEE-style narrow formats, written out
// bit by bit so that no CUDA header is needed. Encoding rounds once, from
// double, to nearest with ties to even; overflow gives infinity, tiny values
// become subnormals or signed zero, NaN stays NaN (quiet, sign kept).
// Decoding is exact.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_FLOATBITS_H
#define KILN_IR_FLOATBITS_H

#include <cstdint>

namespace kiln {

uint16_t doubleToHalf(double v);
double halfToDouble(uint16_t bits);
uint16_t doubleToBFloat16(double v);
double bfloat16ToDouble(uint16_t bits);
/// Like static_cast<float>, but defined for every input (overflow is inf).
float doubleToFloat(double v);

} // namespace kiln

#endif
