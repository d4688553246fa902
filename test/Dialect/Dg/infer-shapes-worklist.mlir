// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes | FileCheck %s

// Propagation is a worklist that runs to a fixpoint: facts that sibling
// inference learns late refine ops that were inferred before them.

// The range's step is T, the length of %z. Inferred in program order, the
// range's size is not computable (a symbolic step), so it first gets a
// fresh data-dependent symbol. The add after it broadcasts [T] against [4],
// which proves T == 4; the range is inferred again with step 4 and has
// ceil(8 / 4) = 2 elements, and its fresh symbol is substituted away (no
// `sym.symbol`, data-dependent or otherwise, is left).
// CHECK-NOT: sym.symbol
// CHECK-LABEL: func.func @late_step(
//  CHECK-SAME:     %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> (tensor<2xi64>, tensor<4xf32>)
//       CHECK:   dg.range {{.*}} -> tensor<2xi64>
sym.symbol @T range [1, 64]
func.func @late_step(%z: tensor<?xf32, #sym.shape<[T]>>, %y: tensor<4xf32>)
    -> (tensor<*xi64>, tensor<*xf32>) {
  %s = dg.shape_of %z : tensor<?xf32, #sym.shape<[T]>> -> tensor<*xi64>
  %i0 = dg.constant dense<0> : tensor<i64>
  %t = dg.gather %s, %i0 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %c0 = dg.constant dense<0> : tensor<i64>
  %c8 = dg.constant dense<8> : tensor<i64>
  %r = dg.range %c0, %c8, %t : (tensor<i64>, tensor<i64>, tensor<*xi64>) -> tensor<*xi64>
  %w = dg.add %z, %y : (tensor<?xf32, #sym.shape<[T]>>, tensor<4xf32>) -> tensor<*xf32>
  return %r, %w : tensor<*xi64>, tensor<*xf32>
}

