#include "KernelCache.h"
#include "CacheFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {

namespace {

std::string errnoText() { return std::strerror(errno); }

/// mkdir -p, each component it creates with mode 0700. "" on success, else
/// the reason.
std::string makeDirectories(const std::string &path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/')
      continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return fmt::format("cannot create {}: {}", prefix, errnoText());
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errnoText();
  if (!S_ISDIR(st.st_mode))
    return "not a directory";
  if (::access(path.c_str(), W_OK | X_OK) != 0)
    return "not writable: " + errnoText();
  return "";
}

std::string defaultDirectory() {
  if (const char *d = std::getenv("KILN_CACHE_DIR"); d && *d)
    return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/kiln";
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/kiln";
  return "";
}

bool truthy(const char *v) {
  if (!v)
    return false;
  std::string s = llvm::StringRef(v).trim().lower();
  return s == "1" || s == "true" || s == "yes";
}

/// Reads the whole open file.
bool readAll(int fd, std::string &out) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0)
      return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool writeAll(int fd, llvm::StringRef bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes = bytes.drop_front(static_cast<size_t>(n));
  }
  return true;
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory (unique per process and call), fsync, rename. "" on success.
std::string writeAtomically(const std::string &path, llvm::StringRef bytes) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  std::string tmp = fmt::format("{}.tmp.{}.{:016x}", path, ::getpid(), rng());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return fmt::format("cannot create {}: {}", tmp, errnoText());
  bool ok = writeAll(fd, bytes) && ::fsync(fd) == 0;
  std::string why =
      ok ? "" : fmt::format("cannot write {}: {}", tmp, errnoText());
  if (::close(fd) != 0 && ok)
    why = fmt::format("cannot write {}: {}", tmp, errnoText());
  if (why.empty() && ::rename(tmp.c_str(), path.c_str()) != 0)
    why = fmt::format("cannot rename to {}: {}", path, errnoText());
  if (!why.empty())
    ::unlink(tmp.c_str());
  return why;
}

/// A length-prefixed field of the key, so no two inputs serialise alike.
void hashField(llvm::SHA256 &h, llvm::StringRef bytes) {
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(uint64_t(bytes.size()) >> (8 * i));
  h.update(llvm::ArrayRef<uint8_t>(len));
  h.update(bytes);
}

} // namespace

CacheOptions cacheOptionsFromEnvironment() {
  CacheOptions o;
  if (const char *d = std::getenv("KILN_CACHE_DIR"))
    o.directory = d;
  o.disableDisk = truthy(std::getenv("KILN_CACHE_DISABLE"));
  return o;
}

KernelCache::KernelCache(CacheOptions options, std::string kilnVersion)
    : opts_(std::move(options)), kilnVersion_(std::move(kilnVersion)) {
  if (opts_.disableDisk)
    return;
  std::string dir =
      opts_.directory.empty() ? defaultDirectory() : opts_.directory;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::string why =
      dir.empty() ? "no $HOME to put it under" : makeDirectories(dir);
  if (why.empty()) {
    dir_ = dir;
    return;
  }
  warn(fmt::format("kiln: kernel cache directory {} is not usable ({}); "
                   "compiling in memory only",
                   dir.empty() ? "(none)" : dir, why));
  warnedDir_ = true;
}

void KernelCache::warn(const std::string &line) {
  llvm::raw_ostream &os = opts_.warnings ? *opts_.warnings : llvm::errs();
  os << line << "\n";
  os.flush();
}

std::string KernelCache::keyOf(const CompileRequest &req) const {
  llvm::SHA256 h;
  hashField(h, "kiln kernel cache key 1");
  hashField(h, req.source);
  hashField(h, std::to_string(req.headers.size()));
  for (const SourceHeader &hdr : req.headers) {
    hashField(h, hdr.name);
    hashField(h, hdr.text);
  }
  std::vector<std::string> options = req.allOptions();
  hashField(h, std::to_string(options.size()));
  for (const std::string &o : options)
    hashField(h, o);
  hashField(h, nvrtcVersionString());
  hashField(h, kilnVersion_);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string KernelCache::entryPath(const std::string &key) const {
  if (dir_.empty())
    return "";
  return fmt::format("{}/{}/{}.kentry", dir_, key.substr(0, 2), key);
}

std::shared_ptr<const std::vector<char>>
KernelCache::loadFromDisk(const std::string &key) {
  std::string path = entryPath(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return nullptr; // a miss (or unreadable: treated as one, then rewritten)
  std::string bytes;
  struct stat st {};
  bool read = ::fstat(fd, &st) == 0 && readAll(fd, bytes);
  llvm::Expected<CacheEntry> entry =
      read ? decodeCacheEntry(bytes)
           : llvm::make_error<llvm::StringError>(
                 "cannot read: " + errnoText(), llvm::inconvertibleErrorCode());
  if (entry && entry->key != key)
    entry = llvm::make_error<llvm::StringError>(
        "holds key " + entry->key + ", not the one its name says",
        llvm::inconvertibleErrorCode());
  if (!entry) {
    std::string why = llvm::toString(entry.takeError());
    // Remove it only if it is still the file we read: another process may
    // have renamed a good entry into place meanwhile.
    struct stat now;
    if (::stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino &&
        now.st_dev == st.st_dev)
      ::unlink(path.c_str());
    ::close(fd);
    std::lock_guard<std::mutex> lock(mu_);
    warn(fmt::format("kiln: removed corrupt kernel cache entry {}: {}; "
                     "recompiling",
                     path, why));
    return nullptr;
  }
  ::futimens(fd, nullptr); // last use; best effort (may be read-only)
  ::close(fd);
  return std::make_shared<const std::vector<char>>(std::move(entry->cubin));
}

void KernelCache::storeOnDisk(const std::string &key, const CompileRequest &req,
                              const KernelMetadata &meta,
                              const std::vector<char> &cubin) {
  std::string path = entryPath(key);
  std::string sub = path.substr(0, path.rfind('/'));
  std::string why = makeDirectories(sub);
  if (why.empty()) {
    CacheEntry e;
    e.meta = meta;
    e.key = key;
    e.source = req.source;
    e.cubin = cubin;
    e.created = e.lastUsed = static_cast<int64_t>(std::time(nullptr));
    why = writeAtomically(path, encodeCacheEntry(e));
  }
  if (why.empty())
    return;
  std::lock_guard<std::mutex> lock(mu_);
  if (warnedDir_)
    return;
  warnedDir_ = true;
  warn(fmt::format("kiln: kernel cache directory {} is not usable ({}); "
                   "compiling in memory only",
                   dir_, why));
}

llvm::Expected<CacheLookup>
KernelCache::getOrCompile(const CompileRequest &req,
                          const KernelMetadata &meta) {
  CacheLookup out;
  out.key = keyOf(req);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_.find(out.key); it != memory_.end()) {
      out.cubin = it->second;
      out.source = CacheLookup::Source::Memory;
      return out;
    }
  }
  if (!dir_.empty())
    out.cubin = loadFromDisk(out.key);
  if (out.cubin) {
    out.source = CacheLookup::Source::Disk;
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
    full.arch = req.arch;
    full.options = req.allOptions();
    full.nvrtcVersion = nvrtcVersionString();
    full.kilnVersion = kilnVersion_;
    full.compileMs = compiled->compileMs;
    out.cubin =
        std::make_shared<const std::vector<char>>(std::move(compiled->cubin));
    if (!dir_.empty())
      storeOnDisk(out.key, req, full, *out.cubin);
  }
  std::lock_guard<std::mutex> lock(mu_);
  memory_.emplace(out.key, out.cubin);
  return out;
}

llvm::Expected<CacheEntry> readCacheEntry(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: cannot open: %s", path.c_str(),
                                   errnoText().c_str());
  std::string bytes;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && readAll(fd, bytes);
  std::string why = ok ? "" : errnoText();
  ::close(fd);
  if (!ok)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: cannot read: %s", path.c_str(),
                                   why.c_str());
  llvm::Expected<CacheEntry> entry = decodeCacheEntry(bytes);
  if (!entry)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s",
                                   path.c_str(),
                                   llvm::toString(entry.takeError()).c_str());
  entry->lastUsed = std::max<int64_t>(entry->lastUsed, st.st_mtime);
  return entry;
}

} // namespace kiln::rt
