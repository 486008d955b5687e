#include "IR/FloatBits.h"

#include <bit>
#include <cmath>
#include <limits>

namespace kiln {

namespace {

/// A binary floating-point format with a sign bit, `expBits` exponent bits
/// and `manBits` stored mantissa bits.
struct Format {
  int expBits;
  int manBits;
  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint32_t expMask() const { return (1u << expBits) - 1; }
  uint32_t infBits() const { return expMask() << manBits; }
  uint32_t signBit() const { return 1u << (expBits + manBits); }
};

constexpr Format kHalf{5, 10};
constexpr Format kBFloat16{8, 7};
constexpr Format kFloat{8, 23};

/// Rounds m * 2^-shift to an integer, ties to even.
uint64_t roundShift(uint64_t m, int shift) {
  if (shift <= 0)
    return m;
  if (shift > 63)
    return 0;
  uint64_t q = m >> shift;
  uint64_t rem = m & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return q;
}

/// Encodes a finite, nonzero, normal double's magnitude in `f`.
uint32_t encodeMagnitude(uint64_t bits, Format f) {
  int exp = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  uint64_t m = (bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);
  int biased = exp + f.bias();
  if (biased >= static_cast<int>(f.expMask()))
    return f.infBits();
  // Normal results keep manBits + 1 significant bits; subnormal ones lose
  // one more bit for every step their exponent lies below the minimum.
  int shift = 52 - f.manBits + (biased <= 0 ? 1 - biased : 0);
  uint64_t q = roundShift(m, shift);
  // A rounding carry moves into the exponent field, which is the correct
  // encoding (and gives infinity past the largest finite value).
  uint64_t enc = (biased <= 0 ? 0 : uint64_t(biased - 1) << f.manBits) + q;
  return enc >= f.infBits() ? f.infBits() : static_cast<uint32_t>(enc);
}

uint32_t encode(double v, Format f) {
  uint64_t bits = std::bit_cast<uint64_t>(v);
  uint32_t sign = (bits >> 63) ? f.signBit() : 0;
  if (std::isnan(v))
    return sign | f.infBits() | (1u << (f.manBits - 1));
  if (std::isinf(v))
    return sign | f.infBits();
  if (((bits >> 52) & 0x7ff) == 0) // zero or double subnormal: underflows
    return sign;
  return sign | encodeMagnitude(bits, f);
}

double decode(uint32_t bits, Format f) {
  bool negative = bits & f.signBit();
  uint32_t exp = (bits >> f.manBits) & f.expMask();
  uint32_t man = bits & ((1u << f.manBits) - 1);
  double mag;
  if (exp == f.expMask())
    mag = man ? std::numeric_limits<double>::quiet_NaN()
              : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    mag = std::ldexp(static_cast<double>(man), 1 - f.bias() - f.manBits);
  else
    mag = std::ldexp(static_cast<double>(man | (1u << f.manBits)),
                     static_cast<int>(exp) - f.bias() - f.manBits);
  return negative ? -mag : mag;
}

} // namespace

uint16_t doubleToHalf(double v) {
  return static_cast<uint16_t>(encode(v, kHalf));
}

double halfToDouble(uint16_t bits) { return decode(bits, kHalf); }

uint16_t doubleToBFloat16(double v) {
  return static_cast<uint16_t>(encode(v, kBFloat16));
}

double bfloat16ToDouble(uint16_t bits) { return decode(bits, kBFloat16); }

float doubleToFloat(double v) {
  return std::bit_cast<float>(encode(v, kFloat));
}

} // namespace kiln
