//===- FifoFeeder.h - A FIFO fed from a thread ----------------*- C++ -*-===//
//
// Tests of reading pipes and devices: a named pipe whose writer counts how
// many bytes it got rid of before the reader closed it, so a test can
// assert that a reader stopped early rather than read a stream to its end.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_TENSORIO_FIFOFEEDER_H
#define KILN_TESTS_TENSORIO_FIFOFEEDER_H

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fcntl.h>
#include <pthread.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace kiln::test {

/// Makes a FIFO at `path` and writes into it, from a thread, `head` and
/// then `tail` bytes of `fill` (a stand-in for /dev/zero when `tail` is
/// large), until they are written or the reader closes the FIFO.
class FifoFeeder {
public:
  FifoFeeder(std::string path, std::string head, uint64_t tail = 0,
             char fill = '\0')
      : path_(std::move(path)), head_(std::move(head)), tail_(tail),
        fill_(fill) {
    ok_ = ::mkfifo(path_.c_str(), 0600) == 0;
    if (ok_)
      thread_ = std::thread([this] { run(); });
  }
  ~FifoFeeder() { written(); }

  bool ok() const { return ok_; }

  /// Waits for the writer and returns how many bytes it wrote. Call it once
  /// the reader has closed the FIFO (or never opened it). The count
  /// includes what the pipe buffer (64 KiB on Linux) held unread.
  uint64_t written() {
    stop_ = true;
    if (thread_.joinable())
      thread_.join();
    return written_;
  }

private:
  void run() {
    // SIGPIPE is blocked in this thread only: a write to a closed FIFO
    // then fails with EPIPE, and the processes the test starts keep the
    // default.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    // Not blocking in open(): a reader that fails before opening the FIFO
    // must not hang the test.
    int fd = -1;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (fd < 0 && !stop_ && std::chrono::steady_clock::now() < deadline) {
      fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd < 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (fd < 0)
      return;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::string block(4096, fill_);
    bool open = writeAll(fd, head_.data(), head_.size());
    for (uint64_t left = tail_; open && left > 0;) {
      size_t n = std::min<uint64_t>(left, block.size());
      open = writeAll(fd, block.data(), n);
      left -= n;
    }
    ::close(fd);
    // Drop the EPIPE's signal, pending in this thread.
    timespec zero = {0, 0};
    while (sigtimedwait(&pipe, nullptr, &zero) > 0) {
    }
  }

  bool writeAll(int fd, const char *bytes, size_t size) {
    for (size_t at = 0; at < size;) {
      ssize_t n = ::write(fd, bytes + at, size - at);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      at += n;
      written_ += n;
    }
    return true;
  }

  std::string path_, head_;
  uint64_t tail_;
  char fill_;
  bool ok_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> written_{0};
  std::thread thread_;
};

} // namespace kiln::test

#endif
