//===- ShapeConstraints.cpp - Constraint store for symbolic shapes --------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Analysis/ShapeConstraints.h"

#include "mlir/IR/Diagnostics.h"

#include <algorithm>

using namespace mlir;
using namespace dyncc;

DimExpr ShapeConstraints::resolve(const DimExpr &expr) const {
  std::vector<std::string> names;
  expr.collectSymbols(names);
  DimExpr result = expr;
  for (const std::string &name : names) {
    auto it = substitutions.find(name);
    if (it != substitutions.end())
      result = result.substitute(name, it->second);
  }
  return result;
}

SymShape ShapeConstraints::resolve(ArrayRef<DimExpr> shape) const {
  SymShape result;
  for (const DimExpr &dim : shape)
    result.push_back(resolve(dim));
  return result;
}

void ShapeConstraints::addSubstitution(const std::string &name,
                                       const DimExpr &value) {
  for (auto &entry : substitutions)
    entry.second = entry.second.substitute(name, value);
  substitutions[name] = value;
}

static bool mentions(const DimExpr &expr, const std::string &name) {
  std::vector<std::string> names;
  expr.collectSymbols(names);
  return std::find(names.begin(), names.end(), name) != names.end();
}

LogicalResult ShapeConstraints::requireEqual(const DimExpr &lhs,
                                             const DimExpr &rhs, Operation *op,
                                             const Twine &what) {
  DimExpr a = resolve(lhs), b = resolve(rhs);
  if (a == b)
    return success();
  if (a.isConstant() && b.isConstant())
    return op->emitOpError("requires ")
           << what << " to be equal, but they are " << a.str() << " and "
           << b.str();
  std::optional<std::string> symA = a.getSymbol(), symB = b.getSymbol();
  // Two symbols: keep the alphabetically first, for a deterministic result.
  if (symA && symB) {
    if (*symA < *symB)
      addSubstitution(*symB, a);
    else
      addSubstitution(*symA, b);
    return success();
  }
  if (symA && !mentions(b, *symA)) {
    addSubstitution(*symA, b);
    return success();
  }
  if (symB && !mentions(a, *symB)) {
    addSubstitution(*symB, a);
    return success();
  }
  std::string reason;
  llvm::raw_string_ostream os(reason);
  os << what << " of " << op->getName();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    os << " '" << loc.getName().getValue() << "'";
  deferred.push_back({a, b, reason});
  return success();
}
