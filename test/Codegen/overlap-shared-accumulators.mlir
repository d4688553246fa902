// RUN: dyncc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(gpu.func(dyncc-overlap-shared-accumulators{shared-bytes=40000})))' | FileCheck %s

// A GEMM block after dyncc-vectorize-mma: two operand tiles (8 KB and
// 4 KB, copied with cp.async and read in the k-step loop), and the 16 KB
// f32 accumulator, filled with zeros, read into the loop's iteration
// arguments before it, written back after it and read by the epilogue.
// The reads before the loop become the fill value and the fill goes; the
// accumulator then starts at offset 0 with both operand tiles over it, the
// kernel takes 16 KB instead of 28, and a wait for every copy and a barrier
// come between the loop and the write-back.
// CHECK-LABEL: gpu.func @gemm(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 16384
//       CHECK:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[SHM:.+]] = gpu.dynamic_shared_memory
//       CHECK:   memref.view %[[SHM]][%c0{{(_[0-9]+)?}}][] : {{.*}} to memref<2x32x32xf32, #gpu.address_space<workgroup>>
//       CHECK:   memref.view %[[SHM]][%c8192{{(_[0-9]+)?}}][] : {{.*}} to memref<32x32xf32, #gpu.address_space<workgroup>>
//       CHECK:   %[[ACC:.+]] = memref.view %[[SHM]][%c0{{(_[0-9]+)?}}][] : {{.*}} to memref<64x64xf32, #gpu.address_space<workgroup>>
//   CHECK-NOT:   linalg.fill
//       CHECK:   nvvm.cp.async.commit.group
//       CHECK:   gpu.barrier
//   CHECK-NOT:   vector.load %[[ACC]]
//       CHECK:   %[[INIT:.+]] = vector.broadcast %[[ZERO]] : f32 to vector<4xf32>
//       CHECK:   vector.insert %[[INIT]]
//       CHECK:   %[[LOOP:.+]] = scf.for
//       CHECK:   }
//  CHECK-NEXT:   vector.extract %[[LOOP]]
//  CHECK-NEXT:   nvvm.cp.async.commit.group
//  CHECK-NEXT:   nvvm.cp.async.wait.group 0
//  CHECK-NEXT:   gpu.barrier
//  CHECK-NEXT:   vector.store %{{.+}}, %[[ACC]]
//       CHECK:   gpu.barrier
//       CHECK:   memref.load %[[ACC]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @gemm(%in: memref<?xf32>, %out: memref<?xf32>, %k: index) kernel attributes {dyncc.dynamic_shared_bytes = 28672 : i64, dyncc.overlapped_shared_bytes = 12288 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %c12288 = arith.constant 12288 : index
      %zero = arith.constant 0.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b = memref.view %shm[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc = memref.view %shm[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      %tile = memref.subview %acc[%tid, 0] [1, 64] [1, 1] : memref<64x64xf32, #gpu.address_space<workgroup>> to memref<1x64xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
      linalg.fill ins(%zero : f32) outs(%tile : memref<1x64xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>)
      %copy = nvgpu.device_async_copy %in[%c0], %a[%c0, %tid, %c0], 4 : memref<?xf32> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      gpu.barrier
      %cst_frag = arith.constant dense<1.0> : vector<2x4xf32>
      %init = vector.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %frag = vector.insert %init, %cst_frag [0] : vector<4xf32> into vector<2x4xf32>
      %sum = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %frag) -> (vector<2x4xf32>) {
        %x = vector.load %a[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %y = vector.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %p = arith.mulf %x, %y : vector<4xf32>
        %row = vector.extract %arg[0] : vector<4xf32> from vector<2x4xf32>
        %s = arith.addf %row, %p : vector<4xf32>
        %next = vector.insert %s, %arg [0] : vector<4xf32> into vector<2x4xf32>
        scf.yield %next : vector<2x4xf32>
      }
      %result = vector.extract %sum[0] : vector<4xf32> from vector<2x4xf32>
      vector.store %result, %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      gpu.barrier
      %v = memref.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// An operand tile read after the loop keeps bytes of its own, beside the
// accumulator, which takes the other tile's.
// CHECK-LABEL: gpu.func @read_after(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 20480
//       CHECK:   memref.view %{{.+}}[%c0{{(_[0-9]+)?}}][] : {{.*}} to memref<2x32x32xf32, #gpu.address_space<workgroup>>
//       CHECK:   memref.view %{{.+}}[%c16384{{(_[0-9]+)?}}][] : {{.*}} to memref<32x32xf32, #gpu.address_space<workgroup>>
//       CHECK:   memref.view %{{.+}}[%c0{{(_[0-9]+)?}}][] : {{.*}} to memref<64x64xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @read_after(%out: memref<?xf32>, %k: index) kernel attributes {dyncc.dynamic_shared_bytes = 28672 : i64, dyncc.overlapped_shared_bytes = 12288 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %c12288 = arith.constant 12288 : index
      %zero = arith.constant 0.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b = memref.view %shm[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc = memref.view %shm[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      linalg.fill ins(%zero : f32) outs(%acc : memref<64x64xf32, #gpu.address_space<workgroup>>)
      gpu.barrier
      %init = vector.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %sum = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %init) -> (vector<4xf32>) {
        %x = vector.load %a[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %y = vector.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %p = arith.mulf %x, %y : vector<4xf32>
        %s = arith.addf %arg, %p : vector<4xf32>
        scf.yield %s : vector<4xf32>
      }
      vector.store %sum, %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      gpu.barrier
      %v = memref.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
      %w = memref.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>
      %r = arith.addf %v, %w : f32
      memref.store %r, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Without dyncc-tile-and-fuse's record of a static product, nothing says
// the write-back after the loop covers the tile (a read after the loop
// could need the fill): the accumulator keeps its fill and reads, and its
// bytes.
// CHECK-LABEL: gpu.func @no_static_product(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 28672
//       CHECK:   linalg.fill
//       CHECK:   vector.load
//       CHECK:   scf.for
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @no_static_product(%out: memref<?xf32>, %k: index) kernel attributes {dyncc.dynamic_shared_bytes = 28672 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %c12288 = arith.constant 12288 : index
      %zero = arith.constant 0.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b = memref.view %shm[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc = memref.view %shm[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      linalg.fill ins(%zero : f32) outs(%acc : memref<64x64xf32, #gpu.address_space<workgroup>>)
      gpu.barrier
      %init = vector.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %sum = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %init) -> (vector<4xf32>) {
        %x = vector.load %a[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %y = vector.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %p = arith.mulf %x, %y : vector<4xf32>
        %s = arith.addf %arg, %p : vector<4xf32>
        scf.yield %s : vector<4xf32>
      }
      vector.store %sum, %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      gpu.barrier
      %v = memref.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
      %w = memref.load %acc[%tid, %c1] : memref<64x64xf32, #gpu.address_space<workgroup>>
      %r = arith.addf %v, %w : f32
      memref.store %r, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Two products in turn (Q and K of a fused projection), each under the
// block's guard: each one's accumulator takes its operand tiles' bytes,
// and the second product takes the first one's, 16 KB where the six
// buffers took 56. Between the two, a wait for the first's copies and a
// barrier.
// CHECK-LABEL: gpu.func @in_turn(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 16384
//   CHECK-COUNT-6:   memref.view %{{.+}}[%c{{0|8192}}{{(_[0-9]+)?}}][]
//       CHECK:   scf.if
//   CHECK-NOT:     linalg.fill
//       CHECK:     vector.broadcast
//       CHECK:     scf.for
//       CHECK:     nvvm.cp.async.wait.group 0
//  CHECK-NEXT:     nvvm.cp.async.commit.group
//  CHECK-NEXT:     nvvm.cp.async.wait.group 0
//  CHECK-NEXT:     gpu.barrier
//  CHECK-NEXT:     vector.store
//       CHECK:   }
//  CHECK-NEXT:   nvvm.cp.async.commit.group
//  CHECK-NEXT:   nvvm.cp.async.wait.group 0
//  CHECK-NEXT:   gpu.barrier
//  CHECK-NEXT:   scf.if
//   CHECK-NOT:     linalg.fill
//       CHECK:     vector.broadcast
//       CHECK:     scf.for
//       CHECK:     nvvm.cp.async.wait.group 0
//  CHECK-NEXT:     nvvm.cp.async.commit.group
//  CHECK-NEXT:     nvvm.cp.async.wait.group 0
//  CHECK-NEXT:     gpu.barrier
//  CHECK-NEXT:     vector.store
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @in_turn(%in: memref<?xf32>, %out: memref<?xf32>, %k: index, %n: index) kernel attributes {dyncc.dynamic_shared_bytes = 57344 : i64, dyncc.overlapped_shared_bytes = 0 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %c12288 = arith.constant 12288 : index
      %c28672 = arith.constant 28672 : index
      %c36864 = arith.constant 36864 : index
      %c40960 = arith.constant 40960 : index
      %zero = arith.constant 0.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a1 = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b1 = memref.view %shm[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc1 = memref.view %shm[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %a2 = memref.view %shm[%c28672][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b2 = memref.view %shm[%c36864][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc2 = memref.view %shm[%c40960][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %bid = gpu.block_id x
      %inside = arith.cmpi slt, %bid, %n : index
      %tid = gpu.thread_id x
      scf.if %inside {
        linalg.fill ins(%zero : f32) outs(%acc1 : memref<64x64xf32, #gpu.address_space<workgroup>>)
        %copy1 = nvgpu.device_async_copy %in[%c0], %a1[%c0, %tid, %c0], 4 : memref<?xf32> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
        nvvm.cp.async.commit.group
        gpu.barrier
        %init1 = vector.load %acc1[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %sum1 = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %init1) -> (vector<4xf32>) {
          %x = vector.load %a1[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
          %y = vector.load %b1[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
          %p = arith.mulf %x, %y : vector<4xf32>
          %s = arith.addf %arg, %p : vector<4xf32>
          scf.yield %s : vector<4xf32>
        }
        nvvm.cp.async.commit.group
        nvvm.cp.async.wait.group 0
        vector.store %sum1, %acc1[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        gpu.barrier
        %v1 = memref.load %acc1[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
        memref.store %v1, %out[%tid] : memref<?xf32>
      }
      scf.if %inside {
        linalg.fill ins(%zero : f32) outs(%acc2 : memref<64x64xf32, #gpu.address_space<workgroup>>)
        %copy2 = nvgpu.device_async_copy %in[%c0], %a2[%c0, %tid, %c0], 4 : memref<?xf32> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
        nvvm.cp.async.commit.group
        gpu.barrier
        %init2 = vector.load %acc2[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %sum2 = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %init2) -> (vector<4xf32>) {
          %x = vector.load %a2[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
          %y = vector.load %b2[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
          %p = arith.mulf %x, %y : vector<4xf32>
          %s = arith.addf %arg, %p : vector<4xf32>
          scf.yield %s : vector<4xf32>
        }
        nvvm.cp.async.commit.group
        nvvm.cp.async.wait.group 0
        vector.store %sum2, %acc2[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        gpu.barrier
        %v2 = memref.load %acc2[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
        memref.store %v2, %out[%tid] : memref<?xf32>
      }
      gpu.return
    }
  }
}

// -----

// Left alone: the accumulator is read inside the loop (not kept in
// registers), or written before it by something other than a fill (its
// values before the loop are not one known value).
// CHECK-LABEL: gpu.func @read_in_loop(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 28672
//       CHECK:   linalg.fill
//       CHECK:   vector.load
// CHECK-LABEL: gpu.func @stored_before(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 28672
//       CHECK:   memref.store
//       CHECK:   vector.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @read_in_loop(%out: memref<?xf32>, %k: index) kernel attributes {dyncc.dynamic_shared_bytes = 28672 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %c12288 = arith.constant 12288 : index
      %zero = arith.constant 0.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b = memref.view %shm[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc = memref.view %shm[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      linalg.fill ins(%zero : f32) outs(%acc : memref<64x64xf32, #gpu.address_space<workgroup>>)
      %init = vector.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %sum = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %init) -> (vector<4xf32>) {
        %x = vector.load %a[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %y = vector.load %acc[%i, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %z = vector.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %q = arith.mulf %x, %z : vector<4xf32>
        %p = arith.mulf %q, %y : vector<4xf32>
        %s = arith.addf %arg, %p : vector<4xf32>
        scf.yield %s : vector<4xf32>
      }
      vector.store %sum, %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %v = memref.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tid] : memref<?xf32>
      gpu.return
    }
    gpu.func @stored_before(%out: memref<?xf32>, %k: index) kernel attributes {dyncc.dynamic_shared_bytes = 28672 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8192 = arith.constant 8192 : index
      %c12288 = arith.constant 12288 : index
      %one = arith.constant 1.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x32xf32, #gpu.address_space<workgroup>>
      %b = memref.view %shm[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %acc = memref.view %shm[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      memref.store %one, %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>
      %init = vector.load %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %sum = scf.for %i = %c0 to %k step %c1 iter_args(%arg = %init) -> (vector<4xf32>) {
        %x = vector.load %a[%c0, %tid, %c0] : memref<2x32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %y = vector.load %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %p = arith.mulf %x, %y : vector<4xf32>
        %s = arith.addf %arg, %p : vector<4xf32>
        scf.yield %s : vector<4xf32>
      }
      vector.store %sum, %acc[%tid, %c0] : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// Two phases under a condition on the thread id: threads may be in
// different phases at once, so the second phase's buffer may not take the
// first one's bytes (a barrier there would not be reached by every
// thread). Left alone.
// CHECK-LABEL: gpu.func @divergent(
//  CHECK-SAME:     dyncc.dynamic_shared_bytes = 8192
//       CHECK:   memref.view %{{.+}}[%c0{{(_[0-9]+)?}}][]
//       CHECK:   memref.view %{{.+}}[%c4096{{(_[0-9]+)?}}][]
//   CHECK-NOT:   gpu.barrier
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @divergent(%out: memref<?xf32>, %n: index) kernel attributes {dyncc.dynamic_shared_bytes = 8192 : i64} {
      %c0 = arith.constant 0 : index
      %c4096 = arith.constant 4096 : index
      %one = arith.constant 1.0 : f32
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %a = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %b = memref.view %shm[%c4096][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x32xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      %low = arith.cmpi slt, %tid, %n : index
      scf.if %low {
        memref.store %one, %a[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>
        %v = memref.load %a[%c0, %tid] : memref<32x32xf32, #gpu.address_space<workgroup>>
        memref.store %v, %out[%tid] : memref<?xf32>
        scf.if %low {
          memref.store %one, %b[%tid, %c0] : memref<32x32xf32, #gpu.address_space<workgroup>>
          %w = memref.load %b[%c0, %tid] : memref<32x32xf32, #gpu.address_space<workgroup>>
          memref.store %w, %out[%tid] : memref<?xf32>
        }
      }
      gpu.return
    }
  }
}

// -----

// A kernel left above the limit is an error, naming why where its
// accumulator was to share the operand tiles' bytes.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{needs 49152 bytes of shared memory per block, more than 40000 a block may use on the targets: its accumulator could not share the operand tiles' bytes}}
    gpu.func @too_large(%out: memref<?xf32>) kernel attributes {dyncc.dynamic_shared_bytes = 49152 : i64, dyncc.overlapped_shared_bytes = 16384 : i64} {
      %c0 = arith.constant 0 : index
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %acc = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x192xf32, #gpu.address_space<workgroup>>
      %tid = gpu.thread_id x
      %v = memref.load %acc[%tid, %c0] : memref<64x192xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }
}
