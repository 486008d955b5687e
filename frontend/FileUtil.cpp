#include "FileUtil.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <climits>
#include <unistd.h>
#include <vector>

namespace kiln {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path, uint64_t streamLimit) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return fileError(path, "cannot read file: {}", ec.message());
  if (st.type() == llvm::sys::fs::file_type::directory_file)
    return fileError(path, "cannot read file: it is a directory");
  if (st.type() == llvm::sys::fs::file_type::regular_file) {
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!buf)
      return fileError(path, "cannot read file: {}", buf.getError().message());
    return std::move(*buf);
  }
  // A pipe or a device: its size is unknown until it ends, if it ends.
  llvm::Expected<llvm::sys::fs::file_t> fd =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!fd)
    return fileError(path, "cannot read file: {}",
                     llvm::toString(fd.takeError()));
  auto close = llvm::make_scope_exit([&] { llvm::sys::fs::closeFile(*fd); });
  std::string data;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFile(*fd, chunk);
    if (!n)
      return fileError(path, "cannot read file: {}",
                       llvm::toString(n.takeError()));
    if (*n == 0)
      return llvm::MemoryBuffer::getMemBufferCopy(data, path);
    data.append(chunk.data(), *n);
    if (data.size() > streamLimit)
      return fileError(path,
                       "cannot read file: it is not a regular file and goes "
                       "on past {} bytes; save it to a file first",
                       streamLimit);
  }
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
