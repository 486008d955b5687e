#include "KernelCache.h"
#include "CacheFiles.h"
#include "CacheFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {

namespace {

/// A length-prefixed field of a hash, so no two inputs serialise alike.
void hashField(llvm::SHA256 &h, llvm::StringRef bytes) {
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(uint64_t(bytes.size()) >> (8 * i));
  h.update(llvm::ArrayRef<uint8_t>(len));
  h.update(bytes);
}

std::string hex(llvm::SHA256 &h) {
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

llvm::Error entryError(const std::string &what) {
  return llvm::make_error<llvm::StringError>(what,
                                             llvm::inconvertibleErrorCode());
}

} // namespace

CacheKeyParts cacheKeyParts(const CompileRequest &req,
                            llvm::StringRef kilnVersion) {
  CacheKeyParts p;
  p.sourceHash = sha256Hex(req.source);
  llvm::SHA256 h;
  hashField(h, std::to_string(req.headers.size()));
  for (const SourceHeader &hdr : req.headers) {
    hashField(h, hdr.name);
    hashField(h, hdr.text);
  }
  p.headersHash = hex(h);
  p.options = req.allOptions();
  p.arch = req.arch;
  p.nvrtcVersion = nvrtcVersionString();
  p.kilnVersion = kilnVersion.str();
  return p;
}

CacheKeyParts cacheKeyParts(const KernelMetadata &m) {
  return {m.sourceHash, m.headersHash,  m.options,
          m.arch,       m.nvrtcVersion, m.kilnVersion};
}

std::string cacheKey(const CacheKeyParts &p) {
  llvm::SHA256 h;
  hashField(h, "kiln kernel cache key 2");
  hashField(h, p.sourceHash);
  hashField(h, p.headersHash);
  hashField(h, std::to_string(p.options.size()));
  for (const std::string &o : p.options)
    hashField(h, o);
  hashField(h, p.arch);
  hashField(h, p.nvrtcVersion);
  hashField(h, p.kilnVersion);
  return hex(h);
}

CacheOptions cacheOptionsFromEnvironment() {
  CacheSettings s = resolveCacheSettings();
  CacheOptions o;
  o.directory = s.directory;
  o.disableDisk = s.disable;
  o.maxBytes = s.maxBytes;
  o.recompile = s.recompile;
  o.settingProblems = s.problems;
  return o;
}

KernelCache::KernelCache(CacheOptions options, std::string kilnVersion)
    : opts_(std::move(options)), kilnVersion_(std::move(kilnVersion)) {
  for (const std::string &p : opts_.settingProblems)
    warn("kiln: kernel cache setting: " + p);
  if (opts_.disableDisk)
    return;
  std::string dir = opts_.directory.empty() ? resolveCacheSettings().directory
                                            : opts_.directory;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::string why =
      dir.empty() ? "no $HOME to put it under" : makePrivateDirectories(dir);
  // A directory we may read but not write (a read-only cache, shared or on
  // a read-only mount) still serves its entries; what is compiled here
  // cannot be stored, which storeOnDisk says once.
  if (!why.empty() && !dir.empty() && isReadableDirectory(dir))
    why.clear();
  if (!why.empty()) {
    warn(fmt::format("kiln: kernel cache directory {} is not usable ({}); "
                     "compiling in memory only",
                     dir.empty() ? "(none)" : dir, why));
    warnedDir_ = true;
    return;
  }
  if (std::string unsafe = unsafeDirectoryReason(dir); !unsafe.empty()) {
    warn("kiln: " + unsafeDirectoryMessage(dir, unsafe));
    warnedDir_ = true;
    return;
  }
  dir_ = dir;
  disk_ = std::make_unique<CacheDirectory>(dir);
}

void KernelCache::warn(const std::string &line) {
  llvm::raw_ostream &os = opts_.warnings ? *opts_.warnings : llvm::errs();
  os << line << "\n";
  os.flush();
}

std::string KernelCache::keyOf(const CompileRequest &req) const {
  return cacheKey(cacheKeyParts(req, kilnVersion_));
}

std::string KernelCache::entryPath(const std::string &key) const {
  return disk_ ? disk_->entryPath(key) : "";
}

std::shared_ptr<const std::vector<char>>
KernelCache::loadFromDisk(const std::string &key, double &compileMs) {
  std::string path = entryPath(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return nullptr; // a miss (or unreadable: treated as one, then rewritten)
  std::string bytes;
  struct stat st {};
  bool read = ::fstat(fd, &st) == 0 && readAll(fd, bytes);
  llvm::Expected<CacheEntry> entry =
      read ? decodeCacheEntry(bytes)
           : entryError("cannot read: " + errnoText());
  if (entry && st.st_uid != ::geteuid())
    entry = entryError(
        fmt::format("it belongs to another user (uid {})", st.st_uid));
  if (entry)
    if (llvm::Error e = checkCacheEntry(*entry, key))
      entry = std::move(e);
  if (!entry) {
    std::string why = llvm::toString(entry.takeError());
    // Remove it only if it is still the file we read: another process may
    // have renamed a good entry into place meanwhile.
    struct stat now;
    std::string kept; // why it stays, in a read-only cache
    if (::stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino &&
        now.st_dev == st.st_dev && ::unlink(path.c_str()) != 0)
      kept = errnoText();
    ::close(fd);
    std::lock_guard<std::mutex> lock(mu_);
    warn(kept.empty() ? fmt::format("kiln: removed corrupt kernel cache entry "
                                    "{}: {}; recompiling",
                                    path, why)
                      : fmt::format("kiln: corrupt kernel cache entry {}: {} "
                                    "(it cannot be removed: {}); recompiling",
                                    path, why, kept));
    return nullptr;
  }
  ::futimens(fd, nullptr); // last use; best effort (may be read-only)
  ::close(fd);
  compileMs = entry->meta.compileMs;
  return std::make_shared<const std::vector<char>>(std::move(entry->cubin));
}

uint64_t KernelCache::storeOnDisk(const std::string &key,
                                  const CompileRequest &req,
                                  const KernelMetadata &meta,
                                  const std::vector<char> &cubin) {
  std::string path = entryPath(key);
  std::string sub = path.substr(0, path.rfind('/'));
  std::string why = makePrivateDirectories(sub);
  std::string bytes;
  if (why.empty()) {
    CacheEntry e;
    e.meta = meta;
    e.key = key;
    e.source = req.source;
    e.cubin = cubin;
    e.created = e.lastUsed = static_cast<int64_t>(std::time(nullptr));
    bytes = encodeCacheEntry(e);
    why = writeFileAtomically(path, bytes);
  }
  if (why.empty())
    return bytes.size();
  std::lock_guard<std::mutex> lock(mu_);
  if (!warnedDir_)
    warn(fmt::format("kiln: cannot store kernels in the kernel cache "
                     "directory {} ({}); the kernels compiled now are kept "
                     "in memory only, and the entries already there are "
                     "still used",
                     dir_, why));
  warnedDir_ = true;
  return 0;
}

llvm::Expected<CacheLookup>
KernelCache::getOrCompile(const CompileRequest &req,
                          const KernelMetadata &meta) {
  CacheLookup out;
  CacheKeyParts parts = cacheKeyParts(req, kilnVersion_);
  out.key = cacheKey(parts);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_.find(out.key); it != memory_.end()) {
      out.cubin = it->second;
      out.source = CacheLookup::Source::Memory;
      return out;
    }
  }
  double savedMs = 0;
  if (disk_ && !opts_.recompile)
    out.cubin = loadFromDisk(out.key, savedMs);
  if (out.cubin) {
    out.source = CacheLookup::Source::Disk;
    disk_->recordHit(out.key, savedMs);
  } else {
    // Compiled outside the lock: two threads may compile the same key, and
    // both get the same cubin.
    llvm::Expected<CompileResult> compiled = compileCuda(req);
    if (!compiled)
      return compiled.takeError();
    out.source = CacheLookup::Source::Compiled;
    out.compileMs = compiled->compileMs;
    out.log = std::move(compiled->log);
    KernelMetadata full = meta;
    full.sourceHash = parts.sourceHash;
    full.headersHash = parts.headersHash;
    full.arch = parts.arch;
    full.options = parts.options;
    full.nvrtcVersion = parts.nvrtcVersion;
    full.kilnVersion = parts.kilnVersion;
    full.compileMs = compiled->compileMs;
    out.cubin =
        std::make_shared<const std::vector<char>>(std::move(compiled->cubin));
    if (disk_) {
      uint64_t stored = storeOnDisk(out.key, req, full, *out.cubin);
      out.stored = stored > 0;
      if (disk_->recordMiss(stored, opts_.maxBytes))
        disk_->cleanup(opts_.maxBytes);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  memory_.emplace(out.key, out.cubin);
  return out;
}

static llvm::Error fileError(const std::string &path, const std::string &what) {
  return entryError(path + ": " + what);
}

llvm::Expected<CacheEntry> readCacheEntry(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fileError(path, "cannot open: " + errnoText());
  std::string bytes;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && readAll(fd, bytes);
  std::string why = ok ? "" : errnoText();
  ::close(fd);
  if (!ok)
    return fileError(path, "cannot read: " + why);
  llvm::Expected<CacheEntry> entry = decodeCacheEntry(bytes);
  if (!entry)
    return fileError(path, llvm::toString(entry.takeError()));
  entry->lastUsed = std::max<int64_t>(entry->lastUsed, st.st_mtime);
  return entry;
}

llvm::Expected<CacheEntry> readCacheEntryMetadata(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fileError(path, "cannot open: " + errnoText());
  // The magic and lengths lines, then as much of the metadata as they say.
  std::string head(256, '\0');
  ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  head.resize(n > 0 ? size_t(n) : 0);
  size_t need = decodeCacheEntryHeaderSize(head);
  if (need > head.size()) {
    head.resize(need);
    n = ::pread(fd, head.data(), need, 0);
    head.resize(n > 0 ? size_t(n) : 0);
  }
  struct stat st {};
  ::fstat(fd, &st);
  ::close(fd);
  llvm::Expected<CacheEntry> entry = decodeCacheEntryMetadata(head);
  if (!entry)
    return fileError(path, llvm::toString(entry.takeError()));
  entry->lastUsed = std::max<int64_t>(entry->lastUsed, st.st_mtime);
  return entry;
}

llvm::Error checkCacheEntry(const CacheEntry &e, llvm::StringRef fileKey) {
  if (e.key != fileKey)
    return entryError("holds key " + e.key + ", not the one its name says");
  if (!(e.cubin.size() > 4 && e.cubin[0] == 0x7f && e.cubin[1] == 'E' &&
        e.cubin[2] == 'L' && e.cubin[3] == 'F'))
    return entryError("its cubin is not an ELF file");
  const KernelMetadata &m = e.meta;
  if (m.sourceHash.empty())
    return llvm::Error::success(); // written by Kiln 0.1.0: no key parts
  if (sha256Hex(e.source) != m.sourceHash)
    return entryError("its source is not the one its key was made from");
  if (cacheKey(cacheKeyParts(m)) != e.key)
    return entryError("its key is not the hash of the key parts it records");
  return llvm::Error::success();
}

} // namespace kiln::rt
