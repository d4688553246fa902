// RUN: dyncc-opt %s --split-input-file --dyncc-fuse-reductions | FileCheck %s

// Softmax in primitives is one reduce group: both reductions are backbones,
// the per-row values stay on chip.
// CHECK-LABEL: func.func @softmax(
//       CHECK:   %[[G:.+]] = dg.fusion reduce {
//  CHECK-NEXT:     dg.reduce_max {{.*}}dg.backbone
//  CHECK-NEXT:     dg.sub
//  CHECK-NEXT:     dg.exp
//  CHECK-NEXT:     dg.reduce_sum {{.*}}dg.backbone
//  CHECK-NEXT:     %[[Y:.+]] = dg.div
//  CHECK-NEXT:     dg.yield %[[Y]]
//  CHECK-NEXT:   } :
//  CHECK-NEXT:   return %[[G]]
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @softmax(%x: tensor<?x?xf32, #sym.shape<[B, L]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>> {
  %0 = dg.reduce_max %x {axes = array<i64: 1>} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x1xf32, #sym.shape<[B, 1]>>
  %1 = dg.sub %x, %0 : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x1xf32, #sym.shape<[B, 1]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
  %2 = dg.exp %1 : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x?xf32, #sym.shape<[B, L]>>
  %3 = dg.reduce_sum %2 {axes = array<i64: 1>} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x1xf32, #sym.shape<[B, 1]>>
  %4 = dg.div %2, %3 : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x1xf32, #sym.shape<[B, 1]>>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
  return %4 : tensor<?x?xf32, #sym.shape<[B, L]>>
}

// -----

// Must not fuse: a consumer over another index space ([B, L2], no equality
// with L known), and a reduction over other axes.
// CHECK-LABEL: func.func @other_spaces(
//       CHECK:   %[[G:.+]] = dg.fusion reduce {
//  CHECK-NEXT:     dg.reduce_sum
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.add %[[G]]
//       CHECK:   dg.fusion reduce {
//  CHECK-NEXT:     dg.reduce_max %{{.*}} {axes = array<i64: 0>, dg.backbone}
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
sym.symbol @L2 range [1, 512]
func.func @other_spaces(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %y: tensor<?x?xf32, #sym.shape<[B, L2]>>)
    -> (tensor<?x?xf32, #sym.shape<[B, L2]>>, tensor<1x?xf32, #sym.shape<[1, L]>>) {
  %0 = dg.reduce_sum %x {axes = array<i64: 1>} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x1xf32, #sym.shape<[B, 1]>>
  %1 = dg.add %0, %y : (tensor<?x1xf32, #sym.shape<[B, 1]>>, tensor<?x?xf32, #sym.shape<[B, L2]>>) -> tensor<?x?xf32, #sym.shape<[B, L2]>>
  %2 = dg.reduce_max %x {axes = array<i64: 0>} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<1x?xf32, #sym.shape<[1, L]>>
  return %1, %2 : tensor<?x?xf32, #sym.shape<[B, L2]>>, tensor<1x?xf32, #sym.shape<[1, L]>>
}
