#include "IR/FloatBits.h"
#include "HostTensor.h"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <random>

using namespace kiln;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Half, KnownValues) {
  EXPECT_EQ(doubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalf(-2.5), 0xC100);
  EXPECT_EQ(doubleToHalf(65504.0), 0x7BFF);
  EXPECT_EQ(doubleToHalf(65519.99), 0x7BFF);
  EXPECT_EQ(doubleToHalf(65520.0), 0x7C00); // tie rounds up to inf
  EXPECT_EQ(doubleToHalf(1e10), 0x7C00);
  EXPECT_EQ(doubleToHalf(-1e10), 0xFC00);
  EXPECT_EQ(doubleToHalf(kInf), 0x7C00);
  EXPECT_EQ(doubleToHalf(-kInf), 0xFC00);
  EXPECT_EQ(doubleToHalf(0.0), 0x0000);
  EXPECT_EQ(doubleToHalf(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -14)), 0x0400); // smallest normal
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(doubleToHalf(std::ldexp(1023.0, -24)), 0x03FF);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -25)), 0x0000); // tie to even 0
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0000001, -25)), 0x0001);
  EXPECT_EQ(doubleToHalf(std::ldexp(3.0, -25)), 0x0002); // tie to even 2
  EXPECT_EQ(doubleToHalf(-std::ldexp(1.0, -30)), 0x8000);
  EXPECT_EQ(doubleToHalf(std::numeric_limits<double>::denorm_min()), 0);
}

TEST(Half, RoundsToNearestEvenOnce) {
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(3.0, -11)), 0x3C02);
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)),
            0x3C01);
  // Through float this would round twice (to 1 + 2^-11, then to 1.0).
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
            0x3C01);
  EXPECT_EQ(doubleToHalf(2047.5), doubleToHalf(2048.0)); // ulp is 2 here
}

TEST(Half, NaN) {
  uint16_t h = doubleToHalf(kNaN);
  EXPECT_EQ(h & 0x7C00, 0x7C00);
  EXPECT_NE(h & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(halfToDouble(h)));
  EXPECT_TRUE(std::isnan(halfToDouble(0xFE01)));
}

TEST(Half, DecodesExactly) {
  EXPECT_EQ(halfToDouble(0x3C00), 1.0);
  EXPECT_EQ(halfToDouble(0xC100), -2.5);
  EXPECT_EQ(halfToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(halfToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(halfToDouble(0x3555), 0.333251953125);
  EXPECT_EQ(halfToDouble(0x7C00), kInf);
  EXPECT_EQ(halfToDouble(0xFC00), -kInf);
  EXPECT_TRUE(std::signbit(halfToDouble(0x8000)));
}

/// Every finite value round-trips, and the midpoint of each pair of
/// neighbours rounds to the one with an even mantissa.
template <typename Enc, typename Dec>
void checkExhaustive(Enc encode, Dec decode, uint16_t inf) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t m = 0; m < inf; ++m) {
      uint16_t bits = static_cast<uint16_t>(sign | m);
      double v = decode(bits);
      ASSERT_EQ(encode(v), bits) << std::hex << bits;
      double next = decode(static_cast<uint16_t>(bits + 1));
      uint16_t even = (m & 1) ? static_cast<uint16_t>(bits + 1) : bits;
      ASSERT_EQ(encode((v + next) / 2), even) << std::hex << bits;
    }
  }
}

TEST(Half, Exhaustive) { checkExhaustive(doubleToHalf, halfToDouble, 0x7C00); }

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(doubleToBFloat16(1.0), 0x3F80);
  EXPECT_EQ(doubleToBFloat16(-2.5), 0xC020);
  EXPECT_EQ(doubleToBFloat16(3.0), 0x4040);
  EXPECT_EQ(bfloat16ToDouble(0x7F7F), 3.3895313892515355e38);
  EXPECT_EQ(doubleToBFloat16(3.3895313892515355e38), 0x7F7F);
  EXPECT_EQ(doubleToBFloat16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(doubleToBFloat16(std::ldexp(1.0, -133)), 0x0001);
  EXPECT_EQ(bfloat16ToDouble(0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(doubleToBFloat16(std::ldexp(1.0, -134)), 0x0000);
  EXPECT_EQ(doubleToBFloat16(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(doubleToBFloat16(1.0 + std::ldexp(3.0, -8)), 0x3F82);
  EXPECT_EQ(doubleToBFloat16(-kInf), 0xFF80);
  uint16_t nan = doubleToBFloat16(kNaN);
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x7F, 0);
}

TEST(BFloat16, Exhaustive) {
  checkExhaustive(doubleToBFloat16, bfloat16ToDouble, 0x7F80);
}

TEST(Float, MatchesHardwareConversion) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    double v = std::bit_cast<double>(rng());
    if (std::isnan(v))
      continue;
    ASSERT_EQ(std::bit_cast<uint32_t>(doubleToFloat(v)),
              std::bit_cast<uint32_t>(static_cast<float>(v)))
        << v;
  }
  EXPECT_EQ(doubleToFloat(1e300), std::numeric_limits<float>::infinity());
  EXPECT_EQ(doubleToFloat(std::ldexp(1.0, -149)),
            std::numeric_limits<float>::denorm_min());
  EXPECT_TRUE(std::isnan(doubleToFloat(kNaN)));
}

TEST(HostTensor, RefRoundTripEveryDType) {
  RefTensor r(DType::F64, {2, 3});
  r.data = {1.0, -2.5, 0.0, 3.0, 65504.0, 1.0 + std::ldexp(1.0, -11)};
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                   DType::Bool}) {
    HostTensor h = fromRef(r, dt);
    EXPECT_EQ(h.bytes.size(), 6u * dtypeSize(dt));
    RefTensor back = toRef(h);
    EXPECT_EQ(back.dtype, dt);
    EXPECT_EQ(back.shape, r.shape);
    EXPECT_EQ(back.data[1], dt == DType::I64    ? -2.0
                            : dt == DType::Bool ? 1.0
                                                : -2.5);
    EXPECT_EQ(back.data[2], 0.0);
  }
  EXPECT_EQ(toRef(fromRef(r, DType::F16)).data[5], 1.0);
  EXPECT_EQ(toRef(fromRef(r, DType::BF16)).data[4], 65536.0);
}

TEST(HostTensor, IntAndBoolConversion) {
  RefTensor r(DType::F64, {5});
  r.data = {kNaN, 1e300, -1e300, -3.7, 0.0};
  RefTensor i = toRef(fromRef(r, DType::I64));
  EXPECT_EQ(i.data[0], 0.0);
  EXPECT_EQ(i.data[1], 9223372036854775807.0);
  EXPECT_EQ(i.data[2], -9223372036854775808.0);
  EXPECT_EQ(i.data[3], -3.0);
  RefTensor b = toRef(fromRef(r, DType::Bool));
  EXPECT_EQ(b.data, (std::vector<double>{1, 1, 1, 1, 0}));
}

TEST(HostTensor, TypeStrAndScalars) {
  HostTensor s(DType::F32, {});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.typeStr(), "f32[]");
  HostTensor e(DType::BF16, {3, 0});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.bytes.empty());
  EXPECT_EQ(e.typeStr(), "bf16[3, 0]");
  EXPECT_FALSE(checkedByteSize(DType::F64, {1LL << 40, 1LL << 40}));
  EXPECT_FALSE(checkedByteSize(DType::F64, {-1}));
  EXPECT_EQ(*checkedByteSize(DType::F16, {3, 5}), 30u);
}

} // namespace
