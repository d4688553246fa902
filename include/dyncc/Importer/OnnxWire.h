//===- OnnxWire.h - Weights detached from a serialized ONNX model -*- C++
//-*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Parsing a ModelProto copies every initializer's raw_data into a string the
// message owns: for BERT-large that is 1.3 GB copied (and page-faulted in)
// before import begins. This reads the protobuf wire format just deep enough
// (ModelProto.graph -> GraphProto.initializer -> TensorProto.raw_data) to
// copy the model *without* those bytes, and says where each one lies in the
// original buffer, so that the importer can parse the small remainder and
// point resource blobs at the mapped file.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_IMPORTER_ONNXWIRE_H
#define DYNCC_IMPORTER_ONNXWIRE_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dyncc::onnx_wire {

/// The raw_data of the `initializer`-th initializer (in the order the
/// parsed GraphProto lists them), in place in the original bytes.
struct DetachedData {
  size_t initializer;
  llvm::StringRef bytes;
};

struct SplitModel {
  /// The serialized ModelProto without the detached raw_data fields.
  std::string model;
  std::vector<DetachedData> detached;
};

/// Splits a serialized ModelProto: every initializer whose raw_data holds at
/// least `minBytes` loses it to `detached`; all other fields are copied as
/// they are. Returns nullopt for anything it cannot read (malformed varints,
/// lengths past the end, groups, a known field with the wrong wire type):
/// the caller then parses `bytes` whole, and protobuf reports the error.
std::optional<SplitModel> detachInitializerData(llvm::StringRef bytes,
                                                size_t minBytes);

} // namespace dyncc::onnx_wire

#endif // DYNCC_IMPORTER_ONNXWIRE_H
