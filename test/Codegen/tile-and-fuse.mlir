// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dyncc-tile-and-fuse),canonicalize,cse)' --verify-diagnostics | FileCheck %s

// The epilogue (root) is tiled to blocks and threads; the matmul and its
// fill are fused into the thread tile, computing in place on the output.
// CHECK-LABEL: func.func @gemm_epilogue(
//  CHECK-SAME:     %[[X:[a-zA-Z0-9]+]]: tensor<?x64xf32>, %[[W:[a-zA-Z0-9]+]]: tensor<64x32xf32>, %[[BIAS:[a-zA-Z0-9]+]]: tensor<32xf32>, %[[OUT:[a-zA-Z0-9]+]]: tensor<?x32xf32>
//       CHECK:   %[[M:.+]] = tensor.dim %[[OUT]]
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

// expected-error @+1 {{'func.func' op has 2 results; multi-result kernels are not tiled yet}}
func.func @two_results(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 128>, thread = array<i64: 1>}} {
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}
