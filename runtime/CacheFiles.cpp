#include "CacheFiles.h"

#include "llvm/ADT/SmallVector.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {

std::string errnoText() { return std::strerror(errno); }

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

bool readFile(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = readAll(fd, out);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

static bool writeAll(int fd, llvm::StringRef bytes) {
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

std::string makePrivateDirectories(const std::string &path) {
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

bool isReadableDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         ::access(path.c_str(), R_OK | X_OK) == 0;
}

std::string unsafeDirectoryReason(const std::string &dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0)
    return "cannot stat it: " + errnoText();
  if (S_ISLNK(st.st_mode) && ::stat(dir.c_str(), &st) != 0)
    return "cannot stat it: " + errnoText();
  if (st.st_uid != ::geteuid())
    return fmt::format("it belongs to another user (uid {}; you are uid {})",
                       st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("it is writable by {} (mode {:04o})",
                       st.st_mode & S_IWOTH ? "other users" : "its group",
                       st.st_mode & 07777);
  return "";
}

std::string unsafeDirectoryMessage(const std::string &dir,
                                   const std::string &reason) {
  bool own = reason.find("another user") == std::string::npos;
  return fmt::format(
      "kernel cache directory {} is not safe to use: {}. A cubin "
      "from the cache is code that runs on the GPU, so Kiln only trusts a "
      "directory that is yours alone. {}choose another directory with "
      "KILN_CACHE_DIR. The disk cache is off: kernels are compiled in memory "
      "only.",
      dir, reason, own ? fmt::format("Run 'chmod 700 {}', or ", dir) : "");
}

std::string tempFileFor(const std::string &path) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return fmt::format("{}.tmp.{}.{:016x}", path, ::getpid(), rng());
}

bool isTempFileName(llvm::StringRef name, int64_t &pid) {
  size_t at = name.rfind(".tmp.");
  if (at == llvm::StringRef::npos)
    return false;
  auto [pidText, hex] = name.drop_front(at + 5).split('.');
  return hex.size() == 16 && !pidText.getAsInteger(10, pid) && pid > 0;
}

bool isStaleTempFile(const std::string &path, int64_t pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
    return true;
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 &&
         std::time(nullptr) - st.st_mtime > 3600;
}

std::string writeFileAtomically(const std::string &path, llvm::StringRef bytes,
                                const std::function<void()> &afterHalf) {
  std::string tmp = tempFileFor(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return fmt::format("cannot create {}: {}", tmp, errnoText());
  bool ok;
  if (afterHalf) {
    size_t half = bytes.size() / 2;
    ok = writeAll(fd, bytes.take_front(half));
    afterHalf();
    ok = ok && writeAll(fd, bytes.drop_front(half));
  } else {
    ok = writeAll(fd, bytes);
  }
  ok = ok && ::fsync(fd) == 0;
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

FileLock::FileLock(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  int r;
  while ((r = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    ::close(fd);
    return;
  }
  fd_ = fd;
}

FileLock::~FileLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the lock
}

static Counters parseCounters(llvm::StringRef text) {
  Counters out;
  llvm::SmallVector<llvm::StringRef, 8> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    auto [name, value] = line.trim().split(' ');
    int64_t v;
    if (!name.empty() && !value.trim().getAsInteger(10, v))
      out[name.str()] = v;
  }
  return out;
}

Counters readCounters(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  while (::flock(fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  std::string text;
  bool ok = readAll(fd, text);
  ::close(fd);
  return ok ? parseCounters(text) : Counters();
}

bool updateCounters(const std::string &path,
                    const std::function<void(Counters &)> &update) {
  FileLock lock(path);
  if (!lock.locked())
    return false;
  std::string text;
  if (!readAll(lock.fd(), text))
    return false;
  Counters c = parseCounters(text);
  update(c);
  std::string out;
  for (const auto &[name, value] : c)
    out += fmt::format("{} {:>20}\n", name, value);
  // Same names, same length: one small pwrite replaces the record in place.
  return ::pwrite(lock.fd(), out.data(), out.size(), 0) ==
             static_cast<ssize_t>(out.size()) &&
         ::ftruncate(lock.fd(), static_cast<off_t>(out.size())) == 0;
}

} // namespace kiln::rt
