//===- DimExprTest.cpp - Canonical dimension expressions ------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Support/DimExpr.h"

#include "gtest/gtest.h"

#include <random>
#include <sstream>

using namespace dyncc;

namespace dyncc {
/// Prints expressions in gtest messages.
static void PrintTo(const DimExpr &e, std::ostream *os) { *os << e.str(); }
} // namespace dyncc

namespace {

DimExpr sym(const char *name) { return DimExpr::symbol(name); }

SymbolFacts facts(int64_t min, int64_t max, int64_t divisor = 1) {
  SymbolFacts f;
  f.min = min;
  f.max = max;
  f.divisor = divisor;
  return f;
}

using Bounds = std::pair<int64_t, int64_t>;

DimExpr parse(const std::string &text) {
  std::string error;
  std::optional<DimExpr> e = DimExpr::parse(text, error);
  EXPECT_TRUE(e.has_value()) << error;
  return e ? *e : DimExpr();
}

TEST(DimExprTest, ProductsAreCanonical) {
  DimExpr a = DimExpr(12) * sym("B") * sym("L");
  DimExpr b = sym("L") * sym("B") * DimExpr(12);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.str(), "12*B*L");
  EXPECT_NE(a, DimExpr(12) * sym("B") * sym("B"));
}

TEST(DimExprTest, SumsCollectTermsAndCancel) {
  DimExpr e = sym("B") + DimExpr(3) + sym("B") - DimExpr(3);
  EXPECT_EQ(e, DimExpr(2) * sym("B"));
  EXPECT_EQ((sym("B") - sym("B")).getConstant(), 0);
  EXPECT_EQ((sym("L") - DimExpr(1)).str(), "L - 1");
  EXPECT_EQ((DimExpr(5) - sym("L")).str(), "5 - L");
}

TEST(DimExprTest, DistributesProducts) {
  DimExpr e = (sym("B") + DimExpr(1)) * (sym("L") + DimExpr(2));
  EXPECT_EQ(e, sym("B") * sym("L") + DimExpr(2) * sym("B") + sym("L") +
                   DimExpr(2));
}

TEST(DimExprTest, ExactDivisionSimplifies) {
  EXPECT_EQ(DimExpr::floorDiv(DimExpr(4) * sym("B") + DimExpr(8), 4),
            sym("B") + DimExpr(2));
  EXPECT_EQ(DimExpr::ceilDiv(DimExpr(64) * sym("B"), 32),
            DimExpr(2) * sym("B"));
  EXPECT_EQ(DimExpr::mod(DimExpr(6) * sym("B"), 3).getConstant(), 0);
  EXPECT_EQ(DimExpr::floorDiv(sym("B"), 1), sym("B"));
  // Not exact: stays an atom, and equal atoms compare equal.
  DimExpr a = DimExpr::ceilDiv(sym("B"), 32);
  EXPECT_EQ(a.str(), "ceildiv(B, 32)");
  EXPECT_EQ(a, DimExpr::ceilDiv(sym("B"), 32));
  EXPECT_NE(a, DimExpr::floorDiv(sym("B"), 32));
  // Nested floor divisions by positive constants merge.
  EXPECT_EQ(DimExpr::floorDiv(DimExpr::floorDiv(sym("L"), 2), 3),
            DimExpr::floorDiv(sym("L"), 6));
}

TEST(DimExprTest, ConstantFoldingUsesFloorSemantics) {
  EXPECT_EQ(DimExpr::floorDiv(-7, 2).getConstant(), -4);
  EXPECT_EQ(DimExpr::ceilDiv(-7, 2).getConstant(), -3);
  EXPECT_EQ(DimExpr::ceilDiv(7, 2).getConstant(), 4);
  EXPECT_EQ(DimExpr::mod(-7, 3).getConstant(), 2);
  EXPECT_EQ(DimExpr::min(3, 5).getConstant(), 3);
  EXPECT_EQ(DimExpr::max(sym("B"), sym("B")), sym("B"));
  EXPECT_EQ(DimExpr::min(sym("B"), sym("A")), DimExpr::min(sym("A"), sym("B")));
}

TEST(DimExprTest, Evaluate) {
  DimExpr e = parse("floordiv(L*B + 3, 2) - 5*B + ceildiv(L, 4)");
  std::optional<int64_t> v = e.evaluate({{"B", 3}, {"L", 5}});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, 9 - 15 + 2);
  EXPECT_FALSE(e.evaluate({{"B", 3}}).has_value()) << "L has no value";
  EXPECT_FALSE(parse("floordiv(B, L)").evaluate({{"B", 1}, {"L", 0}}))
      << "division by zero";
  EXPECT_FALSE(parse("B*B").evaluate({{"B", int64_t(1) << 40}})) << "overflow";
}

TEST(DimExprTest, PrintParseRoundTrip) {
  for (const char *text :
       {"12*B*L", "B + 1", "5 - L", "ceildiv(B, 32)", "floordiv(B*L + 3, 2)",
        "mod(L, 8) + 2*max(A, B)", "0", "7"}) {
    DimExpr e = parse(text);
    EXPECT_EQ(parse(e.str()), e) << text;
    EXPECT_EQ(e.str(), text);
  }
}

TEST(DimExprTest, ParseErrorsNamePosition) {
  std::string error;
  EXPECT_FALSE(DimExpr::parse("3 + * 2", error));
  EXPECT_EQ(error, "at column 5 of '3 + * 2': unexpected '*'");
  EXPECT_FALSE(DimExpr::parse("foo(1, 2)", error));
  EXPECT_NE(error.find("unknown function 'foo'"), std::string::npos);
  EXPECT_FALSE(DimExpr::parse("(B", error));
  EXPECT_NE(error.find("expected ')'"), std::string::npos);
}

TEST(DimExprTest, SubstituteAndCollect) {
  DimExpr e = parse("B*L + ceildiv(L, 2)");
  DimExpr s = e.substitute("L", DimExpr(2) * sym("N"));
  EXPECT_EQ(s, parse("2*B*N + N"));
  std::vector<std::string> names;
  e.collectSymbols(names);
  EXPECT_EQ(names, (std::vector<std::string>{"B", "L"}));
}

TEST(DimExprTest, ProductsDistributeOverSums) {
  EXPECT_EQ((sym("B") + DimExpr(1)) * sym("L"), sym("B") * sym("L") + sym("L"));
  EXPECT_EQ(((sym("B") + DimExpr(1)) * sym("L")).str(), "B*L + L");
  EXPECT_EQ((sym("A") - sym("B")) * (sym("A") + sym("B")),
            sym("A") * sym("A") - sym("B") * sym("B"));
  EXPECT_NE(sym("B") * sym("L"), sym("B") * sym("L") + sym("L"));
}

TEST(DimExprTest, ExactPolynomialDivision) {
  DimExpr b = sym("B"), l = sym("L");
  EXPECT_EQ(DimExpr::floorDiv(DimExpr(12) * b * l, DimExpr(12) * l), b);
  EXPECT_EQ(DimExpr::ceilDiv(DimExpr(12) * b * l, DimExpr(12) * l), b);
  EXPECT_EQ(DimExpr::mod(DimExpr(12) * b * l, DimExpr(12) * l), DimExpr(0));
  // Reshape of [B, L, 768] to [B*L, 12, -1]: -1 is 64.
  EXPECT_EQ(DimExpr::floorDiv(b * l * DimExpr(768), b * l * DimExpr(12)),
            DimExpr(64));
  EXPECT_EQ(DimExpr::floorDiv(b * l * DimExpr(768), 768), b * l);
  // By polynomials.
  EXPECT_EQ(DimExpr::floorDiv(b * l + l, b + DimExpr(1)), l);
  EXPECT_EQ(DimExpr::floorDiv(b * b - DimExpr(1), b - DimExpr(1)),
            b + DimExpr(1));
  EXPECT_EQ(DimExpr::floorDiv(DimExpr(-4) * b, -2), DimExpr(2) * b);
  // Not exact: an atom, with the common factor cancelled.
  EXPECT_EQ(DimExpr::floorDiv(b * l + DimExpr(1), l).str(),
            "floordiv(B*L + 1, L)");
  EXPECT_EQ(DimExpr::floorDiv(DimExpr(6) * b + DimExpr(3), 9).str(),
            "floordiv(2*B + 1, 3)");
  EXPECT_EQ(DimExpr::floorDiv(DimExpr(4) * b * l, DimExpr(6) * l).str(),
            "floordiv(2*B, 3)");
  EXPECT_EQ(DimExpr::mod(DimExpr(2) * b, 4).str(), "2*mod(B, 2)");
  EXPECT_EQ(DimExpr::floorDiv(b, l).str(), "floordiv(B, L)");
  // Division by zero stays an atom (it is an evaluation error).
  EXPECT_EQ(DimExpr::floorDiv(b, 0).str(), "floordiv(B, 0)");
  EXPECT_FALSE(DimExpr::floorDiv(b, 0).evaluate({{"B", 1}}));
}

TEST(DimExprTest, MinMaxCanonicalOrderAndFolding) {
  DimExpr a = sym("A"), b = sym("B"), l = sym("L");
  EXPECT_EQ(DimExpr::min(b, a).str(), "min(A, B)");
  EXPECT_EQ(DimExpr::max(b, a), DimExpr::max(a, b));
  EXPECT_NE(DimExpr::min(a, b), DimExpr::max(a, b));
  // Operands that differ by a constant fold without facts.
  EXPECT_EQ(DimExpr::min(l, l + DimExpr(3)), l);
  EXPECT_EQ(DimExpr::max(l - DimExpr(1), l), l);
  EXPECT_EQ(DimExpr::max(DimExpr(3), DimExpr(5)), DimExpr(5));
  EXPECT_EQ(DimExpr::min(DimExpr(INT64_MAX), DimExpr(-1)), DimExpr(-1));
  // Not ordered without facts.
  EXPECT_EQ(DimExpr::min(l, 512).str(), "min(512, L)");
  EXPECT_EQ(DimExpr::max(DimExpr::min(b, a), l).str(), "max(L, min(A, B))");
}

TEST(DimExprTest, SymbolFactsRangeAndIntersection) {
  EXPECT_EQ(facts(1, 514, 8).range(), Bounds(8, 512));
  EXPECT_TRUE(facts(1, 7, 8).isEmpty());
  EXPECT_FALSE(facts(0, 7, 8).isEmpty()) << "0 is a multiple of 8";
  EXPECT_TRUE(facts(8, 512, 8).contains(64));
  EXPECT_FALSE(facts(8, 512, 8).contains(65));
  EXPECT_FALSE(facts(8, 512, 8).contains(520));
  SymbolFacts both = facts(1, 100, 4).intersect(facts(50, 200, 6));
  EXPECT_EQ(both, facts(50, 100, 12));
  EXPECT_EQ(both.range(), Bounds(60, 96));
  EXPECT_TRUE(facts(1, 4).intersect(facts(8, 16)).isEmpty());
  EXPECT_EQ(facts(8, 512, 8).str(), "[8, 512] divisor 8");
  EXPECT_EQ(SymbolFacts().str(), "[0, inf]");
}

TEST(DimExprTest, BoundsFromFacts) {
  FactsMap f{{"B", facts(1, 8)}, {"L", facts(8, 512, 8)}};
  DimExpr b = sym("B"), l = sym("L");
  EXPECT_EQ((DimExpr(2) * b + l).bounds(f), Bounds(10, 528));
  EXPECT_EQ((b - l).bounds(f), Bounds(1 - 512, 0));
  EXPECT_EQ((DimExpr(100) - DimExpr(3) * b).bounds(f), Bounds(76, 97));
  EXPECT_EQ((b * l).bounds(f), Bounds(8, 4096));
  EXPECT_EQ(DimExpr::floorDiv(l, 8).bounds(f), Bounds(1, 64));
  EXPECT_EQ(DimExpr::ceilDiv(l + DimExpr(1), 8).bounds(f), Bounds(2, 65));
  EXPECT_EQ(DimExpr::floorDiv(DimExpr(0) - b, 3).bounds(f), Bounds(-3, -1));
  EXPECT_EQ(DimExpr::mod(b, 4).bounds(f), Bounds(0, 3));
  EXPECT_EQ(DimExpr::mod(b, 16).bounds(f), Bounds(1, 8));
  EXPECT_EQ(DimExpr::mod(b + DimExpr(8), 16).bounds(f), Bounds(0, 15));
  EXPECT_EQ(DimExpr::mod(DimExpr(0) - b, 16).bounds(f), Bounds(8, 15));
  EXPECT_EQ(DimExpr::mod(l, b).bounds(f), Bounds(0, 7));
  EXPECT_EQ(DimExpr::floorDiv(l, b).bounds(f), Bounds(1, 512));
  EXPECT_EQ(DimExpr::min(l, 100).bounds(f), Bounds(8, 100));
  EXPECT_EQ(DimExpr::max(l, b * DimExpr(100)).bounds(f), Bounds(100, 800));
  // Symbols without facts are non-negative; bounds saturate.
  EXPECT_EQ(sym("X").bounds(), Bounds(0, INT64_MAX));
  EXPECT_EQ((sym("X") - DimExpr(1)).bounds(), Bounds(-1, INT64_MAX - 1));
  EXPECT_EQ((sym("X") * sym("Y")).bounds(), Bounds(0, INT64_MAX));
  EXPECT_EQ((DimExpr(0) - DimExpr(2) * sym("X")).bounds(),
            Bounds(INT64_MIN, 0));
  EXPECT_EQ((sym("X") - sym("Y")).bounds(), Bounds(INT64_MIN + 1, INT64_MAX));
}

TEST(DimExprTest, DivisibilityFromSymbolDivisors) {
  FactsMap f{{"L", facts(8, 512, 8)}};
  DimExpr b = sym("B"), l = sym("L");
  EXPECT_TRUE(isDivisibleBy(DimExpr(2) * l, 16, f));
  EXPECT_FALSE(isDivisibleBy(DimExpr(2) * l, 32, f));
  EXPECT_TRUE(isDivisibleBy(b * l, 8, f));
  EXPECT_FALSE(isDivisibleBy(b * l, 8)) << "no facts";
  EXPECT_TRUE(isDivisibleBy(l + DimExpr(4), 4, f));
  EXPECT_FALSE(isDivisibleBy(l + DimExpr(4), 8, f));
  EXPECT_TRUE(isDivisibleBy(DimExpr::floorDiv(l, 2), 4, f));
  EXPECT_TRUE(isDivisibleBy(DimExpr::mod(l, 16), 8, f));
  EXPECT_TRUE(isDivisibleBy(DimExpr::min(l, DimExpr(4) * b), 4, f));
  EXPECT_TRUE(isDivisibleBy(DimExpr(0), 7, f));
  EXPECT_EQ(knownDivisor(DimExpr(3) * l + DimExpr(6) * b, f), 6);
  EXPECT_EQ(knownDivisor(DimExpr(12) * b), 12);
}

TEST(DimExprTest, SimplifyWithFacts) {
  FactsMap f{{"L", facts(8, 512, 8)}, {"B", facts(1, 7)}};
  DimExpr b = sym("B"), l = sym("L");
  // Without facts the atoms stay.
  EXPECT_EQ(DimExpr::mod(l, 8).str(), "mod(L, 8)");
  EXPECT_EQ(simplify(DimExpr::mod(l, 8), FactsMap()).str(), "mod(L, 8)");
  EXPECT_EQ(simplify(DimExpr::mod(l, 8), f), DimExpr(0));
  EXPECT_EQ(simplify(DimExpr::ceilDiv(l, 8), f), DimExpr::floorDiv(l, 8));
  EXPECT_EQ(simplify(DimExpr::floorDiv(l, 8), f).str(), "floordiv(L, 8)");
  EXPECT_EQ(simplify(DimExpr::ceilDiv(l + DimExpr(3), 8), f),
            DimExpr::floorDiv(l, 8) + DimExpr(1));
  EXPECT_EQ(simplify(DimExpr::floorDiv(l + DimExpr(3), 8), f),
            DimExpr::floorDiv(l, 8));
  EXPECT_EQ(simplify(DimExpr::mod(l + DimExpr(3), 8), f), DimExpr(3));
  EXPECT_EQ(simplify(DimExpr::floorDiv(l + DimExpr(8) * b, 8), FactsMap()),
            b + DimExpr::floorDiv(l, 8));
  EXPECT_EQ(simplify(DimExpr::mod(DimExpr(2) * l, 16), f), DimExpr(0));
  // Ranges.
  EXPECT_EQ(simplify(DimExpr::min(l, 512), f), l);
  EXPECT_EQ(simplify(DimExpr::max(l, 512), f), DimExpr(512));
  EXPECT_EQ(simplify(DimExpr::min(l, 511), f).str(), "min(511, L)");
  EXPECT_EQ(simplify(DimExpr::max(b, l), f), l);
  EXPECT_EQ(simplify(DimExpr::floorDiv(b, 8), f), DimExpr(0));
  EXPECT_EQ(simplify(DimExpr::mod(b, 8), f), b);
  EXPECT_EQ(simplify(DimExpr::mod(b, l), f), b);
  EXPECT_EQ(simplify(DimExpr::floorDiv(b, l), f), DimExpr(0));
  // Shape symbols are non-negative even without facts.
  EXPECT_EQ(simplify(DimExpr::max(l, 0), FactsMap()), l);
  // A one-value range is a constant.
  EXPECT_EQ(simplify(sym("N") * b, {{"N", facts(4, 4)}}), DimExpr(4) * b);
  // Nested: the inner atom folds, then the outer.
  EXPECT_EQ(simplify(DimExpr::min(DimExpr::ceilDiv(l, 8), DimExpr(64)), f),
            DimExpr::floorDiv(l, 8));
}

TEST(DimExprTest, ProveHelpers) {
  FactsMap f{{"L", facts(8, 512, 8)}, {"B", facts(1, 7)}};
  DimExpr b = sym("B"), l = sym("L");
  EXPECT_TRUE(proveNonNegative(l - b, f));
  EXPECT_FALSE(proveNonNegative(l - b));
  EXPECT_TRUE(proveLE(b, b + DimExpr(1)));
  EXPECT_TRUE(proveLessThan(b, l, f));
  EXPECT_FALSE(proveLessThan(b, b));
  EXPECT_TRUE(proveLE(b, b));
  EXPECT_TRUE(proveEqual(DimExpr::ceilDiv(l, 8), DimExpr::floorDiv(l, 8), f));
  EXPECT_FALSE(proveEqual(DimExpr::ceilDiv(l, 8), DimExpr::floorDiv(l, 8)));
  EXPECT_TRUE(proveNotEqual(DimExpr(2) * b, DimExpr(7)));
  EXPECT_FALSE(proveNotEqual(DimExpr(2) * b, DimExpr(8)));
  EXPECT_TRUE(proveNotEqual(l, DimExpr(4), f));
  EXPECT_TRUE(proveNotEqual(l, DimExpr(12), f)) << "not a multiple of 8";
  EXPECT_FALSE(proveNotEqual(l, DimExpr(16), f));
}

TEST(DimExprTest, ExtremeCoefficientsPrintAndParse) {
  DimExpr e = DimExpr(INT64_MIN) * sym("B");
  EXPECT_EQ(e.str(), "0 - 9223372036854775807*B - B");
  EXPECT_EQ(parse(e.str()), e);
  EXPECT_EQ(parse(DimExpr(INT64_MIN).str()), DimExpr(INT64_MIN));
  // Folding that would overflow is left to the evaluation.
  DimExpr d = DimExpr::floorDiv(DimExpr(INT64_MIN), DimExpr(-1));
  EXPECT_FALSE(d.isConstant());
  EXPECT_FALSE(d.evaluate({}));
  // min/max of operands whose difference overflows one way only: the same
  // result in both operand orders, so that it parses back to itself.
  DimExpr c = sym("C"), low = sym("C") + DimExpr(INT64_MIN);
  EXPECT_EQ(DimExpr::min(c, low), low);
  EXPECT_EQ(DimExpr::min(low, c), low);
  EXPECT_EQ(DimExpr::max(c, low), c);
  EXPECT_EQ(parse(DimExpr::min(c, low).str()), low);
}

TEST(DimExprTest, CoefficientOverflowIsNeverDefined) {
  DimExpr a = sym("A");
  EXPECT_TRUE((DimExpr(INT64_MAX) + DimExpr(1)).isOverflow());
  EXPECT_FALSE((DimExpr(INT64_MAX) + DimExpr(0)).isOverflow());
  // (A - 1) * 2^64 is 0 at A = 1, but its coefficients do not fit.
  DimExpr o = (a - DimExpr(1)) * DimExpr(INT64_C(1) << 62) * DimExpr(4);
  EXPECT_TRUE(o.isOverflow());
  EXPECT_EQ(o.str(), "floordiv(1, 0)");
  EXPECT_EQ(parse(o.str()), o);
  EXPECT_FALSE(o.evaluate({{"A", 1}}));
  // It absorbs everything, also what would otherwise fold it away.
  EXPECT_TRUE((o * DimExpr(0)).isOverflow());
  EXPECT_TRUE((o + a).isOverflow());
  EXPECT_TRUE(DimExpr::min(o, a).isOverflow());
  EXPECT_TRUE(DimExpr::mod(a, o).isOverflow());
  EXPECT_TRUE(DimExpr::floorDiv(o, 1).isOverflow());
  EXPECT_TRUE(o.substitute("A", DimExpr(1)).isOverflow());
  EXPECT_TRUE(simplify(o, {{"A", facts(1, 1)}}).isOverflow());
  EXPECT_EQ(o.bounds(), Bounds(INT64_MIN, INT64_MAX));
  EXPECT_FALSE(proveEqual(o, DimExpr(0)));
  EXPECT_FALSE(DimExpr::floorDiv(a, 0).isOverflow());
}

//===----------------------------------------------------------------------===//
// Randomized soundness
//===----------------------------------------------------------------------===//

/// An unsimplified expression tree and its direct interpretation.
struct Tree {
  enum Op { Const, Sym, Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Min, Max };
  Op op = Const;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<Tree> lhs, rhs;

  std::optional<int64_t> eval(const std::map<std::string, int64_t> &v) const {
    if (op == Const)
      return value;
    if (op == Sym)
      return v.at(name);
    std::optional<int64_t> a = lhs->eval(v), b = rhs->eval(v);
    if (!a || !b)
      return std::nullopt;
    int64_t r;
    switch (op) {
    case Add:
      if (__builtin_add_overflow(*a, *b, &r))
        return std::nullopt;
      return r;
    case Sub:
      if (__builtin_sub_overflow(*a, *b, &r))
        return std::nullopt;
      return r;
    case Mul:
      if (__builtin_mul_overflow(*a, *b, &r))
        return std::nullopt;
      return r;
    case Min:
      return std::min(*a, *b);
    case Max:
      return std::max(*a, *b);
    default:
      break;
    }
    if (*b == 0 || (*a == INT64_MIN && *b == -1))
      return std::nullopt;
    // Truncating division, then adjusted: floor, ceil, and a sign-of-b mod.
    int64_t q = *a / *b, m = *a % *b;
    bool inexact = m != 0;
    bool negative = (*a < 0) != (*b < 0);
    if (op == FloorDiv)
      return inexact && negative ? q - 1 : q;
    if (op == CeilDiv)
      return inexact && !negative ? q + 1 : q;
    return inexact && ((m < 0) != (*b < 0)) ? m + *b : m;
  }

  /// Bound on the magnitude of every term of the expanded polynomial and of
  /// every value, for symbols up to `symMax` (saturating at 2^62).
  uint64_t magnitude(uint64_t symMax) const {
    const uint64_t cap = uint64_t(1) << 62;
    auto sat = [&](unsigned __int128 x) { return x > cap ? cap : (uint64_t)x; };
    switch (op) {
    case Const:
      return value < 0 ? -value : value;
    case Sym:
      return symMax;
    case Add:
    case Sub:
      return sat((unsigned __int128)lhs->magnitude(symMax) +
                 rhs->magnitude(symMax));
    case Mul:
      return sat((unsigned __int128)lhs->magnitude(symMax) *
                 rhs->magnitude(symMax));
    default:
      return std::max(lhs->magnitude(symMax), rhs->magnitude(symMax));
    }
  }

  DimExpr build() const {
    switch (op) {
    case Const:
      return DimExpr(value);
    case Sym:
      return DimExpr::symbol(name);
    case Add:
      return lhs->build() + rhs->build();
    case Sub:
      return lhs->build() - rhs->build();
    case Mul:
      return lhs->build() * rhs->build();
    case FloorDiv:
      return DimExpr::floorDiv(lhs->build(), rhs->build());
    case CeilDiv:
      return DimExpr::ceilDiv(lhs->build(), rhs->build());
    case Mod:
      return DimExpr::mod(lhs->build(), rhs->build());
    case Min:
      return DimExpr::min(lhs->build(), rhs->build());
    case Max:
      return DimExpr::max(lhs->build(), rhs->build());
    }
    return DimExpr();
  }

  std::string str() const {
    static const char *names[] = {"",         "",        "+",   "-",   "*",
                                  "floordiv", "ceildiv", "mod", "min", "max"};
    if (op == Const)
      return std::to_string(value);
    if (op == Sym)
      return name;
    if (op <= Mul)
      return "(" + lhs->str() + " " + names[op] + " " + rhs->str() + ")";
    return std::string(names[op]) + "(" + lhs->str() + ", " + rhs->str() + ")";
  }
};

/// Deterministic across standard libraries (no std distributions).
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}
  int64_t range(int64_t lo, int64_t hi) {
    return lo + (int64_t)(engine() % (uint64_t)(hi - lo + 1));
  }
  bool chance(int percent) { return range(0, 99) < percent; }

private:
  std::mt19937_64 engine;
};

const char *const kSymbols[] = {"A", "B", "C", "D"};

/// A random tree of depth <= `depth`. With `extreme`, some constants are
/// near the int64 limits and some divisors negative.
std::shared_ptr<Tree> randomTree(Random &rng, int depth, bool extreme) {
  static const int64_t kExtreme[] = {
      INT64_MAX,           INT64_MIN,  INT64_MIN + 1, INT64_C(1) << 62,
      -(INT64_C(1) << 62), 3037000499, -3037000500};
  auto t = std::make_shared<Tree>();
  if (depth == 0 || rng.chance(25)) {
    if (rng.chance(50)) {
      t->op = Tree::Sym;
      t->name = kSymbols[rng.range(0, 3)];
    } else {
      t->op = Tree::Const;
      t->value = extreme && rng.chance(15) ? kExtreme[rng.range(0, 6)]
                                           : rng.range(-5, 20);
    }
    return t;
  }
  t->op = (Tree::Op)rng.range(Tree::Add, Tree::Max);
  t->lhs = randomTree(rng, depth - 1, extreme);
  bool division =
      t->op == Tree::FloorDiv || t->op == Tree::CeilDiv || t->op == Tree::Mod;
  if (division && rng.chance(70)) {
    // Mostly positive constant divisors, sometimes a symbol.
    t->rhs = std::make_shared<Tree>();
    if (rng.chance(80)) {
      t->rhs->value =
          extreme && rng.chance(20) ? rng.range(-16, -1) : rng.range(1, 16);
    } else {
      t->rhs->op = Tree::Sym;
      t->rhs->name = kSymbols[rng.range(0, 3)];
    }
  } else {
    t->rhs = randomTree(rng, depth - 1, extreme);
  }
  return t;
}

FactsMap randomFacts(Random &rng) {
  static const int64_t divisors[] = {1, 1, 1, 2, 3, 4, 8, 16};
  FactsMap result;
  for (const char *name : kSymbols) {
    if (rng.chance(25))
      continue;
    SymbolFacts f;
    f.min = rng.range(0, 9);
    f.max = rng.chance(10) ? f.min : f.min + rng.range(0, 48);
    f.divisor = divisors[rng.range(0, 7)];
    if (f.isEmpty())
      f.divisor = 1;
    result[name] = f;
  }
  return result;
}

std::map<std::string, int64_t> randomValues(Random &rng, const FactsMap &f) {
  std::map<std::string, int64_t> values;
  for (const char *name : kSymbols) {
    auto it = f.find(name);
    if (it == f.end()) {
      values[name] = rng.range(0, 40);
      continue;
    }
    auto [lo, hi] = it->second.range();
    int64_t d = it->second.divisor;
    values[name] = d * rng.range(lo / d, hi / d);
  }
  return values;
}

std::string describe(const std::map<std::string, int64_t> &values,
                     const FactsMap &f) {
  std::ostringstream os;
  for (const auto &[name, value] : values) {
    os << name << "=" << value;
    auto it = f.find(name);
    if (it != f.end())
      os << " " << it->second.str();
    os << "; ";
  }
  return os.str();
}

/// Builds random expressions through the canonicalizing constructors and
/// `simplify` with random facts, and compares them with the tree they came
/// from at random symbol values satisfying the facts. Wherever the tree is
/// defined, the canonical and simplified forms must give its value (with
/// `extreme`, they may instead be undefined: a canonical form can overflow
/// where the tree did not, but it is never wrong). Also checks printing and
/// parsing, idempotence of `simplify`, bounds, divisibility and the `prove*`
/// helpers against the previous expression.
void checkRandomExpressions(uint64_t seed, bool extreme) {
  Random rng(seed);
  const int kExpressions = 6000, kPoints = 8;
  int skipped = 0, compared = 0, failures = 0;
  DimExpr previous;
  std::shared_ptr<Tree> previousTree;
  for (int i = 0; i < kExpressions && failures < 10; ++i) {
    std::shared_ptr<Tree> tree = randomTree(rng, 4, extreme);
    // Coefficients and values far below int64: the canonical form then
    // evaluates without overflow wherever the tree does.
    if (!extreme && tree->magnitude(64) >= (uint64_t(1) << 40)) {
      ++skipped;
      continue;
    }
    FactsMap f = randomFacts(rng);
    DimExpr e = tree->build();
    DimExpr s = simplify(e, f);
    std::string ctx = "tree " + tree->str() + "\n  canonical " + e.str() +
                      "\n  simplified " + s.str();

    std::string error;
    std::optional<DimExpr> parsed = DimExpr::parse(e.str(), error);
    EXPECT_TRUE(parsed && *parsed == e) << ctx << "\n  " << error;
    parsed = DimExpr::parse(s.str(), error);
    EXPECT_TRUE(parsed && *parsed == s) << ctx << "\n  " << error;
    EXPECT_EQ(simplify(s, f), s) << ctx << "\n  not idempotent";

    auto bounds = e.bounds(f), sBounds = s.bounds(f);
    bool proveLe = previousTree && proveLE(previous, e, f);
    bool proveEq = previousTree && proveEqual(previous, e, f);
    bool proveNe = previousTree && proveNotEqual(previous, e, f);
    for (int p = 0; p < kPoints; ++p) {
      std::map<std::string, int64_t> values = randomValues(rng, f);
      std::optional<int64_t> expected = tree->eval(values);
      if (!expected)
        continue;
      ++compared;
      std::string at = ctx + "\n  at " + describe(values, f);
      std::optional<int64_t> got = e.evaluate(values);
      std::optional<int64_t> gotSimplified = s.evaluate(values);
      // Bounds and proofs speak of the defined values of the canonical forms.
      bool defined = got.has_value(),
           simplifiedDefined = gotSimplified.has_value();
      if (extreme) {
        // Never wrong; undefined is allowed.
        if (!got)
          got = expected;
        if (!gotSimplified)
          gotSimplified = expected;
      }
      bool ok = got == expected && gotSimplified == expected;
      EXPECT_EQ(got, expected) << at;
      EXPECT_EQ(gotSimplified, expected) << at;
      EXPECT_TRUE(!defined ||
                  (*expected >= bounds.first && *expected <= bounds.second))
          << at << "\n  bounds [" << bounds.first << ", " << bounds.second
          << "] miss " << *expected;
      EXPECT_TRUE(!simplifiedDefined ||
                  (*expected >= sBounds.first && *expected <= sBounds.second))
          << at << "\n  simplified bounds [" << sBounds.first << ", "
          << sBounds.second << "] miss " << *expected;
      for (int64_t n : {2, 3, 4, 6, 8, 16}) {
        if (defined && isDivisibleBy(e, n, f) && *expected % n != 0) {
          ok = false;
          ADD_FAILURE() << at << "\n  claimed a multiple of " << n;
        }
      }
      std::optional<int64_t> before;
      if (previousTree && defined && previous.evaluate(values))
        before = previousTree->eval(values);
      if (before) {
        if (proveLe && !(*before <= *expected)) {
          ok = false;
          ADD_FAILURE() << at << "\n  proved " << previous.str()
                        << " <= it, but " << *before << " > " << *expected;
        }
        if (proveEq && *before != *expected) {
          ok = false;
          ADD_FAILURE() << at << "\n  proved equal to " << previous.str();
        }
        if (proveNe && *before == *expected) {
          ok = false;
          ADD_FAILURE() << at << "\n  proved unequal to " << previous.str();
        }
      }
      if (!ok)
        ++failures;
    }
    previous = e;
    previousTree = tree;
  }
  EXPECT_EQ(failures, 0);
  // The filters must leave most of the work in place.
  EXPECT_LT(skipped, kExpressions / 10);
  EXPECT_GT(compared, kExpressions * kPoints / 2);
}

TEST(DimExprTest, RandomizedSoundness) {
  checkRandomExpressions(20240601, false);
}

TEST(DimExprTest, RandomizedSoundnessNearInt64Limits) {
  checkRandomExpressions(77, true);
}

} // namespace
