// RUN: dyncc-opt %s --split-input-file --dyncc-outline-groups | FileCheck %s

// A GEMM group becomes a kernel on plain tensors in destination-passing
// style: symbols first, then inputs, then the destination. The epilogue
// reads the matmul result through its output operand (in place).
// CHECK-LABEL: func.func @main(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x64xf32, #sym.shape<[B, 64]>>
//  CHECK-SAME:     %[[BIAS:[a-zA-Z0-9]+]]: tensor<32xf32>
//       CHECK:   %[[D:.+]] = dg.dispatch @g0_gemm ["B"](%[[X]], %{{.+}}, %[[BIAS]])
//       CHECK:   return %[[D]]
//       CHECK: func.func @g0_gemm(%[[SB:.+]]: index, %[[KX:.+]]: tensor<?x64xf32>, %[[KW:.+]]: tensor<64x32xf32>, %[[KB:.+]]: tensor<32xf32>, %[[OUT:.+]]: tensor<?x32xf32>) -> tensor<?x32xf32>
//  CHECK-SAME:     dyncc.kernel, dyncc.kind = "gemm"
//       CHECK:   %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]] : tensor<?x32xf32>)
//       CHECK:   %[[M:.+]] = linalg.matmul ins(%[[KX]], %[[KW]] : {{.*}}) outs(%[[F]] : tensor<?x32xf32>)
//       CHECK:   %[[A:.+]] = linalg.generic {{.*}} ins(%[[KB]] : tensor<32xf32>) outs(%[[M]] : tensor<?x32xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[R:.+]] = linalg.generic {{.*}} outs(%[[A]] : tensor<?x32xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   return %[[R]]
sym.symbol @B range [1, 8192]
func.func @main(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>, %b: tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>> {
  %w = dg.constant dense<1.0> : tensor<64x32xf32>
  %g = dg.fusion gemm {
    %0 = dg.matmul %x, %w {dg.backbone} : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
    %1 = dg.add %0, %b : (tensor<?x32xf32, #sym.shape<[B, 32]>>, tensor<32xf32>) -> tensor<?x32xf32, #sym.shape<[B, 32]>>
    %2 = dg.relu %1 : tensor<?x32xf32, #sym.shape<[B, 32]>> -> tensor<?x32xf32, #sym.shape<[B, 32]>>
    dg.yield %2 : tensor<?x32xf32, #sym.shape<[B, 32]>>
  } : tensor<?x32xf32, #sym.shape<[B, 32]>>
  return %g : tensor<?x32xf32, #sym.shape<[B, 32]>>
}

// -----

// Intermediates that are not chained in place get a tensor.empty sized from
// the symbol arguments; broadcast operands read index 0.
// CHECK-LABEL: func.func @g0_elementwise(
//  CHECK-SAME:     %[[SB:[a-zA-Z0-9]+]]: index, %[[SL:[a-zA-Z0-9]+]]: index
//       CHECK:   %[[E:.+]] = tensor.empty(%[[SB]], %[[SL]]) : tensor<?x?xf32>
//       CHECK:   linalg.generic {{.*}} outs(%[[E]] : tensor<?x?xf32>)
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 64]
func.func @two_outputs(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %y: tensor<1x?xf32, #sym.shape<[1, L]>>)
    -> (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L]>>) {
  %g:2 = dg.fusion elementwise {
    %0 = dg.add %x, %y : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<1x?xf32, #sym.shape<[1, L]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
    %1 = dg.relu %0 : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x?xf32, #sym.shape<[B, L]>>
    %2 = dg.add %0, %1 : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
    dg.yield %1, %2 : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L]>>
  } : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L]>>
  return %g#0, %g#1 : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xf32, #sym.shape<[B, L]>>
}

// -----

// Two same-shaped operands of one elementwise op: only one of them (the
// later) computes in the op's slot; the other gets its own temporary, so no
// value is overwritten while it is still read.
// CHECK-LABEL: func.func @g0_elementwise(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?xf32>, %[[OUT:[a-zA-Z0-9]+]]: tensor<?xf32>
//       CHECK:   %[[E:.+]] = tensor.empty
//       CHECK:   %[[T:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?xf32>) outs(%[[E]] : tensor<?xf32>)
//       CHECK:     math.tanh
//       CHECK:   %[[S:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?xf32>) outs(%[[OUT]] : tensor<?xf32>)
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}} ins(%[[T]] : tensor<?xf32>) outs(%[[S]] : tensor<?xf32>)
//       CHECK:     arith.subf
sym.symbol @N range [1, 64]
func.func @one_slot(%x: tensor<?xf32, #sym.shape<[N]>>) -> tensor<?xf32, #sym.shape<[N]>> {
  %g = dg.fusion elementwise {
    %0 = dg.tanh %x : tensor<?xf32, #sym.shape<[N]>> -> tensor<?xf32, #sym.shape<[N]>>
    %1 = dg.exp %x : tensor<?xf32, #sym.shape<[N]>> -> tensor<?xf32, #sym.shape<[N]>>
    %2 = dg.sub %0, %1 : (tensor<?xf32, #sym.shape<[N]>>, tensor<?xf32, #sym.shape<[N]>>) -> tensor<?xf32, #sym.shape<[N]>>
    dg.yield %2 : tensor<?xf32, #sym.shape<[N]>>
  } : tensor<?xf32, #sym.shape<[N]>>
  return %g : tensor<?xf32, #sym.shape<[N]>>
}

// -----

// f16 products accumulate in f32 (as mma.sync does); the sum is rounded to
// f16 into the destination once.
// CHECK-LABEL: func.func @g0_gemm(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x64xf16>, %[[W:[a-zA-Z0-9]+]]: tensor<64x32xf16>, %[[OUT:[a-zA-Z0-9]+]]: tensor<?x32xf16>
//       CHECK:   %[[ACC:.+]] = tensor.empty({{.*}}) : tensor<?x32xf32>
//       CHECK:   %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[ACC]] : tensor<?x32xf32>)
//       CHECK:   %[[M:.+]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<?x64xf16>, tensor<64x32xf16>) outs(%[[Z]] : tensor<?x32xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[M]] : tensor<?x32xf32>) outs(%[[OUT]] : tensor<?x32xf16>)
//       CHECK:     arith.truncf
sym.symbol @B range [1, 64]
func.func @f16_gemm(%x: tensor<?x64xf16, #sym.shape<[B, 64]>>, %w: tensor<64x32xf16>) -> tensor<?x32xf16, #sym.shape<[B, 32]>> {
  %g = dg.fusion gemm {
    %0 = dg.matmul %x, %w {dg.backbone} : (tensor<?x64xf16, #sym.shape<[B, 64]>>, tensor<64x32xf16>) -> tensor<?x32xf16, #sym.shape<[B, 32]>>
    dg.yield %0 : tensor<?x32xf16, #sym.shape<[B, 32]>>
  } : tensor<?x32xf16, #sym.shape<[B, 32]>>
  return %g : tensor<?x32xf16, #sym.shape<[B, 32]>>
}
