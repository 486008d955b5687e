//===- CacheDirectoryTest.cpp - The cache directory as a whole ------------===//
//
// Eviction, statistics, interrupted writes, concurrent readers, unsafe
// directories and archives. Most entries here are made up (a fake cubin,
// consistent key parts) so that no test waits for NVRTC; those that go
// through KernelCache compile the small pattern kernel.
//
//===----------------------------------------------------------------------===//
#include "CacheDirectory.h"
#include "CacheArchive.h"
#include "CacheFiles.h"
#include "CacheFormat.h"
#include "KernelCache.h"
#include "RuntimeTestUtil.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::rt {
namespace {

namespace fs = std::filesystem;
using Source = CacheLookup::Source;
using test::patternRequest;
using test::ScopedTempDir;

/// A made-up entry whose key parts are consistent: checkCacheEntry passes.
CacheEntry fakeEntry(int n, size_t cubinBytes = 1000) {
  CacheEntry e;
  e.source = "// kernel " + std::to_string(n) + "\n";
  KernelMetadata &m = e.meta;
  m.kernelName = "pw_relu_" + std::to_string(n);
  m.graph = "g";
  m.group = "0:pw_relu";
  m.shapes = "x=f32[" + std::to_string(n) + "]";
  m.sourceHash = sha256Hex(e.source);
  m.headersHash = sha256Hex("headers");
  m.arch = "sm_90";
  m.options = {"--gpu-architecture=sm_90", "-std=c++17"};
  m.nvrtcVersion = "13.0";
  m.kilnVersion = "0.1.0";
  m.compileMs = 100 + n;
  e.key = cacheKey(cacheKeyParts(m));
  e.cubin.assign(cubinBytes, 'c');
  e.cubin[0] = 0x7f, e.cubin[1] = 'E', e.cubin[2] = 'L', e.cubin[3] = 'F';
  e.created = e.lastUsed = 1700000000;
  return e;
}

/// Writes `e` into `dir` with mtime (last use) `t` seconds after the epoch.
std::string put(const CacheDirectory &dir, const CacheEntry &e, int64_t t) {
  std::string path = dir.entryPath(e.key);
  fs::create_directories(fs::path(path).parent_path());
  EXPECT_EQ(writeFileAtomically(path, encodeCacheEntry(e)), "");
  struct timespec times[2] = {{t, 0}, {t, 0}};
  EXPECT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  return path;
}

uint64_t totalBytes(const CacheDirectory &dir) {
  uint64_t total = 0;
  for (const EntryFile &f : dir.scan())
    total += f.bytes;
  return total;
}

std::vector<std::string> tempFilesUnder(const std::string &dir) {
  std::vector<std::string> out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.path().string().find(".tmp.") != std::string::npos)
      out.push_back(e.path().string());
  return out;
}

struct QuietCache {
  explicit QuietCache(const std::string &dir, uint64_t maxBytes = 0,
                      bool recompile = false)
      : os(warnings), cache(opts(dir, maxBytes, recompile, os), "0.1.0") {}
  static CacheOptions opts(const std::string &dir, uint64_t maxBytes,
                           bool recompile, llvm::raw_ostream &os) {
    CacheOptions o;
    o.directory = dir;
    o.maxBytes = maxBytes;
    o.recompile = recompile;
    o.warnings = &os;
    return o;
  }
  std::string warnings;
  llvm::raw_string_ostream os;
  KernelCache cache;
};

KernelMetadata meta() {
  KernelMetadata m;
  m.kernelName = "fill_pattern";
  m.graph = "test";
  m.group = "0:fill";
  return m;
}

Source lookup(KernelCache &cache, const CompileRequest &req) {
  llvm::Expected<CacheLookup> r = cache.getOrCompile(req, meta());
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return Source::Memory;
  }
  return r->source;
}

TEST(CacheDirectory, CleanupEvictsTheLeastRecentlyUsedDownToTheTarget) {
  ScopedTempDir tmp;
  CacheDirectory dir(tmp.path());
  std::vector<CacheEntry> es;
  for (int i = 0; i < 10; ++i) {
    es.push_back(fakeEntry(i));
    put(dir, es.back(), 1700000000 + 100 * i); // entry 0 is the oldest
  }
  uint64_t each = dir.scan()[0].bytes, total = totalBytes(dir);
  EXPECT_EQ(total, 10 * each);
  // Under the limit: nothing goes.
  CleanupReport none = dir.cleanup(total);
  EXPECT_EQ(none.removedEntries, 0u);
  EXPECT_EQ(none.entries, 10u);
  // A limit of 5.5 entries keeps the 4 latest (90% of it: 4.95 entries).
  uint64_t limit = each * 11 / 2;
  CleanupReport r = dir.cleanup(limit);
  EXPECT_EQ(r.removedEntries, 6u);
  EXPECT_EQ(r.removedBytes, 6 * each);
  EXPECT_EQ(r.entries, 4u);
  EXPECT_LE(totalBytes(dir), limit * CleanupTarget);
  std::vector<EntryFile> left = dir.scan();
  ASSERT_EQ(left.size(), 4u);
  for (const EntryFile &f : left) {
    auto it = std::find_if(es.begin(), es.end(),
                           [&](const CacheEntry &e) { return e.key == f.key; });
    ASSERT_NE(it, es.end());
    EXPECT_GE(it - es.begin(), 6) << "a recent entry was evicted";
  }
  // No limit: nothing goes.
  EXPECT_EQ(dir.cleanup(0).removedEntries, 0u);
  EXPECT_EQ(dir.clear().removedEntries, 4u);
  EXPECT_TRUE(dir.scan().empty());
}

TEST(CacheDirectory, EachStoreKeepsTheCacheUnderItsLimit) {
  ScopedTempDir tmp;
  CompileRequest reqs[3];
  for (int i = 0; i < 3; ++i) {
    reqs[i] = patternRequest();
    reqs[i].source += "// variant " + std::to_string(i) + "\n";
  }
  uint64_t one;
  {
    QuietCache probe(tmp.path());
    lookup(probe.cache, reqs[0]);
    one = totalBytes(CacheDirectory(tmp.path()));
    CacheDirectory(tmp.path()).clear();
  }
  // Room for one and a half entries: each store evicts the one before.
  uint64_t limit = one * 3 / 2;
  QuietCache qc(tmp.path(), limit);
  CacheDirectory dir(tmp.path());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lookup(qc.cache, reqs[i]), Source::Compiled);
    EXPECT_LE(totalBytes(dir), limit) << "after store " << i;
    std::vector<EntryFile> left = dir.scan();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].key, qc.cache.keyOf(reqs[i])) << "the newest stays";
  }
  EXPECT_EQ(qc.warnings, "");
}

TEST(CacheDirectory, StatisticsCountDiskHitsMissesAndTimeSaved) {
  ScopedTempDir tmp;
  CompileRequest req = patternRequest();
  {
    QuietCache first(tmp.path());
    EXPECT_EQ(lookup(first.cache, req), Source::Compiled);
    EXPECT_EQ(lookup(first.cache, req), Source::Memory); // not counted
  }
  for (int i = 0; i < 2; ++i) {
    QuietCache later(tmp.path());
    EXPECT_EQ(lookup(later.cache, req), Source::Disk);
  }
  CacheDirectory dir(tmp.path());
  llvm::Expected<CacheEntry> e =
      readCacheEntry(dir.entryPath(QuietCache(tmp.path()).cache.keyOf(req)));
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  CacheStats s = dir.stats();
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 1);
  EXPECT_NEAR(s.savedMs, 2 * e->meta.compileMs, 0.01);
  EXPECT_EQ(s.zeroedAt, 0);
  std::vector<EntryFile> files = dir.scan(nullptr, /*withHits=*/true);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].hits, 2);

  dir.zeroStats();
  s = dir.stats();
  EXPECT_EQ(s.hits + s.misses, 0);
  EXPECT_EQ(s.savedMs, 0);
  EXPECT_GT(s.zeroedAt, 0);
  EXPECT_EQ(dir.scan().size(), 1u) << "zeroing keeps the entries";
}

TEST(CacheDirectory, RecompileIgnoresAndOverwritesTheEntry) {
  ScopedTempDir tmp;
  CompileRequest req = patternRequest();
  QuietCache first(tmp.path());
  lookup(first.cache, req);
  std::string path = first.cache.entryPath(first.cache.keyOf(req));
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  QuietCache again(tmp.path(), 0, /*recompile=*/true);
  EXPECT_EQ(lookup(again.cache, req), Source::Compiled);
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino) << "not rewritten";
  EXPECT_EQ(CacheDirectory(tmp.path()).stats().misses, 2);
}

TEST(CacheDirectory, AWriterKilledMidWriteLeavesNothingThatLoads) {
  ScopedTempDir tmp;
  CompileRequest req = patternRequest();
  QuietCache probe(tmp.path());
  std::string key = probe.cache.keyOf(req);
  std::string path = probe.cache.entryPath(key);
  fs::create_directories(fs::path(path).parent_path());
  CacheEntry e = fakeEntry(1);
  e.key = key;
  std::string bytes = encodeCacheEntry(e);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    writeFileAtomically(path, bytes, [] { ::raise(SIGKILL); });
    ::_exit(0); // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  // Half an entry lies in a temporary file; no entry exists.
  std::vector<std::string> temps = tempFilesUnder(tmp.path());
  ASSERT_EQ(temps.size(), 1u);
  EXPECT_EQ(fs::file_size(temps[0]), bytes.size() / 2);
  EXPECT_FALSE(fs::exists(path));
  std::vector<StrayFile> stray;
  CacheDirectory dir(tmp.path());
  EXPECT_TRUE(dir.scan(&stray).empty());
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0].kind, StrayFile::Kind::StaleTemp);
  // A lookup compiles, warning nothing; cleanup removes the leftover.
  QuietCache user(tmp.path());
  EXPECT_EQ(lookup(user.cache, req), Source::Compiled);
  EXPECT_EQ(user.warnings, "");
  ASSERT_TRUE(bool(readCacheEntry(path)));
  dir.cleanup(0);
  EXPECT_TRUE(tempFilesUnder(tmp.path()).empty());
}

TEST(CacheDirectory, ATemporaryFileOfALiveWriterIsLeftAlone) {
  ScopedTempDir tmp;
  std::string name = tempFileFor(tmp.path() + "/00/x.kentry");
  int64_t pid = 0;
  ASSERT_TRUE(isTempFileName(fs::path(name).filename().string(), pid));
  EXPECT_EQ(pid, ::getpid());
  fs::create_directories(tmp.path() + "/00");
  std::ofstream(name) << "half";
  EXPECT_FALSE(isStaleTempFile(name, pid)); // this process is alive
  CacheDirectory(tmp.path()).cleanup(0);
  EXPECT_TRUE(fs::exists(name));
}

TEST(CacheDirectory, EvictionWhileAnotherProcessLoadsNeverGivesADamagedEntry) {
  ScopedTempDir tmp;
  CacheDirectory dir(tmp.path());
  std::vector<CacheEntry> es;
  for (int i = 0; i < 8; ++i)
    es.push_back(fakeEntry(i, 20000));
  for (const CacheEntry &e : es)
    put(dir, e, 1700000000);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Loads for 0.4 s; each load is a whole good entry or a miss.
    auto end =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
    int loads = 0;
    while (std::chrono::steady_clock::now() < end)
      for (const CacheEntry &e : es) {
        std::string bytes;
        if (!readFile(dir.entryPath(e.key), bytes))
          continue; // evicted: a miss
        llvm::Expected<CacheEntry> got = decodeCacheEntry(bytes);
        if (!got || checkCacheEntry(*got, e.key))
          ::_exit(1);
        ++loads;
      }
    ::_exit(loads > 0 ? 0 : 2);
  }
  // Meanwhile: evict almost everything, write it back, again and again.
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
  int rounds = 0;
  while (std::chrono::steady_clock::now() < end) {
    dir.cleanup(25000);
    for (const CacheEntry &e : es)
      put(dir, e, 1700000000 + rounds);
    ++rounds;
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a damaged load, 2: no load";
  EXPECT_GT(rounds, 1);
}

TEST(CacheDirectory, AnUnsafeDirectoryIsRefusedAndTheCacheWorksInMemory) {
  for (mode_t mode : {0777, 0770, 01777}) {
    ScopedTempDir tmp;
    ASSERT_EQ(::chmod(tmp.path().c_str(), mode), 0);
    QuietCache qc(tmp.path());
    EXPECT_EQ(qc.cache.directory(), "");
    EXPECT_EQ(lookup(qc.cache, patternRequest()), Source::Compiled);
    EXPECT_EQ(lookup(qc.cache, patternRequest()), Source::Memory);
    EXPECT_EQ(std::count(qc.warnings.begin(), qc.warnings.end(), '\n'), 1)
        << qc.warnings;
    EXPECT_NE(qc.warnings.find("kiln: kernel cache directory " + tmp.path() +
                               " is not safe to use: it is writable by "),
              std::string::npos)
        << qc.warnings;
    EXPECT_NE(qc.warnings.find("chmod 700 " + tmp.path()), std::string::npos);
    EXPECT_NE(qc.warnings.find("compiled in memory only"), std::string::npos);
    EXPECT_TRUE(CacheDirectory(tmp.path()).scan().empty()) << "wrote anyway";
  }
  // Another user's directory (only root can make one to test with).
  if (::geteuid() != 0)
    GTEST_SKIP() << "not root: cannot chown a directory to another user";
  ScopedTempDir tmp;
  ASSERT_EQ(::chown(tmp.path().c_str(), 12345, 12345), 0);
  EXPECT_NE(unsafeDirectoryReason(tmp.path())
                .find("it belongs to another user (uid 12345; you are uid 0)"),
            std::string::npos);
  QuietCache qc(tmp.path());
  EXPECT_EQ(qc.cache.directory(), "");
  EXPECT_EQ(qc.warnings.find("chmod 700"), std::string::npos)
      << "chmod cannot fix another user's directory";
}

TEST(CacheDirectory, KeysAreFoundByAUniquePrefix) {
  ScopedTempDir tmp;
  CacheDirectory dir(tmp.path());
  CacheEntry a = fakeEntry(1), b = fakeEntry(2);
  put(dir, a, 1700000000);
  put(dir, b, 1700000000);
  EXPECT_EQ(llvm::cantFail(dir.findKey(a.key.substr(0, 12))), a.key);
  EXPECT_EQ(llvm::cantFail(dir.findKey(llvm::StringRef(b.key).upper())), b.key);
  auto err = [&](llvm::StringRef prefix) {
    llvm::Expected<std::string> k = dir.findKey(prefix);
    return k ? "found " + *k : llvm::toString(k.takeError());
  };
  EXPECT_NE(err("").find("is not a cache key"), std::string::npos);
  EXPECT_NE(err("xyz").find("is not a cache key"), std::string::npos);
  std::string none;
  for (char c : std::string("0123456789abcdef"))
    if (a.key[0] != c && b.key[0] != c)
      none = std::string(1, c);
  EXPECT_NE(err(none).find("no entry in " + tmp.path() +
                           " has a key starting with '" + none + "'"),
            std::string::npos);
  size_t common = 0;
  while (a.key[common] == b.key[common])
    ++common;
  EXPECT_NE(err(a.key.substr(0, common))
                .find(common ? "is ambiguous: 2 "
                               "entries"
                             : "is not a cache key"),
            std::string::npos);
}

TEST(CacheDirectory, CheckCatchesAnEntryWhoseKeyIsNotItsParts) {
  CacheEntry e = fakeEntry(3);
  EXPECT_FALSE(bool(checkCacheEntry(e, e.key)));
  CacheEntry other = e;
  other.source += "// changed\n";
  EXPECT_NE(llvm::toString(checkCacheEntry(other, e.key))
                .find("its source is not the one its key was made from"),
            std::string::npos);
  other = e;
  other.meta.arch = "sm_80";
  EXPECT_NE(llvm::toString(checkCacheEntry(other, e.key)).find("key parts"),
            std::string::npos);
  other = e;
  other.cubin[1] = 'X';
  EXPECT_NE(llvm::toString(checkCacheEntry(other, e.key)).find("not an ELF"),
            std::string::npos);
  EXPECT_NE(llvm::toString(checkCacheEntry(e, fakeEntry(4).key))
                .find("not the one its name says"),
            std::string::npos);
  // The metadata alone reads back from the start of the file.
  std::string bytes = encodeCacheEntry(e);
  llvm::Expected<CacheEntry> m = decodeCacheEntryMetadata(
      llvm::StringRef(bytes).take_front(decodeCacheEntryHeaderSize(bytes)));
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->key, e.key);
  EXPECT_EQ(m->meta.sourceHash, e.meta.sourceHash);
  EXPECT_EQ(m->meta.shapes, "x=f32[3]");
}

TEST(CacheArchive, ExportThenImportCopiesEntriesByteForByte) {
  ScopedTempDir a, b;
  CacheDirectory from(a.path()), to(b.path());
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    CacheEntry e = fakeEntry(i);
    put(from, e, 1700000000);
    keys.push_back(e.key);
  }
  std::string archive;
  llvm::raw_string_ostream os(archive);
  ExportReport ex = exportCacheArchive(from, keys, os);
  os.flush();
  EXPECT_EQ(ex.entries, 3u);
  EXPECT_TRUE(ex.skipped.empty());
  EXPECT_EQ(archive.rfind("KILNARCHIVE 1\nentry ", 0), 0u);
  EXPECT_EQ(llvm::StringRef(archive).take_back(6), "end 3\n");

  ImportReport im = llvm::cantFail(importCacheArchive(to, archive));
  EXPECT_EQ(im.imported, 3u);
  EXPECT_EQ(im.present, 0u);
  EXPECT_TRUE(im.refused.empty());
  for (const std::string &k : keys) {
    std::string x, y;
    ASSERT_TRUE(readFile(from.entryPath(k), x));
    ASSERT_TRUE(readFile(to.entryPath(k), y));
    EXPECT_EQ(x, y);
  }
  ImportReport again = llvm::cantFail(importCacheArchive(to, archive));
  EXPECT_EQ(again.imported, 0u);
  EXPECT_EQ(again.present, 3u);
}

TEST(CacheArchive, ImportRefusesDamagedEntriesAndCutArchives) {
  ScopedTempDir a, b;
  CacheDirectory from(a.path()), to(b.path());
  std::vector<std::string> keys;
  for (int i = 0; i < 2; ++i) {
    CacheEntry e = fakeEntry(i);
    put(from, e, 1700000000);
    keys.push_back(e.key);
  }
  std::string archive;
  llvm::raw_string_ostream os(archive);
  exportCacheArchive(from, keys, os);
  os.flush();
  // A flipped byte in the first entry's cubin: refused, the second imports.
  std::string flipped = archive;
  flipped[archive.find("cccccccc")] ^= 1;
  ImportReport r = llvm::cantFail(importCacheArchive(to, flipped));
  EXPECT_EQ(r.imported, 1u);
  ASSERT_EQ(r.refused.size(), 1u);
  EXPECT_NE(r.refused[0].find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(to.scan().size(), 1u);

  auto error = [&](const std::string &bytes) {
    llvm::Expected<ImportReport> x = importCacheArchive(to, bytes);
    return x ? std::string("imported") : llvm::toString(x.takeError());
  };
  EXPECT_NE(error(archive.substr(0, archive.size() / 2)).find("cut short"),
            std::string::npos);
  EXPECT_NE(error("KILNCACHE 1\n").find("not a Kiln cache archive"),
            std::string::npos);
}

} // namespace
} // namespace kiln::rt
