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

/// One line of an archive after its magic, and what it announces.
struct Record {
  enum Kind { Entry, End, Bad } kind = Bad;
  llvm::StringRef key; // of an entry
  uint64_t number = 0; // an entry's size, or the count on the "end" line
  size_t lineSize = 0; // with its newline
};

/// The longest line: "entry <64 hex digits> <20 digits>\n".
constexpr size_t MaxLine = 128;

/// The line at the start of `rest`; Bad without a whole line.
Record parseRecord(llvm::StringRef rest) {
  Record r;
  size_t nl = rest.find('\n');
  if (nl == llvm::StringRef::npos)
    return r;
  r.lineSize = nl + 1;
  llvm::SmallVector<llvm::StringRef, 3> f;
  rest.take_front(nl).split(f, ' ');
  if (f.size() == 2 && f[0] == "end" && !f[1].getAsInteger(10, r.number))
    r.kind = Record::End;
  else if (f.size() == 3 && f[0] == "entry" && isCacheKey(f[1]) &&
           !f[2].getAsInteger(10, r.number))
    r.kind = Record::Entry;
  r.key = r.kind == Record::Entry ? f[1] : llvm::StringRef();
  return r;
}

llvm::Error fail(const std::string &what) {
  return llvm::make_error<llvm::StringError>(what,
                                             llvm::inconvertibleErrorCode());
}

llvm::Error notAnArchive() {
  return fail("not a Kiln cache archive (no 'KILNARCHIVE 1' line); make "
              "one with 'kiln cache export FILE'");
}

llvm::Error damaged(size_t seen, size_t imported) {
  return fail(fmt::format("the archive is damaged or cut short after {} "
                          "entries ({} imported)",
                          seen, imported));
}

llvm::Error wrongCount(uint64_t count, size_t seen) {
  return fail(fmt::format("the archive says it holds {} entries, but {} "
                          "were found",
                          count, seen));
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
  if (!archive.startswith(ArchiveMagic))
    return notAnArchive();
  ImportReport r;
  llvm::StringRef rest = archive.drop_front(ArchiveMagic.size());
  size_t seen = 0;
  for (;;) {
    Record rec = parseRecord(rest);
    rest = rest.drop_front(rec.lineSize);
    if (rec.kind == Record::End) {
      if (rec.number != seen)
        return wrongCount(rec.number, seen);
      // Say so rather than drop a second archive run into this one.
      if (!rest.empty())
        return fail(fmt::format("{} bytes follow the archive's 'end' line "
                                "(two archives run together?); only the "
                                "entries before it were read",
                                rest.size()));
      return r;
    }
    if (rec.kind == Record::Bad || rec.number > rest.size())
      return damaged(seen, r.imported);
    ++seen;
    std::string key = rec.key.str();
    llvm::StringRef bytes = rest.take_front(rec.number);
    rest = rest.drop_front(rec.number);
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

llvm::Expected<ArchiveScanner::Extent>
ArchiveScanner::next(llvm::StringRef prefix) {
  if (pos_ == 0) {
    if (prefix.size() < ArchiveMagic.size())
      return Extent{ArchiveMagic.size(), false};
    if (!prefix.startswith(ArchiveMagic))
      return notAnArchive();
    pos_ = ArchiveMagic.size();
  }
  for (;;) {
    llvm::StringRef rest = prefix.drop_front(pos_);
    Record rec = parseRecord(rest);
    if (rec.kind == Record::Bad && rec.lineSize == 0 && rest.size() < MaxLine)
      return Extent{pos_ + MaxLine, false}; // the line may not be all here
    if (rec.kind == Record::Bad)
      return damaged(seen_, 0);
    if (rec.kind == Record::End) {
      if (rec.number != seen_)
        return wrongCount(rec.number, seen_);
      return Extent{pos_ + rec.lineSize, true};
    }
    uint64_t end = 0; // wraps around only for a size no stream has
    if (__builtin_add_overflow(pos_ + rec.lineSize, rec.number, &end))
      return damaged(seen_, 0);
    if (end > prefix.size())
      return Extent{end, false};
    pos_ = end;
    ++seen_;
  }
}

} // namespace kiln::rt
