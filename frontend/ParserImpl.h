//===- ParserImpl.h - The .kg recursive-descent parser ---------*- C++ -*-===//
//
// Private to the frontend: Parser.cpp parses the graph, its inputs, types,
// parameters and statements; ParserInit.cpp parameter initialisers;
// ParserExpr.cpp calls, operands, numbers and attribute values.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_PARSERIMPL_H
#define KILN_FRONTEND_PARSERIMPL_H

#include "Lexer.h"

#include "IR/Graph.h"

#include <memory>
#include <vector>

namespace kiln {

class Parser {
public:
  Parser(std::vector<Token> tokens, llvm::StringRef fileName)
      : toks_(std::move(tokens)), file_(fileName.str()) {}

  llvm::Expected<std::unique_ptr<Graph>> parseFile();

private:
  // --- Token stream.
  const Token &tok() const { return toks_[pos_]; }
  const Token &peek() const {
    return toks_[std::min(pos_ + 1, toks_.size() - 1)];
  }
  const Token &take() {
    const Token &t = toks_[pos_];
    if (!t.is(TokKind::Eof))
      ++pos_;
    return t;
  }
  bool consumeIf(TokKind k) {
    if (!tok().is(k))
      return false;
    take();
    return true;
  }
  SourceLoc loc(const Token &t) const {
    return SourceLoc{file_, t.line, t.col};
  }
  /// "expected WHAT, got TOKEN" at the current token.
  llvm::Error expected(llvm::StringRef what) const;
  /// Takes a token of kind `k`, else reports expected(what).
  llvm::Expected<const Token *> expect(TokKind k, llvm::StringRef what);
  /// Takes a name that may name a value (not a reserved word).
  llvm::Expected<const Token *> expectValueName(llvm::StringRef what);

  // --- Parser.cpp: structure.
  llvm::Error parseHeader();
  /// NAME ':' type, for inputs and parameters.
  llvm::Expected<std::pair<const Token *, TensorType>>
  parseTypedName(llvm::StringRef expectedName, llvm::StringRef role);
  llvm::Error parseInput();
  llvm::Expected<TensorType> parseType();
  llvm::Expected<Dim> parseDim();
  llvm::Error parseBody(const Token &openBrace);
  llvm::Error parseStatement();
  llvm::Error parseParam();
  llvm::Error parseAssign();
  llvm::Error parseReturn();

  // --- ParserExpr.cpp and ParserInit.cpp: expressions and initialisers.
  /// A value name, a call or a number. `name` names a call's result.
  llvm::Expected<Value *> parseExpr(llvm::StringRef name = "");
  llvm::Expected<Value *> parseCall(llvm::StringRef name);
  llvm::Expected<Value *> parseValueRef();
  llvm::Expected<Value *> parseLiteral();
  llvm::Expected<Attr> parseAttrValue();
  llvm::Expected<Attr> parseIntList();
  struct Number {
    bool isInt;
    int64_t i; // when isInt
    double f;  // otherwise
  };
  /// ['-'] (INT | FLOAT).
  llvm::Expected<Number> parseNumber();
  llvm::Expected<int64_t> parseInt(bool allowMinus);
  /// A number as a double (an integer is accepted).
  llvm::Expected<double> parseFloatArg();
  llvm::Expected<Initializer> parseInit();
  llvm::Error parseInitArgs(Initializer &init);
  llvm::Expected<uint64_t> parseSeed();
  llvm::Error unknownOp(const Token &t) const;
  /// The token where `name` is assigned after the current position, if any.
  const Token *laterDefinition(llvm::StringRef name) const;
  /// Fails when a dim or integer attribute `v` is beyond 32 bits.
  llvm::Error checkSize(const Token &t, int64_t v, llvm::StringRef what) const;

  struct CallState;
  llvm::Error parseArg(CallState &call);
  llvm::Error parseKeywordArg(CallState &call);
  llvm::Error parsePositionalArg(CallState &call);

  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::string file_;
  std::unique_ptr<Graph> graph_;
  bool returned_ = false;
  unsigned depth_ = 0;
};

/// Reserved words cannot name a value (docs/format.md).
bool isReservedWord(llvm::StringRef name);

/// The candidate closest to `name` by edit distance, or "" when none is
/// close enough to suggest.
std::string closestMatch(llvm::StringRef name,
                         llvm::ArrayRef<std::string> candidates);

} // namespace kiln

#endif
