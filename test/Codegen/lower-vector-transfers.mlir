// RUN: dyncc-opt %s -pass-pipeline='builtin.module(func.func(dyncc-lower-vector-transfers))' | FileCheck %s

// In-bounds 1-D transfers along a unit-stride innermost dimension (what
// dyncc-tile-and-fuse makes, aligned by construction) become loads and
// stores aligned to the vector's size.
// CHECK-LABEL: func.func @aligned
// CHECK:         %[[A:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<1x4xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK:         %[[H:.+]] = vector.load %{{.+}}[%{{.+}}] {alignment = 8 : i64} : memref<?xf16>, vector<4xf16>
// CHECK:         vector.store %[[A]], %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<1x4xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK-NOT:     vector.transfer
func.func @aligned(%a: memref<1x4xf32, strided<[?, 1], offset: ?>>, %h: memref<?xf16>, %i: index) -> vector<4xf16> {
  %c0 = arith.constant 0 : index
  %f = arith.constant 0.0 : f32
  %fh = arith.constant 0.0 : f16
  %v = vector.transfer_read %a[%c0, %c0], %f {in_bounds = [true]} : memref<1x4xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
  %w = vector.transfer_read %h[%i], %fh {in_bounds = [true]} : memref<?xf16>, vector<4xf16>
  vector.transfer_write %v, %a[%c0, %c0] {in_bounds = [true]} : vector<4xf32>, memref<1x4xf32, strided<[?, 1], offset: ?>>
  return %w : vector<4xf16>
}

// Anything else is left alone: reads past the extents (a tensor-core
// chunk's zero-filled tail), a strided innermost dimension, a transposing
// map, 2-D vectors, vectors wider than 16 bytes.
// CHECK-LABEL: func.func @left
// CHECK-COUNT-5: vector.transfer_read
// CHECK-NOT:     vector.load
func.func @left(%a: memref<?x?xf32>, %s: memref<8xf32, strided<[2]>>, %i: index) {
  %f = arith.constant 0.0 : f32
  %0 = vector.transfer_read %a[%i, %i], %f {in_bounds = [false]} : memref<?x?xf32>, vector<4xf32>
  %1 = vector.transfer_read %s[%i], %f {in_bounds = [true]} : memref<8xf32, strided<[2]>>, vector<4xf32>
  %2 = vector.transfer_read %a[%i, %i], %f {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<?x?xf32>, vector<4xf32>
  %3 = vector.transfer_read %a[%i, %i], %f {in_bounds = [true, true]} : memref<?x?xf32>, vector<2x4xf32>
  %4 = vector.transfer_read %a[%i, %i], %f {in_bounds = [true]} : memref<?x?xf32>, vector<8xf32>
  return
}

// A read that broadcasts one element along the vector (an operand of
// extent 1 broadcast along the innermost dimension of a thread tile: Expand
// [3, 1] to [3, 4]) becomes a scalar load and a broadcast; the GPU's
// vector-to-LLVM lowering has no pattern for it. One that is not in bounds
// is left alone.
// CHECK-LABEL: func.func @broadcast
//  CHECK-SAME:     %[[A:[a-z0-9]+]]: memref<1xf32, strided<[1], offset: ?>>, %[[I:[a-z0-9]+]]: index
//       CHECK:   %[[E:.+]] = memref.load %[[A]][%[[I]]]
//       CHECK:   %[[V:.+]] = vector.broadcast %[[E]] : f32 to vector<4xf32>
//       CHECK:   %[[W:.+]] = vector.transfer_read %[[A]][%[[I]]], %{{.+}} {permutation_map
//       CHECK:   return %[[V]], %[[W]]
func.func @broadcast(%a: memref<1xf32, strided<[1], offset: ?>>, %i: index) -> (vector<4xf32>, vector<4xf32>) {
  %f = arith.constant 0.0 : f32
  %0 = vector.transfer_read %a[%i], %f {in_bounds = [true], permutation_map = affine_map<(d0) -> (0)>} : memref<1xf32, strided<[1], offset: ?>>, vector<4xf32>
  %1 = vector.transfer_read %a[%i], %f {in_bounds = [false], permutation_map = affine_map<(d0) -> (0)>} : memref<1xf32, strided<[1], offset: ?>>, vector<4xf32>
  return %0, %1 : vector<4xf32>, vector<4xf32>
}
