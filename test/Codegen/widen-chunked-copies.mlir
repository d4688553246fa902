// RUN: dyncc-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(dyncc-widen-chunked-copies))' \
// RUN:   | FileCheck %s
// RUN: dyncc-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(dyncc-widen-chunked-copies{bytes=32}))' \
// RUN:   | FileCheck %s --check-prefix=BYTES32

// A k-step's copies of A (a dynamic tile: rows past M and columns past K
// read padding) and B (a static tile), 16 bytes a chunk. Four chunks side by
// side in a row become one 64-byte chunk: the count is a quarter, the chunk
// index is scaled by 4 before the index maps. B's static tile's read is in
// bounds (its rows and columns stay inside 32x128 at every chunk); A's keeps
// its masks.
#rowsA = affine_map<(d0) -> ((d0 floordiv 8) mod 64)>
#colsA = affine_map<(d0) -> (d0 * 4 - (d0 floordiv 8) * 32)>
#rowsB = affine_map<(d0) -> ((d0 floordiv 32) mod 32)>
#colsB = affine_map<(d0) -> (d0 * 4 - (d0 floordiv 32) * 128)>
//   CHECK-DAG: #[[X4:map[0-9]*]] = affine_map<(d0) -> (d0 * 4)>
//   CHECK-DAG: #[[ROWSA:map[0-9]*]] = affine_map<(d0) -> ((d0 floordiv 8) mod 64)>
//   CHECK-DAG: #[[COLSA:map[0-9]*]] = affine_map<(d0) -> (d0 * 4 - (d0 floordiv 8) * 32)>
// CHECK-LABEL: func.func @copies(
//       CHECK:   scf.forall (%[[T:.*]]) in (128) {
//       CHECK:     %[[FIRST:.*]] = affine.apply #[[X4]](%[[T]])
//       CHECK:     %[[R:.*]] = affine.apply #[[ROWSA]](%[[FIRST]])
//       CHECK:     %[[C:.*]] = affine.apply #[[COLSA]](%[[FIRST]])
//       CHECK:     %[[V:.*]] = vector.transfer_read %{{.*}}[%[[R]], %[[C]]], %{{[a-z0-9_]+}} : memref<?x?xf32, strided<[128, 1], offset: ?>>, vector<1x16xf32>
//       CHECK:     %[[D:.*]] = memref.subview %{{.*}}[%[[R]], %[[C]]] [1, 16] [1, 1] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<1x16xf32
//       CHECK:     vector.transfer_write %[[V]], %[[D]][%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>
//       CHECK:   scf.forall (%{{.*}}) in (256) {
//       CHECK:     vector.transfer_read %{{.*}} {in_bounds = [true, true]} : memref<32x128xf32, strided<[384, 1], offset: ?>>, vector<1x16xf32>
//       CHECK:     memref.subview %{{.*}} [1, 16] [1, 1] : memref<32x128xf32, #gpu.address_space<workgroup>>
//       CHECK:     vector.transfer_write %{{.*}} : vector<1x16xf32>
// With at most 32 bytes a chunk: two chunks a run.
// BYTES32-LABEL: func.func @copies(
//       BYTES32:   scf.forall (%{{.*}}) in (256) {
//       BYTES32:     vector<1x8xf32>
//       BYTES32:   scf.forall (%{{.*}}) in (512) {
//       BYTES32:     vector.transfer_read %{{.*}} {in_bounds = [true, true]} : memref<32x128xf32, strided<[384, 1], offset: ?>>, vector<1x8xf32>
func.func @copies(%a: memref<?x128xf32>, %b: memref<128x384xf32>, %m: index, %k: index) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %sa = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
  %sb = memref.alloc() : memref<32x128xf32, #gpu.address_space<workgroup>>
  %ta = memref.subview %a[0, %k] [%m, %m] [1, 1] : memref<?x128xf32> to memref<?x?xf32, strided<[128, 1], offset: ?>>
  scf.forall (%t) in (512) {
    %r = affine.apply #rowsA(%t)
    %c = affine.apply #colsA(%t)
    %v = vector.transfer_read %ta[%r, %c], %cst : memref<?x?xf32, strided<[128, 1], offset: ?>>, vector<1x4xf32>
    %d = memref.subview %sa[%r, %c] [1, 4] [1, 1] : memref<64x32xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  %tb = memref.subview %b[%k, 0] [32, 128] [1, 1] : memref<128x384xf32> to memref<32x128xf32, strided<[384, 1], offset: ?>>
  scf.forall (%t) in (1024) {
    %r = affine.apply #rowsB(%t)
    %c = affine.apply #colsB(%t)
    %v = vector.transfer_read %tb[%r, %c], %cst : memref<32x128xf32, strided<[384, 1], offset: ?>>, vector<1x4xf32>
    %d = memref.subview %sb[%r, %c] [1, 4] [1, 1] : memref<32x128xf32, #gpu.address_space<workgroup>> to memref<1x4xf32, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
    vector.transfer_write %v, %d[%c0, %c0] {in_bounds = [true, true]} : vector<1x4xf32>, memref<1x4xf32, strided<[128, 1], offset: ?>, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  return
}

// -----

// Runs stop at a row's end: two 16-byte chunks a row of 8 f32, so runs of
// two whatever the bytes allow, and a write that indexes its buffer directly
// (no view) is widened too. Half-precision chunks of 8 bytes become 64.
#rows2 = affine_map<(d0) -> (d0 floordiv 2)>
#cols2 = affine_map<(d0) -> ((d0 mod 2) * 4)>
#rows8 = affine_map<(d0) -> (d0 floordiv 8)>
#cols8 = affine_map<(d0) -> ((d0 mod 8) * 4)>
#rows4 = affine_map<(d0) -> (d0 floordiv 4)>
#cols4 = affine_map<(d0) -> ((d0 mod 4) * 4)>
// CHECK-LABEL: func.func @row_ends(
//       CHECK:   scf.forall (%{{.*}}) in (16) {
//       CHECK:     %[[V:.*]] = vector.transfer_read {{.*}} {in_bounds = [true, true]} : memref<16x8xf32>, vector<1x8xf32>
//       CHECK:     vector.transfer_write %[[V]], %{{.*}}[%{{.*}}, %{{.*}}] {in_bounds = [true, true]} : vector<1x8xf32>, memref<16x8xf32, #gpu.address_space<workgroup>>
//       CHECK:   scf.forall (%{{.*}}) in (8) {
//       CHECK:     vector.transfer_read {{.*}} {in_bounds = [true, true]} : memref<8x32xf16>, vector<1x32xf16>
// A static source the copy's rows run past (15 rows, a 16-row tile) keeps
// the rows' mask; a row from outside the copy (a loop's index, 0 to 3)
// is bounded by getBounds: in bounds of 4 rows, not of 3.
//       CHECK:   scf.forall (%{{.*}}) in (16) {
//       CHECK:     vector.transfer_read {{.*}} {in_bounds = [false, true]} : memref<15x16xf32>, vector<1x16xf32>
//       CHECK:   scf.for
//       CHECK:     scf.forall (%{{.*}}) in (1) {
//       CHECK:       vector.transfer_read {{.*}} {in_bounds = [true, true]} : memref<4x16xf32>, vector<1x16xf32>
//       CHECK:     scf.forall (%{{.*}}) in (1) {
//       CHECK:       vector.transfer_read {{.*}} {in_bounds = [false, true]} : memref<3x16xf32>, vector<1x16xf32>
func.func @row_ends(%a: memref<16x8xf32>, %h: memref<8x32xf16>, %e: memref<15x16xf32>, %f: memref<4x16xf32>, %g: memref<3x16xf32>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %hz = arith.constant 0.0 : f16
  %s = memref.alloc() : memref<16x8xf32, #gpu.address_space<workgroup>>
  %sh = memref.alloc() : memref<8x32xf16, #gpu.address_space<workgroup>>
  scf.forall (%t) in (32) {
    %r = affine.apply #rows2(%t)
    %c = affine.apply #cols2(%t)
    %v = vector.transfer_read %a[%r, %c], %cst : memref<16x8xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x8xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.forall (%t) in (64) {
    %r = affine.apply #rows8(%t)
    %c = affine.apply #cols8(%t)
    %v = vector.transfer_read %h[%r, %c], %hz : memref<8x32xf16>, vector<1x4xf16>
    vector.transfer_write %v, %sh[%r, %c] {in_bounds = [true, true]} : vector<1x4xf16>, memref<8x32xf16, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  %s16 = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
  scf.forall (%t) in (64) {
    %r = affine.apply #rows4(%t)
    %c = affine.apply #cols4(%t)
    %v = vector.transfer_read %e[%r, %c], %cst : memref<15x16xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s16[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.forall (%t) in (4) {
      %c = affine.apply #cols4(%t)
      %v = vector.transfer_read %f[%i, %c], %cst : memref<4x16xf32>, vector<1x4xf32>
      vector.transfer_write %v, %s16[%i, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
    scf.forall (%t) in (4) {
      %c = affine.apply #cols4(%t)
      %v = vector.transfer_read %g[%i, %c], %cst : memref<3x16xf32>, vector<1x4xf32>
      vector.transfer_write %v, %s16[%i, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<linear_dim_0>]}
  }
  return
}

// -----

// Not widened, though their reads become in bounds: chunks in column-major
// order (chunk t + 1 is the next row), and a count no run divides (3 chunks
// a row). Left as they are: a chunk index that reaches an index through an
// op other than one affine.apply of it alone, and a count that is not a
// static attribute (an SSA value, even a constant one: canonicalization
// makes it static before the pass in the pipeline).
#rowsCM = affine_map<(d0) -> (d0 mod 16)>
#colsCM = affine_map<(d0) -> ((d0 floordiv 16) * 4)>
#rows3 = affine_map<(d0) -> (d0 floordiv 3)>
#cols3 = affine_map<(d0) -> ((d0 mod 3) * 4)>
#rowsD = affine_map<(d0) -> (d0 floordiv 4)>
#colsD = affine_map<(d0) -> ((d0 mod 4) * 4)>
// CHECK-LABEL: func.func @left_alone(
//       CHECK:   scf.forall (%{{.*}}) in (64) {
//       CHECK:     vector.transfer_read %{{.*}} {in_bounds = [true, true]} : memref<16x16xf32>, vector<1x4xf32>
//       CHECK:   scf.forall (%{{.*}}) in (9) {
//       CHECK:     vector.transfer_read %{{.*}} {in_bounds = [true, true]} : memref<3x12xf32>, vector<1x4xf32>
//       CHECK:   scf.forall (%{{.*}}) in (64) {
//       CHECK:     vector.transfer_read %{{.*}} : memref<16x16xf32>, vector<1x4xf32>
//       CHECK:   scf.forall (%{{.*}}) in (%{{.*}}) {
//       CHECK:     vector.transfer_read %{{.*}} : memref<16x16xf32>, vector<1x4xf32>
//       CHECK:   scf.forall (%{{.*}}) in (%{{.*}}) {
//       CHECK:     vector.transfer_read %{{.*}} : memref<16x16xf32>, vector<1x4xf32>
//   CHECK-NOT:   vector<1x8xf32>
//   CHECK-NOT:   vector<1x16xf32>
func.func @left_alone(%a: memref<16x16xf32>, %b: memref<3x12xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
  %s3 = memref.alloc() : memref<3x12xf32, #gpu.address_space<workgroup>>
  scf.forall (%t) in (64) {
    %r = affine.apply #rowsCM(%t)
    %c = affine.apply #colsCM(%t)
    %v = vector.transfer_read %a[%r, %c], %cst : memref<16x16xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.forall (%t) in (9) {
    %r = affine.apply #rows3(%t)
    %c = affine.apply #cols3(%t)
    %v = vector.transfer_read %b[%r, %c], %cst : memref<3x12xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s3[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<3x12xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.forall (%t) in (64) {
    %r = affine.apply #rows3(%t)
    %c = arith.muli %t, %c4 : index
    %v = vector.transfer_read %a[%r, %c], %cst : memref<16x16xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.forall (%t) in (%n) {
    %r = affine.apply #rowsD(%t)
    %c = affine.apply #colsD(%t)
    %v = vector.transfer_read %a[%r, %c], %cst : memref<16x16xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  %c16 = arith.constant 16 : index
  scf.forall (%t) in (%c16) {
    %r = affine.apply #rowsD(%t)
    %c = affine.apply #colsD(%t)
    %v = vector.transfer_read %a[%r, %c], %cst : memref<16x16xf32>, vector<1x4xf32>
    vector.transfer_write %v, %s[%r, %c] {in_bounds = [true, true]} : vector<1x4xf32>, memref<16x16xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  return
}
