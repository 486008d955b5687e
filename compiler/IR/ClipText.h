//===- ClipText.h - User text cut to a readable length ---------*- C++ -*-===//
//
// Names, file names and values come from users (a graph, a command line, a
// tensor file, a cache entry's metadata) and may be a megabyte long. Text a
// person reads (a message, a table cell) shows such text cut, with its
// length; data written for programs (JSON, files) keeps it whole.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_CLIPTEXT_H
#define KILN_IR_CLIPTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace kiln {

/// The most characters of one word of user text that a message shows whole.
inline constexpr size_t MaxEchoChars = 200;

/// `text` whole when it has at most `max` characters; otherwise its start,
/// "..." and its length, `max` characters in all: "abcd...(1048576 chars)"
/// (at least one character of it when `max` is shorter than the note).
/// A character is a UTF-8 sequence, never cut in two.
std::string clipText(llvm::StringRef text, size_t max);

/// `message` with every word (a run of characters but spaces) longer than
/// `max` cut by clipText, the quotes and punctuation around it kept: "no
/// input named 'aaaa...(1048576 chars)'". errorToString applies it; so do
/// the kiln tool's warnings.
std::string clipLongWords(llvm::StringRef message, size_t max = MaxEchoChars);

} // namespace kiln

#endif
