// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes | FileCheck %s
// Propagation run again drops the binds (and counts) of the first run and
// binds its own fresh symbols once: no count is bound twice, nor left with
// a stale symbol.
// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-infer-shapes \
// RUN:   | FileCheck %s --check-prefix=TWICE
// TWICE-LABEL: func.func @data_dependent(
//  TWICE-NEXT: sym.bind %arg1 as {{.*}} "dg.reshape 'view'"
//  TWICE-NEXT: sym.bind %arg1 as {{.*}} "dg.expand" broadcast
//  TWICE-NOT: sym.bind %arg1
//  TWICE-COUNT-1: sym.bind {{.*}} as <{{\[}}[[NZ:nonzero[0-9]+]]{{\]}}> "dg.nonzero 'find'"
//  TWICE-NEXT: dg.nonzero {{.*}} #sym.shape<[2, [[NZ]]]>
//  TWICE-NOT: sym.bind {{.*}} "dg.nonzero 'find'"
//  TWICE-COUNT-1: sym.bind {{.*}} "dg.range"
//  TWICE-NOT: sym.bind {{.*}} "dg.range"
//  TWICE-COUNT-1: sym.bind {{.*}} "dg.slice"
//  TWICE-NOT: sym.bind {{.*}} "dg.slice"
//  TWICE: return

// Shape sub-graphs: the symbolic contents of small integer tensors flow
// through shape_of, gather, unsqueeze, concat, slice and the arithmetic, so
// that reshape, expand, constant_of_shape, slice and range get exact
// symbolic shapes. Contents that depend on data give fresh data-dependent
// symbols.

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, the way exporters
// split the hidden size into heads, and back: [B, L, 768] to
// [B, L, 12, 64] (from computed contents, and from 0 and -1), to
// [B*L, 12, 64] (-1 is B*L), to [B*L, 768] (B*L computed by a mul) and back
// to [B, L, 768] by the original shape. No run-time check is left.
// CHECK-LABEL: sym.symbol @L range [1, 512]
//  CHECK-NEXT: func.func @split_heads(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>)
//       CHECK:   %[[SHAPE:.+]] = dg.shape_of %[[X]] : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>> -> tensor<3xi64>
//       CHECK:   %[[B:.+]] = dg.gather %[[SHAPE]], %{{.*}} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
//       CHECK:   %[[L:.+]] = dg.gather %[[SHAPE]], %{{.*}} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
//       CHECK:   dg.unsqueeze %[[B]] {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
//       CHECK:   %[[S4:.+]] = dg.concat {{.*}} -> tensor<4xi64>
//       CHECK:   dg.reshape %[[X]], %[[S4]] : {{.*}} -> tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>
//       CHECK:   dg.reshape %[[X]], %{{.*}} : {{.*}} -> tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>
//       CHECK:   %[[FLAT:.+]] = dg.reshape %[[X]], %{{.*}} : (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<3xi64>) -> tensor<?x12x64xf32, #sym.shape<[B*L, 12, 64]>>
//       CHECK:   dg.mul %[[B]], %[[L]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
//       CHECK:   %[[MERGED:.+]] = dg.reshape %[[FLAT]], %{{.*}} : (tensor<?x12x64xf32, #sym.shape<[B*L, 12, 64]>>, tensor<2xi64>) -> tensor<?x768xf32, #sym.shape<[B*L, 768]>>
//       CHECK:   dg.reshape %[[MERGED]], %[[SHAPE]] : (tensor<?x768xf32, #sym.shape<[B*L, 768]>>, tensor<3xi64>) -> tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @split_heads(%x: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %s = dg.shape_of %x : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>> -> tensor<*xi64>
  %i0 = dg.constant dense<0> : tensor<i64>
  %i1 = dg.constant dense<1> : tensor<i64>
  %b = dg.gather %s, %i0 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %l = dg.gather %s, %i1 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %ub = dg.unsqueeze %b {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %ul = dg.unsqueeze %l {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %c12 = dg.constant dense<12> : tensor<1xi64>
  %c64 = dg.constant dense<64> : tensor<1xi64>
  %shape4 = dg.concat %ub, %ul, %c12, %c64 {axis = 0 : i64} : (tensor<*xi64>, tensor<*xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xi64>
  %0 = dg.reshape %x, %shape4 : (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<*xi64>) -> tensor<*xf32>
  %copy = dg.constant dense<[0, 0, 12, -1]> : tensor<4xi64>
  %1 = dg.reshape %x, %copy : (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<4xi64>) -> tensor<*xf32>
  %infer = dg.constant dense<[-1, 12, 64]> : tensor<3xi64>
  %2 = dg.reshape %x, %infer : (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<3xi64>) -> tensor<*xf32>
  %bl = dg.mul %b, %l : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64>
  %ubl = dg.unsqueeze %bl {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %c768 = dg.constant dense<768> : tensor<1xi64>
  %shape2 = dg.concat %ubl, %c768 {axis = 0 : i64} : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %3 = dg.reshape %2, %shape2 : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %4 = dg.reshape %3, %s : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// A -1 that is not provably exact keeps the quotient and leaves the
// divisibility for the run-time.
// CHECK-LABEL: sym.constraint <4*floordiv(3*L, 2)> equals <6*L> "the element counts of dg.reshape 'pairs'"
//       CHECK: func.func @reshape_inexact(
//       CHECK:   dg.reshape {{.*}} -> tensor<?x4xf32, #sym.shape<[floordiv(3*L, 2), 4]>>
sym.symbol @L range [1, 512]
func.func @reshape_inexact(%x: tensor<?x6xf32, #sym.shape<[L, 6]>>) -> tensor<*xf32> {
  %s = dg.constant dense<[-1, 4]> : tensor<2xi64>
  %0 = dg.reshape %x, %s : (tensor<?x6xf32, #sym.shape<[L, 6]>>, tensor<2xi64>) -> tensor<*xf32> loc("pairs")
  return %0 : tensor<*xf32>
}

// -----

// GPT-2's causal mask: bias[:, :, ns - nd : ns, :ns] with nd the query
// length L and ns = P + L the key length after the past. The ranges prove
// P + L <= 1024, so the clamps vanish: [1, 1, L, L + P].
// CHECK-LABEL: func.func @gpt2_causal_mask(
//  CHECK-SAME:     -> (tensor<1x1x?x1024xf32, #sym.shape<[1, 1, L, 1024]>>, tensor<1x1x?x?xf32, #sym.shape<[1, 1, L, L + P]>>)
//       CHECK:   %[[KEY:.+]] = dg.concat {{.*}} -> tensor<?x12x?x64xf32, #sym.shape<[B, 12, L + P, 64]>>
//       CHECK:   %[[ROWS:.+]] = dg.slice {{.*}} -> tensor<1x1x?x1024xf32, #sym.shape<[1, 1, L, 1024]>>
//       CHECK:   dg.slice %[[ROWS]], {{.*}} -> tensor<1x1x?x?xf32, #sym.shape<[1, 1, L, L + P]>>
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
sym.symbol @P range [0, 512]
func.func @gpt2_causal_mask(%q: tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>,
                            %past: tensor<?x12x?x64xf32, #sym.shape<[B, 12, P, 64]>>,
                            %cur: tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>) -> (tensor<*xf32>, tensor<*xf32>) {
  %bias = dg.constant dense<1.0> : tensor<1x1x1024x1024xf32>
  %k = dg.concat %past, %cur {axis = 2 : i64} : (tensor<?x12x?x64xf32, #sym.shape<[B, 12, P, 64]>>, tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>>) -> tensor<*xf32>
  %qs = dg.shape_of %q : tensor<?x12x?x64xf32, #sym.shape<[B, 12, L, 64]>> -> tensor<*xi64>
  %ks = dg.shape_of %k : tensor<*xf32> -> tensor<*xi64>
  %m2 = dg.constant dense<-2> : tensor<i64>
  %nd = dg.gather %qs, %m2 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %ns = dg.gather %ks, %m2 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %st = dg.sub %ns, %nd : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64>
  %st1 = dg.unsqueeze %st {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %ns1 = dg.unsqueeze %ns {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %a2 = dg.constant dense<2> : tensor<1xi64>
  %a3 = dg.constant dense<3> : tensor<1xi64>
  %z = dg.constant dense<0> : tensor<1xi64>
  %0 = dg.slice %bias, %st1, %ns1 axes %a2 : tensor<1xi64> : tensor<1x1x1024x1024xf32>, tensor<*xi64>, tensor<*xi64> -> tensor<*xf32>
  %1 = dg.slice %0, %z, %ns1 axes %a3 : tensor<1xi64> : tensor<*xf32>, tensor<1xi64>, tensor<*xi64> -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// When the range does not bound the end, the slice is clamped with min;
// min/max in the shape arithmetic itself are tracked too.
// CHECK-LABEL: func.func @slice_clamped(
//  CHECK-SAME:     -> (tensor<?x8xf32, #sym.shape<[min(1024, L), 8]>>, tensor<?x?xf32, #sym.shape<[B, min(L, min(1024, L))]>>, tensor<?x8xf32, #sym.shape<[min(1024, max(16, L)), 8]>>)
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 4096]
func.func @slice_clamped(%x: tensor<?x?xf32, #sym.shape<[B, L]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %table = dg.constant dense<1.0> : tensor<1024x8xf32>
  %s = dg.shape_of %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xi64>
  %i1 = dg.constant dense<1> : tensor<1xi64>
  %l = dg.gather %s, %i1 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %z = dg.constant dense<0> : tensor<1xi64>
  %0 = dg.slice %table, %z, %l : tensor<1024x8xf32>, tensor<1xi64>, tensor<*xi64> -> tensor<*xf32>
  %c1024 = dg.constant dense<1024> : tensor<1xi64>
  %end = dg.min %l, %c1024 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %1 = dg.slice %x, %z, %end axes %i1 : tensor<1xi64> : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<1xi64>, tensor<*xi64> -> tensor<*xf32>
  %c16 = dg.constant dense<16> : tensor<1xi64>
  %start = dg.max %l, %c16 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %2 = dg.slice %table, %z, %start : tensor<1024x8xf32>, tensor<1xi64>, tensor<*xi64> -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Slicing a shape value with negative constant bounds gives its last
// entries: the shape of the trailing dimensions.
// CHECK-LABEL: func.func @slice_shape_value(
//       CHECK:   dg.slice {{.*}} : tensor<3xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<2xi64>
//       CHECK:   dg.constant_of_shape {{.*}} -> tensor<?x768xf32, #sym.shape<[L, 768]>>
//       CHECK:   dg.slice {{.*}} : tensor<3xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<3xi64>
//       CHECK:   dg.constant_of_shape {{.*}} -> tensor<768x?x?xf32, #sym.shape<[768, L, B]>>
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @slice_shape_value(%x: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s = dg.shape_of %x : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>> -> tensor<*xi64>
  %m2 = dg.constant dense<-2> : tensor<1xi64>
  %big = dg.constant dense<9223372036854775807> : tensor<1xi64>
  %tail = dg.slice %s, %m2, %big : tensor<*xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<*xi64>
  %0 = dg.constant_of_shape %tail, dense<0.0> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  %m1 = dg.constant dense<-1> : tensor<1xi64>
  %small = dg.constant dense<-9223372036854775807> : tensor<1xi64>
  %a0 = dg.constant dense<0> : tensor<1xi64>
  %rev = dg.slice %s, %m1, %small axes %a0 : tensor<1xi64> steps %m1 : tensor<1xi64> : tensor<*xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<*xi64>
  %1 = dg.constant_of_shape %rev, dense<0.0> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Range with computed bounds: [0, L), [P, P + L), by 2, counting down,
// and in float (integral float contents are tracked through the cast). No
// data-dependent symbol is needed.
// CHECK-LABEL: sym.symbol @P range [0, 512]
//  CHECK-NEXT: func.func @range_computed(
//       CHECK:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[L]>>
//       CHECK:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[L]>>
//       CHECK:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[ceildiv(L, 2)]>>
//       CHECK:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[L]>>
//       CHECK:   dg.range {{.*}} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32, #sym.shape<[L]>>
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
sym.symbol @P range [0, 512]
func.func @range_computed(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %past: tensor<?x?xf32, #sym.shape<[B, P]>>)
    -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>) {
  %s = dg.shape_of %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xi64>
  %ps = dg.shape_of %past : tensor<?x?xf32, #sym.shape<[B, P]>> -> tensor<*xi64>
  %i1 = dg.constant dense<1> : tensor<i64>
  %l = dg.gather %s, %i1 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %p = dg.gather %ps, %i1 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %zero = dg.constant dense<0> : tensor<i64>
  %one = dg.constant dense<1> : tensor<i64>
  %two = dg.constant dense<2> : tensor<i64>
  %down = dg.constant dense<-1> : tensor<i64>
  %0 = dg.range %zero, %l, %one : (tensor<i64>, tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %pl = dg.add %p, %l : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64>
  %1 = dg.range %p, %pl, %one : (tensor<*xi64>, tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %2 = dg.range %zero, %l, %two : (tensor<i64>, tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %3 = dg.range %l, %zero, %down : (tensor<*xi64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %fzero = dg.constant dense<0.0> : tensor<f32>
  %fl = dg.cast %l : tensor<*xi64> -> tensor<*xf32>
  %fone = dg.constant dense<1.0> : tensor<f32>
  %4 = dg.range %fzero, %fl, %fone : (tensor<f32>, tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>
}

// -----

// constant_of_shape, reshape and expand from computed shapes: [B, 1, L];
// [L*2/2 - 1, B] through mul, div and sub; the product of the dimensions
// (reduce_prod, as tf2onnx's Tensordot computes it); [B] ++ shape[1:2].
// CHECK-LABEL: func.func @computed_shapes(
//       CHECK:   dg.constant_of_shape {{.*}} : tensor<3xi64> -> tensor<?x1x?xf32, #sym.shape<[B, 1, L]>>
//       CHECK:   dg.constant_of_shape {{.*}} : tensor<2xi64> -> tensor<?x?xi64, #sym.shape<[L - 1, B]>>
//       CHECK:   dg.reshape {{.*}} -> tensor<?xf32, #sym.shape<[B*L]>>
//       CHECK:   dg.expand {{.*}} : (tensor<1x1xf32>, tensor<2xi64>) -> tensor<?x?xf32, #sym.shape<[B, L]>>
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @computed_shapes(%x: tensor<?x?xf32, #sym.shape<[B, L]>>)
    -> (tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>) {
  %s = dg.shape_of %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xi64>
  %i0 = dg.constant dense<[0]> : tensor<1xi64>
  %i1 = dg.constant dense<[1]> : tensor<1xi64>
  %b = dg.gather %s, %i0 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %l = dg.gather %s, %i1 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %one = dg.constant dense<[1]> : tensor<1xi64>
  %sh = dg.concat %b, %one, %l {axis = 0 : i64} : (tensor<*xi64>, tensor<1xi64>, tensor<*xi64>) -> tensor<*xi64>
  %0 = dg.constant_of_shape %sh, dense<1.0> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  %two = dg.constant dense<[2]> : tensor<1xi64>
  %l2 = dg.mul %l, %two : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %l3 = dg.div %l2, %two : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %l4 = dg.sub %l3, %one : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %sh2 = dg.concat %l4, %b {axis = 0 : i64} : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64>
  %1 = dg.constant_of_shape %sh2, dense<7> : tensor<i64> : tensor<*xi64> -> tensor<*xi64>
  %prod = dg.reduce_prod %s {keepdims = false} : tensor<*xi64> -> tensor<*xi64>
  %uprod = dg.unsqueeze %prod {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %2 = dg.reshape %x, %uprod : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<*xi64>) -> tensor<*xf32>
  %tail = dg.slice %s, %i1, %two : tensor<*xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<*xi64>
  %tsh = dg.concat %b, %tail {axis = 0 : i64} : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64>
  %row = dg.constant dense<1.0> : tensor<1x1xf32>
  %3 = dg.expand %row, %tsh : (tensor<1x1xf32>, tensor<*xi64>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Sizes that depend on data are fresh symbols, declared data_dependent and
// named after the op that binds them at run time: the count of nonzero
// (read back through shape_of), a reshape / expand to a shape read from a
// function argument (the element count is left for the run-time), a range
// to a data-dependent limit, a slice from a data-dependent start.
// Sizes read from the argument's values are bound from it by `sym.bind`
// at its start: the reshape's by Reshape's rules over its input's shape,
// the expand's with 1 standing for a bound size. NonZero's count, the
// range's length and the slice's are computed by ops put before them, and
// bound.
// CHECK-LABEL: sym.symbol @L range [1, 512]
//  CHECK-NEXT: sym.symbol @nonzero0 range [0, 2147483647] data_dependent {defined_by = "dg.nonzero 'find'"}
//  CHECK-NEXT: sym.symbol @reshape0 range [0, 2147483647] data_dependent {defined_by = "dg.reshape 'view'"}
//  CHECK-NEXT: sym.symbol @reshape1 range [0, 2147483647] data_dependent {defined_by = "dg.reshape 'view'"}
//  CHECK-NEXT: sym.symbol @reshape2 range [0, 2147483647] data_dependent {defined_by = "dg.reshape 'view'"}
//  CHECK-NEXT: sym.symbol @expand0 range [0, 2147483647] data_dependent {defined_by = "dg.expand"}
//  CHECK-NEXT: sym.symbol @range0 range [0, 2147483647] data_dependent {defined_by = "dg.range"}
//  CHECK-NEXT: sym.symbol @slice0 range [0, 2147483647] data_dependent {defined_by = "dg.slice"}
//  CHECK-NEXT: sym.constraint <reshape0*reshape1*reshape2> equals <B*L> "the element counts of dg.reshape 'view'"
//  CHECK-NEXT: func.func @data_dependent(
//  CHECK-SAME:     -> (tensor<?xf32, #sym.shape<[nonzero0]>>, tensor<?x?x?xf32, #sym.shape<[reshape0, reshape1, reshape2]>>, tensor<?x?x?xf32, #sym.shape<[expand0, B, L]>>, tensor<?xi64, #sym.shape<[range0]>>, tensor<?x?xf32, #sym.shape<[B, slice0]>>, tensor<f32>)
//  CHECK-NEXT:   sym.bind %arg1 as <[reshape0, reshape1, reshape2]> "dg.reshape 'view'" reshape_of <[B, L]> : tensor<3xi64>
//  CHECK-NEXT:   sym.bind %arg1 as <[expand0, B, L]> "dg.expand" broadcast : tensor<3xi64>
// NonZero's count is computed (the elements not equal to zero, summed)
// and bound before the NonZero runs, so its result has its exact size.
//       CHECK:   %[[ZERO:.*]] = dg.constant dense<0.000000e+00> : tensor<f32>
//  CHECK-NEXT:   %[[EQ:.*]] = dg.equal %arg0, %[[ZERO]]
//  CHECK-NEXT:   %[[NE:.*]] = dg.not %[[EQ]]
//  CHECK-NEXT:   %[[ONES:.*]] = dg.cast %[[NE]] : tensor<?x?xi1, #sym.shape<[B, L]>> -> tensor<?x?xi64, #sym.shape<[B, L]>>
//  CHECK-NEXT:   %[[SUM:.*]] = dg.reduce_sum %[[ONES]] {keepdims = false} : {{.*}} -> tensor<i64>
//  CHECK-NEXT:   %[[COUNT:.*]] = dg.unsqueeze %[[SUM]] {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
//  CHECK-NEXT:   sym.bind %[[COUNT]] as <[nonzero0]> "dg.nonzero 'find'" : tensor<1xi64>
//  CHECK-NEXT:   dg.nonzero {{.*}} -> tensor<2x?xi64, #sym.shape<[2, nonzero0]>>
//   CHECK-NOT:   sym.bind
//       CHECK:   dg.constant_of_shape {{.*}} -> tensor<?xf32, #sym.shape<[nonzero0]>>
// The range's length: the quotient truncated, plus 1 where the remainder is
// not 0 and has delta's sign, at least 0 (delta 0 counts as 1).
//       CHECK:   %[[DELTA:.*]] = dg.select
//  CHECK-NEXT:   %[[DIFF:.*]] = dg.sub %arg2
//  CHECK-NEXT:   %[[Q:.*]] = dg.div %[[DIFF]], %[[DELTA]]
//  CHECK-NEXT:   %[[QD:.*]] = dg.mul %[[Q]], %[[DELTA]]
//  CHECK-NEXT:   %[[R:.*]] = dg.sub %[[DIFF]], %[[QD]]
//       CHECK:   %[[UP:.*]] = dg.and
//  CHECK-NEXT:   %[[UPI:.*]] = dg.cast %[[UP]] : tensor<i1> -> tensor<i64>
//  CHECK-NEXT:   %[[CEIL:.*]] = dg.add %[[Q]], %[[UPI]]
//       CHECK:   %[[LEN:.*]] = dg.max %[[CEIL]]
//  CHECK-NEXT:   %[[BOUND:.*]] = dg.unsqueeze %[[LEN]]
//  CHECK-NEXT:   sym.bind %[[BOUND]] as <[range0]> "dg.range" : tensor<1xi64>
//  CHECK-NEXT:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[range0]>>
// The slice's length along axis 1 (L): start and end counted from the end
// where negative, clamped to [0, L], their difference at least 0 (step 1).
//       CHECK:   %[[L:.*]] = dg.shape_of %arg0 {end = 2 : i64, start = 1 : i64}
//       CHECK:   %[[S:.*]] = dg.gather %arg3
//  CHECK-NEXT:   %[[SNEG:.*]] = dg.less %[[S]]
//  CHECK-NEXT:   %[[SUP:.*]] = dg.add %[[S]], %[[L]]
//  CHECK-NEXT:   %[[S1:.*]] = dg.select %[[SNEG]], %[[SUP]], %[[S]]
//       CHECK:   %[[E1:.*]] = dg.select
//  CHECK-NEXT:   %[[S2:.*]] = dg.max %[[S1]]
//  CHECK-NEXT:   %[[S3:.*]] = dg.min %[[S2]], %[[L]]
//  CHECK-NEXT:   %[[E2:.*]] = dg.max %[[E1]]
//  CHECK-NEXT:   %[[E3:.*]] = dg.min %[[E2]], %[[L]]
//  CHECK-NEXT:   %[[SPAN:.*]] = dg.sub %[[E3]], %[[S3]]
//  CHECK-NEXT:   %[[LEN:.*]] = dg.max %[[SPAN]]
//  CHECK-NEXT:   sym.bind %[[LEN]] as <[slice0]> "dg.slice" : tensor<1xi64>
//  CHECK-NEXT:   dg.slice {{.*}} -> tensor<?x?xf32, #sym.shape<[B, slice0]>>
//   CHECK-NOT:   sym.bind
//       CHECK:   dg.matmul {{.*}} : (tensor<?xf32, #sym.shape<[nonzero0]>>, tensor<?xf32, #sym.shape<[nonzero0]>>) -> tensor<f32>
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @data_dependent(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %shape: tensor<3xi64>, %n: tensor<i64>, %start: tensor<1xi64>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>) {
  %nz = dg.nonzero %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xi64> loc("find")
  %s = dg.shape_of %nz : tensor<*xi64> -> tensor<*xi64>
  %i1 = dg.constant dense<[1]> : tensor<1xi64>
  %count = dg.gather %s, %i1 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %0 = dg.constant_of_shape %count, dense<0.0> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  %1 = dg.reshape %x, %shape : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<3xi64>) -> tensor<*xf32> loc("view")
  %2 = dg.expand %x, %shape : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<3xi64>) -> tensor<*xf32>
  %zero = dg.constant dense<0> : tensor<i64>
  %one = dg.constant dense<1> : tensor<i64>
  %3 = dg.range %zero, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %big = dg.constant dense<[9223372036854775807]> : tensor<1xi64>
  %4 = dg.slice %x, %start, %big axes %i1 : tensor<1xi64> : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  %5 = dg.matmul %0, %0 : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Integer division of shape values truncates like the op does at run time:
// -3 / 2 is -1, so the slice ends one before the last element.
// CHECK-LABEL: func.func @truncating_div(
//       CHECK:   dg.slice {{.*}} -> tensor<7xf32>
func.func @truncating_div(%x: tensor<8xf32>) -> tensor<*xf32> {
  %a = dg.constant dense<[-3]> : tensor<1xi64>
  %b = dg.constant dense<[2]> : tensor<1xi64>
  %zero = dg.constant dense<[0]> : tensor<1xi64>
  %end = dg.div %a, %b : (tensor<1xi64>, tensor<1xi64>) -> tensor<*xi64>
  %0 = dg.slice %x, %zero, %end : tensor<8xf32>, tensor<1xi64>, tensor<*xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A start of unknown sign (it might count from the end) gives a
// data-dependent size instead of a wrong one; a provably negative one
// counts from the end (L <= 512 < 1024, so min(1024, L) is L).
// CHECK-LABEL: sym.symbol @slice0 range [0, 2147483647] data_dependent
// CHECK-LABEL: func.func @symbolic_start_sign(
//       CHECK:   -> tensor<?x8xf32, #sym.shape<[slice0, 8]>>
//       CHECK:   -> tensor<?x8xf32, #sym.shape<[L, 8]>>
sym.symbol @L range [1, 512]
func.func @symbolic_start_sign(%t: tensor<1024x8xf32>, %x: tensor<?xf32, #sym.shape<[L]>>, %u: tensor<1xi64>) -> (tensor<*xf32>, tensor<*xf32>) {
  %big = dg.constant dense<[9223372036854775807]> : tensor<1xi64>
  %0 = dg.slice %t, %u, %big : tensor<1024x8xf32>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  %shape = dg.shape_of %x : tensor<?xf32, #sym.shape<[L]>> -> tensor<*xi64>
  %negl = dg.neg %shape : tensor<*xi64> -> tensor<*xi64>
  %1 = dg.slice %t, %negl, %big : tensor<1024x8xf32>, tensor<*xi64>, tensor<1xi64> -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// A graph input's symbol is not replaced by an expression of fresh
// data-dependent symbols: the input stays [N] (the run-time binds N from
// it), and the element counts' equality is a run-time check once the
// reshape's sizes are bound.
// CHECK-LABEL: sym.symbol @N range [1, 64]
//       CHECK: sym.constraint <reshape0*reshape1> equals <N> "the element counts of dg.reshape"
//       CHECK: func.func @data_reshape(
//  CHECK-SAME:     %{{.*}}: tensor<?xf32, #sym.shape<[N]>>
//  CHECK-SAME:     -> tensor<?x?xf32, #sym.shape<[reshape0, reshape1]>>
sym.symbol @N range [1, 64]
func.func @data_reshape(%x: tensor<?xf32, #sym.shape<[N]>>, %shape: tensor<2xi64>) -> tensor<*xf32> {
  %r = dg.reshape %x, %shape : (tensor<?xf32, #sym.shape<[N]>>, tensor<2xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// Two ops of one kind with no name of their own describe alike
// ("dg.range"): each still gets its length bound, by its own symbol.
// CHECK-LABEL: func.func @unnamed_ranges(
//       CHECK:   sym.bind %{{.*}} as <[range0]> "dg.range" : tensor<1xi64>
//  CHECK-NEXT:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[range0]>>
//       CHECK:   sym.bind %{{.*}} as <[range1]> "dg.range" : tensor<1xi64>
//  CHECK-NEXT:   dg.range {{.*}} -> tensor<?xi64, #sym.shape<[range1]>>
func.func @unnamed_ranges(%n: tensor<i64>, %m: tensor<i64>) -> (tensor<*xi64>, tensor<*xi64>) {
  %zero = dg.constant dense<0> : tensor<i64>
  %one = dg.constant dense<1> : tensor<i64>
  %0 = dg.range %zero, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %1 = dg.range %zero, %m, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return %0, %1 : tensor<*xi64>, tensor<*xi64>
}
