//===- DimExpr.cpp - Canonical symbolic dimension expressions -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Support/DimExpr.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <tuple>

using namespace dyncc;

//===----------------------------------------------------------------------===//
// Atoms
//===----------------------------------------------------------------------===//

bool DimAtom::operator<(const DimAtom &other) const {
  if (kind != other.kind)
    return kind < other.kind;
  if (kind == Kind::Symbol)
    return name < other.name;
  if (*lhs != *other.lhs)
    return *lhs < *other.lhs;
  return *rhs < *other.rhs;
}

bool DimAtom::operator==(const DimAtom &other) const {
  if (kind != other.kind)
    return false;
  if (kind == Kind::Symbol)
    return name == other.name;
  return *lhs == *other.lhs && *rhs == *other.rhs;
}

static int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

static int64_t ceilDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0)))
    ++q;
  return q;
}

/// `a - b*floordiv(a, b)`, computed without intermediate overflow.
static int64_t floorModInt(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// Whether `a op b` is defined for a division or modulo.
static bool isDivisionDefined(int64_t a, int64_t b) {
  return b != 0 && !(a == INT64_MIN && b == -1);
}

static uint64_t absU(int64_t a) {
  return a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
}

static uint64_t gcdU(uint64_t a, uint64_t b) {
  while (b != 0) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// A gcd as an int64_t; 2^63 (the gcd of INT64_MIN alone) becomes 2^62.
static int64_t gcdOf(int64_t a, int64_t b) {
  uint64_t g = gcdU(absU(a), absU(b));
  return g > (uint64_t)INT64_MAX ? INT64_C(1) << 62 : (int64_t)g;
}

//===----------------------------------------------------------------------===//
// Symbol facts
//===----------------------------------------------------------------------===//

bool SymbolFacts::contains(int64_t value) const {
  return value >= min && value <= max && divisor >= 1 && value % divisor == 0;
}

std::pair<int64_t, int64_t> SymbolFacts::range() const {
  if (divisor <= 1 || min > max)
    return {min, max};
  int64_t hi = floorDivInt(max, divisor) * divisor;
  int64_t loQ = ceilDivInt(min, divisor), lo;
  if (__builtin_mul_overflow(loQ, divisor, &lo))
    return {INT64_MAX, INT64_MIN};
  return {lo, hi};
}

bool SymbolFacts::isEmpty() const {
  auto [lo, hi] = range();
  return lo > hi;
}

SymbolFacts SymbolFacts::intersect(const SymbolFacts &other) const {
  SymbolFacts result;
  result.min = std::max(min, other.min);
  result.max = std::min(max, other.max);
  int64_t a = std::max<int64_t>(divisor, 1),
          b = std::max<int64_t>(other.divisor, 1);
  int64_t lcm;
  if (__builtin_mul_overflow(a / gcdOf(a, b), b, &lcm)) {
    // Only 0 is a multiple of both within int64.
    result.min = std::max<int64_t>(result.min, 0);
    result.max = std::min<int64_t>(result.max, 0);
    lcm = 1;
  }
  result.divisor = lcm;
  return result;
}

std::string SymbolFacts::str() const {
  std::string s =
      "[" + std::to_string(min) + ", " +
      (max == INT64_MAX ? std::string("inf") : std::to_string(max)) + "]";
  if (divisor > 1)
    s += " divisor " + std::to_string(divisor);
  return s;
}

//===----------------------------------------------------------------------===//
// Construction and arithmetic
//===----------------------------------------------------------------------===//

DimExpr::DimExpr(int64_t value) {
  if (value != 0)
    terms[DimMonomial()] = value;
}

DimExpr DimExpr::symbol(const std::string &name) {
  DimAtom atom;
  atom.kind = DimAtom::Kind::Symbol;
  atom.name = name;
  DimExpr result;
  result.terms[DimMonomial{atom}] = 1;
  return result;
}

DimExpr DimExpr::fromAtom(const DimAtom &atom) {
  DimExpr result;
  result.terms[DimMonomial{atom}] = 1;
  return result;
}

static DimExpr makeAtom(DimAtom::Kind kind, const DimExpr &lhs,
                        const DimExpr &rhs) {
  DimAtom atom;
  atom.kind = kind;
  atom.lhs = std::make_shared<const DimExpr>(lhs);
  atom.rhs = std::make_shared<const DimExpr>(rhs);
  return DimExpr::fromAtom(atom);
}

/// What arithmetic whose coefficients overflow int64 yields: `floordiv(1, 0)`,
/// never defined. It absorbs every operation, so that no rewrite (division,
/// min/max) reasons from a coefficient that lost its high bits, and it
/// prints and parses back to itself.
static DimExpr overflowExpr() {
  return makeAtom(DimAtom::Kind::FloorDiv, DimExpr(1), DimExpr(0));
}

bool DimExpr::isOverflow() const {
  if (terms.size() != 1)
    return false;
  const auto &[mono, coeff] = *terms.begin();
  return coeff == 1 && mono.size() == 1 &&
         mono[0].kind == DimAtom::Kind::FloorDiv &&
         mono[0].lhs->getConstant() == 1 && mono[0].rhs->getConstant() == 0;
}

/// `coeff * mono` as an expression.
static DimExpr termExpr(const DimMonomial &mono, int64_t coeff) {
  DimExpr result(coeff);
  if (coeff == 0 || mono.empty())
    return result;
  DimExpr m = DimExpr::fromAtom(mono[0]);
  for (size_t i = 1; i < mono.size(); ++i)
    m = m * DimExpr::fromAtom(mono[i]);
  return result * m;
}

DimExpr dyncc::operator+(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs.isOverflow() || rhs.isOverflow())
    return overflowExpr();
  DimExpr result = lhs;
  auto &terms = result.terms;
  for (const auto &[mono, coeff] : rhs.getTerms()) {
    int64_t &slot = terms[mono];
    if (__builtin_add_overflow(slot, coeff, &slot))
      return overflowExpr();
    if (slot == 0)
      terms.erase(mono);
  }
  return result;
}

DimExpr dyncc::operator-(const DimExpr &lhs, const DimExpr &rhs) {
  return lhs + DimExpr(-1) * rhs;
}

DimExpr dyncc::operator*(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs.isOverflow() || rhs.isOverflow())
    return overflowExpr();
  DimExpr result;
  auto &terms = result.terms;
  for (const auto &[monoL, coeffL] : lhs.getTerms()) {
    for (const auto &[monoR, coeffR] : rhs.getTerms()) {
      DimMonomial mono = monoL;
      mono.insert(mono.end(), monoR.begin(), monoR.end());
      std::sort(mono.begin(), mono.end());
      int64_t &slot = terms[mono], product;
      if (__builtin_mul_overflow(coeffL, coeffR, &product) ||
          __builtin_add_overflow(slot, product, &slot))
        return overflowExpr();
      if (slot == 0)
        terms.erase(mono);
    }
  }
  return result;
}

/// Returns the gcd of all coefficients (0 for the zero expression).
static int64_t coefficientGcd(const DimExpr &e) {
  int64_t g = 0;
  for (const auto &term : e.getTerms())
    g = gcdOf(g, term.second);
  return g;
}

/// Divides every coefficient by `c` > 0, which must divide them all.
static DimExpr divideExact(const DimExpr &e, int64_t c) {
  DimExpr result;
  for (const auto &[mono, coeff] : e.getTerms())
    result = result + termExpr(mono, coeff / c);
  return result;
}

/// A monomial order (graded, then lexicographic on exponents with the
/// smaller atoms most significant): compatible with multiplication and
/// well-founded, as polynomial division needs.
static bool monomialLess(const DimMonomial &a, const DimMonomial &b) {
  if (a.size() != b.size())
    return a.size() < b.size();
  return b < a;
}

static const std::pair<const DimMonomial, int64_t> &
leadingTerm(const DimExpr &e) {
  const auto *best = &*e.getTerms().begin();
  for (const auto &term : e.getTerms())
    if (monomialLess(best->first, term.first))
      best = &term;
  return *best;
}

/// Returns `a / b` for monomials when `b` divides `a` (as multisets).
static std::optional<DimMonomial> divideMonomial(const DimMonomial &a,
                                                 const DimMonomial &b) {
  DimMonomial result;
  size_t j = 0;
  for (const DimAtom &atom : a) {
    if (j < b.size() && atom == b[j]) {
      ++j;
      continue;
    }
    if (j < b.size() && b[j] < atom)
      return std::nullopt;
    result.push_back(atom);
  }
  if (j != b.size())
    return std::nullopt;
  return result;
}

std::optional<DimExpr> DimExpr::divideExactly(const DimExpr &divisor) const {
  if (divisor.terms.empty() || isOverflow() || divisor.isOverflow())
    return std::nullopt;
  const auto &[leadMono, leadCoeff] = leadingTerm(divisor);
  DimExpr remainder = *this, quotient;
  // Each step removes the leading term of the remainder; the bound only
  // guards against pathological inputs.
  for (int step = 0; step < 4096; ++step) {
    if (remainder.terms.empty())
      return quotient;
    const auto &[mono, coeff] = leadingTerm(remainder);
    if ((coeff == INT64_MIN && leadCoeff == -1) || coeff % leadCoeff != 0)
      return std::nullopt;
    std::optional<DimMonomial> q = divideMonomial(mono, leadMono);
    if (!q)
      return std::nullopt;
    DimExpr t = termExpr(*q, coeff / leadCoeff);
    quotient = quotient + t;
    remainder = remainder - t * divisor;
    if (quotient.isOverflow() || remainder.isOverflow())
      return std::nullopt;
  }
  return std::nullopt;
}

/// The common factor of all terms of `a` and `b`: the gcd of the coefficients
/// (positive) times the atoms every monomial has.
static std::pair<int64_t, DimMonomial> commonFactor(const DimExpr &a,
                                                    const DimExpr &b) {
  int64_t g = gcdOf(coefficientGcd(a), coefficientGcd(b));
  std::optional<DimMonomial> common;
  for (const DimExpr *e : {&a, &b}) {
    for (const auto &term : e->getTerms()) {
      if (!common) {
        common = term.first;
        continue;
      }
      DimMonomial both;
      std::set_intersection(common->begin(), common->end(), term.first.begin(),
                            term.first.end(), std::back_inserter(both));
      common = both;
    }
  }
  return {g, common ? *common : DimMonomial()};
}

/// Divides `lhs` and `rhs` by their common factor when it is not 1; returns
/// the factor.
static std::optional<DimExpr> cancelCommonFactor(DimExpr &lhs, DimExpr &rhs) {
  if (lhs.getTerms().empty() || rhs.getTerms().empty())
    return std::nullopt;
  auto [g, mono] = commonFactor(lhs, rhs);
  if (g <= 1 && mono.empty())
    return std::nullopt;
  DimExpr factor = termExpr(mono, std::max<int64_t>(g, 1));
  std::optional<DimExpr> l = lhs.divideExactly(factor);
  std::optional<DimExpr> r = rhs.divideExactly(factor);
  if (!l || !r)
    return std::nullopt;
  lhs = *l;
  rhs = *r;
  return factor;
}

/// The rewrites floor and ceil division share (`kind` says which; `fold`
/// divides constants): overflow, division by 1, 0 divided, constants, a
/// never-defined division by 0, exact division, and cancelling a common
/// factor, floordiv(g*x, g*y) == floordiv(x, y) for g != 0 (the same for
/// ceildiv). Nullopt when none applies.
static std::optional<DimExpr> simplifyDivision(DimAtom::Kind kind,
                                               const DimExpr &lhs,
                                               const DimExpr &rhs,
                                               int64_t (*fold)(int64_t,
                                                               int64_t)) {
  if (lhs.isOverflow() || rhs.isOverflow())
    return overflowExpr();
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (r && *r == 1)
    return lhs;
  if (l && *l == 0)
    return DimExpr(0);
  if (l && r && isDivisionDefined(*l, *r))
    return DimExpr(fold(*l, *r));
  if (r && *r == 0)
    return makeAtom(kind, lhs, rhs);
  if (r && *r > 0 && coefficientGcd(lhs) % *r == 0)
    return divideExact(lhs, *r);
  if (std::optional<DimExpr> q = lhs.divideExactly(rhs))
    return *q;
  DimExpr x = lhs, y = rhs;
  if (cancelCommonFactor(x, y))
    return DimExpr::rebuild(kind, x, y);
  return std::nullopt;
}

DimExpr DimExpr::floorDiv(const DimExpr &lhs, const DimExpr &rhs) {
  if (std::optional<DimExpr> simple =
          simplifyDivision(DimAtom::Kind::FloorDiv, lhs, rhs, floorDivInt))
    return *simple;
  std::optional<int64_t> r = rhs.getConstant();
  if (r && *r > 0) {
    // floordiv(floordiv(x, a), b) == floordiv(x, a*b) for a, b > 0.
    if (lhs.getTerms().size() == 1) {
      const auto &[mono, coeff] = *lhs.getTerms().begin();
      if (coeff == 1 && mono.size() == 1 &&
          mono[0].kind == DimAtom::Kind::FloorDiv) {
        std::optional<int64_t> inner = mono[0].rhs->getConstant();
        int64_t product;
        if (inner && *inner > 0 &&
            !__builtin_mul_overflow(*inner, *r, &product))
          return floorDiv(*mono[0].lhs, DimExpr(product));
      }
    }
  }
  return makeAtom(DimAtom::Kind::FloorDiv, lhs, rhs);
}

DimExpr DimExpr::ceilDiv(const DimExpr &lhs, const DimExpr &rhs) {
  if (std::optional<DimExpr> simple =
          simplifyDivision(DimAtom::Kind::CeilDiv, lhs, rhs, ceilDivInt))
    return *simple;
  return makeAtom(DimAtom::Kind::CeilDiv, lhs, rhs);
}

DimExpr DimExpr::mod(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs.isOverflow() || rhs.isOverflow())
    return overflowExpr();
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (r && (*r == 1 || *r == -1))
    return DimExpr(0);
  if (l && *l == 0)
    return DimExpr(0);
  if (l && r && isDivisionDefined(*l, *r))
    return DimExpr(floorModInt(*l, *r));
  if (r && *r == 0)
    return makeAtom(DimAtom::Kind::Mod, lhs, rhs);
  if (r && *r > 0 && coefficientGcd(lhs) % *r == 0)
    return DimExpr(0);
  if (lhs.divideExactly(rhs))
    return DimExpr(0);
  // mod(g*x, g*y) == g*mod(x, y).
  DimExpr x = lhs, y = rhs;
  if (std::optional<DimExpr> factor = cancelCommonFactor(x, y))
    return *factor * mod(x, y);
  return makeAtom(DimAtom::Kind::Mod, lhs, rhs);
}

/// The sign of `lhs - rhs` when that is a constant. Both differences are
/// tried, so that the answer does not depend on the operand order when one of
/// them overflows.
static std::optional<int> constantDifferenceSign(const DimExpr &lhs,
                                                 const DimExpr &rhs) {
  if (std::optional<int64_t> d = (lhs - rhs).getConstant())
    return *d < 0 ? -1 : (*d > 0 ? 1 : 0);
  if (std::optional<int64_t> d = (rhs - lhs).getConstant())
    return *d < 0 ? 1 : (*d > 0 ? -1 : 0);
  return std::nullopt;
}

DimExpr DimExpr::min(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs.isOverflow() || rhs.isOverflow())
    return overflowExpr();
  if (lhs == rhs)
    return lhs;
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (l && r)
    return DimExpr(std::min(*l, *r));
  // Operands that differ by a constant (constants included) are ordered.
  if (std::optional<int> sign = constantDifferenceSign(lhs, rhs))
    return *sign <= 0 ? lhs : rhs;
  // Commutative: order the operands canonically.
  if (rhs < lhs)
    return makeAtom(DimAtom::Kind::Min, rhs, lhs);
  return makeAtom(DimAtom::Kind::Min, lhs, rhs);
}

DimExpr DimExpr::max(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs.isOverflow() || rhs.isOverflow())
    return overflowExpr();
  if (lhs == rhs)
    return lhs;
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (l && r)
    return DimExpr(std::max(*l, *r));
  if (std::optional<int> sign = constantDifferenceSign(lhs, rhs))
    return *sign >= 0 ? lhs : rhs;
  if (rhs < lhs)
    return makeAtom(DimAtom::Kind::Max, rhs, lhs);
  return makeAtom(DimAtom::Kind::Max, lhs, rhs);
}

std::optional<DimExpr> DimExpr::applyFunction(const std::string &name,
                                              const DimExpr &lhs,
                                              const DimExpr &rhs) {
  if (name == "floordiv")
    return floorDiv(lhs, rhs);
  if (name == "ceildiv")
    return ceilDiv(lhs, rhs);
  if (name == "mod")
    return mod(lhs, rhs);
  if (name == "min")
    return min(lhs, rhs);
  if (name == "max")
    return max(lhs, rhs);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

std::optional<int64_t> DimExpr::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

std::optional<std::string> DimExpr::getSymbol() const {
  if (terms.size() != 1)
    return std::nullopt;
  const auto &[mono, coeff] = *terms.begin();
  if (coeff != 1 || mono.size() != 1 || mono[0].kind != DimAtom::Kind::Symbol)
    return std::nullopt;
  return mono[0].name;
}

void DimExpr::collectSymbols(std::vector<std::string> &names) const {
  for (const auto &term : terms) {
    for (const DimAtom &atom : term.first) {
      if (atom.kind == DimAtom::Kind::Symbol) {
        if (std::find(names.begin(), names.end(), atom.name) == names.end())
          names.push_back(atom.name);
        continue;
      }
      atom.lhs->collectSymbols(names);
      atom.rhs->collectSymbols(names);
    }
  }
}

DimExpr DimExpr::rebuild(DimAtom::Kind kind, const DimExpr &lhs,
                         const DimExpr &rhs) {
  switch (kind) {
  case DimAtom::Kind::FloorDiv:
    return floorDiv(lhs, rhs);
  case DimAtom::Kind::CeilDiv:
    return ceilDiv(lhs, rhs);
  case DimAtom::Kind::Mod:
    return mod(lhs, rhs);
  case DimAtom::Kind::Min:
    return min(lhs, rhs);
  case DimAtom::Kind::Max:
    return max(lhs, rhs);
  case DimAtom::Kind::Symbol:
    break;
  }
  assert(false && "symbols are not rebuilt");
  return DimExpr();
}

DimExpr DimExpr::substitute(const std::string &name,
                            const DimExpr &value) const {
  DimExpr result;
  for (const auto &[mono, coeff] : terms) {
    DimExpr term(coeff);
    for (const DimAtom &atom : mono) {
      if (atom.kind == DimAtom::Kind::Symbol)
        term = term * (atom.name == name ? value : DimExpr::symbol(atom.name));
      else
        term = term * rebuild(atom.kind, atom.lhs->substitute(name, value),
                              atom.rhs->substitute(name, value));
    }
    result = result + term;
  }
  return result;
}

std::optional<int64_t>
DimExpr::evaluate(const std::map<std::string, int64_t> &values) const {
  int64_t sum = 0;
  for (const auto &[mono, coeff] : terms) {
    int64_t product = coeff;
    for (const DimAtom &atom : mono) {
      int64_t v;
      if (atom.kind == DimAtom::Kind::Symbol) {
        auto it = values.find(atom.name);
        if (it == values.end())
          return std::nullopt;
        v = it->second;
      } else {
        std::optional<int64_t> l = atom.lhs->evaluate(values);
        std::optional<int64_t> r = atom.rhs->evaluate(values);
        if (!l || !r)
          return std::nullopt;
        bool isDiv = atom.kind == DimAtom::Kind::FloorDiv ||
                     atom.kind == DimAtom::Kind::CeilDiv ||
                     atom.kind == DimAtom::Kind::Mod;
        if (isDiv && (*r == 0 || (*l == INT64_MIN && *r == -1)))
          return std::nullopt;
        switch (atom.kind) {
        case DimAtom::Kind::FloorDiv:
          v = floorDivInt(*l, *r);
          break;
        case DimAtom::Kind::CeilDiv:
          v = ceilDivInt(*l, *r);
          break;
        case DimAtom::Kind::Mod:
          v = floorModInt(*l, *r);
          break;
        case DimAtom::Kind::Min:
          v = std::min(*l, *r);
          break;
        default:
          v = std::max(*l, *r);
          break;
        }
      }
      if (__builtin_mul_overflow(product, v, &product))
        return std::nullopt;
    }
    if (__builtin_add_overflow(sum, product, &sum))
      return std::nullopt;
  }
  return sum;
}

//===----------------------------------------------------------------------===//
// Bounds and divisibility
//===----------------------------------------------------------------------===//

namespace {
/// An inclusive interval of values. Bounds saturate at the int64 limits,
/// which stays sound: the intervals follow the evaluation order of
/// `DimExpr::evaluate`, and every intermediate value of a defined evaluation
/// fits int64.
struct Interval {
  int64_t lo;
  int64_t hi;
};
} // namespace

static int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r))
    return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

static int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r))
    return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

static int64_t satFloorDiv(int64_t a, int64_t b) {
  return a == INT64_MIN && b == -1 ? INT64_MAX : floorDivInt(a, b);
}

static int64_t satCeilDiv(int64_t a, int64_t b) {
  return a == INT64_MIN && b == -1 ? INT64_MAX : ceilDivInt(a, b);
}

static Interval mulInterval(Interval a, Interval b) {
  int64_t c[] = {satMul(a.lo, b.lo), satMul(a.lo, b.hi), satMul(a.hi, b.lo),
                 satMul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

static Interval symbolBounds(const std::string &name, const FactsMap &facts) {
  auto it = facts.find(name);
  if (it == facts.end())
    return {0, INT64_MAX};
  auto [lo, hi] = it->second.range();
  if (lo > hi) // No value satisfies the facts: nothing to bound.
    return {0, INT64_MAX};
  return {lo, hi};
}

/// Bounds of floordiv/ceildiv/mod(x, y) for x in `x` and y in `y`, y != 0.
static Interval divisionBounds(DimAtom::Kind kind, Interval x, Interval y) {
  Interval result{INT64_MAX, INT64_MIN};
  auto include = [&](int64_t v) {
    result.lo = std::min(result.lo, v);
    result.hi = std::max(result.hi, v);
  };
  // Over y of one sign, floor(x/y) and ceil(x/y) are monotonic in x and in y:
  // the extremes are at the corners.
  Interval parts[2] = {{std::max<int64_t>(y.lo, 1), y.hi},
                       {y.lo, std::min<int64_t>(y.hi, -1)}};
  for (Interval part : parts) {
    if (part.lo > part.hi)
      continue;
    bool positive = part.lo >= 1;
    switch (kind) {
    case DimAtom::Kind::FloorDiv:
    case DimAtom::Kind::CeilDiv:
      for (int64_t a : {x.lo, x.hi})
        for (int64_t b : {part.lo, part.hi})
          include(kind == DimAtom::Kind::FloorDiv ? satFloorDiv(a, b)
                                                  : satCeilDiv(a, b));
      break;
    default: {
      // The result has the sign of y and is smaller than |y|; it is x itself
      // when 0 <= x < y (or y < x <= 0).
      int64_t lo = positive ? 0 : part.lo + 1;
      int64_t hi = positive ? part.hi - 1 : 0;
      if (positive && x.lo >= 0)
        hi = std::min(hi, x.hi);
      if (!positive && x.hi <= 0)
        lo = std::max(lo, x.lo);
      // By one constant, with x within one period: an increasing piece.
      if (part.lo == part.hi &&
          satFloorDiv(x.lo, part.lo) == satFloorDiv(x.hi, part.lo)) {
        lo = floorModInt(x.lo, part.lo);
        hi = floorModInt(x.hi, part.lo);
      }
      include(lo);
      include(hi);
      break;
    }
    }
  }
  // y is always 0: never defined. No bound, so that nothing is concluded
  // from it (it is also what overflowing arithmetic yields).
  if (result.lo > result.hi)
    return {INT64_MIN, INT64_MAX};
  return result;
}

static Interval exprBounds(const DimExpr &e, const FactsMap &facts);

static Interval atomBounds(const DimAtom &atom, const FactsMap &facts) {
  if (atom.kind == DimAtom::Kind::Symbol)
    return symbolBounds(atom.name, facts);
  Interval x = exprBounds(*atom.lhs, facts), y = exprBounds(*atom.rhs, facts);
  switch (atom.kind) {
  case DimAtom::Kind::Min:
    return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
  case DimAtom::Kind::Max:
    return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
  default:
    return divisionBounds(atom.kind, x, y);
  }
}

static Interval exprBounds(const DimExpr &e, const FactsMap &facts) {
  Interval sum{0, 0};
  for (const auto &[mono, coeff] : e.getTerms()) {
    Interval term{coeff, coeff};
    for (const DimAtom &atom : mono)
      term = mulInterval(term, atomBounds(atom, facts));
    sum = {satAdd(sum.lo, term.lo), satAdd(sum.hi, term.hi)};
  }
  return sum;
}

std::pair<int64_t, int64_t> DimExpr::bounds(const FactsMap &facts) const {
  Interval b = exprBounds(*this, facts);
  return {b.lo, b.hi};
}

static int64_t atomDivisor(const DimAtom &atom, const FactsMap &facts) {
  switch (atom.kind) {
  case DimAtom::Kind::Symbol: {
    auto it = facts.find(atom.name);
    if (it == facts.end())
      return 1;
    auto [lo, hi] = it->second.range();
    if (lo == hi)
      return gcdOf(lo, 0);
    return std::max<int64_t>(it->second.divisor, 1);
  }
  case DimAtom::Kind::FloorDiv:
  case DimAtom::Kind::CeilDiv: {
    // An exact division by c of a multiple of c*k is a multiple of k.
    std::optional<int64_t> c = atom.rhs->getConstant();
    int64_t d = knownDivisor(*atom.lhs, facts);
    if (!c || *c == 0)
      return 1;
    if (d == 0)
      return 0;
    return d % *c == 0 ? gcdOf(d / *c, 0) : 1;
  }
  case DimAtom::Kind::Mod:
  case DimAtom::Kind::Min:
  case DimAtom::Kind::Max:
    // mod(x, y) = x - y*floordiv(x, y); min/max are one of the operands.
    return gcdOf(knownDivisor(*atom.lhs, facts),
                 knownDivisor(*atom.rhs, facts));
  }
  return 1;
}

int64_t dyncc::knownDivisor(const DimExpr &expr, const FactsMap &facts) {
  int64_t g = 0;
  for (const auto &[mono, coeff] : expr.getTerms()) {
    int64_t d = gcdOf(coeff, 0);
    for (const DimAtom &atom : mono) {
      int64_t a = atomDivisor(atom, facts), product;
      if (a == 0) {
        d = 0;
        break;
      }
      // On overflow keep d: a divisor of a divisor still divides.
      if (!__builtin_mul_overflow(d, a, &product))
        d = product;
    }
    g = gcdOf(g, d);
  }
  return g;
}

bool dyncc::isDivisibleBy(const DimExpr &expr, int64_t n,
                          const FactsMap &facts) {
  int64_t d = knownDivisor(expr, facts);
  if (d == 0)
    return true;
  return n != 0 && absU(d) % absU(n) == 0;
}

bool dyncc::proveNonNegative(const DimExpr &expr, const FactsMap &facts) {
  return exprBounds(simplify(expr, facts), facts).lo >= 0;
}

bool dyncc::proveLE(const DimExpr &lhs, const DimExpr &rhs,
                    const FactsMap &facts) {
  return proveNonNegative(rhs - lhs, facts);
}

bool dyncc::proveLessThan(const DimExpr &lhs, const DimExpr &rhs,
                          const FactsMap &facts) {
  return exprBounds(simplify(rhs - lhs, facts), facts).lo >= 1;
}

bool dyncc::proveEqual(const DimExpr &lhs, const DimExpr &rhs,
                       const FactsMap &facts) {
  if (lhs == rhs || simplify(lhs, facts) == simplify(rhs, facts))
    return true;
  Interval d = exprBounds(simplify(lhs - rhs, facts), facts);
  return d.lo == 0 && d.hi == 0;
}

bool dyncc::proveNotEqual(const DimExpr &lhs, const DimExpr &rhs,
                          const FactsMap &facts) {
  DimExpr d = simplify(lhs - rhs, facts);
  if (std::optional<int64_t> c = d.getConstant())
    return *c != 0;
  Interval b = exprBounds(d, facts);
  if (b.lo > 0 || b.hi < 0)
    return true;
  // rest + k == 0 needs k to be a multiple of what divides rest.
  auto it = d.getTerms().find(DimMonomial());
  if (it == d.getTerms().end())
    return false;
  int64_t k = it->second;
  int64_t g = knownDivisor(d - DimExpr(k), facts);
  return g > 1 && absU(k) % absU(g) != 0;
}

//===----------------------------------------------------------------------===//
// Simplification with facts
//===----------------------------------------------------------------------===//

namespace {
/// Rewrites atoms bottom-up with the facts. Atoms are memoized: canonical
/// operands make equal atoms compare equal.
class Simplifier {
public:
  explicit Simplifier(const FactsMap &facts) : facts(facts) {}

  DimExpr expr(const DimExpr &e) {
    DimExpr result;
    for (const auto &[mono, coeff] : e.getTerms()) {
      DimExpr term(coeff);
      for (const DimAtom &a : mono)
        term = term * atom(a);
      result = result + term;
    }
    return result;
  }

private:
  DimExpr atom(const DimAtom &a) {
    if (a.kind == DimAtom::Kind::Symbol) {
      auto it = facts.find(a.name);
      if (it != facts.end()) {
        auto [lo, hi] = it->second.range();
        if (lo == hi)
          return DimExpr(lo);
      }
      return DimExpr::fromAtom(a);
    }
    return apply(a.kind, expr(*a.lhs), expr(*a.rhs));
  }

  static DimExpr build(DimAtom::Kind kind, const DimExpr &l, const DimExpr &r) {
    switch (kind) {
    case DimAtom::Kind::FloorDiv:
      return DimExpr::floorDiv(l, r);
    case DimAtom::Kind::CeilDiv:
      return DimExpr::ceilDiv(l, r);
    case DimAtom::Kind::Mod:
      return DimExpr::mod(l, r);
    case DimAtom::Kind::Min:
      return DimExpr::min(l, r);
    case DimAtom::Kind::Max:
      return DimExpr::max(l, r);
    case DimAtom::Kind::Symbol:
      break;
    }
    return DimExpr();
  }

  /// `kind(l, r)` for simplified operands.
  DimExpr apply(DimAtom::Kind kind, const DimExpr &l, const DimExpr &r) {
    DimExpr base = build(kind, l, r);
    const auto &terms = base.getTerms();
    if (terms.size() != 1 || terms.begin()->second != 1 ||
        terms.begin()->first.size() != 1 ||
        terms.begin()->first[0].kind != kind)
      return refine(base);
    // The constructor kept kind(l, r) (min/max may swap the operands).
    const DimAtom &a = terms.begin()->first[0];
    bool kept = (*a.lhs == l && *a.rhs == r) ||
                ((kind == DimAtom::Kind::Min || kind == DimAtom::Kind::Max) &&
                 *a.lhs == r && *a.rhs == l);
    if (!kept)
      return refine(base);
    auto it = cache.find(a);
    if (it != cache.end())
      return it->second;
    DimExpr result = rules(a, *a.lhs, *a.rhs);
    cache.emplace(a, result);
    return result;
  }

  /// Applies the rules to the atoms a constructor built from simplified
  /// pieces.
  DimExpr refine(const DimExpr &e) {
    DimExpr result;
    for (const auto &[mono, coeff] : e.getTerms()) {
      DimExpr term(coeff);
      for (const DimAtom &a : mono)
        term = term * (a.kind == DimAtom::Kind::Symbol
                           ? DimExpr::fromAtom(a)
                           : apply(a.kind, *a.lhs, *a.rhs));
      result = result + term;
    }
    return result;
  }

  Interval bounds(const DimExpr &e) { return exprBounds(e, facts); }

  /// The rules for an atom `a` = kind(l, r) that the constructor kept.
  DimExpr rules(const DimAtom &a, const DimExpr &l, const DimExpr &r) {
    DimExpr self = DimExpr::fromAtom(a);
    std::optional<int64_t> c = r.getConstant();
    switch (a.kind) {
    case DimAtom::Kind::FloorDiv:
    case DimAtom::Kind::CeilDiv:
    case DimAtom::Kind::Mod: {
      if (c && *c > 0) {
        if (std::optional<DimExpr> e = divideByConstant(a.kind, l, *c))
          return *e;
        break;
      }
      // 0 <= l < r: floordiv is 0 and mod is l.
      if (a.kind != DimAtom::Kind::CeilDiv && bounds(l).lo >= 0 &&
          bounds(r - l).lo >= 1)
        return a.kind == DimAtom::Kind::Mod ? l : DimExpr(0);
      break;
    }
    case DimAtom::Kind::Min:
    case DimAtom::Kind::Max: {
      bool isMin = a.kind == DimAtom::Kind::Min;
      if (bounds(r - l).lo >= 0)
        return isMin ? l : r;
      if (bounds(l - r).lo >= 0)
        return isMin ? r : l;
      break;
    }
    case DimAtom::Kind::Symbol:
      break;
    }
    Interval b = atomBounds(a, facts);
    if (b.lo == b.hi)
      return DimExpr(b.lo);
    return self;
  }

  /// floordiv/ceildiv/mod(l, c) for c > 0.
  std::optional<DimExpr> divideByConstant(DimAtom::Kind kind, const DimExpr &l,
                                          int64_t c) {
    bool isMod = kind == DimAtom::Kind::Mod;
    // Terms whose coefficient is a multiple of c leave the division:
    // floordiv(c*q + x, c) == q + floordiv(x, c), mod(c*q + x, c) == mod(x, c).
    DimExpr q, rest;
    for (const auto &[mono, coeff] : l.getTerms()) {
      if (coeff % c == 0)
        q = q + termExpr(mono, coeff / c);
      else
        rest = rest + termExpr(mono, coeff);
    }
    if (q != DimExpr())
      return isMod ? apply(kind, rest, DimExpr(c))
                   : q + apply(kind, rest, DimExpr(c));
    // Terms that are multiples of c under the facts: their exact quotient is
    // the atom floordiv(d, c).
    DimExpr divisible;
    rest = DimExpr();
    for (const auto &[mono, coeff] : l.getTerms()) {
      DimExpr term = termExpr(mono, coeff);
      if (isDivisibleBy(term, c, facts))
        divisible = divisible + term;
      else
        rest = rest + term;
    }
    if (divisible != DimExpr() &&
        (rest != DimExpr() || kind != DimAtom::Kind::FloorDiv)) {
      DimExpr tail = apply(kind, rest, DimExpr(c));
      if (isMod)
        return tail;
      return apply(DimAtom::Kind::FloorDiv, divisible, DimExpr(c)) + tail;
    }
    // One value of the quotient over the bounds of l.
    Interval b = bounds(l);
    int64_t k = floorDivInt(b.lo, c);
    if (kind == DimAtom::Kind::CeilDiv) {
      if (ceilDivInt(b.lo, c) == ceilDivInt(b.hi, c))
        return DimExpr(ceilDivInt(b.lo, c));
    } else if (k == floorDivInt(b.hi, c)) {
      return isMod ? l - DimExpr(k) * DimExpr(c) : DimExpr(k);
    }
    return std::nullopt;
  }

  const FactsMap &facts;
  std::map<DimAtom, DimExpr> cache;
};
} // namespace

DimExpr dyncc::simplify(const DimExpr &expr, const FactsMap &facts) {
  return Simplifier(facts).expr(expr);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static std::string atomStr(const DimAtom &atom) {
  const char *fn = "";
  switch (atom.kind) {
  case DimAtom::Kind::Symbol:
    return atom.name;
  case DimAtom::Kind::FloorDiv:
    fn = "floordiv";
    break;
  case DimAtom::Kind::CeilDiv:
    fn = "ceildiv";
    break;
  case DimAtom::Kind::Mod:
    fn = "mod";
    break;
  case DimAtom::Kind::Min:
    fn = "min";
    break;
  case DimAtom::Kind::Max:
    fn = "max";
    break;
  }
  return std::string(fn) + "(" + atom.lhs->str() + ", " + atom.rhs->str() + ")";
}

/// Prints |coeff| * mono.
static std::string termStr(const DimMonomial &mono, int64_t absCoeff) {
  std::string s;
  if (mono.empty() || absCoeff != 1)
    s = std::to_string(absCoeff);
  for (const DimAtom &atom : mono) {
    if (!s.empty())
      s += "*";
    s += atomStr(atom);
  }
  return s;
}

std::string DimExpr::str() const {
  if (terms.empty())
    return "0";
  // Positive terms first (non-constant before constant), then the negative
  // ones, so the output never needs a unary minus.
  std::vector<std::pair<const DimMonomial *, int64_t>> pos, neg;
  for (const auto &[mono, coeff] : terms)
    if (!mono.empty())
      (coeff > 0 ? pos : neg).push_back({&mono, coeff});
  auto constIt = terms.find(DimMonomial());
  if (constIt != terms.end())
    (constIt->second > 0 ? pos : neg)
        .push_back({&constIt->first, constIt->second});
  std::string s;
  for (auto &[mono, coeff] : pos) {
    if (!s.empty())
      s += " + ";
    s += termStr(*mono, coeff);
  }
  if (s.empty())
    s = "0";
  for (auto &[mono, coeff] : neg) {
    // -INT64_MIN does not fit: print INT64_MAX*m + m instead.
    s += " - " + termStr(*mono, coeff == INT64_MIN ? INT64_MAX : -coeff);
    if (coeff == INT64_MIN)
      s += " - " + termStr(*mono, 1);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
class Parser {
public:
  Parser(const std::string &text, std::string &error)
      : text(text), error(error) {}

  std::optional<DimExpr> parseTop() {
    std::optional<DimExpr> e = parseSum();
    if (!e)
      return std::nullopt;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected '" + std::string(1, text[pos]) + "'");
    return e;
  }

private:
  std::optional<DimExpr> fail(const std::string &message) {
    if (error.empty())
      error = "at column " + std::to_string(pos + 1) + " of '" + text +
              "': " + message;
    return std::nullopt;
  }

  void skipSpace() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  std::optional<DimExpr> parseSum() {
    std::optional<DimExpr> lhs = parseProduct();
    while (lhs) {
      if (consume('+')) {
        std::optional<DimExpr> rhs = parseProduct();
        if (!rhs)
          return std::nullopt;
        lhs = *lhs + *rhs;
      } else if (consume('-')) {
        std::optional<DimExpr> rhs = parseProduct();
        if (!rhs)
          return std::nullopt;
        lhs = *lhs - *rhs;
      } else {
        break;
      }
    }
    return lhs;
  }

  std::optional<DimExpr> parseProduct() {
    std::optional<DimExpr> lhs = parseFactor();
    while (lhs && consume('*')) {
      std::optional<DimExpr> rhs = parseFactor();
      if (!rhs)
        return std::nullopt;
      lhs = *lhs * *rhs;
    }
    return lhs;
  }

  std::optional<DimExpr> parseFactor() {
    skipSpace();
    if (pos >= text.size())
      return fail("expected an expression");
    char c = text[pos];
    if (consume('(')) {
      std::optional<DimExpr> e = parseSum();
      if (!e)
        return std::nullopt;
      if (!consume(')'))
        return fail("expected ')'");
      return e;
    }
    if (std::isdigit((unsigned char)c)) {
      int64_t value = 0;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[pos] - '0', &value))
          return fail("integer literal out of range");
        ++pos;
      }
      return DimExpr(value);
    }
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t start = pos;
      while (pos < text.size() &&
             (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
        ++pos;
      std::string name = text.substr(start, pos - start);
      skipSpace();
      if (pos < text.size() && text[pos] == '(') {
        ++pos;
        std::optional<DimExpr> lhs = parseSum();
        if (!lhs)
          return std::nullopt;
        if (!consume(','))
          return fail("expected ','");
        std::optional<DimExpr> rhs = parseSum();
        if (!rhs)
          return std::nullopt;
        if (!consume(')'))
          return fail("expected ')'");
        if (std::optional<DimExpr> e = DimExpr::applyFunction(name, *lhs, *rhs))
          return e;
        pos = start;
        return fail("unknown function '" + name + "'");
      }
      return DimExpr::symbol(name);
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string &text;
  std::string &error;
  size_t pos = 0;
};
} // namespace

std::optional<DimExpr> DimExpr::parse(const std::string &text,
                                      std::string &error) {
  error.clear();
  return Parser(text, error).parseTop();
}
