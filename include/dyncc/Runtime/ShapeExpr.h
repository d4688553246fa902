//===- ShapeExpr.h - Dimension and size expressions -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The manifest writes every dimension, grid size, offset and byte size as a
// string in a small integer grammar:
//
//   expr   ::= term (('+' | '-') term)*
//   term   ::= factor ('*' factor)*
//   factor ::= INTEGER | SYMBOL | FUNC '(' expr ',' expr ')' | '(' expr ')'
//   FUNC   ::= 'floordiv' | 'ceildiv' | 'mod' | 'min' | 'max'
//
// An expression is parsed once, at load, into bytecode for a stack machine
// over int64 whose symbol operands are slots in an array of symbol values;
// evaluation is a tight loop that reports division by zero and overflow
// instead of invoking undefined behaviour.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_SHAPEEXPR_H
#define DYNCC_RUNTIME_SHAPEEXPR_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dyncc::runtime {

/// A parsed expression over symbol slots.
class ShapeExpr {
public:
  /// The outcome of an evaluation.
  enum class EvalStatus : uint8_t { Ok, DivisionByZero, Overflow };

  /// An empty expression evaluates to 0.
  ShapeExpr();

  /// Parses `text`. Each symbol must be one of `symbols`; its slot is its
  /// index there. On failure returns false with `error` set to
  /// "expression 'TEXT' at position N: what is wrong" (N is a 0-based byte
  /// offset into TEXT).
  static bool parse(std::string_view text,
                    const std::vector<std::string> &symbols, ShapeExpr &out,
                    std::string &error);

  /// A constant expression.
  static ShapeExpr constant(int64_t value);

  /// Evaluates with `symbolValues[slot]` for each symbol.
  EvalStatus evaluate(const int64_t *symbolValues, int64_t &result) const;

  /// "division by zero" or "integer overflow".
  static const char *describe(EvalStatus status);

  /// The source text.
  const std::string &text() const { return source; }

  /// True if the expression is a single integer (after folding).
  bool isConstant() const;
  /// The value of a constant expression.
  int64_t constantValue() const;

  /// True if the expression is a bare symbol name.
  bool isSymbol() const;
  /// The slot of a bare symbol.
  size_t symbolSlot() const;

  /// Appends the slots this expression reads (each once) to `slots`.
  void collectSymbols(std::vector<size_t> &slots) const;

  /// The deepest nesting of parentheses and function calls parse accepts.
  static constexpr unsigned kMaxNesting = 32;

private:
  friend class ShapeExprParser;

  enum class Op : uint8_t {
    Const,
    Symbol,
    Add,
    Sub,
    Mul,
    FloorDiv,
    CeilDiv,
    Mod,
    Min,
    Max
  };
  struct Instr {
    Op op;
    int64_t arg;
  };

  /// The evaluation stack never holds more than this many values.
  static constexpr unsigned kMaxStack = 128;

  static EvalStatus apply(Op op, int64_t lhs, int64_t rhs, int64_t &result);

  /// Caches the program's shape in the object once `code` is final.
  void seal();

  std::string source;
  std::vector<Instr> code;
  /// code[0], and whether it is the whole program. Most expressions are
  /// one symbol or one constant; those evaluate from the object alone,
  /// without reading `code`'s heap block (a cold run evaluates some 1,500
  /// expressions, and each block read is a cache miss then).
  Instr head{Op::Const, 0};
  bool single = true;
};

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_SHAPEEXPR_H
