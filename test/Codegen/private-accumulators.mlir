// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(gpu.func(dyncc-private-accumulators),canonicalize))' | FileCheck %s

// A conv's thread tile after grid mapping: the bias broadcast writes it
// whole, each k-step's product reads and writes it, the ReLU epilogue
// reads and writes it. The three take a private buffer allocated at the
// entry; nothing is copied in (the broadcast writes all of it) and the
// tile is copied out once, after the epilogue. Every op on the buffer is
// loops with the buffer's elements unrolled (the product's 32 channels a
// loop outside its 32 outputs), so every access has constant indices.
// CHECK-LABEL: gpu.func @conv_tile
// CHECK: %[[ACC:.*]] = memref.alloca() {alignment = 16 : i64} : memref<1x4x2x4xf32>
// CHECK: %[[TILE:.*]] = memref.subview %{{.*}}[0, %{{.*}}, %{{.*}}, %{{.*}}] [1, 4, 2, 4]
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK: memref.store %{{.*}}, %[[ACC]][%c0, %c3, %c1, %c3]
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 {
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK-COUNT-32: arith.addf
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK: memref.store %{{.*}}, %[[ACC]][%c0, %c3, %c1, %c3]
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK-COUNT-32: arith.maximumf
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK-COUNT-32: memref.store %{{.*}}, %[[TILE]][
// CHECK-NEXT: gpu.return
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#in = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @conv_tile(%x: memref<?x64x56x56xf32>, %b: memref<32xf32>, %y: memref<?x32x56x56xf32>)
  workgroup(%sx: memref<1x32x8x8xf32, #gpu.address_space<workgroup>>, %sw: memref<32x32xf32, #gpu.address_space<workgroup>>) kernel {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = gpu.block_id x
  %tz = gpu.thread_id z
  %ty = gpu.thread_id y
  %tx = gpu.thread_id x
  %block = memref.subview %y[%n, 0, 0, 0] [1, 32, 8, 8] [1, 1, 1, 1] : memref<?x32x56x56xf32> to memref<1x32x8x8xf32, strided<[100352, 3136, 56, 1], offset: ?>>
  %tile = memref.subview %block[0, %tz, %ty, %tx] [1, 4, 2, 4] [1, 1, 1, 1] : memref<1x32x8x8xf32, strided<[100352, 3136, 56, 1], offset: ?>> to memref<1x4x2x4xf32, strided<[100352, 3136, 56, 1], offset: ?>>
  %bias = memref.subview %b[%tz] [4] [1] : memref<32xf32> to memref<4xf32, strided<[1], offset: ?>>
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : memref<4xf32, strided<[1], offset: ?>>) outs(%tile : memref<1x4x2x4xf32, strided<[100352, 3136, 56, 1], offset: ?>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  scf.for %k = %c0 to %c64 step %c32 {
    gpu.barrier
    %xs = memref.subview %sx[0, 0, %ty, %tx] [1, 32, 2, 4] [1, 1, 1, 1] : memref<1x32x8x8xf32, #gpu.address_space<workgroup>> to memref<1x32x2x4xf32, strided<[2048, 64, 8, 1], offset: ?>, #gpu.address_space<workgroup>>
    %ws = memref.subview %sw[%tz, 0] [4, 32] [1, 1] : memref<32x32xf32, #gpu.address_space<workgroup>> to memref<4x32xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%xs, %ws : memref<1x32x2x4xf32, strided<[2048, 64, 8, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<4x32xf32, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>) outs(%tile : memref<1x4x2x4xf32, strided<[100352, 3136, 56, 1], offset: ?>>) {
    ^bb0(%a: f32, %w: f32, %o: f32):
      %m = arith.mulf %a, %w : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%tile : memref<1x4x2x4xf32, strided<[100352, 3136, 56, 1], offset: ?>>) {
  ^bb0(%o: f32):
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  gpu.return
}
}
}

// -----

// The first access reads the tile (it accumulates into what is there):
// the tile's values are copied in before it, and out after the loop.
// CHECK-LABEL: gpu.func @read_first
// CHECK: %[[ACC:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4x4xf32>
// CHECK: %[[TILE:.*]] = memref.subview %arg1
// CHECK-COUNT-16: memref.load %[[TILE]][
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK: scf.for
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK-COUNT-16: memref.store %{{.*}}, %[[TILE]][
// CHECK-NEXT: gpu.return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @read_first(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tx = gpu.thread_id x
  %tile = memref.subview %y[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  %src = memref.subview %x[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
  ^bb0(%o: f32):
    %s = arith.mulf %o, %o : f32
    linalg.yield %s : f32
  }
  scf.for %k = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%src : memref<4x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%i: f32, %o: f32):
      %s = arith.addf %i, %o : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%o: f32):
      %s = arith.addf %o, %o : f32
      linalg.yield %s : f32
    }
  }
  gpu.return
}
}
}

// -----

// A batch of 1 fixed in the model: the output reaches the tile through the
// reinterpret_cast that drops the unit dimension, then the block's and the
// thread's subviews. The tile is private as through subviews alone. Not
// so where the argument is reached besides the cast (a second cast).
// CHECK-LABEL: gpu.func @unit_batch
// CHECK: %[[ACC:.*]] = memref.alloca() {alignment = 16 : i64} : memref<2x4xf32>
// CHECK: %[[TILE:.*]] = memref.subview
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK: scf.for
// CHECK-NOT: %[[TILE]]{{\[| }}
// CHECK-COUNT-8: memref.store %{{.*}}, %[[TILE]][
// CHECK-NEXT: gpu.return
// CHECK-LABEL: gpu.func @unit_batch_second_view
// CHECK-NOT: memref.alloca
#id2b = affine_map<(d0, d1) -> (d0, d1)>
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @unit_batch(%x: memref<64x64xf32>, %y: memref<1x64x64xf32>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %tx = gpu.thread_id x
  %flat = memref.reinterpret_cast %y to offset: [0], sizes: [64, 64], strides: [64, 1] : memref<1x64x64xf32> to memref<64x64xf32>
  %tile = memref.subview %flat[%tx, 0] [2, 4] [1, 1] : memref<64x64xf32> to memref<2x4xf32, strided<[64, 1], offset: ?>>
  %src = memref.subview %x[%tx, 0] [2, 4] [1, 1] : memref<64x64xf32> to memref<2x4xf32, strided<[64, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%tile : memref<2x4xf32, strided<[64, 1], offset: ?>>)
  scf.for %k = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]} ins(%src : memref<2x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<2x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%i: f32, %o: f32):
      %s = arith.addf %i, %o : f32
      linalg.yield %s : f32
    }
  }
  gpu.return
}
gpu.func @unit_batch_second_view(%x: memref<64x64xf32>, %y: memref<1x64x64xf32>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %tx = gpu.thread_id x
  %flat = memref.reinterpret_cast %y to offset: [0], sizes: [64, 64], strides: [64, 1] : memref<1x64x64xf32> to memref<64x64xf32>
  %other = memref.reinterpret_cast %y to offset: [0], sizes: [4096], strides: [1] : memref<1x64x64xf32> to memref<4096xf32>
  %tile = memref.subview %flat[%tx, 0] [2, 4] [1, 1] : memref<64x64xf32> to memref<2x4xf32, strided<[64, 1], offset: ?>>
  %src = memref.subview %x[%tx, 0] [2, 4] [1, 1] : memref<64x64xf32> to memref<2x4xf32, strided<[64, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%tile : memref<2x4xf32, strided<[64, 1], offset: ?>>)
  scf.for %k = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]} ins(%src : memref<2x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<2x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%i: f32, %o: f32):
      %s = arith.addf %i, %o : f32
      linalg.yield %s : f32
    }
    memref.store %zero, %other[%tx] : memref<4096xf32>
  }
  gpu.return
}
}
}

// -----

// Left alone: the output is reached through a second view too (another
// thread tile of it, which could overlap this one); the tile is never
// accessed in a loop; the tile is in shared memory; the tile is larger than
// max-bytes (512: 256 f32 here); every access is under a guard (a thread
// the guard leaves out, whose tile may lie past the output's end, would
// copy it out).
// CHECK-LABEL: gpu.func @two_views
// CHECK-NOT: memref.alloca
// CHECK-LABEL: gpu.func @no_loop
// CHECK-NOT: memref.alloca
// CHECK-LABEL: gpu.func @shared_tile
// CHECK-NOT: memref.alloca
// CHECK-LABEL: gpu.func @guarded
// CHECK-NOT: memref.alloca
// CHECK-LABEL: gpu.func @too_large
// CHECK-NOT: memref.alloca
#id3 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @two_views(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tx = gpu.thread_id x
  %tile = memref.subview %y[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  %other = memref.subview %y[0, %tx] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  scf.for %k = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]} ins(%other : memref<4x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%i: f32, %o: f32):
      %s = arith.addf %i, %o : f32
      linalg.yield %s : f32
    }
  }
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel"]} outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  }
  gpu.return
}
gpu.func @no_loop(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
  %tx = gpu.thread_id x
  %tile = memref.subview %y[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  %src = memref.subview %x[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  linalg.copy ins(%src : memref<4x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>)
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel"]} outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  gpu.return
}
gpu.func @shared_tile(%x: memref<64x64xf32>) workgroup(%s: memref<64x64xf32, #gpu.address_space<workgroup>>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tx = gpu.thread_id x
  %tile = memref.subview %s[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32, #gpu.address_space<workgroup>> to memref<4x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
  %src = memref.subview %x[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  scf.for %k = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]} ins(%src : memref<4x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>) {
    ^bb0(%i: f32, %o: f32):
      %s2 = arith.addf %i, %o : f32
      linalg.yield %s2 : f32
    }
  }
  gpu.return
}
gpu.func @guarded(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %cond: i1) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %tx = gpu.thread_id x
  %tile = memref.subview %y[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  %src = memref.subview %x[%tx, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
  scf.if %cond {
    linalg.fill ins(%zero : f32) outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>)
    scf.for %k = %c0 to %c8 step %c1 {
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]} ins(%src : memref<4x4xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<4x4xf32, strided<[64, 1], offset: ?>>) {
      ^bb0(%i: f32, %o: f32):
        %s = arith.addf %i, %o : f32
        linalg.yield %s : f32
      }
    }
  }
  gpu.return
}
gpu.func @too_large(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tx = gpu.thread_id x
  %tile = memref.subview %y[%tx, 0] [16, 16] [1, 1] : memref<64x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
  %src = memref.subview %x[%tx, 0] [16, 16] [1, 1] : memref<64x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
  scf.for %k = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]} ins(%src : memref<16x16xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<16x16xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%i: f32, %o: f32):
      %s = arith.addf %i, %o : f32
      linalg.yield %s : f32
    }
  }
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel"]} outs(%tile : memref<16x16xf32, strided<[64, 1], offset: ?>>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  }
  gpu.return
}
}
}
