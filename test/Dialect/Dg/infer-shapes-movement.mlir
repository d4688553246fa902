// RUN: dyncc-opt %s --split-input-file --dyncc-infer-shapes | FileCheck %s

// Symbolic shape propagation through the shape and data movement ops. The
// shape sub-graphs (shape_of -> gather -> concat -> reshape) are in
// infer-shapes-values.mlir.

// CHECK-LABEL: func.func @flatten(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x?x4x8xf32, #sym.shape<[B, L, 4, 8]>>)
//       CHECK:   dg.flatten %[[X]] {axis = 2 : i64} : {{.*}} -> tensor<?x32xf32, #sym.shape<[B*L, 32]>>
//       CHECK:   dg.flatten %[[X]] {axis = 0 : i64} : {{.*}} -> tensor<1x?xf32, #sym.shape<[1, 32*B*L]>>
//       CHECK:   dg.flatten %[[X]] {axis = -1 : i64} : {{.*}} -> tensor<?x8xf32, #sym.shape<[4*B*L, 8]>>
//       CHECK:   dg.flatten %[[X]] {axis = 4 : i64} : {{.*}} -> tensor<?x1xf32, #sym.shape<[32*B*L, 1]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @flatten(%x: tensor<?x?x4x8xf32, #sym.shape<[B, L, 4, 8]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.flatten %x {axis = 2 : i64} : tensor<?x?x4x8xf32, #sym.shape<[B, L, 4, 8]>> -> tensor<*xf32>
  %1 = dg.flatten %x {axis = 0 : i64} : tensor<?x?x4x8xf32, #sym.shape<[B, L, 4, 8]>> -> tensor<*xf32>
  %2 = dg.flatten %x {axis = -1 : i64} : tensor<?x?x4x8xf32, #sym.shape<[B, L, 4, 8]>> -> tensor<*xf32>
  %3 = dg.flatten %x {axis = 4 : i64} : tensor<?x?x4x8xf32, #sym.shape<[B, L, 4, 8]>> -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Without axes, only the dimensions known to be 1 go (a symbol may be 1
// only at run time: it stays). Unsqueeze axes index the result.
// CHECK-LABEL: func.func @squeeze_unsqueeze(
//       CHECK:   %[[ALL:.+]] = dg.squeeze %{{.*}} : tensor<?x1x?x1xf32, #sym.shape<[B, 1, L, 1]>> -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   dg.squeeze %{{.*}} {axes = array<i64: -1>} : {{.*}} -> tensor<?x1x?xf32, #sym.shape<[B, 1, L]>>
//       CHECK:   dg.unsqueeze %[[ALL]] {axes = array<i64: 0, -1, 2>} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<1x?x1x?x1xf32, #sym.shape<[1, B, 1, L, 1]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @squeeze_unsqueeze(%x: tensor<?x1x?x1xf32, #sym.shape<[B, 1, L, 1]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.squeeze %x : tensor<?x1x?x1xf32, #sym.shape<[B, 1, L, 1]>> -> tensor<*xf32>
  %1 = dg.squeeze %x {axes = array<i64: -1>} : tensor<?x1x?x1xf32, #sym.shape<[B, 1, L, 1]>> -> tensor<*xf32>
  %2 = dg.unsqueeze %0 {axes = array<i64: 0, -1, 2>} : tensor<*xf32> -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Squeezing a symbolic dimension requires it to be 1: the symbol is
// specialized away, in the argument's type too.
// CHECK-LABEL: sym.symbol @B range [1, 8192]
//  CHECK-NEXT: func.func @squeeze_symbol(
//  CHECK-SAME:     %{{.*}}: tensor<?x1xf32, #sym.shape<[B, 1]>>) -> tensor<?xf32, #sym.shape<[B]>>
//       CHECK:   dg.squeeze {{.*}} -> tensor<?xf32, #sym.shape<[B]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @squeeze_symbol(%x: tensor<?x?xf32, #sym.shape<[B, L]>>) -> tensor<*xf32> {
  %0 = dg.squeeze %x {axes = array<i64: 1>} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @transpose(
//       CHECK:   dg.transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : tensor<?x?x4xf32, #sym.shape<[B, L, 4]>> -> tensor<4x?x?xf32, #sym.shape<[4, B, L]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @transpose(%x: tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>) -> tensor<*xf32> {
  %0 = dg.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<?x?x4xf32, #sym.shape<[B, L, 4]>> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// The concatenated dimension is the sum; the others must be equal.
// CHECK-LABEL: func.func @concat(
//       CHECK:   dg.concat {{.*}} {axis = 1 : i64} : {{.*}} -> tensor<?x?x4xf32, #sym.shape<[B, 2*L + 3, 4]>>
//       CHECK:   dg.concat {{.*}} {axis = -1 : i64} : {{.*}} -> tensor<?x?x8xf32, #sym.shape<[B, L, 8]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @concat(%x: tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, %y: tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>)
    -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.concat %x, %y, %x {axis = 1 : i64} : (tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>, tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>) -> tensor<*xf32>
  %1 = dg.concat %x, %x {axis = -1 : i64} : (tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// The other dimensions of concatenated inputs are equal: C becomes B.
// CHECK-LABEL: sym.symbol @B range [2, 64]
//  CHECK-NEXT: sym.symbol @L range [1, 512]
//  CHECK-NEXT: func.func @concat_unify(
//  CHECK-SAME:     %{{.*}}: tensor<?x?xf32, #sym.shape<[B, L]>>, %{{.*}}: tensor<?x3xf32, #sym.shape<[B, 3]>>)
//  CHECK-SAME:     -> tensor<?x?xf32, #sym.shape<[B, L + 3]>>
sym.symbol @B range [1, 64]
sym.symbol @C range [2, 8192]
sym.symbol @L range [1, 512]
func.func @concat_unify(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %y: tensor<?x3xf32, #sym.shape<[C, 3]>>) -> tensor<*xf32> {
  %0 = dg.concat %x, %y {axis = 1 : i64} : (tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x3xf32, #sym.shape<[C, 3]>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Given sizes; equal pieces, the last one smaller (10 in 3 is 4, 4, 2); a
// symbolic dimension in ceildiv pieces.
// CHECK-LABEL: func.func @split(
//       CHECK:   dg.split {{.*}} -> tensor<?x?x3xf32, #sym.shape<[B, L, 3]>>, tensor<?x?x7xf32, #sym.shape<[B, L, 7]>>
//       CHECK:   dg.split {{.*}} -> tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, tensor<?x?x2xf32, #sym.shape<[B, L, 2]>>
//       CHECK:   dg.split {{.*}} -> tensor<?x?x10xf32, #sym.shape<[B, ceildiv(L, 2), 10]>>, tensor<?x?x10xf32, #sym.shape<[B, L - ceildiv(L, 2), 10]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @split(%x: tensor<?x?x10xf32, #sym.shape<[B, L, 10]>>)
    -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0:2 = dg.split %x {axis = -1 : i64, sizes = array<i64: 3, 7>} : tensor<?x?x10xf32, #sym.shape<[B, L, 10]>> -> tensor<*xf32>, tensor<*xf32>
  %1:3 = dg.split %x {axis = 2 : i64} : tensor<?x?x10xf32, #sym.shape<[B, L, 10]>> -> tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  %2:2 = dg.split %x {axis = 1 : i64} : tensor<?x?x10xf32, #sym.shape<[B, L, 10]>> -> tensor<*xf32>, tensor<*xf32>
  return %0#0, %0#1, %1#0, %1#1, %1#2, %2#0, %2#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Constant bounds on static dimensions: clamping, negative indices counted
// from the end, steps, reversal with the "before the start" end, and an
// empty slice.
// CHECK-LABEL: func.func @slice_static(
//  CHECK-SAME:     -> (tensor<3x20x4xf32>, tensor<10x20x30xf32>, tensor<0x20x30xf32>)
func.func @slice_static(%x: tensor<10x20x30xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %s = dg.constant dense<[1, -5]> : tensor<2xi64>
  %e = dg.constant dense<[100, -1]> : tensor<2xi64>
  %a = dg.constant dense<[0, 2]> : tensor<2xi64>
  %st = dg.constant dense<[3, 1]> : tensor<2xi64>
  %0 = dg.slice %x, %s, %e axes %a : tensor<2xi64> steps %st : tensor<2xi64> : tensor<10x20x30xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<*xf32>
  %s1 = dg.constant dense<-1> : tensor<1xi64>
  %e1 = dg.constant dense<-9223372036854775807> : tensor<1xi64>
  %a1 = dg.constant dense<1> : tensor<1xi64>
  %st1 = dg.constant dense<-1> : tensor<1xi64>
  %1 = dg.slice %x, %s1, %e1 axes %a1 : tensor<1xi64> steps %st1 : tensor<1xi64> : tensor<10x20x30xf32>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  %s2 = dg.constant dense<5> : tensor<1xi64>
  %e2 = dg.constant dense<2> : tensor<1xi64>
  %2 = dg.slice %x, %s2, %e2 : tensor<10x20x30xf32>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Constant bounds on symbolic dimensions: [1:] is B - 1; [-4:] keeps
// min(L, 4) elements, in clamped form; [0:16:2] on the last axis is
// ceildiv(min(16, L), 2).
// CHECK-LABEL: func.func @slice_symbolic(
//       CHECK:   dg.slice {{.*}} -> tensor<?x?xf32, #sym.shape<[B - 1, max(0, L - min(L, max(0, L - 4)))]>>
//       CHECK:   dg.slice {{.*}} -> tensor<?x?xf32, #sym.shape<[B, ceildiv(min(16, L), 2)]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @slice_symbolic(%x: tensor<?x?xf32, #sym.shape<[B, L]>>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s = dg.constant dense<[1, -4]> : tensor<2xi64>
  %e = dg.constant dense<9223372036854775807> : tensor<2xi64>
  %0 = dg.slice %x, %s, %e : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<2xi64>, tensor<2xi64> -> tensor<*xf32>
  %s1 = dg.constant dense<0> : tensor<1xi64>
  %e1 = dg.constant dense<16> : tensor<1xi64>
  %a1 = dg.constant dense<-1> : tensor<1xi64>
  %st = dg.constant dense<2> : tensor<1xi64>
  %1 = dg.slice %x, %s1, %e1 axes %a1 : tensor<1xi64> steps %st : tensor<1xi64> : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<1xi64>, tensor<1xi64> -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Gather replaces the axis by the indices' shape: an embedding lookup, a
// scalar index (the axis goes) and a vector of indices.
// CHECK-LABEL: func.func @gather(
//  CHECK-SAME:     -> (tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>, tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>)
//       CHECK:   dg.gather {{.*}} : (tensor<?x768xf32, #sym.shape<[V, 768]>>, tensor<?x?xi64, #sym.shape<[B, L]>>) -> tensor<?x?x768xf32, #sym.shape<[B, L, 768]>>
//       CHECK:   dg.gather {{.*}} {axis = -1 : i64} : {{.*}} -> tensor<?x?xf32, #sym.shape<[B, L]>>
//       CHECK:   dg.gather {{.*}} {axis = 1 : i64} : {{.*}} -> tensor<?x3x4xf32, #sym.shape<[B, 3, 4]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
sym.symbol @V range [1, 50000]
func.func @gather(%emb: tensor<?x768xf32, #sym.shape<[V, 768]>>, %ids: tensor<?x?xi64, #sym.shape<[B, L]>>,
                  %x: tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = dg.gather %emb, %ids : (tensor<?x768xf32, #sym.shape<[V, 768]>>, tensor<?x?xi64, #sym.shape<[B, L]>>) -> tensor<*xf32>
  %i = dg.constant dense<2> : tensor<i64>
  %1 = dg.gather %x, %i {axis = -1 : i64} : (tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, tensor<i64>) -> tensor<*xf32>
  %j = dg.constant dense<[0, 1, 0]> : tensor<3xi64>
  %2 = dg.gather %x, %j {axis = 1 : i64} : (tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>, tensor<3xi64>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Expand broadcasts against the target (which may add dimensions and keep
// 1s); tile multiplies.
// CHECK-LABEL: func.func @expand_tile(
//       CHECK:   dg.expand {{.*}} -> tensor<2x?x16xf32, #sym.shape<[2, L, 16]>>
//       CHECK:   dg.expand {{.*}} -> tensor<3x1x?x5xf32, #sym.shape<[3, 1, L, 5]>>
//       CHECK:   dg.tile {{.*}} -> tensor<?x5xf32, #sym.shape<[3*L, 5]>>
sym.symbol @L range [1, 512]
func.func @expand_tile(%x: tensor<?x1xf32, #sym.shape<[L, 1]>>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %s = dg.constant dense<[2, 1, 16]> : tensor<3xi64>
  %0 = dg.expand %x, %s : (tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<3xi64>) -> tensor<*xf32>
  %s1 = dg.constant dense<[3, 1, 1, 5]> : tensor<4xi64>
  %1 = dg.expand %x, %s1 : (tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<4xi64>) -> tensor<*xf32>
  %r = dg.constant dense<[3, 5]> : tensor<2xi64>
  %2 = dg.tile %x, %r : (tensor<?x1xf32, #sym.shape<[L, 1]>>, tensor<2xi64>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Pads are begins then ends; negative pads crop.
// CHECK-LABEL: func.func @pad(
//       CHECK:   dg.pad {{.*}} -> tensor<?x?xf32, #sym.shape<[B + 2, L + 4]>>
//       CHECK:   dg.pad {{.*}} {mode = "reflect"} : {{.*}} -> tensor<?x?xf32, #sym.shape<[B + 2, L + 4]>>
//       CHECK:   dg.pad {{.*}} {mode = "edge"} : tensor<10x20xf32>, tensor<4xi64> -> tensor<6x22xf32>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @pad(%x: tensor<?x?xf32, #sym.shape<[B, L]>>, %y: tensor<10x20xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %p = dg.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %0 = dg.pad %x, %p : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<4xi64> -> tensor<*xf32>
  %v = dg.constant dense<1.0> : tensor<f32>
  %1 = dg.pad %x, %p value %v : tensor<f32> {mode = "reflect"} : tensor<?x?xf32, #sym.shape<[B, L]>>, tensor<4xi64> -> tensor<*xf32>
  %q = dg.constant dense<[-1, 2, -3, 0]> : tensor<4xi64>
  %2 = dg.pad %y, %q {mode = "edge"} : tensor<10x20xf32>, tensor<4xi64> -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @depth_to_space(
//       CHECK:   dg.depth_to_space {{.*}} -> tensor<?x12x?x?xf32, #sym.shape<[B, 12, 2*H, 2*W]>>
sym.symbol @B range [1, 8192]
sym.symbol @H range [1, 512]
sym.symbol @W range [1, 512]
func.func @depth_to_space(%x: tensor<?x48x?x?xf32, #sym.shape<[B, 48, H, W]>>) -> tensor<*xf32> {
  %0 = dg.depth_to_space %x {blocksize = 2 : i64, mode = "CRD"} : tensor<?x48x?x?xf32, #sym.shape<[B, 48, H, W]>> -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Scales give floor(dim * scale) exactly; sizes give the shape directly.
// CHECK-LABEL: func.func @resize(
//       CHECK:   dg.resize {{.*}} scales {{.*}} -> tensor<?x3x?x?xf32, #sym.shape<[B, 3, 2*H, floordiv(W, 2)]>>
//       CHECK:   dg.resize {{.*}} scales {{.*}} -> tensor<?x3x?x?xf32, #sym.shape<[B, 3, floordiv(3*H, 4), floordiv(5*W, 2)]>>
//       CHECK:   dg.resize {{.*}} sizes {{.*}} -> tensor<1x3x224x224xf32>
sym.symbol @B range [1, 8192]
sym.symbol @H range [1, 512]
sym.symbol @W range [1, 512]
func.func @resize(%x: tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %s = dg.constant dense<[1.0, 1.0, 2.0, 0.5]> : tensor<4xf32>
  %0 = dg.resize %x scales %s : tensor<4xf32> : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>> -> tensor<*xf32>
  %s1 = dg.constant dense<[1.0, 1.0, 0.75, 2.5]> : tensor<4xf32>
  %1 = dg.resize %x scales %s1 : tensor<4xf32> {mode = "linear"} : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>> -> tensor<*xf32>
  %z = dg.constant dense<[1, 3, 224, 224]> : tensor<4xi64>
  %2 = dg.resize %x sizes %z : tensor<4xi64> : tensor<?x3x?x?xf32, #sym.shape<[B, 3, H, W]>> -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Shape and size are small static tensors whose contents are symbolic;
// constant_of_shape reads them back.
// CHECK-LABEL: func.func @shape_of_size(
//  CHECK-SAME:     -> (tensor<3xi64>, tensor<1xi64>, tensor<0xi64>, tensor<i64>, tensor<?x?x4xi64, #sym.shape<[B, L, 4]>>, tensor<?xf32, #sym.shape<[L]>>)
//       CHECK:   %[[SHAPE:.+]] = dg.shape_of %{{.*}} : {{.*}} -> tensor<3xi64>
//       CHECK:   dg.shape_of %{{.*}} {end = -1 : i64, start = 1 : i64} : {{.*}} -> tensor<1xi64>
//       CHECK:   dg.shape_of %{{.*}} {end = 1 : i64, start = 2 : i64} : {{.*}} -> tensor<0xi64>
//       CHECK:   dg.size %{{.*}} : {{.*}} -> tensor<i64>
//       CHECK:   dg.constant_of_shape %[[SHAPE]], dense<0> : tensor<i64> : tensor<3xi64> -> tensor<?x?x4xi64, #sym.shape<[B, L, 4]>>
//       CHECK:   dg.constant_of_shape {{.*}} : tensor<1xi64> -> tensor<?xf32, #sym.shape<[L]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @shape_of_size(%x: tensor<?x?x4xf32, #sym.shape<[B, L, 4]>>)
    -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>) {
  %0 = dg.shape_of %x : tensor<?x?x4xf32, #sym.shape<[B, L, 4]>> -> tensor<*xi64>
  %1 = dg.shape_of %x {start = 1 : i64, end = -1 : i64} : tensor<?x?x4xf32, #sym.shape<[B, L, 4]>> -> tensor<*xi64>
  %2 = dg.shape_of %x {start = 2 : i64, end = 1 : i64} : tensor<?x?x4xf32, #sym.shape<[B, L, 4]>> -> tensor<*xi64>
  %3 = dg.size %x : tensor<?x?x4xf32, #sym.shape<[B, L, 4]>> -> tensor<*xi64>
  %4 = dg.constant_of_shape %0, dense<0> : tensor<i64> : tensor<*xi64> -> tensor<*xi64>
  %5 = dg.constant_of_shape %1, dense<1.0> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>
}

// -----

// The number of non-zero elements is a fresh data-dependent symbol, named
// after the op that binds it at run time.
// CHECK-LABEL: sym.symbol @nonzero0 range [0, 2147483647] data_dependent {defined_by = "dg.nonzero 'nz'"}
//       CHECK: func.func @nonzero(
//       CHECK:   dg.nonzero {{.*}} : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<2x?xi64, #sym.shape<[2, nonzero0]>>
sym.symbol @B range [1, 8192]
sym.symbol @L range [1, 512]
func.func @nonzero(%x: tensor<?x?xf32, #sym.shape<[B, L]>>) -> tensor<*xi64> {
  %0 = dg.nonzero %x : tensor<?x?xf32, #sym.shape<[B, L]>> -> tensor<*xi64> loc("nz")
  return %0 : tensor<*xi64>
}

// -----

// NonZero of a ConstantOfShape of a non-zero value counts every element:
// no data-dependent symbol. A fill of zero (or of data) still makes one.
// CHECK-LABEL: sym.symbol @nonzero0 range [0, 2147483647] data_dependent {defined_by = "dg.nonzero 'zeros'"}
//   CHECK-NOT: sym.symbol
//       CHECK: func.func @nonzero_of_fill(
//       CHECK:   dg.nonzero {{.*}} -> tensor<1x?xi64, #sym.shape<[1, L]>>
//       CHECK:   dg.nonzero {{.*}} -> tensor<2x?xi64, #sym.shape<[2, 4*L]>>
//       CHECK:   dg.nonzero {{.*}} -> tensor<1x?xi64, #sym.shape<[1, nonzero0]>>
sym.symbol @L range [1, 512]
func.func @nonzero_of_fill(%x: tensor<?xf32, #sym.shape<[L]>>) -> (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>) {
  %0 = dg.shape_of %x : tensor<?xf32, #sym.shape<[L]>> -> tensor<*xi64>
  %1 = dg.constant_of_shape %0, dense<1> : tensor<i64> : tensor<*xi64> -> tensor<*xi64>
  %2 = dg.nonzero %1 : tensor<*xi64> -> tensor<*xi64>
  %c4 = dg.constant dense<[4]> : tensor<1xi64>
  %3 = dg.concat %c4, %0 {axis = 0 : i64} : (tensor<1xi64>, tensor<*xi64>) -> tensor<*xi64>
  %4 = dg.constant_of_shape %3, dense<-0.5> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  %5 = dg.nonzero %4 : tensor<*xf32> -> tensor<*xi64>
  %6 = dg.constant_of_shape %0, dense<0.0> : tensor<f32> : tensor<*xi64> -> tensor<*xf32>
  %7 = dg.nonzero %6 : tensor<*xf32> -> tensor<*xi64> loc("zeros")
  return %2, %5, %7 : tensor<*xi64>, tensor<*xi64>, tensor<*xi64>
}
