#include "FileUtil.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <climits>
#include <unistd.h>
#include <vector>

namespace kiln {

namespace {

/// What is read past a stream's announced end, to tell trailing bytes from
/// a stream that goes on; also the size of one read.
constexpr size_t kChunk = size_t(64) << 10;

/// The bytes read from a stream, owned without another copy.
class StreamBuffer final : public llvm::MemoryBuffer {
public:
  StreamBuffer(std::string data, llvm::StringRef name)
      : data_(std::move(data)), name_(name.str()) {
    init(data_.data(), data_.data() + data_.size(),
         /*RequiresNullTerminator=*/false);
  }
  llvm::StringRef getBufferIdentifier() const override { return name_; }
  BufferKind getBufferKind() const override { return MemoryBuffer_Malloc; }

private:
  std::string data_, name_;
};

/// Reads a pipe or device in the steps `framing` asks for.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readStream(llvm::StringRef path, StreamFraming framing, uint64_t limit) {
  // Standard input is read where it is: opening a FIFO anew waits for a
  // writer, and the one that fed it may be gone (`kiln ... < fifo`).
  llvm::sys::fs::file_t fd = -1;
  if (path == "/dev/stdin") {
    fd = ::dup(0);
    if (fd < 0)
      return fileError(
          path, "cannot read file: {}",
          std::error_code(errno, std::generic_category()).message());
  } else {
    llvm::Expected<llvm::sys::fs::file_t> opened =
        llvm::sys::fs::openNativeFileForRead(path);
    if (!opened)
      return fileError(path, "cannot read file: {}",
                       llvm::toString(opened.takeError()));
    fd = *opened;
  }
  auto close = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(fd); });
  std::string data;
  std::vector<char> chunk(kChunk);
  // Reads once, at most up to `want` bytes in all; false at the end.
  auto readSome = [&](uint64_t want) -> llvm::Expected<bool> {
    size_t step = std::min<uint64_t>(want - data.size(), chunk.size());
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFile(
        fd, llvm::MutableArrayRef<char>(chunk.data(), step));
    if (!n)
      return fileError(path, "cannot read file: {}",
                       llvm::toString(n.takeError()));
    data.append(chunk.data(), *n);
    return *n != 0;
  };
  // Reads until `data` holds `want` bytes (true) or the stream ends (false).
  auto fill = [&](uint64_t want) -> llvm::Expected<bool> {
    while (data.size() < want) {
      llvm::Expected<bool> more = readSome(want);
      if (!more || !*more)
        return more;
    }
    return true;
  };
  auto done = [&]() -> std::unique_ptr<llvm::MemoryBuffer> {
    return std::make_unique<StreamBuffer>(std::move(data), path);
  };
  for (;;) {
    llvm::Expected<StreamExtent> extent = framing(data);
    if (!extent)
      return extent.takeError();
    if (extent->whole) {
      if (extent->bytes > limit)
        return fileError(path,
                         "cannot read file: it announces {} bytes, and a "
                         "pipe or device is read up to {} bytes; save it to "
                         "a file first",
                         extent->bytes, limit);
      // A framing that read lines ahead may have read past the end already.
      llvm::Expected<bool> full = fill(extent->bytes);
      if (!full)
        return full.takeError();
      if (!*full) // cut short: the parser says what is missing
        return done();
      // Bytes after the end are left to the parser, if the stream stops.
      llvm::Expected<bool> more = fill(extent->bytes + kChunk + 1);
      if (!more)
        return more.takeError();
      if (*more)
        return fileError(path,
                         "cannot read file: it goes on past the {} bytes it "
                         "announces; a pipe or device is read no further",
                         extent->bytes);
      return done();
    }
    assert(extent->bytes > data.size() && "a stream framing must ask for more");
    // One read at a time, so the framing judges each step.
    llvm::Expected<bool> more = readSome(std::min(extent->bytes, limit + 1));
    if (!more)
      return more.takeError();
    if (data.size() > limit)
      return fileError(path,
                       "cannot read file: it is not a regular file and goes "
                       "on past {} bytes; save it to a file first",
                       limit);
    if (!*more) // cut short: the parser says what is missing
      return done();
  }
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path, StreamFraming framing,
              uint64_t streamLimit) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return fileError(path, "cannot read file: {}", ec.message());
  if (st.type() == llvm::sys::fs::file_type::directory_file)
    return fileError(path, "cannot read file: it is a directory");
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return readStream(path, framing, streamLimit);
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return fileError(path, "cannot read file: {}", buf.getError().message());
  return std::move(*buf);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path, uint64_t streamLimit) {
  return readWholeFile(
      path,
      [](llvm::StringRef prefix) -> llvm::Expected<StreamExtent> {
        return StreamExtent{prefix.size() + kChunk, false};
      },
      streamLimit);
}

std::string resolvedPath(llvm::StringRef path) {
  namespace fs = llvm::sys::fs;
  llvm::SmallString<256> p;
  if (!fs::real_path(path, p))
    return std::string(p.str());
  // Not there (yet), or a link to nothing: resolve the folder, then follow
  // the last component while it is a link.
  p = path;
  fs::make_absolute(p);
  for (int hops = 0; hops < 40; ++hops) {
    llvm::SmallString<256> full;
    if (fs::real_path(llvm::sys::path::parent_path(p), full))
      full = llvm::sys::path::parent_path(p);
    llvm::sys::path::append(full, llvm::sys::path::filename(p));
    fs::file_status st;
    char target[PATH_MAX];
    ssize_t n = -1;
    if (!fs::status(full, st, /*Follow=*/false) &&
        st.type() == fs::file_type::symlink_file)
      n = ::readlink(full.c_str(), target, sizeof target);
    if (n < 0)
      return std::string(full.str());
    llvm::StringRef link(target, static_cast<size_t>(n));
    p = llvm::sys::path::is_absolute(link)
            ? llvm::SmallString<256>(link)
            : llvm::SmallString<256>(llvm::sys::path::parent_path(full));
    if (llvm::sys::path::is_relative(link))
      llvm::sys::path::append(p, link);
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/false);
  }
  return std::string(p.str()); // a loop of links: writing it will fail
}

std::string fileIdentity(llvm::StringRef path) {
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st))
    return "path " + resolvedPath(path);
  if (st.type() == llvm::sys::fs::file_type::character_file)
    return "";
  llvm::sys::fs::UniqueID id = st.getUniqueID();
  return fmt::format("file {}:{}", id.getDevice(), id.getFile());
}

static llvm::Error cannotWrite(llvm::StringRef path, std::error_code ec) {
  return fileError(path, "cannot write file: {}", ec.message());
}

/// Writes through `write` and closes `os`; the stream's error, if any.
static std::error_code
writeAndClose(llvm::raw_fd_ostream &os,
              llvm::function_ref<void(llvm::raw_ostream &)> write) {
  write(os);
  os.close();
  std::error_code ec = os.error();
  os.clear_error();
  return ec;
}

llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<void(llvm::raw_ostream &)> write) {
  // A device or a pipe (/dev/stdout) is written in place: renaming a file
  // over it would replace it.
  llvm::sys::fs::file_status st;
  bool exists = !llvm::sys::fs::status(path, st);
  if (exists && st.type() != llvm::sys::fs::file_type::regular_file) {
    if (st.type() == llvm::sys::fs::file_type::directory_file)
      return cannotWrite(path, std::make_error_code(std::errc::is_a_directory));
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec)
      ec = writeAndClose(os, write);
    return ec ? cannotWrite(path, ec) : llvm::Error::success();
  }
  // Through a symbolic link: the temporary file goes beside the file the
  // link names, and replaces that file, not the link.
  const std::string target = resolvedPath(path);
  int fd = -1;
  llvm::SmallString<256> temp;
  std::string model = target + ".tmp-%%%%%%%%";
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return cannotWrite(path, ec);
  llvm::sys::RemoveFileOnSignal(temp);
  auto forget =
      llvm::make_scope_exit([&] { llvm::sys::DontRemoveFileOnSignal(temp); });
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  std::error_code ec;
  if (exists)
    ec = llvm::sys::fs::setPermissions(fd, st.permissions());
  if (!ec)
    ec = writeAndClose(os, write);
  if (!ec)
    ec = llvm::sys::fs::rename(temp, target);
  if (ec) {
    llvm::sys::fs::remove(temp);
    return cannotWrite(path, ec);
  }
  return llvm::Error::success();
}

} // namespace kiln
