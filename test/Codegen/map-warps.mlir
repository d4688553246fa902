// RUN: dyncc-opt %s --split-input-file --dyncc-map-forall-to-grid=target=gpu --verify-diagnostics | FileCheck %s

// Four 32x32 warp tiles of a 64x64 block of 128 threads (8 along x, 16
// along y): warp = (x + 8 y + 128 z) / 32, its tile column innermost (the
// z term, 4 z warps, drops out of both coordinates mod 2).
// CHECK-DAG: #[[COL:.*]] = affine_map<()[s0, s1, s2] -> ((((s0 + s1 * 8) floordiv 32) mod 2) * 32)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<()[s0, s1, s2] -> (((((s0 + s1 * 8) floordiv 32) floordiv 2) mod 2) * 32)>
// CHECK-LABEL: gpu.func @four_warps
//   CHECK-DAG:   %[[X:.*]] = gpu.thread_id x
//   CHECK-DAG:   %[[Y:.*]] = gpu.thread_id y
//   CHECK-DAG:   %[[Z:.*]] = gpu.thread_id z
//   CHECK-DAG:   %[[R:.*]] = affine.apply #[[ROW]]()[%[[X]], %[[Y]], %[[Z]]]
//   CHECK-DAG:   %[[C:.*]] = affine.apply #[[COL]]()[%[[X]], %[[Y]], %[[Z]]]
//   CHECK-NOT:   scf.if
//       CHECK:   memref.store {{.*}}[%[[R]], %[[C]]]
func.func @four_warps(%out: memref<64x64xf32>) attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 64, 64>, warp = array<i64: 32, 32>, thread = array<i64: 4, 8>, k_step = 32 : i64, mma = array<i64: 16, 8, 16>}} {
  %one = arith.constant 1.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    memref.store %one, %out[%i, %j] : memref<64x64xf32>
  } {mapping = [#gpu.warp<y>, #gpu.warp<x>]}
  return
}

// -----

// Two tiles for four warps: the other two idle.
// CHECK: #[[WARP:.*]] = affine_map<()[s0, s1, s2] -> ((s0 + s1 * 8) floordiv 32 + s2 * 4)>
// CHECK-LABEL: gpu.func @idle_warps
//       CHECK:   %[[W:.*]] = affine.apply #[[WARP]]()
//       CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[W]], %c2
//       CHECK:   scf.if %[[IN]]
//       CHECK:     memref.store
func.func @idle_warps(%out: memref<64x64xf32>) attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 64, 64>, warp = array<i64: 32, 32>, thread = array<i64: 4, 8>, k_step = 32 : i64}} {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) = (0) to (64) step (32) {
    memref.store %one, %out[%i, %i] : memref<64x64xf32>
  } {mapping = [#gpu.warp<x>]}
  return
}

// -----

func.func @no_config(%out: memref<64xf32>) attributes {dyncc.kernel} {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'scf.forall' op warp forall in a kernel without a tile config giving its threads}}
  scf.forall (%i) = (0) to (64) step (32) {
    memref.store %one, %out[%i] : memref<64xf32>
  } {mapping = [#gpu.warp<x>]}
  return
}

// -----

func.func @dynamic_warps(%out: memref<?xf32>, %n: index) attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 64, 64>, warp = array<i64: 32, 32>, thread = array<i64: 4, 8>, k_step = 32 : i64}} {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'scf.forall' op warp forall must have static bounds}}
  scf.forall (%i) = (0) to (%n) step (32) {
    memref.store %one, %out[%i] : memref<?xf32>
  } {mapping = [#gpu.warp<x>]}
  return
}

// -----

func.func @too_many_tiles(%out: memref<64x64xf32>) attributes {dyncc.kernel, dyncc.tile_config = {block = array<i64: 64, 64>, warp = array<i64: 32, 32>, thread = array<i64: 4, 8>, k_step = 32 : i64}} {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'scf.forall' op has 16 warp tiles but the block has 4 warps}}
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (16, 16) {
    memref.store %one, %out[%i, %j] : memref<64x64xf32>
  } {mapping = [#gpu.warp<y>, #gpu.warp<x>]}
  return
}
