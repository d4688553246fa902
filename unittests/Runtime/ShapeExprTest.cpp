//===- ShapeExprTest.cpp - Tests of shape expressions -----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/ShapeExpr.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <limits>

using namespace dyncc::runtime;

namespace {

const std::vector<std::string> kSymbols = {"B", "S", "seq_len2"};

ShapeExpr parseOk(const std::string &text) {
  ShapeExpr expr;
  std::string error;
  EXPECT_TRUE(ShapeExpr::parse(text, kSymbols, expr, error))
      << text << ": " << error;
  return expr;
}

std::string parseError(const std::string &text) {
  ShapeExpr expr;
  std::string error;
  EXPECT_FALSE(ShapeExpr::parse(text, kSymbols, expr, error)) << text;
  return error;
}

int64_t eval(const std::string &text, std::vector<int64_t> values = {0, 0, 0}) {
  ShapeExpr expr = parseOk(text);
  int64_t result = -12345;
  EXPECT_EQ(expr.evaluate(values.data(), result), ShapeExpr::EvalStatus::Ok)
      << text;
  return result;
}

ShapeExpr::EvalStatus evalStatus(const std::string &text,
                                 std::vector<int64_t> values) {
  ShapeExpr expr = parseOk(text);
  int64_t result;
  return expr.evaluate(values.data(), result);
}

TEST(ShapeExprTest, Literals) {
  EXPECT_EQ(eval("0"), 0);
  EXPECT_EQ(eval("64"), 64);
  EXPECT_EQ(eval("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(parseOk("64").isConstant());
  EXPECT_EQ(parseOk(" 64 ").constantValue(), 64);
}

TEST(ShapeExprTest, Symbols) {
  ShapeExpr b = parseOk("B");
  EXPECT_TRUE(b.isSymbol());
  EXPECT_EQ(b.symbolSlot(), 0u);
  EXPECT_EQ(parseOk("seq_len2").symbolSlot(), 2u);
  EXPECT_EQ(eval("S", {1, 7, 3}), 7);
  EXPECT_FALSE(parseOk("B+0").isSymbol());
  EXPECT_EQ(b.text(), "B");
}

TEST(ShapeExprTest, PrecedenceAndAssociativity) {
  EXPECT_EQ(eval("2+3*4"), 14);
  EXPECT_EQ(eval("(2+3)*4"), 20);
  EXPECT_EQ(eval("10-3-2"), 5);
  EXPECT_EQ(eval("10-(3-2)"), 9);
  EXPECT_EQ(eval("2*3*4+1"), 25);
  EXPECT_EQ(eval("B*256", {5, 0, 0}), 1280);
  EXPECT_EQ(eval("B * S + seq_len2 * (B - 1)", {3, 4, 5}), 22);
  EXPECT_EQ(eval("1 - B", {5, 0, 0}), -4);
}

TEST(ShapeExprTest, ConstantFolding) {
  ShapeExpr expr = parseOk("2*3+ceildiv(7, 2)");
  EXPECT_TRUE(expr.isConstant());
  EXPECT_EQ(expr.constantValue(), 10);
  // Errors are not folded away: they surface at evaluation.
  ShapeExpr divZero = parseOk("floordiv(1, 0)");
  EXPECT_FALSE(divZero.isConstant());
  int64_t result;
  EXPECT_EQ(divZero.evaluate(nullptr, result),
            ShapeExpr::EvalStatus::DivisionByZero);
}

TEST(ShapeExprTest, FloorAndCeilDivision) {
  EXPECT_EQ(eval("floordiv(7, 2)"), 3);
  EXPECT_EQ(eval("ceildiv(7, 2)"), 4);
  EXPECT_EQ(eval("floordiv(8, 2)"), 4);
  EXPECT_EQ(eval("ceildiv(8, 2)"), 4);
  // Negative operands round toward -inf / +inf, not toward zero.
  EXPECT_EQ(eval("floordiv(0-7, 2)"), -4);
  EXPECT_EQ(eval("ceildiv(0-7, 2)"), -3);
  EXPECT_EQ(eval("floordiv(7, 0-2)"), -4);
  EXPECT_EQ(eval("ceildiv(7, 0-2)"), -3);
  EXPECT_EQ(eval("floordiv(0-7, 0-2)"), 3);
  EXPECT_EQ(eval("ceildiv(0-7, 0-2)"), 4);
  EXPECT_EQ(eval("floordiv(0-8, 2)"), -4);
  // Only INT64_MIN / -1 overflows: other divisions by -1, and INT64_MIN by
  // other divisors, do not.
  EXPECT_EQ(eval("floordiv(B, 0-1)", {6, 0, 0}), -6);
  EXPECT_EQ(eval("ceildiv(B, 0-1)", {-6, 0, 0}), 6);
  EXPECT_EQ(eval("floordiv(B, 2)", {std::numeric_limits<int64_t>::min(), 0, 0}),
            std::numeric_limits<int64_t>::min() / 2);
  EXPECT_EQ(eval("ceildiv(B, 32)", {0, 0, 0}), 0);
  EXPECT_EQ(eval("ceildiv(B, 32)", {33, 0, 0}), 2);
}

TEST(ShapeExprTest, Modulo) {
  EXPECT_EQ(eval("mod(7, 3)"), 1);
  EXPECT_EQ(eval("mod(0-7, 3)"), 2);
  EXPECT_EQ(eval("mod(7, 0-3)"), -2);
  EXPECT_EQ(eval("mod(0-7, 0-3)"), -1);
  EXPECT_EQ(eval("mod(0-6, 3)"), 0);
  EXPECT_EQ(eval("mod(B, 0-1)", {std::numeric_limits<int64_t>::min(), 0, 0}),
            0);
}

TEST(ShapeExprTest, MinMax) {
  EXPECT_EQ(eval("min(B, 32)", {40, 0, 0}), 32);
  EXPECT_EQ(eval("max(B, 32)", {40, 0, 0}), 40);
  EXPECT_EQ(eval("max(min(B, S), 1)", {0, 5, 0}), 1);
  EXPECT_EQ(eval("min ( B , S )", {3, 5, 0}), 3);
}

TEST(ShapeExprTest, EvaluationErrors) {
  EXPECT_EQ(evalStatus("floordiv(B, S)", {1, 0, 0}),
            ShapeExpr::EvalStatus::DivisionByZero);
  EXPECT_EQ(evalStatus("ceildiv(B, S)", {1, 0, 0}),
            ShapeExpr::EvalStatus::DivisionByZero);
  EXPECT_EQ(evalStatus("mod(B, S)", {1, 0, 0}),
            ShapeExpr::EvalStatus::DivisionByZero);
  const int64_t big = int64_t(1) << 32;
  EXPECT_EQ(evalStatus("B*S", {big, big, 0}), ShapeExpr::EvalStatus::Overflow);
  EXPECT_EQ(evalStatus("B+S", {std::numeric_limits<int64_t>::max(), 1, 0}),
            ShapeExpr::EvalStatus::Overflow);
  EXPECT_EQ(evalStatus("0-B-S", {std::numeric_limits<int64_t>::max(), 2, 0}),
            ShapeExpr::EvalStatus::Overflow);
  // INT64_MIN / -1.
  EXPECT_EQ(evalStatus("floordiv(0-B-1, 0-1)",
                       {std::numeric_limits<int64_t>::max(), 0, 0}),
            ShapeExpr::EvalStatus::Overflow);
  EXPECT_EQ(evalStatus("ceildiv(0-B-1, 0-1)",
                       {std::numeric_limits<int64_t>::max(), 0, 0}),
            ShapeExpr::EvalStatus::Overflow);
  EXPECT_STREQ(ShapeExpr::describe(ShapeExpr::EvalStatus::Overflow),
               "integer overflow");
  EXPECT_STREQ(ShapeExpr::describe(ShapeExpr::EvalStatus::DivisionByZero),
               "division by zero");
}

TEST(ShapeExprTest, ParseErrors) {
  EXPECT_EQ(
      parseError("B*"),
      "expression 'B*' at position 2: expected a number, a symbol or '('");
  EXPECT_EQ(parseError(""), "expression '' at position 0: empty expression");
  EXPECT_EQ(parseError("C + 1"),
            "expression 'C + 1' at position 0: unknown symbol 'C'");
  EXPECT_EQ(parseError("foo(1, 2)"),
            "expression 'foo(1, 2)' at position 0: unknown function 'foo'");
  EXPECT_EQ(parseError("1 2"),
            "expression '1 2' at position 2: unexpected '2'");
  EXPECT_EQ(parseError("(1"), "expression '(1' at position 2: expected ')'");
  EXPECT_EQ(parseError("floordiv(1)"), "expression 'floordiv(1)' at position "
                                       "10: expected ',' in floordiv(a, b)");
  EXPECT_EQ(parseError("min(1, 2, 3)"),
            "expression 'min(1, 2, 3)' at position 8: expected ')'");
  EXPECT_EQ(parseError("99999999999999999999"),
            "expression '99999999999999999999' at position 0: integer literal "
            "does not fit in 64 bits");
  EXPECT_EQ(parseError("-1"),
            "expression '-1' at position 0: expected a number, a symbol or "
            "'(', got '-'");
  EXPECT_EQ(parseError("B / 2"),
            "expression 'B / 2' at position 2: unexpected '/'");
  EXPECT_EQ(parseError("B)"), "expression 'B)' at position 1: unexpected ')'");
}

TEST(ShapeExprTest, NestingLimit) {
  std::string ok = std::string(ShapeExpr::kMaxNesting, '(') + "1" +
                   std::string(ShapeExpr::kMaxNesting, ')');
  EXPECT_EQ(eval(ok), 1);
  std::string deep = std::string(ShapeExpr::kMaxNesting + 1, '(') + "1" +
                     std::string(ShapeExpr::kMaxNesting + 1, ')');
  EXPECT_NE(parseError(deep).find("nesting deeper than 32"), std::string::npos);
  std::string calls;
  for (int i = 0; i < 40; ++i)
    calls += "min(B, ";
  calls += "1" + std::string(40, ')');
  EXPECT_NE(parseError(calls).find("nesting deeper than 32"),
            std::string::npos);
  parseError(std::string(100000, '('));
}

TEST(ShapeExprTest, DeepRightLeaningExpression) {
  // Every level keeps operands on the stack: the deepest legal expression
  // must evaluate correctly.
  std::string text;
  for (unsigned i = 0; i < ShapeExpr::kMaxNesting; ++i)
    text += "B + S*max(";
  text += "1";
  for (unsigned i = 0; i < ShapeExpr::kMaxNesting; ++i)
    text += ", 0)";
  int64_t expected = 1;
  for (unsigned i = 0; i < ShapeExpr::kMaxNesting; ++i)
    expected = 2 + 3 * std::max<int64_t>(expected, 0);
  EXPECT_EQ(eval(text, {2, 3, 0}), expected);
}

TEST(ShapeExprTest, CollectSymbols) {
  std::vector<size_t> slots;
  parseOk("S*B + S + 4").collectSymbols(slots);
  EXPECT_EQ(slots, (std::vector<size_t>{1, 0}));
}

} // namespace
