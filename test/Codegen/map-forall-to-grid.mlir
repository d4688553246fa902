// RUN: dyncc-opt %s --split-input-file --dyncc-map-forall-to-grid=target=gpu --verify-diagnostics | FileCheck %s --check-prefix=GPU
// RUN: dyncc-opt %s --split-input-file --dyncc-map-forall-to-grid=target=cpu --verify-diagnostics | FileCheck %s --check-prefix=CPU

#tail = affine_map<(d0)[s0] -> (-d0 + s0, 128)>
#ttail = affine_map<(d0)[s0] -> (-d0 + s0, 4)>
func.func @relu(%n: index, %x: memref<?xf32>, %out: memref<?xf32>) -> memref<?xf32> attributes {dyncc.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) = (0) to (%n) step (128) {
    %bs = affine.min #tail(%i)[%n]
    %xb = memref.subview %x[%i] [%bs] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
    %ob = memref.subview %out[%i] [%bs] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
    scf.forall (%j) = (0) to (%bs) step (4) {
      %ts = affine.min #ttail(%j)[%bs]
      %xt = memref.subview %xb[%j] [%ts] [1] : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
      %ot = memref.subview %ob[%j] [%ts] [1] : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
          ins(%xt : memref<?xf32, strided<[1], offset: ?>>) outs(%ot : memref<?xf32, strided<[1], offset: ?>>) {
      ^bb0(%in: f32, %o: f32):
        %r = arith.maximumf %in, %zero : f32
        linalg.yield %r : f32
      }
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return %out : memref<?xf32>
}

// The kernel moves into gpu.module @dyncc_kernels; the returned destination
// is dropped. The block's linear id, x + gridDim.x * (y + gridDim.y * z),
// gives the tile offset (guarded), so the run-time may launch the grid along
// any axis; threads stride by the block size over the thread tiles, so
// tails leave threads idle.
// GPU: module attributes {gpu.container_module}
// GPU-LABEL: gpu.module @dyncc_kernels
//       GPU:   gpu.func @relu(%[[N:.+]]: index, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>) kernel
//       GPU:     %[[BY:.+]] = gpu.block_id y
//       GPU:     %[[BZ:.+]] = gpu.block_id z
//       GPU:     %[[GX:.+]] = gpu.grid_dim x
//       GPU:     %[[GY:.+]] = gpu.grid_dim y
//       GPU:     %[[ZGY:.+]] = arith.muli %[[GY]], %[[BZ]]
//       GPU:     %[[YZ:.+]] = arith.addi %[[BY]], %[[ZGY]]
//       GPU:     %[[BX:.+]] = gpu.block_id x
//       GPU:     %[[YZGX:.+]] = arith.muli %[[GX]], %[[YZ]]
//       GPU:     %[[BID:.+]] = arith.addi %[[BX]], %[[YZGX]]
//       GPU:     %[[OFF:.+]] = arith.muli %[[BID]], %{{.+}}
//       GPU:     %[[IN:.+]] = arith.cmpi slt, %{{.+}}, %[[N]]
//       GPU:     scf.if %[[IN]] {
//       GPU:       %[[TID:.+]] = gpu.thread_id x
//       GPU:       %[[BDIM:.+]] = gpu.block_dim x
//       GPU:       scf.for
//       GPU:         linalg.generic
//       GPU:     gpu.return
//   GPU-NOT: func.func @relu

// The CPU entry takes the block ids as three trailing index arguments and
// runs the thread tiles as a loop.
// CPU-LABEL: func.func @relu(
//  CPU-SAME:     %[[N:[a-zA-Z0-9]+]]: index, %{{.+}}: memref<?xf32>, %{{.+}}: memref<?xf32>, %[[BX:[a-zA-Z0-9]+]]: index, %{{.+}}: index, %{{.+}}: index)
//  CPU-SAME:     dyncc.block_entry
//   CPU-NOT:   -> memref
//       CPU:   arith.muli %[[BX]]
//       CPU:   scf.if
//       CPU:     scf.for
//       CPU:       linalg.generic
//   CPU-NOT:   gpu.

// -----

// Three block dimensions: on the GPU the linear id is split x innermost (its
// block count ceildiv(n, 32)), then y (ceildiv(m, 16)); z takes the rest.
// On the CPU the entry's three block ids are the dimensions themselves.
func.func @three_axes(%b: index, %m: index, %n: index, %out: memref<?x?x?xf32>) attributes {dyncc.kernel} {
  %one = arith.constant 1.0 : f32
  scf.forall (%i, %j, %k) = (0, 0, 0) to (%b, %m, %n) step (1, 16, 32) {
    memref.store %one, %out[%i, %j, %k] : memref<?x?x?xf32>
  } {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
  return
}
// GPU-LABEL: gpu.func @three_axes(
//  GPU-SAME:     %[[B:[a-zA-Z0-9]+]]: index, %[[M:[a-zA-Z0-9]+]]: index, %[[N:[a-zA-Z0-9]+]]: index
//       GPU:   %[[BX:.+]] = gpu.block_id x
//       GPU:   %[[LIN:[0-9]+]] = arith.addi %[[BX]], %{{.+}} : index
//       GPU:   %[[NX:[0-9]+]] = arith.subi %[[N]], %{{.+}}
//       GPU:   %[[CX:[0-9]+]] = arith.ceildivui %[[NX]], %c32
//       GPU:   %[[X:[0-9]+]] = arith.remui %[[LIN]], %[[CX]]
//       GPU:   %[[R:[0-9]+]] = arith.divui %[[LIN]], %[[CX]]
//       GPU:   %[[MY:[0-9]+]] = arith.subi %[[M]], %{{.+}}
//       GPU:   %[[CY:[0-9]+]] = arith.ceildivui %[[MY]], %c16
//       GPU:   %[[Y:[0-9]+]] = arith.remui %[[R]], %[[CY]]
//       GPU:   %[[Z:[0-9]+]] = arith.divui %[[R]], %[[CY]]
//       GPU:   arith.muli %[[Z]], %c1
//       GPU:   arith.muli %[[Y]], %c16
//       GPU:   arith.muli %[[X]], %c32
// CPU-LABEL: func.func @three_axes(
//  CPU-SAME:     %[[BX:[a-zA-Z0-9]+]]: index, %[[BY:[a-zA-Z0-9]+]]: index, %[[BZ:[a-zA-Z0-9]+]]: index)
//   CPU-NOT:   arith.remui
//       CPU:   arith.muli %[[BZ]], %c1
//       CPU:   arith.muli %[[BY]], %c16
//       CPU:   arith.muli %[[BX]], %c32

// -----

func.func @not_in_place(%n: index, %out: memref<?xf32>) -> memref<?xf32> attributes {dyncc.kernel} {
  // expected-error @+1 {{'memref.alloc' op left in a kernel; run dyncc-bound-local-buffers after bufferization}}
  %tmp = memref.alloc(%n) : memref<?xf32>
  return %out : memref<?xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 is not written in place into a destination argument}}
func.func @fresh_result(%n: index) -> index attributes {dyncc.kernel} {
  %c = arith.constant 1 : index
  return %c : index
}

// -----

// A write of a kernel buffer outside the block forall would be repeated by
// every block, racing with the blocks' tiles; a write of a thread's own
// buffer there is allowed (only redundant), and so are writes inside a
// block-uniform scf.if's thread forall.
func.func @undistributed_write(%n: index, %out: memref<?xf32>, %cond: i1) attributes {dyncc.kernel} {
  %zero = arith.constant 0.0 : f32
  %local = memref.alloca() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%local : memref<4xf32>)
  scf.if %cond {
    scf.forall (%i) in (4) {
      memref.store %zero, %out[%i] : memref<?xf32>
    } {mapping = [#gpu.thread<x>]}
  }
  %view = memref.subview %out[0] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  // expected-error @+1 {{'linalg.fill' op writes a kernel buffer outside the block tiles, where every block would run it; tiling could not fuse it into the tiles that read it}}
  linalg.fill ins(%zero : f32) outs(%view : memref<?xf32, strided<[1]>>)
  scf.forall (%i) = (0) to (%n) step (4) {
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

// An op whose memory effects are unknown (a call) cannot be shown to leave
// the kernel's buffers alone.
func.func private @opaque()
func.func @unknown_effects(%n: index) attributes {dyncc.kernel} {
  // expected-error @+1 {{'func.call' op has unknown memory effects outside the block tiles}}
  func.call @opaque() : () -> ()
  scf.forall (%i) = (0) to (%n) step (4) {
  } {mapping = [#gpu.block<x>]}
  return
}

// -----

func.func @unmapped(%n: index) attributes {dyncc.kernel} {
  // expected-error @+1 {{'scf.forall' op has no block or thread mapping}}
  scf.forall (%i) = (0) to (%n) step (4) {
  }
  return
}

// -----

// All the block's threads as one linear dimension (the chunks of a copy
// into shared memory): thread (x + bdx * (y + bdy * z)) takes chunks t,
// t + bdx * bdy * bdz, ... On the CPU it is a loop over every chunk. A
// block-uniform condition outside thread foralls may hold shared-memory
// accesses: the barrier goes before it, the write and the read stay apart.
// GPU-LABEL: gpu.func @linear_chunks
//   GPU-DAG:   %[[Z:.*]] = gpu.thread_id z
//   GPU-DAG:   %[[BY:.*]] = gpu.block_dim y
//   GPU-DAG:   %[[Y:.*]] = gpu.thread_id y
//       GPU:   %[[ZY:.*]] = arith.muli %[[Z]], %[[BY]]
//       GPU:   %[[ZYY:.*]] = arith.addi %[[ZY]], %[[Y]]
//       GPU:   %[[X:.*]] = gpu.thread_id x
//       GPU:   %[[BX:.*]] = gpu.block_dim x
//       GPU:   %[[ID:.*]] = arith.addi {{.*}}, %[[X]]
//       GPU:   arith.muli %[[ID]], %c1
//       GPU:   scf.for %{{.*}} = %{{.*}} to %c256 step %{{.*}} {
//       GPU:     memref.store
//       GPU:   gpu.barrier
//       GPU:   scf.if
//       GPU:   gpu.barrier
//       GPU:   memref.load
// CPU-LABEL: func.func @linear_chunks
//       CPU:   scf.for %{{.*}} = %c0 to %c256 step %c1 {
func.func @linear_chunks(%out: memref<128xf32>, %cond: i1) attributes {dyncc.kernel} {
  %one = arith.constant 1.0 : f32
  %tile = memref.alloc() : memref<256xf32, #gpu.address_space<workgroup>>
  scf.forall (%i) in (256) {
    memref.store %one, %tile[%i] : memref<256xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_0>]}
  scf.if %cond {
    scf.forall (%i) in (128) {
      %v = memref.load %tile[%i] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %v, %tile[%i] : memref<256xf32, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<x>]}
  }
  scf.forall (%i) in (128) {
    %v = memref.load %tile[%i] : memref<256xf32, #gpu.address_space<workgroup>>
    memref.store %v, %out[%i] : memref<128xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// Several linear thread dimensions (a shared tile's elements over all the
// block's threads): one loop over all of them as one linear index, each
// dimension delinearized from it, linear_dim_0 fastest (here the forall's
// second dimension: consecutive threads take consecutive columns).
// GPU-LABEL: gpu.func @linear_tile
//       GPU:   scf.for %[[F:.*]] = %{{.*}} to %c217 step %{{.*}} {
//  GPU-NEXT:     %[[IJ:.*]]:2 = affine.delinearize_index %[[F]] into (7, 31)
//  GPU-NEXT:     memref.store %{{.*}}, %{{.*}}[%[[IJ]]#0, %[[IJ]]#1]
//       GPU:   gpu.barrier
//       GPU:   memref.load
// CPU-LABEL: func.func @linear_tile
//       CPU:   scf.for %[[F:.*]] = %c0 to %c217 step %c1 {
//  CPU-NEXT:     %[[IJ:.*]]:2 = affine.delinearize_index %[[F]] into (7, 31)
//  CPU-NEXT:     memref.store %{{.*}}, %{{.*}}[%[[IJ]]#0, %[[IJ]]#1]
func.func @linear_tile(%out: memref<7x31xf32>) attributes {dyncc.kernel} {
  %one = arith.constant 1.0 : f32
  %tile = memref.alloc() : memref<7x31xf32, #gpu.address_space<workgroup>>
  scf.forall (%i, %j) in (7, 31) {
    memref.store %one, %tile[%i, %j] : memref<7x31xf32, #gpu.address_space<workgroup>>
  } {mapping = [#gpu.thread<linear_dim_1>, #gpu.thread<linear_dim_0>]}
  scf.forall (%i, %j) in (7, 31) {
    %v = memref.load %tile[%i, %j] : memref<7x31xf32, #gpu.address_space<workgroup>>
    memref.store %v, %out[%i, %j] : memref<7x31xf32>
  } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  return
}

// -----

// A forall of linear thread dimensions takes all of the block's threads:
// never beside x, y or z.
func.func @linear_and_x(%out: memref<16x16xf32>) attributes {dyncc.kernel} {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{mixes linear and x/y/z thread dimensions}}
  scf.forall (%i, %j) in (16, 16) {
    memref.store %one, %out[%i, %j] : memref<16x16xf32>
  } {mapping = [#gpu.thread<linear_dim_0>, #gpu.thread<x>]}
  return
}

// -----

// Shared buffers beyond the 48 KB of static shared memory are views of the
// kernel's dynamic shared memory, at 16-byte aligned offsets in the order of
// the allocations, and the kernel records the bytes its launch passes. The
// CPU's are the block task's allocas as below 48 KB.
// GPU-LABEL: gpu.func @dynamic_shared(
//   GPU-SAME:     kernel attributes {dyncc.dynamic_shared_bytes = 57360 : i64
//   GPU-NOT:     workgroup(
//       GPU:   %[[SMEM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
//   GPU-DAG:   memref.view %[[SMEM]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x96xf32, #gpu.address_space<workgroup>>
//   GPU-DAG:   memref.view %[[SMEM]][%c49152][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4099xf16, #gpu.address_space<workgroup>>
// CPU-LABEL: func.func @dynamic_shared(
//       CPU:   memref.alloca() {alignment = 16 : i64} : memref<128x96xf32>
//       CPU:   memref.alloca() {alignment = 16 : i64} : memref<4099xf16>
func.func @dynamic_shared(%x: memref<?xf32>) attributes {dyncc.kernel} {
  %a = memref.alloc() {alignment = 16 : i64} : memref<128x96xf32, #gpu.address_space<workgroup>>
  %b = memref.alloc() {alignment = 16 : i64} : memref<4099xf16, #gpu.address_space<workgroup>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 1.0 : f32
  %h = arith.constant 1.0 : f16
  scf.forall (%i) in (1) {
    memref.store %v, %a[%c0, %c1] : memref<128x96xf32, #gpu.address_space<workgroup>>
    memref.store %h, %b[%c1] : memref<4099xf16, #gpu.address_space<workgroup>>
    %r = memref.load %a[%c0, %c1] : memref<128x96xf32, #gpu.address_space<workgroup>>
    memref.store %r, %x[%c0] : memref<?xf32>
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// An op of the whole block (every thread runs it whole) that reads what the
// threads wrote to shared memory is ordered after them by a barrier, as a
// thread forall is.
// GPU-LABEL: gpu.func @block_level_read
//       GPU:   scf.for
//       GPU:     memref.store
//       GPU:   gpu.barrier
//  GPU-NEXT:   linalg.copy
// CPU-LABEL: func.func @block_level_read
//   CPU-NOT:   gpu.barrier
func.func @block_level_read(%n: index, %out: memref<?x128xf32>) attributes {dyncc.kernel} {
  %one = arith.constant 1.0 : f32
  %tile = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
  scf.forall (%b) in (%n) {
    scf.forall (%i) in (128) {
      memref.store %one, %tile[%i] : memref<128xf32, #gpu.address_space<workgroup>>
    } {mapping = [#gpu.thread<x>]}
    %row = memref.subview %out[%b, 0] [1, 128] [1, 1] : memref<?x128xf32> to memref<128xf32, strided<[1], offset: ?>>
    linalg.copy ins(%tile : memref<128xf32, #gpu.address_space<workgroup>>) outs(%row : memref<128xf32, strided<[1], offset: ?>>)
  } {mapping = [#gpu.block<x>]}
  return
}
