//===- ShapeExpr.cpp - Dimension and size expressions -----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/ShapeExpr.h"

#include <algorithm>
#include <limits>

using namespace dyncc::runtime;

ShapeExpr::ShapeExpr() : source("0"), code{{Op::Const, 0}} {}

ShapeExpr ShapeExpr::constant(int64_t value) {
  ShapeExpr expr;
  expr.source = std::to_string(value);
  expr.code = {{Op::Const, value}};
  expr.seal();
  return expr;
}

void ShapeExpr::seal() {
  head = code.front();
  single = code.size() == 1;
}

bool ShapeExpr::isConstant() const { return single && head.op == Op::Const; }

int64_t ShapeExpr::constantValue() const { return head.arg; }

bool ShapeExpr::isSymbol() const { return single && head.op == Op::Symbol; }

size_t ShapeExpr::symbolSlot() const { return static_cast<size_t>(head.arg); }

void ShapeExpr::collectSymbols(std::vector<size_t> &slots) const {
  for (const Instr &instr : code) {
    if (instr.op != Op::Symbol)
      continue;
    size_t slot = static_cast<size_t>(instr.arg);
    if (std::find(slots.begin(), slots.end(), slot) == slots.end())
      slots.push_back(slot);
  }
}

const char *ShapeExpr::describe(EvalStatus status) {
  switch (status) {
  case EvalStatus::Ok:
    return "ok";
  case EvalStatus::DivisionByZero:
    return "division by zero";
  case EvalStatus::Overflow:
    return "integer overflow";
  }
  return "evaluation error";
}

ShapeExpr::EvalStatus ShapeExpr::apply(Op op, int64_t lhs, int64_t rhs,
                                       int64_t &result) {
  switch (op) {
  case Op::Add:
    return __builtin_add_overflow(lhs, rhs, &result) ? EvalStatus::Overflow
                                                     : EvalStatus::Ok;
  case Op::Sub:
    return __builtin_sub_overflow(lhs, rhs, &result) ? EvalStatus::Overflow
                                                     : EvalStatus::Ok;
  case Op::Mul:
    return __builtin_mul_overflow(lhs, rhs, &result) ? EvalStatus::Overflow
                                                     : EvalStatus::Ok;
  case Op::FloorDiv:
  case Op::CeilDiv: {
    if (rhs == 0)
      return EvalStatus::DivisionByZero;
    if (lhs == std::numeric_limits<int64_t>::min() && rhs == -1)
      return EvalStatus::Overflow;
    int64_t quotient = lhs / rhs;
    bool inexact = lhs % rhs != 0;
    bool negative = (lhs < 0) != (rhs < 0);
    if (op == Op::FloorDiv && inexact && negative)
      --quotient;
    else if (op == Op::CeilDiv && inexact && !negative)
      ++quotient;
    result = quotient;
    return EvalStatus::Ok;
  }
  case Op::Mod: {
    if (rhs == 0)
      return EvalStatus::DivisionByZero;
    if (rhs == -1) {
      result = 0;
      return EvalStatus::Ok;
    }
    int64_t remainder = lhs % rhs;
    if (remainder != 0 && ((remainder < 0) != (rhs < 0)))
      remainder += rhs;
    result = remainder;
    return EvalStatus::Ok;
  }
  case Op::Min:
    result = std::min(lhs, rhs);
    return EvalStatus::Ok;
  case Op::Max:
    result = std::max(lhs, rhs);
    return EvalStatus::Ok;
  case Op::Const:
  case Op::Symbol:
    break;
  }
  return EvalStatus::Overflow;
}

ShapeExpr::EvalStatus ShapeExpr::evaluate(const int64_t *symbolValues,
                                          int64_t &result) const {
  if (single) {
    result = head.op == Op::Const ? head.arg : symbolValues[head.arg];
    return EvalStatus::Ok;
  }
  int64_t stack[kMaxStack];
  unsigned depth = 0;
  for (const Instr &instr : code) {
    switch (instr.op) {
    case Op::Const:
      stack[depth++] = instr.arg;
      break;
    case Op::Symbol:
      stack[depth++] = symbolValues[instr.arg];
      break;
    default: {
      int64_t value;
      EvalStatus status =
          apply(instr.op, stack[depth - 2], stack[depth - 1], value);
      if (status != EvalStatus::Ok)
        return status;
      stack[--depth - 1] = value;
      break;
    }
    }
  }
  result = stack[0];
  return EvalStatus::Ok;
}

namespace dyncc::runtime {
/// Recursive-descent parser emitting postfix bytecode, with constant folding.
class ShapeExprParser {
public:
  ShapeExprParser(std::string_view text,
                  const std::vector<std::string> &symbols, ShapeExpr &out,
                  std::string &error)
      : text(text), symbols(symbols), out(out), error(error) {}

  bool parse() {
    out.source = std::string(text);
    out.code.clear();
    skipSpace();
    if (atEnd())
      return fail("empty expression");
    if (!parseExpr(0))
      return false;
    skipSpace();
    if (!atEnd())
      return fail(std::string("unexpected '") + text[pos] + "'");
    return true;
  }

private:
  using Op = ShapeExpr::Op;

  std::string_view text;
  const std::vector<std::string> &symbols;
  ShapeExpr &out;
  std::string &error;
  size_t pos = 0;
  unsigned depth = 0;
  unsigned maxDepth = 0;

  bool fail(const std::string &message) {
    error = "expression '" + std::string(text) + "' at position " +
            std::to_string(pos) + ": " + message;
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }

  void skipSpace() {
    while (!atEnd() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
  }

  static bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool push(Op op, int64_t arg) {
    out.code.push_back({op, arg});
    if (++depth > maxDepth)
      maxDepth = depth;
    if (maxDepth > ShapeExpr::kMaxStack)
      return fail("expression is too complex");
    return true;
  }

  /// Emits a binary operator, folding it if both operands are constants.
  void emitBinary(Op op) {
    --depth;
    size_t n = out.code.size();
    if (n >= 2 && out.code[n - 1].op == Op::Const &&
        out.code[n - 2].op == Op::Const) {
      int64_t value;
      if (ShapeExpr::apply(op, out.code[n - 2].arg, out.code[n - 1].arg,
                           value) == ShapeExpr::EvalStatus::Ok) {
        out.code.pop_back();
        out.code.back().arg = value;
        return;
      }
    }
    out.code.push_back({op, 0});
  }

  bool parseExpr(unsigned nesting) {
    if (!parseTerm(nesting))
      return false;
    while (true) {
      skipSpace();
      if (atEnd() || (text[pos] != '+' && text[pos] != '-'))
        return true;
      Op op = text[pos] == '+' ? Op::Add : Op::Sub;
      ++pos;
      if (!parseTerm(nesting))
        return false;
      emitBinary(op);
    }
  }

  bool parseTerm(unsigned nesting) {
    if (!parseFactor(nesting))
      return false;
    while (true) {
      skipSpace();
      if (atEnd() || text[pos] != '*')
        return true;
      ++pos;
      if (!parseFactor(nesting))
        return false;
      emitBinary(Op::Mul);
    }
  }

  bool parseFactor(unsigned nesting) {
    skipSpace();
    if (atEnd())
      return fail("expected a number, a symbol or '('");
    char c = text[pos];
    if (isDigit(c)) {
      int64_t value = 0;
      size_t start = pos;
      while (!atEnd() && isDigit(text[pos])) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[pos] - '0', &value)) {
          pos = start;
          return fail("integer literal does not fit in 64 bits");
        }
        ++pos;
      }
      return push(Op::Const, value);
    }
    if (c == '(') {
      if (nesting + 1 > ShapeExpr::kMaxNesting)
        return fail("nesting deeper than " +
                    std::to_string(ShapeExpr::kMaxNesting));
      ++pos;
      if (!parseExpr(nesting + 1))
        return false;
      skipSpace();
      if (atEnd() || text[pos] != ')')
        return fail("expected ')'");
      ++pos;
      return true;
    }
    if (!isIdentStart(c))
      return fail(std::string("expected a number, a symbol or '(', got '") + c +
                  "'");
    size_t start = pos;
    while (!atEnd() && (isIdentStart(text[pos]) || isDigit(text[pos])))
      ++pos;
    std::string_view name = text.substr(start, pos - start);
    size_t afterName = pos;
    skipSpace();
    if (!atEnd() && text[pos] == '(')
      return parseCall(name, start, nesting);
    pos = afterName;
    for (size_t i = 0, e = symbols.size(); i < e; ++i)
      if (symbols[i] == name)
        return push(Op::Symbol, static_cast<int64_t>(i));
    pos = start;
    return fail("unknown symbol '" + std::string(name) + "'");
  }

  bool parseCall(std::string_view name, size_t namePos, unsigned nesting) {
    Op op;
    if (name == "floordiv")
      op = Op::FloorDiv;
    else if (name == "ceildiv")
      op = Op::CeilDiv;
    else if (name == "mod")
      op = Op::Mod;
    else if (name == "min")
      op = Op::Min;
    else if (name == "max")
      op = Op::Max;
    else {
      pos = namePos;
      return fail("unknown function '" + std::string(name) + "'");
    }
    if (nesting + 1 > ShapeExpr::kMaxNesting)
      return fail("nesting deeper than " +
                  std::to_string(ShapeExpr::kMaxNesting));
    ++pos; // '('
    if (!parseExpr(nesting + 1))
      return false;
    skipSpace();
    if (atEnd() || text[pos] != ',')
      return fail("expected ',' in " + std::string(name) + "(a, b)");
    ++pos;
    if (!parseExpr(nesting + 1))
      return false;
    skipSpace();
    if (atEnd() || text[pos] != ')')
      return fail("expected ')'");
    ++pos;
    emitBinary(op);
    return true;
  }
};
} // namespace dyncc::runtime

bool ShapeExpr::parse(std::string_view text,
                      const std::vector<std::string> &symbols, ShapeExpr &out,
                      std::string &error) {
  ShapeExprParser parser(text, symbols, out, error);
  if (parser.parse()) {
    out.seal();
    return true;
  }
  out = ShapeExpr();
  return false;
}
