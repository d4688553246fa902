//===- Npy.cpp - Reading and writing NumPy .npy files -----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

using namespace dyncc::runtime;

namespace {
constexpr char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
/// Refuse headers larger than this (NumPy itself stops at 10000 by default).
constexpr size_t kMaxHeaderLength = 1 << 20;

/// Renders text from a file for a one-line message.
std::string printable(std::string_view text) {
  std::string result;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      result += c;
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", u);
      result += buffer;
    }
  }
  return result;
}

/// A cursor over the header's Python dict literal.
class HeaderParser {
public:
  HeaderParser(std::string_view text, std::string &error)
      : text(text), error(error) {}

  bool parse(std::string &descr, bool &fortranOrder,
             std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after '" + printable(key) + "'");
      skipSpace();
      if (key == "descr") {
        if (pos < text.size() && text[pos] == '[')
          return fail("structured dtypes are not supported");
        if (!parseString(descr))
          return false;
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (!parseBool(fortranOrder))
          return false;
        haveOrder = true;
      } else if (key == "shape") {
        if (!parseShape(shape))
          return false;
        haveShape = true;
      } else {
        return fail("unexpected key '" + printable(key) + "'");
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail("expected ',' or '}'");
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the header dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(std::string("header lacks '") +
                  (!haveDescr   ? "descr"
                   : !haveOrder ? "fortran_order"
                                : "shape") +
                  "'");
    return true;
  }

private:
  std::string_view text;
  std::string &error;
  size_t pos = 0;

  bool fail(const std::string &message) {
    error = "malformed header: " + message;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return fail("expected a quoted string");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  bool parseBool(bool &out) {
    if (text.substr(pos, 4) == "True") {
      pos += 4;
      out = true;
      return true;
    }
    if (text.substr(pos, 5) == "False") {
      pos += 5;
      out = false;
      return true;
    }
    return fail("expected True or False");
  }
  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return fail("expected a shape tuple");
    shape.clear();
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
        return fail("expected a dimension");
      int64_t value = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[pos] - '0', &value))
          return fail("dimension too large");
        ++pos;
      }
      if (consume('L')) {
        // Python 2 long suffix.
      }
      shape.push_back(value);
      if (shape.size() > 64)
        return fail("more than 64 dimensions");
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return true;
      return fail("expected ',' or ')' in the shape");
    }
  }
};

bool parseDescr(const std::string &descr, DType &type, std::string &error) {
  if (descr.size() < 3) {
    error = "unsupported dtype '" + printable(descr) + "'";
    return false;
  }
  char order = descr[0];
  std::string code = descr.substr(1);
  static const struct {
    const char *code;
    DType type;
  } kCodes[] = {{"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64},
                {"i1", DType::I8},  {"i2", DType::I16}, {"i4", DType::I32},
                {"i8", DType::I64}, {"u1", DType::U8},  {"u2", DType::U16},
                {"u4", DType::U32}, {"u8", DType::U64}, {"b1", DType::Bool}};
  for (const auto &entry : kCodes) {
    if (code != entry.code)
      continue;
    bool singleByte = dtypeSize(entry.type) == 1;
    if (order == '>' && !singleByte) {
      error = "big-endian data ('" + printable(descr) + "') is not supported";
      return false;
    }
    if (order != '<' && order != '|' && order != '=' &&
        !(order == '>' && singleByte)) {
      error = "unsupported dtype '" + printable(descr) + "'";
      return false;
    }
    type = entry.type;
    return true;
  }
  error = "unsupported dtype '" + printable(descr) + "'";
  return false;
}
} // namespace

const char *dyncc::runtime::npyDescr(DType type) {
  switch (type) {
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::Bool:
    return "|b1";
  }
  return "|V1";
}

bool dyncc::runtime::decodeNpy(const void *bytes, size_t size,
                               const std::string &name, NpyArray &out,
                               std::string &error) {
  const uint8_t *p = static_cast<const uint8_t *>(bytes);
  auto fail = [&](const std::string &message) {
    error = name + ": " + message;
    return false;
  };
  if (size < 10 || std::memcmp(p, kMagic, sizeof(kMagic)) != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = p[6], minor = p[7];
  size_t headerLength, prefix;
  if (major == 1) {
    headerLength = p[8] | (size_t(p[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return fail("truncated header");
    headerLength = p[8] | (size_t(p[9]) << 8) | (size_t(p[10]) << 16) |
                   (size_t(p[11]) << 24);
    prefix = 12;
  } else {
    return fail("unsupported .npy version " + std::to_string(major) + "." +
                std::to_string(minor));
  }
  if (minor != 0)
    return fail("unsupported .npy version " + std::to_string(major) + "." +
                std::to_string(minor));
  if (headerLength > kMaxHeaderLength)
    return fail("header of " + std::to_string(headerLength) +
                " bytes is too large");
  if (headerLength > size - prefix)
    return fail("truncated header");
  std::string_view header(reinterpret_cast<const char *>(p + prefix),
                          headerLength);
  std::string descr, message;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  HeaderParser parser(header, message);
  if (!parser.parse(descr, fortranOrder, shape))
    return fail(message);
  if (fortranOrder)
    return fail("Fortran-order arrays are not supported");
  DType type;
  if (!parseDescr(descr, type, message))
    return fail(message);
  uint64_t bytesNeeded = dtypeSize(type);
  bool overflow = false;
  for (int64_t dim : shape)
    overflow |= __builtin_mul_overflow(bytesNeeded, static_cast<uint64_t>(dim),
                                       &bytesNeeded);
  if (overflow)
    return fail("array size overflows");
  size_t dataSize = size - prefix - headerLength;
  if (dataSize != bytesNeeded)
    return fail("expected " + std::to_string(bytesNeeded) +
                " bytes of data, found " + std::to_string(dataSize));
  out.dtype = type;
  out.shape = std::move(shape);
  out.data.assign(p + prefix + headerLength, p + size);
  return true;
}

bool dyncc::runtime::readNpy(const std::string &path, NpyArray &out,
                             std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::string content;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    content.append(buffer, n);
  bool readError = std::ferror(file) != 0;
  std::fclose(file);
  if (readError) {
    error = path + ": read error";
    return false;
  }
  return decodeNpy(content.data(), content.size(), path, out, error);
}

std::string dyncc::runtime::encodeNpy(DType type,
                                      const std::vector<int64_t> &shape,
                                      const void *data, size_t bytes) {
  std::string dict = "{'descr': '";
  dict += npyDescr(type);
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size())
      dict += shape.size() == 1 ? "," : ", ";
  }
  dict += "), }";
  // Pad with spaces and a newline so that the data starts on a 64-byte
  // boundary.
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  if ((total + 63) / 64 * 64 - prefix > 0xffff)
    prefix = 12;
  total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  size_t headerLength = dict.size();
  std::string out(kMagic, sizeof(kMagic));
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((headerLength >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char *>(data), bytes);
  return out;
}

bool dyncc::runtime::writeNpy(const std::string &path, DType type,
                              const std::vector<int64_t> &shape,
                              const void *data, size_t bytes,
                              std::string &error) {
  std::string content = encodeNpy(type, shape, data, bytes);
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  bool ok =
      std::fwrite(content.data(), 1, content.size(), file) == content.size();
  ok &= std::fclose(file) == 0;
  if (!ok) {
    error = path + ": write error";
    return false;
  }
  return true;
}
