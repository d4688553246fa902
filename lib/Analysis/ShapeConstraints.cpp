//===- ShapeConstraints.cpp - Constraint store for symbolic shapes --------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Analysis/ShapeConstraints.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace dyncc;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static bool mentions(const DimExpr &expr, const std::string &name) {
  std::vector<std::string> names;
  expr.collectSymbols(names);
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// `'dg.matmul' "node_7"`: the op's name and, where its location has one, the
/// node name.
static std::string describeOp(Operation *op) {
  std::string s = "'" + op->getName().getStringRef().str() + "'";
  if (auto loc = LocationAttr(op->getLoc()).findInstanceOf<NameLoc>())
    s += " \"" + loc.getName().str() + "\"";
  return s;
}

/// The reason recorded with a deferred equality: `what of dg.matmul 'mm'`.
static std::string deferredReason(Operation *op, const std::string &what) {
  std::string reason;
  llvm::raw_string_ostream os(reason);
  os << what << " of " << op->getName();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    os << " '" << loc.getName().getValue() << "'";
  return reason;
}

static std::string joinSources(const std::string &a, const std::string &b) {
  if (a.empty() || a == b)
    return b;
  if (b.empty())
    return a;
  return a + " and " + b;
}

static size_t exprSize(const DimExpr &e) {
  size_t n = 0;
  for (const auto &term : e.getTerms()) {
    ++n;
    for (const DimAtom &atom : term.first) {
      ++n;
      if (atom.kind != DimAtom::Kind::Symbol)
        n += exprSize(*atom.lhs) + exprSize(*atom.rhs);
    }
  }
  return n;
}

/// Whether `a` is a better class representative than `b`: constants, then
/// bare symbols (alphabetically first), then the smallest expression.
static bool isBetterRepresentative(const DimExpr &a, const DimExpr &b) {
  auto rank = [](const DimExpr &e) {
    return e.isConstant() ? 0 : (e.getSymbol() ? 1 : 2);
  };
  if (rank(a) != rank(b))
    return rank(a) < rank(b);
  std::string x = a.str(), y = b.str();
  if (rank(a) == 2) {
    size_t sa = exprSize(a), sb = exprSize(b);
    if (sa != sb)
      return sa < sb;
    if (x.size() != y.size())
      return x.size() < y.size();
  }
  return x < y;
}

//===----------------------------------------------------------------------===//
// Resolution
//===----------------------------------------------------------------------===//

DimExpr ShapeConstraints::resolveSubstitutions(const DimExpr &expr) const {
  std::vector<std::string> names;
  expr.collectSymbols(names);
  DimExpr result = expr;
  for (const std::string &name : names) {
    auto it = substitutions.find(name);
    if (it != substitutions.end())
      result = result.substitute(name, it->second);
  }
  return simplify(result, facts);
}

DimExpr ShapeConstraints::mapClasses(const DimExpr &expr) const {
  if (representatives.empty())
    return expr;
  auto it = representatives.find(expr.str());
  if (it != representatives.end())
    return it->second;
  // Members inside floordiv/ceildiv/mod/min/max operands.
  bool changed = false;
  DimExpr result;
  for (const auto &[mono, coeff] : expr.getTerms()) {
    DimExpr term(coeff);
    for (const DimAtom &atom : mono) {
      if (atom.kind == DimAtom::Kind::Symbol) {
        term = term * DimExpr::fromAtom(atom);
        continue;
      }
      DimExpr lhs = mapClasses(*atom.lhs), rhs = mapClasses(*atom.rhs);
      if (lhs == *atom.lhs && rhs == *atom.rhs) {
        term = term * DimExpr::fromAtom(atom);
        continue;
      }
      changed = true;
      term = term * DimExpr::rebuild(atom.kind, lhs, rhs);
    }
    result = result + term;
  }
  if (!changed)
    return expr;
  result = simplify(result, facts);
  it = representatives.find(result.str());
  return it != representatives.end() ? it->second : result;
}

DimExpr ShapeConstraints::resolve(const DimExpr &expr) const {
  return mapClasses(resolveSubstitutions(expr));
}

SymShape ShapeConstraints::resolve(ArrayRef<DimExpr> shape) const {
  SymShape result;
  for (const DimExpr &dim : shape)
    result.push_back(resolve(dim));
  return result;
}

bool ShapeConstraints::proveEqual(const DimExpr &lhs,
                                  const DimExpr &rhs) const {
  DimExpr a = resolve(lhs), b = resolve(rhs);
  return a == b || dyncc::proveEqual(a, b, facts);
}

//===----------------------------------------------------------------------===//
// Facts
//===----------------------------------------------------------------------===//

void ShapeConstraints::setFacts(StringRef name, const SymbolFacts &symbolFacts,
                                StringRef source) {
  std::string target = name.str();
  auto it = substitutions.find(target);
  if (it == substitutions.end()) {
    facts[target] = symbolFacts;
    factSources[target] = source.str();
  } else if (std::optional<std::string> other = it->second.getSymbol()) {
    // Refined to another symbol: that symbol gets the facts too.
    auto existing = facts.find(*other);
    facts[*other] = existing == facts.end()
                        ? symbolFacts
                        : existing->second.intersect(symbolFacts);
    factSources[*other] = joinSources(factSources[*other], source.str());
  } else {
    // Refined to a constant or an expression: only kept for `explain`.
    factSources[target] = source.str();
  }
  // Without a request there is nothing to report: conflicts surface with the
  // next requirement.
  [[maybe_unused]] std::optional<std::string> conflict = rebuild(nullptr);
  assert(!conflict && "rebuild without a request reports nothing");
  ++generation;
}

SymbolFacts ShapeConstraints::getFacts(StringRef name) const {
  auto sub = substitutions.find(name.str());
  DimExpr value =
      sub == substitutions.end() ? DimExpr::symbol(name.str()) : sub->second;
  if (std::optional<std::string> symbol = value.getSymbol()) {
    auto it = facts.find(*symbol);
    return it == facts.end() ? SymbolFacts() : it->second;
  }
  auto [lo, hi] = value.bounds(facts);
  SymbolFacts result;
  result.min = lo;
  result.max = hi;
  result.divisor = std::max<int64_t>(1, knownDivisor(value, facts));
  return result;
}

std::string
ShapeConstraints::factsNote(const std::vector<std::string> &names) const {
  std::string note;
  for (const std::string &name : names) {
    auto it = facts.find(name);
    if (it == facts.end())
      continue;
    note += note.empty() ? ": " : "; ";
    note += "'" + name + "' is in " + it->second.str();
    auto source = factSources.find(name);
    if (source != factSources.end() && !source->second.empty())
      note += " (from " + source->second + ")";
  }
  return note;
}

//===----------------------------------------------------------------------===//
// Requirements
//===----------------------------------------------------------------------===//

std::string ShapeConstraints::provenance(const Request &request) const {
  std::vector<std::string> notes, seen;
  for (const DimExpr &expr : request.exprs) {
    std::vector<std::string> names;
    expr.collectSymbols(names);
    for (const std::string &name : names) {
      if (std::find(seen.begin(), seen.end(), name) != seen.end())
        continue;
      seen.push_back(name);
      auto it = substitutions.find(name);
      if (it == substitutions.end())
        continue;
      std::string note =
          "'" + name + "' was already bound to " + it->second.str();
      auto source = bindingSources.find(name);
      if (source != bindingSources.end() && !source->second.empty())
        note += " by " + source->second;
      notes.push_back(note);
    }
    std::string member = resolveSubstitutions(expr).str();
    auto rep = representatives.find(member);
    if (rep != representatives.end()) {
      std::string note =
          "'" + member + "' was already required to equal " + rep->second.str();
      auto source = memberSources.find(member);
      if (source != memberSources.end() && !source->second.empty())
        note += " by " + source->second;
      notes.push_back(note);
    }
  }
  std::string result;
  for (const std::string &note : notes)
    result += (result.empty() ? ", where " : ", and ") + note;
  return result;
}

LogicalResult ShapeConstraints::fail(const Request &request,
                                     const std::string &detail) const {
  return request.op->emitOpError()
         << request.claim << detail << provenance(request);
}

static std::string describePending(const std::string &what, const DimExpr &lhs,
                                   const DimExpr &rhs,
                                   const std::string &source) {
  std::string s = what + " " + lhs.str() + " == " + rhs.str();
  if (!source.empty())
    s += " required by " + source;
  return s;
}

void ShapeConstraints::addSubstitution(const std::string &name,
                                       const DimExpr &value) {
  for (auto &entry : substitutions)
    entry.second = entry.second.substitute(name, value);
  substitutions[name] = value;
}

void ShapeConstraints::addPending(const DimExpr &lhs, const DimExpr &rhs,
                                  const std::string &what,
                                  const std::string &source,
                                  const std::string &reason) {
  pending.push_back({lhs, rhs, what, source});
  deferred.push_back(
      {resolveSubstitutions(lhs), resolveSubstitutions(rhs), reason});
}

std::optional<std::string> ShapeConstraints::bind(const std::string &name,
                                                  const DimExpr &value,
                                                  const Request &request,
                                                  const Pending *cause) {
  std::string causeNote;
  if (cause)
    causeNote =
        ", which makes " +
        describePending(cause->what, cause->lhs, cause->rhs, cause->source) +
        " require '" + name + "' to equal " + value.str();
  auto it = facts.find(name);
  if (std::optional<std::string> other = value.getSymbol()) {
    // Two symbols: the survivor gets the intersection of their facts.
    auto otherIt = facts.find(*other);
    if (it != facts.end() || otherIt != facts.end()) {
      SymbolFacts a = it != facts.end() ? it->second : SymbolFacts();
      SymbolFacts b = otherIt != facts.end() ? otherIt->second : SymbolFacts();
      SymbolFacts both = a.intersect(b);
      if (both.isEmpty())
        return causeNote + ", which cannot be equal" +
               factsNote({std::min(name, *other), std::max(name, *other)});
      facts[*other] = both;
      factSources[*other] = joinSources(factSources[name], factSources[*other]);
    }
  } else if (it != facts.end()) {
    SymbolFacts f = it->second;
    if (std::optional<int64_t> constant = value.getConstant()) {
      if (!f.contains(*constant))
        return causeNote + ", which cannot be equal" + factsNote({name});
    } else {
      // The facts of `name` now constrain `value`: what cannot be proved is
      // left to the run-time.
      std::string what = "the facts " + f.str() + " of " + name;
      std::string reason = what + ", bound by " + request.reason;
      auto [lo, hi] = f.range();
      DimExpr clamped = value;
      if (!proveLE(DimExpr(lo), value, facts))
        clamped = DimExpr::max(DimExpr(lo), clamped);
      if (hi != INT64_MAX && !proveLE(value, DimExpr(hi), facts))
        clamped = DimExpr::min(clamped, DimExpr(hi));
      if (clamped != value)
        addPending(value, clamped, what, request.source, reason);
      if (f.divisor > 1 && !isDivisibleBy(value, f.divisor, facts))
        addPending(DimExpr::mod(value, DimExpr(f.divisor)), DimExpr(0), what,
                   request.source, reason);
    }
  }
  facts.erase(name);
  factSources.erase(name);
  addSubstitution(name, value);
  bindingSources[name] = request.source;
  return rebuild(&request);
}

std::optional<std::string> ShapeConstraints::rebuild(const Request *request) {
  // Re-resolve the deferred equalities; drop those that became true.
  size_t kept = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    DimExpr lhs = resolveSubstitutions(pending[i].lhs);
    DimExpr rhs = resolveSubstitutions(pending[i].rhs);
    if (lhs == rhs)
      continue;
    if (request && dyncc::proveNotEqual(lhs, rhs, facts)) {
      std::vector<std::string> names;
      lhs.collectSymbols(names);
      rhs.collectSymbols(names);
      return ", which contradicts " +
             describePending(pending[i].what, pending[i].lhs, pending[i].rhs,
                             pending[i].source) +
             " (they become " + lhs.str() + " and " + rhs.str() + ")" +
             factsNote(names);
    }
    deferred[kept] = {lhs, rhs, deferred[i].reason};
    pending[kept] = pending[i];
    ++kept;
  }
  pending.resize(kept);
  deferred.resize(kept);

  // Union-find over the printed canonical forms of both sides.
  std::map<std::string, std::string> parent;
  std::map<std::string, DimExpr> exprs;
  std::map<std::string, std::optional<int64_t>> constants; // By root.
  memberSources.clear();
  auto find = [&](std::string key) {
    while (parent[key] != key) {
      parent[key] = parent[parent[key]];
      key = parent[key];
    }
    return key;
  };
  auto add = [&](const DimExpr &e, const std::string &source) {
    std::string key = e.str();
    if (parent.emplace(key, key).second) {
      exprs.emplace(key, e);
      constants[key] = e.getConstant();
      memberSources[key] = source;
    }
    return key;
  };
  for (size_t i = 0; i < deferred.size(); ++i) {
    std::string x = find(add(deferred[i].lhs, pending[i].source));
    std::string y = find(add(deferred[i].rhs, pending[i].source));
    if (x == y)
      continue;
    std::optional<int64_t> cx = constants[x], cy = constants[y];
    if (request && cx && cy && *cx != *cy)
      return ", which contradicts " +
             describePending(pending[i].what, pending[i].lhs, pending[i].rhs,
                             pending[i].source) +
             " (it makes " + std::to_string(*cx) + " equal to " +
             std::to_string(*cy) + ")";
    // Deterministic: the smaller key becomes the root.
    if (y < x)
      std::swap(x, y);
    parent[y] = x;
    if (!constants[x])
      constants[x] = cy;
  }

  std::map<std::string, std::vector<std::string>> members;
  for (const auto &entry : parent)
    members[find(entry.first)].push_back(entry.first);
  classes.clear();
  representatives.clear();
  std::optional<std::pair<std::string, DimExpr>> derived;
  for (const auto &[root, keys] : members) {
    DimExpr rep = exprs.at(keys.front());
    for (const std::string &key : keys)
      if (isBetterRepresentative(exprs.at(key), rep))
        rep = exprs.at(key);
    std::vector<DimExpr> &list = classes[rep.str()];
    list.push_back(rep);
    for (const std::string &key : keys) {
      const DimExpr &member = exprs.at(key);
      if (member == rep)
        continue;
      list.push_back(member);
      representatives.emplace(key, rep);
      // A bare symbol equal to something else is refined away.
      std::optional<std::string> symbol = member.getSymbol();
      if (request && !derived && symbol && !mentions(rep, *symbol))
        derived = {*symbol, rep};
    }
  }
  if (!derived)
    return std::nullopt;
  const Pending *cause = nullptr;
  for (size_t i = 0; i < deferred.size() && !cause; ++i)
    if (deferred[i].lhs.getSymbol() == derived->first ||
        deferred[i].rhs.getSymbol() == derived->first)
      cause = &pending[i];
  // `bind` may grow `pending`: pass a copy.
  std::optional<Pending> causeCopy;
  if (cause)
    causeCopy = *cause;
  return bind(derived->first, derived->second, *request,
              causeCopy ? &*causeCopy : nullptr);
}

bool ShapeConstraints::keepsDeclared(const std::string &name,
                                     const DimExpr &expr) const {
  if (!facts.count(name))
    return false;
  std::vector<std::string> names;
  expr.collectSymbols(names);
  return llvm::any_of(names, [&](const std::string &n) {
    return !facts.count(n);
  });
}

std::vector<std::string>
ShapeConstraints::cancelCommonSymbols(DimExpr &a, DimExpr &b) const {
  std::vector<std::string> names, cancelled;
  a.collectSymbols(names);
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string &name : names) {
    auto it = facts.find(name);
    if (it == facts.end() || it->second.min < 1)
      continue;
    DimExpr symbol = DimExpr::symbol(name);
    while (true) {
      std::optional<DimExpr> qa = a.divideExactly(symbol);
      std::optional<DimExpr> qb = b.divideExactly(symbol);
      if (!qa || !qb)
        break;
      a = *qa;
      b = *qb;
      if (cancelled.empty() || cancelled.back() != name)
        cancelled.push_back(name);
    }
  }
  return cancelled;
}

LogicalResult ShapeConstraints::requireEqual(const DimExpr &lhs,
                                             const DimExpr &rhs, Operation *op,
                                             const Twine &what) {
  Request request{op, what.str(), "", describeOp(op), {lhs, rhs}, ""};
  request.claim = "requires " + request.what + " to be equal, but they are " +
                  lhs.str() + " and " + rhs.str();
  request.reason = deferredReason(op, request.what);
  DimExpr a = resolve(lhs), b = resolve(rhs);
  std::vector<std::string> cancelled = cancelCommonSymbols(a, b);
  if (a == b)
    return success();
  if (a.isConstant() && b.isConstant())
    return fail(request, cancelled.empty() ? ""
                                           : ", which cannot be equal" +
                                                 factsNote(cancelled));
  if (dyncc::proveNotEqual(a, b, facts)) {
    std::vector<std::string> names;
    a.collectSymbols(names);
    b.collectSymbols(names);
    return fail(request, ", which cannot be equal" + factsNote(names));
  }

  // On a conflict the store is left as it was.
  ShapeConstraints saved = *this;
  std::optional<std::string> conflict;
  std::optional<std::string> symA = a.getSymbol(), symB = b.getSymbol();
  if (symA && symB) {
    // Two symbols: keep one with declared facts over one without (a graph
    // input's symbol over a fresh data-dependent one), else the
    // alphabetically first, for a deterministic result.
    bool factsA = facts.count(*symA), factsB = facts.count(*symB);
    if (factsA != factsB ? factsA : *symA < *symB)
      conflict = bind(*symB, a, request, nullptr);
    else
      conflict = bind(*symA, b, request, nullptr);
  } else if (symA && !mentions(b, *symA) && !keepsDeclared(*symA, b)) {
    conflict = bind(*symA, b, request, nullptr);
  } else if (symB && !mentions(a, *symB) && !keepsDeclared(*symB, a)) {
    conflict = bind(*symB, a, request, nullptr);
  } else {
    addPending(lhs, rhs, request.what, request.source, request.reason);
    conflict = rebuild(&request);
  }
  if (!conflict) {
    ++generation;
    return success();
  }
  *this = std::move(saved);
  return fail(request, *conflict);
}

LogicalResult ShapeConstraints::requireDivisible(const DimExpr &expr,
                                                 int64_t divisor, Operation *op,
                                                 const Twine &what) {
  assert(divisor >= 1 && "divisors are positive");
  Request request{op, what.str(), "", describeOp(op), {expr}, ""};
  request.claim = "requires " + request.what + " to be a multiple of " +
                  std::to_string(divisor) + ", but it is " + expr.str();
  request.reason = deferredReason(op, request.what);
  DimExpr e = resolve(expr);
  if (isDivisibleBy(e, divisor, facts))
    return success();
  std::vector<std::string> names;
  e.collectSymbols(names);
  if (e.isConstant())
    return fail(request, "");
  // Never a multiple: a multiple plus a constant that is not one, or bounds
  // that hold no multiple.
  auto constantIt = e.getTerms().find(DimMonomial());
  int64_t k = constantIt == e.getTerms().end() ? 0 : constantIt->second;
  auto [lo, hi] = e.bounds(facts);
  int64_t lastQuotient = hi / divisor - (hi % divisor < 0 ? 1 : 0);
  if ((k % divisor != 0 && isDivisibleBy(e - DimExpr(k), divisor, facts)) ||
      (__int128)lastQuotient * divisor < lo)
    return fail(request, ", which never is" + factsNote(names));

  ShapeConstraints saved = *this;
  std::optional<std::string> conflict;
  if (std::optional<std::string> symbol = e.getSymbol()) {
    SymbolFacts current = getFacts(*symbol), multiple = current;
    multiple.divisor = divisor;
    SymbolFacts both = current.intersect(multiple);
    if (both.isEmpty()) {
      conflict = ", which never is" + factsNote(names);
    } else {
      facts[*symbol] = both;
      factSources[*symbol] = joinSources(factSources[*symbol], request.source);
      conflict = rebuild(&request);
    }
  } else {
    addPending(DimExpr::mod(expr, DimExpr(divisor)), DimExpr(0), request.what,
               request.source, request.reason);
    conflict = rebuild(&request);
  }
  if (!conflict) {
    ++generation;
    return success();
  }
  *this = std::move(saved);
  return fail(request, *conflict);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

std::vector<std::string> ShapeConstraints::explain() const {
  std::vector<std::string> lines;
  for (const auto &[name, f] : facts) {
    std::string line = name + ": " + f.str();
    auto source = factSources.find(name);
    if (source != factSources.end() && !source->second.empty())
      line += " (from " + source->second + ")";
    lines.push_back(line);
  }
  for (const auto &[name, value] : substitutions) {
    std::string line = name + " = " + value.str();
    auto source = bindingSources.find(name);
    if (source != bindingSources.end() && !source->second.empty())
      line += " (by " + source->second + ")";
    lines.push_back(line);
  }
  for (const auto &[rep, members] : classes) {
    if (members.size() < 2)
      continue;
    std::string line = "class " + rep + ":";
    for (size_t i = 0; i < members.size(); ++i)
      line += (i == 0 ? " " : " == ") + members[i].str();
    lines.push_back(line);
  }
  for (const DeferredEquality &eq : deferred)
    lines.push_back("check " + eq.lhs.str() + " == " + eq.rhs.str() + " (" +
                    eq.reason + ")");
  return lines;
}

void ShapeConstraints::print(raw_ostream &os) const {
  for (const std::string &line : explain())
    os << line << "\n";
}
