//===- Json.h - Minimal JSON reader for manifests ---------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A small, strict RFC 8259 reader: objects (key order kept, duplicate keys
// rejected), arrays, strings with every escape including \uXXXX surrogate
// pairs (decoded to UTF-8), integers that fit int64 exactly, doubles,
// true/false/null. Nesting is limited to kMaxJsonDepth; errors give the byte
// offset. It never throws and never reads past the input.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_JSON_H
#define DYNCC_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dyncc::runtime {

/// The deepest nesting of arrays and objects parseJson accepts.
inline constexpr unsigned kMaxJsonDepth = 64;

/// A parsed JSON value.
class JsonValue {
public:
  enum class Kind : uint8_t { Null, Bool, Int, Double, String, Array, Object };

  Kind kind() const { return valueKind; }
  bool isNull() const { return valueKind == Kind::Null; }
  bool isBool() const { return valueKind == Kind::Bool; }
  /// True for numbers written without fraction or exponent that fit int64.
  bool isInt() const { return valueKind == Kind::Int; }
  /// True for any number (integer or not).
  bool isNumber() const {
    return valueKind == Kind::Int || valueKind == Kind::Double;
  }
  bool isString() const { return valueKind == Kind::String; }
  bool isArray() const { return valueKind == Kind::Array; }
  bool isObject() const { return valueKind == Kind::Object; }

  bool boolValue() const { return boolean; }
  int64_t intValue() const { return integer; }
  /// The number as a double (integers are converted).
  double doubleValue() const {
    return valueKind == Kind::Int ? static_cast<double>(integer) : real;
  }
  const std::string &stringValue() const { return text; }

  /// Elements of an array, or member values of an object.
  const std::vector<JsonValue> &items() const { return children; }
  /// Member names of an object, parallel to items().
  const std::vector<std::string> &keys() const { return memberKeys; }
  size_t size() const { return children.size(); }
  const JsonValue &operator[](size_t index) const { return children[index]; }

  /// The member named `key` of an object, or null if absent (or not an
  /// object).
  const JsonValue *find(std::string_view key) const;

  /// "null", "a boolean", "an integer", "a number", "a string", "an array" or
  /// "an object", for error messages.
  static const char *describe(Kind kind);

private:
  friend class JsonParser;
  Kind valueKind = Kind::Null;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0.0;
  std::string text;
  std::vector<JsonValue> children;
  std::vector<std::string> memberKeys;
};

/// Parses `text` as one JSON value (surrounding white space allowed). On
/// failure returns false and sets `error` to "at byte N: what is wrong".
bool parseJson(std::string_view text, JsonValue &out, std::string &error);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_JSON_H
