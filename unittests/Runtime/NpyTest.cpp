//===- NpyTest.cpp - Tests of .npy reading and writing ----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "dyncc/Runtime/Npy.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace dyncc::runtime;
using namespace dyncc::test;

namespace {

/// A hand-made .npy (what NumPy writes) with the given header dict.
std::string makeNpy(const std::string &dict, const std::string &data,
                    int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  size_t length = header.size();
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string decodeError(const std::string &bytes) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(decodeNpy(bytes.data(), bytes.size(), "x.npy", array, error));
  EXPECT_EQ(error.rfind("x.npy: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  return error;
}

TEST(NpyTest, RoundTripEveryDType) {
  TempDir dir;
  for (size_t t = 0; t < kNumDTypes; ++t) {
    DType type = static_cast<DType>(t);
    SCOPED_TRACE(dtypeName(type));
    std::vector<int64_t> shape = {3, 5};
    std::string data(15 * dtypeSize(type), '\0');
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<char>(type == DType::Bool ? i % 2 : i * 31 + t);
    std::string path = dir.file(std::string(dtypeName(type)) + ".npy");
    std::string error;
    ASSERT_TRUE(writeNpy(path, type, shape, data.data(), data.size(), error))
        << error;
    std::string bytes = readFile(path);
    EXPECT_EQ(bytes, encodeNpy(type, shape, data.data(), data.size()));
    // NumPy aligns the data to 64 bytes.
    EXPECT_EQ((bytes.size() - data.size()) % 64, 0u);
    EXPECT_NE(bytes.find(std::string("'descr': '") + npyDescr(type) + "'"),
              std::string::npos);
    NpyArray array;
    ASSERT_TRUE(readNpy(path, array, error)) << error;
    // bf16 travels as its raw bits.
    EXPECT_EQ(array.dtype, type == DType::BF16 ? DType::U16 : type);
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(std::string(array.data.begin(), array.data.end()), data);
  }
}

TEST(NpyTest, ShapesOfAnyRank) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {7}, {0}, {2, 0, 3}, {1, 1, 1, 1, 2}}) {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    std::vector<float> data(count, 1.5f);
    std::string bytes = encodeNpy(DType::F32, shape, data.data(), count * 4);
    NpyArray array;
    std::string error;
    ASSERT_TRUE(decodeNpy(bytes.data(), bytes.size(), "x.npy", array, error))
        << error;
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(array.data.size(), static_cast<size_t>(count * 4));
  }
  EXPECT_NE(encodeNpy(DType::F32, {7}, nullptr, 0).find("'shape': (7,)"),
            std::string::npos);
  EXPECT_NE(encodeNpy(DType::F32, {}, nullptr, 0).find("'shape': ()"),
            std::string::npos);
}

TEST(NpyTest, ReadsWhatNumPyWrites) {
  std::string data(24, '\0');
  NpyArray array;
  std::string error;
  std::string v1 = makeNpy(
      "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", data);
  ASSERT_TRUE(decodeNpy(v1.data(), v1.size(), "a.npy", array, error)) << error;
  EXPECT_EQ(array.dtype, DType::I64);
  std::string v2 = makeNpy(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data, 2);
  ASSERT_TRUE(decodeNpy(v2.data(), v2.size(), "b.npy", array, error)) << error;
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  std::string v3 = makeNpy(
      "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (4, 6)}", data,
      3);
  ASSERT_TRUE(decodeNpy(v3.data(), v3.size(), "c.npy", array, error)) << error;
  EXPECT_EQ(array.dtype, DType::U8);
  std::string bools =
      makeNpy("{'shape': (24,), 'fortran_order': False, 'descr': '|b1'}", data);
  ASSERT_TRUE(decodeNpy(bools.data(), bools.size(), "d.npy", array, error));
  EXPECT_EQ(array.dtype, DType::Bool);
  std::string fortranScalar =
      makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
              std::string(8, '\0'));
  ASSERT_TRUE(decodeNpy(fortranScalar.data(), fortranScalar.size(), "e.npy",
                        array, error));
  EXPECT_TRUE(array.shape.empty());
}

TEST(NpyTest, RejectsMalformedFiles) {
  std::string data(24, '\0');
  const std::string good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(decodeError("hello"), "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(decodeError(makeNpy(good, data).substr(0, 40)),
            "x.npy: truncated header");
  EXPECT_EQ(decodeError(makeNpy(good, data.substr(0, 20))),
            "x.npy: expected 24 bytes of data, found 20");
  EXPECT_EQ(decodeError(makeNpy(good, data + "x")),
            "x.npy: expected 24 bytes of data, found 25");
  EXPECT_EQ(decodeError(makeNpy(good, data, 4)),
            "x.npy: unsupported .npy version 4.0");
  EXPECT_EQ(
      decodeError(makeNpy(
          "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data)),
      "x.npy: Fortran-order arrays are not supported");
  EXPECT_EQ(
      decodeError(makeNpy(
          "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data)),
      "x.npy: big-endian data ('>f4') is not supported");
  EXPECT_EQ(
      decodeError(makeNpy(
          "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", data)),
      "x.npy: unsupported dtype '<c8'");
  EXPECT_EQ(
      decodeError(makeNpy(
          "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }",
          data)),
      "x.npy: malformed header: structured dtypes are not supported");
  EXPECT_EQ(decodeError(makeNpy("{'descr': '<f4', 'shape': (2, 3), }", data)),
            "x.npy: malformed header: header lacks 'fortran_order'");
  EXPECT_EQ(decodeError(makeNpy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }",
                data)),
            "x.npy: malformed header: expected a dimension");
  EXPECT_EQ(
      decodeError(makeNpy(
          "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", data)),
      "x.npy: malformed header: expected True or False");
  EXPECT_EQ(
      decodeError(makeNpy(
          "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
          data)),
      "x.npy: malformed header: unexpected key 'x'");
  EXPECT_EQ(decodeError(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (99999999999999, 99999999999999), }",
                                data)),
            "x.npy: array size overflows");
  EXPECT_EQ(decodeError(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (99999999999999999999,), }",
                                data)),
            "x.npy: malformed header: dimension too large");
  std::string huge = makeNpy(good, data);
  huge[8] = static_cast<char>(0xff);
  huge[9] = static_cast<char>(0xff);
  EXPECT_EQ(decodeError(huge), "x.npy: truncated header");
}

TEST(NpyTest, FileErrors) {
  TempDir dir;
  NpyArray array;
  std::string error;
  EXPECT_FALSE(readNpy(dir.file("missing.npy"), array, error));
  EXPECT_EQ(error, dir.file("missing.npy") +
                       ": cannot open: No such file or directory");
  float value = 1.0f;
  EXPECT_FALSE(
      writeNpy(dir.file("no/dir.npy"), DType::F32, {1}, &value, 4, error));
  EXPECT_EQ(error.rfind(dir.file("no/dir.npy") + ": cannot create: ", 0), 0u);
}

} // namespace
