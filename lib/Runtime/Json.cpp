//===- Json.cpp - Minimal JSON reader for manifests -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_set>

using namespace dyncc::runtime;

const JsonValue *JsonValue::find(std::string_view key) const {
  if (valueKind != Kind::Object)
    return nullptr;
  for (size_t i = 0, e = memberKeys.size(); i < e; ++i)
    if (memberKeys[i] == key)
      return &children[i];
  return nullptr;
}

const char *JsonValue::describe(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Int:
    return "an integer";
  case Kind::Double:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

namespace dyncc::runtime {
/// Recursive-descent parser over a byte range.
class JsonParser {
public:
  JsonParser(std::string_view text, std::string &error)
      : input(text), error(error) {}

  bool parseDocument(JsonValue &out) {
    skipSpace();
    if (!parseValue(out, 0))
      return false;
    skipSpace();
    if (pos != input.size())
      return fail("unexpected text after the JSON value");
    return true;
  }

private:
  std::string_view input;
  std::string &error;
  size_t pos = 0;

  /// Per nesting depth, the values of the array or object being parsed
  /// there: grown once for the document rather than once per container,
  /// and each container's children then allocated at their size.
  std::vector<std::vector<JsonValue>> scratchByDepth;

  std::vector<JsonValue> &scratch(unsigned depth) {
    // Sized once: a deeper container's scratch must not move this one's.
    if (scratchByDepth.empty())
      scratchByDepth.resize(kMaxJsonDepth + 1);
    return scratchByDepth[depth];
  }

  static void takeItems(std::vector<JsonValue> &items, JsonValue &out) {
    out.children.reserve(items.size());
    for (JsonValue &item : items)
      out.children.push_back(std::move(item));
    items.clear();
  }

  bool fail(const std::string &message) {
    error = "at byte " + std::to_string(pos) + ": " + message;
    return false;
  }

  bool atEnd() const { return pos >= input.size(); }

  void skipSpace() {
    while (!atEnd()) {
      char c = input[pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return;
      ++pos;
    }
  }

  bool consumeWord(std::string_view word) {
    if (input.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  bool parseValue(JsonValue &out, unsigned depth) {
    if (atEnd())
      return fail("unexpected end of input, expected a value");
    char c = input[pos];
    switch (c) {
    case '{':
      return parseObject(out, depth + 1);
    case '[':
      return parseArray(out, depth + 1);
    case '"':
      out.valueKind = JsonValue::Kind::String;
      return parseString(out.text);
    case 't':
      if (!consumeWord("true"))
        return fail("invalid literal, expected 'true'");
      out.valueKind = JsonValue::Kind::Bool;
      out.boolean = true;
      return true;
    case 'f':
      if (!consumeWord("false"))
        return fail("invalid literal, expected 'false'");
      out.valueKind = JsonValue::Kind::Bool;
      out.boolean = false;
      return true;
    case 'n':
      if (!consumeWord("null"))
        return fail("invalid literal, expected 'null'");
      out.valueKind = JsonValue::Kind::Null;
      return true;
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      return fail(std::string("unexpected character ") + quoteChar(c) +
                  ", expected a value");
    }
  }

  static std::string quoteChar(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
      return std::string("'") + c + "'";
    char buffer[8];
    static const char *digits = "0123456789abcdef";
    buffer[0] = '0';
    buffer[1] = 'x';
    buffer[2] = digits[u >> 4];
    buffer[3] = digits[u & 15];
    buffer[4] = 0;
    return buffer;
  }

  bool parseObject(JsonValue &out, unsigned depth) {
    if (depth > kMaxJsonDepth)
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    out.valueKind = JsonValue::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (!atEnd() && input[pos] == '}') {
      ++pos;
      return true;
    }
    // Duplicates are found by a scan of the keys before, or past
    // kScannedKeys members (where a scan would be quadratic) in a set.
    constexpr size_t kScannedKeys = 16;
    std::unordered_set<std::string> seen;
    std::vector<std::string> &keys = out.memberKeys;
    std::vector<JsonValue> &items = scratch(depth);
    while (true) {
      skipSpace();
      if (atEnd() || input[pos] != '"')
        return fail("expected a string member name");
      size_t keyPos = pos;
      std::string key;
      if (!parseString(key))
        return false;
      if (keys.size() == kScannedKeys)
        seen.insert(keys.begin(), keys.end());
      bool duplicate =
          keys.size() < kScannedKeys
              ? std::find(keys.begin(), keys.end(), key) != keys.end()
              : !seen.insert(key).second;
      if (duplicate) {
        pos = keyPos;
        std::string shown;
        for (char c : key)
          shown += static_cast<unsigned char>(c) < 0x20 ? quoteChar(c)
                                                        : std::string(1, c);
        return fail("duplicate member '" + shown + "'");
      }
      skipSpace();
      if (atEnd() || input[pos] != ':')
        return fail("expected ':' after a member name");
      ++pos;
      skipSpace();
      keys.push_back(std::move(key));
      items.emplace_back();
      if (!parseValue(items.back(), depth))
        return false;
      skipSpace();
      if (atEnd())
        return fail("unexpected end of input, expected ',' or '}'");
      if (input[pos] == ',') {
        ++pos;
        continue;
      }
      if (input[pos] == '}') {
        ++pos;
        takeItems(items, out);
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool parseArray(JsonValue &out, unsigned depth) {
    if (depth > kMaxJsonDepth)
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    out.valueKind = JsonValue::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (!atEnd() && input[pos] == ']') {
      ++pos;
      return true;
    }
    std::vector<JsonValue> &items = scratch(depth);
    while (true) {
      skipSpace();
      items.emplace_back();
      if (!parseValue(items.back(), depth))
        return false;
      skipSpace();
      if (atEnd())
        return fail("unexpected end of input, expected ',' or ']'");
      if (input[pos] == ',') {
        ++pos;
        continue;
      }
      if (input[pos] == ']') {
        ++pos;
        takeItems(items, out);
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool parseHex4(uint32_t &value) {
    if (input.size() - pos < 4)
      return fail("truncated \\u escape");
    value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = input[pos + i];
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        return fail("invalid hex digit in \\u escape");
      value = value * 16 + digit;
    }
    pos += 4;
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = input[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        // The run of plain characters up to the next quote, escape or
        // control character, in one append.
        size_t end = pos + 1;
        while (end < input.size()) {
          char d = input[end];
          if (d == '"' || d == '\\' || static_cast<unsigned char>(d) < 0x20)
            break;
          ++end;
        }
        out.append(input.data() + pos, end - pos);
        pos = end;
        continue;
      }
      ++pos;
      if (atEnd())
        return fail("unterminated escape");
      char e = input[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xdc00 && cp <= 0xdfff)
          return fail("unpaired low surrogate in \\u escape");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (input.substr(pos, 2) != "\\u")
            return fail("high surrogate not followed by a low surrogate");
          pos += 2;
          uint32_t low;
          if (!parseHex4(low))
            return false;
          if (low < 0xdc00 || low > 0xdfff)
            return fail("high surrogate not followed by a low surrogate");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos;
        return fail(std::string("invalid escape '\\") + quoteChar(e) + "'");
      }
    }
  }

  bool parseNumber(JsonValue &out) {
    size_t start = pos;
    bool isInteger = true;
    if (input[pos] == '-')
      ++pos;
    if (atEnd() || !isDigit(input[pos]))
      return fail("expected a digit");
    if (input[pos] == '0') {
      ++pos;
      if (!atEnd() && isDigit(input[pos]))
        return fail("leading zeros are not allowed");
    } else {
      while (!atEnd() && isDigit(input[pos]))
        ++pos;
    }
    if (!atEnd() && input[pos] == '.') {
      isInteger = false;
      ++pos;
      if (atEnd() || !isDigit(input[pos]))
        return fail("expected a digit after '.'");
      while (!atEnd() && isDigit(input[pos]))
        ++pos;
    }
    if (!atEnd() && (input[pos] == 'e' || input[pos] == 'E')) {
      isInteger = false;
      ++pos;
      if (!atEnd() && (input[pos] == '+' || input[pos] == '-'))
        ++pos;
      if (atEnd() || !isDigit(input[pos]))
        return fail("expected a digit in the exponent");
      while (!atEnd() && isDigit(input[pos]))
        ++pos;
    }
    const char *first = input.data() + start;
    const char *last = input.data() + pos;
    if (isInteger) {
      int64_t value;
      auto result = std::from_chars(first, last, value);
      if (result.ec == std::errc() && result.ptr == last) {
        out.valueKind = JsonValue::Kind::Int;
        out.integer = value;
        return true;
      }
      // Out of int64 range: keep it as a double.
    }
    double value;
    auto result = std::from_chars(first, last, value);
    if (result.ptr != last || (result.ec != std::errc() &&
                               result.ec != std::errc::result_out_of_range)) {
      pos = start;
      return fail("invalid number");
    }
    if (result.ec == std::errc::result_out_of_range) {
      // from_chars leaves `value` unspecified on overflow/underflow: pick the
      // limit by the exponent's sign.
      bool negative = *first == '-';
      bool tiny = false;
      for (const char *p = first; p != last; ++p)
        if ((*p == 'e' || *p == 'E') && p + 1 != last && p[1] == '-')
          tiny = true;
      value = tiny ? 0.0 : HUGE_VAL;
      if (negative)
        value = -value;
    }
    out.valueKind = JsonValue::Kind::Double;
    out.real = value;
    return true;
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
};
} // namespace dyncc::runtime

bool dyncc::runtime::parseJson(std::string_view text, JsonValue &out,
                               std::string &error) {
  out = JsonValue();
  JsonParser parser(text, error);
  return parser.parseDocument(out);
}
