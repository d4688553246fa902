//===- DimExprTest.cpp - Canonical dimension expressions ------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Support/DimExpr.h"

#include "gtest/gtest.h"

using namespace dyncc;

namespace {

DimExpr sym(const char *name) { return DimExpr::symbol(name); }

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
  EXPECT_EQ(DimExpr::ceilDiv(DimExpr(64) * sym("B"), 32), DimExpr(2) * sym("B"));
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
  EXPECT_FALSE(parse("B*B").evaluate({{"B", int64_t(1) << 40}}))
      << "overflow";
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

} // namespace
