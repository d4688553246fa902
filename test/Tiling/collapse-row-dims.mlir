// RUN: dyncc-opt %s --split-input-file --dyncc-collapse-row-dims | FileCheck %s

// An instance norm's variance over [H, W] (dynamic) of a centred
// intermediate, its inverse broadcast back over the image with a per-channel
// scale: every op over [N, C, H, W] computes on [N, C, H*W], the statistic
// on [N, C, 1], the scale on [C, 1]. Only the kernel's input and
// destination are collapsed and its result expanded, at the boundary.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#stat = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#scale = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#flat = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @instance_variance(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<?x3x?x?xf32>, %[[S:[a-z0-9]+]]: tensor<3x1x1xf32>, %[[OUT:[a-z0-9]+]]: tensor<?x3x?x?xf32>)
//  CHECK-SAME:   dyncc.folded_rows
//   CHECK-DAG:   %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<?x3x?x?xf32> into tensor<?x3x?xf32>
//       CHECK:   %[[SQ:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%[[XC]], %[[XC]] : tensor<?x3x?xf32>, tensor<?x3x?xf32>) outs(%{{.*}} : tensor<?x3x?xf32>)
//       CHECK:   %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[SQ]] : tensor<?x3x?xf32>) outs(%{{.*}} : tensor<?x3xf32>)
//       CHECK:   %[[INV:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} outs(%[[SUM]] : tensor<?x3xf32>)
//       CHECK:   %[[STAT:.*]] = tensor.expand_shape %[[INV]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 3, 1] : tensor<?x3xf32> into tensor<?x3x1xf32>
//   CHECK-DAG:   %[[DEST:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1], [2, 3]]
//   CHECK-DAG:   %[[SC:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<3x1x1xf32> into tensor<3x1xf32>
//       CHECK:   %[[NORM:.*]] = linalg.generic {indexing_maps = [#[[ID3:.*]], #[[STAT3:.*]], #[[SCALE3:.*]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XC]], %[[STAT]], %[[SC]] : tensor<?x3x?xf32>, tensor<?x3x1xf32>, tensor<3x1xf32>) outs(%[[DEST]] : tensor<?x3x?xf32>)
//       CHECK:   %[[E:.*]] = tensor.expand_shape %[[NORM]] {{\[}}[0], [1], [2, 3]]
//       CHECK:   return %[[E]] : tensor<?x3x?x?xf32>
func.func @instance_variance(%x: tensor<?x3x?x?xf32>, %s: tensor<3x1x1xf32>, %out: tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x3x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x3x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x3x?x?xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %x : tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>) outs(%e : tensor<?x3x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x3x?x?xf32>
  %se = tensor.empty(%n) : tensor<?x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%se : tensor<?x3xf32>) -> tensor<?x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%sq : tensor<?x3x?x?xf32>) outs(%fill : tensor<?x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x3xf32>
  %inv = linalg.generic {indexing_maps = [#flat], iterator_types = ["parallel", "parallel"]} outs(%sum : tensor<?x3xf32>) {
  ^bb0(%o: f32):
    %r = math.rsqrt %o : f32
    linalg.yield %r : f32
  } -> tensor<?x3xf32>
  %stat = tensor.expand_shape %inv [[0], [1, 2, 3]] output_shape [%n, 3, 1, 1] : tensor<?x3xf32> into tensor<?x3x1x1xf32>
  %norm = linalg.generic {indexing_maps = [#id, #stat, #scale, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %stat, %s : tensor<?x3x?x?xf32>, tensor<?x3x1x1xf32>, tensor<3x1x1xf32>) outs(%out : tensor<?x3x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.mulf %m, %c : f32
    linalg.yield %r : f32
  } -> tensor<?x3x?x?xf32>
  return %norm : tensor<?x3x?x?xf32>
}

// -----

// A LayerNorm's statistics over [4, 8] (static) kept with keepdims: the
// [N, 1, 1] statistic is read as [N, 1].
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#stat = affine_map<(d0, d1, d2) -> (d0, 0, 0)>
#rows = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @static_rows(
//  CHECK-SAME:   dyncc.folded_rows
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<?x32xf32>) outs(%{{.*}} : tensor<?xf32>)
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<?x1xf32>) outs(%{{.*}} : tensor<?x32xf32>)
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 4, 8] : tensor<?x32xf32> into tensor<?x4x8xf32>
func.func @static_rows(%x: tensor<?x4x8xf32>, %out: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %se = tensor.empty(%n) : tensor<?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%se : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<?x4x8xf32>) outs(%fill : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %stat = tensor.expand_shape %sum [[0, 1, 2]] output_shape [%n, 1, 1] : tensor<?xf32> into tensor<?x1x1xf32>
  %centred = linalg.generic {indexing_maps = [#id, #stat, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %stat : tensor<?x4x8xf32>, tensor<?x1x1xf32>) outs(%out : tensor<?x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x4x8xf32>
  return %centred : tensor<?x4x8xf32>
}

// -----

// A scale broadcast over some of the reduced loops only ([C, 1, 1] over a
// LayerNorm's [C, H, W]) is read neither as a row nor as one value per row:
// the kernel keeps its loops.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scale = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @partial_broadcast(
//   CHECK-NOT:   dyncc.folded_rows
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   return
func.func @partial_broadcast(%x: tensor<?x3x?x?xf32>, %s: tensor<3x1x1xf32>, %out: tensor<?xf32>) -> tensor<?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x3x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x3x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x3x?x?xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #scale, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<?x3x?x?xf32>, tensor<3x1x1xf32>) outs(%e : tensor<?x3x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x3x?x?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%scaled : tensor<?x3x?x?xf32>) outs(%fill : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %sum : tensor<?xf32>
}

// -----

// Two reductions over several loops each, but different ones (a sum over
// [H, W], another over [C, H, W]): no one row shape, so the kernel keeps
// its loops. (A reduction of one loop besides them, over a statistic, would
// not stop the collapse.)
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#hw = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#chw = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @different_rows(
//   CHECK-NOT:   dyncc.folded_rows
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   return
func.func @different_rows(%x: tensor<?x3x?x?xf32>, %out: tensor<?x3xf32>, %out2: tensor<?xf32>) -> (tensor<?x3xf32>, tensor<?xf32>) attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%out : tensor<?x3xf32>) -> tensor<?x3xf32>
  %hw = linalg.generic {indexing_maps = [#id, #hw], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<?x3x?x?xf32>) outs(%f : tensor<?x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out2 : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #chw], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<?x3x?x?xf32>) outs(%fill : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %hw, %sum : tensor<?x3xf32>, tensor<?xf32>
}

// -----

// A column sum over [N, H] reduces its trailing loops too, which the input
// reads in order: they collapse into one column loop over N*H (a column
// reduction still, which keeps the tile levels).
#in = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
#col = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @columns(
//  CHECK-SAME:   dyncc.folded_rows
//       CHECK:   %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x?x16xf32> into tensor<?x16xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x16xf32>)
func.func @columns(%x: tensor<?x?x16xf32>, %out: tensor<16xf32>) -> tensor<16xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#in, #col], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<?x?x16xf32>) outs(%fill : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %sum : tensor<16xf32>
}

// -----

// A statistic broadcast over [1, W] keeps the unit row dimension the image
// has: `[1, C, 1, 1]` read at (d0, d1, d2, 0). Its last two dimensions are
// units either way, one value per row: it is read as `[1, C, 1]`.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#stat = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// CHECK-DAG:   #[[STAT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @unit_row_dim(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<1x?x1x?xf32>, %[[S:[a-z0-9]+]]: tensor<1x?x1x1xf32>
//  CHECK-SAME:   dyncc.folded_rows
//   CHECK-DAG:   %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<1x?x1x?xf32> into tensor<1x?x?xf32>
//   CHECK-DAG:   %[[SC:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1], [2, 3]] : tensor<1x?x1x1xf32> into tensor<1x?x1xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.*}}, #[[STAT]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XC]], %[[SC]] : tensor<1x?x?xf32>, tensor<1x?x1xf32>)
func.func @unit_row_dim(%x: tensor<1x?x1x?xf32>, %s: tensor<1x?x1x1xf32>, %out: tensor<1x?x1x?xf32>, %sum: tensor<1x?xf32>) -> (tensor<1x?x1x?xf32>, tensor<1x?xf32>) attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %centred = linalg.generic {indexing_maps = [#id, #stat, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<1x?x1x?xf32>, tensor<1x?x1x1xf32>) outs(%out : tensor<1x?x1x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x?x1x?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%sum : tensor<1x?xf32>) -> tensor<1x?xf32>
  %squares = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%centred : tensor<1x?x1x?xf32>) outs(%fill : tensor<1x?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x?xf32>
  return %centred, %squares : tensor<1x?x1x?xf32>, tensor<1x?xf32>
}

// -----

// One image of one channel: the statistic `[1, 1]` reads the kept loops
// at their unit sizes, which is no broadcast over the row. The reduction's
// destination stays `(d0, d1)`, its loops kept.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG:   #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @one_channel(
//  CHECK-SAME:   dyncc.folded_rows
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[IN]]], iterator_types = ["parallel", "parallel", "parallel"]}
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}{{.*}} outs(%{{.*}} : tensor<1x1xf32>)
func.func @one_channel(%x: tensor<1x1x?x?xf32>, %out: tensor<1x1xf32>) -> tensor<1x1xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %h = tensor.dim %x, %c2 : tensor<1x1x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<1x1x?x?xf32>
  %e = tensor.empty(%h, %w) : tensor<1x1x?x?xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x1x?x?xf32>) outs(%e : tensor<1x1x?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.absf %a : f32
    linalg.yield %r : f32
  } -> tensor<1x1x?x?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<1x1xf32>) -> tensor<1x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%abs : tensor<1x1x?x?xf32>) outs(%fill : tensor<1x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x1xf32>
  return %sum : tensor<1x1xf32>
}

// -----

// A body that indexes a reduced loop (its position along the row), and a
// read of the row transposed: the kernels keep their loops.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#t = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#rows = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @indexed(
//   CHECK-NOT:   dyncc.folded_rows
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   return
func.func @indexed(%x: tensor<?x4x8xf32>, %out: tensor<?xf32>) -> tensor<?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<?x4x8xf32>) outs(%fill : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 2 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    %m = arith.mulf %a, %f : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %sum : tensor<?xf32>
}

// CHECK-LABEL: func.func @transposed(
//   CHECK-NOT:   dyncc.folded_rows
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   return
func.func @transposed(%x: tensor<?x8x4xf32>, %out: tensor<?xf32>) -> tensor<?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#t, #rows], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<?x8x4xf32>) outs(%fill : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %sum : tensor<?xf32>
}
