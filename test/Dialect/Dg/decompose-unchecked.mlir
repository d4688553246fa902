// RUN: timeout 20 dyncc-opt %s --split-input-file --dyncc-decompose | FileCheck %s

// The BatchNorm fold's own guards, on IR that shape propagation has not
// checked (its shape function refuses these statistics first in a compile).

// A mean of 3 values for 2 channels: the fold reads no statistic whose type
// has the wrong length, so the conv and the BN stay. (It read the first two
// values and folded.)
// CHECK-LABEL: func.func @mean_length(
//       CHECK:   dg.conv
//       CHECK:   dg.batch_norm
func.func @mean_length(%x: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
  %w = dg.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %p = dg.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %mean = dg.constant dense<[0.5, 0.5, 0.5]> : tensor<3xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32> -> tensor<*xf32>
  %y = dg.batch_norm %c, %p, %p, %mean, %p : (tensor<*xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// A conv weight that is a splat of 2^30 values: more than the fold expands
// (2^24), so the conv and the BN stay.
// CHECK-LABEL: func.func @huge_splat_weight(
//       CHECK:   dg.conv
//       CHECK:   dg.batch_norm
func.func @huge_splat_weight(%x: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
  %w = dg.constant dense<1.0> : tensor<2x1x32768x16384xf32>
  %p = dg.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %c = dg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32>, tensor<2x1x32768x16384xf32> -> tensor<*xf32>
  %y = dg.batch_norm %c, %p, %p, %p, %p : (tensor<*xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}
