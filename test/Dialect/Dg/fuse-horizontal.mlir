// RUN: dyncc-opt %s --split-input-file --dyncc-fuse-gemm --dyncc-fuse-horizontal | FileCheck %s

// Q, K and V projections of the same input merge into one GEMM group with
// three backbones and three results; the input is read once.
// CHECK-LABEL: func.func @qkv(
//       CHECK:   %[[G:.+]]:3 = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul {{.*}}dg.backbone
//  CHECK-NEXT:     dg.add
//  CHECK-NEXT:     dg.matmul {{.*}}dg.backbone
//  CHECK-NEXT:     dg.add
//  CHECK-NEXT:     dg.matmul {{.*}}dg.backbone
//  CHECK-NEXT:     dg.add
//  CHECK-NEXT:     dg.yield
//   CHECK-NOT:   dg.fusion
sym.symbol @B range [1, 64]
func.func @qkv(%x: tensor<?x32xf32, #sym.shape<[B, 32]>>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>,
               %wv: tensor<32x32xf32>, %b: tensor<32xf32>)
    -> (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<?x32xf32, #sym.shape<[B, 32]>>) {
  %q = dg.matmul %x, %wq : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %q1 = dg.add %q, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %k = dg.matmul %x, %wk : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %k1 = dg.add %k, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %v = dg.matmul %x, %wv : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %v1 = dg.add %v, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  return %q1, %k1, %v1 : tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<?x32xf32, #sym.shape<[B, 32]>>
}

// -----

// Must not merge: one group reads the other's result (same left operand,
// but the first matmul's epilogue adds the second product), so they stay
// apart.
// CHECK-LABEL: func.func @dependent(
//       CHECK:   %[[G1:.+]] = dg.fusion gemm {
//  CHECK-NEXT:     dg.matmul %{{.*}}, %arg2
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.fusion gemm {
//  CHECK-NEXT:     %[[M:.+]] = dg.matmul %{{.*}}, %arg1
//  CHECK-NEXT:     dg.add %[[G1]], %[[M]]
func.func @dependent(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = dg.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = dg.matmul %x, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = dg.add %1, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
