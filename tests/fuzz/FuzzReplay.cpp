//===- FuzzReplay.cpp - Deterministic mutation testing
//---------------------===//
//
// A fuzz driver without libFuzzer, for every build (ctest runs it):
//
//   REPLAY SECONDS DICT [--prefix=N] [--max-bytes=N] DIR:EXT ...
//
// loads the files DIR/*EXT as seeds (each led by byte N when --prefix is
// given, for targets whose first byte selects a format; files larger than
// --max-bytes are skipped), runs them and then random mutations of them
// (byte flips, inserted dictionary tokens, deletions, splices) through the
// linked LLVMFuzzerTestOneInput for SECONDS. DICT is a libFuzzer dictionary.
// The random seed is fixed, so a failure reproduces; the target aborts on
// the first failing input, and a crash (a signal) prints the input first.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

std::string readFile(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The quoted values of a libFuzzer dictionary (\\, \" and \xNN escapes).
std::vector<std::string> loadDict(const std::string &path) {
  std::vector<std::string> tokens;
  std::istringstream lines(readFile(path));
  for (std::string line; std::getline(lines, line);) {
    size_t open = line.find('"'), close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos ||
        close <= open)
      continue;
    std::string tok;
    for (size_t i = open + 1; i < close; ++i) {
      if (line[i] != '\\' || i + 1 >= close) {
        tok += line[i];
      } else if (line[i + 1] == 'x' && i + 3 < close) {
        tok += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else {
        tok += line[++i];
      }
    }
    tokens.push_back(tok);
  }
  return tokens;
}

struct Options {
  double seconds = 20;
  std::vector<std::string> tokens;
  std::vector<std::string> seeds;
};

bool parseArgs(int argc, char **argv, Options &o) {
  if (argc < 4)
    return false;
  o.seconds = std::atof(argv[1]);
  o.tokens = loadDict(argv[2]);
  std::string prefix;
  uint64_t maxBytes = UINT64_MAX;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--prefix=", 0) == 0) {
      prefix.assign(1, static_cast<char>(std::atoi(a.c_str() + 9)));
      continue;
    }
    if (a.rfind("--max-bytes=", 0) == 0) {
      maxBytes = std::strtoull(a.c_str() + 12, nullptr, 10);
      continue;
    }
    size_t colon = a.rfind(':');
    if (colon == std::string::npos)
      return false;
    std::filesystem::path dir = a.substr(0, colon);
    std::string ext = a.substr(colon + 1);
    std::vector<std::filesystem::path> paths;
    if (std::filesystem::is_directory(dir))
      for (const auto &e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ext && e.file_size() <= maxBytes)
          paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const auto &p : paths)
      o.seeds.push_back(prefix + readFile(p));
  }
  return !o.tokens.empty();
}

class Mutator {
public:
  Mutator(const std::vector<std::string> &seeds,
          const std::vector<std::string> &tokens)
      : seeds_(seeds), tokens_(tokens) {}

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
    case 1: // insert a dictionary token
      s.insert(at, tokens_[pick(tokens_.size())]);
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
  const std::vector<std::string> &tokens_;
  std::mt19937_64 rng_{0x6b696c6e};
};

/// The input being run, for the crash report.
const std::string *current = nullptr;

/// Prints the input that crashed (write(2) only: we are in a signal
/// handler), then dies of the same signal.
extern "C" void reportCrash(int sig) {
  const char head[] = "fuzz replay: crashed on this input:\n--- input ---\n";
  (void)!write(2, head, sizeof(head) - 1);
  if (current)
    (void)!write(2, current->data(), current->size());
  (void)!write(2, "\n--- end ---\n", 13);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void runOne(const std::string &s) {
  current = &s;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  current = nullptr;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: %s SECONDS DICT [--prefix=N] "
                 "[--max-bytes=N] DIR:EXT...\n",
                 argv[0]);
    return 2;
  }
  if (o.seeds.empty()) {
    std::fprintf(stderr, "no seed files found\n");
    return 1;
  }
  for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL})
    std::signal(sig, reportCrash);
  for (const std::string &s : o.seeds)
    runOne(s);
  Mutator mutator(o.seeds, o.tokens);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  uint64_t runs = o.seeds.size();
  while (elapsed() < o.seconds) {
    for (int i = 0; i < 256; ++i, ++runs)
      runOne(mutator.next());
  }
  double t = elapsed();
  std::printf("fuzz replay: %llu inputs (%zu seeds, %zu tokens) in %.1f s, "
              "%.0f inputs/s, no oracle failures\n",
              static_cast<unsigned long long>(runs), o.seeds.size(),
              o.tokens.size(), t, runs / t);
  return 0;
}
