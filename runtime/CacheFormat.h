//===- CacheFormat.h - The bytes of a kernel cache entry -------*- C++ -*-===//
//
// Internal to runtime/. Encodes and decodes one entry file; the layout is
// described in KernelCache.h. decodeCacheEntry checks everything it can
// (magic, lengths, checksum, metadata) and says what is wrong; it never
// returns a damaged entry.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CACHEFORMAT_H
#define KILN_RUNTIME_CACHEFORMAT_H

#include "KernelCache.h"

#include "llvm/ADT/StringRef.h"

namespace kiln::rt {

/// Lowercase hex SHA-256 of `bytes`.
std::string sha256Hex(llvm::StringRef bytes);

/// The whole file for `entry` (its created/lastUsed go in the metadata).
std::string encodeCacheEntry(const CacheEntry &entry);

/// Parses a whole file. The error is a short phrase for a warning line:
/// "truncated: 812 of 20480 bytes", "checksum mismatch", ...
llvm::Expected<CacheEntry> decodeCacheEntry(llvm::StringRef bytes);

/// How many bytes from the start of a file decodeCacheEntryMetadata needs,
/// judging by its first bytes `head` (at least the magic and lengths lines
/// when the file has them).
size_t decodeCacheEntryHeaderSize(llvm::StringRef head);
/// Parses the metadata record from the start of a file, without checking
/// the rest: source and cubin are left empty.
llvm::Expected<CacheEntry> decodeCacheEntryMetadata(llvm::StringRef head);

} // namespace kiln::rt

#endif
