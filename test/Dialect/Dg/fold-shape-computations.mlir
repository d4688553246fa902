// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes --dyncc-fold-shape-computations | FileCheck %s

// The way exporters split the hidden size into heads: the shape sub-graph
// (shape_of, gathers, unsqueezes, concat) becomes one dg.dim_values over the
// symbols, and nothing of it is left.
// CHECK-LABEL: func.func @split_heads(
//  CHECK-SAME:     %[[X:.+]]: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>)
//  CHECK-NEXT:   %[[S:.+]] = dg.dim_values <[B, L, 12, 64]> : tensor<4xi64>
//  CHECK-NEXT:   %[[R:.+]] = dg.reshape %[[X]], %[[S]] : {{.*}} -> tensor<?x?x12x64xf32, #sym.shape<[B, L, 12, 64]>>
//  CHECK-NEXT:   return %[[R]]
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @split_heads(%x: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>) -> tensor<*xf32> {
  %s = dg.shape_of %x : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>> -> tensor<*xi64>
  %i0 = dg.constant dense<0> : tensor<i64>
  %i1 = dg.constant dense<1> : tensor<i64>
  %b = dg.gather %s, %i0 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %l = dg.gather %s, %i1 : (tensor<*xi64>, tensor<i64>) -> tensor<*xi64>
  %ub = dg.unsqueeze %b {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %ul = dg.unsqueeze %l {axes = array<i64: 0>} : tensor<*xi64> -> tensor<*xi64>
  %c12 = dg.constant dense<12> : tensor<1xi64>
  %c64 = dg.constant dense<64> : tensor<1xi64>
  %shape = dg.concat %ub, %ul, %c12, %c64 {axis = 0 : i64} : (tensor<*xi64>, tensor<*xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xi64>
  %r = dg.reshape %x, %shape : (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<*xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// Contents that are all constants become a dg.constant: the static dims of
// a dynamic tensor, computed arithmetic (B*L folds to a dim_values, 768/12
// to a constant), and a cast to i32 keeps its element type.
// CHECK-LABEL: func.func @mixed(
//   CHECK-DAG:   dg.constant dense<[12, 64]> : tensor<2xi64>
//   CHECK-DAG:   dg.dim_values <[B*L]> : tensor<1xi64>
//   CHECK-DAG:   dg.dim_values <[L]> : tensor<1xi32>
//   CHECK-NOT:   dg.shape_of
//   CHECK-NOT:   dg.mul
//   CHECK-NOT:   dg.cast
sym.symbol @B range [1, 64]
sym.symbol @L range [1, 512]
func.func @mixed(%x: tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>)
    -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi32>) {
  %s = dg.shape_of %x : tensor<?x?x768xf32, #sym.shape<[B, L, 768]>> -> tensor<*xi64>
  %i0 = dg.constant dense<0> : tensor<1xi64>
  %i1 = dg.constant dense<1> : tensor<1xi64>
  %i2 = dg.constant dense<2> : tensor<1xi64>
  %b = dg.gather %s, %i0 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %l = dg.gather %s, %i1 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %h = dg.gather %s, %i2 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %bl = dg.mul %b, %l : (tensor<*xi64>, tensor<*xi64>) -> tensor<*xi64>
  %c12 = dg.constant dense<12> : tensor<1xi64>
  %hd = dg.div %h, %c12 : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %heads = dg.concat %c12, %hd {axis = 0 : i64} : (tensor<1xi64>, tensor<*xi64>) -> tensor<*xi64>
  %l32 = dg.cast %l {to = i32} : tensor<*xi64> -> tensor<*xi32>
  return %bl, %heads, %l32 : tensor<*xi64>, tensor<*xi64>, tensor<*xi32>
}

// -----

// Contents that depend on data are not folded: the gather of a data input
// and what is computed from it stay.
// CHECK-LABEL: func.func @data(
//       CHECK:   dg.gather
//       CHECK:   dg.reshape
//   CHECK-NOT:   dg.dim_values
sym.symbol @N range [1, 64]
func.func @data(%x: tensor<?xf32, #sym.shape<[N]>>, %shape: tensor<2xi64>) -> tensor<*xf32> {
  %i = dg.constant dense<[1, 0]> : tensor<2xi64>
  %t = dg.gather %shape, %i : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r = dg.reshape %x, %t : (tensor<?xf32, #sym.shape<[N]>>, tensor<*xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// A constant_of_shape of a static shape becomes a splat constant.
// CHECK-LABEL: func.func @fill(
//  CHECK-NEXT:   %[[C:.+]] = dg.constant dense<2.500000e-01> : tensor<3x4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fill() -> tensor<*xf32> {
  %s = dg.constant dense<[3, 4]> : tensor<2xi64>
  %0 = dg.constant_of_shape %s, dense<0.25> : tensor<1xf32> : tensor<2xi64> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
