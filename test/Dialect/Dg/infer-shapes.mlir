// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --verify-diagnostics | FileCheck %s

// Declared intermediate shapes are replaced by inferred symbolic ones.
// CHECK-LABEL: func.func @propagate(
//  CHECK-SAME:     -> tensor<?x32xf32, #sym.shape<[B, 32]>>
//       CHECK:   dg.matmul {{.*}} -> tensor<?x32xf32, #sym.shape<[B, 32]>>
//       CHECK:   dg.add {{.*}} -> tensor<?x32xf32, #sym.shape<[B, 32]>>
//       CHECK:   dg.relu {{.*}} -> tensor<?x32xf32, #sym.shape<[B, 32]>>
sym.symbol @B range [1, 8192]
func.func @propagate(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<?x?xf32> {
  %w = dg.constant dense<1.0> : tensor<64x32xf32>
  %b = dg.constant dense<0.5> : tensor<32xf32>
  %0 = dg.matmul %x, %w : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x32xf32>) -> tensor<?x?xf32>
  %1 = dg.add %0, %b : (tensor<?x?xf32>, tensor<32xf32>) -> tensor<?x?xf32>
  %2 = dg.relu %1 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// A matmul equates the contraction dims: symbol K is substituted by M's
// partner N everywhere (alphabetically first survives), ranges intersect.
// CHECK-LABEL: sym.symbol @K range [2, 100]
//   CHECK-NOT: sym.symbol @N
//       CHECK: func.func @unify(%{{.*}}: tensor<?x?xf32, #sym.shape<[M, K]>>,
//  CHECK-SAME:     %{{.*}}: tensor<?x8xf32, #sym.shape<[K, 8]>>)
sym.symbol @M range [1, 64]
sym.symbol @K range [1, 100]
sym.symbol @N range [2, 4096]
func.func @unify(%a: tensor<?x?xf32, #sym.shape<[M, K]>>, %b: tensor<?x8xf32, #sym.shape<[N, 8]>>) -> tensor<?x?xf32> {
  %0 = dg.matmul %a, %b : (tensor<?x?xf32, #sym.shape<[M, K]>>, tensor<?x8xf32, #sym.shape<[N, 8]>>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A symbol equal to a constant is specialized away.
// CHECK-NOT: sym.symbol @K
// CHECK-LABEL: func.func @specialize(%{{.*}}: tensor<4x16xf32>
sym.symbol @K range [1, 100]
func.func @specialize(%a: tensor<4x?xf32, #sym.shape<[4, K]>>, %b: tensor<16x8xf32>) -> tensor<?x?xf32> {
  %0 = dg.matmul %a, %b : (tensor<4x?xf32, #sym.shape<[4, K]>>, tensor<16x8xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// ... but not to a constant outside its range: the error names the op, both
// expressions and where the range came from.
sym.symbol @K range [1, 100]
func.func @out_of_range(%a: tensor<4x?xf32, #sym.shape<[4, K]>>, %b: tensor<160x8xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'dg.matmul' op requires the contraction dimensions to be equal, but they are K and 160, which cannot be equal: 'K' is in [1, 100] (from sym.symbol @K)}}
  %0 = dg.matmul %a, %b : (tensor<4x?xf32, #sym.shape<[4, K]>>, tensor<160x8xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Equalities that are not a substitution are kept for the run-time.
// CHECK-LABEL: sym.constraint <2*A> equals <B*C> "the contraction dimensions of dg.matmul"
sym.symbol @A range [1, 64]
sym.symbol @B range [1, 64]
sym.symbol @C range [1, 64]
func.func @deferred(%a: tensor<4x?xf32, #sym.shape<[4, 2*A]>>, %b: tensor<?x8xf32, #sym.shape<[B*C, 8]>>) -> tensor<?x?xf32> {
  %0 = dg.matmul %a, %b : (tensor<4x?xf32, #sym.shape<[4, 2*A]>>, tensor<?x8xf32, #sym.shape<[B*C, 8]>>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// An anonymous dynamic input dimension is an error: no dimension is `?`.
// expected-error @+1 {{'func.func' op argument 0 has a dynamic dimension with no symbol: 'tensor<?x4xf32>'}}
func.func @anonymous(%a: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %0 = dg.relu %a : tensor<?x4xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
