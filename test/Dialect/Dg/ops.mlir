// RUN: dyncc-opt %s --split-input-file | dyncc-opt | FileCheck %s

// CHECK-LABEL: func.func @graph(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x64xf32, #sym.shape<[B, 64]>>
//       CHECK:   %[[W:.+]] = dg.constant dense<1.000000e+00> : tensor<64x32xf32>
//       CHECK:   %[[M:.+]] = dg.matmul %[[X]], %[[W]]
//       CHECK:   %[[A:.+]] = dg.add %[[M]], %{{.+}}
//       CHECK:   dg.relu %[[A]]
sym.symbol @B range [1, 8192]
func.func @graph(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<?x32xf32, #sym.shape<[B, 32]>> {
  %w = dg.constant dense<1.0> : tensor<64x32xf32>
  %b = dg.constant dense<0.5> : tensor<32xf32>
  %0 = dg.matmul %x, %w : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %1 = dg.add %0, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  %2 = dg.relu %1 : tensor<?x32xf32, #sym.shape<[B, 32]>> -> tensor<?x32xf32, #sym.shape<[B, 32]>>
  return %2 : tensor<?x32xf32, #sym.shape<[B, 32]>>
}

// -----

// CHECK-LABEL: func.func @group(
//       CHECK:   %[[G:.+]] = dg.fusion gemm {
//       CHECK:     dg.matmul {{.*}} {dg.backbone}
//       CHECK:     dg.yield
//       CHECK:   } : tensor<4x8xf32>
func.func @group(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %0 = dg.fusion gemm {
    %1 = dg.matmul %x, %w {dg.backbone} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    dg.yield %1 : tensor<4x8xf32>
  } : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
