//===- OnnxWire.cpp - Weights detached from a serialized ONNX model -------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Importer/OnnxWire.h"

#include <cstdint>

using namespace dyncc::onnx_wire;
using llvm::StringRef;

namespace {

// Field numbers from onnx.proto.
constexpr uint32_t kModelGraph = 7;       // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5; // GraphProto.initializer
constexpr uint32_t kTensorRawData = 9;    // TensorProto.raw_data

enum WireType : uint32_t { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

/// One field of a message: its number and wire type, the bytes of the whole
/// field (key included) and, for length-delimited fields, the payload.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  StringRef whole;
  StringRef payload;
};

class Reader {
public:
  explicit Reader(StringRef bytes)
      : p(reinterpret_cast<const uint8_t *>(bytes.data())),
        end(p + bytes.size()) {}

  bool done() const { return p == end; }

  /// Reads the next field; false if it is malformed or a (deprecated) group.
  bool next(Field &field) {
    const uint8_t *start = p;
    uint64_t key;
    if (!varint(key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
      return false;
    field.number = static_cast<uint32_t>(key >> 3);
    field.wire = static_cast<uint32_t>(key & 7);
    field.payload = StringRef();
    switch (field.wire) {
    case Varint: {
      uint64_t ignored;
      if (!varint(ignored))
        return false;
      break;
    }
    case Fixed64:
      if (end - p < 8)
        return false;
      p += 8;
      break;
    case Fixed32:
      if (end - p < 4)
        return false;
      p += 4;
      break;
    case Len: {
      uint64_t length;
      if (!varint(length) || length > static_cast<uint64_t>(end - p))
        return false;
      field.payload = StringRef(reinterpret_cast<const char *>(p), length);
      p += length;
      break;
    }
    default:
      return false;
    }
    field.whole = StringRef(reinterpret_cast<const char *>(start), p - start);
    return true;
  }

private:
  bool varint(uint64_t &value) {
    value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (p == end)
        return false;
      uint8_t byte = *p++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }

  const uint8_t *p;
  const uint8_t *end;
};

void putVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putLenField(std::string &out, uint32_t number, StringRef payload) {
  putVarint(out, (static_cast<uint64_t>(number) << 3) | Len);
  putVarint(out, payload.size());
  out.append(payload.data(), payload.size());
}

class Splitter {
public:
  Splitter(size_t minBytes, SplitModel &result)
      : minBytes(minBytes), result(result) {}

  bool model(StringRef bytes, std::string &out) {
    return copyFields(bytes, out, kModelGraph,
                      [&](StringRef graphBytes, std::string &graphOut) {
                        return graph(graphBytes, graphOut);
                      });
  }

private:
  /// Copies the fields of one message to `out`, rewriting each occurrence of
  /// the length-delimited field `number` through `rewrite`.
  template <typename Rewrite>
  bool copyFields(StringRef bytes, std::string &out, uint32_t number,
                  Rewrite rewrite) {
    Reader reader(bytes);
    Field field;
    while (!reader.done()) {
      if (!reader.next(field))
        return false;
      if (field.number != number) {
        out.append(field.whole.data(), field.whole.size());
        continue;
      }
      if (field.wire != Len)
        return false;
      std::string rewritten;
      if (!rewrite(field.payload, rewritten))
        return false;
      putLenField(out, number, rewritten);
    }
    return true;
  }

  bool graph(StringRef bytes, std::string &out) {
    return copyFields(bytes, out, kGraphInitializer,
                      [&](StringRef tensorBytes, std::string &tensorOut) {
                        return tensor(tensorBytes, tensorOut);
                      });
  }

  /// Copies a TensorProto without its raw_data when that is large. raw_data
  /// is a singular field: when it occurs more than once the last one counts.
  bool tensor(StringRef bytes, std::string &out) {
    size_t index = initializers++;
    std::optional<StringRef> raw;
    Reader reader(bytes);
    Field field;
    while (!reader.done()) {
      if (!reader.next(field))
        return false;
      if (field.number != kTensorRawData) {
        out.append(field.whole.data(), field.whole.size());
        continue;
      }
      if (field.wire != Len)
        return false;
      raw = field.payload;
    }
    if (raw && raw->size() >= minBytes)
      result.detached.push_back({index, *raw});
    else if (raw)
      putLenField(out, kTensorRawData, *raw);
    return true;
  }

  size_t minBytes;
  SplitModel &result;
  size_t initializers = 0;
};

} // namespace

std::optional<SplitModel>
dyncc::onnx_wire::detachInitializerData(StringRef bytes, size_t minBytes) {
  SplitModel result;
  Splitter splitter(minBytes, result);
  if (!splitter.model(bytes, result.model))
    return std::nullopt;
  return result;
}
