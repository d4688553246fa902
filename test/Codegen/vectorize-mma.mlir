// RUN: dyncc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(gpu.func(dyncc-vectorize-mma)))' | FileCheck %s
// RUN: dyncc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(gpu.func(dyncc-vectorize-mma)))' | grep -c "nvgpu.ldmatrix.*numTiles = 4 : i32, transpose = false.*memref<64x32xf16" | FileCheck %s --check-prefix=X4
// RUN: dyncc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(gpu.func(dyncc-vectorize-mma)))' | grep -c "nvgpu.ldmatrix.*numTiles = 2 : i32, transpose = true.*memref<32x64xf16" | FileCheck %s --check-prefix=X2
// X4: 4
// X2: 8

// A 64x64 block of four 32x32 warps, k-step 32: per step each warp reads 2
// A fragments per 16 of K (ldmatrix.x4) and 4 B fragments (K x N in shared
// memory: ldmatrix.x2, transposed), and issues 2 x 4 x 2 mma.sync. The
// accumulator's 8 fragments are read before the k-step loop, carried as
// its iteration arguments and written after it.
// CHECK-LABEL: gpu.func @warp_tiles
// CHECK-COUNT-16: vector.load {{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NOT: vector.load {{.*}}memref<64x64xf32
// CHECK-COUNT-16: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NOT: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store {{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: linalg.matmul
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @warp_tiles(%A: memref<?x?xf16>, %C: memref<?x?xf32>)
  workgroup(%sa: memref<64x32xf16, #gpu.address_space<workgroup>>, %sb: memref<32x64xf16, #gpu.address_space<workgroup>>, %sc: memref<64x64xf32, #gpu.address_space<workgroup>>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %z = arith.constant 0.0 : f32
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %tid = gpu.thread_id x
  %wm = affine.apply affine_map<()[s0] -> (((s0 floordiv 32) floordiv 2) * 32)>()[%tid]
  %wn = affine.apply affine_map<()[s0] -> (((s0 floordiv 32) mod 2) * 32)>()[%tid]
  linalg.fill ins(%z : f32) outs(%sc : memref<64x64xf32, #gpu.address_space<workgroup>>)
  gpu.barrier
  scf.for %k = %c0 to %K step %c32 {
    gpu.barrier
    %src = memref.subview %A[0, %k][64, 32][1, 1] : memref<?x?xf16> to memref<64x32xf16, strided<[?, 1], offset: ?>>
    linalg.copy ins(%src : memref<64x32xf16, strided<[?, 1], offset: ?>>) outs(%sa : memref<64x32xf16, #gpu.address_space<workgroup>>)
    gpu.barrier
    %a = memref.subview %sa[%wm, 0][32, 32][1, 1] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<32x32xf16, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>
    %b = memref.subview %sb[0, %wn][32, 32][1, 1] : memref<32x64xf16, #gpu.address_space<workgroup>> to memref<32x32xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
    %c = memref.subview %sc[%wm, %wn][32, 32][1, 1] : memref<64x64xf32, #gpu.address_space<workgroup>> to memref<32x32xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
    linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%a, %b : memref<32x32xf16, strided<[32, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<32x32xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>) outs(%c : memref<32x32xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>)
  }
  gpu.barrier
  %dst = memref.subview %C[0, 0][64, 64][1, 1] : memref<?x?xf32> to memref<64x64xf32, strided<[?, 1]>>
  linalg.copy ins(%sc : memref<64x64xf32, #gpu.address_space<workgroup>>) outs(%dst : memref<64x64xf32, strided<[?, 1]>>)
  gpu.return
}
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @dynamic_warp_tile(%a: memref<32x?xf16, #gpu.address_space<workgroup>>, %b: memref<?x32xf16, #gpu.address_space<workgroup>>, %c: memref<32x32xf32, #gpu.address_space<workgroup>>) kernel {
  // expected-error @below {{warp tile for mma.sync must be static and bufferized}}
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%a, %b : memref<32x?xf16, #gpu.address_space<workgroup>>, memref<?x32xf16, #gpu.address_space<workgroup>>) outs(%c : memref<32x32xf32, #gpu.address_space<workgroup>>)
  gpu.return
}
}
}

// -----

// bf16: converted as f16 over aliases of the tiles, then each ldmatrix
// loads the bf16 tile (and bitcasts) and the mma.sync is NVVM's bf16 one.
// CHECK-LABEL: gpu.func @bf16_warp_tile
//   CHECK-NOT: unrealized_conversion_cast
//       CHECK: %[[A:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<16x16xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
//       CHECK: arith.bitcast %[[A]] : vector<4x2xbf16> to vector<4x2xf16>
//       CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true} : memref<16x8xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
//       CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
//       CHECK: vector.from_elements {{.*}} : vector<2x2xf32>
//   CHECK-NOT: nvgpu.mma.sync
//   CHECK-NOT: unrealized_conversion_cast
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @bf16_warp_tile(%a: memref<16x16xbf16, #gpu.address_space<workgroup>>, %b: memref<16x8xbf16, #gpu.address_space<workgroup>>, %c: memref<16x8xf32, #gpu.address_space<workgroup>>) kernel {
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%a, %b : memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x8xbf16, #gpu.address_space<workgroup>>) outs(%c : memref<16x8xf32, #gpu.address_space<workgroup>>)
  gpu.return
}
}
}

// -----

// Tensor cores take f16 or bf16 operands, one type per kernel.
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @f32_warp_tile(%a: memref<16x16xf32, #gpu.address_space<workgroup>>, %b: memref<16x8xf32, #gpu.address_space<workgroup>>, %c: memref<16x8xf32, #gpu.address_space<workgroup>>) kernel {
  // expected-error @below {{warp tile for mma.sync takes f16 or bf16 operands, one type per kernel}}
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%a, %b : memref<16x16xf32, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<workgroup>>) outs(%c : memref<16x8xf32, #gpu.address_space<workgroup>>)
  gpu.return
}
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @mixed_half_types(%a: memref<16x16xf16, #gpu.address_space<workgroup>>, %b: memref<16x8xf16, #gpu.address_space<workgroup>>, %x: memref<16x16xbf16, #gpu.address_space<workgroup>>, %y: memref<16x8xbf16, #gpu.address_space<workgroup>>, %c: memref<16x8xf32, #gpu.address_space<workgroup>>) kernel {
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%a, %b : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>) outs(%c : memref<16x8xf32, #gpu.address_space<workgroup>>)
  // expected-error @below {{warp tile for mma.sync takes f16 or bf16 operands, one type per kernel}}
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%x, %y : memref<16x16xbf16, #gpu.address_space<workgroup>>, memref<16x8xbf16, #gpu.address_space<workgroup>>) outs(%c : memref<16x8xf32, #gpu.address_space<workgroup>>)
  gpu.return
}
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @inconsistent_shapes(%a: memref<16x16xf16, #gpu.address_space<workgroup>>, %b: memref<16x8xf16, #gpu.address_space<workgroup>>, %c: memref<16x8xf32, #gpu.address_space<workgroup>>) kernel {
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 16>} ins(%a, %b : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>) outs(%c : memref<16x8xf32, #gpu.address_space<workgroup>>)
  // expected-error @below {{has a malformed or inconsistent dyncc.mma}}
  linalg.matmul {dyncc.mma = array<i64: 16, 8, 8>} ins(%a, %b : memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>) outs(%c : memref<16x8xf32, #gpu.address_space<workgroup>>)
  gpu.return
}
}
}

// -----

// A batched product (rank-3 tiles, as a batched GEMM's warp tile would be)
// is not converted by upstream: an error, not per-lane scalar code.
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @batched(%a: memref<1x32x32xf16, #gpu.address_space<workgroup>>, %b: memref<32x32xf16, #gpu.address_space<workgroup>>, %c: memref<1x32x32xf32, #gpu.address_space<workgroup>>) kernel {
  // expected-error @below {{left over from a warp's product: not converted to ldmatrix and mma.sync}}
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<1x32x32xf16, #gpu.address_space<workgroup>>, memref<32x32xf16, #gpu.address_space<workgroup>>) outs(%c : memref<1x32x32xf32, #gpu.address_space<workgroup>>) attrs = {dyncc.mma = array<i64: 16, 8, 16>} {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  gpu.return
}
}
}

// -----

// SIMT register tiles: a block of 8 x 16 threads, each with a 4x4 tile of
// the 32x64 f32 accumulator, k-step 16. Per step each thread reads its 4
// rows of A and 16 rows of B as 16-byte vectors of shared memory (K in
// chunks of 4: 4 x 4 + 16 x 1 loads) and issues 16 x 4 FMAs of 4 lanes
// (4 x 4 x 16 multiply-adds). The accumulator's 4 rows are read before the
// k-step loop, carried as its iteration arguments and written after it.
// CHECK-LABEL: gpu.func @register_tiles
// CHECK-COUNT-4: vector.load {{.*}} {alignment = 16 : i64} : memref<32x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-NOT: memref<32x64xf32
// CHECK-COUNT-16: vector.load {{.*}} {alignment = 16 : i64} : memref<32x16xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: memref<32x64xf32
// CHECK-COUNT-16: vector.load {{.*}} {alignment = 16 : i64} : memref<16x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: memref<32x64xf32
// CHECK-COUNT-64: vector.fma {{.*}} : vector<4xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-4: vector.store {{.*}} {alignment = 16 : i64} : memref<32x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: linalg.matmul
// CHECK-NOT: vector.transfer
// CHECK-NOT: vector.contract
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @register_tiles(%A: memref<?x?xf32>, %C: memref<?x?xf32>)
  workgroup(%sa: memref<32x16xf32, #gpu.address_space<workgroup>>, %sb: memref<16x64xf32, #gpu.address_space<workgroup>>, %sc: memref<32x64xf32, #gpu.address_space<workgroup>>) kernel {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %tx = gpu.thread_id x
  %ty = gpu.thread_id y
  %m = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%ty]
  %n = affine.apply affine_map<()[s0] -> (s0 * 4)>()[%tx]
  %acc = memref.subview %sc[%m, %n][4, 4][1, 1] : memref<32x64xf32, #gpu.address_space<workgroup>> to memref<4x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
  linalg.fill ins(%z : f32) outs(%acc : memref<4x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>)
  gpu.barrier
  scf.for %k = %c0 to %K step %c16 {
    gpu.barrier
    %src = memref.subview %A[0, %k][32, 16][1, 1] : memref<?x?xf32> to memref<32x16xf32, strided<[?, 1], offset: ?>>
    linalg.copy ins(%src : memref<32x16xf32, strided<[?, 1], offset: ?>>) outs(%sa : memref<32x16xf32, #gpu.address_space<workgroup>>)
    gpu.barrier
    %a = memref.subview %sa[%m, 0][4, 16][1, 1] : memref<32x16xf32, #gpu.address_space<workgroup>> to memref<4x16xf32, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
    %b = memref.subview %sb[0, %n][16, 4][1, 1] : memref<16x64xf32, #gpu.address_space<workgroup>> to memref<16x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
    %c = memref.subview %sc[%m, %n][4, 4][1, 1] : memref<32x64xf32, #gpu.address_space<workgroup>> to memref<4x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
    linalg.matmul {dyncc.register_tile} ins(%a, %b : memref<4x16xf32, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<16x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>) outs(%c : memref<4x4xf32, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>)
  }
  gpu.barrier
  %dst = memref.subview %C[0, 0][32, 64][1, 1] : memref<?x?xf32> to memref<32x64xf32, strided<[?, 1]>>
  linalg.copy ins(%sc : memref<32x64xf32, #gpu.address_space<workgroup>>) outs(%dst : memref<32x64xf32, strided<[?, 1]>>)
  gpu.return
}
}
}

// -----

// A transposed B (a Gemm's transB weight, N x K in shared memory) and a
// k-step of 6 (chunks of 2): the rows of B are read along K too, 8-byte
// aligned (a row of 6 f32 is 24 bytes), the rows of A likewise: 3 loads
// per row, 2 rows of each; 2 x 2 x 6 multiply-adds as 12 FMAs of 2 lanes
// (the reads' broadcasts into the iteration space fold into the
// contraction's maps, so it lowers to outer products, not dot products).
// CHECK-LABEL: gpu.func @register_tiles_transposed_b
// CHECK-COUNT-2: vector.load {{.*}} {alignment = 8 : i64} : memref<8x16xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: scf.for {{.*}} -> (vector<2xf32>, vector<2xf32>)
// CHECK-COUNT-6: vector.load {{.*}} {alignment = 8 : i64} : memref<8x6xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-6: vector.load {{.*}} {alignment = 8 : i64} : memref<16x6xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-12: vector.fma {{.*}} : vector<2xf32>
// CHECK-NOT: vector.fma
// CHECK-NOT: vector.reduction
// CHECK: scf.yield
// CHECK-COUNT-2: vector.store {{.*}} {alignment = 8 : i64} : memref<8x16xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.transfer
module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @register_tiles_transposed_b(%K: index)
  workgroup(%sa: memref<8x6xf32, #gpu.address_space<workgroup>>, %sb: memref<16x6xf32, #gpu.address_space<workgroup>>, %sc: memref<8x16xf32, #gpu.address_space<workgroup>>) kernel {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %tx = gpu.thread_id x
  %ty = gpu.thread_id y
  %m = affine.apply affine_map<()[s0] -> (s0 * 2)>()[%ty]
  %n = affine.apply affine_map<()[s0] -> (s0 * 2)>()[%tx]
  scf.for %k = %c0 to %K step %c6 {
    gpu.barrier
    %a = memref.subview %sa[%m, 0][2, 6][1, 1] : memref<8x6xf32, #gpu.address_space<workgroup>> to memref<2x6xf32, strided<[6, 1], offset: ?>, #gpu.address_space<workgroup>>
    %b = memref.subview %sb[%n, 0][2, 6][1, 1] : memref<16x6xf32, #gpu.address_space<workgroup>> to memref<2x6xf32, strided<[6, 1], offset: ?>, #gpu.address_space<workgroup>>
    %c = memref.subview %sc[%m, %n][2, 2][1, 1] : memref<8x16xf32, #gpu.address_space<workgroup>> to memref<2x2xf32, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<2x6xf32, strided<[6, 1], offset: ?>, #gpu.address_space<workgroup>>, memref<2x6xf32, strided<[6, 1], offset: ?>, #gpu.address_space<workgroup>>) outs(%c : memref<2x2xf32, strided<[16, 1], offset: ?>, #gpu.address_space<workgroup>>) attrs = {dyncc.register_tile} {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  }
  gpu.return
}
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @dyncc_kernels {
gpu.func @dynamic_register_tile(%a: memref<4x?xf32, #gpu.address_space<workgroup>>, %b: memref<?x4xf32, #gpu.address_space<workgroup>>, %c: memref<4x4xf32, #gpu.address_space<workgroup>>) kernel {
  // expected-error @below {{register tile must be static and bufferized}}
  linalg.matmul {dyncc.register_tile} ins(%a, %b : memref<4x?xf32, #gpu.address_space<workgroup>>, memref<?x4xf32, #gpu.address_space<workgroup>>) outs(%c : memref<4x4xf32, #gpu.address_space<workgroup>>)
  gpu.return
}
}
}
