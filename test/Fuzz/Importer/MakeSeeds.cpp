//===- MakeSeeds.cpp - Seed corpus for dyncc-fuzz-importer ------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc-fuzz-importer-seeds DIR` fills DIR with the importer fuzzer's seeds:
//  * gen_*.onnx: tiny generated models, one or a few nodes each, with
//    symbolic input dimensions, covering the op handlers and the shape
//    arithmetic chains exporters write (Shape -> Gather -> Concat -> Reshape);
//  * examples/linear_relu.onnx;
//  * every *.onnx of the shared models: $DYNCC_SHARED_DIR/models, else
//    ../shared/models beside the source tree. Missing is a warning, or an
//    error under CI=true (as for the other suites, docs/Testing.md).
//
//   dyncc-fuzz-importer-seeds seeds
//   dyncc-fuzz-importer -max_total_time=60 corpus seeds
//
//===----------------------------------------------------------------------===//

#include "onnx/onnx_pb.h"

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace {

using Dims = std::vector<std::string>;

/// A one-graph model under construction. Dimensions are strings: digits
/// are sizes, anything else a dim_param.
class Seed {
public:
  explicit Seed(const std::string &name, int64_t opset = 13) {
    model.set_ir_version(8);
    model.set_producer_name("dyncc-fuzz-importer-seeds");
    model.add_opset_import()->set_version(opset);
    graph()->set_name(name);
  }

  Seed &input(const std::string &name, const Dims &dims,
              int elemType = onnx::TensorProto::FLOAT) {
    auto *t = graph()->add_input();
    t->set_name(name);
    auto *tensor = t->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elemType);
    auto *shape = tensor->mutable_shape();
    for (const std::string &d : dims) {
      auto *dim = shape->add_dim();
      if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos)
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
    return *this;
  }

  Seed &output(const std::string &name,
               int elemType = onnx::TensorProto::FLOAT) {
    auto *t = graph()->add_output();
    t->set_name(name);
    t->mutable_type()->mutable_tensor_type()->set_elem_type(elemType);
    return *this;
  }

  Seed &ints(const std::string &name, std::vector<int64_t> values,
             bool scalar = false) {
    auto *t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
      t->add_dims((int64_t)values.size());
    for (int64_t v : values)
      t->add_int64_data(v);
    return *this;
  }

  Seed &floats(const std::string &name, std::vector<int64_t> dims,
               bool raw = false) {
    auto *t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    std::string bytes;
    for (int64_t i = 0; i < count; ++i) {
      float v = 0.25f * (float)((i * 7) % 13) - 1.0f;
      if (raw)
        bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
      else
        t->add_float_data(v);
    }
    if (raw)
      t->set_raw_data(bytes);
    return *this;
  }

  onnx::NodeProto &node(const std::string &op,
                        std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs) {
    auto *n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(graph()->node_size()));
    for (const std::string &i : inputs)
      n->add_input(i);
    for (const std::string &o : outputs)
      n->add_output(o);
    return *n;
  }

  onnx::GraphProto *graph() { return model.mutable_graph(); }
  const std::string &name() const { return model.graph().name(); }

  onnx::ModelProto model;
};

void attr(onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void attr(onnx::NodeProto &n, const std::string &name, std::vector<int64_t> v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

void attrF(onnx::NodeProto &n, const std::string &name, float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void attrS(onnx::NodeProto &n, const std::string &name, const std::string &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::vector<Seed> makeSeeds() {
  using TP = onnx::TensorProto;
  std::vector<Seed> seeds;
  auto add = [&](Seed s) { seeds.push_back(std::move(s)); };

  {
    Seed s("binary_broadcast");
    s.input("X", {"B", "S", "8"}).input("Y", {"S", "1"}).output("Z");
    s.node("Add", {"X", "Y"}, {"A"});
    s.node("Mul", {"A", "X"}, {"M"});
    s.node("Sub", {"M", "Y"}, {"D"});
    s.node("Div", {"D", "X"}, {"Z"});
    add(s);
  }
  {
    Seed s("unary_chain");
    s.input("X", {"N", "4"}).output("Y");
    const char *ops[] = {"Relu", "Exp",        "Sigmoid", "Tanh",
                         "Erf",  "Abs",        "Neg",     "Sqrt",
                         "Log",  "Reciprocal", "Identity"};
    std::string prev = "X";
    for (int i = 0; i < 11; ++i) {
      std::string out = i == 10 ? "Y" : "t" + std::to_string(i);
      s.node(ops[i], {prev}, {out});
      prev = out;
    }
    add(s);
  }
  {
    Seed s("compare_where");
    s.input("A", {"B", "S"}).input("C", {"S"}).output("Y");
    s.node("Less", {"A", "C"}, {"L"});
    s.node("Greater", {"A", "C"}, {"G"});
    s.node("Or", {"L", "G"}, {"O"});
    s.node("Not", {"O"}, {"N"});
    s.node("Where", {"N", "A", "C"}, {"Y"});
    add(s);
  }
  {
    Seed s("matmul_bias");
    s.input("X", {"B", "S", "16"}).output("Y");
    s.floats("W", {16, 8}, true).floats("b", {8});
    s.node("MatMul", {"X", "W"}, {"XW"});
    s.node("Add", {"XW", "b"}, {"Y"});
    add(s);
  }
  {
    Seed s("gemm_transb");
    s.input("X", {"B", "16"}).output("Y");
    s.floats("W", {8, 16}).floats("c", {8});
    auto &n = s.node("Gemm", {"X", "W", "c"}, {"Y"});
    attr(n, "transB", 1);
    attrF(n, "alpha", 0.5f);
    add(s);
  }
  {
    Seed s("conv_pool", 11);
    s.input("X", {"N", "3", "H", "W"}).output("Y");
    s.floats("K", {4, 3, 3, 3}).floats("kb", {4});
    auto &c = s.node("Conv", {"X", "K", "kb"}, {"C"});
    attr(c, "kernel_shape", std::vector<int64_t>{3, 3});
    attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
    attr(c, "strides", std::vector<int64_t>{2, 2});
    auto &p = s.node("MaxPool", {"C"}, {"P"});
    attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
    attr(p, "strides", std::vector<int64_t>{2, 2});
    attr(p, "ceil_mode", 1);
    s.node("GlobalAveragePool", {"P"}, {"Y"});
    add(s);
  }
  {
    Seed s("conv_group_autopad", 11);
    s.input("X", {"N", "4", "H", "W"}).output("Y");
    s.floats("K", {4, 2, 3, 3});
    auto &c = s.node("Conv", {"X", "K"}, {"C"});
    attr(c, "group", 2);
    attrS(c, "auto_pad", "SAME_UPPER");
    attr(c, "dilations", std::vector<int64_t>{2, 2});
    auto &p = s.node("AveragePool", {"C"}, {"Y"});
    attr(p, "kernel_shape", std::vector<int64_t>{3, 3});
    attr(p, "pads", std::vector<int64_t>{1, 1, 1, 1});
    attr(p, "count_include_pad", 1);
    add(s);
  }
  {
    Seed s("batchnorm");
    s.input("X", {"N", "3", "H", "W"}).output("Y");
    s.floats("sc", {3}).floats("bi", {3}).floats("me", {3}).floats("va", {3});
    auto &n =
        s.node("BatchNormalization", {"X", "sc", "bi", "me", "va"}, {"Y"});
    attrF(n, "epsilon", 1e-5f);
    add(s);
  }
  {
    // The exporters' shape arithmetic: Shape -> Gather -> Unsqueeze ->
    // Concat -> Reshape.
    Seed s("shape_chain_reshape");
    s.input("X", {"B", "S", "12"}).output("Y");
    s.ints("i0", {0}, true).ints("i1", {1}, true).ints("ax0", {0});
    s.ints("c3", {3}).ints("c4", {4});
    s.node("Shape", {"X"}, {"sh"});
    attr(s.node("Gather", {"sh", "i0"}, {"b"}), "axis", 0);
    attr(s.node("Gather", {"sh", "i1"}, {"q"}), "axis", 0);
    s.node("Unsqueeze", {"b", "ax0"}, {"bu"});
    s.node("Unsqueeze", {"q", "ax0"}, {"qu"});
    attr(s.node("Concat", {"bu", "qu", "c3", "c4"}, {"shape"}), "axis", 0);
    s.node("Reshape", {"X", "shape"}, {"R"});
    attr(s.node("Transpose", {"R"}, {"Y"}), "perm",
         std::vector<int64_t>{0, 2, 1, 3});
    add(s);
  }
  {
    Seed s("reshape_flatten");
    s.input("X", {"B", "S", "4"}).output("Y");
    s.ints("shape", {0, -1});
    s.node("Reshape", {"X", "shape"}, {"R"});
    attr(s.node("Flatten", {"R"}, {"Y"}), "axis", 1);
    add(s);
  }
  {
    Seed s("concat_split");
    s.input("A", {"B", "S"}).input("C", {"B", "T"}).output("Y0").output("Y1");
    s.ints("split", {2, 3});
    attr(s.node("Concat", {"A", "C"}, {"AC"}), "axis", 1);
    s.node("Shape", {"AC"}, {"sh"});
    attr(s.node("Split", {"AC", "split"}, {"Y0", "Y1"}), "axis", 1);
    add(s);
  }
  {
    Seed s("slice_steps");
    s.input("X", {"B", "S", "16"}).output("Y");
    s.ints("st", {1, 0})
        .ints("en", {-1, 16})
        .ints("ax", {1, 2})
        .ints("sp", {1, 2});
    s.node("Slice", {"X", "st", "en", "ax", "sp"}, {"Y"});
    add(s);
  }
  {
    Seed s("slice_opset9", 9);
    s.input("X", {"B", "S", "16"}).output("Y");
    auto &n = s.node("Slice", {"X"}, {"Y"});
    attr(n, "starts", std::vector<int64_t>{0, 2});
    attr(n, "ends", std::vector<int64_t>{INT64_MAX, -2});
    attr(n, "axes", std::vector<int64_t>{0, 2});
    add(s);
  }
  {
    Seed s("gather_embedding");
    s.input("ids", {"B", "S"}, TP::INT64).output("Y");
    s.floats("table", {32, 8}, true);
    attr(s.node("Gather", {"table", "ids"}, {"Y"}), "axis", 0);
    add(s);
  }
  {
    Seed s("reduce_softmax");
    s.input("X", {"B", "S", "8"}).output("Y");
    auto &r = s.node("ReduceMean", {"X"}, {"m"});
    attr(r, "axes", std::vector<int64_t>{-1});
    attr(r, "keepdims", 1);
    s.node("Sub", {"X", "m"}, {"d"});
    attr(s.node("Softmax", {"d"}, {"sm"}), "axis", -1);
    attr(s.node("LogSoftmax", {"sm"}, {"Y"}), "axis", 1);
    add(s);
  }
  {
    Seed s("reduce_ops", 18);
    s.input("X", {"B", "S", "8"}).output("Y");
    s.ints("ax", {1});
    attr(s.node("ReduceSum", {"X", "ax"}, {"a"}), "keepdims", 0);
    s.node("ReduceMax", {"X", "ax"}, {"b"});
    s.node("ReduceMin", {"X", "ax"}, {"c"});
    s.node("ReduceProd", {"X"}, {"p"});
    s.node("Add", {"a", "c"}, {"Y"});
    add(s);
  }
  {
    Seed s("layernorm", 17);
    s.input("X", {"B", "S", "8"}).output("Y");
    s.floats("g", {8}).floats("be", {8});
    auto &n = s.node("LayerNormalization", {"X", "g", "be"}, {"Y"});
    attr(n, "axis", -1);
    attrF(n, "epsilon", 1e-5f);
    add(s);
  }
  {
    Seed s("layernorm_decomposed", 11);
    s.input("X", {"B", "S", "8"}).output("Y");
    s.floats("two", {});
    attr(s.node("ReduceMean", {"X"}, {"m"}), "axes", std::vector<int64_t>{-1});
    s.node("Sub", {"X", "m"}, {"d"});
    s.node("Pow", {"d", "two"}, {"p"});
    attr(s.node("ReduceMean", {"p"}, {"v"}), "axes", std::vector<int64_t>{-1});
    s.node("Sqrt", {"v"}, {"r"});
    s.node("Div", {"d", "r"}, {"Y"});
    add(s);
  }
  {
    Seed s("expand_constantofshape", 9);
    s.input("X", {"B", "1", "S"}).input("shape", {"3"}, TP::INT64).output("Y");
    auto &c = s.node("ConstantOfShape", {"shape"}, {"z"});
    auto *v = c.add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::TENSOR);
    v->mutable_t()->set_data_type(TP::FLOAT);
    v->mutable_t()->add_dims(1);
    v->mutable_t()->add_float_data(1.0f);
    s.node("Shape", {"X"}, {"xs"});
    s.node("Expand", {"X", "xs"}, {"e"});
    s.node("Add", {"e", "z"}, {"Y"});
    add(s);
  }
  {
    Seed s("cast_range");
    s.input("X", {"B", "S"}, TP::INT32).output("Y", TP::INT64);
    s.ints("zero", {0}, true).ints("one", {1}, true);
    s.node("Shape", {"X"}, {"sh"});
    attr(s.node("Gather", {"sh", "one"}, {"len"}), "axis", 0);
    s.node("Range", {"zero", "len", "one"}, {"r"});
    attr(s.node("Cast", {"X"}, {"xl"}), "to", (int64_t)TP::INT64);
    s.node("Add", {"xl", "r"}, {"Y"});
    add(s);
  }
  {
    Seed s("pad_resize", 13);
    s.input("X", {"N", "C", "H", "W"}).output("Y");
    s.ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    attrS(s.node("Pad", {"X", "pads"}, {"P"}), "mode", "constant");
    s.floats("roi", {0});
    auto *sc = s.graph()->add_initializer();
    sc->set_name("scales");
    sc->set_data_type(TP::FLOAT);
    sc->add_dims(4);
    for (float f : {1.0f, 1.0f, 2.0f, 2.0f})
      sc->add_float_data(f);
    auto &r = s.node("Resize", {"P", "roi", "scales"}, {"Y"});
    attrS(r, "mode", "nearest");
    attrS(r, "coordinate_transformation_mode", "asymmetric");
    add(s);
  }
  {
    Seed s("upsample_opset9", 9);
    s.input("X", {"N", "C", "H", "W"}).output("Y");
    auto *sc = s.graph()->add_initializer();
    sc->set_name("scales");
    sc->set_data_type(TP::FLOAT);
    sc->add_dims(4);
    for (float f : {1.0f, 1.0f, 2.0f, 3.0f})
      sc->add_float_data(f);
    attrS(s.node("Upsample", {"X", "scales"}, {"Y"}), "mode", "nearest");
    add(s);
  }
  {
    Seed s("depth_to_space");
    s.input("X", {"N", "8", "H", "W"}).output("Y");
    auto &n = s.node("DepthToSpace", {"X"}, {"Y"});
    attr(n, "blocksize", 2);
    attrS(n, "mode", "CRD");
    add(s);
  }
  {
    Seed s("squeeze_unsqueeze");
    s.input("X", {"B", "1", "S"}).output("Y");
    s.ints("a1", {1}).ints("a0", {0, -1});
    s.node("Squeeze", {"X", "a1"}, {"q"});
    s.node("Unsqueeze", {"q", "a0"}, {"Y"});
    add(s);
  }
  {
    Seed s("squeeze_opset11", 11);
    s.input("X", {"B", "1", "S"}).output("Y");
    attr(s.node("Squeeze", {"X"}, {"q"}), "axes", std::vector<int64_t>{1});
    attr(s.node("Unsqueeze", {"q"}, {"Y"}), "axes", std::vector<int64_t>{2});
    add(s);
  }
  {
    Seed s("tile_cumsum_trilu", 14);
    s.input("X", {"B", "S"}).output("Y");
    s.ints("rep", {2, 1}).ints("ax", {1}, true);
    s.node("Tile", {"X", "rep"}, {"t"});
    attr(s.node("CumSum", {"t", "ax"}, {"c"}), "exclusive", 1);
    attr(s.node("Trilu", {"c"}, {"Y"}), "upper", 0);
    add(s);
  }
  {
    Seed s("nonzero_size");
    s.input("X", {"B", "S"}).output("Y", TP::INT64).output("Z", TP::INT64);
    s.node("NonZero", {"X"}, {"Y"});
    s.node("Size", {"X"}, {"Z"});
    add(s);
  }
  {
    Seed s("clip_leakyrelu");
    s.input("X", {"B", "S"}).output("Y");
    s.floats("lo", {}).floats("hi", {});
    s.node("Clip", {"X", "lo", "hi"}, {"c"});
    attrF(s.node("LeakyRelu", {"c"}, {"l"}), "alpha", 0.1f);
    s.node("Dropout", {"l"}, {"Y"});
    add(s);
  }
  {
    Seed s("clip_opset6", 6);
    s.input("X", {"B", "S"}).output("Y");
    auto &n = s.node("Clip", {"X"}, {"Y"});
    attrF(n, "min", -1.0f);
    attrF(n, "max", 1.0f);
    add(s);
  }
  {
    Seed s("variadic");
    s.input("A", {"B", "S"}).input("C", {"S"}).input("D", {"1"}).output("Y");
    s.node("Max", {"A", "C", "D"}, {"mx"});
    s.node("Min", {"A", "C"}, {"mn"});
    s.node("Sum", {"mx", "mn", "D"}, {"sm"});
    s.node("Mean", {"sm", "A"}, {"Y"});
    add(s);
  }
  {
    Seed s("constant_node");
    s.input("X", {"B", "3"}).output("Y");
    auto &c = s.node("Constant", {}, {"k"});
    auto *v = c.add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::TENSOR);
    auto *t = v->mutable_t();
    t->set_data_type(TP::FLOAT);
    t->add_dims(3);
    for (float f : {1.0f, 2.0f, 3.0f})
      t->add_float_data(f);
    s.node("Mul", {"X", "k"}, {"Y"});
    add(s);
  }
  {
    Seed s("global_max_pool_fp16");
    s.input("X", {"N", "C", "H", "W"}, TP::FLOAT16).output("Y", TP::FLOAT16);
    s.node("GlobalMaxPool", {"X"}, {"Y"});
    add(s);
  }
  {
    // Nodes out of topological order, a shared symbol across inputs.
    Seed s("unsorted_nodes");
    s.input("X", {"B", "S"}).input("Y", {"B", "S"}).output("Z");
    s.node("Relu", {"t"}, {"Z"});
    s.node("Add", {"X", "Y"}, {"t"});
    add(s);
  }
  return seeds;
}

bool writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return (bool)out;
}

bool copyFile(const std::string &from, const std::string &to) {
  std::ifstream in(from, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return writeFile(to, bytes.str());
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Copies DIR/*.onnx into `out`; returns the count, or -1 if DIR is missing.
int copyModels(const std::string &dir, const std::string &out) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return -1;
  int count = 0;
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".onnx") == 0 &&
        copyFile(dir + "/" + name, out + "/shared_" + name))
      ++count;
  }
  closedir(d);
  return count;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string out = argv[1];
  mkdir(out.c_str(), 0755);
  struct stat st;
  if (stat(out.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "error: cannot create '%s'\n", out.c_str());
    return 1;
  }

  int generated = 0;
  for (const Seed &seed : makeSeeds()) {
    std::string bytes;
    if (!seed.model.SerializeToString(&bytes) ||
        !writeFile(out + "/gen_" + seed.name() + ".onnx", bytes)) {
      fprintf(stderr, "error: cannot write seed '%s'\n", seed.name().c_str());
      return 1;
    }
    ++generated;
  }

  std::string example =
      std::string(DYNCC_SOURCE_DIR) + "/examples/linear_relu.onnx";
  if (!copyFile(example, out + "/" + baseName(example))) {
    fprintf(stderr, "error: cannot copy '%s'\n", example.c_str());
    return 1;
  }

  const char *sharedEnv = getenv("DYNCC_SHARED_DIR");
  std::string shared = sharedEnv && *sharedEnv
                           ? std::string(sharedEnv)
                           : std::string(DYNCC_SOURCE_DIR) + "/../shared";
  int copied = copyModels(shared + "/models", out);
  if (copied <= 0) {
    const char *ci = getenv("CI");
    bool inCi = ci && std::string(ci) == "true";
    fprintf(stderr,
            "%s: no shared models in '%s/models' (set DYNCC_SHARED_DIR)\n",
            inCi ? "error" : "warning", shared.c_str());
    if (inCi)
      return 1;
    copied = 0;
  }
  printf("%d generated models, 1 example, %d shared models in %s\n", generated,
         copied, out.c_str());
  return 0;
}
