// RUN: dyncc-opt %s --dyncc-group-remaining | FileCheck %s

// Every compute op ends in a group of its kind; constants stay outside.
// Matmuls, convs and reductions are their group's backbone.
// CHECK-LABEL: func.func @leftovers(
//       CHECK:   dg.constant
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul {{.*}} {dg.backbone}
//       CHECK:   dg.fusion elementwise {
//  CHECK-NEXT:     dg.relu
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.fusion data_movement {
//  CHECK-NEXT:     dg.transpose
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.fusion reduce {
//  CHECK-NEXT:     dg.reduce_sum {{.*}}dg.backbone
//  CHECK-NEXT:     dg.yield
func.func @leftovers(%x: tensor<4x8xf32>, %y: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x4xf32>, tensor<4xf32>) {
  %w = dg.constant dense<1.0> : tensor<8x16xf32>
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.relu %y : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = dg.transpose %y {perm = array<i64: 1, 0>} : tensor<4x16xf32> -> tensor<16x4xf32>
  %3 = dg.reduce_sum %y {axes = array<i64: 1>, keepdims = false} : tensor<4x16xf32> -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16x4xf32>, tensor<4xf32>
}
