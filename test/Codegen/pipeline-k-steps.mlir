// RUN: dyncc-opt %s --pass-pipeline='builtin.module(func.func(dyncc-pipeline-k-steps{target=gpu}))' | FileCheck %s --check-prefix=GPU
// RUN: dyncc-opt %s --pass-pipeline='builtin.module(func.func(dyncc-pipeline-k-steps{target=cpu}))' | FileCheck %s --check-prefix=CPU

// A tensor-core k-step loop whose A operand is copied in chunks (16 bytes
// of a global memref per thread, zeros past its extents) and whose B
// operand is a plain shared tile: with two stages, A's tile is
// multi-buffered and its copies pipelined one step ahead.

#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, stages = 2 : i64, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>

// GPU-LABEL: func.func @pipelined
// GPU-SAME: (%[[A:.*]]: memref<?x?xf16>, %[[K:.*]]: index
// GPU: %[[TILES:.*]] = memref.alloc() {alignment = 16 : i64} : memref<2x32x16xf16, #gpu.address_space<workgroup>>
// The prologue: step 0, if there is one, then a group.
// GPU: %[[IN0:.*]] = arith.cmpi slt, %{{.*}}, %[[K]]
// GPU: scf.if %[[IN0]] {
// GPU: scf.forall
// GPU: %[[LEFT:.*]] = arith.subi
// GPU: %[[CLAMP:.*]] = arith.minsi %[[LEFT]], %c8
// GPU: %[[COUNT:.*]] = arith.maxsi %[[CLAMP]], %c0
// GPU: %[[ROW:.*]] = arith.cmpi ult
// GPU: %[[N:.*]] = arith.select %[[ROW]], %[[COUNT]], %c0
// GPU: nvgpu.device_async_copy %{{.*}}[{{.*}}], %{{.*}}[%c0, %c0], 8, %[[N]] {bypassL1}
// GPU: mapping = [#gpu.thread<linear_dim_0>]
// GPU: nvvm.cp.async.commit.group
// GPU: scf.for %[[IV:.*]] = %c0 to %[[K]] step %c16 {
// GPU: %[[STAGE:.*]] = affine.apply #{{.*}}(%[[IV]])
// GPU: memref.subview %[[TILES]][%[[STAGE]], 0, 0] [1, 32, 16] [1, 1, 1]
// GPU: %[[NEXT:.*]] = arith.addi %[[IV]], %c16
// GPU: %[[IN:.*]] = arith.cmpi slt, %[[NEXT]], %[[K]]
// GPU: scf.if %[[IN]] {
// GPU: affine.apply #{{.*}}(%[[NEXT]])
// GPU: nvgpu.device_async_copy
// GPU: nvvm.cp.async.commit.group
// GPU-NEXT: nvvm.cp.async.wait.group 1
// GPU: linalg.matmul {dyncc.mma
// GPU: }
// GPU: nvvm.cp.async.commit.group
// GPU-NEXT: nvvm.cp.async.wait.group 0

// CPU-LABEL: func.func @pipelined
// CPU: memref.alloc() {alignment = 16 : i64} : memref<2x32x16xf16, #gpu.address_space<workgroup>>
// CPU: scf.if
// CPU: vector.transfer_read
// CPU: scf.for
// CPU: scf.if
// CPU: vector.transfer_read
// CPU-NOT: {{nvgpu|nvvm}}
// CPU: linalg.matmul {dyncc.mma
func.func @pipelined(%a: memref<?x?xf16>, %k: index, %b: memref<16x32xf16, #warp>,
                     %acc: memref<32x32xf32, #warp>) attributes {dyncc.tile_config = #config} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f16
  %tile = memref.alloc() {alignment = 16 : i64} : memref<32x16xf16, #warp>
  %m = memref.dim %a, %c0 : memref<?x?xf16>
  scf.for %iv = %c0 to %k step %c16 {
    %kk = affine.min affine_map<(d0)[s0] -> (16, s0 - d0)>(%iv)[%k]
    %src = memref.subview %a[0, %iv] [%m, %kk] [1, 1] : memref<?x?xf16> to memref<?x?xf16, strided<[?, 1], offset: ?>>
    scf.forall (%i) in (64) {
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8)>(%i)
      %v = vector.transfer_read %src[%r, %c], %pad : memref<?x?xf16, strided<[?, 1], offset: ?>>, vector<1x8xf16>
      %dst = memref.subview %tile[%r, %c] [1, 8] [1, 1] : memref<32x16xf16, #warp> to memref<1x8xf16, strided<[16, 1], offset: ?>, #warp>
      vector.transfer_write %v, %dst[%c0, %c0] {in_bounds = [true, true]} : vector<1x8xf16>, memref<1x8xf16, strided<[16, 1], offset: ?>, #warp>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    scf.forall (%wy, %wx) = (0, 0) to (32, 32) step (16, 16) {
      %sa = memref.subview %tile[%wy, 0] [16, 16] [1, 1] : memref<32x16xf16, #warp> to memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>
      %sb = memref.subview %b[0, %wx] [16, 16] [1, 1] : memref<16x32xf16, #warp> to memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>
      %sc = memref.subview %acc[%wy, %wx] [16, 16] [1, 1] : memref<32x32xf32, #warp> to memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>
      linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%sa, %sb : memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>, memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>) outs(%sc : memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>)
    } {mapping = [#gpu.warp<y>, #gpu.warp<x>]}
  }
  return
}
