//===- StreamTest.cpp - Tensor, graph and archive files from pipes --------===//
//
// A pipe or device is read as far as its header says and no further: one
// in the wrong format is refused after its first bytes, one that goes on
// past its announced end is refused, and a valid file read through a pipe
// gives what the same file gives. Each stream is a FIFO fed from a thread
// that counts what it wrote (FifoFeeder.h).
//
//===----------------------------------------------------------------------===//
#include "CacheArchive.h"
#include "FifoFeeder.h"
#include "Npy.h"
#include "Parser.h"
#include "Safetensors.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::test;

namespace {

/// More than any reader here should take: before the readers looked at
/// headers, they read all of it.
constexpr uint64_t kEndless = uint64_t(64) << 20;
/// What a writer gets rid of while the reader takes a few KiB: the pipe's
/// buffer (64 KiB), one read of up to 64 KiB past an announced end, and
/// slack.
constexpr uint64_t kFew = uint64_t(256) << 10;

/// A .npy version 1.0 header for the dict `dict`, padded to 64 bytes.
std::string npyHeader(const std::string &dict) {
  std::string text = dict;
  text.append((64 - (10 + text.size() + 1) % 64) % 64, ' ');
  text += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + le<uint16_t>(text.size()) + text;
}

class Streams : public ::testing::Test {
protected:
  /// The error reading `bytes` from a regular file gives, written as if
  /// about the FIFO.
  template <typename Read>
  std::string regularError(const std::string &bytes, Read read) {
    std::string file = dir.file("regular");
    writeBytes(file, bytes);
    std::string e = errorText(read(file));
    size_t at = e.find(file);
    return at == std::string::npos ? e : e.replace(at, file.size(), fifo);
  }
  std::string npyBytes(const HostTensor &t) {
    std::string file = dir.file("t.npy");
    EXPECT_EQ(errorText(writeNpy(file, t)), "");
    return readBytes(file);
  }
  std::string safetensorsBytes(
      const std::vector<std::pair<std::string, HostTensor>> &tensors) {
    std::string file = dir.file("t.safetensors");
    EXPECT_EQ(errorText(writeSafetensors(file, tensors)), "");
    return readBytes(file);
  }

  TempDir dir;
  std::string fifo = dir.file("fifo");
};

TEST_F(Streams, NpyOfZerosIsRefusedAtTheMagic) {
  FifoFeeder feed(fifo, "", kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readNpy(fifo)),
            fifo + ": error: not a .npy file (it does not start with the "
                   "magic string \\x93NUMPY)");
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(Streams, NpyHeaderAnnouncingMoreThanTheLimitIsRefusedAtOnce) {
  // f32[2^20, 2^10]: 4 GiB, over the 2 GiB read from a pipe.
  std::string header = npyHeader(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1024), }");
  FifoFeeder feed(fifo, header, kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readNpy(fifo)),
            fmt::format("{}: error: cannot read file: it announces {} bytes, "
                        "and a pipe or device is read up to 2147483648 "
                        "bytes; save it to a file first",
                        fifo, header.size() + (uint64_t(4) << 30)));
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(Streams, NpyBadHeaderIsRefusedBeforeTheData) {
  std::string header =
      npyHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (4,), }");
  FifoFeeder feed(fifo, header, kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readNpy(fifo)),
            fifo + ": error: unsupported dtype '<c8'; supported: '<f4', "
                   "'<f2', '<f8', '<i8', '|b1' and the big-endian '>f4', "
                   "'>f2', '>f8', '>i8' (convert with "
                   "arr.astype(np.float32))");
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(Streams, NpyThroughAFifoReadsAsFromAFile) {
  // 120 KB: more than one read and more than the pipe's buffer.
  HostTensor t =
      makeTensor(DType::F32, {300, 100}, [](int64_t i) { return i * 0.5; });
  std::string bytes = npyBytes(t);
  FifoFeeder feed(fifo, bytes);
  ASSERT_TRUE(feed.ok());
  llvm::Expected<HostTensor> back = readNpy(fifo);
  ASSERT_TRUE(!!back) << errorText(back.takeError());
  EXPECT_EQ(back->typeStr(), "f32[300, 100]");
  EXPECT_EQ(back->bytes, t.bytes);
  EXPECT_EQ(feed.written(), bytes.size());
}

TEST_F(Streams, NpyTrailingOrMissingBytesAsFromAFile) {
  std::string bytes =
      npyBytes(makeTensor(DType::F64, {7}, [](int64_t i) { return i + 1.0; }));
  for (const std::string &stream :
       {bytes + "abc", bytes.substr(0, bytes.size() - 5),
        bytes.substr(0, 40)}) {
    std::string expected = regularError(stream, readNpy);
    ASSERT_NE(expected, "");
    FifoFeeder feed(fifo, stream);
    ASSERT_TRUE(feed.ok());
    EXPECT_EQ(errorText(readNpy(fifo)), expected);
    EXPECT_EQ(feed.written(), stream.size());
    ::unlink(fifo.c_str());
  }
}

TEST_F(Streams, NpyThatGoesOnPastItsEndIsRefused) {
  std::string bytes =
      npyBytes(makeTensor(DType::I64, {9}, [](int64_t i) { return i; }));
  FifoFeeder feed(fifo, bytes, kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readNpy(fifo)),
            fmt::format("{}: error: cannot read file: it goes on past the "
                        "{} bytes it announces; a pipe or device is read no "
                        "further",
                        fifo, bytes.size()));
  EXPECT_LT(feed.written(), bytes.size() + kFew);
}

TEST_F(Streams, SafetensorsOfRandomBytesIsRefusedAtTheLength) {
  FifoFeeder feed(fifo, le<uint64_t>(0x8899aabbccddeeffULL), kEndless, 'Z');
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readSafetensors(fifo)),
            fifo + ": error: header length 9843086184167632639 is absurd "
                   "(over 100 MB); this is not a safetensors file");
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(Streams, SafetensorsBadHeaderIsRefusedBeforeTheData) {
  std::string header =
      R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0]}})";
  FifoFeeder feed(fifo, le<uint64_t>(header.size()) + header, kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readSafetensors(fifo)),
            fifo + ": error: tensor 'w': missing or invalid field "
                   "'data_offsets' (expected [begin, end] with 0 <= begin "
                   "<= end)");
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(Streams, SafetensorsThroughAFifoReadsAsFromAFile) {
  std::vector<std::pair<std::string, HostTensor>> in;
  in.emplace_back("b", makeTensor(DType::F32, {200, 100},
                                  [](int64_t i) { return i * 0.25; }));
  in.emplace_back(
      "a", makeTensor(DType::BF16, {3}, [](int64_t i) { return i - 1.0; }));
  std::string bytes = safetensorsBytes(in);
  FifoFeeder feed(fifo, bytes);
  ASSERT_TRUE(feed.ok());
  llvm::Expected<SafetensorsFile> back = readSafetensors(fifo);
  ASSERT_TRUE(!!back) << errorText(back.takeError());
  ASSERT_EQ(back->tensors.size(), 2u);
  EXPECT_EQ(back->find("b")->bytes, in[0].second.bytes);
  EXPECT_EQ(back->find("a")->bytes, in[1].second.bytes);
  EXPECT_EQ(feed.written(), bytes.size());
}

TEST_F(Streams, SafetensorsTrailingMissingOrEndlessBytes) {
  std::vector<std::pair<std::string, HostTensor>> in;
  in.emplace_back("w", makeTensor(DType::F16, {5}, [](int64_t) { return 1; }));
  std::string bytes = safetensorsBytes(in);
  for (const std::string &stream :
       {bytes + "xy", bytes.substr(0, bytes.size() - 3), bytes.substr(0, 5)}) {
    std::string expected = regularError(stream, readSafetensors);
    ASSERT_NE(expected, "");
    FifoFeeder feed(fifo, stream);
    ASSERT_TRUE(feed.ok());
    EXPECT_EQ(errorText(readSafetensors(fifo)), expected);
    ::unlink(fifo.c_str());
  }
  FifoFeeder feed(fifo, bytes, kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(readSafetensors(fifo)),
            fmt::format("{}: error: cannot read file: it goes on past the "
                        "{} bytes it announces; a pipe or device is read no "
                        "further",
                        fifo, bytes.size()));
  EXPECT_LT(feed.written(), bytes.size() + kFew);
}

TEST_F(Streams, GraphOfZerosIsRefusedAtTheFirstNul) {
  FifoFeeder feed(fifo, "", kEndless);
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(parseGraphFile(fifo)),
            fifo + ":1:1: error: a NUL byte: a .kg file is text (is this a "
                   "binary file?)");
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(Streams, GraphOfEndlessTextIsRefusedPast64MiB) {
  FifoFeeder feed(fifo, "", (uint64_t(64) << 20) + kFew, '#');
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(errorText(parseGraphFile(fifo)),
            fifo + ": error: cannot read file: it is not a regular file and "
                   "goes on past 67108864 bytes; save it to a file first");
  EXPECT_LT(feed.written(), (uint64_t(64) << 20) + kFew);
}

TEST_F(Streams, GraphThroughAFifoParses) {
  std::string text = readBytes(KILN_SOURCE_DIR "/examples/l2_75_small.kg");
  ASSERT_FALSE(text.empty());
  FifoFeeder feed(fifo, text);
  ASSERT_TRUE(feed.ok());
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraphFile(fifo);
  EXPECT_TRUE(!!g) << errorText(g.takeError());
}

TEST_F(Streams, GraphFileWithANulIsRefusedWhereItIs) {
  // Even in a comment, where the lexer would not look at it.
  std::string file = dir.file("nul.kg");
  const char text[] = "graph g(x: f32[2]) {\n  # a \0 b\n  return x\n}\n";
  writeBytes(file, std::string(text, sizeof text - 1));
  EXPECT_EQ(errorText(parseGraphFile(file)),
            file + ":2:7: error: a NUL byte: a .kg file is text (is this a "
                   "binary file?)");
}

std::string archiveLines(const std::string &lines) {
  return "KILNARCHIVE 1\n" + lines;
}

TEST(ArchiveScanner, RefusesWhatIsNoArchiveAtItsFirstLine) {
  rt::ArchiveScanner s;
  llvm::Expected<rt::ArchiveScanner::Extent> first = s.next("");
  ASSERT_TRUE(!!first);
  EXPECT_EQ(first->bytes, 14u);
  EXPECT_FALSE(first->whole);
  EXPECT_EQ(errorText(s.next(std::string(14, '\0'))),
            "error: not a Kiln cache archive (no 'KILNARCHIVE 1' line); "
            "make one with 'kiln cache export FILE'");
}

TEST(ArchiveScanner, FollowsEntriesToTheEndLine) {
  std::string key(64, 'a');
  std::string entry = "entry " + key + " 1000\n";
  std::string text = archiveLines(entry + std::string(1000, 'x') + "end 1\n");
  rt::ArchiveScanner s;
  // Line by line: a line is asked for with up to 128 bytes ahead.
  llvm::Expected<rt::ArchiveScanner::Extent> e = s.next(text.substr(0, 14));
  ASSERT_TRUE(!!e);
  EXPECT_EQ(e->bytes, 14u + 128);
  EXPECT_FALSE(e->whole);
  e = s.next(text.substr(0, 14 + 128));
  ASSERT_TRUE(!!e);
  EXPECT_EQ(e->bytes, 14 + entry.size() + 1000);
  EXPECT_FALSE(e->whole);
  e = s.next(text);
  ASSERT_TRUE(!!e);
  EXPECT_EQ(e->bytes, text.size());
  EXPECT_TRUE(e->whole);
}

TEST(ArchiveScanner, RefusesDamagedLinesAndWrongCounts) {
  for (const std::string &lines :
       {std::string("hello\n"), std::string(200, 'e'),
        "entry " + std::string(64, 'a') + " 99999999999999999999999\n",
        "entry " + std::string(64, 'a') + " 18446744073709551615\n"}) {
    rt::ArchiveScanner s;
    EXPECT_EQ(errorText(s.next(archiveLines(lines))),
              "error: the archive is damaged or cut short after 0 entries (0 "
              "imported)")
        << lines;
  }
  rt::ArchiveScanner s;
  EXPECT_EQ(errorText(s.next(archiveLines("end 2\n"))),
            "error: the archive says it holds 2 entries, but 0 were found");
}

} // namespace
