// RUN: dyncc-opt %s --dyncc-fuse-gemm-epilogue --dyncc-group-remaining | FileCheck %s

// Every compute op ends in a group; constants stay outside.
// CHECK-LABEL: func.func @leftovers(
//       CHECK:   dg.constant
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//       CHECK:   %[[R:.+]] = dg.fusion elementwise {
//  CHECK-NEXT:     dg.relu
//  CHECK-NEXT:     dg.yield
//       CHECK:   %[[A:.+]] = dg.fusion elementwise {
//  CHECK-NEXT:     dg.add %[[G]], %[[R]]
//   CHECK-NOT:   dg.relu
//       CHECK:   return %[[A]]
func.func @leftovers(%x: tensor<4x8xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = dg.constant dense<1.0> : tensor<8x16xf32>
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.relu %y : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = dg.add %0, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
