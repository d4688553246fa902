// RUN: dyncc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(dyncc-tile-and-fuse),canonicalize,cse)' | FileCheck %s --check-prefix=TILED
// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dyncc-tile-and-fuse),canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},drop-equivalent-buffer-results,canonicalize,cse,canonicalize,func.func(dyncc-bound-local-buffers),dyncc-map-forall-to-grid{target=gpu},canonicalize,cse)' | FileCheck %s --check-prefix=GPU
// RUN: dyncc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dyncc-tile-and-fuse),canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},drop-equivalent-buffer-results,canonicalize,cse,canonicalize,func.func(dyncc-bound-local-buffers),dyncc-map-forall-to-grid{target=cpu},canonicalize,cse)' | FileCheck %s --check-prefix=CPU

// A GEMM block walks K in steps at block level. The accumulator is the
// whole block tile in shared memory, initialized by the threads before the
// k-steps. Each step's operand tiles are copied into shared memory by all
// the block's threads in chunks, a chunk past the operand's extents (the M,
// N and K tails: "local padding") reading the zeros of the padding. So
// each thread's product is static and unmasked (a register tile): rows and
// columns past the problem's are computed on zeros and never stored. The
// epilogue reads the block's part of the accumulator; its stores stay
// predicated.
// TILED-LABEL: func.func @gemm_dynamic_k(
//       TILED:   scf.forall ({{.*}}) = (0, 0) to ({{.*}}) step (32, 64)
//       TILED:     %[[M:.+]] = affine.min
//       TILED:     %[[N:.+]] = affine.min
//       TILED:     %[[ACC:.+]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x64xf32>
//       TILED:     scf.forall ({{.*}}) = (0, 0) to (32, 64) step (4, 4) shared_outs(%{{.+}} = %[[ACC]])
//       TILED:       linalg.fill {{.*}} tensor<4x4xf32>
//       TILED:     mapping = [#gpu.thread<y>, #gpu.thread<x>]
//       TILED:     scf.for %{{.+}} = %c0 to %{{.+}} step %c16 iter_args
//       TILED:       %[[A:.+]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf32>
//       TILED:       scf.forall (%{{.+}}) in (512) shared_outs(%{{.+}} = %[[A]])
//       TILED:         vector.transfer_read {{.*}} : tensor<?x?xf32>, vector<1x1xf32>
//       TILED:       mapping = [#gpu.thread<linear_dim_0>]
//       TILED:       %[[B:.+]] = bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x64xf32>
//       TILED:       scf.forall (%{{.+}}) in (1024) shared_outs(%{{.+}} = %[[B]])
//       TILED:         vector.transfer_read {{.*}} : tensor<?x?xf32>, vector<1x1xf32>
//       TILED:       mapping = [#gpu.thread<linear_dim_0>]
//       TILED:       scf.forall ({{.*}}) = (0, 0) to (32, 64) step (4, 4)
//       TILED:         linalg.matmul {dyncc.register_tile} ins({{.*}} : tensor<4x16xf32>, tensor<16x4xf32>) outs({{.*}} : tensor<4x4xf32>)
//       TILED:       mapping = [#gpu.thread<y>, #gpu.thread<x>]
//       TILED:       scf.yield
// The epilogue, per thread, after the last step.
//       TILED:     tensor.extract_slice %{{.+}}[0, 0] [%[[M]], %[[N]]] [1, 1] : tensor<32x64xf32> to tensor<?x?xf32>
//       TILED:     scf.forall ({{.*}}) = (0, 0) to (%[[M]], %[[N]]) step (4, 4)
//       TILED:       arith.addf
//       TILED:     mapping = [#gpu.thread<y>, #gpu.thread<x>]
//       TILED:   mapping = [#gpu.block<y>, #gpu.block<x>]

// On the GPU the tiles are views of the kernel's dynamic shared memory at
// 16-byte aligned offsets, not workgroup attributions: the accumulator is
// to take the operand tiles' bytes once the k-steps are done
// (dyncc-overlap-shared-accumulators moves the views), and the kernel
// records the bytes they share, min(8192, 4096 + 2048). The
// accumulator's initialization and the product are one tile per thread (no
// loop: the block has as many threads as tiles), the copies a loop over
// the chunks. Barriers separate the threads' writes from the product's
// reads: after the initialization, before the step's copies (the previous
// step's readers are done), after them, and before the epilogue.
// GPU-LABEL: gpu.func @gemm_dynamic_k(
//   GPU-NOT:     workgroup(
//  GPU-SAME:     dyncc.dynamic_shared_bytes = 14336
//  GPU-SAME:     dyncc.overlapped_shared_bytes = 6144
//       GPU:   %[[SHM:.+]] = gpu.dynamic_shared_memory
//  GPU-NEXT:   memref.view %[[SHM]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf32, #gpu.address_space<workgroup>>
//  GPU-NEXT:   memref.view %[[SHM]][%c4096][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x16xf32, #gpu.address_space<workgroup>>
//  GPU-NEXT:   memref.view %[[SHM]][%c6144][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x64xf32, #gpu.address_space<workgroup>>
//   GPU-NOT:   memref.alloc
//   GPU-NOT:   scf.for
//       GPU:   linalg.fill {{.*}} memref<4x4xf32, {{.*}}#gpu.address_space<workgroup>>
//  GPU-NEXT:   gpu.barrier
//  GPU-NEXT:   scf.for %{{.+}} = %c0 to %{{.+}} step %c16
//       GPU:     gpu.barrier
//       GPU:     scf.for
//       GPU:       vector.transfer_write {{.*}} #gpu.address_space<workgroup>
//       GPU:     scf.for
//       GPU:       vector.transfer_write {{.*}} #gpu.address_space<workgroup>
//       GPU:     gpu.barrier
//   GPU-NOT:     gpu.barrier
//   GPU-NOT:     scf.for
//       GPU:     linalg.matmul {dyncc.register_tile}
//       GPU:   gpu.barrier
//   GPU-NOT:   gpu.barrier
//       GPU:   linalg.generic
//       GPU:   gpu.return

// On the CPU the same tiles are the block task's stack buffers.
// CPU-LABEL: func.func @gemm_dynamic_k(
//       CPU:   memref.alloca() {alignment = 16 : i64} : memref<16x64xf32>
//       CPU:   memref.alloca() {alignment = 16 : i64} : memref<32x16xf32>
//       CPU:   memref.alloca() {alignment = 16 : i64} : memref<32x64xf32>
//   CPU-NOT:   workgroup
//   CPU-NOT:   gpu.barrier
#bcast = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_dynamic_k(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %b: tensor<?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>, k_step = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = linalg.matmul ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<?xf32>) outs(%1 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// K a static multiple of the k-step: nothing is filled, and A's rows
// (64 long) are copied in chunks of 4; only the M and N tails read padding.
// TILED-LABEL: func.func @gemm_static_k(
//       TILED:   scf.for
//       TILED:     bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf32>
//   TILED-NOT:     linalg.fill
//       TILED:     vector.transfer_read {{.*}} : tensor<?x?xf32>, vector<1x4xf32>
//   TILED-NOT:     linalg.fill
//       TILED:     linalg.matmul {dyncc.register_tile} ins({{.*}} : tensor<4x16xf32>, tensor<16x4xf32>)
//       TILED:     scf.yield
// GPU-LABEL: gpu.func @gemm_static_k(
// CPU-LABEL: func.func @gemm_static_k(
func.func @gemm_static_k(%x: tensor<?x64xf32>, %w: tensor<64x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>, k_step = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x?xf32>) outs(%0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// An operand computed elementwise from a read (a ReLU before a classifier's
// Gemm) still gives a register tile: the prologue is rebuilt over the
// padded read and computed in each k-step's copy into shared memory, never
// whole per block before the k-step loop.
// TILED-LABEL: func.func @gemm_relu_prologue(
//   TILED-NOT:   arith.maximumf
//       TILED:   scf.for
//       TILED:     bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf32>
//       TILED:     scf.forall
//       TILED:       tensor.pad
//       TILED:       arith.maximumf
//       TILED:     linalg.matmul {dyncc.register_tile} ins({{.*}} : tensor<4x16xf32>, tensor<16x4xf32>)
func.func @gemm_relu_prologue(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>, k_step = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %k = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %k) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.maximumf %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = linalg.matmul ins(%r, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// Tiles that would not fit in the 48 KB of static shared memory (128 x 256
// of f32 operands per k-step of 64) keep the per-thread k-steps: no shared
// buffers, the k-step loop inside each thread's tile.
// TILED-LABEL: func.func @gemm_too_large(
//   TILED-NOT:   alloc_tensor
//       TILED:   scf.forall ({{.*}}) step (128, 256)
//       TILED:     scf.forall
//       TILED:       scf.for
//       TILED:         linalg.matmul
// GPU-LABEL: gpu.func @gemm_too_large(
//   GPU-NOT:   workgroup(
//   GPU-NOT:   gpu.barrier
// CPU-LABEL: func.func @gemm_too_large(
func.func @gemm_too_large(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 128, 256>, thread = array<i64: 8, 32>, k_step = 64 : i64}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  // expected-warning @below {{config 'block 128x256 thread 8x32 k 64' needs 98304 bytes of shared memory per block for its operand tiles, more than the 49152 the targets allow: each thread walks its own k-steps}}
  %1 = linalg.matmul ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// f16 operands with an f32 accumulator and no instruction tile: SIMT
// register tiles, the accumulator in shared memory as for f32. Without a
// divisibility fact an f16 row cannot be copied in 4-byte chunks, so each
// thread pads its piece of a step in the shared tile (a fill of zeros, then
// the part in bounds; dyncc-bound-local-buffers forwards the local buffer
// this was padded in to the shared piece it was copied into) and the rest
// of the k-step is filled. Every access that conflicts is separated: the accumulator's
// initialization from the first step, each step's copies from the product,
// the product from the next step's copies, and the last step from the
// epilogue that reads the accumulator.
// TILED-LABEL: func.func @gemm_f16(
//       TILED:   bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x64xf32>
//       TILED:   scf.for
//       TILED:     bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf16>
//       TILED:     bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<16x64xf16>
//       TILED:     linalg.matmul {dyncc.register_tile} ins({{.*}} : tensor<4x16xf16>, tensor<16x4xf16>) outs({{.*}} : tensor<4x4xf32>)
// GPU-LABEL: gpu.func @gemm_f16(
//       GPU:   memref.view {{.*}} to memref<32x64xf32, #gpu.address_space<workgroup>>
//       GPU:   linalg.fill {{.*}} #gpu.address_space<workgroup>
//  GPU-NOT:    linalg.
//       GPU:   gpu.barrier
//  GPU-NEXT:   scf.for
//       GPU:     gpu.barrier
//   GPU-NOT:     linalg.matmul
//       GPU:     linalg.map outs({{.*}} #gpu.address_space<workgroup>>)
//       GPU:     linalg.generic {{.*}} outs({{.*}} #gpu.address_space<workgroup>>)
//       GPU:     linalg.fill {{.*}} #gpu.address_space<workgroup>
//       GPU:     linalg.map outs({{.*}} #gpu.address_space<workgroup>>)
//       GPU:     linalg.generic {{.*}} outs({{.*}} #gpu.address_space<workgroup>>)
//       GPU:     linalg.fill {{.*}} #gpu.address_space<workgroup>
//   GPU-NOT:     linalg.
//       GPU:     gpu.barrier
//   GPU-NOT:     gpu.barrier
//       GPU:     linalg.matmul {dyncc.register_tile}
//   GPU-NOT:     linalg.
//       GPU:   gpu.barrier
//   GPU-NOT:   gpu.barrier
//       GPU:   arith.truncf
// CPU-LABEL: func.func @gemm_f16(
//   CPU-NOT:   gpu.barrier
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gemm_f16(%x: tensor<?x?xf16>, %w: tensor<?x?xf16>, %out: tensor<?x?xf16>) -> tensor<?x?xf16>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>, k_step = 16 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf16>
  %n = tensor.dim %w, %c1 : tensor<?x?xf16>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x?xf16>, tensor<?x?xf16>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x?xf32>) outs(%out : tensor<?x?xf16>) {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<?x?xf16>
  return %r : tensor<?x?xf16>
}

// -----

// A conv: the input window (4 rows x 8 columns of output, 5x5 taps) and the
// filter go to shared memory per 8-channel step; the taps are whole.
// TILED-LABEL: func.func @conv_whole_taps(
//       TILED:   bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<1x8x8x12xf32>
//       TILED:   bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<4x8x5x5xf32>
//       TILED:   linalg.conv_2d_nchw_fchw
// GPU-LABEL: gpu.func @conv_whole_taps(
// CPU-LABEL: func.func @conv_whole_taps(
func.func @conv_whole_taps(%x: tensor<?x8x?x?xf32>, %w: tensor<4x8x5x5xf32>, %out: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "conv", dyncc.tile_config = {block = array<i64: 1, 4, 4, 8>, thread = array<i64: 1, 1, 1, 2>, k_step = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x8x?x?xf32>, tensor<4x8x5x5xf32>) outs(%0 : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %1 : tensor<?x4x?x?xf32>
}

// -----

// A k-step of 4 would split the 5 taps, and a padded tap would meet real
// input rows (0 x inf is not 0): not promoted, per-thread k-steps instead.
// TILED-LABEL: func.func @conv_split_taps(
//   TILED-NOT:   alloc_tensor
//       TILED:   scf.forall
//       TILED:     scf.forall
//       TILED:       scf.for
//       TILED:         linalg.conv_2d_nchw_fchw
// GPU-LABEL: gpu.func @conv_split_taps(
//   GPU-NOT:   gpu.barrier
// CPU-LABEL: func.func @conv_split_taps(
func.func @conv_split_taps(%x: tensor<?x8x?x?xf32>, %w: tensor<4x8x5x5xf32>, %out: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
    attributes {dyncc.kernel, dyncc.kind = "conv", dyncc.tile_config = {block = array<i64: 1, 4, 4, 8>, thread = array<i64: 1, 1, 1, 2>, k_step = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x8x?x?xf32>, tensor<4x8x5x5xf32>) outs(%0 : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %1 : tensor<?x4x?x?xf32>
}

// -----

// A flattened input (Flatten before a classifier's Gemm): the ReLU producer
// is collapsed to the flat shape instead of the matmul being expanded into
// three reduction loops (whose k-steps of 16 each would need 96 KB), so
// the matmul keeps one K and its tiles are promoted, the ReLU fused into
// the copy of A.
// TILED-LABEL: func.func @flatten_gemm(
//   TILED-NOT:   linalg.generic {{.*}}"reduction", "reduction"
//       TILED:   bufferization.alloc_tensor() {memory_space = #gpu.address_space<workgroup>} : tensor<32x16xf32>
//       TILED:   scf.forall
//       TILED:     arith.maximumf
//       TILED:     linalg.copy
//       TILED:   linalg.matmul
// GPU-LABEL: gpu.func @flatten_gemm(
// CPU-LABEL: func.func @flatten_gemm(
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @flatten_gemm(%x: tensor<?x20x4x4xf32>, %w: tensor<320x50xf32>, %out: tensor<?x50xf32>) -> tensor<?x50xf32>
    attributes {dyncc.kernel, dyncc.kind = "gemm", dyncc.tile_config = {block = array<i64: 32, 64>, thread = array<i64: 4, 4>, k_step = 16 : i64}} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x20x4x4xf32>
  %e = tensor.empty(%n) : tensor<?x20x4x4xf32>
  %relu = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x20x4x4xf32>) outs(%e : tensor<?x20x4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x20x4x4xf32>
  %flat = tensor.collapse_shape %relu [[0], [1, 2, 3]] : tensor<?x20x4x4xf32> into tensor<?x320xf32>
  %0 = linalg.fill ins(%zero : f32) outs(%out : tensor<?x50xf32>) -> tensor<?x50xf32>
  %1 = linalg.matmul ins(%flat, %w : tensor<?x320xf32>, tensor<320x50xf32>) outs(%0 : tensor<?x50xf32>) -> tensor<?x50xf32>
  return %1 : tensor<?x50xf32>
}
