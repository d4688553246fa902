// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dyncc-bound-local-buffers))' --verify-diagnostics | FileCheck %s

// A tile temporary bounded by its tile size (min(4, n - i)) becomes a
// 16-byte buffer at the kernel's entry, viewed at the dynamic size; the copy
// becomes a linalg copy (loops, no run-time library call).
// CHECK-LABEL: func.func @tile_temporary(
//       CHECK:   %[[BUF:.+]] = memref.alloca() {alignment = 16 : i64} : memref<16xi8>
//       CHECK:   scf.for
//       CHECK:     %[[T:.+]] = memref.view %[[BUF]][%{{.+}}][%{{.+}}] : memref<16xi8> to memref<?xf32>
//       CHECK:     linalg.generic {{.*}} ins(%{{.+}} : memref<?xf32, strided<[1], offset: ?>>) outs(%[[T]] : memref<?xf32>)
//   CHECK-NOT:   memref.alloc(
//   CHECK-NOT:   memref.copy
#min = affine_map<(d0)[s0] -> (4, s0 - d0)>
func.func @tile_temporary(%a: memref<?xf32>, %n: index) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %n step %c4 {
    %size = affine.min #min(%i)[%n]
    %t = memref.alloc(%size) : memref<?xf32>
    %src = memref.subview %a[%i] [%size] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
    memref.copy %src, %t : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32>
    memref.dealloc %t : memref<?xf32>
  }
  return
}

// -----

// A temporary as large as the input has no static bound.
func.func @whole_input(%a: memref<?xf32>) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  // expected-error @+1 {{'memref.alloc' op temporary dimension 0 has no static bound; only tile-sized temporaries can live in a kernel}}
  %t = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

// Temporaries beyond the per-thread limit are refused.
func.func @too_large() attributes {dyncc.kernel} {
  // expected-error @+1 {{'memref.alloc' op tile temporaries need 262144 bytes per thread, more than the limit of 65536; the tile is too large}}
  %t = memref.alloc() : memref<65536xf32>
  return
}

// -----

// Reshapes of contiguous buffers become reinterpretations.
// CHECK-LABEL: func.func @reshape(
//       CHECK:   memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%{{.+}}, %{{.+}}, %{{.+}}], strides: [%{{.+}}, %{{.+}}, 1] : memref<?xf32> to memref<?x?x?xf32>
//       CHECK:   memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [1], strides: [1] : memref<i64> to memref<1xi64>
func.func @reshape(%a: memref<?xf32>, %b: memref<i64>, %x: index, %y: index, %z: index) -> (memref<?x?x?xf32>, memref<1xi64>) attributes {dyncc.kernel} {
  %0 = memref.expand_shape %a [[0, 1, 2]] output_shape [%x, %y, %z] : memref<?xf32> into memref<?x?x?xf32>
  %1 = memref.expand_shape %b [] output_shape [1] : memref<i64> into memref<1xi64>
  return %0, %1 : memref<?x?x?xf32>, memref<1xi64>
}

// -----

// A padded window: its size is a sum of clamps (affine.max of an
// affine.min), whose upper bound ValueBoundsOpInterface cannot state; the
// interval fallback bounds it: max(2 - 2i, 0) <= 2 plus min(4, n - i) <= 4
// is at most 6 elements, 24 bytes.
// CHECK-LABEL: func.func @clamped_window(
//       CHECK:   memref.alloca() {alignment = 16 : i64} : memref<24xi8>
//   CHECK-NOT:   memref.alloc(
#low = affine_map<(d0) -> (2 - d0 * 2, 0)>
#len = affine_map<(d0)[s0] -> (4, s0 - d0)>
#sum = affine_map<(d0, d1) -> (d0 + d1)>
func.func @clamped_window(%a: memref<?xf32>, %n: index) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %n step %c4 {
    %pad = affine.max #low(%i)
    %len = affine.min #len(%i)[%n]
    %size = affine.apply #sum(%pad, %len)
    %t = memref.alloc(%size) : memref<?xf32>
    memref.dealloc %t : memref<?xf32>
  }
  return
}

// -----

// Shared buffers beyond the per-block limit (shared-bytes, 48 KB by
// default; the driver passes its targets' opt-in limit) are refused.
func.func @shared_too_large() attributes {dyncc.kernel} {
  %a = memref.alloc() : memref<8192xf32, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'memref.alloc' op shared-memory buffers need 49168 bytes per block, more than the 49152 a block may use on the targets}}
  %b = memref.alloc() : memref<8200xf16, #gpu.address_space<workgroup>>
  return
}

// -----

// A temporary with a static zero dimension has no elements, whatever its
// other sizes: a one-byte buffer, with no bound needed (a slice past the end
// of a symbolic dimension, copied).
// CHECK-LABEL: func.func @empty_temporary(
//       CHECK:   %[[BUF:.+]] = memref.alloca() {alignment = 16 : i64} : memref<1xi8>
//       CHECK:   memref.view %[[BUF]][%{{.+}}][%{{.+}}] : memref<1xi8> to memref<?x0xf32>
//   CHECK-NOT:   memref.alloc(
func.func @empty_temporary(%a: memref<?x0xf32>) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x0xf32>
  %t = memref.alloc(%n) : memref<?x0xf32>
  memref.copy %a, %t : memref<?x0xf32> to memref<?x0xf32>
  return
}

// -----

// A result computed into its destination collapsed ([B*S, N], a GEMM whose
// batch was folded into M) and expanded back along the same groups is the
// destination: the kernel returns the argument itself.
// CHECK-LABEL: func.func @folded_result(
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: memref<?x?x8xf32>, %[[OUT:[a-z0-9]+]]: memref<?x?x8xf32>)
//   CHECK-NOT:   memref.expand_shape
//   CHECK-NOT:   memref.reinterpret_cast
//       CHECK:   return %[[OUT]] : memref<?x?x8xf32>
func.func @folded_result(%x: memref<?x?x8xf32>, %out: memref<?x?x8xf32>) -> memref<?x?x8xf32> attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.dim %x, %c0 : memref<?x?x8xf32>
  %s = memref.dim %x, %c1 : memref<?x?x8xf32>
  %flat = memref.collapse_shape %out [[0, 1], [2]] : memref<?x?x8xf32> into memref<?x8xf32>
  %back = memref.expand_shape %flat [[0, 1], [2]] output_shape [%b, %s, 8] : memref<?x8xf32> into memref<?x?x8xf32>
  return %back : memref<?x?x8xf32>
}

// -----

// A temporary inside a thread's loop is the thread's own, even where
// bufferization put it in workgroup memory (an out-of-place copy of a tile
// of the block's shared accumulator): one workgroup buffer for every thread
// would be a race on the GPU (GPT-2's QKV epilogue computed wrong values).
// It becomes a private buffer, and its views lose the workgroup space; the
// block's own shared tile stays in workgroup memory.
// CHECK-LABEL: func.func @thread_temporary(
//       CHECK:   %[[BUF:.+]] = memref.alloca() {alignment = 16 : i64} : memref<32xi8>
//       CHECK:   memref.alloc() {alignment = 16 : i64} : memref<16x32xf32, #gpu.address_space<workgroup>>
//       CHECK:   scf.forall
//       CHECK:     %[[T:.+]] = memref.view %[[BUF]][%{{.+}}][%{{.+}}] : memref<32xi8> to memref<?x4xf32>
//       CHECK:     memref.reinterpret_cast %[[T]] {{.*}} : memref<?x4xf32> to memref<1x?x4xf32>
//   CHECK-NOT:   xi8, #gpu.address_space<workgroup>
#rows = affine_map<(d0) -> (2, 16 - d0)>
func.func @thread_temporary(%out: memref<1x16x32xf32>) attributes {dyncc.kernel} {
  %acc = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
  scf.forall (%i, %j) = (0, 0) to (16, 32) step (2, 4) {
    %n = affine.min #rows(%i)
    %src = memref.subview %acc[%i, %j] [%n, 4] [1, 1] : memref<16x32xf32, #gpu.address_space<workgroup>> to memref<?x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    %t = memref.alloc(%n) : memref<?x4xf32, #gpu.address_space<workgroup>>
    memref.copy %src, %t : memref<?x4xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>> to memref<?x4xf32, #gpu.address_space<workgroup>>
    %e = memref.expand_shape %t [[0, 1], [2]] output_shape [1, %n, 4] : memref<?x4xf32, #gpu.address_space<workgroup>> into memref<1x?x4xf32, #gpu.address_space<workgroup>>
    %dst = memref.subview %out[0, %i, %j] [1, %n, 4] [1, 1, 1] : memref<1x16x32xf32> to memref<1x?x4xf32, strided<[512, 32, 1], offset: ?>>
    memref.copy %e, %dst : memref<1x?x4xf32, #gpu.address_space<workgroup>> to memref<1x?x4xf32, strided<[512, 32, 1], offset: ?>>
  } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  return
}

// -----

// A conv's padded piece of its window: a temporary filled with zeros,
// written where it meets the input, then copied whole into the thread's
// piece of the shared tile. It is computed in the shared piece instead
// (on the GPU the temporary was local memory: two stores and a load an
// element): zeros into the piece, the input into its part of the piece.
// CHECK-LABEL: func.func @padded_piece(
//   CHECK-NOT:   memref.alloca
//       CHECK:   %[[SHARED:.+]] = memref.alloc() {alignment = 16 : i64} : memref<7x31xf32, #gpu.address_space<workgroup>>
//       CHECK:   scf.forall
//       CHECK:     %[[PIECE:.+]] = memref.subview %[[SHARED]][%{{.+}}, %{{.+}}] [%[[H:.+]], %[[W:.+]]] [1, 1]
//       CHECK:     linalg.map outs(%[[PIECE]] : memref<?x?xf32, strided<[31, 1], offset: ?>, #gpu.address_space<workgroup>>)
//       CHECK:     %[[PART:.+]] = memref.subview %[[PIECE]][%{{.+}}, %{{.+}}] [%{{.+}}, %{{.+}}] [1, 1]
//       CHECK:     linalg.generic {{.*}} ins(%{{.+}} : memref<?x?xf32, strided<[224, 1], offset: ?>>) outs(%[[PART]] :
//   CHECK-NOT:     linalg.copy
//       CHECK:   } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
#hmin = affine_map<(d0) -> (4, 7 - d0)>
#wmin = affine_map<(d0) -> (8, 31 - d0)>
func.func @padded_piece(%x: memref<224x224xf32>, %r: index, %c: index, %ph: index, %pw: index, %ih: index, %iw: index) attributes {dyncc.kernel} {
  %zero = arith.constant 0.0 : f32
  %shared = memref.alloc() : memref<7x31xf32, #gpu.address_space<workgroup>>
  scf.forall (%i, %j) = (0, 0) to (7, 31) step (4, 8) {
    %h = affine.min #hmin(%i)
    %w = affine.min #wmin(%j)
    %src = memref.subview %x[%r, %c] [%ih, %iw] [1, 1] : memref<224x224xf32> to memref<?x?xf32, strided<[224, 1], offset: ?>>
    %t = memref.alloc(%h, %w) : memref<?x?xf32>
    linalg.map outs(%t : memref<?x?xf32>)
      (%init: f32) {
      linalg.yield %zero : f32
    }
    %part = memref.subview %t[%ph, %pw] [%ih, %iw] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    memref.copy %src, %part : memref<?x?xf32, strided<[224, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
    %piece = memref.subview %shared[%i, %j] [%h, %w] [1, 1] : memref<7x31xf32, #gpu.address_space<workgroup>> to memref<?x?xf32, strided<[31, 1], offset: ?>, #gpu.address_space<workgroup>>
    linalg.copy ins(%t : memref<?x?xf32>) outs(%piece : memref<?x?xf32, strided<[31, 1], offset: ?>, #gpu.address_space<workgroup>>)
    memref.dealloc %t : memref<?x?xf32>
  } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  return
}

// -----

// The piece sized as a padded window piece is: its low padding plus its
// rows in bounds, where its shared tile is sized by the tile's clamp. The
// two sizes are other values, equal wherever the copy runs (a copy takes
// one shape): still computed in the shared tile.
// CHECK-LABEL: func.func @padded_piece_sized_apart(
//   CHECK-NOT:   memref.alloca
//       CHECK:   %[[SHARED:.+]] = memref.alloc() {alignment = 16 : i64} : memref<7x9xf32, #gpu.address_space<workgroup>>
//       CHECK:   scf.forall
//       CHECK:     %[[PIECE:.+]] = memref.subview %[[SHARED]][%{{.+}}, 0] [%{{.+}}, 9] [1, 1]
//       CHECK:     linalg.map outs(%[[PIECE]] : memref<?x9xf32, strided<[9, 1], offset: ?>, #gpu.address_space<workgroup>>)
//   CHECK-NOT:     linalg.copy
//       CHECK:   } {mapping = [#gpu.thread<y>]}
#rows = affine_map<(d0) -> (2, 7 - d0)>
#low = affine_map<(d0) -> (1 - d0 * 2, 0)>
#data = affine_map<(d0)[s0] -> (s0 - d0, 2)>
#sum = affine_map<(d0, d1) -> (d0 + d1)>
func.func @padded_piece_sized_apart(%x: memref<56x56xf32>, %r: index) attributes {dyncc.kernel} {
  %zero = arith.constant 0.0 : f32
  %shared = memref.alloc() : memref<7x9xf32, #gpu.address_space<workgroup>>
  scf.forall (%i) = (0) to (7) step (2) {
    %h = affine.min #rows(%i)
    %lo = affine.max #low(%i)
    %in = affine.min #data(%lo)[%h]
    %size = affine.apply #sum(%lo, %in)
    %src = memref.subview %x[%r, 0] [%in, 9] [1, 1] : memref<56x56xf32> to memref<?x9xf32, strided<[56, 1], offset: ?>>
    %t = memref.alloc(%size) : memref<?x9xf32>
    linalg.map outs(%t : memref<?x9xf32>)
      (%init: f32) {
      linalg.yield %zero : f32
    }
    %part = memref.subview %t[%lo, 0] [%in, 9] [1, 1] : memref<?x9xf32> to memref<?x9xf32, strided<[9, 1], offset: ?>>
    memref.copy %src, %part : memref<?x9xf32, strided<[56, 1], offset: ?>> to memref<?x9xf32, strided<[9, 1], offset: ?>>
    %piece = memref.subview %shared[%i, 0] [%h, 9] [1, 1] : memref<7x9xf32, #gpu.address_space<workgroup>> to memref<?x9xf32, strided<[9, 1], offset: ?>, #gpu.address_space<workgroup>>
    linalg.copy ins(%t : memref<?x9xf32>) outs(%piece : memref<?x9xf32, strided<[9, 1], offset: ?>, #gpu.address_space<workgroup>>)
    memref.dealloc %t : memref<?x9xf32>
  } {mapping = [#gpu.thread<y>]}
  return
}

// -----

// Kept: the temporary's destination is a kernel argument (which the
// writes could read); the temporary is read before its copy; something
// else touches memory between its first write and its copy.
// CHECK-LABEL: func.func @into_argument(
//       CHECK:   memref.alloca() {alignment = 16 : i64} : memref<16xi8>
// CHECK-LABEL: func.func @read_before(
//       CHECK:   memref.alloca() {alignment = 16 : i64} : memref<16xi8>
// CHECK-LABEL: func.func @store_between(
//       CHECK:   memref.alloca() {alignment = 16 : i64} : memref<16xi8>
#min4 = affine_map<(d0)[s0] -> (4, s0 - d0)>
func.func @into_argument(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c4 {
    %size = affine.min #min4(%i)[%n]
    %t = memref.alloc(%size) : memref<?xf32>
    linalg.map outs(%t : memref<?xf32>)
      (%init: f32) {
      linalg.yield %zero : f32
    }
    %dst = memref.subview %y[%i] [%size] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
    linalg.copy ins(%t : memref<?xf32>) outs(%dst : memref<?xf32, strided<[1], offset: ?>>)
  }
  return
}
func.func @read_before(%x: memref<?xf32>, %n: index) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %shared = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  %other = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  scf.for %i = %c0 to %n step %c4 {
    %size = affine.min #min4(%i)[%n]
    %t = memref.alloc(%size) : memref<?xf32>
    linalg.map outs(%t : memref<?xf32>)
      (%init: f32) {
      linalg.yield %zero : f32
    }
    %o = memref.subview %other[0] [%size] [1] : memref<4xf32, #gpu.address_space<workgroup>> to memref<?xf32, strided<[1]>, #gpu.address_space<workgroup>>
    linalg.copy ins(%t : memref<?xf32>) outs(%o : memref<?xf32, strided<[1]>, #gpu.address_space<workgroup>>)
    %dst = memref.subview %shared[0] [%size] [1] : memref<4xf32, #gpu.address_space<workgroup>> to memref<?xf32, strided<[1]>, #gpu.address_space<workgroup>>
    linalg.copy ins(%t : memref<?xf32>) outs(%dst : memref<?xf32, strided<[1]>, #gpu.address_space<workgroup>>)
  }
  return
}
func.func @store_between(%x: memref<?xf32>, %n: index) attributes {dyncc.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %shared = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
  scf.for %i = %c0 to %n step %c4 {
    %size = affine.min #min4(%i)[%n]
    %t = memref.alloc(%size) : memref<?xf32>
    linalg.map outs(%t : memref<?xf32>)
      (%init: f32) {
      linalg.yield %zero : f32
    }
    memref.store %zero, %shared[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    %dst = memref.subview %shared[0] [%size] [1] : memref<4xf32, #gpu.address_space<workgroup>> to memref<?xf32, strided<[1]>, #gpu.address_space<workgroup>>
    linalg.copy ins(%t : memref<?xf32>) outs(%dst : memref<?xf32, strided<[1]>, #gpu.address_space<workgroup>>)
  }
  return
}
