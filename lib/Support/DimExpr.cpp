//===- DimExpr.cpp - Canonical symbolic dimension expressions -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Support/DimExpr.h"

#include <algorithm>
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

static int64_t floorModInt(int64_t a, int64_t b) {
  return a - floorDivInt(a, b) * b;
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

DimExpr dyncc::operator+(const DimExpr &lhs, const DimExpr &rhs) {
  DimExpr result = lhs;
  auto &terms = result.terms;
  for (const auto &[mono, coeff] : rhs.getTerms()) {
    int64_t &slot = terms[mono];
    slot += coeff;
    if (slot == 0)
      terms.erase(mono);
  }
  return result;
}

DimExpr dyncc::operator-(const DimExpr &lhs, const DimExpr &rhs) {
  return lhs + DimExpr(-1) * rhs;
}

DimExpr dyncc::operator*(const DimExpr &lhs, const DimExpr &rhs) {
  DimExpr result;
  auto &terms = result.terms;
  for (const auto &[monoL, coeffL] : lhs.getTerms()) {
    for (const auto &[monoR, coeffR] : rhs.getTerms()) {
      DimMonomial mono = monoL;
      mono.insert(mono.end(), monoR.begin(), monoR.end());
      std::sort(mono.begin(), mono.end());
      int64_t &slot = terms[mono];
      slot += coeffL * coeffR;
      if (slot == 0)
        terms.erase(mono);
    }
  }
  return result;
}

/// Returns the gcd of all coefficients (0 for the zero expression).
static int64_t coefficientGcd(const DimExpr &e) {
  int64_t g = 0;
  for (const auto &term : e.getTerms()) {
    int64_t c = term.second < 0 ? -term.second : term.second;
    while (c != 0) {
      int64_t t = g % c;
      g = c;
      c = t;
    }
  }
  return g;
}

/// Divides every coefficient by `c`, which must divide them all.
static DimExpr divideExact(const DimExpr &e, int64_t c) {
  DimExpr result;
  for (const auto &[mono, coeff] : e.getTerms()) {
    DimExpr term(coeff / c);
    for (const DimAtom &atom : mono)
      term = term * DimExpr::fromAtom(atom);
    result = result + term;
  }
  return result;
}

DimExpr DimExpr::floorDiv(const DimExpr &lhs, const DimExpr &rhs) {
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (r && *r == 1)
    return lhs;
  if (l && *l == 0)
    return DimExpr(0);
  if (l && r && *r != 0)
    return DimExpr(floorDivInt(*l, *r));
  if (r && *r > 0) {
    if (coefficientGcd(lhs) % *r == 0)
      return divideExact(lhs, *r);
    // floordiv(floordiv(x, a), b) == floordiv(x, a*b) for a, b > 0.
    if (lhs.getTerms().size() == 1) {
      const auto &[mono, coeff] = *lhs.getTerms().begin();
      if (coeff == 1 && mono.size() == 1 &&
          mono[0].kind == DimAtom::Kind::FloorDiv) {
        std::optional<int64_t> inner = mono[0].rhs->getConstant();
        if (inner && *inner > 0)
          return floorDiv(*mono[0].lhs, DimExpr(*inner * *r));
      }
    }
  }
  return makeAtom(DimAtom::Kind::FloorDiv, lhs, rhs);
}

DimExpr DimExpr::ceilDiv(const DimExpr &lhs, const DimExpr &rhs) {
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (r && *r == 1)
    return lhs;
  if (l && *l == 0)
    return DimExpr(0);
  if (l && r && *r != 0)
    return DimExpr(ceilDivInt(*l, *r));
  if (r && *r > 0 && coefficientGcd(lhs) % *r == 0)
    return divideExact(lhs, *r);
  return makeAtom(DimAtom::Kind::CeilDiv, lhs, rhs);
}

DimExpr DimExpr::mod(const DimExpr &lhs, const DimExpr &rhs) {
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (r && (*r == 1 || *r == -1))
    return DimExpr(0);
  if (l && *l == 0)
    return DimExpr(0);
  if (l && r && *r != 0)
    return DimExpr(floorModInt(*l, *r));
  if (r && *r > 0 && coefficientGcd(lhs) % *r == 0)
    return DimExpr(0);
  return makeAtom(DimAtom::Kind::Mod, lhs, rhs);
}

DimExpr DimExpr::min(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs == rhs)
    return lhs;
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (l && r)
    return DimExpr(std::min(*l, *r));
  // Commutative: order the operands canonically.
  if (rhs < lhs)
    return makeAtom(DimAtom::Kind::Min, rhs, lhs);
  return makeAtom(DimAtom::Kind::Min, lhs, rhs);
}

DimExpr DimExpr::max(const DimExpr &lhs, const DimExpr &rhs) {
  if (lhs == rhs)
    return lhs;
  std::optional<int64_t> l = lhs.getConstant(), r = rhs.getConstant();
  if (l && r)
    return DimExpr(std::max(*l, *r));
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
  if (coeff != 1 || mono.size() != 1 ||
      mono[0].kind != DimAtom::Kind::Symbol)
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

static DimExpr rebuildAtom(const DimAtom &atom, const DimExpr &lhs,
                           const DimExpr &rhs) {
  switch (atom.kind) {
  case DimAtom::Kind::FloorDiv:
    return DimExpr::floorDiv(lhs, rhs);
  case DimAtom::Kind::CeilDiv:
    return DimExpr::ceilDiv(lhs, rhs);
  case DimAtom::Kind::Mod:
    return DimExpr::mod(lhs, rhs);
  case DimAtom::Kind::Min:
    return DimExpr::min(lhs, rhs);
  case DimAtom::Kind::Max:
    return DimExpr::max(lhs, rhs);
  case DimAtom::Kind::Symbol:
    break;
  }
  return DimExpr::symbol(atom.name);
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
        term = term * rebuildAtom(atom, atom.lhs->substitute(name, value),
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
  return std::string(fn) + "(" + atom.lhs->str() + ", " + atom.rhs->str() +
         ")";
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
    (constIt->second > 0 ? pos : neg).push_back({&constIt->first,
                                                 constIt->second});
  std::string s;
  for (auto &[mono, coeff] : pos) {
    if (!s.empty())
      s += " + ";
    s += termStr(*mono, coeff);
  }
  if (s.empty())
    s = "0";
  for (auto &[mono, coeff] : neg)
    s += " - " + termStr(*mono, coeff == INT64_MIN ? coeff : -coeff);
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
        if (std::optional<DimExpr> e =
                DimExpr::applyFunction(name, *lhs, *rhs))
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
