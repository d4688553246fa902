// RUN: dyncc-opt %s --split-input-file --dyncc-fuse-gemm-epilogue | FileCheck %s

// Bias add and ReLU join the matmul's group.
// CHECK-LABEL: func.func @epilogue(
//       CHECK:   %[[W:.+]] = dg.constant
//       CHECK:   %[[B:.+]] = dg.constant
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     %[[M:.+]] = dg.matmul %{{.+}}, %[[W]] {dg.backbone}
//  CHECK-NEXT:     %[[A:.+]] = dg.add %[[M]], %[[B]]
//  CHECK-NEXT:     %[[R:.+]] = dg.relu %[[A]]
//  CHECK-NEXT:     dg.yield %[[R]]
//       CHECK:   return %[[G]]
sym.symbol @B range [1, 8192]
func.func @epilogue(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<?x32xf32, #sym.shape<[B, 32]>> {
  %w = dg.constant dense<1.0> : tensor<64x32xf32>
  %b = dg.constant dense<0.5> : tensor<32xf32>
  %0 = dg.matmul %x, %w : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %1 = dg.add %0, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %2 = dg.relu %1 : tensor<?x32xf32, #sym.shape<[B, 32]>> -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  return %2 : tensor<?x32xf32, #sym.shape<[B, 32]>>
}

// -----

// Must not fuse: the consumer's index space [B, L2] is not provably the
// backbone's [B, L] (no equality known), even though both are dynamic.
// CHECK-LABEL: func.func @different_index_space(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.add %[[G]]
//   CHECK-NOT:   dg.fusion
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 64]
sym.symbol @L2 range [1, 64]
func.func @different_index_space(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>, %w: tensor<8x?xf32, #sym.shape<[8, L]>>,
                                 %y: tensor<?x?xf32, #sym.shape<[B, L2]>>) -> tensor<?x?xf32, #sym.shape<[B, L2]>> {
  %0 = dg.matmul %x, %w : (tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<8x?xf32, #sym.shape<[8, L]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
  %1 = dg.add %0, %y : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L2]>>) -> tensor<?x?xf32, #sym.shape<[B, L2]>>
  return %1 : tensor<?x?xf32, #sym.shape<[B, L2]>>
}

// -----

// Must not fuse: the matmul result has a second user, so the chain stops
// and the result leaves the group.
// CHECK-LABEL: func.func @two_users(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     %[[M:.+]] = dg.matmul
//  CHECK-NEXT:     dg.yield %[[M]]
//       CHECK:   dg.relu %[[G]]
//       CHECK:   dg.add %[[G]]
func.func @two_users(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.relu %0 : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = dg.add %0, %0 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Must not fuse: a side operand defined after the backbone.
// CHECK-LABEL: func.func @late_operand(
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.relu
//       CHECK:   dg.add
func.func @late_operand(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = dg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dg.relu %y : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = dg.add %0, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
