//===- OnnxWireTest.cpp - Detaching initializer data from a model ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Importer/OnnxWire.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <random>

using namespace dyncc::onnx_wire;

namespace {

std::string randomBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char &c : s)
    c = static_cast<char>(rng());
  return s;
}

/// A length-delimited field, serialized (field numbers and lengths < 128).
std::string lenField(int number, const std::string &payload) {
  std::string out(1, static_cast<char>((number << 3) | 2));
  size_t n = payload.size();
  while (n >= 0x80) {
    out.push_back(static_cast<char>(n | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
  return out + payload;
}

onnx::ModelProto makeModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("OnnxWireTest");
  model.add_opset_import()->set_version(17);
  auto *prop = model.add_metadata_props();
  prop->set_key("k");
  prop->set_value("v");
  onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("g");
  onnx::NodeProto *node = graph->add_node();
  node->set_op_type("MatMul");
  node->add_input("x");
  node->add_input("w0");
  node->add_output("y");
  // A large weight, a small one, and one in typed fields.
  onnx::TensorProto *w0 = graph->add_initializer();
  w0->set_name("w0");
  w0->set_data_type(onnx::TensorProto::FLOAT);
  w0->add_dims(64);
  w0->add_dims(32);
  w0->set_raw_data(randomBytes(64 * 32 * 4, 1));
  onnx::TensorProto *w1 = graph->add_initializer();
  w1->set_name("w1");
  w1->set_data_type(onnx::TensorProto::INT64);
  w1->add_dims(2);
  w1->set_raw_data(randomBytes(16, 2));
  onnx::TensorProto *w2 = graph->add_initializer();
  w2->set_name("w2");
  w2->set_data_type(onnx::TensorProto::FLOAT);
  w2->add_dims(3);
  for (float f : {1.0f, 2.0f, 3.0f})
    w2->add_float_data(f);
  graph->add_output()->set_name("y");
  return model;
}

TEST(OnnxWireTest, LargeRawDataIsDetachedAndEverythingElseKept) {
  onnx::ModelProto model = makeModel();
  std::string bytes = model.SerializeAsString();
  std::optional<SplitModel> split = detachInitializerData(bytes, 1024);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->detached.size(), 1u);
  EXPECT_EQ(split->detached[0].initializer, 0u);
  EXPECT_EQ(split->detached[0].bytes.str(),
            model.graph().initializer(0).raw_data());
  // The bytes are in place in the original buffer, not copied.
  EXPECT_GE(split->detached[0].bytes.data(), bytes.data());
  EXPECT_LE(split->detached[0].bytes.end(), bytes.data() + bytes.size());
  EXPECT_LT(split->model.size(), 1024u);

  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(split->model));
  // Putting the detached bytes back gives the original message.
  parsed.mutable_graph()->mutable_initializer(0)->set_raw_data(
      split->detached[0].bytes.str());
  EXPECT_EQ(parsed.SerializeAsString(), bytes);
}

TEST(OnnxWireTest, NothingBelowTheThresholdIsDetached) {
  std::string bytes = makeModel().SerializeAsString();
  std::optional<SplitModel> split = detachInitializerData(bytes, 1 << 20);
  ASSERT_TRUE(split);
  EXPECT_TRUE(split->detached.empty());
  EXPECT_EQ(split->model, bytes);
}

TEST(OnnxWireTest, InitializerIndexCountsAcrossRepeatedGraphFields) {
  // Protobuf merges a repeated singular message field; initializers append.
  onnx::ModelProto first = makeModel();
  onnx::ModelProto second;
  onnx::TensorProto *t = second.mutable_graph()->add_initializer();
  t->set_name("late");
  t->set_raw_data(randomBytes(2048, 3));
  std::string bytes = first.SerializeAsString() + second.SerializeAsString();
  std::optional<SplitModel> split = detachInitializerData(bytes, 1024);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->detached.size(), 2u);
  EXPECT_EQ(split->detached[1].initializer, 3u);
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(split->model));
  ASSERT_EQ(parsed.graph().initializer_size(), 4);
  EXPECT_EQ(parsed.graph().initializer(3).name(), "late");
  EXPECT_FALSE(parsed.graph().initializer(3).has_raw_data());
  EXPECT_EQ(split->detached[1].bytes.str(), t->raw_data());
}

TEST(OnnxWireTest, TheLastRawDataWins) {
  // One initializer whose wire bytes hold raw_data twice (protobuf keeps the
  // last): a large one, then a small one.
  onnx::TensorProto a, b;
  a.set_name("t");
  a.set_raw_data(randomBytes(2048, 4));
  b.set_raw_data(randomBytes(16, 5));
  std::string bytes = lenField(
      7, lenField(5, a.SerializeAsString() + b.SerializeAsString()));
  onnx::ModelProto whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  ASSERT_EQ(whole.graph().initializer(0).raw_data(), b.raw_data());

  std::optional<SplitModel> split = detachInitializerData(bytes, 1024);
  ASSERT_TRUE(split);
  EXPECT_TRUE(split->detached.empty()); // The 16 bytes that count stay.
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(split->model));
  EXPECT_EQ(parsed.graph().initializer(0).name(), "t");
  EXPECT_EQ(parsed.graph().initializer(0).raw_data(), b.raw_data());

  // And the other way round: the large one is last, and is detached.
  bytes = lenField(7, lenField(5, b.SerializeAsString() + a.SerializeAsString()));
  split = detachInitializerData(bytes, 1024);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->detached.size(), 1u);
  EXPECT_EQ(split->detached[0].bytes.str(), a.raw_data());
  ASSERT_TRUE(parsed.ParseFromString(split->model));
  EXPECT_FALSE(parsed.graph().initializer(0).has_raw_data());
}

TEST(OnnxWireTest, MalformedInputIsNotSplit) {
  std::string bytes = makeModel().SerializeAsString();
  // Every truncation of the message either fails to split or splits into
  // something no larger; none reads past the end (ASan builds check this).
  for (size_t n = 0; n < bytes.size(); n += 7) {
    std::optional<SplitModel> split =
        detachInitializerData(llvm::StringRef(bytes).substr(0, n), 16);
    if (split)
      EXPECT_LE(split->model.size(), n);
  }
  // A length that runs past the end.
  EXPECT_FALSE(detachInitializerData(std::string("\x3a\x7f", 2), 16));
  // A varint that never ends.
  EXPECT_FALSE(detachInitializerData(std::string(11, '\xff'), 16));
  // A group (wire type 3), and field number 0.
  EXPECT_FALSE(detachInitializerData(std::string("\x0b", 1), 16));
  EXPECT_FALSE(detachInitializerData(std::string("\x00\x01", 2), 16));
  // The graph field as a varint instead of a message.
  EXPECT_FALSE(detachInitializerData(std::string("\x38\x01", 2), 16));
}

} // namespace
