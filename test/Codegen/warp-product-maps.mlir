// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dyncc-tile-and-fuse),canonicalize,cse)' --mlir-print-local-scope | FileCheck %s

// Tensor-core warp products whose operands are not a plain matmul's become
// a linalg.matmul with their maps (so that they vectorize to one
// vector.contract): attention's scores read B as N x K (K's rows), kept in
// that order; a product whose first operand is the one reading N (output
// loops M = d0, N = d1) has its operands swapped, A reading M and K and B
// K and N as linalg.matmul requires: A is the weight, read (d2, d0).
// CHECK-LABEL: func.func @scores_n_by_k(
//       CHECK:   linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {dyncc.mma = array<i64: 16, 8, 16>} ins(%{{.*}}, %{{.*}} : tensor<16x16xf16>, tensor<16x16xf16>) outs(%{{.*}} : tensor<16x16xf32>)
// CHECK-LABEL: func.func @first_operand_reads_n(
//       CHECK:   linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {dyncc.mma = array<i64: 16, 8, 16>}
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#config16 = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
func.func @scores_n_by_k(%q: tensor<?x64xf16>, %k: tensor<?x64xf16>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = #config16} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<?x64xf16>, tensor<?x64xf16>) outs(%fill : tensor<?x?xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}
#n_k = affine_map<(d0, d1, d2) -> (d1, d2)>
#k_m = affine_map<(d0, d1, d2) -> (d2, d0)>
func.func @first_operand_reads_n(%x: tensor<?x64xf16>, %w: tensor<64x40xf16>, %out: tensor<40x?xf32>) -> tensor<40x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = #config16} {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%out : tensor<40x?xf32>) -> tensor<40x?xf32>
  %s = linalg.generic {indexing_maps = [#n_k, #k_m, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x64xf16>, tensor<64x40xf16>) outs(%fill : tensor<40x?xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %m = arith.mulf %ae, %be : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<40x?xf32>
  return %s : tensor<40x?xf32>
}
