// The tensor-core route for f16 GEMMs with f32 accumulation, settled on one
// tile before code generation builds on it (issue 5): upstream's
// rewrite_matmul_as_mma_sync rejects f16 -> f32 and dynamic shapes, so
// dyncc emits nvgpu ops itself. This kernel is that route by hand: dynamic
// M, N and K; one warp per 16x8 tile of C; per 16-wide k-step, cp.async
// copies into shared memory with a source-element count that zero-fills
// rows past M and columns past K (the masked tail: predicated loads with
// the identity as fill), ldmatrix (x4 for A, x2 transposed for B, which is
// K x N row-major as ONNX MatMul has it), mma.sync m16n8k16, and stores
// guarded per row. Preconditions, as divisibility facts: K % 8 == 0 and
// N % 8 == 0 (16-byte aligned cp.async rows); the grid is
// (ceildiv(N, 8), ceildiv(M, 16)) blocks of 32 threads. Shared buffers are
// 16-byte aligned (`llvm.align`), as cp.async and ldmatrix require; the
// default alignment is the element's. Not yet run on a GPU.
//
// It goes through the compiler's own NVVM and PTX stages and must assemble
// for sm_80 and sm_90 with the tensor-core instructions present.

// RUN: dyncc-opt %s --dyncc-lower-to-ptx=chips=sm_80,sm_90 | FileCheck %s --check-prefix=NVVM
// NVVM: gpu.binary @dyncc_kernels
// NVVM-SAME: chip = "sm_80"
// NVVM-SAME: chip = "sm_90"

// RUN: rm -rf %t && mkdir -p %t
// RUN: dyncc-opt %s --dyncc-lower-to-ptx=chips=sm_90 > %t/probe.mlir
// RUN: %python %S/Inputs/extract_ptx.py %t/probe.mlir %t/probe.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/probe.ptx
// PTX: .entry mma_probe(
// PTX: .shared .align 16 .b8 __wg_mma_probe_0[512];
// PTX: .shared .align 16 .b8 __wg_mma_probe_1[256];
// PTX-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{%r[0-9]+}};
// PTX-DAG: cp.async.commit_group;
// PTX-DAG: cp.async.wait_group {{[[:space:]]*}}0;
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// REQUIRES: ptxas
// RUN: %ptxas -arch=sm_90 -v %t/probe.ptx -o %t/probe.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: Compiling entry function 'mma_probe' for 'sm_90'
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{[0-9]+}} registers, used 1 barriers, 768 bytes smem
// RUN: dyncc-opt %s --dyncc-lower-to-ptx=chips=sm_80 > %t/probe80.mlir
// RUN: %python %S/Inputs/extract_ptx.py %t/probe80.mlir %t/probe80.ptx
// RUN: %ptxas -arch=sm_80 %t/probe80.ptx -o %t/probe80.cubin

module attributes {gpu.container_module} {
  gpu.module @dyncc_kernels {
    gpu.func @mma_probe(%M: index, %N: index, %K: index,
                        %A: memref<?x?xf16>, %B: memref<?x?xf16>,
                        %C: memref<?x?xf32>)
        workgroup(%smA: memref<16x16xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
                  %smB: memref<16x8xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      %lane = gpu.thread_id x
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %m0 = arith.muli %by, %c16 : index
      %n0 = arith.muli %bx, %c8 : index
      // A: lane copies 8 halves (16 bytes) of row lane/2 at column 8*(lane%2).
      %ar = arith.divui %lane, %c2 : index
      %ap = arith.remui %lane, %c2 : index
      %ac = arith.muli %ap, %c8 : index
      %gm = arith.addi %m0, %ar : index
      %mIn = arith.cmpi ult, %gm, %M : index
      %mLast = arith.subi %M, %c1 : index
      %gmc = arith.select %mIn, %gm, %mLast : index
      // B: lanes 0..15 copy row k0 + lane (8 halves at column n0).
      %bIn = arith.cmpi ult, %lane, %c16 : index
      // ldmatrix row addresses.
      %lr = arith.remui %lane, %c16 : index
      %lq = arith.divui %lane, %c16 : index
      %lc = arith.muli %lq, %c8 : index
      %acc = scf.for %k0 = %c0 to %K step %c16 iter_args(%sum = %zero) -> (vector<2x2xf32>) {
        %ka = arith.addi %k0, %ac : index
        %kaIn = arith.cmpi ult, %ka, %K : index
        %aOk = arith.andi %mIn, %kaIn : i1
        %aCount = arith.select %aOk, %c8, %c0 : index
        %kac = arith.select %kaIn, %ka, %c0 : index
        %ta = nvgpu.device_async_copy %A[%gmc, %kac], %smA[%ar, %ac], 8, %aCount {bypassL1}
            : memref<?x?xf16> to memref<16x16xf16, #gpu.address_space<workgroup>>
        scf.if %bIn {
          %kb = arith.addi %k0, %lane : index
          %kbIn = arith.cmpi ult, %kb, %K : index
          %bCount = arith.select %kbIn, %c8, %c0 : index
          %kbc = arith.select %kbIn, %kb, %c0 : index
          %tb = nvgpu.device_async_copy %B[%kbc, %n0], %smB[%lane, %c0], 8, %bCount {bypassL1}
              : memref<?x?xf16> to memref<16x8xf16, #gpu.address_space<workgroup>>
          %gb = nvgpu.device_async_create_group %tb
        }
        %ga = nvgpu.device_async_create_group %ta
        // wait_group 0 waits for every group this thread committed.
        nvgpu.device_async_wait %ga {numGroups = 0 : i32}
        gpu.barrier
        %a = nvgpu.ldmatrix %smA[%lr, %lc] {numTiles = 4 : i32, transpose = false}
            : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
        %b = nvgpu.ldmatrix %smB[%lr, %c0] {numTiles = 2 : i32, transpose = true}
            : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
        %d = nvgpu.mma.sync (%a, %b, %sum) {mmaShape = [16, 8, 16]}
            : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
        // Shared memory is overwritten by the next step's copies.
        gpu.barrier
        scf.yield %d : vector<2x2xf32>
      }
      // Accumulator fragment: lane holds row lane/4 (and +8), columns
      // 2*(lane%4) and +1; N % 8 == 0 keeps both columns in bounds.
      %qr = arith.divui %lane, %c4 : index
      %qp = arith.remui %lane, %c4 : index
      %qc = arith.muli %qp, %c2 : index
      %gr0 = arith.addi %m0, %qr : index
      %gr1 = arith.addi %gr0, %c8 : index
      %gc = arith.addi %n0, %qc : index
      %d0 = vector.extract %acc[0] : vector<2xf32> from vector<2x2xf32>
      %d1 = vector.extract %acc[1] : vector<2xf32> from vector<2x2xf32>
      %in0 = arith.cmpi ult, %gr0, %M : index
      scf.if %in0 {
        vector.store %d0, %C[%gr0, %gc] : memref<?x?xf32>, vector<2xf32>
      }
      %in1 = arith.cmpi ult, %gr1, %M : index
      scf.if %in1 {
        vector.store %d1, %C[%gr1, %gc] : memref<?x?xf32>, vector<2xf32>
      }
      gpu.return
    }
  }
}
