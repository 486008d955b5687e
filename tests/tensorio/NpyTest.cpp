#include "Npy.h"
#include "TestUtil.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::test;

namespace {

/// A .npy file built by hand: magic, version, header length, header, data.
std::string npyFile(unsigned major, const std::string &header,
                    const std::string &data) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  out += major == 1 ? le<uint16_t>(header.size()) : le<uint32_t>(header.size());
  return out + header + data;
}

std::string dict(const std::string &descr, const std::string &shape,
                 const std::string &fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }\n";
}

class Npy : public ::testing::Test {
protected:
  /// Writes `bytes` to a file and reads it back.
  llvm::Expected<HostTensor> readBack(const std::string &bytes) {
    writeBytes(path, bytes);
    return readNpy(path);
  }
  std::string err(const std::string &bytes) {
    return errorText(readBack(bytes));
  }

  TempDir dir;
  std::string path = dir.file("t.npy");
};

TEST_F(Npy, RoundTripEveryDTypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {7}, {3, 5}, {2, 0, 3}, {1, 3, 1, 5, 2}};
  for (DType dt :
       {DType::F32, DType::F16, DType::F64, DType::I64, DType::Bool}) {
    for (const auto &shape : shapes) {
      HostTensor t =
          makeTensor(dt, shape, [](int64_t i) { return (i % 5) - 1.5 * i; });
      std::string p = dir.file("rt.npy");
      ASSERT_FALSE(errorText(writeNpy(p, t)).size());
      std::string bytes = readBytes(p);
      // Data starts at a multiple of 64, right after the '\n'.
      size_t dataStart = bytes.size() - t.bytes.size();
      EXPECT_EQ(dataStart % 64, 0u);
      EXPECT_EQ(bytes[dataStart - 1], '\n');
      llvm::Expected<HostTensor> back = readNpy(p);
      ASSERT_TRUE(!!back) << errorText(back.takeError());
      EXPECT_EQ(back->dtype, dt);
      EXPECT_EQ(back->shape, t.shape);
      EXPECT_EQ(back->bytes, t.bytes);
    }
  }
}

TEST_F(Npy, WritesNumPyHeader) {
  std::string p = dir.file("h.npy");
  ASSERT_FALSE(errorText(writeNpy(p, HostTensor(DType::F32, {3}))).size());
  std::string bytes = readBytes(p);
  ASSERT_EQ(bytes.size(), 128u + 12u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(bytes.substr(10, 57),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(bytes.substr(67, 61), std::string(60, ' ') + "\n");
  ASSERT_FALSE(errorText(writeNpy(p, HostTensor(DType::Bool, {}))).size());
  EXPECT_NE(readBytes(p).find("{'descr': '|b1', 'fortran_order': False, "
                              "'shape': (), }"),
            std::string::npos);
}

TEST_F(Npy, LongHeaderUsesVersion2) {
  std::vector<int64_t> shape(30000, 1);
  std::string p = dir.file("v2.npy");
  ASSERT_FALSE(errorText(writeNpy(p, HostTensor(DType::F64, shape))).size());
  std::string bytes = readBytes(p);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 8) % 64, 0u);
  llvm::Expected<HostTensor> back = readNpy(p);
  ASSERT_TRUE(!!back);
  EXPECT_EQ(back->shape.size(), 30000u);
}

TEST_F(Npy, ReadsVersions1To3) {
  std::string data = le<float>(1.5f) + le<float>(-2.0f);
  for (unsigned v : {1u, 2u, 3u}) {
    llvm::Expected<HostTensor> t =
        readBack(npyFile(v, dict("<f4", "(2,)"), data));
    ASSERT_TRUE(!!t) << errorText(t.takeError());
    EXPECT_EQ(t->typeStr(), "f32[2]");
    EXPECT_EQ(t->get(0), 1.5);
    EXPECT_EQ(t->get(1), -2.0);
  }
}

TEST_F(Npy, ReadsOddButValidHeaders) {
  std::string header = "{\"shape\":(2L,1), \"descr\":\"<i8\",\"fortran_order\""
                       ":False}";
  llvm::Expected<HostTensor> t =
      readBack(npyFile(1, header, le<int64_t>(-7) + le<int64_t>(9)));
  ASSERT_TRUE(!!t) << errorText(t.takeError());
  EXPECT_EQ(t->typeStr(), "i64[2, 1]");
  EXPECT_EQ(t->get(0), -7.0);
}

TEST_F(Npy, ByteSwapsBigEndian) {
  std::string be = {0x3f, static_cast<char>(0xc0), 0, 0}; // 1.5f big-endian
  llvm::Expected<HostTensor> t = readBack(npyFile(1, dict(">f4", "()"), be));
  ASSERT_TRUE(!!t) << errorText(t.takeError());
  EXPECT_EQ(t->get(0), 1.5);
  std::string h = {0x3c, 0x00}; // f16 1.0 big-endian
  t = readBack(npyFile(1, dict(">f2", "(1,)"), h));
  ASSERT_TRUE(!!t);
  EXPECT_EQ(t->get(0), 1.0);
  t = readBack(npyFile(1, dict(">i8", "(1,)"), std::string(7, '\0') + "\x05"));
  ASSERT_TRUE(!!t);
  EXPECT_EQ(t->get(0), 5.0);
}

TEST_F(Npy, Errors) {
  std::string f4 = le<float>(1.0f);
  EXPECT_EQ(err("\x93NUMPX\x01\x00"),
            path + ": error: not a .npy file (it does not start with the "
                   "magic string \\x93NUMPY)");
  EXPECT_EQ(err("\x93NUMPY"),
            path + ": error: truncated .npy header (6 bytes in the file)");
  // What a .safetensors file begins with: its header's length, then JSON.
  EXPECT_EQ(err(std::string("\x02\0\0\0\0\0\0\0{}", 10)),
            path + ": error: not a .npy file (it does not start with the "
                   "magic string \\x93NUMPY); it looks like a .safetensors "
                   "file: give it that extension");
  std::string v4 = npyFile(1, dict("<f4", "()"), f4);
  v4[6] = 4;
  EXPECT_EQ(err(v4), path + ": error: unsupported .npy format version 4.0 "
                            "(supported: 1.0, 2.0, 3.0)");
  EXPECT_EQ(err(npyFile(1, dict("<f4", "(2, 2)", "True"), f4 + f4 + f4 + f4)),
            path + ": error: Fortran-order arrays are not supported; save "
                   "with np.ascontiguousarray");
  EXPECT_EQ(err(npyFile(1, dict("<i4", "()"), f4)),
            path + ": error: unsupported dtype '<i4'; supported: '<f4', "
                   "'<f2', '<f8', '<i8', '|b1' and the big-endian '>f4', "
                   "'>f2', '>f8', '>i8' (convert with "
                   "arr.astype(np.float32))");
  EXPECT_EQ(err(npyFile(1, dict("<f4", "(2, 3)"), f4)),
            path + ": error: truncated data: f32[2, 3] needs 24 bytes but "
                   "the file holds 4");
  EXPECT_EQ(err(npyFile(1, dict("<f4", "()"), f4 + "xy")),
            path + ": error: 2 trailing bytes after the data (f32[] needs 4 "
                   "bytes, the file holds 6)");
  EXPECT_EQ(err(npyFile(1, dict("<f4", "()"), f4).substr(0, 20)),
            path + ": error: truncated .npy header: it declares 56 bytes "
                   "but only 10 follow");
}

TEST_F(Npy, MalformedHeaders) {
  EXPECT_EQ(err(npyFile(1, "{'descr' '<f4'}", "")),
            path + ": error: malformed .npy header: expected ':' after key "
                   "'descr' at offset 9, found ''<f4'}'; header is "
                   "\"{'descr' '<f4'}\"");
  EXPECT_EQ(err(npyFile(1, "{'descr': '<f4', 'shape': (2,)}", "")),
            path + ": error: malformed .npy header: the dict must have the "
                   "keys 'descr', 'fortran_order' and 'shape'; header is "
                   "\"{'descr': '<f4', 'shape': (2,)}\"");
  EXPECT_EQ(err(npyFile(1, dict("<f4", "(-2,)"), "")),
            path + ": error: malformed .npy header: expected a non-negative "
                   "integer size in 'shape' at offset 51, found '-2,), }'; "
                   "header is \"{'descr': '<f4', 'fortran_order': False, "
                   "'shape': (-2,), }\"");
  EXPECT_EQ(err(npyFile(1, dict("<f4", "()", "Maybe"), "")),
            path + ": error: malformed .npy header: expected True or False "
                   "for 'fortran_order' at offset 34, found 'Maybe, 'shap'; "
                   "header is \"{'descr': '<f4', 'fortran_order': Maybe, "
                   "'shape': (), }\"");
}

TEST_F(Npy, FileErrors) {
  std::string missing = dir.file("missing.npy");
  EXPECT_EQ(errorText(readNpy(missing)),
            missing + ": error: cannot read file: No such file or directory");
  std::string bad = dir.file("no/such/dir/x.npy");
  EXPECT_EQ(errorText(writeNpy(bad, HostTensor(DType::F32, {1}))),
            bad + ": error: cannot write file: No such file or directory");
  std::string bf = dir.file("bf.npy");
  EXPECT_EQ(errorText(writeNpy(bf, HostTensor(DType::BF16, {1}))),
            bf + ": error: cannot save a bf16 tensor as .npy (NumPy has no "
                 "bfloat16); convert it to f32 or use .safetensors");
}

TEST_F(Npy, OneDimensionalFortranOrderIsAccepted) {
  llvm::Expected<HostTensor> t =
      readBack(npyFile(1, dict("<f8", "(1,)", "True"), le<double>(2.0)));
  ASSERT_TRUE(!!t);
  EXPECT_EQ(t->get(0), 2.0);
}

TEST_F(Npy, OverwritesAtomicallyWithoutLeftovers) {
  HostTensor a = makeTensor(DType::F32, {4}, [](int64_t i) { return i; });
  HostTensor b = makeTensor(DType::F64, {2}, [](int64_t i) { return -i; });
  ASSERT_EQ(errorText(writeNpy(path, a)), "");
  ASSERT_EQ(errorText(writeNpy(path, b)), "");
  llvm::Expected<HostTensor> back = readNpy(path);
  ASSERT_TRUE(!!back);
  EXPECT_EQ(back->typeStr(), "f64[2]");
  EXPECT_EQ(back->bytes, b.bytes);
  std::error_code ec;
  int files = 0;
  llvm::SmallString<256> parent(path);
  llvm::sys::path::remove_filename(parent);
  for (llvm::sys::fs::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1);
}

} // namespace

// A device is written in place, not replaced by a renamed file, and a
// failed write says why.
TEST(NpyDevices, WritesToDevicesInPlaceAndReportsAFullOne) {
  HostTensor t(DType::F32, {3, 2});
  for (const char *dev : {"/dev/null", "/dev/full"}) {
    llvm::sys::fs::file_status before;
    if (llvm::sys::fs::status(dev, before) ||
        before.type() != llvm::sys::fs::file_type::character_file)
      GTEST_SKIP() << dev << " is not a character device here";
  }
  EXPECT_FALSE(static_cast<bool>(writeNpy("/dev/null", t)));
  llvm::Error full = writeNpy("/dev/full", t);
  ASSERT_TRUE(static_cast<bool>(full));
  EXPECT_EQ(errorToString(std::move(full)),
            "/dev/full: error: cannot write file: No space left on device");
  for (const char *dev : {"/dev/null", "/dev/full"}) {
    llvm::sys::fs::file_status after;
    ASSERT_FALSE(llvm::sys::fs::status(dev, after));
    EXPECT_EQ(after.type(), llvm::sys::fs::file_type::character_file) << dev;
  }
}
