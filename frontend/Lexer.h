//===- Lexer.h - Tokens of the .kg format ----------------------*- C++ -*-===//
//
// Splits .kg text into tokens (docs/format.md, "Lexical rules"). The whole
// text is tokenised at once; the first bad character or unterminated string
// is a located user error. The token list always ends with an Eof token.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_LEXER_H
#define KILN_FRONTEND_LEXER_H

#include "IR/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln {

enum class TokKind : uint8_t {
  Eof,
  Name,   // x, group_norm, %3
  Int,    // 42
  Float,  // 1.0, .5, 1e-5, inf, nan
  String, // "tanh"
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Semi,
  Equal,
  Minus,
};

struct Token {
  TokKind kind = TokKind::Eof;
  /// The spelling in the source (with quotes for strings); empty for Eof.
  llvm::StringRef text;
  /// 1-based position of the first character.
  unsigned line = 0;
  unsigned col = 0;
  /// String tokens: the contents with escapes resolved.
  std::string str;

  bool is(TokKind k) const { return kind == k; }
  bool isName(llvm::StringRef s) const {
    return kind == TokKind::Name && text == s;
  }
  /// How a diagnostic names the token: 'w2', end of file.
  std::string describe() const;
};

/// Tokenises `text`; `fileName` only locates errors.
llvm::Expected<std::vector<Token>> lex(llvm::StringRef text,
                                       llvm::StringRef fileName);

} // namespace kiln

#endif
