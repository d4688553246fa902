//===- ShapeConstraints.h - Constraint store for symbolic shapes -*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Records what a program implies about its symbolic dimensions while shapes
// are propagated:
//
// * facts about symbols (range, divisor), declared with `setFacts` and
//   refined by the equalities;
// * an equality between a bare symbol and another expression becomes a
//   substitution (the symbol is refined away everywhere); two symbols keep the
//   alphabetically first, with the intersection of their facts;
// * any other equality is kept for the run-time to check, and its two sides
//   join one equivalence class (union-find over canonical forms, keyed by the
//   printed form) whose representative `resolve` returns for every member:
//   a constant if there is one, else the alphabetically first bare symbol,
//   else the smallest expression.
//
// A contradiction (two different constants, ranges or divisors that cannot
// meet, an equality that a later substitution makes false) is an error on the
// op that implies it, naming both expressions and, where an earlier op bound
// a symbol or required an equality, that op.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_ANALYSIS_SHAPECONSTRAINTS_H
#define DYNCC_ANALYSIS_SHAPECONSTRAINTS_H

#include "dyncc/Support/DimExpr.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace dyncc {

/// The symbolic shape of one tensor: one expression per dimension.
using SymShape = llvm::SmallVector<DimExpr, 4>;

/// An equality the compiler could not discharge, checked at run time.
struct DeferredEquality {
  DimExpr lhs;
  DimExpr rhs;
  std::string reason;
};

class ShapeConstraints {
public:
  /// Requires `lhs == rhs`. `op` is the op that implies it and `what` names
  /// the dimensions, for the error and the recorded reason.
  mlir::LogicalResult requireEqual(const DimExpr &lhs, const DimExpr &rhs,
                                   mlir::Operation *op,
                                   const llvm::Twine &what);

  /// Requires every value of `expr` to be a multiple of `divisor` (>= 1). A
  /// bare symbol gets the divisor as a fact; a provable violation is an
  /// error; anything else is deferred to the run-time as
  /// `mod(expr, divisor) == 0`.
  mlir::LogicalResult requireDivisible(const DimExpr &expr, int64_t divisor,
                                       mlir::Operation *op,
                                       const llvm::Twine &what);

  /// Declares the facts of symbol `name` (replacing earlier ones); `source`
  /// names where they come from (e.g. `'sym.symbol' "B"`), for the messages.
  /// Declare facts before the equalities that mention the symbol: the facts
  /// of a symbol already refined to another symbol go to that symbol, and are
  /// otherwise only kept.
  void setFacts(llvm::StringRef name, const SymbolFacts &facts,
                llvm::StringRef source = "");
  /// What is known about the value of symbol `name`: its facts, those of the
  /// symbol it was refined to, or the bounds and divisor of the expression it
  /// was refined to.
  SymbolFacts getFacts(llvm::StringRef name) const;
  /// The facts of the symbols that remain.
  const FactsMap &getFactsMap() const { return facts; }

  /// Applies every substitution recorded so far, simplifies with the facts,
  /// and maps each member of an equivalence class to its representative.
  DimExpr resolve(const DimExpr &expr) const;
  SymShape resolve(llvm::ArrayRef<DimExpr> shape) const;

  /// Whether `lhs == rhs` follows from what was recorded: the same class, or
  /// equal canonical forms after resolution and simplification with facts.
  bool proveEqual(const DimExpr &lhs, const DimExpr &rhs) const;

  /// Symbol -> expression it was refined to.
  const std::map<std::string, DimExpr> &getSubstitutions() const {
    return substitutions;
  }
  /// The equalities the run-time must check, with substitutions applied (but
  /// not the class representatives, which would make them trivial). Those
  /// that became true are dropped.
  llvm::ArrayRef<DeferredEquality> getDeferred() const { return deferred; }

  /// Counts the changes to the store: equal generations mean nothing was
  /// learned in between (propagation's fixpoint test).
  uint64_t getGeneration() const { return generation; }

  /// One line per fact, substitution, class and deferred equality, e.g.
  /// `L: [8, 512] divisor 8 (from 'sym.symbol' "L")`, `K = N (by 'dg.matmul'
  /// "mm")`, `class 2*A: 2*A == B*C`, `check 2*A == B*C (...)`.
  std::vector<std::string> explain() const;
  void print(llvm::raw_ostream &os) const;

private:
  /// What the current call asks, for the messages.
  struct Request {
    mlir::Operation *op;
    std::string what;
    /// The message's start: `requires ... but they are L and R`.
    std::string claim;
    /// The op, for the messages: `'dg.matmul' "mm"`.
    std::string source;
    std::vector<DimExpr> exprs;
    /// The reason recorded with a deferred equality.
    std::string reason;
  };
  /// A deferred equality as it was required (before substitutions).
  struct Pending {
    DimExpr lhs;
    DimExpr rhs;
    std::string what;
    std::string source;
  };

  /// Whether symbol `name` has declared facts and `expr` mentions a symbol
  /// that has none (a fresh data-dependent one): such a symbol is not
  /// substituted by `expr` (a graph input's dimension stays bindable), the
  /// equality is checked at run time instead.
  bool keepsDeclared(const std::string &name, const DimExpr &expr) const;
  /// Divides both sides of an equality by each symbol that is a factor of
  /// both and cannot be 0 (its range starts at 1 or above): `2304*B*S ==
  /// B*N*S`, a reshape's element counts, becomes `2304 == N`. Returns the
  /// symbols cancelled, whose facts a contradiction then names.
  std::vector<std::string> cancelCommonSymbols(DimExpr &a, DimExpr &b) const;
  DimExpr resolveSubstitutions(const DimExpr &expr) const;
  DimExpr mapClasses(const DimExpr &expr) const;
  void addSubstitution(const std::string &name, const DimExpr &value);
  // These return what contradicts the request, if anything, for `fail`
  // (which runs after the store was restored).
  std::optional<std::string> bind(const std::string &name, const DimExpr &value,
                                  const Request &request, const Pending *cause);
  std::optional<std::string> rebuild(const Request *request);
  void addPending(const DimExpr &lhs, const DimExpr &rhs,
                  const std::string &what, const std::string &source,
                  const std::string &reason);
  std::string provenance(const Request &request) const;
  std::string factsNote(const std::vector<std::string> &names) const;
  mlir::LogicalResult fail(const Request &request,
                           const std::string &detail) const;

  uint64_t generation = 0;
  std::map<std::string, DimExpr> substitutions;
  std::map<std::string, std::string> bindingSources;
  FactsMap facts;
  std::map<std::string, std::string> factSources;
  std::vector<Pending> pending;
  llvm::SmallVector<DeferredEquality> deferred;
  /// Classes by representative (printed form), members in order.
  std::map<std::string, std::vector<DimExpr>> classes;
  /// Member (printed form) -> representative, for non-trivial classes.
  std::map<std::string, DimExpr> representatives;
  /// Member (printed form) -> the op that first required its equality.
  std::map<std::string, std::string> memberSources;
};

} // namespace dyncc

#endif // DYNCC_ANALYSIS_SHAPECONSTRAINTS_H
