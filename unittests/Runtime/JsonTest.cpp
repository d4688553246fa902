//===- JsonTest.cpp - Tests of the JSON reader ------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Json.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <limits>

using namespace dyncc::runtime;

namespace {

JsonValue parseOk(const std::string &text) {
  JsonValue value;
  std::string error;
  EXPECT_TRUE(parseJson(text, value, error)) << text << ": " << error;
  return value;
}

std::string parseError(const std::string &text) {
  JsonValue value;
  std::string error;
  EXPECT_FALSE(parseJson(text, value, error)) << text;
  return error;
}

TEST(JsonTest, Scalars) {
  EXPECT_TRUE(parseOk("null").isNull());
  EXPECT_TRUE(parseOk(" true ").boolValue());
  EXPECT_FALSE(parseOk("false").boolValue());
  EXPECT_EQ(parseOk("\"hi\"").stringValue(), "hi");
  JsonValue zero = parseOk("0");
  EXPECT_TRUE(zero.isInt());
  EXPECT_EQ(zero.intValue(), 0);
  EXPECT_EQ(parseOk("-17").intValue(), -17);
}

TEST(JsonTest, IntegersAreExact) {
  JsonValue max = parseOk("9223372036854775807");
  ASSERT_TRUE(max.isInt());
  EXPECT_EQ(max.intValue(), std::numeric_limits<int64_t>::max());
  JsonValue min = parseOk("-9223372036854775808");
  ASSERT_TRUE(min.isInt());
  EXPECT_EQ(min.intValue(), std::numeric_limits<int64_t>::min());
  JsonValue big = parseOk("9223372036854775808");
  EXPECT_FALSE(big.isInt());
  EXPECT_TRUE(big.isNumber());
  EXPECT_DOUBLE_EQ(big.doubleValue(), 9223372036854775808.0);
  JsonValue nearPrecision = parseOk("9007199254740993");
  ASSERT_TRUE(nearPrecision.isInt());
  EXPECT_EQ(nearPrecision.intValue(), 9007199254740993);
}

TEST(JsonTest, Doubles) {
  EXPECT_DOUBLE_EQ(parseOk("1.5").doubleValue(), 1.5);
  EXPECT_FALSE(parseOk("1.0").isInt());
  EXPECT_DOUBLE_EQ(parseOk("-2.5e3").doubleValue(), -2500.0);
  EXPECT_DOUBLE_EQ(parseOk("1E-2").doubleValue(), 0.01);
  EXPECT_DOUBLE_EQ(parseOk("0.125").doubleValue(), 0.125);
  EXPECT_EQ(parseOk("1e400").doubleValue(),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(parseOk("1e-400").doubleValue(), 0.0);
}

TEST(JsonTest, StringEscapes) {
  EXPECT_EQ(parseOk(R"("a\"b\\c\/d\b\f\n\r\t")").stringValue(),
            "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parseOk(R"("\u0041\u00e9\u20ac")").stringValue(),
            "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parseOk(R"("\ud83d\ude00")").stringValue(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(parseOk(R"("\u0000")").stringValue(), std::string(1, '\0'));
  EXPECT_EQ(parseOk("\"caf\xc3\xa9\"").stringValue(), "caf\xc3\xa9");
}

TEST(JsonTest, Containers) {
  JsonValue value = parseOk(R"({"a": [1, 2, {"b": null}], "c": {}, "d": []})");
  ASSERT_TRUE(value.isObject());
  EXPECT_EQ(value.keys(), (std::vector<std::string>{"a", "c", "d"}));
  const JsonValue *a = value.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->isArray());
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[1].intValue(), 2);
  EXPECT_TRUE((*a)[2].find("b")->isNull());
  EXPECT_TRUE(value.find("c")->isObject());
  EXPECT_EQ(value.find("d")->size(), 0u);
  EXPECT_EQ(value.find("zz"), nullptr);
  EXPECT_EQ((*a)[0].find("a"), nullptr); // not an object
}

TEST(JsonTest, ErrorsGiveByteOffsets) {
  EXPECT_EQ(parseError(""),
            "at byte 0: unexpected end of input, expected a value");
  EXPECT_EQ(parseError("[1, 2,]"),
            "at byte 6: unexpected character ']', expected a value");
  EXPECT_EQ(parseError("{\"a\": 1,}"),
            "at byte 8: expected a string member name");
  EXPECT_EQ(parseError("{\"a\" 1}"),
            "at byte 5: expected ':' after a member name");
  EXPECT_EQ(parseError("[1 2]"), "at byte 3: expected ',' or ']'");
  EXPECT_EQ(parseError("{\"a\": 1 \"b\": 2}"),
            "at byte 8: expected ',' or '}'");
  EXPECT_EQ(parseError("1 2"),
            "at byte 2: unexpected text after the JSON value");
  EXPECT_EQ(parseError("{\"a\": 1, \"a\": 2}"),
            "at byte 9: duplicate member 'a'");
}

TEST(JsonTest, MalformedInputs) {
  const char *cases[] = {
      "{",           "[",           "[1",
      "{\"a\"",      "{\"a\":",     "01",
      "-",           "1.",          "1e",
      "1e+",         ".5",          "+1",
      "tru",         "nul",         "falsy",
      "\"abc",       "\"\\x\"",     "\"\\u12\"",
      "\"\\u12g4\"", "\"\\ud800\"", "\"\\ud800\\u0041\"",
      "\"\\udc00\"", "\"a\nb\"",    "'a'",
      "[1,,2]",      "{1: 2}",      "NaN",
      "Infinity",    "\"\\",        "-01",
  };
  for (const char *text : cases) {
    std::string error = parseError(text);
    EXPECT_EQ(error.rfind("at byte ", 0), 0u) << text << ": " << error;
  }
}

TEST(JsonTest, DepthLimit) {
  std::string ok =
      std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  parseOk(ok);
  std::string deep =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(parseError(deep), "at byte 64: nesting deeper than 64");
  std::string deepObject;
  for (unsigned i = 0; i <= kMaxJsonDepth; ++i)
    deepObject += "{\"a\":";
  EXPECT_NE(parseError(deepObject).find("nesting deeper than 64"),
            std::string::npos);
  // Far deeper input must fail cleanly too (no stack overflow).
  parseError(std::string(100000, '['));
}

TEST(JsonTest, NotNulTerminated) {
  std::string text = "[1, 2]garbage";
  JsonValue value;
  std::string error;
  EXPECT_TRUE(parseJson(std::string_view(text).substr(0, 6), value, error))
      << error;
  EXPECT_FALSE(parseJson(std::string_view(text).substr(0, 5), value, error));
}

} // namespace
