//===- FuzzReplay.cpp - Deterministic mutation testing of the parser ------===//
//
// kiln_parser_fuzz_replay [SECONDS]: feeds the seed corpus (examples/*.kg
// and tests/data/kg/*.kg) and then random mutations of it (byte flips,
// inserted grammar tokens, deletions, splices) through the fuzz oracle in
// ParserFuzz.cpp, for SECONDS (default 20). The random seed is fixed, so a
// failure reproduces; the oracle aborts on the first failing input.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

const char *const kTokens[] = {
    "(",        ")",
    ",",        "=",
    "[",        "]",
    "{",        "}",
    ":",        "-",
    ";",        "\n",
    " ",        "#",
    "\"",       "%0",
    "%1",       "x",
    "y",        "N",
    "0",        "1",
    "2",        "-1",
    "1.5",      "1e-5",
    ".5",       "inf",
    "nan",      "true",
    "false",    "graph ",
    "param ",   "return ",
    "relu(",    "add(",
    "linear(",  "group_norm(",
    "conv2d(",  "min(",
    "dim=",     "dim=[1]",
    "keepdim=", "groups=",
    "bias=",    "weight=",
    "input=",   "other=",
    "f32[",     "i64[",
    "bool[",    "f16[N, 8]",
    "zeros",    "ones",
    "full(",    "randn(",
    "uniform(", "seed=",
    "\"tanh\"", "approximate=",
    "\\",       "9999999999999",
};

std::string readFile(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> loadSeeds() {
  std::vector<std::filesystem::path> paths;
  for (const char *dir : {"examples", "tests/data/kg"}) {
    std::filesystem::path root = std::filesystem::path(KILN_SOURCE_DIR) / dir;
    if (!std::filesystem::is_directory(root))
      continue;
    for (const auto &e : std::filesystem::directory_iterator(root))
      if (e.path().extension() == ".kg")
        paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> seeds;
  for (const auto &p : paths)
    seeds.push_back(readFile(p));
  return seeds;
}

class Mutator {
public:
  explicit Mutator(const std::vector<std::string> &seeds) : seeds_(seeds) {}

  std::string next() {
    std::string s = seeds_[pick(seeds_.size())];
    unsigned rounds = 1 + pick(4);
    for (unsigned i = 0; i < rounds; ++i)
      mutate(s);
    return s;
  }

private:
  size_t pick(size_t n) { return n ? rng_() % n : 0; }

  void mutate(std::string &s) {
    size_t at = pick(s.size() + 1);
    switch (pick(5)) {
    case 0: // flip a byte
      if (!s.empty())
        s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
      break;
    case 1: // insert a grammar token
      s.insert(at, kTokens[pick(std::size(kTokens))]);
      break;
    case 2: // delete a short range
      s.erase(at, 1 + pick(8));
      break;
    case 3: { // splice in a piece of another seed
      const std::string &o = seeds_[pick(seeds_.size())];
      size_t from = pick(o.size());
      s.insert(at, o.substr(from, 1 + pick(40)));
      break;
    }
    default: // duplicate a piece of this text
      if (!s.empty()) {
        size_t from = pick(s.size());
        s.insert(at, s.substr(from, 1 + pick(40)));
      }
      break;
    }
  }

  const std::vector<std::string> &seeds_;
  std::mt19937_64 rng_{0x6b696c6e};
};

void runOne(const std::string &s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

} // namespace

int main(int argc, char **argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 20.0;
  std::vector<std::string> seeds = loadSeeds();
  if (seeds.empty()) {
    std::fprintf(stderr, "no .kg seeds under examples/ or tests/data/kg/\n");
    return 1;
  }
  for (const std::string &s : seeds)
    runOne(s);
  Mutator mutator(seeds);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  uint64_t runs = seeds.size();
  while (elapsed() < seconds) {
    for (int i = 0; i < 256; ++i, ++runs)
      runOne(mutator.next());
  }
  double t = elapsed();
  std::printf("parser fuzz replay: %llu inputs (%zu seeds) in %.1f s, %.0f "
              "inputs/s, no oracle failures\n",
              static_cast<unsigned long long>(runs), seeds.size(), t, runs / t);
  return 0;
}
