//===- SafetensorsLayoutTest.cpp - Tensors fill the data buffer exactly ---===//
//
// The format requires the tensors' byte ranges to cover the data buffer
// contiguously: no overlap, no hole between tensors or before the first,
// no bytes after the last.
//
//===----------------------------------------------------------------------===//
#include "Safetensors.h"
#include "TestUtil.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

class SafetensorsLayout : public ::testing::Test {
protected:
  /// Reads a file of `header` and `dataBytes` zero bytes.
  llvm::Expected<SafetensorsFile> read(const std::string &header,
                                       size_t dataBytes) {
    writeBytes(path, le<uint64_t>(header.size()) + header +
                         std::string(dataBytes, '\0'));
    return readSafetensors(path);
  }
  std::string err(const std::string &header, size_t dataBytes) {
    return errorText(read(header, dataBytes));
  }

  TempDir dir;
  std::string path = dir.file("p.safetensors");
};

TEST_F(SafetensorsLayout, HoleBetweenTensorsIsRefused) {
  EXPECT_EQ(err(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                16),
            path + ": error: a hole of 4 bytes in the data buffer between "
                   "tensors 'a' [0, 8] and 'b' [12, 16]; the format requires "
                   "the tensors to fill it without gaps");
}

TEST_F(SafetensorsLayout, HoleBeforeTheFirstTensorIsRefused) {
  EXPECT_EQ(err(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
            path + ": error: a hole of 4 bytes at the start of the data "
                   "buffer: the first tensor, 'w', has data_offsets [4, 8]; "
                   "the format requires the tensors to fill the buffer from "
                   "offset 0 without gaps");
}

TEST_F(SafetensorsLayout, BytesAfterTheLastTensorAreRefused) {
  EXPECT_EQ(err(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 7),
            path + ": error: 3 bytes at the end of the data buffer of 7 bytes "
                   "belong to no tensor (the last, 'w', ends at 4); the "
                   "format requires the tensors to fill the buffer exactly");
  EXPECT_EQ(err("{}", 2),
            path + ": error: 2 bytes at the end of the data buffer of 2 bytes "
                   "belong to no tensor; the format requires the tensors to "
                   "fill the buffer exactly");
}

TEST_F(SafetensorsLayout, OffsetOrderNeedNotBeNameOrder) {
  // 'b' first in the buffer, empty tensors anywhere: a valid layout.
  llvm::Expected<SafetensorsFile> f =
      read(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},)"
           R"("b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
           R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
           12);
  ASSERT_TRUE(!!f) << errorText(f.takeError());
  EXPECT_EQ(f->tensors.size(), 3u);
}

TEST_F(SafetensorsLayout, WriterPacksTheTensorsWithoutHoles) {
  std::vector<std::pair<std::string, HostTensor>> in;
  in.emplace_back("z", HostTensor(DType::F64, {3}));
  in.emplace_back("empty", HostTensor(DType::F32, {0, 4}));
  in.emplace_back("a", HostTensor(DType::Bool, {5}));
  in.emplace_back("m", HostTensor(DType::BF16, {2, 3}));
  ASSERT_EQ(errorText(writeSafetensors(path, in)), "");
  std::string bytes = readBytes(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto &[name, v] : header.items())
    ranges.emplace_back(v["data_offsets"][0], v["data_offsets"][1]);
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (const auto &[begin, end] : ranges) {
    EXPECT_EQ(begin, at);
    at = end;
  }
  EXPECT_EQ(at, bytes.size() - 8 - n);
  EXPECT_EQ(at, 24u + 5 + 12);
  llvm::Expected<SafetensorsFile> back = readSafetensors(path);
  EXPECT_TRUE(!!back) << errorText(back.takeError());
}

} // namespace
