#include "CacheDirectory.h"
#include "CacheFiles.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <dirent.h>
#include <map>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace kiln::rt {

namespace {

constexpr llvm::StringLiteral EntrySuffix = ".kentry";
constexpr llvm::StringLiteral HitsSuffix = ".hits";
/// A full scan corrects the running total after this many stores.
constexpr int64_t StoresPerScan = 64;

bool isHex(llvm::StringRef s) {
  return llvm::all_of(
      s, [](char c) { return llvm::isDigit(c) || (c >= 'a' && c <= 'f'); });
}

/// The names in `dir` (no "." or ".."); empty when it cannot be read.
std::vector<std::string> namesIn(const std::string &dir) {
  std::vector<std::string> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return out;
  while (struct dirent *e = ::readdir(d)) {
    llvm::StringRef n = e->d_name;
    if (n != "." && n != "..")
      out.push_back(n.str());
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

int64_t mtimeNs(const struct stat &st) {
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

} // namespace

bool isCacheKey(llvm::StringRef s) { return s.size() == 64 && isHex(s); }

std::string CacheDirectory::entryPath(llvm::StringRef key) const {
  return fmt::format("{}/{}/{}{}", dir_, key.take_front(2).str(), key.str(),
                     EntrySuffix.str());
}

std::string CacheDirectory::hitsPath(llvm::StringRef key) const {
  return fmt::format("{}/{}/{}{}", dir_, key.take_front(2).str(), key.str(),
                     HitsSuffix.str());
}

std::vector<EntryFile> CacheDirectory::scan(std::vector<StrayFile> *stray,
                                            bool withHits) const {
  std::vector<EntryFile> entries;
  std::map<std::string, std::pair<std::string, uint64_t>> counters;
  auto addStray = [&](const std::string &path, const std::string &name,
                      uint64_t bytes) {
    if (!stray)
      return;
    int64_t pid;
    StrayFile::Kind kind = StrayFile::Kind::Other;
    if (isTempFileName(name, pid))
      kind = isStaleTempFile(path, pid) ? StrayFile::Kind::StaleTemp
                                        : StrayFile::Kind::LiveTemp;
    stray->push_back({path, kind, bytes});
  };
  for (const std::string &sub : namesIn(dir_)) {
    std::string subPath = dir_ + "/" + sub;
    struct stat st;
    if (::lstat(subPath.c_str(), &st) != 0)
      continue;
    if (!S_ISDIR(st.st_mode)) {
      // kiln.conf, stats and lock are Kiln's; temporaries of kiln.conf may
      // be stale.
      int64_t pid;
      if (isTempFileName(sub, pid))
        addStray(subPath, sub, st.st_size);
      continue;
    }
    if (sub.size() != 2 || !isHex(sub))
      continue;
    for (const std::string &name : namesIn(subPath)) {
      std::string path = subPath;
      path += '/';
      path += name;
      if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      llvm::StringRef n = name;
      if (n.endswith(EntrySuffix) &&
          isCacheKey(n.drop_back(EntrySuffix.size())) && n.startswith(sub)) {
        entries.push_back({n.drop_back(EntrySuffix.size()).str(), path,
                           uint64_t(st.st_size), mtimeNs(st), 0});
      } else if (n.endswith(HitsSuffix) &&
                 isCacheKey(n.drop_back(HitsSuffix.size()))) {
        counters[n.drop_back(HitsSuffix.size()).str()] = {path, st.st_size};
      } else {
        addStray(path, name, st.st_size);
      }
    }
  }
  for (EntryFile &e : entries) {
    auto it = counters.find(e.key);
    if (it == counters.end())
      continue;
    e.bytes += it->second.second;
    if (withHits)
      e.hits = readCounters(it->second.first)["hits"];
    counters.erase(it);
  }
  for (const auto &[key, file] : counters)
    if (stray)
      stray->push_back({file.first, StrayFile::Kind::OrphanHits, file.second});
  return entries;
}

llvm::Expected<std::string>
CacheDirectory::findKey(llvm::StringRef prefix) const {
  std::string p = prefix.trim().lower();
  if (p.empty() || p.size() > 64 || !isHex(p))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'%s' is not a cache key: a key is hex digits (a prefix of one is "
        "enough); 'kiln cache list' shows them",
        prefix.str().c_str());
  std::vector<std::string> matches;
  for (const EntryFile &e : scan())
    if (llvm::StringRef(e.key).startswith(p))
      matches.push_back(e.key);
  if (matches.size() == 1)
    return matches[0];
  if (matches.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no entry in %s has a key starting with "
                                   "'%s' (see 'kiln cache list')",
                                   dir_.c_str(), p.c_str());
  std::string some;
  for (size_t i = 0; i < matches.size() && i < 3; ++i)
    some += (i ? ", " : "") + matches[i].substr(0, 16);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the key prefix '%s' is ambiguous: %zu entries start with it (%s%s); "
      "give more digits",
      p.c_str(), matches.size(), some.c_str(),
      matches.size() > 3 ? ", ..." : "");
}

void CacheDirectory::recordHit(llvm::StringRef key, double compileMs) const {
  updateCounters(statsPath(), [&](Counters &c) {
    c["hits"] += 1;
    c["saved_us"] += static_cast<int64_t>(std::llround(compileMs * 1000));
  });
  updateCounters(hitsPath(key), [](Counters &c) { c["hits"] += 1; });
}

bool CacheDirectory::recordMiss(uint64_t storedBytes, uint64_t maxBytes) const {
  bool over = false;
  updateCounters(statsPath(), [&](Counters &c) {
    c["misses"] += 1;
    if (storedBytes == 0)
      return;
    bool known = c.count("bytes") != 0;
    c["bytes"] += static_cast<int64_t>(storedBytes);
    c["stores"] += 1;
    over = maxBytes > 0 && (!known || uint64_t(c["bytes"]) > maxBytes ||
                            c["stores"] >= StoresPerScan);
  });
  return over;
}

CacheStats CacheDirectory::stats() const {
  Counters c = readCounters(statsPath());
  CacheStats s;
  s.hits = c["hits"];
  s.misses = c["misses"];
  s.savedMs = double(c["saved_us"]) / 1000;
  s.zeroedAt = c["zeroed"];
  return s;
}

bool CacheDirectory::zeroStats() const {
  return updateCounters(statsPath(), [](Counters &c) {
    c["hits"] = c["misses"] = c["saved_us"] = 0;
    c["zeroed"] = static_cast<int64_t>(std::time(nullptr));
  });
}

bool CacheDirectory::removeEntry(llvm::StringRef key) const {
  bool removed = ::unlink(entryPath(key).c_str()) == 0;
  int why = errno; // for the caller, past the counter's unlink
  ::unlink(hitsPath(key).c_str());
  errno = why;
  return removed;
}

CleanupReport
CacheDirectory::remove(std::vector<EntryFile> all, size_t victims,
                       const std::vector<StrayFile> &stray) const {
  CleanupReport r;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < victims) {
      if (removeEntry(all[i].key)) {
        ++r.removedEntries;
        r.removedBytes += all[i].bytes;
        continue;
      }
      if (errno == ENOENT) // another process removed it first
        continue;
      if (r.failedEntries++ == 0)
        r.failure = fmt::format("cannot remove {}: {}", entryPath(all[i].key),
                                errnoText());
    }
    ++r.entries;
    r.bytes += all[i].bytes;
  }
  for (const StrayFile &s : stray)
    if ((s.kind == StrayFile::Kind::StaleTemp ||
         s.kind == StrayFile::Kind::OrphanHits) &&
        ::unlink(s.path.c_str()) == 0)
      ++r.removedStray;
  updateCounters(statsPath(), [&](Counters &c) {
    c["bytes"] = static_cast<int64_t>(r.bytes);
    c["stores"] = 0;
  });
  return r;
}

CleanupReport CacheDirectory::cleanup(uint64_t maxBytes) const {
  // Without the lock (a read-only directory, say) it cleans all the same:
  // two cleaners at once only remove a little more than needed.
  FileLock lock(dir_ + "/lock");
  std::vector<StrayFile> stray;
  std::vector<EntryFile> all = scan(&stray);
  std::sort(all.begin(), all.end(), [](const EntryFile &a, const EntryFile &b) {
    return std::tie(a.lastUsedNs, a.key) < std::tie(b.lastUsedNs, b.key);
  });
  uint64_t total = 0;
  for (const EntryFile &e : all)
    total += e.bytes;
  size_t victims = 0;
  if (maxBytes > 0 && total > maxBytes) {
    auto target = static_cast<uint64_t>(double(maxBytes) * CleanupTarget);
    while (victims < all.size() && total > target)
      total -= all[victims++].bytes;
  }
  return remove(std::move(all), victims, stray);
}

CleanupReport CacheDirectory::clear() const {
  FileLock lock(dir_ + "/lock");
  std::vector<StrayFile> stray;
  std::vector<EntryFile> all = scan(&stray);
  size_t n = all.size();
  return remove(std::move(all), n, stray);
}

} // namespace kiln::rt
