// RUN: dyncc-opt %s --split-input-file --dyncc-assign-tile-config --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @gemm(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 32, 64>, k_step = 16 : i64, thread = array<i64: 4, 4>}
func.func @gemm(%b: index, %out: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {dyncc.kernel, dyncc.kind = "gemm"} {
  return %out : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @elementwise3d(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 1, 4, 128>, k_step = 64 : i64, thread = array<i64: 1, 1, 4>}
func.func @elementwise3d(%out: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> attributes {dyncc.kernel, dyncc.kind = "elementwise"} {
  return %out : tensor<2x?x64xf32>
}

// A conv's k-step (input channels per step) keeps the unrolled product of a
// step to at most 128 multiply-adds per output: 16 channels of a 1x1 window,
// 8 of a 3x3, 2 of a 7x7.
#cv_in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#cv_w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#cv_out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#pw_in = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
#pw_w = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
#pw_out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv3x3(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 1, 8, 4, 32>, k_step = 8 : i64, thread = array<i64: 1, 2, 1, 4>}
func.func @conv3x3(%x: tensor<?x64x?x?xf32>, %w: tensor<32x64x3x3xf32>, %out: tensor<?x32x?x?xf32>) -> tensor<?x32x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %0 = linalg.generic {indexing_maps = [#cv_in, #cv_w, #cv_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<32x64x3x3xf32>) outs(%out : tensor<?x32x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x32x?x?xf32>
  return %0 : tensor<?x32x?x?xf32>
}

// CHECK-LABEL: func.func @conv1x1(
//  CHECK-SAME:   k_step = 16 : i64
func.func @conv1x1(%x: tensor<?x64x?x?xf32>, %w: tensor<32x64xf32>, %out: tensor<?x32x?x?xf32>) -> tensor<?x32x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv"} {
  %0 = linalg.generic {indexing_maps = [#pw_in, #pw_w, #pw_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x64x?x?xf32>, tensor<32x64xf32>) outs(%out : tensor<?x32x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x32x?x?xf32>
  return %0 : tensor<?x32x?x?xf32>
}

// Column reductions: a max over the 4 channels of [N, 4, L] and a
// division by it over the whole space, written in order: the result spans
// the reduced axis at place 2 from its end; the space without it is [N x
// L].
#col_id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col_stat = affine_map<(d0, d1, d2) -> (d0, d2)>
#col_t = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @column_norm(
//  CHECK-SAME:   dyncc.row_problem = {batch = "1", bytes_per_element = 8 : i64, column = "4", column_lanes = 1 : i64, column_place = 2 : i64, element_bytes = 4 : i64, length = "__arg1_d2", planes = "1", reduction = 0 : i64, rows = "__arg1_d0", scalar_access = 0 : i64}
func.func @column_norm(%x: tensor<?x4x?xf32>, %out: tensor<?x4x?xf32>) -> tensor<?x4x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %init = tensor.empty(%n, %l) : tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %0 = linalg.generic {indexing_maps = [#col_id, #col_stat, #col_id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<?x4x?xf32>, tensor<?x?xf32>) outs(%out : tensor<?x4x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<?x4x?xf32>
  return %0 : tensor<?x4x?xf32>
}

// The same with an operand of the whole space read transposed: the
// result's axis at that place need not be the reduced one, so no problem.
// CHECK-LABEL: func.func @column_transposed(
//   CHECK-NOT:   dyncc.row_problem
//       CHECK: return
func.func @column_transposed(%x: tensor<?x4x?xf32>, %y: tensor<?x?x4xf32>, %out: tensor<?x4x?xf32>) -> tensor<?x4x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %init = tensor.empty(%n, %l) : tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %0 = linalg.generic {indexing_maps = [#col_t, #col_stat, #col_id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %max : tensor<?x?x4xf32>, tensor<?x?xf32>) outs(%out : tensor<?x4x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<?x4x?xf32>
  return %0 : tensor<?x4x?xf32>
}

// A result whose dimension at the reduced loop's place is not the reduced
// extent (8 where the max folds 4) is not that axis: no problem.
#col_half = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-LABEL: func.func @column_other_axis(
//   CHECK-NOT:   dyncc.row_problem
//       CHECK: return
func.func @column_other_axis(%x: tensor<?x4x?xf32>, %out: tensor<?x8x?xf32>) -> tensor<?x8x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %init = tensor.empty(%n, %l) : tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %0 = linalg.generic {indexing_maps = [#col_half, #col_stat, #col_id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<?x4x?xf32>, tensor<?x?xf32>) outs(%out : tensor<?x8x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<?x8x?xf32>
  return %0 : tensor<?x8x?xf32>
}

// A column max kept as [N, 1, L] (keepdims): its space is the result's,
// the unit dimension its rows. Flattened to [N * L], the result's
// dimensions are not those code generation tiles the reduction by: no
// problem.
// CHECK-LABEL: func.func @column_keepdims(
//  CHECK-SAME:   dyncc.row_problem = {batch = "__arg0_d0", bytes_per_element = 4 : i64, column = "4", column_lanes = 1 : i64, column_place = 0 : i64, element_bytes = 4 : i64, length = "__arg0_d2", planes = "1", reduction = 0 : i64, rows = "1", scalar_access = 0 : i64}
func.func @column_keepdims(%x: tensor<?x4x?xf32>, %out: tensor<?x1x?xf32>) -> tensor<?x1x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %init = tensor.empty(%n, %l) : tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %kept = tensor.expand_shape %max [[0], [1, 2]] output_shape [%n, 1, %l] : tensor<?x?xf32> into tensor<?x1x?xf32>
  return %kept : tensor<?x1x?xf32>
}

// CHECK-LABEL: func.func @column_flattened(
//   CHECK-NOT:   dyncc.row_problem
//       CHECK: return
func.func @column_flattened(%x: tensor<?x4x?xf32>, %out: tensor<?xf32>) -> tensor<?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %init = tensor.empty(%n, %l) : tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %flat = tensor.collapse_shape %max [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %flat : tensor<?xf32>
}

// A column variance: its sum of squares reads the kernel's argument and
// the mean, a statistic per column (read by the sum's output map), so
// with the reduced loop innermost both are rows: a split over lanes is a
// candidate (`column_lanes = 1`).
// CHECK-LABEL: func.func @column_variance(
//  CHECK-SAME:   column_lanes = 1 : i64, column_place = 0 : i64
func.func @column_variance(%x: tensor<?x4x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%fill : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %var = linalg.generic {indexing_maps = [#col_id, #col_stat, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %sum : tensor<?x4x?xf32>, tensor<?x?xf32>) outs(%fill : tensor<?x?xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %s = arith.addf %d2, %o : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %var : tensor<?x?xf32>
}

// A column sum of squares the kernel computes over the whole space first:
// the sum reads that intermediate through a permutation once its reduced
// loop is innermost, each element its own column's (`column_lanes = 1`).
// CHECK-LABEL: func.func @column_sum_of_intermediate(
//  CHECK-SAME:   column_lanes = 1 : i64, column_place = 0 : i64
func.func @column_sum_of_intermediate(%x: tensor<?x4x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x4x?xf32>
  %e = tensor.empty(%n, %l) : tensor<?x4x?xf32>
  %sq = linalg.generic {indexing_maps = [#col_id, #col_id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x4x?xf32>) outs(%e : tensor<?x4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x4x?xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#col_id, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%sq : tensor<?x4x?xf32>) outs(%fill : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %sum : tensor<?x?xf32>
}

// A column sum scaled by a per-channel value the kernel computes: the sum
// reads it by the reduced loop alone, neither a permutation of the space
// nor one value per column, so no row tiling holds it (`column_lanes =
// 0`: the column tiles alone).
// CHECK-LABEL: func.func @column_sum_of_channel_scale(
//  CHECK-SAME:   column_lanes = 0 : i64, column_place = 0 : i64
#col_chan = affine_map<(d0, d1, d2) -> (d1)>
#chan = affine_map<(d0) -> (d0)>
func.func @column_sum_of_channel_scale(%x: tensor<?x4x?xf32>, %w: tensor<4xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {dyncc.kernel, dyncc.kind = "reduce"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#chan, #chan], iterator_types = ["parallel"]}
      ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x2 = math.exp %a : f32
    linalg.yield %x2 : f32
  } -> tensor<4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#col_id, #col_chan, #col_stat], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %s : tensor<?x4x?xf32>, tensor<4xf32>) outs(%fill : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  } -> tensor<?x?xf32>
  return %sum : tensor<?x?xf32>
}

// An existing configuration is kept.
// CHECK-LABEL: func.func @given(
//  CHECK-SAME:   dyncc.tile_config = {block = array<i64: 16, 16>, thread = array<i64: 2, 2>}
func.func @given(%out: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 16, 16>, thread = array<i64: 2, 2>}} {
  return %out : tensor<?x64xf32>
}

// Not a kernel: untouched.
// CHECK-LABEL: func.func @host(
//   CHECK-NOT:   dyncc.tile_config
func.func @host(%out: tensor<?x64xf32>) -> tensor<?x64xf32> {
  return %out : tensor<?x64xf32>
}

// -----

// expected-error @+1 {{'func.func' op has an invalid dyncc.tile_config for an output of rank 2}}
func.func @bad(%out: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 16, 16>, thread = array<i64: 3, 2>}} {
  return %out : tensor<?x64xf32>
}
