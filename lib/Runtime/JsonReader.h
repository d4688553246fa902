//===- JsonReader.h - Typed fields of JSON, errors by path ------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The readers of the artifact's JSON sections (the manifest, the
// calibration) derive from JsonReader: it reads typed fields out of objects
// and reports the first problem as one line "SECTION: JSON.PATH: what".
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_JSONREADER_H
#define DYNCC_LIB_RUNTIME_JSONREADER_H

#include "dyncc/Runtime/Json.h"

#include <cstdio>
#include <string>
#include <string_view>

namespace dyncc::runtime {

inline std::string member(const std::string &path, const char *key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

inline std::string element(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

/// True if `text` has no control characters.
inline bool isPrintable(std::string_view text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return false;
  return true;
}

class JsonReader {
public:
  /// Errors go to `error`, prefixed with `prefix` ("manifest").
  JsonReader(std::string prefix, std::string &error)
      : prefix(std::move(prefix)), error(error) {}

protected:
  std::string prefix;
  std::string &error;

  bool fail(const std::string &path, const std::string &message) {
    std::string text = path.empty() ? prefix + ": " + message
                                    : prefix + ": " + path + ": " + message;
    // Strings from the file may hold anything: keep the message one line.
    error.clear();
    for (char c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\x%02x",
                      static_cast<unsigned char>(c));
        error += buffer;
      } else {
        error += c;
      }
    }
    return false;
  }

  /// Like getString, for names that appear in messages and file names:
  /// non-empty, no control characters.
  bool getName(const JsonValue &object, const std::string &path,
               const char *key, std::string &out) {
    if (!getString(object, path, key, out))
      return false;
    if (out.empty())
      return fail(member(path, key), "empty name");
    if (!isPrintable(out))
      return fail(member(path, key),
                  "name '" + out + "' contains a control character");
    return true;
  }

  bool typeError(const std::string &path, const char *expected,
                 const JsonValue &found) {
    return fail(path, std::string("expected ") + expected + ", got " +
                          JsonValue::describe(found.kind()));
  }

  /// The member `key` of object `object` (at `path`); null plus an error if
  /// it is absent.
  const JsonValue *require(const JsonValue &object, const std::string &path,
                           const char *key) {
    const JsonValue *value = object.find(key);
    if (!value)
      fail(path, std::string("missing field '") + key + "'");
    return value;
  }

  bool expectObject(const JsonValue &value, const std::string &path) {
    return value.isObject() || typeError(path, "an object", value);
  }

  bool readString(const JsonValue &value, const std::string &path,
                  std::string &out) {
    if (!value.isString())
      return typeError(path, "a string", value);
    out = value.stringValue();
    return true;
  }

  bool getString(const JsonValue &object, const std::string &path,
                 const char *key, std::string &out) {
    const JsonValue *value = require(object, path, key);
    return value && readString(*value, member(path, key), out);
  }

  bool getOptionalString(const JsonValue &object, const std::string &path,
                         const char *key, std::string &out) {
    const JsonValue *value = object.find(key);
    return !value || readString(*value, member(path, key), out);
  }

  bool readInt(const JsonValue &value, const std::string &path, int64_t &out) {
    if (!value.isInt())
      return typeError(path, "an integer", value);
    out = value.intValue();
    return true;
  }

  bool getInt(const JsonValue &object, const std::string &path, const char *key,
              int64_t &out) {
    const JsonValue *value = require(object, path, key);
    return value && readInt(*value, member(path, key), out);
  }

  bool getArray(const JsonValue &object, const std::string &path,
                const char *key, const JsonValue *&out) {
    out = require(object, path, key);
    if (!out)
      return false;
    return out->isArray() || typeError(member(path, key), "an array", *out);
  }
};

} // namespace dyncc::runtime

#endif // DYNCC_LIB_RUNTIME_JSONREADER_H
