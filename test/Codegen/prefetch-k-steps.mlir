// RUN: dyncc-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(dyncc-prefetch-k-steps))' \
// RUN:   | FileCheck %s

// A k-step loop's chunked copies of A (a dynamic tile: rows past M and
// columns past K read padding) and B (a static tile). Each read gets the
// prefetch of the address the same chunk reads at the next step: the views
// recomputed at %k + 32, under a guard that the step exists and, for A's
// tile, that the chunk starts inside it (B's static tile needs no check:
// its chunks' indices are bounded by its sizes).
#rowsA = affine_map<(d0) -> ((d0 floordiv 8) mod 64)>
#colsA = affine_map<(d0) -> (d0 * 4 - (d0 floordiv 8) * 32)>
#rowsB = affine_map<(d0) -> ((d0 floordiv 32) mod 32)>
#colsB = affine_map<(d0) -> (d0 * 4 - (d0 floordiv 32) * 128)>
#kLeft = affine_map<(d0) -> (-d0 + 128, 32)>
//   CHECK-DAG: #[[ROWSA:map[0-9]*]] = affine_map<(d0) -> ((d0 floordiv 8) mod 64)>
//   CHECK-DAG: #[[COLSA:map[0-9]*]] = affine_map<(d0) -> (d0 * 4 - (d0 floordiv 8) * 32)>
// CHECK-LABEL: func.func @copies(
//  CHECK-SAME:   %[[A:[a-z0-9]+]]: memref<?x128xf32>, %[[B:[a-z0-9]+]]: memref<128x384xf32>
//       CHECK:   %[[BT:.*]] = memref.subview %[[B]][0, 0] [128, 128] [1, 1]
//       CHECK:   scf.for %[[K:.*]] = %{{.*}} to %[[UB:.*]] step %[[STEP:[a-z0-9_]+]] {
//       CHECK:     scf.forall (%[[T:.*]]) in (512) {
//       CHECK:       %[[V:.*]] = vector.transfer_read %{{.*}} : memref<?x?xf32, strided<[128, 1], offset: ?>>, vector<1x4xf32>
//       CHECK:       %[[NEXT:.*]] = arith.addi %[[K]], %[[STEP]] : index
//       CHECK:       %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : index
//       CHECK:       scf.if %[[MORE]] {
//       CHECK:         %[[LEFT:.*]] = affine.min #{{.*}}(%[[NEXT]])
//       CHECK:         %[[VIEW:.*]] = memref.subview %[[A]][0, %[[NEXT]]] [%{{.*}}, %[[LEFT]]] [1, 1]
//       CHECK:         %[[ROW:.*]] = affine.apply #[[ROWSA]](%[[T]])
//       CHECK:         %[[COL:.*]] = affine.apply #[[COLSA]](%[[T]])
//       CHECK:         %[[ROWS:.*]] = memref.dim %[[VIEW]], %c0
//       CHECK:         %[[IN0:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]] : index
//       CHECK:         %[[COLS:.*]] = memref.dim %[[VIEW]], %c1
//       CHECK:         %[[IN1:.*]] = arith.cmpi slt, %[[COL]], %[[COLS]] : index
//       CHECK:         %[[IN:.*]] = arith.andi %[[IN0]], %[[IN1]] : i1
//       CHECK:         scf.if %[[IN]] {
//       CHECK:           memref.prefetch %[[VIEW]][%[[ROW]], %[[COL]]], read, locality<3>, data
//       CHECK:       vector.transfer_write %[[V]]
//       CHECK:     scf.forall (%{{.*}}) in (1024) {
//       CHECK:       vector.transfer_read
//       CHECK:       %[[BNEXT:.*]] = arith.addi %[[K]], %[[STEP]] : index
//       CHECK:       scf.if
//       CHECK:         %[[BVIEW:.*]] = memref.subview %[[BT]][%[[BNEXT]], 0] [32, 128] [1, 1]
//   CHECK-NOT:         memref.dim
//       CHECK:         memref.prefetch %[[BVIEW]][
//       CHECK:       vector.transfer_write
func.func @copies(%a: memref<?x128xf32>, %b: memref<128x384xf32>, %m: index) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.0 : f32
  %sa = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
  %sb = memref.alloc() : memref<32x128xf32, #gpu.address_space<workgroup>>
  %acc = memref.alloca() : memref<64x128xf32>
  %bt = memref.subview %b[0, 0] [128, 128] [1, 1] : memref<128x384xf32> to memref<128x128xf32, strided<[384, 1]>>
  scf.for %k = %c0 to %c128 step %c32 {
    %left = affine.min #kLeft(%k)
    %ta = memref.subview %a[0, %k] [%m, %left] [1, 1] : memref<?x128xf32> to memref<?x?xf32, strided<[128, 1], offset: ?>>
    scf.forall (%t) in (512) {
      %r = affine.apply #rowsA(%t)
      %c = affine.apply #colsA(%t)
      %v = vector.transfer_read %ta[%r, %c], %cst : memref<?x?xf32, strided<[128, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %sa[%r, %c] [1, 4] [1, 1] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    %tb = memref.subview %bt[%k, 0] [32, 128] [1, 1] : memref<128x128xf32, strided<[384, 1]>> to memref<32x128xf32, strided<[384, 1], offset: ?>>
    scf.forall (%t) in (1024) {
      %r = affine.apply #rowsB(%t)
      %c = affine.apply #colsB(%t)
      %v = vector.transfer_read %tb[%r, %c], %cst : memref<32x128xf32, strided<[384, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %sb[%r, %c] [1, 4] [1, 1] : memref<32x128xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    linalg.matmul {dyncc.register_tile} ins(%sa, %sb : memref<64x32xf32, #gpu.address_space<workgroup>>, memref<32x128xf32, #gpu.address_space<workgroup>>) outs(%acc : memref<64x128xf32>)
  }
  return
}

// -----

// Left alone: a copy whose address does not change with the loop (nothing
// new to fetch), one whose address is read from memory (not recomputable
// for the next step), one outside any loop, and an in-bounds read of a
// tile: guarded by the step alone.
#rows = affine_map<(d0) -> (d0 floordiv 8)>
#cols = affine_map<(d0) -> ((d0 mod 8) * 4)>
// CHECK-LABEL: func.func @left_alone(
//       CHECK:   scf.forall
//   CHECK-NOT:     memref.prefetch
//       CHECK:   scf.for
//       CHECK:     scf.forall
//   CHECK-NOT:       memref.prefetch
//       CHECK:     } {mapping
//       CHECK:     scf.forall
//   CHECK-NOT:       memref.prefetch
//       CHECK:     } {mapping
//       CHECK:     scf.forall
//       CHECK:       vector.transfer_read
//       CHECK:       scf.if
//   CHECK-NOT:         memref.dim
//   CHECK-NOT:         scf.if
//       CHECK:         memref.prefetch
//       CHECK:       vector.transfer_write
func.func @left_alone(%a: memref<64x32xf32>, %b: memref<256x32xf32>, %offsets: memref<8xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8x32xf32, #gpu.address_space<workgroup>>
  %w = memref.alloca() : memref<32x8xf32>
  %acc = memref.alloca() : memref<8x8xf32>
  scf.forall (%t) in (64) {
    %r = affine.apply #rows(%t)
    %c = affine.apply #cols(%t)
    %v = vector.transfer_read %a[%r, %c], %cst : memref<64x32xf32>, vector<1x4xf32>
    %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.for %i = %c0 to %c8 step %c1 {
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %a[%r, %c], %cst : memref<64x32xf32>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    %o = memref.load %offsets[%i] : memref<8xindex>
    %tile = memref.subview %b[%o, 0] [8, 32] [1, 1] : memref<256x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %tile[%r, %c], %cst : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    %row = arith.muli %i, %c8 : index
    %next = memref.subview %b[%row, 0] [8, 32] [1, 1] : memref<256x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %next[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    linalg.matmul {dyncc.register_tile} ins(%s, %w : memref<8x32xf32, #gpu.address_space<workgroup>>, memref<32x8xf32>) outs(%acc : memref<8x8xf32>)
  }
  return
}

// -----

// A pipelined copy (dyncc-pipeline-k-steps: step %k copies step %k + 32's
// tile under `%k + 32 < K`) reads at the next step only where that
// condition holds there: the prefetch of step %k + 64's tile is under
// `%k + 64 < K` too, and its view is recomputed only then (never a view
// past the operand). A read in an else branch runs where the condition
// does not hold: its condition is negated.
#rows = affine_map<(d0) -> (d0 floordiv 8)>
#cols = affine_map<(d0) -> ((d0 mod 8) * 4)>
// CHECK-LABEL: func.func @pipelined(
//  CHECK-SAME:   %[[B:[a-z0-9]+]]: memref<128x32xf32>
//       CHECK:   scf.for %[[K:.*]] = %{{.*}} to %[[UB:.*]] step %[[STEP:[a-z0-9_]+]] {
//       CHECK:     scf.if
//       CHECK:       scf.forall
//       CHECK:         vector.transfer_read
//       CHECK:         %[[NEXT:.*]] = arith.addi %[[K]], %[[STEP]] : index
//       CHECK:         %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : index
//       CHECK:         scf.if %[[MORE]] {
//       CHECK:           %[[AHEAD:.*]] = arith.addi %[[NEXT]], %{{.*}} : index
//       CHECK:           %[[RUNS:.*]] = arith.cmpi slt, %[[AHEAD]], %{{.*}} : index
//   CHECK-NOT:           memref.subview
//       CHECK:           scf.if %[[RUNS]] {
//       CHECK:             %[[VIEW:.*]] = memref.subview %[[B]][%[[AHEAD]], 0] [8, 32] [1, 1]
//       CHECK:             memref.prefetch %[[VIEW]][
//       CHECK:     } else {
//       CHECK:       scf.forall
//       CHECK:         vector.transfer_read
//       CHECK:         %[[NEXT2:.*]] = arith.addi %[[K]], %[[STEP]] : index
//       CHECK:         scf.if
//       CHECK:           %[[AHEAD2:.*]] = arith.addi %[[NEXT2]]
//       CHECK:           %[[RUNS2:.*]] = arith.cmpi slt, %[[AHEAD2]]
//       CHECK:           %[[NOT:.*]] = arith.xori %[[RUNS2]], %true
//       CHECK:           scf.if %[[NOT]] {
//       CHECK:             %[[VIEW2:.*]] = memref.subview %[[B]][%[[NEXT2]], 0] [8, 32] [1, 1]
//       CHECK:             memref.prefetch %[[VIEW2]][
func.func @pipelined(%b: memref<128x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8x32xf32, #gpu.address_space<workgroup>>
  %w = memref.alloca() : memref<32x8xf32>
  %acc = memref.alloca() : memref<8x8xf32>
  scf.for %k = %c0 to %c128 step %c8 {
    %ahead = arith.addi %k, %c8 : index
    %runs = arith.cmpi slt, %ahead, %c128 : index
    scf.if %runs {
      %tile = memref.subview %b[%ahead, 0] [8, 32] [1, 1] : memref<128x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
      scf.forall (%t) in (64) {
        %r = affine.apply #rows(%t)
        %c = affine.apply #cols(%t)
        %v = vector.transfer_read %tile[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
        %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
        vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      } {mapping = [#gpu.thread<linear_dim_0>]}
    } else {
      %tile = memref.subview %b[%k, 0] [8, 32] [1, 1] : memref<128x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
      scf.forall (%t) in (64) {
        %r = affine.apply #rows(%t)
        %c = affine.apply #cols(%t)
        %v = vector.transfer_read %tile[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
        %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
        vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      } {mapping = [#gpu.thread<linear_dim_0>]}
    }
    linalg.matmul {dyncc.register_tile} ins(%s, %w : memref<8x32xf32, #gpu.address_space<workgroup>>, memref<32x8xf32>) outs(%acc : memref<8x8xf32>)
  }
  return
}

// -----

// Left alone too: a masked read (it may start past its extents with every
// lane off), a read whose address the loop carries from step to step (an
// iteration argument: only the induction variable is known at the next
// step), and a copy whose chunk count the k-step loop computes (its chunks
// at the next step may differ).
#rows = affine_map<(d0) -> (d0 floordiv 8)>
#cols = affine_map<(d0) -> ((d0 mod 8) * 4)>
// CHECK-LABEL: func.func @not_recomputable(
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
func.func @not_recomputable(%b: memref<256x32xf32>, %mask: vector<1x4xi1>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %cst = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8x32xf32, #gpu.address_space<workgroup>>
  %w = memref.alloca() : memref<32x8xf32>
  %acc = memref.alloca() : memref<8x8xf32>
  %last = scf.for %i = %c0 to %c32 step %c1 iter_args(%row = %c0) -> (index) {
    %tile = memref.subview %b[%i, 0] [8, 32] [1, 1] : memref<256x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %tile[%r, %c], %cst, %mask : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    %at = arith.addi %row, %i : index
    %carried = memref.subview %b[%at, 0] [8, 32] [1, 1] : memref<256x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %carried[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    %chunks = arith.addi %i, %c1 : index
    scf.forall (%t) in (%chunks) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %tile[%r, %c], %cst : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    linalg.matmul {dyncc.register_tile} ins(%s, %w : memref<8x32xf32, #gpu.address_space<workgroup>>, memref<32x8xf32>) outs(%acc : memref<8x8xf32>)
    %next = arith.addi %row, %c8 : index
    scf.yield %next : index
  }
  return
}

// -----

// The k-step loop is the nearest loop whose body holds the step's product: a
// copy in a loop of its own within the step (here over the tile's two
// halves) prefetches what it reads at the next k-step (%k + 8), not at the
// inner loop's next iteration; a copy in a loop with no product (not a
// k-step loop) is left alone.
#rows = affine_map<(d0) -> (d0 floordiv 8)>
#cols = affine_map<(d0) -> ((d0 mod 8) * 4)>
// CHECK-LABEL: func.func @k_step_loop(
//       CHECK:   scf.for %[[K:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %[[STEP:[a-z0-9_]+]] {
//       CHECK:     scf.for %[[H:[a-z0-9]+]] =
//       CHECK:       scf.forall
//       CHECK:         %[[NEXT:.*]] = arith.addi %[[K]], %[[STEP]] : index
//       CHECK:         scf.if
//       CHECK:           %[[ROW:.*]] = arith.addi %[[NEXT]], %[[H]] : index
//       CHECK:           %[[VIEW:.*]] = memref.subview %{{.*}}[%[[ROW]], 0]
//       CHECK:           memref.prefetch %[[VIEW]]
//       CHECK:     linalg.matmul
//       CHECK:   scf.for
//   CHECK-NOT:     memref.prefetch
//       CHECK:   return
func.func @k_step_loop(%b: memref<128x32xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8x32xf32, #gpu.address_space<workgroup>>
  %w = memref.alloca() : memref<32x8xf32>
  %acc = memref.alloca() : memref<8x8xf32>
  scf.for %k = %c0 to %c128 step %c8 {
    scf.for %h = %c0 to %c8 step %c4 {
      %row = arith.addi %k, %h : index
      %tile = memref.subview %b[%row, 0] [4, 32] [1, 1] : memref<128x32xf32> to memref<4x32xf32, strided<[32, 1], offset: ?>>
      scf.forall (%t) in (32) {
        %r = affine.apply #rows(%t)
        %c = affine.apply #cols(%t)
        %v = vector.transfer_read %tile[%r, %c], %cst {in_bounds = [true, true]} : memref<4x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
        %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
        vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      } {mapping = [#gpu.thread<linear_dim_0>]}
    }
    linalg.matmul {dyncc.register_tile} ins(%s, %w : memref<8x32xf32, #gpu.address_space<workgroup>>, memref<32x8xf32>) outs(%acc : memref<8x8xf32>)
  }
  scf.for %i = %c0 to %c128 step %c8 {
    %tile = memref.subview %b[%i, 0] [8, 32] [1, 1] : memref<128x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %tile[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
  }
  return
}

// -----

// A pipelined prologue's copy before the k-step loop, inside a loop around
// it (a block's products in turn, say): the product's nearest loop is the
// k-step loop, so the outer loop is no k-step loop of the prologue's copy
// (its next iteration is another product's first step), which is left
// alone; the k-step loop's own copy is prefetched.
#rows = affine_map<(d0) -> (d0 floordiv 8)>
#cols = affine_map<(d0) -> ((d0 mod 8) * 4)>
// CHECK-LABEL: func.func @prologue(
//       CHECK:   scf.for
//       CHECK:     scf.forall
//   CHECK-NOT:       memref.prefetch
//       CHECK:     } {mapping
//       CHECK:     scf.for
//       CHECK:       scf.forall
//       CHECK:         memref.prefetch
//       CHECK:       linalg.matmul
func.func @prologue(%b: memref<256x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8x32xf32, #gpu.address_space<workgroup>>
  %w = memref.alloca() : memref<32x8xf32>
  %acc = memref.alloca() : memref<8x8xf32>
  scf.for %p = %c0 to %c2 step %c1 {
    %base = arith.muli %p, %c128 : index
    %first = memref.subview %b[%base, 0] [8, 32] [1, 1] : memref<256x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    scf.forall (%t) in (64) {
      %r = affine.apply #rows(%t)
      %c = affine.apply #cols(%t)
      %v = vector.transfer_read %first[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
      %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    scf.for %k = %c0 to %c128 step %c8 {
      %row = arith.addi %base, %k : index
      %tile = memref.subview %b[%row, 0] [8, 32] [1, 1] : memref<256x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
      scf.forall (%t) in (64) {
        %r = affine.apply #rows(%t)
        %c = affine.apply #cols(%t)
        %v = vector.transfer_read %tile[%r, %c], %cst {in_bounds = [true, true]} : memref<8x32xf32, strided<[32, 1], offset: ?>>, vector<1x4xf32>
        %d = memref.subview %s[%r, %c] [1, 4] [1, 1] : memref<8x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
        vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
      } {mapping = [#gpu.thread<linear_dim_0>]}
      linalg.matmul {dyncc.register_tile} ins(%s, %w : memref<8x32xf32, #gpu.address_space<workgroup>>, memref<32x8xf32>) outs(%acc : memref<8x8xf32>)
    }
  }
  return
}
