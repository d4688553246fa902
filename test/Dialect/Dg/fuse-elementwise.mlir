// RUN: dyncc-opt %s --dyncc-fuse-elementwise | FileCheck %s

// Connected elementwise ops over one index space become one group; an op
// over another space ([B, 1]) starts its own.
// CHECK-LABEL: func.func @chains(
//       CHECK:   dg.fusion elementwise {
//  CHECK-NEXT:     dg.relu
//  CHECK-NEXT:     dg.mul
//  CHECK-NEXT:     dg.tanh
//  CHECK-NEXT:     dg.yield
//       CHECK:   dg.fusion elementwise {
//  CHECK-NEXT:     dg.exp
//  CHECK-NEXT:     dg.yield
sym.symbol @B range [1, 64]
func.func @chains(%x: tensor<?x8xf32, #sym.shape<[B, 8]>>, %s: tensor<?x1xf32, #sym.shape<[B, 1]>>)
    -> (tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<?x1xf32, #sym.shape<[B, 1]>>) {
  %0 = dg.relu %x : tensor<?x8xf32, #sym.shape<[B, 8]>> -> tensor<?x8xf32, #sym.shape<[B, 8]>>
  %1 = dg.mul %0, %x : (tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<?x8xf32, #sym.shape<[B, 8]>>) -> tensor<?x8xf32, #sym.shape<[B, 8]>>
  %2 = dg.tanh %1 : tensor<?x8xf32, #sym.shape<[B, 8]>> -> tensor<?x8xf32, #sym.shape<[B, 8]>>
  %3 = dg.exp %s : tensor<?x1xf32, #sym.shape<[B, 1]>> -> tensor<?x1xf32, #sym.shape<[B, 1]>>
  return %2, %3 : tensor<?x8xf32, #sym.shape<[B, 8]>>, tensor<?x1xf32, #sym.shape<[B, 1]>>
}
