//===- DimExpr.h - Canonical symbolic dimension expressions -----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A DimExpr is an integer expression over named shape symbols: constants,
// symbols, +, -, *, floordiv, ceildiv and mod. It is kept in a canonical form
// so that equal expressions compare equal (`12*B*L == L*B*12`):
//
//   expr  := sum of (coefficient * monomial), monomials sorted, no zero terms
//   monomial := sorted product of atoms
//   atom  := symbol | floordiv(expr, expr) | ceildiv(expr, expr)
//          | min(expr, expr) | max(expr, expr)
//          | mod(expr, expr)
//
// The constructors simplify only what holds for every integer value of the
// symbols: constant folding, exact division of polynomials (`floordiv(12*B*L,
// 12*L)` is `B`), cancelling a common factor of numerator and denominator,
// merging nested floor divisions, and min/max of operands that differ by a
// constant. A coefficient that would overflow int64 makes the whole
// expression `floordiv(1, 0)` (see `isOverflow`): never defined, never wrong.
//
// What depends on the symbols' facts (ranges, divisors) is in `simplify`,
// `bounds`, `isDivisibleBy` and the `prove*` helpers below. Shape symbols are
// non-negative: a symbol without facts ranges over [0, INT64_MAX].
//
// The printed form is the expression grammar of the artifact manifest
// (docs/ArtifactFormat.md), so the run-time evaluates exactly what the
// compiler reasoned about.
//
// This header has no MLIR dependency: the symbolic algebra is plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_SUPPORT_DIMEXPR_H
#define DYNCC_SUPPORT_DIMEXPR_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dyncc {

class DimExpr;

/// What is known about one shape symbol: every value lies in the inclusive
/// range [min, max] and is a multiple of `divisor` (>= 1).
struct SymbolFacts {
  int64_t min = 0;
  int64_t max = INT64_MAX;
  int64_t divisor = 1;

  /// Whether `value` satisfies the facts.
  bool contains(int64_t value) const;
  /// The range tightened to multiples of the divisor (`[8, 512]` for
  /// `[1, 514]` with divisor 8); `first > second` when no value satisfies the
  /// facts.
  std::pair<int64_t, int64_t> range() const;
  bool isEmpty() const;
  /// The facts of a value that satisfies both: the intersection of the ranges
  /// and the lcm of the divisors (check `isEmpty`).
  SymbolFacts intersect(const SymbolFacts &other) const;
  /// Prints `[min, max]` (`max` as `inf` when INT64_MAX), then ` divisor d`
  /// when d > 1.
  std::string str() const;

  bool operator==(const SymbolFacts &other) const {
    return min == other.min && max == other.max && divisor == other.divisor;
  }
  bool operator!=(const SymbolFacts &other) const { return !(*this == other); }
};

/// Facts by symbol name. A symbol without an entry is only known to be
/// non-negative.
using FactsMap = std::map<std::string, SymbolFacts>;

/// A non-polynomial atom: a symbol or a division/modulo node.
struct DimAtom {
  enum class Kind { Symbol, FloorDiv, CeilDiv, Mod, Min, Max };
  Kind kind = Kind::Symbol;
  std::string name;                   // Symbol only.
  std::shared_ptr<const DimExpr> lhs; // All kinds but Symbol.
  std::shared_ptr<const DimExpr> rhs; // All kinds but Symbol.

  bool operator<(const DimAtom &other) const;
  bool operator==(const DimAtom &other) const;
};

/// A product of atoms, kept sorted. The empty monomial is the constant 1.
using DimMonomial = std::vector<DimAtom>;

/// A canonical dimension expression.
class DimExpr {
public:
  /// The constant 0.
  DimExpr() = default;
  /// A constant.
  DimExpr(int64_t value);
  /// A named symbol.
  static DimExpr symbol(const std::string &name);
  /// Exactly one atom, without simplification.
  static DimExpr fromAtom(const DimAtom &atom);

  static DimExpr floorDiv(const DimExpr &lhs, const DimExpr &rhs);
  static DimExpr ceilDiv(const DimExpr &lhs, const DimExpr &rhs);
  static DimExpr mod(const DimExpr &lhs, const DimExpr &rhs);
  static DimExpr min(const DimExpr &lhs, const DimExpr &rhs);
  static DimExpr max(const DimExpr &lhs, const DimExpr &rhs);
  /// Applies the binary function named `name` (floordiv, ceildiv, mod, min,
  /// max); std::nullopt for any other name.
  static std::optional<DimExpr> applyFunction(const std::string &name,
                                              const DimExpr &lhs,
                                              const DimExpr &rhs);
  /// Rebuilds a division/modulo/min/max atom of kind `kind` over new
  /// operands, simplifying; `kind` must not be Symbol.
  static DimExpr rebuild(DimAtom::Kind kind, const DimExpr &lhs,
                         const DimExpr &rhs);

  friend DimExpr operator+(const DimExpr &lhs, const DimExpr &rhs);
  friend DimExpr operator-(const DimExpr &lhs, const DimExpr &rhs);
  friend DimExpr operator*(const DimExpr &lhs, const DimExpr &rhs);

  bool operator==(const DimExpr &other) const { return terms == other.terms; }
  bool operator!=(const DimExpr &other) const { return !(*this == other); }
  bool operator<(const DimExpr &other) const { return terms < other.terms; }

  /// Returns the value if the expression is a constant.
  std::optional<int64_t> getConstant() const;
  /// Returns the name if the expression is exactly one symbol.
  std::optional<std::string> getSymbol() const;
  bool isConstant() const { return getConstant().has_value(); }
  /// Whether this is what arithmetic whose coefficients overflow int64
  /// yields: `floordiv(1, 0)`, never defined, absorbing every operation.
  bool isOverflow() const;

  /// Collects the names of all symbols the expression mentions.
  void collectSymbols(std::vector<std::string> &names) const;

  /// Replaces every occurrence of symbol `name` by `value`.
  DimExpr substitute(const std::string &name, const DimExpr &value) const;

  /// Evaluates with the given symbol values; std::nullopt when a symbol has no
  /// value, on division by zero, or on overflow.
  std::optional<int64_t>
  evaluate(const std::map<std::string, int64_t> &values) const;

  /// Prints in the manifest grammar, e.g. `12*B*L + 3`, `floordiv(L - 1, 2)`.
  std::string str() const;

  /// Parses the manifest grammar. On failure returns std::nullopt and sets
  /// `error` to a message naming the position.
  static std::optional<DimExpr> parse(const std::string &text,
                                      std::string &error);

  /// The canonical terms: monomial -> non-zero coefficient.
  const std::map<DimMonomial, int64_t> &getTerms() const { return terms; }

  /// Sound bounds `[lo, hi]` of every defined value of the expression when the
  /// symbols satisfy `facts` (interval arithmetic, saturating at the int64
  /// limits). A symbol without facts ranges over [0, INT64_MAX].
  std::pair<int64_t, int64_t> bounds(const FactsMap &facts = FactsMap()) const;

  /// Returns the quotient `q` with `q * divisor == *this` as polynomials (the
  /// atoms taken as independent variables), if there is one.
  std::optional<DimExpr> divideExactly(const DimExpr &divisor) const;

private:
  std::map<DimMonomial, int64_t> terms;
};

/// The largest number known to divide every value of `expr` under `facts`
/// (from coefficients and symbol divisors); 0 when `expr` is 0.
int64_t knownDivisor(const DimExpr &expr, const FactsMap &facts = FactsMap());
/// Whether every value of `expr` is a multiple of `n` under `facts`: with `L`
/// of divisor 8, `2*L` is a multiple of 16 and `B*L` of 8.
bool isDivisibleBy(const DimExpr &expr, int64_t n,
                   const FactsMap &facts = FactsMap());

/// Whether `expr >= 0` for every value of the symbols satisfying `facts`.
bool proveNonNegative(const DimExpr &expr, const FactsMap &facts = FactsMap());
/// Whether `lhs <= rhs` (from the bounds of `rhs - lhs`).
bool proveLE(const DimExpr &lhs, const DimExpr &rhs,
             const FactsMap &facts = FactsMap());
/// Whether `lhs < rhs`.
bool proveLessThan(const DimExpr &lhs, const DimExpr &rhs,
                   const FactsMap &facts = FactsMap());
/// Whether `lhs == rhs` (equal simplified forms, or a difference bounded to
/// [0, 0]).
bool proveEqual(const DimExpr &lhs, const DimExpr &rhs,
                const FactsMap &facts = FactsMap());
/// Whether `lhs != rhs` for every value of the symbols: the bounds of the
/// difference exclude 0, or its constant part is not a multiple of what is
/// known to divide the rest (`2*B` is never 7).
bool proveNotEqual(const DimExpr &lhs, const DimExpr &rhs,
                   const FactsMap &facts = FactsMap());

/// Simplifies with the symbols' facts: a symbol with a one-value range is
/// that constant; a floordiv/ceildiv/mod by a positive constant drops the
/// terms that are multiples of it (`floordiv(L + 8*B, 8)` is `B +
/// floordiv(L, 8)`), an exact division is the floordiv atom (with `L` of
/// divisor 8, `ceildiv(L, 8)` is `floordiv(L, 8)` and `mod(L, 8)` is 0); an
/// atom whose bounds are one value is that value (`mod(L, 8)` is `L` when
/// `L < 8`), and min/max of provably ordered operands is the one operand
/// (`min(L, 512)` is `L` when `L <= 512`). The result is a canonical
/// expression (it prints and parses back to itself) equal to `expr` wherever
/// `expr` is defined.
DimExpr simplify(const DimExpr &expr, const FactsMap &facts);

} // namespace dyncc

#endif // DYNCC_SUPPORT_DIMEXPR_H
