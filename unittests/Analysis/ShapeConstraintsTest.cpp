//===- ShapeConstraintsTest.cpp - Constraint store for symbolic shapes ----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Analysis/ShapeConstraints.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "gtest/gtest.h"

using namespace mlir;
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

/// Unregistered ops named like graph ops, with node names, and the
/// diagnostics they emit.
class ShapeConstraintsTest : public ::testing::Test {
protected:
  ShapeConstraintsTest()
      : handler(&context, [this](Diagnostic &diag) {
          diagnostics.push_back(diag.str());
          return success();
        }) {
    context.allowUnregisteredDialects();
  }

  Operation *op(StringRef name, StringRef node) {
    OperationState state(NameLoc::get(StringAttr::get(&context, node)), name);
    ops.push_back(OwningOpRef<Operation *>(Operation::create(state)));
    return ops.back().get();
  }

  /// The only diagnostic since the last call.
  std::string takeDiagnostic() {
    EXPECT_EQ(diagnostics.size(), 1u);
    std::string d = diagnostics.empty() ? "" : diagnostics.back();
    diagnostics.clear();
    return d;
  }

  MLIRContext context;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> diagnostics;
  std::vector<OwningOpRef<Operation *>> ops;
};

TEST_F(ShapeConstraintsTest, SymbolsAreSubstituted) {
  ShapeConstraints c;
  Operation *mm = op("dg.matmul", "mm");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("N"), sym("K"), mm, "k")));
  EXPECT_EQ(c.resolve(sym("N")), sym("K")) << "alphabetically first survives";
  EXPECT_EQ(c.getSubstitutions().at("N"), sym("K"));
  ASSERT_TRUE(
      succeeded(c.requireEqual(sym("M"), DimExpr(4) * sym("K"), mm, "m")));
  EXPECT_EQ(c.resolve(sym("M") + sym("N")), DimExpr(5) * sym("K"));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("K"), DimExpr(16), mm, "k")));
  EXPECT_EQ(c.resolve(sym("M")), DimExpr(64));
  EXPECT_TRUE(c.getDeferred().empty());
  EXPECT_TRUE(diagnostics.empty());
}

TEST_F(ShapeConstraintsTest, TransitiveMerges) {
  ShapeConstraints c;
  Operation *add = op("dg.add", "a");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("A"), sym("B"), add, "d0")));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("C"), sym("B"), add, "d1")));
  EXPECT_EQ(c.resolve(sym("A")), c.resolve(sym("C")));
  EXPECT_EQ(c.resolve(sym("C")), sym("A"));
  EXPECT_TRUE(c.proveEqual(sym("B"), sym("C")));
  EXPECT_FALSE(c.proveEqual(sym("B"), sym("D")));
}

TEST_F(ShapeConstraintsTest, ClassesOfExpressions) {
  ShapeConstraints c;
  Operation *mm = op("dg.matmul", "mm"), *mm2 = op("dg.matmul", "mm2");
  DimExpr twoA = DimExpr(2) * sym("A"), bc = sym("B") * sym("C"),
          de = sym("D") * sym("E");
  ASSERT_TRUE(
      succeeded(c.requireEqual(twoA, bc, mm, "the contraction dimensions")));
  // Kept for the run-time, unresolved (else it would read 2*A == 2*A).
  ASSERT_EQ(c.getDeferred().size(), 1u);
  EXPECT_EQ(c.getDeferred()[0].lhs, twoA);
  EXPECT_EQ(c.getDeferred()[0].rhs, bc);
  EXPECT_EQ(c.getDeferred()[0].reason,
            "the contraction dimensions of dg.matmul 'mm'");
  // Every member resolves to the representative, also inside atoms.
  EXPECT_EQ(c.resolve(bc), twoA);
  EXPECT_EQ(c.resolve(DimExpr::floorDiv(bc, 2)), sym("A"));
  EXPECT_TRUE(c.proveEqual(bc, twoA));
  ASSERT_TRUE(succeeded(c.requireEqual(de, bc, mm2, "k")));
  EXPECT_EQ(c.resolve(de), twoA);
  EXPECT_EQ(c.getDeferred().size(), 2u);
  // A constant becomes the representative.
  ASSERT_TRUE(succeeded(c.requireEqual(sym("A"), DimExpr(3), mm2, "m")));
  EXPECT_EQ(c.resolve(de), DimExpr(6));
  EXPECT_EQ(c.resolve(bc), DimExpr(6));
  ASSERT_EQ(c.getDeferred().size(), 2u);
  EXPECT_EQ(c.getDeferred()[0].lhs, DimExpr(6));
  // And a contradiction names where the class got its value.
  EXPECT_TRUE(failed(c.requireEqual(de, DimExpr(8), mm2, "n")));
  EXPECT_EQ(takeDiagnostic(),
            "'dg.matmul' op requires n to be equal, but they are D*E and 8, "
            "where 'D*E' was already required to equal 6 by 'dg.matmul' "
            "\"mm2\"");
}

TEST_F(ShapeConstraintsTest, ClassWithTwoSymbolsBecomesASubstitution) {
  ShapeConstraints c;
  Operation *reshape = op("dg.reshape", "r");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("B") * sym("L"), sym("K") * sym("M"),
                                       reshape, "the element counts")));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("L"), DimExpr(1), reshape, "l")));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("M"), DimExpr(1), reshape, "m")));
  EXPECT_EQ(c.resolve(sym("K")), sym("B"));
  EXPECT_TRUE(c.getDeferred().empty()) << "B == K is a substitution";
}

TEST_F(ShapeConstraintsTest, CommonNonzeroFactorsCancel) {
  ShapeConstraints c;
  c.setFacts("B", facts(1, 8));
  c.setFacts("S", facts(1, 512));
  c.setFacts("N", facts(1, 8192));
  c.setFacts("K", facts(1, 8192));
  c.setFacts("Z", facts(0, 8));
  Operation *reshape = op("dg.reshape", "Reshape_64");
  // A reshape's element counts, [B, S, 2304] against [B, S, N]: N is 2304.
  ASSERT_TRUE(succeeded(c.requireEqual(DimExpr(2304) * sym("B") * sym("S"),
                                       sym("B") * sym("N") * sym("S"), reshape,
                                       "the element counts")));
  EXPECT_EQ(c.resolve(sym("N")), DimExpr(2304));
  EXPECT_TRUE(c.getDeferred().empty());
  // A factor that may be 0 does not cancel: 4*Z == K*Z holds for any K
  // where Z is 0.
  ASSERT_TRUE(succeeded(c.requireEqual(DimExpr(4) * sym("Z"),
                                       sym("K") * sym("Z"), reshape, "z")));
  EXPECT_EQ(c.resolve(sym("K")), sym("K"));
  EXPECT_EQ(c.getDeferred().size(), 1u);
  // Cancelled, different constants contradict.
  EXPECT_TRUE(failed(c.requireEqual(DimExpr(3) * sym("B"),
                                    DimExpr(5) * sym("B"), reshape, "b")));
  EXPECT_EQ(takeDiagnostic(), "'dg.reshape' op requires b to be equal, but "
                              "they are 3*B and 5*B, which cannot be equal: "
                              "'B' is in [1, 8]");
}

TEST_F(ShapeConstraintsTest, ConstantsThatDifferAreAnError) {
  ShapeConstraints c;
  Operation *mm = op("dg.matmul", "node_9");
  EXPECT_TRUE(failed(c.requireEqual(DimExpr(64), DimExpr(32), mm,
                                    "the contraction dimensions")));
  EXPECT_EQ(takeDiagnostic(), "'dg.matmul' op requires the contraction "
                              "dimensions to be equal, but they are 64 and 32");
}

TEST_F(ShapeConstraintsTest, ContradictionNamesTheEarlierOp) {
  ShapeConstraints c;
  Operation *first = op("dg.matmul", "node_7");
  Operation *second = op("dg.matmul", "node_9");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("B"), DimExpr(64), first,
                                       "the contraction dimensions")));
  EXPECT_TRUE(failed(c.requireEqual(sym("B"), DimExpr(32), second,
                                    "the contraction dimensions")));
  EXPECT_EQ(takeDiagnostic(),
            "'dg.matmul' op requires the contraction dimensions to be equal, "
            "but they are B and 32, where 'B' was already bound to 64 by "
            "'dg.matmul' \"node_7\"");
}

TEST_F(ShapeConstraintsTest, ContradictionOfADeferredEquality) {
  ShapeConstraints c;
  Operation *r1 = op("dg.reshape", "r1"), *r2 = op("dg.reshape", "r2");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("B") * sym("L"), sym("K") * sym("M"),
                                       r1, "the element counts")));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("B"), DimExpr(2), r1, "b")));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("L"), DimExpr(3), r1, "l")));
  ASSERT_TRUE(succeeded(c.requireEqual(sym("K"), DimExpr(2), r1, "k")));
  EXPECT_TRUE(failed(c.requireEqual(sym("M"), DimExpr(4), r2, "m")));
  EXPECT_EQ(takeDiagnostic(),
            "'dg.reshape' op requires m to be equal, but they are M and 4, "
            "which contradicts the element counts B*L == K*M required by "
            "'dg.reshape' \"r1\" (they become 6 and 8)");
  // The store is as it was.
  EXPECT_EQ(c.resolve(sym("M")), sym("M"));
  EXPECT_EQ(c.getDeferred().size(), 1u);
  ASSERT_TRUE(succeeded(c.requireEqual(sym("M"), DimExpr(3), r2, "m")));
  EXPECT_TRUE(c.getDeferred().empty()) << "6 == 6 needs no run-time check";
}

TEST_F(ShapeConstraintsTest, ConstantOutsideTheFacts) {
  ShapeConstraints c;
  c.setFacts("L", facts(8, 512, 8), "'sym.symbol' \"L\"");
  Operation *add = op("dg.add", "a");
  EXPECT_TRUE(failed(
      c.requireEqual(sym("L"), DimExpr(12), add, "broadcast dimension 1")));
  EXPECT_EQ(takeDiagnostic(),
            "'dg.add' op requires broadcast dimension 1 to be equal, but they "
            "are L and 12, which cannot be equal: 'L' is in [8, 512] divisor "
            "8 (from 'sym.symbol' \"L\")");
  EXPECT_TRUE(failed(c.requireEqual(sym("L"), DimExpr(1024), add, "d")));
  takeDiagnostic();
  EXPECT_TRUE(succeeded(c.requireEqual(sym("L"), DimExpr(64), add, "d")));
  EXPECT_EQ(c.resolve(sym("L")), DimExpr(64));
  EXPECT_EQ(c.getFacts("L"), facts(64, 64, 64));
}

TEST_F(ShapeConstraintsTest, MergedSymbolsIntersectTheirFacts) {
  ShapeConstraints c;
  c.setFacts("K", facts(1, 100, 4), "'sym.symbol' \"K\"");
  c.setFacts("N", facts(2, 4096, 6), "'sym.symbol' \"N\"");
  Operation *mm = op("dg.matmul", "mm");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("N"), sym("K"), mm, "k")));
  EXPECT_EQ(c.getFacts("K"), facts(2, 100, 12));
  EXPECT_EQ(c.getFacts("N"), facts(2, 100, 12));
  EXPECT_EQ(c.getFactsMap().count("N"), 0u);
  EXPECT_EQ(c.resolve(DimExpr::mod(sym("N"), 6)), DimExpr(0));
}

TEST_F(ShapeConstraintsTest, SymbolsWhoseFactsCannotMeet) {
  ShapeConstraints c;
  c.setFacts("B", facts(1, 4), "'sym.symbol' \"B\"");
  c.setFacts("L", facts(8, 512, 8), "'sym.symbol' \"L\"");
  c.setFacts("X", facts(1, 10, 3));
  c.setFacts("Y", facts(1, 10, 4));
  Operation *add = op("dg.add", "a");
  EXPECT_TRUE(failed(c.requireEqual(sym("B"), sym("L"), add, "d")));
  EXPECT_EQ(takeDiagnostic(),
            "'dg.add' op requires d to be equal, but they are B and L, which "
            "cannot be equal: 'B' is in [1, 4] (from 'sym.symbol' \"B\"); 'L' "
            "is in [8, 512] divisor 8 (from 'sym.symbol' \"L\")");
  // Overlapping ranges, but no common multiple of 3 and 4 in [1, 10].
  EXPECT_TRUE(failed(c.requireEqual(sym("X"), sym("Y"), add, "d")));
  EXPECT_EQ(takeDiagnostic(),
            "'dg.add' op requires d to be equal, but they are X and Y, which "
            "cannot be equal: 'X' is in [1, 10] divisor 3; 'Y' is in [1, 10] "
            "divisor 4");
  EXPECT_TRUE(c.getSubstitutions().empty());
}

TEST_F(ShapeConstraintsTest, FactsOfASymbolRefinedToAnExpression) {
  ShapeConstraints c;
  c.setFacts("S", facts(1, 100, 2));
  c.setFacts("B", facts(1, 8));
  c.setFacts("C", facts(1, 8));
  Operation *reshape = op("dg.reshape", "r");
  ASSERT_TRUE(
      succeeded(c.requireEqual(sym("S"), sym("B") * sym("C"), reshape, "d0")));
  // B*C <= 64 <= 100 is proved; B*C >= 2 (the least even value in range)
  // and evenness are left to the run-time.
  ASSERT_EQ(c.getDeferred().size(), 2u);
  EXPECT_EQ(c.getDeferred()[0].lhs.str(), "B*C");
  EXPECT_EQ(c.getDeferred()[0].rhs.str(), "max(2, B*C)");
  EXPECT_EQ(c.getDeferred()[1].lhs.str(), "mod(B*C, 2)");
  EXPECT_EQ(c.getDeferred()[1].rhs, DimExpr(0));
  EXPECT_EQ(c.getDeferred()[1].reason,
            "the facts [1, 100] divisor 2 of S, bound by d0 of dg.reshape 'r'");
  EXPECT_EQ(c.getFacts("S"), facts(1, 64));
}

TEST_F(ShapeConstraintsTest, RequireDivisible) {
  ShapeConstraints c;
  Operation *conv = op("dg.conv", "c");
  ASSERT_TRUE(succeeded(c.requireDivisible(sym("L"), 8, conv, "the width")));
  EXPECT_EQ(c.getFacts("L").divisor, 8);
  EXPECT_EQ(c.resolve(DimExpr::mod(sym("L"), 8)), DimExpr(0));
  EXPECT_EQ(c.resolve(DimExpr::ceilDiv(sym("L"), 8)),
            DimExpr::floorDiv(sym("L"), 8));
  EXPECT_TRUE(succeeded(
      c.requireDivisible(DimExpr(3) * sym("L"), 4, conv, "the width")));
  EXPECT_TRUE(c.getDeferred().empty());

  EXPECT_TRUE(failed(c.requireDivisible(DimExpr(12), 8, conv, "the width")));
  EXPECT_EQ(takeDiagnostic(), "'dg.conv' op requires the width to be a "
                              "multiple of 8, but it is 12");
  EXPECT_TRUE(failed(c.requireDivisible(DimExpr(2) * sym("B") + DimExpr(1), 2,
                                        conv, "the width")));
  EXPECT_EQ(takeDiagnostic(), "'dg.conv' op requires the width to be a "
                              "multiple of 2, but it is 2*B + 1, which never "
                              "is");

  ASSERT_TRUE(succeeded(
      c.requireDivisible(sym("B") * sym("C"), 4, conv, "the height")));
  ASSERT_EQ(c.getDeferred().size(), 1u);
  EXPECT_EQ(c.getDeferred()[0].lhs.str(), "mod(B*C, 4)");
  EXPECT_EQ(c.getDeferred()[0].reason, "the height of dg.conv 'c'");
}

TEST_F(ShapeConstraintsTest, ProveEqualWithFacts) {
  ShapeConstraints c;
  c.setFacts("L", facts(8, 512, 8));
  DimExpr l = sym("L");
  EXPECT_TRUE(c.proveEqual(DimExpr::ceilDiv(l, 8), DimExpr::floorDiv(l, 8)));
  EXPECT_TRUE(c.proveEqual(DimExpr::min(l, 512), l));
  EXPECT_FALSE(c.proveEqual(DimExpr::min(l, 256), l));
  // Reshape of [B, L, 768] to [B*L, 12, -1].
  DimExpr b = sym("B");
  EXPECT_TRUE(c.proveEqual(
      DimExpr::floorDiv(b * l * DimExpr(768), b * l * DimExpr(12)), 64));
}

TEST_F(ShapeConstraintsTest, Explain) {
  ShapeConstraints c;
  c.setFacts("L", facts(8, 512, 8), "'sym.symbol' \"L\"");
  Operation *mm = op("dg.matmul", "mm");
  ASSERT_TRUE(succeeded(c.requireEqual(sym("N"), sym("K"), mm, "k")));
  ASSERT_TRUE(succeeded(
      c.requireEqual(DimExpr(2) * sym("A"), sym("B") * sym("C"), mm, "m")));
  std::vector<std::string> lines = c.explain();
  std::vector<std::string> expected = {
      "L: [8, 512] divisor 8 (from 'sym.symbol' \"L\")",
      "N = K (by 'dg.matmul' \"mm\")", "class 2*A: 2*A == B*C",
      "check 2*A == B*C (m of dg.matmul 'mm')"};
  EXPECT_EQ(lines, expected);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  c.print(os);
  EXPECT_EQ(printed, expected[0] + "\n" + expected[1] + "\n" + expected[2] +
                         "\n" + expected[3] + "\n");
}

} // namespace
