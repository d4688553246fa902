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
// Division and modulo atoms are simplified where exact (constant folding,
// division of a polynomial whose coefficients are all multiples of a constant
// divisor). The printed form is the expression grammar of the artifact
// manifest (docs/ArtifactFormat.md), so the run-time evaluates exactly what
// the compiler reasoned about.
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
#include <vector>

namespace dyncc {

class DimExpr;

/// A non-polynomial atom: a symbol or a division/modulo node.
struct DimAtom {
  enum class Kind { Symbol, FloorDiv, CeilDiv, Mod, Min, Max };
  Kind kind = Kind::Symbol;
  std::string name;                     // Symbol only.
  std::shared_ptr<const DimExpr> lhs;   // All kinds but Symbol.
  std::shared_ptr<const DimExpr> rhs;   // All kinds but Symbol.

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

private:
  std::map<DimMonomial, int64_t> terms;
};

} // namespace dyncc

#endif // DYNCC_SUPPORT_DIMEXPR_H
