// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dyncc-tile-and-fuse),canonicalize,cse)' --verify-diagnostics | FileCheck %s

// The epilogue (root) is tiled to blocks and threads; the matmul and its
// fill are fused into the thread tile, computing in place on the output.
// CHECK-LABEL: func.func @gemm_epilogue(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x64xf32>, %[[W:[a-zA-Z0-9]+]]: tensor<64x32xf32>, %[[BIAS:[a-zA-Z0-9]+]]: tensor<32xf32>, %[[OUT:[a-zA-Z0-9]+]]: tensor<?x32xf32>
//       CHECK:   %[[M:.+]] = tensor.dim %[[X]], %c0
//       CHECK:   scf.forall (%[[I:.+]], %[[J:.+]]) = (0, 0) to (%[[M]], 32) step (32, 64) shared_outs(%[[ACC:.+]] = %[[OUT]])
//       CHECK:     affine.min
//       CHECK:     scf.forall ({{.*}}) = (0, 0) to ({{.*}}, 32) step (4, 4)
//       CHECK:       linalg.fill
//       CHECK:       linalg.matmul
//       CHECK:       linalg.generic
//       CHECK:         arith.addf
//       CHECK:       tensor.parallel_insert_slice
//       CHECK:     } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
//   CHECK-NOT:   linalg.matmul
#bcast = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_epilogue(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %out: tensor<?x32xf32>) -> tensor<?x32xf32>
    attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x32xf32>) -> tensor<?x32xf32>
  %1 = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%0 : tensor<?x32xf32>) -> tensor<?x32xf32>
  %2 = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<32xf32>) outs(%1 : tensor<?x32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<?x32xf32>
  return %2 : tensor<?x32xf32>
}

// -----

// expected-error @+1 {{'func.func' op has no valid dyncc.tile_config}}
func.func @no_config(%out: tensor<?xf32>) -> tensor<?xf32> attributes {dyncc.kernel} {
  return %out : tensor<?xf32>
}

// -----

// Two results: each root gets its own block forall, and the grid is the
// larger of the two (the shorter one's extra blocks are guarded off).
// CHECK-LABEL: func.func @two_results(
//  CHECK-SAME:     dyncc.grid = {{\[\["ceildiv\(__arg0_d0, 128\)", "ceildiv\(__arg1_d0, 128\)"\], \["1"\], \["1"\]\]}}
//       CHECK:   scf.forall {{.*}} step (128)
//       CHECK:   } {mapping = [#gpu.block<x>]}
//       CHECK:   scf.forall {{.*}} step (128)
//       CHECK:   } {mapping = [#gpu.block<x>]}
#id1 = affine_map<(d0) -> (d0)>
func.func @two_results(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 128>, thread = array<i64: 1>}} {
  %0 = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%a : tensor<?xf32>) {
  ^bb0(%o: f32):
    %r = arith.negf %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %1 = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%b : tensor<?xf32>) {
  ^bb0(%o: f32):
    %r = math.exp %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}

// -----

// Rank 5: x, y and z take the three innermost tiled dimensions and the two
// outer ones become linear block dimensions folded into z; threads only
// distribute the innermost three. The grid's z is the product.
// CHECK-LABEL: func.func @rank5(
//  CHECK-SAME:     dyncc.grid = {{\[\["ceildiv\(__arg1_d4, 64\)"\], \["__arg1_d3"\], \["__arg1_d0\*__arg1_d1\*__arg1_d2"\]\]}}
//       CHECK:   scf.forall
//       CHECK:     scf.forall
//       CHECK:     } {mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>, #gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @rank5(%x: tensor<?x?x?x?x?xf32>, %out: tensor<?x?x?x?x?xf32>) -> tensor<?x?x?x?x?xf32> attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 1, 1, 1, 1, 64>, thread = array<i64: 1, 1, 1, 1, 4>}} {
  %0 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x?x?x?xf32>) outs(%out : tensor<?x?x?x?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.negf %i : f32
    linalg.yield %r : f32
  } -> tensor<?x?x?x?x?xf32>
  return %0 : tensor<?x?x?x?x?xf32>
}

// -----

// A row reduction with a k-step: the exponentials (fused into the sum
// before tiling) are computed in 32-wide steps of a sequential reduction
// loop, and the accumulator's fill stays before the loop.
// CHECK-LABEL: func.func @row_sum_exp(
//       CHECK:   scf.forall
//       CHECK:     scf.forall
//       CHECK:       linalg.fill
//       CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
//   CHECK-NOT:         linalg.fill
//       CHECK:         math.exp
//       CHECK:         arith.addf
//       CHECK:         scf.yield
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sum_exp(%x: tensor<?x?xf32>, %out: tensor<?xf32>) -> tensor<?xf32> attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 8>, thread = array<i64: 1>, k_step = 32 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e0 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %e = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e0 : tensor<?x?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%out : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<?x?xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.addf %o, %i : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

// A padded conv input is not padded whole per block: the pad is deferred to
// the k-step loop over input channels, where it pads one step's window of
// one thread's outputs (a window wholly in the padding is generated). Padded
// per block, it would hold every input channel. The loop bounds are the
// arguments' dimensions, not the pad's.
// CHECK-LABEL: func.func @conv_padded_input(
//   CHECK-NOT:   tensor.pad
//       CHECK:   scf.forall ({{.*}}) = (0, 0, 0) to (8, %{{.*}}, %{{.*}}) step (1, 4, 32)
//   CHECK-NOT:     tensor.pad
//       CHECK:     scf.forall
//   CHECK-NOT:       tensor.pad
//       CHECK:       scf.for %{{.*}} = %c0 to %c32 step %c16
//       CHECK:         %[[WINDOW:.+]] = scf.if
//       CHECK:           tensor.generate
//       CHECK:         } else {
//       CHECK:           %[[SRC:.+]] = tensor.extract_slice {{.*}} : tensor<32x?x?xf32> to tensor<16x?x?xf32>
//       CHECK:           tensor.pad %[[SRC]]
//       CHECK:         linalg.generic {{.*}} ins(%[[WINDOW]], %{{.*}} : tensor<16x?x?xf32>, tensor<1x16x3x3xf32>)
//       CHECK:           arith.mulf
//       CHECK:         scf.yield
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv_padded_input(%x: tensor<1x32x?x?xf32>, %w: tensor<8x32x3x3xf32>, %out: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 1, 1, 4, 32>, thread = array<i64: 1, 1, 1, 4>, k_step = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x32x?x?xf32> to tensor<1x32x?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%out : tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  %c = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%p, %w : tensor<1x32x?x?xf32>, tensor<8x32x3x3xf32>) outs(%f : tensor<1x8x?x?xf32>) {
  ^bb0(%i: f32, %k: f32, %o: f32):
    %m = arith.mulf %i, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x?x?xf32>
  return %c : tensor<1x8x?x?xf32>
}

// -----

// A k-step per reduction loop (`k 3x1x7`, a stem's 7x7 window over 3
// channels): each step takes the 3 channels, one filter row and its 7
// columns, so the block walks 7 steps (one loop over the filter's rows),
// where one k-step for every loop steps one tap at a time (147 steps) or
// unrolls all 147 taps. The shared window holds 3 channels x the 7 input
// rows of 4 output rows at stride 2 x the 21 columns of 8 outputs and 7
// taps; the weights one filter row of each channel.
// CHECK-LABEL: func.func @conv_per_loop_steps(
//   CHECK-NOT:   scf.for %
//       CHECK:   scf.for %{{.*}} = %c0 to %c7 step %c1
//   CHECK-NOT:   scf.for %
//       CHECK:     bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<3x7x21xf32>
//       CHECK:     bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x3x1x7xf32>
//       CHECK:     linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x1x?xf32>, tensor<4x3x1x7xf32>)
//   CHECK-NOT:   scf.for %
//       CHECK:   return
#in7 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#w7 = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out7 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv_per_loop_steps(%x: tensor<1x3x?x?xf32>, %w: tensor<16x3x7x7xf32>, %out: tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32> attributes {dyncc.kernel, dyncc.kind = "conv", dyncc.tile_config = {block = array<i64: 1, 16, 4, 8>, thread = array<i64: 1, 4, 1, 2>, k_step = 7 : i64, k_steps = array<i64: 3, 1, 7>}} {
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%out : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %c = linalg.generic {indexing_maps = [#in7, #w7, #out7], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x3x?x?xf32>, tensor<16x3x7x7xf32>) outs(%f : tensor<1x16x?x?xf32>) {
  ^bb0(%i: f32, %k: f32, %o: f32):
    %m = arith.mulf %i, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x?x?xf32>
  return %c : tensor<1x16x?x?xf32>
}

// -----

// An epilogue that computes in place and reads the GEMM's result twice
// (x * (x + 1), as GELU reads it three times) becomes one op reading it
// once, so the GEMM is fused into the tile once, not once per reader.
// CHECK-LABEL: func.func @gemm_read_twice(
//       CHECK:   linalg.matmul
//   CHECK-NOT:   linalg.matmul
//       CHECK:   linalg.generic
//   CHECK-NOT:   linalg.matmul
//       CHECK:     arith.addf
//       CHECK:     arith.addf
//       CHECK:     arith.mulf
//   CHECK-NOT:   linalg.matmul
//       CHECK:   return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_read_twice(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) -> tensor<?x32xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>, k_step = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %0 = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%0 : tensor<?x32xf32>) -> tensor<?x32xf32>
  // A bias, in place on the product (as the importer leaves it) ...
  %1 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%mm : tensor<?x32xf32>) {
  ^bb0(%o: f32):
    %b = arith.addf %o, %one : f32
    linalg.yield %b : f32
  } -> tensor<?x32xf32>
  // ... then out = x + 1, out = out * x: two readers of it, in place on %out.
  %2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%1 : tensor<?x32xf32>) outs(%out : tensor<?x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %one : f32
    linalg.yield %s : f32
  } -> tensor<?x32xf32>
  %3 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%1 : tensor<?x32xf32>) outs(%2 : tensor<?x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %p = arith.mulf %o, %in : f32
    linalg.yield %p : f32
  } -> tensor<?x32xf32>
  return %3 : tensor<?x32xf32>
}

// -----

// A grouped 1x1 conv with a batch of 1 fixed in the model, then its Relu in
// place. Dropping the unit dimension leaves the conv on [4, 2, H, W] and the
// Relu reading it through a collapse and an expand that do not compose; the
// reshapes move below the Relu, which then computes on [4, 2, H, W], so the
// conv is fused into its tiles. Nothing is computed outside the block tiles.
// CHECK-LABEL: func.func @grouped_conv_relu(
//   CHECK-NOT:   linalg.generic
//       CHECK:   scf.forall {{.*}} -> (tensor<4x2x?x?xf32>)
//       CHECK:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
//       CHECK:       arith.maximumf
//       CHECK:   } {mapping = [#gpu.block<linear_dim_0>, #gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
//  CHECK-NEXT:   tensor.collapse_shape
//  CHECK-NEXT:   tensor.expand_shape
//  CHECK-NEXT:   return
#gc_bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#gc_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#gc_in = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#gc_w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#gc_out = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @grouped_conv_relu(%h: index, %w: index, %x: tensor<1x8x?x?xf32>, %weights: tensor<8x2x1x1xf32>, %bias: tensor<8xf32>, %out: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "conv", dyncc.tile_config = {block = array<i64: 1, 8, 4, 32>, k_step = 16 : i64, thread = array<i64: 1, 2, 1, 4>}} {
  %zero = arith.constant 0.0 : f32
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %0 = linalg.generic {indexing_maps = [#gc_bias, #gc_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<8xf32>) outs(%out : tensor<1x8x?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x?x?xf32>
  %xh = tensor.dim %x, %c2 : tensor<1x8x?x?xf32>
  %xw = tensor.dim %x, %c3 : tensor<1x8x?x?xf32>
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [1, 4, 2, %xh, %xw] : tensor<1x8x?x?xf32> into tensor<1x4x2x?x?xf32>
  %wg = tensor.expand_shape %weights [[0, 1], [2], [3], [4]] output_shape [4, 2, 2, 1, 1] : tensor<8x2x1x1xf32> into tensor<4x2x2x1x1xf32>
  %og = tensor.expand_shape %0 [[0], [1, 2], [3], [4]] output_shape [1, 4, 2, %xh, %xw] : tensor<1x8x?x?xf32> into tensor<1x4x2x?x?xf32>
  %1 = linalg.generic {indexing_maps = [#gc_in, #gc_w, #gc_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xg, %wg : tensor<1x4x2x?x?xf32>, tensor<4x2x2x1x1xf32>) outs(%og : tensor<1x4x2x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x2x?x?xf32>
  %c = tensor.collapse_shape %1 [[0], [1, 2], [3], [4]] : tensor<1x4x2x?x?xf32> into tensor<1x8x?x?xf32>
  %2 = linalg.generic {indexing_maps = [#gc_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%c : tensor<1x8x?x?xf32>) {
  ^bb0(%o: f32):
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x?x?xf32>
  return %2 : tensor<1x8x?x?xf32>
}

// -----

// A Concat of two inputs: each becomes a copy into its slice of the result,
// tiled over the grid (not one whole copy at the top level that every block
// would repeat).
// CHECK-LABEL: func.func @concat_inputs(
//  CHECK-SAME:     %[[A:[a-zA-Z0-9]+]]: tensor<?x8xf32>, %[[B:[a-zA-Z0-9]+]]: tensor<?x5xf32>
//       CHECK:   scf.forall
//       CHECK:     scf.forall
//       CHECK:       linalg.copy
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
//       CHECK:   scf.forall
//       CHECK:     scf.forall
//       CHECK:       linalg.copy
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
//       CHECK:   return
func.func @concat_inputs(%a: tensor<?x8xf32>, %b: tensor<?x5xf32>, %out: tensor<?x13xf32>) -> tensor<?x13xf32>
    attributes {dyncc.kernel, dyncc.kind = "data_movement", dyncc.tile_config = {block = array<i64: 4, 128>, k_step = 64 : i64, thread = array<i64: 1, 4>}} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x8xf32>
  %0 = tensor.insert_slice %a into %out[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x13xf32>
  %1 = tensor.insert_slice %b into %0[0, 8] [%n, 5] [1, 1] : tensor<?x5xf32> into tensor<?x13xf32>
  return %1 : tensor<?x13xf32>
}

// -----

// A column reduction ([M, N] -> [N], M reduced) iterates its columns first:
// they are tiled over blocks and threads, a thread per column, and each
// thread reduces its column in k-steps along M.
// CHECK-LABEL: func.func @column_sum(
//       CHECK:   scf.forall ({{.*}}) = (0) to ({{.*}}) step (32)
//       CHECK:     scf.forall
//       CHECK:       linalg.fill
//       CHECK:       scf.for {{.*}} step %c64
//       CHECK:         linalg.generic
//  CHECK-SAME:           iterator_types = ["parallel", "reduction"]
//       CHECK:   } {mapping = [#gpu.block<x>]}
#cs_in = affine_map<(d0, d1) -> (d0, d1)>
#cs_out = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%x: tensor<?x?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 32>, k_step = 64 : i64, reduce = "warp", thread = array<i64: 1>}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?xf32>) -> tensor<?xf32>
  %1 = linalg.generic {indexing_maps = [#cs_in, #cs_out], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%0 : tensor<?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// A scalar result (a Gather of one element) gets a loop of one iteration,
// tiled to one block and one thread.
// CHECK-LABEL: func.func @scalar_gather(
//       CHECK:   scf.forall ({{.*}}) in (1)
//       CHECK:     scf.forall ({{.*}}) in (1)
//       CHECK:       tensor.extract
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>]}
//       CHECK:   tensor.collapse_shape
//       CHECK:   return
#sg = affine_map<() -> ()>
func.func @scalar_gather(%table: tensor<2xi64>, %index: tensor<i64>, %out: tensor<i64>) -> tensor<i64>
    attributes {dyncc.kernel, dyncc.kind = "data_movement", dyncc.tile_config = {block = array<i64>, k_step = 64 : i64, thread = array<i64>}} {
  %0 = linalg.generic {indexing_maps = [#sg, #sg], iterator_types = []}
      ins(%index : tensor<i64>) outs(%out : tensor<i64>) {
  ^bb0(%in: i64, %o: i64):
    %i = arith.index_cast %in : i64 to index
    %v = tensor.extract %table[%i] : tensor<2xi64>
    linalg.yield %v : i64
  } -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Attention scores with their mask epilogue: the mask [B, S] is expanded to
// [B, 1, 1, S] and broadcast over the heads. Dropping its unit dimensions
// leaves a collapse of that expansion which gives the mask back; it folds
// away, so the epilogue stays rank 4 and the batched matmul fuses into its
// tiles (expanding the epilogue to rank 6 left the matmul whole behind an
// expand_shape, outside every tile). The product, one head and batch per
// block, is a thread's register tile over the shared tiles.
// CHECK-LABEL: func.func @masked_scores(
//   CHECK-NOT:   linalg.generic
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   scf.forall {{.*}} -> (tensor<?x2x?x?xf32>)
//       CHECK:     scf.forall
//       CHECK:       linalg.matmul {dyncc.register_tile} ins({{.*}} : tensor<4x8xf32>, tensor<8x4xf32>) outs({{.*}} : tensor<4x4xf32>)
//       CHECK:     scf.forall
//       CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
//       CHECK:         arith.select
//       CHECK:   } {mapping = [#gpu.block<linear_dim_0>, #gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
//  CHECK-NEXT:   return
#ms_q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#ms_k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#ms_o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#ms_id2 = affine_map<(d0, d1) -> (d0, d1)>
#ms_id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ms_mask = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
func.func @masked_scores(%b: index, %s: index, %mask: tensor<?x?xi1>, %q: tensor<?x2x?x8xf32>, %k: tensor<?x2x8x?xf32>, %out: tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 1, 1, 32, 64>, k_step = 8 : i64, thread = array<i64: 1, 1, 4, 4>}} {
  %zero = arith.constant 0.0 : f32
  %big = arith.constant -1.0e+04 : f32
  %0 = tensor.empty(%b, %s) : tensor<?x?xf32>
  %1 = linalg.generic {indexing_maps = [#ms_id2, #ms_id2], iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<?x?xi1>) outs(%0 : tensor<?x?xf32>) {
  ^bb0(%in: i1, %o: f32):
    %v = arith.select %in, %zero, %big : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %e = tensor.expand_shape %1 [[0], [1, 2, 3]] output_shape [%b, 1, 1, %s] : tensor<?x?xf32> into tensor<?x1x1x?xf32>
  %2 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %3 = linalg.generic {indexing_maps = [#ms_q, #ms_k, #ms_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) outs(%2 : tensor<?x2x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x2x?x?xf32>
  %4 = linalg.generic {indexing_maps = [#ms_mask, #ms_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e : tensor<?x1x1x?xf32>) outs(%3 : tensor<?x2x?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %a = arith.addf %o, %in : f32
    linalg.yield %a : f32
  } -> tensor<?x2x?x?xf32>
  return %4 : tensor<?x2x?x?xf32>
}

// -----

// A kernel whose result is its input as it is (a Cast to the same type,
// folded away): a copy into the destination is the root, tiled like any
// other, so the destination is written.
// CHECK-LABEL: func.func @identity_cast(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x?xi1>, %[[OUT:[a-zA-Z0-9]+]]: tensor<?x?xi1>
//       CHECK:   %[[R:.+]] = scf.forall {{.*}} shared_outs(%{{.+}} = %[[OUT]])
//       CHECK:     scf.forall
//       CHECK:       linalg.copy
//       CHECK:   return %[[R]]
#ic_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @identity_cast(%x: tensor<?x?xi1>, %out: tensor<?x?xi1>) -> tensor<?x?xi1>
    attributes {dyncc.kernel, dyncc.kind = "elementwise", dyncc.tile_config = {block = array<i64: 4, 128>, thread = array<i64: 1, 4>}} {
  %0 = linalg.generic {indexing_maps = [#ic_id, #ic_id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xi1>) outs(%out : tensor<?x?xi1>) {
  ^bb0(%in: i1, %o: i1):
    linalg.yield %in : i1
  } -> tensor<?x?xi1>
  return %0 : tensor<?x?xi1>
}

// -----

// A mean over every element: the sum and the division in place on it are
// both scalar. The division (the root) gets its loop of one iteration, and
// so do the sum it updates and the sum's fill: all three are computed in the
// thread tile, none at the kernel's top level where every block would run
// it.
// CHECK-LABEL: func.func @scalar_mean(
//   CHECK-NOT:   linalg.fill
//       CHECK:   scf.forall ({{.*}}) = (0) to (1)
//       CHECK:     scf.forall ({{.*}}) in (1)
//       CHECK:       linalg.fill
//       CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
//       CHECK:       arith.addf
//       CHECK:       arith.divf
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>]}
//   CHECK-NOT:   linalg.fill
//       CHECK:   return
#sm_in = affine_map<(d0, d1) -> (d0, d1)>
#sm_out = affine_map<(d0, d1) -> ()>
#sm_id = affine_map<() -> ()>
func.func @scalar_mean(%x: tensor<3x4xf32>, %out: tensor<f32>) -> tensor<f32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 32>, k_step = 64 : i64, reduce = "warp", thread = array<i64: 1>}} {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 12.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#sm_in, #sm_out], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<3x4xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [#sm_id], iterator_types = []}
      outs(%sum : tensor<f32>) {
  ^bb0(%acc: f32):
    %m = arith.divf %acc, %n : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}

// -----

// A softmax over a single row of symbolic length: its unit dimension is
// kept and the statistics' keepdims expansions are read through, so the
// kernel is a row kernel: one block for the row, whose lanes step along it
// for the maximum and the sum (merged across lanes), then write the
// quotients. Dropping the unit dimension left the maximum and the sum of
// rank 0, computed outside the block tiles with the exponentials in a
// temporary as long as the row.
// CHECK-LABEL: func.func @one_row_softmax(
//       CHECK:   scf.forall ({{.*}}) in (1) shared_outs
//       CHECK:     scf.forall ({{.*}}) in (1024)
//       CHECK:       arith.maximumf
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     dyncc.lane_merge
//       CHECK:     scf.forall ({{.*}}) in (1024)
//       CHECK:       math.exp
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     dyncc.lane_merge
//       CHECK:     scf.forall
//       CHECK:       math.exp
//       CHECK:       arith.divf
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>]}
//   CHECK-NOT:   math.exp
//       CHECK:   return
#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
#bc = affine_map<(d0, d1) -> (d0, 0)>
func.func @one_row_softmax(%n: index, %x: tensor<1x?xf32>, %out: tensor<1x?xf32>) -> tensor<1x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 1, 2048>, k_step = 64 : i64, reduce = "block", thread = array<i64: 1, 2>}} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x1xf32>
  %c0 = tensor.collapse_shape %e0 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %f0 = linalg.fill ins(%ninf : f32) outs(%c0 : tensor<1xf32>) -> tensor<1xf32>
  %max = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1x?xf32>) outs(%f0 : tensor<1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<1xf32>
  %maxe = tensor.expand_shape %max [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  %e1 = tensor.empty(%n) : tensor<1x?xf32>
  %exp = linalg.generic {indexing_maps = [#row, #bc, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %maxe : tensor<1x?xf32>, tensor<1x1xf32>) outs(%e1 : tensor<1x?xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<1x?xf32>
  %e2 = tensor.empty() : tensor<1x1xf32>
  %c2 = tensor.collapse_shape %e2 [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%c2 : tensor<1xf32>) -> tensor<1xf32>
  %sum = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<1x?xf32>) outs(%f2 : tensor<1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %sume = tensor.expand_shape %sum [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  %y = linalg.generic {indexing_maps = [#row, #bc, #row], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sume : tensor<1x?xf32>, tensor<1x1xf32>) outs(%out : tensor<1x?xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<1x?xf32>
  return %y : tensor<1x?xf32>
}

// -----

// A kernel result another result also reads (a LayerNormalization's Mean,
// which its Y reads): the reader gets its own copy of the mean, computed
// into a private destination, which it fuses into its tiles; the mean's
// own root alone writes the Mean result. Fused as it was, the mean written
// into the Mean result from inside Y's tiles was not the kernel's result
// computed in place.
// CHECK-LABEL: func.func @shared_mean(
//  CHECK-SAME:     %[[X:[a-z0-9]+]]: tensor<2x8xf32>, %[[MEAN:[a-z0-9]+]]: tensor<2xf32>, %[[Y:[a-z0-9]+]]: tensor<2x8xf32>
//       CHECK:   %[[M:.+]] = scf.forall {{.*}} shared_outs(%{{.+}} = %[[MEAN]])
//       CHECK:   } {mapping = [#gpu.block<x>]}
//       CHECK:   %[[YV:.+]] = scf.forall {{.*}} shared_outs(%{{.+}} = %[[Y]])
//   CHECK-NOT:     %[[MEAN]]
//       CHECK:     arith.addf
//       CHECK:     arith.subf
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
//       CHECK:   return %[[M]], %[[YV]]
#ln_x = affine_map<(d0, d1) -> (d0, d1)>
#ln_row = affine_map<(d0, d1) -> (d0)>
func.func @shared_mean(%x: tensor<2x8xf32>, %mean_out: tensor<2xf32>, %y_out: tensor<2x8xf32>) -> (tensor<2xf32>, tensor<2x8xf32>)
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 4, 32>, k_step = 64 : i64, reduce = "thread", thread = array<i64: 1, 1>}} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%mean_out : tensor<2xf32>) -> tensor<2xf32>
  %mean = linalg.generic {indexing_maps = [#ln_x, #ln_row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x8xf32>) outs(%fill : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %y = linalg.generic {indexing_maps = [#ln_x, #ln_row, #ln_x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<2x8xf32>, tensor<2xf32>) outs(%y_out : tensor<2x8xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  } -> tensor<2x8xf32>
  return %mean, %y : tensor<2xf32>, tensor<2x8xf32>
}

// -----

// A Shape of a symbolic input sliced to one dimension: a generic writes the
// symbol into a one-element tensor, which an identity copy puts into the
// destination. Canonicalization erases the copy; the value is then computed
// into the destination itself, not into the empty the copy read (which left
// the kernel's result not written in place).
// CHECK-LABEL: func.func @symbol_into_result(
//  CHECK-SAME:     %[[N:[a-z0-9]+]]: index, %[[OUT:[a-z0-9]+]]: tensor<1xi64>
//   CHECK-NOT:   tensor.empty
//       CHECK:   scf.forall {{.*}} shared_outs(%{{.+}} = %[[OUT]])
#sym_id = affine_map<(d0) -> (d0)>
func.func @symbol_into_result(%n: index, %out: tensor<1xi64>) -> tensor<1xi64>
    attributes {dyncc.kernel, dyncc.kind = "elementwise", dyncc.tile_config = {block = array<i64: 32>, k_step = 0 : i64, thread = array<i64: 1>}} {
  %v = arith.index_cast %n : index to i64
  %e = tensor.empty() : tensor<1xi64>
  %0 = linalg.generic {indexing_maps = [#sym_id], iterator_types = ["parallel"]} outs(%e : tensor<1xi64>) {
  ^bb0(%o: i64):
    linalg.yield %v : i64
  } -> tensor<1xi64>
  %1 = linalg.generic {indexing_maps = [#sym_id, #sym_id], iterator_types = ["parallel"]} ins(%0 : tensor<1xi64>) outs(%out : tensor<1xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<1xi64>
  return %1 : tensor<1xi64>
}

// -----

// A result computed by a sequential loop (NonZero's scan into a destination
// of exactly the count's size) runs whole in one block of one thread: the
// loop moves into a block and a thread forall of one iteration each, whose
// shared outputs carry the destination, and the grid is 1.
// CHECK-LABEL: func.func @sequential_scan(
//  CHECK-SAME:     %[[IN:[a-z0-9]+]]: tensor<8xf32>, %[[OUT:[a-z0-9]+]]: tensor<1x?xi64>
//  CHECK-SAME:     dyncc.grid = {{\[}}["1"], ["1"], ["1"]]
//       CHECK:   %[[R:.*]] = scf.forall (%{{.*}}) in (1) shared_outs(%[[B:.*]] = %[[OUT]])
//       CHECK:     scf.forall (%{{.*}}) in (1) shared_outs(%[[T:.*]] = %[[B]])
//       CHECK:       %[[SCAN:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[T]], %{{.*}} = %c0)
//       CHECK:         tensor.parallel_insert_slice %[[SCAN]]#0 into %[[T]]
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:   } {mapping = [#gpu.block<x>]}
//       CHECK:   return %[[R]]
func.func @sequential_scan(%in: tensor<8xf32>, %out: tensor<1x?xi64>) -> tensor<1x?xi64>
    attributes {dyncc.kernel, dyncc.kind = "data_movement", dyncc.tile_config = {block = array<i64: 128>, k_step = 64 : i64, thread = array<i64: 4>}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %out, %n = %c0) -> (tensor<1x?xi64>, index) {
    %x = tensor.extract %in[%i] : tensor<8xf32>
    %nz = arith.cmpf une, %x, %zero : f32
    %next:2 = scf.if %nz -> (tensor<1x?xi64>, index) {
      %v = arith.index_cast %i : index to i64
      %ins = tensor.insert %v into %acc[%c0, %n] : tensor<1x?xi64>
      %n1 = arith.addi %n, %c1 : index
      scf.yield %ins, %n1 : tensor<1x?xi64>, index
    } else {
      scf.yield %acc, %n : tensor<1x?xi64>, index
    }
    scf.yield %next#0, %next#1 : tensor<1x?xi64>, index
  }
  return %r#0 : tensor<1x?xi64>
}

// -----

// A single row's statistic turned into a [1, 1] result (LayerNormalization
// over every axis: its InvStdDev), read through the statistic's keepdims
// expansion by an op all of whose loops are of extent 1: that op is
// collapsed to the statistic's shape and its result expanded, so its root
// fuses the sum whole into the block, its lanes stepping along the row.
// Left over [1, 1], the sum was computed ahead of the tiles.
// CHECK-LABEL: func.func @one_row_statistic(
//  CHECK-SAME:     %[[OUT:[a-z0-9]+]]: tensor<1x1xf32>
//       CHECK:   %[[DEST:.+]] = tensor.collapse_shape %[[OUT]]
//       CHECK:   %[[R:.+]] = scf.forall {{.*}} shared_outs(%{{.+}} = %[[DEST]])
//       CHECK:       arith.mulf
//       CHECK:     } {mapping = [#gpu.thread<x>]}
//       CHECK:     dyncc.lane_merge
//       CHECK:       math.rsqrt
//       CHECK:   } {mapping = [#gpu.block<x>]}
//       CHECK:   %[[E:.+]] = tensor.expand_shape %[[R]]
//       CHECK:   return %[[E]]
#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
#one = affine_map<(d0) -> (d0)>
func.func @one_row_statistic(%x: tensor<1x?xf32>, %out: tensor<1x1xf32>) -> tensor<1x1xf32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 4, 32>, k_step = 64 : i64, reduce = "warp", thread = array<i64: 1, 1>}} {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1xf32>) -> tensor<1xf32>
  %sum = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1x?xf32>) outs(%f0 : tensor<1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %sume = tensor.expand_shape %sum [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  %inv = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%sume : tensor<1x1xf32>) outs(%out : tensor<1x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.rsqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<1x1xf32>
  return %inv : tensor<1x1xf32>
}

// -----

// A GEMM whose batch was folded into M (dyncc-fold-gemm-batch): its blocks
// tile the [B*S, 48] rows, and the expansion back to [B, S, 48] stays at the
// end. Folded into the epilogue instead, it would split M again and tile per
// batch.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @folded_batch(
//       CHECK:   scf.forall ({{.*}}) = (0, 0) to (%{{.+}}, 48) step (16, 16)
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
//  CHECK-NEXT:   %[[E:.+]] = tensor.expand_shape
//  CHECK-NEXT:   return %[[E]]
func.func @folded_batch(%x: tensor<?x?x64xf32>, %w: tensor<64x48xf32>, %b: tensor<48xf32>, %out: tensor<?x?x48xf32>) -> tensor<?x?x48xf32> attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.folded_batch, dyncc.tile_config = {block = array<i64: 1, 16, 16>, k_step = 16 : i64, thread = array<i64: 1, 2, 2>}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %dest = tensor.collapse_shape %out [[0, 1], [2]] : tensor<?x?x48xf32> into tensor<?x48xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%dest : tensor<?x48xf32>) -> tensor<?x48xf32>
  %xa = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #w, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xa, %w : tensor<?x64xf32>, tensor<64x48xf32>) outs(%fill : tensor<?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x48xf32>
  %epi = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<48xf32>) outs(%mm : tensor<?x48xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x48xf32>
  %d0 = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %e = tensor.expand_shape %epi [[0, 1], [2]] output_shape [%d0, %d1, 48] : tensor<?x48xf32> into tensor<?x?x48xf32>
  return %e : tensor<?x?x48xf32>
}

// -----

// A depthwise conv whose input is a transposed channel shuffle, collapsed
// and padded. The collapse is not moved below the pad: expanding the pad
// back would undo it, and the two rewrites would alternate without end.
// CHECK-LABEL: func.func @shuffled_depthwise(
//       CHECK:   %[[T:.+]] = linalg.transpose
//       CHECK:   tensor.pad %[[T]]
//       CHECK:   scf.forall {{.*}} to (16, 4, 4)
//       CHECK:   } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @shuffled_depthwise(%arg0: tensor<1x2x8x8x8xf32>, %arg1: tensor<16x1x3x3xf32>, %arg2: tensor<16xf32>, %arg3: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> attributes {dyncc.kernel, dyncc.kind = "conv", dyncc.tile_config = {block = array<i64: 1, 8, 4, 4>, k_step = 3 : i64, thread = array<i64: 1, 1, 1, 4>}} {
  %0 = tensor.empty() : tensor<1x8x2x8x8xf32>
  %transposed = linalg.transpose ins(%arg0 : tensor<1x2x8x8x8xf32>) outs(%0 : tensor<1x8x2x8x8xf32>) permutation = [0, 2, 1, 3, 4]
  %collapsed = tensor.collapse_shape %transposed [[0], [1, 2], [3], [4]] : tensor<1x8x2x8x8xf32> into tensor<1x16x8x8xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %collapsed low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x16x8x8xf32> to tensor<1x16x9x9xf32>
  %expanded = tensor.expand_shape %padded [[0], [1, 2], [3], [4]] output_shape [1, 16, 1, 9, 9] : tensor<1x16x9x9xf32> into tensor<1x16x1x9x9xf32>
  %expanded_0 = tensor.expand_shape %arg1 [[0, 1], [2], [3], [4]] output_shape [16, 1, 1, 3, 3] : tensor<16x1x3x3xf32> into tensor<16x1x1x3x3xf32>
  %expanded_1 = tensor.expand_shape %arg2 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32>
  %expanded_2 = tensor.expand_shape %arg3 [[0], [1, 2], [3], [4]] output_shape [1, 16, 1, 4, 4] : tensor<1x16x4x4xf32> into tensor<1x16x1x4x4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_1 : tensor<16x1xf32>) outs(%expanded_2 : tensor<1x16x1x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x16x1x4x4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded, %expanded_0 : tensor<1x16x1x9x9xf32>, tensor<16x1x1x3x3xf32>) outs(%1 : tensor<1x16x1x4x4xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %3 = arith.mulf %in, %in_3 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<1x16x1x4x4xf32>
  %collapsed_3 = tensor.collapse_shape %2 [[0], [1, 2], [3], [4]] : tensor<1x16x1x4x4xf32> into tensor<1x16x4x4xf32>
  return %collapsed_3 : tensor<1x16x4x4xf32>
}

// -----

// A mean over the positions of [B, L, 768] (a column reduction: the sum's
// reduced loop is an outer dimension of its input) with `reduce column`:
// blocks of 16 outputs along the last dimension, one output per y thread,
// and each output's column split over 8 lanes (x), lane l summing positions
// l, l + 8, ...; the lanes' partials merge (dyncc.lane_merge) and lane 0
// divides and writes the output.
// CHECK-LABEL: func.func @column_mean_lanes(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (%{{.+}}, 768) step (1, 16)
//       CHECK:     scf.forall (%{{.+}}) in (16)
//       CHECK:       scf.forall (%[[LANE:.+]]) in (8)
//       CHECK:         scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %c8
//       CHECK:           tensor.extract_slice %{{.+}} : tensor<1x?x1xf32> to tensor<1x1x1xf32>
//       CHECK:           arith.addf
//       CHECK:       } {mapping = [#gpu.thread<x>]}
//       CHECK:       linalg.generic {{.*}} ins(%{{.+}} : tensor<8x1x1xf32>) {{.*}}dyncc.lane_merge
//       CHECK:       scf.forall (%{{.+}}) in (1)
//       CHECK:         arith.divf
//       CHECK:       } {mapping = [#gpu.thread<x>]}
//       CHECK:     } {mapping = [#gpu.thread<y>]}
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
#cm_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#cm_out = affine_map<(d0, d1, d2) -> (d0, d2)>
#cm_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @column_mean_lanes(%x: tensor<?x?x768xf32>, %out: tensor<?x768xf32>) -> tensor<?x768xf32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 1, 16, 8>, k_step = 64 : i64, reduce = "column", thread = array<i64: 1, 1, 1>}} {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %l = tensor.dim %x, %c1 : tensor<?x?x768xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x768xf32>) -> tensor<?x768xf32>
  %sum = linalg.generic {indexing_maps = [#cm_in, #cm_out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<?x?x768xf32>) outs(%fill : tensor<?x768xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<?x768xf32>
  %mean = linalg.generic {indexing_maps = [#cm_id], iterator_types = ["parallel", "parallel"]}
      outs(%sum : tensor<?x768xf32>) {
  ^bb0(%acc: f32):
    %li = arith.index_cast %l : index to i64
    %lf = arith.sitofp %li : i64 to f32
    %m = arith.divf %acc, %lf : f32
    linalg.yield %m : f32
  } -> tensor<?x768xf32>
  return %mean : tensor<?x768xf32>
}

// -----

// The same split where the sum folds two axes (positions and heads of
// [B, L, H, 64]): a group of lanes walks one loop, so the kernel keeps the
// tile levels (a thread per output walking its columns), and nothing
// merges lanes. (The search offers no split for such a kernel:
// RowProblemExprs::columnLanes.)
// CHECK-LABEL: func.func @column_lanes_two_axes(
//   CHECK-NOT:   dyncc.lane_merge
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
#c2_in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#c2_out = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
func.func @column_lanes_two_axes(%x: tensor<?x?x4x64xf32>, %out: tensor<?x64xf32>) -> tensor<?x64xf32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 1, 16, 8>, k_step = 64 : i64, reduce = "column", thread = array<i64: 1, 1, 1>}} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x64xf32>) -> tensor<?x64xf32>
  %sum = linalg.generic {indexing_maps = [#c2_in, #c2_out], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x : tensor<?x?x4x64xf32>) outs(%fill : tensor<?x64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %sum : tensor<?x64xf32>
}

// -----

// A softmax over the 8 channels of [8, H, W] (the result spans the reduced
// axis) with `reduce column`: the root (the division) and the
// exponentials have their channel loop moved last, so the row tiling takes
// a position as a row: 8 positions a block along W, one per y thread, and
// 4 lanes (x) a position, each lane folding channels l, l + 4 into the
// maximum and the sum (two lane merges) and writing its channels of the
// result.
// CHECK-LABEL: func.func @channel_softmax_lanes(
//       CHECK:   scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (%{{.+}}, %{{.+}}) step (1, 8)
//       CHECK:     scf.forall (%{{.+}}) in (%{{.+}})
//       CHECK:       scf.forall (%{{.+}}) in (4)
//       CHECK:         arith.maximumf
//       CHECK:       } {mapping = [#gpu.thread<x>]}
//       CHECK:       dyncc.lane_merge
//       CHECK:       scf.forall (%{{.+}}) in (4)
//       CHECK:         math.exp
//       CHECK:       } {mapping = [#gpu.thread<x>]}
//       CHECK:       dyncc.lane_merge
//       CHECK:       scf.forall (%{{.+}}) in (8)
//       CHECK:         arith.divf
//       CHECK:       } {mapping = [#gpu.thread<x>]}
//       CHECK:     } {mapping = [#gpu.thread<y>]}
//       CHECK:   } {mapping = [#gpu.block<y>, #gpu.block<x>]}
#cs_id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#cs_stat = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @channel_softmax_lanes(%x: tensor<8x?x?xf32>, %out: tensor<8x?x?xf32>) -> tensor<8x?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "reduce", dyncc.tile_config = {block = array<i64: 1, 1, 8, 4>, k_step = 64 : i64, reduce = "column", thread = array<i64: 1, 1, 1, 1>}} {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %low = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %h = tensor.dim %x, %c1 : tensor<8x?x?xf32>
  %w = tensor.dim %x, %c2 : tensor<8x?x?xf32>
  %e0 = tensor.empty(%h, %w) : tensor<?x?xf32>
  %lowest = linalg.fill ins(%low : f32) outs(%e0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#cs_id, #cs_stat], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x : tensor<8x?x?xf32>) outs(%lowest : tensor<?x?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %e1 = tensor.empty(%h, %w) : tensor<8x?x?xf32>
  %exp = linalg.generic {indexing_maps = [#cs_id, #cs_stat, #cs_id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max : tensor<8x?x?xf32>, tensor<?x?xf32>) outs(%e1 : tensor<8x?x?xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<8x?x?xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#cs_id, #cs_stat], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%exp : tensor<8x?x?xf32>) outs(%zeros : tensor<?x?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %div = linalg.generic {indexing_maps = [#cs_id, #cs_stat, #cs_id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%exp, %sum : tensor<8x?x?xf32>, tensor<?x?xf32>) outs(%out : tensor<8x?x?xf32>) {
  ^bb0(%e: f32, %s: f32, %o: f32):
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  } -> tensor<8x?x?xf32>
  return %div : tensor<8x?x?xf32>
}
