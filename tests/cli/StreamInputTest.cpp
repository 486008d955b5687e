//===- StreamInputTest.cpp - kiln reading devices and pipes ---------------===//
//
// Runs the built `kiln` on devices (/dev/zero, /dev/urandom) and pipes (a
// FIFO fed from a thread, as its standard input or named on the command
// line): a stream in the wrong format fails at once with the error a file
// would give, one in the right format works as the file does.
//
//===----------------------------------------------------------------------===//
#include "CliHarness.h"
#include "tensorio/FifoFeeder.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <fmt/format.h>
#include <gtest/gtest.h>

using kiln::test::FifoFeeder;

namespace {

using Result = kiln::test::CliResult;
using kiln::test::contains;
using kiln::test::readFile;
using kiln::test::src;

const std::string kGraph = src("examples/l2_75_small.kg");
const std::string kInput = src("examples/data/l2_75_small_x.npy");
const std::string kParams = src("examples/data/l2_75_small.safetensors");

/// Far more than kiln should read of a stream in the wrong format.
constexpr uint64_t kEndless = uint64_t(64) << 20;
/// The pipe's buffer, a read or two and slack.
constexpr uint64_t kFew = uint64_t(256) << 10;

class StreamInput : public kiln::test::CliFixture {
protected:
  void SetUp() override {
    CliFixture::SetUp();
    // Children inherit the environment.
    ::setenv("KILN_CACHE_DIR", tmp("cache").c_str(), 1);
  }
  void TearDown() override {
    CliFixture::TearDown();
    ::unsetenv("KILN_CACHE_DIR");
  }

  Result run(const std::string &input, const std::string &params,
             const std::string &stdinPath = "",
             const std::string &output = "") {
    std::vector<std::string> args = {"run",      kGraph,    "--device",
                                     "cpu",      "--input", "x=" + input,
                                     "--params", params};
    if (!output.empty())
      args.insert(args.end(), {"--output", output});
    return kiln(args, stdinPath);
  }
};

TEST_F(StreamInput, DevZeroAsInputFailsAtTheMagic) {
  Result r = run("/dev/zero", kParams);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "/dev/zero: error: not a .npy file (it does not start "
                   "with the magic string \\x93NUMPY)\n");
}

TEST_F(StreamInput, DevUrandomAsParamsFailsAtTheHeaderLength) {
  Result r = run(kInput, "/dev/urandom");
  EXPECT_EQ(r.code, 1);
  // The length is random; 8 random bytes are below 100 MB with odds of
  // 2^-37.
  EXPECT_TRUE(contains(r.err, "/dev/urandom: error: header length "));
  EXPECT_TRUE(contains(r.err, " is absurd (over 100 MB); this is not a "
                              "safetensors file\n"))
      << r.err;
}

TEST_F(StreamInput, CacheImportOfDevZeroFailsAtTheFirstLine) {
  Result r = kiln({"cache", "import", "/dev/zero"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: /dev/zero: not a Kiln cache archive (no "
                   "'KILNARCHIVE 1' line); make one with 'kiln cache "
                   "export FILE'\n");
}

TEST_F(StreamInput, GraphFromDevZeroFailsAtTheFirstByte) {
  Result r = kiln({"run", "/dev/zero", "--device", "cpu"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "/dev/zero:1:1: error: a NUL byte: a .kg file is text (is "
                   "this a binary file?)\n");
}

TEST_F(StreamInput, EndlessStdinIsReadOnlyAsFarAsTheMagic) {
  std::string fifo = tmp("fifo");
  FifoFeeder feed(fifo, "", kEndless);
  ASSERT_TRUE(feed.ok());
  Result r = run("/dev/stdin", kParams, fifo);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "/dev/stdin: error: not a .npy file")) << r.err;
  EXPECT_LT(feed.written(), kFew);
}

TEST_F(StreamInput, ValidFilesThroughPipesGiveWhatTheFilesGive) {
  Result files = run(kInput, kParams, "", tmp("from-files.npy"));
  ASSERT_EQ(files.code, 0) << files.err;
  // The input as standard input (as with `cat x.npy | kiln run ...`), the
  // parameters through a named pipe.
  std::string in = tmp("in"), params = tmp("params");
  FifoFeeder feedIn(in, readFile(kInput));
  FifoFeeder feedParams(params, readFile(kParams));
  ASSERT_TRUE(feedIn.ok() && feedParams.ok());
  Result pipes = run("/dev/stdin", params, in, tmp("from-pipes.npy"));
  EXPECT_EQ(pipes.code, 0) << pipes.err;
  EXPECT_EQ(feedIn.written(), readFile(kInput).size());
  EXPECT_EQ(feedParams.written(), readFile(kParams).size());
  std::string a = readFile(tmp("from-files.npy"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, readFile(tmp("from-pipes.npy")));
}

TEST_F(StreamInput, InputThatGoesOnPastItsEndIsRefused) {
  std::string bytes = readFile(kInput), fifo = tmp("fifo");
  FifoFeeder feed(fifo, bytes, kEndless);
  ASSERT_TRUE(feed.ok());
  Result r = run(fifo, kParams);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, fmt::format("{}: error: cannot read file: it goes on past "
                               "the {} bytes it announces; a pipe or device "
                               "is read no further\n",
                               fifo, bytes.size()));
  EXPECT_LT(feed.written(), bytes.size() + kFew);
}

TEST_F(StreamInput, CacheImportThroughAPipe) {
  Result c = kiln(
      {"compile", src("tests/data/kg/cache_four_kernels.kg"), "--bind", "N=5"});
  ASSERT_EQ(c.code, 0) << c.err;
  std::string archive = tmp("warm.kca");
  Result ex = kiln({"cache", "export", archive});
  ASSERT_EQ(ex.code, 0) << ex.err;
  std::string bytes = readFile(archive);
  ::setenv("KILN_CACHE_DIR", tmp("other").c_str(), 1);

  // Two archives run together (the second empty): the entries of the
  // first are read, the rest refused, the same from a pipe as from a file.
  std::string twice = tmp("twice.kca"), second = "KILNARCHIVE 1\nend 0\n";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(twice, ec);
    ASSERT_FALSE(ec);
    os << bytes << second;
  }
  const char *refused = "error: {}: 20 bytes follow the archive's 'end' line "
                        "(two archives run together?); only the entries "
                        "before it were read\n";
  std::string fifo = tmp("fifo");
  {
    FifoFeeder feed(fifo, bytes + second);
    ASSERT_TRUE(feed.ok());
    Result r = kiln({"cache", "import", "-"}, fifo);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, fmt::format(fmt::runtime(refused), "-"));
    ::unlink(fifo.c_str());
  }
  Result fromFile = kiln({"cache", "import", twice});
  EXPECT_EQ(fromFile.code, 1);
  EXPECT_EQ(fromFile.err, fmt::format(fmt::runtime(refused), twice));

  ::setenv("KILN_CACHE_DIR", tmp("third").c_str(), 1);
  FifoFeeder feed(fifo, bytes);
  ASSERT_TRUE(feed.ok());
  Result r = kiln({"cache", "import", "-"}, fifo);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "imported 4 entries")) << r.out;
  EXPECT_EQ(feed.written(), bytes.size());
}

} // namespace
