#include "Safetensors.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::test;

namespace {

std::string stFile(const std::string &header, const std::string &data) {
  return le<uint64_t>(header.size()) + header + data;
}

class Safetensors : public ::testing::Test {
protected:
  llvm::Expected<SafetensorsFile> readBack(const std::string &bytes) {
    writeBytes(path, bytes);
    return readSafetensors(path);
  }
  std::string err(const std::string &bytes) {
    return errorText(readBack(bytes));
  }
  std::string err(const std::string &header, size_t dataBytes) {
    return err(stFile(header, std::string(dataBytes, '\0')));
  }

  TempDir dir;
  std::string path = dir.file("p.safetensors");
};

TEST_F(Safetensors, RoundTrip) {
  std::vector<std::pair<std::string, HostTensor>> in;
  int k = 0;
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                   DType::Bool})
    in.emplace_back(
        "t" + std::to_string(5 - k++),
        makeTensor(dt, {2, 3}, [](int64_t i) { return 0.5 * i - 1; }));
  in.emplace_back("scalar",
                  makeTensor(DType::F32, {}, [](int64_t) { return 3.25; }));
  in.emplace_back("empty", HostTensor(DType::F16, {0, 4}));
  std::map<std::string, std::string> meta = {{"format", "pt"}, {"k", "v"}};
  std::string p = dir.file("rt.safetensors");
  ASSERT_EQ(errorText(writeSafetensors(p, in, meta)), "");
  std::string bytes = readBytes(p);
  uint64_t n = *reinterpret_cast<const uint64_t *>(bytes.data());
  EXPECT_EQ(n % 8, 0u);
  llvm::Expected<SafetensorsFile> f = readSafetensors(p);
  ASSERT_TRUE(!!f) << errorText(f.takeError());
  EXPECT_EQ(f->metadata, meta);
  ASSERT_EQ(f->tensors.size(), in.size());
  EXPECT_EQ(f->tensors[0].first, "empty"); // name order
  for (const auto &[name, t] : in) {
    const HostTensor *got = f->find(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(got->dtype, t.dtype);
    EXPECT_EQ(got->shape, t.shape);
    EXPECT_EQ(got->bytes, t.bytes);
  }
  EXPECT_EQ(f->find("nope"), nullptr);
}

TEST_F(Safetensors, WritesPackedNameOrderedHeader) {
  std::vector<std::pair<std::string, HostTensor>> in;
  in.emplace_back("b", HostTensor(DType::F32, {2}));
  in.emplace_back("a", HostTensor(DType::F16, {1}));
  std::string p = dir.file("h.safetensors");
  ASSERT_EQ(errorText(writeSafetensors(p, in)), "");
  std::string header =
      R"({"a":{"data_offsets":[0,2],"dtype":"F16","shape":[1]},)"
      R"("b":{"data_offsets":[2,10],"dtype":"F32","shape":[2]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  EXPECT_EQ(readBytes(p), stFile(header, std::string(10, '\0')));
}

TEST_F(Safetensors, ReadsHandMadeFile) {
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("w":{"dtype":"BF16","shape":[2],)"
                       R"("data_offsets":[0,4]}})";
  std::string data = {static_cast<char>(0x80), 0x3f, 0x20,
                      static_cast<char>(0xc0)};
  llvm::Expected<SafetensorsFile> f = readBack(stFile(header, data));
  ASSERT_TRUE(!!f) << errorText(f.takeError());
  const HostTensor *w = f->find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->typeStr(), "bf16[2]");
  EXPECT_EQ(w->get(0), 1.0);
  EXPECT_EQ(w->get(1), -2.5);
  EXPECT_EQ(f->metadata.at("format"), "pt");
}

TEST_F(Safetensors, HeaderErrors) {
  EXPECT_EQ(err("abc"), path + ": error: file too short for safetensors (3 "
                               "bytes; the 8-byte header length is missing)");
  EXPECT_EQ(err(le<uint64_t>(1ULL << 40) + "{}"),
            path + ": error: header length 1099511627776 is absurd (over "
                   "100 MB); this is not a safetensors file");
  EXPECT_EQ(err(le<uint64_t>(100) + "{}"),
            path + ": error: header length 100 runs past the end of the "
                   "file (10 bytes); the file is truncated or not "
                   "safetensors");
  EXPECT_EQ(err(stFile("{\"w\": [1,}", "")),
            path + ": error: invalid JSON in the safetensors header: "
                   "[json.exception.parse_error.101] parse error at line 1, "
                   "column 10: syntax error while parsing value - unexpected "
                   "'}'; expected '[', '{', or a literal");
  EXPECT_EQ(err(stFile("[1]", "")),
            path + ": error: the safetensors header is not a JSON object");
  EXPECT_EQ(err(R"({"__metadata__":{"a":1}})", 0),
            path + ": error: '__metadata__' must map strings to strings");
}

TEST_F(Safetensors, EntryErrors) {
  EXPECT_EQ(err(R"({"w":5})", 0),
            path + ": error: tensor 'w': entry is not a JSON object");
  EXPECT_EQ(err(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4),
            path + ": error: tensor 'w': missing or invalid field 'dtype' "
                   "(expected a string such as \"F32\")");
  EXPECT_EQ(
      err(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
      path + ": error: tensor 'w': missing or invalid field 'shape' "
             "(expected a list of non-negative integers)");
  EXPECT_EQ(err(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4),
            path + ": error: tensor 'w': missing or invalid field "
                   "'data_offsets' (expected [begin, end] with 0 <= begin "
                   "<= end)");
  EXPECT_EQ(err(R"({"w":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})", 4),
            path + ": error: tensor 'w': unsupported dtype 'I32'; "
                   "supported: F32, F16, BF16, F64, I64, BOOL");
}

TEST_F(Safetensors, LayoutErrors) {
  EXPECT_EQ(
      err(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20),
      path + ": error: tensor 'w': f32[2, 3] needs 24 bytes but "
             "data_offsets [0, 20] span 20");
  EXPECT_EQ(
      err(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", 16),
      path + ": error: tensor 'w': data_offsets [0, 24] lie outside the "
             "data buffer of 16 bytes (is the file truncated?)");
  EXPECT_EQ(err(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                R"("b":{"dtype":"F16","shape":[4],"data_offsets":[12,20]}})",
                20),
            path + ": error: tensors 'a' and 'b' overlap in the data buffer "
                   "([0, 16] and [12, 20])");
  EXPECT_EQ(err(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                8),
            path + ": error: duplicate tensor name 'w' in the header");
}

TEST_F(Safetensors, TruncatedWrittenFile) {
  std::vector<std::pair<std::string, HostTensor>> in;
  in.emplace_back("w", HostTensor(DType::F64, {4}));
  std::string p = dir.file("t.safetensors");
  ASSERT_EQ(errorText(writeSafetensors(p, in)), "");
  std::string bytes = readBytes(p);
  EXPECT_EQ(err(bytes.substr(0, bytes.size() - 1)),
            path + ": error: tensor 'w': data_offsets [0, 32] lie outside "
                   "the data buffer of 31 bytes (is the file truncated?)");
}

TEST_F(Safetensors, WriteErrors) {
  std::vector<std::pair<std::string, HostTensor>> in;
  in.emplace_back("w", HostTensor(DType::F32, {1}));
  in.emplace_back("w", HostTensor(DType::F32, {2}));
  std::string p = dir.file("d.safetensors");
  EXPECT_EQ(errorText(writeSafetensors(p, in)),
            p + ": error: cannot write tensor 'w': the name is duplicated");
  EXPECT_FALSE(llvm::sys::fs::exists(p));
  in.pop_back();
  std::string bad = dir.file("missing/x.safetensors");
  EXPECT_EQ(errorText(writeSafetensors(bad, in)),
            bad + ": error: cannot write file: No such file or directory");
}

} // namespace
