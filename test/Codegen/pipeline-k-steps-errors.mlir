// RUN: dyncc-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(dyncc-pipeline-k-steps{target=gpu}))'
// RUN: not dyncc-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(dyncc-pipeline-k-steps{target=tpu}))' 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: unknown target 'tpu', expected gpu or cpu

// Every error of dyncc-pipeline-k-steps.

// A copy of 2 bytes per thread is no cp.async (4, 8 or 16 bytes).
#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>
func.func @narrow(%a: memref<?x?xf16>, %acc: memref<32x32xf32, #warp>, %b: memref<16x32xf16, #warp>) attributes {dyncc.tile_config = #config} {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f16
  %tile = memref.alloc() : memref<32x16xf16, #warp>
  scf.forall (%i) in (256) {
    %r = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%i)
    %c = affine.apply affine_map<(d0) -> (d0 mod 16)>(%i)
    %v = vector.transfer_read %a[%r, %c], %pad : memref<?x?xf16>, vector<1x1xf16>
    // expected-error @below {{is not a copy of one vector of 4, 8 or 16 bytes padded with zeros: no cp.async}}
    vector.transfer_write %v, %tile[%r, %c] {in_bounds = [true, true]} : vector<1x1xf16>, memref<32x16xf16, #warp>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.forall (%wy, %wx) = (0, 0) to (32, 32) step (16, 16) {
    %sa = memref.subview %tile[%wy, 0] [16, 16] [1, 1] : memref<32x16xf16, #warp> to memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>
    %sb = memref.subview %b[0, %wx] [16, 16] [1, 1] : memref<16x32xf16, #warp> to memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>
    %sc = memref.subview %acc[%wy, %wx] [16, 16] [1, 1] : memref<32x32xf32, #warp> to memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>
    linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%sa, %sb : memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>, memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>) outs(%sc : memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>)
  } {mapping = [#gpu.warp<y>, #gpu.warp<x>]}
  return
}


// -----

#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, stages = 2 : i64, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>
func.func @outside(%a: memref<?x?xf16>, %k: index, %b: memref<16x32xf16, #warp>, %acc: memref<32x32xf32, #warp>, %idx: memref<1xindex>) attributes {dyncc.tile_config = #config} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f16
  // expected-error @below {{is a chunked shared tile used outside its k-step loop}}
  %tile = memref.alloc() : memref<32x16xf16, #warp>
  scf.for %iv = %c0 to %k step %c16 {
    %src = memref.subview %a[0, %iv] [32, 16] [1, 1] : memref<?x?xf16> to memref<32x16xf16, strided<[?, 1], offset: ?>>
    scf.forall (%i) in (64) {
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8)>(%i)
      %v = vector.transfer_read %src[%r, %c], %pad : memref<32x16xf16, strided<[?, 1], offset: ?>>, vector<1x8xf16>
      vector.transfer_write %v, %tile[%r, %c] {in_bounds = [true, true]} : vector<1x8xf16>, memref<32x16xf16, #warp>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    scf.forall (%wy, %wx) = (0, 0) to (32, 32) step (16, 16) {
      %sa = memref.subview %tile[%wy, 0] [16, 16] [1, 1] : memref<32x16xf16, #warp> to memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>
      %sb = memref.subview %b[0, %wx] [16, 16] [1, 1] : memref<16x32xf16, #warp> to memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>
      %sc = memref.subview %acc[%wy, %wx] [16, 16] [1, 1] : memref<32x32xf32, #warp> to memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>
      linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%sa, %sb : memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>, memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>) outs(%sc : memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>)
    } {mapping = [#gpu.warp<y>, #gpu.warp<x>]}
  }
  %x = memref.load %tile[%c0, %c0] : memref<32x16xf16, #warp>
  return
}


// -----

#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, stages = 2 : i64, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>
func.func @effects(%a: memref<?x?xf16>, %k: index, %b: memref<16x32xf16, #warp>, %acc: memref<32x32xf32, #warp>, %idx: memref<1xindex>) attributes {dyncc.tile_config = #config} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f16
  %tile = memref.alloc() : memref<32x16xf16, #warp>
  scf.for %iv = %c0 to %k step %c16 {
    // expected-error @below {{is needed by a pipelined copy but has memory effects}}
    %o = memref.load %idx[%c0] : memref<1xindex>
    %src2 = memref.subview %a[%o, %iv] [32, 16] [1, 1] : memref<?x?xf16> to memref<32x16xf16, strided<[?, 1], offset: ?>>
    %src = memref.subview %a[0, %iv] [32, 16] [1, 1] : memref<?x?xf16> to memref<32x16xf16, strided<[?, 1], offset: ?>>
    scf.forall (%i) in (64) {
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8)>(%i)
      %v = vector.transfer_read %src2[%r, %c], %pad : memref<32x16xf16, strided<[?, 1], offset: ?>>, vector<1x8xf16>
      vector.transfer_write %v, %tile[%r, %c] {in_bounds = [true, true]} : vector<1x8xf16>, memref<32x16xf16, #warp>
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


// -----

#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, stages = 2 : i64, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>
func.func @argument(%a: memref<?x?xf16>, %k: index, %b: memref<16x32xf16, #warp>, %acc: memref<32x32xf32, #warp>, %tile: memref<32x16xf16, #warp>) attributes {dyncc.tile_config = #config} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f16
  scf.for %iv = %c0 to %k step %c16 {
    %src = memref.subview %a[0, %iv] [32, 16] [1, 1] : memref<?x?xf16> to memref<32x16xf16, strided<[?, 1], offset: ?>>
    // expected-error @below {{writes shared memory that is not a static allocation}}
    scf.forall (%i) in (64) {
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8)>(%i)
      %v = vector.transfer_read %src[%r, %c], %pad : memref<32x16xf16, strided<[?, 1], offset: ?>>, vector<1x8xf16>
      vector.transfer_write %v, %tile[%r, %c] {in_bounds = [true, true]} : vector<1x8xf16>, memref<32x16xf16, #warp>
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


// -----

#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, stages = 2 : i64, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>
func.func @cast(%a: memref<?x?xf16>, %k: index, %b: memref<16x32xf16, #warp>, %acc: memref<32x32xf32, #warp>, %idx: memref<1xindex>) attributes {dyncc.tile_config = #config} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f16
  %tile = memref.alloc() : memref<32x16xf16, #warp>
  scf.for %iv = %c0 to %k step %c16 {
    // expected-error @below {{views a multi-buffered tile other than by memref.subview}}
    %view = memref.cast %tile : memref<32x16xf16, #warp> to memref<32x16xf16, strided<[16, 1]>, #warp>
    %src = memref.subview %a[0, %iv] [32, 16] [1, 1] : memref<?x?xf16> to memref<32x16xf16, strided<[?, 1], offset: ?>>
    scf.forall (%i) in (64) {
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8)>(%i)
      %v = vector.transfer_read %src[%r, %c], %pad : memref<32x16xf16, strided<[?, 1], offset: ?>>, vector<1x8xf16>
      vector.transfer_write %v, %tile[%r, %c] {in_bounds = [true, true]} : vector<1x8xf16>, memref<32x16xf16, #warp>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    scf.forall (%wy, %wx) = (0, 0) to (32, 32) step (16, 16) {
      %sa = memref.subview %view[%wy, 0] [16, 16] [1, 1] : memref<32x16xf16, strided<[16, 1]>, #warp> to memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>
      %sb = memref.subview %b[0, %wx] [16, 16] [1, 1] : memref<16x32xf16, #warp> to memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>
      %sc = memref.subview %acc[%wy, %wx] [16, 16] [1, 1] : memref<32x32xf32, #warp> to memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>
      linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%sa, %sb : memref<16x16xf16, strided<[16, 1], offset: ?>, #warp>, memref<16x16xf16, strided<[32, 1], offset: ?>, #warp>) outs(%sc : memref<16x16xf32, strided<[32, 1], offset: ?>, #warp>)
    } {mapping = [#gpu.warp<y>, #gpu.warp<x>]}
  }
  return
}


// -----

#config = {block = array<i64: 32, 32>, k_step = 16 : i64, mma = array<i64: 16, 8, 16>, stages = 2 : i64, thread = array<i64: 1, 8>, warp = array<i64: 16, 16>}
#warp = #gpu.address_space<workgroup>
func.func @unmapped(%sa: memref<16x16xf16, #warp>, %sb: memref<16x16xf16, #warp>, %sc: memref<16x16xf32, #warp>) attributes {dyncc.tile_config = #config} {
  // expected-error @below {{is not in a warp forall}}
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%sa, %sb : memref<16x16xf16, #warp>, memref<16x16xf16, #warp>) outs(%sc : memref<16x16xf32, #warp>)
  return
}


// -----

// expected-error @below {{has an invalid dyncc.tile_config}}
func.func @bad_config() attributes {dyncc.tile_config = {block = array<i64: 32, 32>, thread = array<i64: 3, 8>}} {
  return
}
