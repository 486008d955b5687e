#include "FileUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace kiln {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return fileError(path, "cannot read file: {}", buf.getError().message());
  return std::move(*buf);
}

static llvm::Error cannotWrite(llvm::StringRef path, std::error_code ec) {
  return fileError(path, "cannot write file: {}", ec.message());
}

llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<void(llvm::raw_ostream &)> write) {
  int fd = -1;
  llvm::SmallString<256> temp;
  std::string model = (path + ".tmp-%%%%%%%%").str();
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return cannotWrite(path, ec);
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    ec = os.error();
    os.clear_error();
  }
  if (!ec)
    ec = llvm::sys::fs::rename(temp, path);
  if (ec) {
    llvm::sys::fs::remove(temp);
    return cannotWrite(path, ec);
  }
  return llvm::Error::success();
}

} // namespace kiln
