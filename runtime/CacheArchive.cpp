#include "CacheArchive.h"
#include "CacheFiles.h"
#include "CacheFormat.h"
#include "KernelCache.h"

#include "llvm/ADT/SmallVector.h"

#include <fmt/format.h>

namespace kiln::rt {

namespace {

constexpr llvm::StringLiteral ArchiveMagic = "KILNARCHIVE 1\n";

/// The entry in `bytes` if it is whole and holds `key`.
llvm::Error checkEntryBytes(llvm::StringRef bytes, llvm::StringRef key) {
  llvm::Expected<CacheEntry> e = decodeCacheEntry(bytes);
  if (!e)
    return e.takeError();
  return checkCacheEntry(*e, key);
}

} // namespace

ExportReport exportCacheArchive(const CacheDirectory &dir,
                                const std::vector<std::string> &keys,
                                llvm::raw_ostream &out) {
  ExportReport r;
  out << ArchiveMagic;
  for (const std::string &key : keys) {
    std::string path = dir.entryPath(key), bytes;
    if (!readFile(path, bytes)) {
      r.skipped.push_back(path + ": cannot read: " + errnoText());
      continue;
    }
    if (llvm::Error e = checkEntryBytes(bytes, key)) {
      r.skipped.push_back(path + ": " + llvm::toString(std::move(e)));
      continue;
    }
    out << fmt::format("entry {} {}\n", key, bytes.size()) << bytes;
    ++r.entries;
    r.bytes += bytes.size();
  }
  out << fmt::format("end {}\n", r.entries);
  return r;
}

llvm::Expected<ImportReport> importCacheArchive(const CacheDirectory &dir,
                                                llvm::StringRef archive) {
  auto fail = [](const std::string &what) {
    return llvm::make_error<llvm::StringError>(what,
                                               llvm::inconvertibleErrorCode());
  };
  if (!archive.startswith(ArchiveMagic))
    return fail("not a Kiln cache archive (no 'KILNARCHIVE 1' line); make "
                "one with 'kiln cache export FILE'");
  ImportReport r;
  llvm::StringRef rest = archive.drop_front(ArchiveMagic.size());
  size_t seen = 0;
  for (;;) {
    auto [line, after] = rest.split('\n');
    llvm::SmallVector<llvm::StringRef, 3> f;
    line.split(f, ' ');
    size_t count = 0;
    if (f.size() == 2 && f[0] == "end" && !f[1].getAsInteger(10, count)) {
      if (count != seen)
        return fail(fmt::format("the archive says it holds {} entries, but "
                                "{} were found",
                                count, seen));
      return r;
    }
    uint64_t n = 0;
    if (line.size() == rest.size() || f.size() != 3 || f[0] != "entry" ||
        !isCacheKey(f[1]) || f[2].getAsInteger(10, n) || n > after.size())
      return fail(fmt::format("the archive is damaged or cut short after "
                              "{} entries ({} imported)",
                              seen, r.imported));
    ++seen;
    std::string key = f[1].str();
    llvm::StringRef bytes = after.take_front(n);
    rest = after.drop_front(n);
    if (llvm::Error e = checkEntryBytes(bytes, key)) {
      r.refused.push_back(key + ": " + llvm::toString(std::move(e)));
      continue;
    }
    std::string path = dir.entryPath(key), have;
    if (readFile(path, have)) {
      if (llvm::Error e = checkEntryBytes(have, key)) {
        llvm::consumeError(std::move(e)); // damaged: replace it
      } else {
        ++r.present;
        continue;
      }
    }
    std::string why = makePrivateDirectories(path.substr(0, path.rfind('/')));
    if (why.empty())
      why = writeFileAtomically(path, bytes);
    if (!why.empty())
      return fail(why);
    ++r.imported;
    r.bytes += bytes.size();
  }
}

} // namespace kiln::rt
