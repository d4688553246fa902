// RUN: dyncc-opt %s --split-input-file --dyncc-split-k --verify-diagnostics | FileCheck %s

// An f16 layer whose batch is folded into M accumulates in an f32 empty
// tensor of the destination's collapse: its rows are the product of the
// destination's first two sizes. The split's workspace is [2, B, S, 64]
// f32, viewed collapsed like the accumulator.
// CHECK-LABEL: func.func @folded_f16(
// CHECK-LABEL: func.func @folded_f16_part(
//  CHECK-SAME:   tensor<2x?x?x64xf32>
//       CHECK:   tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<2x?x?x64xf32> into tensor<2x?x64xf32>
// CHECK-LABEL: func.func @folded_f16_sum(
#map = affine_map<()[s0, s1] -> (s0 * s1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @folded_f16(%arg0: index, %arg1: index, %x: tensor<?x?x64xf16>, %w: tensor<64x64xf16>, %out: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> attributes {dyncc.folded_batch, dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 16, 32>, k_step = 16 : i64, split_k = 2 : i64, thread = array<i64: 2, 4>}} {
  %cst = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %out, %c0 : tensor<?x?x64xf16>
  %dim_0 = tensor.dim %out, %c1 : tensor<?x?x64xf16>
  %0 = affine.apply #map()[%dim, %dim_0]
  %1 = tensor.empty(%0) : tensor<?x64xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %dim_1 = tensor.dim %x, %c0 : tensor<?x?x64xf16>
  %dim_2 = tensor.dim %x, %c1 : tensor<?x?x64xf16>
  %collapsed = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %3 = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %w : tensor<?x64xf16>, tensor<64x64xf16>) outs(%2 : tensor<?x64xf32>) {
  ^bb0(%in: f16, %in_3: f16, %o3: f32):
    %6 = arith.extf %in : f16 to f32
    %7 = arith.extf %in_3 : f16 to f32
    %8 = arith.mulf %6, %7 : f32
    %9 = arith.addf %o3, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<?x64xf32>
  %collapsed_3 = tensor.collapse_shape %out [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %4 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<?x64xf32>) outs(%collapsed_3 : tensor<?x64xf16>) {
  ^bb0(%in: f32, %o4: f16):
    %6 = arith.truncf %in : f32 to f16
    linalg.yield %6 : f16
  } -> tensor<?x64xf16>
  %expanded = tensor.expand_shape %4 [[0, 1], [2]] output_shape [%dim_1, %dim_2, 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
  return %expanded : tensor<?x?x64xf16>
}

// -----

// The rows counted twice from one size: not the destination's collapse.
#map = affine_map<()[s0, s1] -> (s0 * s1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{kernel 'size_twice': cannot split K into 2 parts (config 'block 16x32 thread 2x4 k 16 split_k 2'): its accumulator is not of the destination's shape}}
func.func @size_twice(%arg0: index, %arg1: index, %x: tensor<?x?x64xf16>, %w: tensor<64x64xf16>, %out: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> attributes {dyncc.folded_batch, dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 16, 32>, k_step = 16 : i64, split_k = 2 : i64, thread = array<i64: 2, 4>}} {
  %cst = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %out, %c0 : tensor<?x?x64xf16>
  %dim_0 = tensor.dim %out, %c1 : tensor<?x?x64xf16>
  %0 = affine.apply #map()[%dim, %dim]
  %1 = tensor.empty(%0) : tensor<?x64xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %dim_1 = tensor.dim %x, %c0 : tensor<?x?x64xf16>
  %dim_2 = tensor.dim %x, %c1 : tensor<?x?x64xf16>
  %collapsed = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %3 = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %w : tensor<?x64xf16>, tensor<64x64xf16>) outs(%2 : tensor<?x64xf32>) {
  ^bb0(%in: f16, %in_3: f16, %o3: f32):
    %6 = arith.extf %in : f16 to f32
    %7 = arith.extf %in_3 : f16 to f32
    %8 = arith.mulf %6, %7 : f32
    %9 = arith.addf %o3, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<?x64xf32>
  %collapsed_3 = tensor.collapse_shape %out [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %4 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<?x64xf32>) outs(%collapsed_3 : tensor<?x64xf16>) {
  ^bb0(%in: f32, %o4: f16):
    %6 = arith.truncf %in : f32 to f16
    linalg.yield %6 : f16
  } -> tensor<?x64xf16>
  %expanded = tensor.expand_shape %4 [[0, 1], [2]] output_shape [%dim_1, %dim_2, 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
  return %expanded : tensor<?x?x64xf16>
}

// -----

// A row more than the destination has.
#map = affine_map<()[s0, s1] -> (s0 * s1 + 1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{kernel 'one_more_row': cannot split K into 2 parts (config 'block 16x32 thread 2x4 k 16 split_k 2'): its accumulator is not of the destination's shape}}
func.func @one_more_row(%arg0: index, %arg1: index, %x: tensor<?x?x64xf16>, %w: tensor<64x64xf16>, %out: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> attributes {dyncc.folded_batch, dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 16, 32>, k_step = 16 : i64, split_k = 2 : i64, thread = array<i64: 2, 4>}} {
  %cst = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %out, %c0 : tensor<?x?x64xf16>
  %dim_0 = tensor.dim %out, %c1 : tensor<?x?x64xf16>
  %0 = affine.apply #map()[%dim, %dim_0]
  %1 = tensor.empty(%0) : tensor<?x64xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %dim_1 = tensor.dim %x, %c0 : tensor<?x?x64xf16>
  %dim_2 = tensor.dim %x, %c1 : tensor<?x?x64xf16>
  %collapsed = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %3 = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %w : tensor<?x64xf16>, tensor<64x64xf16>) outs(%2 : tensor<?x64xf32>) {
  ^bb0(%in: f16, %in_3: f16, %o3: f32):
    %6 = arith.extf %in : f16 to f32
    %7 = arith.extf %in_3 : f16 to f32
    %8 = arith.mulf %6, %7 : f32
    %9 = arith.addf %o3, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<?x64xf32>
  %collapsed_3 = tensor.collapse_shape %out [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %4 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<?x64xf32>) outs(%collapsed_3 : tensor<?x64xf16>) {
  ^bb0(%in: f32, %o4: f16):
    %6 = arith.truncf %in : f32 to f16
    linalg.yield %6 : f16
  } -> tensor<?x64xf16>
  %expanded = tensor.expand_shape %4 [[0, 1], [2]] output_shape [%dim_1, %dim_2, 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
  return %expanded : tensor<?x?x64xf16>
}

// -----

// The product of the sizes' sum.
#map = affine_map<()[s0, s1] -> (s0 + s1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{kernel 'sum_of_sizes': cannot split K into 2 parts (config 'block 16x32 thread 2x4 k 16 split_k 2'): its accumulator is not of the destination's shape}}
func.func @sum_of_sizes(%arg0: index, %arg1: index, %x: tensor<?x?x64xf16>, %w: tensor<64x64xf16>, %out: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> attributes {dyncc.folded_batch, dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 16, 32>, k_step = 16 : i64, split_k = 2 : i64, thread = array<i64: 2, 4>}} {
  %cst = arith.constant 0.000000e+00 : f32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %out, %c0 : tensor<?x?x64xf16>
  %dim_0 = tensor.dim %out, %c1 : tensor<?x?x64xf16>
  %0 = affine.apply #map()[%dim, %dim_0]
  %1 = tensor.empty(%0) : tensor<?x64xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %dim_1 = tensor.dim %x, %c0 : tensor<?x?x64xf16>
  %dim_2 = tensor.dim %x, %c1 : tensor<?x?x64xf16>
  %collapsed = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %3 = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %w : tensor<?x64xf16>, tensor<64x64xf16>) outs(%2 : tensor<?x64xf32>) {
  ^bb0(%in: f16, %in_3: f16, %o3: f32):
    %6 = arith.extf %in : f16 to f32
    %7 = arith.extf %in_3 : f16 to f32
    %8 = arith.mulf %6, %7 : f32
    %9 = arith.addf %o3, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<?x64xf32>
  %collapsed_3 = tensor.collapse_shape %out [[0, 1], [2]] : tensor<?x?x64xf16> into tensor<?x64xf16>
  %4 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<?x64xf32>) outs(%collapsed_3 : tensor<?x64xf16>) {
  ^bb0(%in: f32, %o4: f16):
    %6 = arith.truncf %in : f32 to f16
    linalg.yield %6 : f16
  } -> tensor<?x64xf16>
  %expanded = tensor.expand_shape %4 [[0, 1], [2]] output_shape [%dim_1, %dim_2, 64] : tensor<?x64xf16> into tensor<?x?x64xf16>
  return %expanded : tensor<?x?x64xf16>
}
