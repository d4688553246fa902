// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes | FileCheck %s

// Symbolic shape propagation through the elementwise ops: unary ops keep
// their operand's shape, binary ops and select broadcast the numpy way, and
// a broadcast between two expressions records their equality.

// Every unary op gives its operand's shape, whatever the element type.
// CHECK-LABEL: func.func @unary_chain(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x?xf32, #sym.shape<[B, L]>>,
//  CHECK-SAME:     %[[C:[a-zA-Z0-9]+]]: tensor<?x?xi1, #sym.shape<[B, L]>>)
//  CHECK-SAME:     -> (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x?xi32, #sym.shape<[B, L]>>, tensor<?x?xi1, #sym.shape<[B, L]>>)
//       CHECK:   %[[NEG:.+]] = dg.neg %[[X]] : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[ABS:.+]] = dg.abs %[[NEG]] : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[EXP:.+]] = dg.exp %[[ABS]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[LOG:.+]] = dg.log %[[EXP]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[SQRT:.+]] = dg.sqrt %[[LOG]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[RCP:.+]] = dg.reciprocal %[[SQRT]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[ERF:.+]] = dg.erf %[[RCP]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[TANH:.+]] = dg.tanh %[[ERF]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[SIG:.+]] = dg.sigmoid %[[TANH]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[RELU:.+]] = dg.relu %[[SIG]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[LEAKY:.+]] = dg.leaky_relu %[[RELU]] {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[CUMSUM:.+]] = dg.cumsum %[[LEAKY]] {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[CLIP0:.+]] = dg.clip %[[CUMSUM]] : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[LO:.+]] = dg.constant dense<0.000000e+00> : tensor<f32>
//       CHECK:   %[[HI:.+]] = dg.constant dense<6.000000e+00> : tensor<f32>
//       CHECK:   %[[CLIP:.+]] = dg.clip %[[CLIP0]] min %[[LO]] : tensor<f32> max %[[HI]] : tensor<f32> : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[TRILU:.+]] = dg.trilu %[[CLIP]] {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   %[[CAST:.+]] = dg.cast %[[TRILU]] : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<?x?xi32, #sym.shape<[B, L]>>
//       CHECK:   %[[NOT:.+]] = dg.not %[[C]] : tensor<?x?xi1, #sym.shape<[B, L]>> -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   return %[[TRILU]], %[[CAST]], %[[NOT]]
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @unary_chain(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %c: tensor<?x?xi1, #sym.shape<[B, L]>>)
    -> (tensor<*xf32>, tensor<*xi32>, tensor<*xi1>) {
  %0 = dg.neg %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xf32>
  %1 = dg.abs %0 : tensor<*xf32> -> tensor<*xf32>
  %2 = dg.exp %1 : tensor<*xf32> -> tensor<*xf32>
  %3 = dg.log %2 : tensor<*xf32> -> tensor<*xf32>
  %4 = dg.sqrt %3 : tensor<*xf32> -> tensor<*xf32>
  %5 = dg.reciprocal %4 : tensor<*xf32> -> tensor<*xf32>
  %6 = dg.erf %5 : tensor<*xf32> -> tensor<*xf32>
  %7 = dg.tanh %6 : tensor<*xf32> -> tensor<*xf32>
  %8 = dg.sigmoid %7 : tensor<*xf32> -> tensor<*xf32>
  %9 = dg.relu %8 : tensor<*xf32> -> tensor<*xf32>
  %10 = dg.leaky_relu %9 {alpha = 0.1 : f32} : tensor<*xf32> -> tensor<*xf32>
  %11 = dg.cumsum %10 {axis = -1 : i64, reverse = true} : tensor<*xf32> -> tensor<*xf32>
  %12 = dg.clip %11 : tensor<*xf32> -> tensor<*xf32>
  %lo = dg.constant dense<0.0> : tensor<f32>
  %hi = dg.constant dense<6.0> : tensor<f32>
  %13 = dg.clip %12 min %lo : tensor<f32> max %hi : tensor<f32> : tensor<*xf32> -> tensor<*xf32>
  %14 = dg.trilu %13 {upper = false} : tensor<*xf32> -> tensor<*xf32>
  %15 = dg.cast %14 : tensor<*xf32> -> tensor<*xi32>
  %16 = dg.not %c : tensor<?x?xi1, #sym.shape<[B, L]>> -> tensor<*xi1>
  return %14, %15, %16 : tensor<*xf32>, tensor<*xi32>, tensor<*xi1>
}

// -----

// Shapes align at the trailing dimension; size 1 and missing leading
// dimensions stretch.
// CHECK-LABEL: func.func @broadcast_ranks(
//  CHECK-SAME:     -> (tensor<?x64xf32, #sym.shape<[L, 64]>>, tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>)
//       CHECK:   %[[ADD:.+]] = dg.add {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   %[[SUB:.+]] = dg.sub {{.*}} : (tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<64xf32>) -> tensor<?x64xf32, #sym.shape<[L, 64]>>
//       CHECK:   %[[MUL:.+]] = dg.mul {{.*}} : (tensor<f32>, tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>) -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   %[[DIV:.+]] = dg.div %[[MUL]], %[[SUB]] : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<?x64xf32, #sym.shape<[L, 64]>>) -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   %[[POW:.+]] = dg.pow %[[DIV]], {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   %[[MIN:.+]] = dg.min %[[POW]], {{.*}} -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   %[[MAX:.+]] = dg.max %[[MIN]], {{.*}} : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<?x1xf32, #sym.shape<[L, 1]>>) -> tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>
//       CHECK:   return %[[SUB]], %[[DIV]], %[[MAX]]
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @broadcast_ranks(%x: tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, %b: tensor<64xf32>,
                           %col: tensor<?x1xf32, #sym.shape<[L, 1]>>, %s: tensor<f32>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.add %x, %b : (tensor<?x?x64xf32, #sym.shape<[B, L, 64]>>, tensor<64xf32>) -> tensor<*xf32>
  %1 = dg.sub %col, %b : (tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<64xf32>) -> tensor<*xf32>
  %2 = dg.mul %s, %0 : (tensor<f32>, tensor<*xf32>) -> tensor<*xf32>
  %3 = dg.div %2, %1 : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %4 = dg.pow %3, %s : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  %5 = dg.min %4, %b : (tensor<*xf32>, tensor<64xf32>) -> tensor<*xf32>
  %6 = dg.max %5, %col : (tensor<*xf32>, tensor<?x1xf32, #sym.shape<[L, 1]>>) -> tensor<*xf32>
  return %1, %3, %6 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Comparisons and logic give i1 with the broadcast shape: [B, 1] against
// [L] is [B, L].
// CHECK-LABEL: func.func @compare(
//       CHECK:   dg.equal {{.*}} -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   dg.less {{.*}} -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   dg.greater {{.*}} -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   dg.less_equal {{.*}} -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   dg.greater_equal {{.*}} -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   dg.and {{.*}} : (tensor<?x?xi1, #sym.shape<[B, L]>>, tensor<?x?xi1, #sym.shape<[B, L]>>) -> tensor<?x?xi1, #sym.shape<[B, L]>>
//       CHECK:   dg.or {{.*}} : (tensor<?x?xi1, #sym.shape<[B, L]>>, tensor<?x?xi1, #sym.shape<[B, L]>>) -> tensor<?x?xi1, #sym.shape<[B, L]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @compare(%x: tensor<?x1xf32, #sym.shape<[B, 1]>>, %y: tensor<?xf32, #sym.shape<[L]>>) -> tensor<*xi1> {
  %0 = dg.equal %x, %y : (tensor<?x1xf32, #sym.shape<[B, 1]>>, tensor<?xf32, #sym.shape<[L]>>) -> tensor<*xi1>
  %1 = dg.less %x, %y : (tensor<?x1xf32, #sym.shape<[B, 1]>>, tensor<?xf32, #sym.shape<[L]>>) -> tensor<*xi1>
  %2 = dg.greater %x, %y : (tensor<?x1xf32, #sym.shape<[B, 1]>>, tensor<?xf32, #sym.shape<[L]>>) -> tensor<*xi1>
  %3 = dg.less_equal %x, %y : (tensor<?x1xf32, #sym.shape<[B, 1]>>, tensor<?xf32, #sym.shape<[L]>>) -> tensor<*xi1>
  %4 = dg.greater_equal %x, %y : (tensor<?x1xf32, #sym.shape<[B, 1]>>, tensor<?xf32, #sym.shape<[L]>>) -> tensor<*xi1>
  %5 = dg.and %0, %1 : (tensor<*xi1>, tensor<*xi1>) -> tensor<*xi1>
  %6 = dg.or %5, %2 : (tensor<*xi1>, tensor<*xi1>) -> tensor<*xi1>
  %7 = dg.and %6, %3 : (tensor<*xi1>, tensor<*xi1>) -> tensor<*xi1>
  %8 = dg.or %7, %4 : (tensor<*xi1>, tensor<*xi1>) -> tensor<*xi1>
  return %8 : tensor<*xi1>
}

// -----

// Select broadcasts all three operands: [B, 1, 1], [L, 1] and [8].
// CHECK-LABEL: func.func @select_three_way(
//  CHECK-SAME:     -> tensor<?x?x8xf32, #sym.shape<[B, L, 8]>>
//       CHECK:   dg.select {{.*}} : (tensor<?x1x1xi1, #sym.shape<[B, 1, 1]>>, tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<8xf32>) -> tensor<?x?x8xf32, #sym.shape<[B, L, 8]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @select_three_way(%c: tensor<?x1x1xi1, #sym.shape<[B, 1, 1]>>, %a: tensor<?x1xf32, #sym.shape<[L, 1]>>,
                            %b: tensor<8xf32>) -> tensor<*xf32> {
  %0 = dg.select %c, %a, %b : (tensor<?x1x1xi1, #sym.shape<[B, 1, 1]>>, tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Two symbols broadcast against each other are equal: the alphabetically
// first survives with the intersection of the ranges, everywhere, including
// the argument that carried the other one.
// CHECK-LABEL: sym.symbol @L range [4, 100]
//   CHECK-NOT:   sym.symbol @M
//       CHECK: func.func @unify_symbols(
//  CHECK-SAME:     %{{.*}}: tensor<?xf32, #sym.shape<[L]>>,
//  CHECK-SAME:     %{{.*}}: tensor<?xf32, #sym.shape<[L]>>)
//  CHECK-SAME:     -> tensor<?xf32, #sym.shape<[L]>>
//       CHECK:   dg.add {{.*}} -> tensor<?xf32, #sym.shape<[L]>>
sym.symbol @L range [1, 100]
sym.symbol @M range [4, 512]
func.func @unify_symbols(%x: tensor<?xf32, #sym.shape<[L]>>, %y: tensor<?xf32, #sym.shape<[M]>>) -> tensor<*xf32> {
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[L]>>, tensor<?xf32, #sym.shape<[M]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A symbol broadcast against a constant other than 1 is that constant. The
// op that implies it comes after a relu of the same argument: the relu's
// type is rewritten too (the fact applies to every type at the end).
// CHECK-LABEL: sym.symbol @B range [1, 8192]
//  CHECK-NEXT: func.func @specialize_sibling(
//  CHECK-SAME:     %{{.*}}: tensor<?x64xf32, #sym.shape<[B, 64]>>,
//  CHECK-SAME:     %{{.*}}: tensor<?x64xf32, #sym.shape<[B, 64]>>)
//       CHECK:   dg.relu {{.*}} -> tensor<?x64xf32, #sym.shape<[B, 64]>>
//       CHECK:   dg.add {{.*}} -> tensor<?x64xf32, #sym.shape<[B, 64]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @specialize_sibling(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %y: tensor<?x64xf32, #sym.shape<[B, 64]>>)
    -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.relu %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xf32>
  %1 = dg.add %x, %y : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x64xf32, #sym.shape<[B, 64]>>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Broadcasting against 1 implies nothing: L stays a symbol and its range is
// untouched.
// CHECK-LABEL: sym.symbol @W range [1, 512]
//  CHECK-NEXT: func.func @broadcast_one(
//       CHECK:   dg.mul {{.*}} : (tensor<1x?xf32, #sym.shape<[1, W]>>, tensor<?x1xf32, #sym.shape<[W, 1]>>) -> tensor<?x?xf32, #sym.shape<[W, W]>>
sym.symbol @W range [1, 512]
func.func @broadcast_one(%x: tensor<1x?xf32, #sym.shape<[1, W]>>, %y: tensor<?x1xf32, #sym.shape<[W, 1]>>) -> tensor<*xf32> {
  %0 = dg.mul %x, %y : (tensor<1x?xf32, #sym.shape<[1, W]>>, tensor<?x1xf32, #sym.shape<[W, 1]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Two expressions that are not a substitution are kept for the run-time,
// with the op that implied them; the result takes the class representative.
// CHECK-LABEL: sym.constraint <2*A> equals <B*C> "the broadcast dimensions 0 of dg.add 'bias'"
//       CHECK: func.func @deferred_broadcast(
//       CHECK:   dg.add {{.*}} -> tensor<?xf32, #sym.shape<[2*A]>>
//       CHECK:   dg.exp {{.*}} -> tensor<?xf32, #sym.shape<[2*A]>>
sym.symbol @A range [1, 64]
sym.symbol @B range [1, 64]
sym.symbol @C range [1, 64]
func.func @deferred_broadcast(%x: tensor<?xf32, #sym.shape<[2*A]>>, %y: tensor<?xf32, #sym.shape<[B*C]>>) -> tensor<*xf32> {
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[2*A]>>, tensor<?xf32, #sym.shape<[B*C]>>) -> tensor<*xf32> loc("bias")
  %1 = dg.exp %0 : tensor<*xf32> -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// Spellings of one expression broadcast without a constraint.
// CHECK-LABEL: sym.symbol @Q range [1, 512]
//  CHECK-NEXT: func.func @same_expression(
//       CHECK:   dg.sub {{.*}} -> tensor<?x?xf32, #sym.shape<[P + 1, 2*Q]>>
sym.symbol @P range [1, 8192]
sym.symbol @Q range [1, 512]
func.func @same_expression(%x: tensor<?x?xf32, #sym.shape<[P + 1, 2*Q]>>, %y: tensor<?x?xf32, #sym.shape<[1 + P, Q + Q]>>) -> tensor<*xf32> {
  %0 = dg.sub %x, %y : (tensor<?x?xf32, #sym.shape<[P + 1, 2*Q]>>, tensor<?x?xf32, #sym.shape<[1 + P, Q + Q]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A symbol with facts bound to an expression hands its facts to the
// run-time where they cannot be proved: L in [8, 512] divisor 8 equal to
// 2*A needs 2*A >= 8 and 2*A a multiple of 8 (2*A <= 128 <= 512 is proved).
// CHECK-LABEL: sym.symbol @A range [1, 64]
//  CHECK-NEXT: sym.constraint <2*A> equals <max(8, 2*A)> "the facts [8, 512] divisor 8 of L, bound by the broadcast dimensions 0 of dg.add 'mix'"
//  CHECK-NEXT: sym.constraint <2*mod(A, 4)> equals <0> "the facts [8, 512] divisor 8 of L, bound by the broadcast dimensions 0 of dg.add 'mix'"
//  CHECK-NEXT: func.func @facts_to_runtime(
//  CHECK-SAME:     %{{.*}}: tensor<?xf32, #sym.shape<[2*A]>>, %{{.*}}: tensor<?xf32, #sym.shape<[2*A]>>)
sym.symbol @A range [1, 64]
sym.symbol @L range [8, 512] divisor 8
func.func @facts_to_runtime(%x: tensor<?xf32, #sym.shape<[L]>>, %y: tensor<?xf32, #sym.shape<[2*A]>>) -> tensor<*xf32> {
  %0 = dg.add %x, %y : (tensor<?xf32, #sym.shape<[L]>>, tensor<?xf32, #sym.shape<[2*A]>>) -> tensor<*xf32> loc("mix")
  return %0 : tensor<*xf32>
}
