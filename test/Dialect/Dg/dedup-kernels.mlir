// RUN: dyncc-opt %s --dyncc-outline-groups --dyncc-assign-tile-config --dyncc-dedup-kernels | FileCheck %s
// RUN: dyncc-opt %s --dyncc-outline-groups '--dyncc-assign-tile-config=override={gemm=block 16x16 thread 2x2}' --dyncc-dedup-kernels | FileCheck %s
// RUN: dyncc-opt %s --dyncc-outline-groups --dyncc-assign-tile-config | FileCheck %s --check-prefix=NODEDUP

// The same GEMM group in two layers (weights are inputs, so they may
// differ) is one kernel called twice; a group that differs only in its
// epilogue (tanh, not relu) keeps its own kernel.
// CHECK-LABEL: func.func @main(
//       CHECK:   %[[A:.+]] = dg.dispatch @g0_gemm ["B"](%{{.+}}, %{{.+}})
//       CHECK:   %[[B:.+]] = dg.dispatch @g0_gemm ["B"](%[[A]], %{{.+}})
//       CHECK:   dg.dispatch @g2_gemm ["B"](%[[B]], %{{.+}})
//       CHECK: func.func @g0_gemm(
//   CHECK-NOT: func.func @g1_gemm(
//       CHECK: func.func @g2_gemm(
//       CHECK:   math.tanh

// NODEDUP: dg.dispatch @g0_gemm
// NODEDUP: dg.dispatch @g1_gemm
// NODEDUP: dg.dispatch @g2_gemm
sym.symbol @B range [1, 8192]
func.func @main(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>> {
  %g0 = dg.fusion gemm {
    %0 = dg.matmul %x, %w0 {dg.backbone} : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    %1 = dg.relu %0 : tensor<?x64xf32, #sym.shape<[B, 64]>> -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    dg.yield %1 : tensor<?x64xf32, #sym.shape<[B, 64]>>
  } : tensor<?x64xf32, #sym.shape<[B, 64]>>
  %g1 = dg.fusion gemm {
    %0 = dg.matmul %g0, %w1 {dg.backbone} : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    %1 = dg.relu %0 : tensor<?x64xf32, #sym.shape<[B, 64]>> -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    dg.yield %1 : tensor<?x64xf32, #sym.shape<[B, 64]>>
  } : tensor<?x64xf32, #sym.shape<[B, 64]>>
  %g2 = dg.fusion gemm {
    %0 = dg.matmul %g1, %w2 {dg.backbone} : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    %1 = dg.tanh %0 : tensor<?x64xf32, #sym.shape<[B, 64]>> -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    dg.yield %1 : tensor<?x64xf32, #sym.shape<[B, 64]>>
  } : tensor<?x64xf32, #sym.shape<[B, 64]>>
  return %g2 : tensor<?x64xf32, #sym.shape<[B, 64]>>
}
