//===- Passes.td - Code generation passes ------------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_CODEGEN_PASSES_TD
#define DYNCC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileAndFusePass : Pass<"dyncc-tile-and-fuse", "mlir::func::FuncOp"> {
  let summary = "Tile a kernel's root op to blocks and threads, fusing producers";
  let description = [{
    For a `dyncc.kernel` function: tiles the op that produces the first
    result (the root) with the block tile of its `dyncc.tile_config` into an
    `scf.forall` mapped to `#gpu.block<...>`, fusing every producer (the
    GEMM of an epilogue, its fill) into the tile through TilingInterface;
    then tiles the tiled root again with the thread tile into a nested
    `scf.forall` mapped to `#gpu.thread<...>`, fusing again. Dimensions are
    mapped innermost-first to x, y, z. Works on tensors, before
    bufferization; tails are partial tiles (sizes are `min` expressions).
    Operands and block temporaries are promoted to shared memory within
    `shared-bytes` per block.
  }];
  let options = [Option<"sharedBytes", "shared-bytes", "int64_t", "49152",
                        "the most shared memory per block (bytes); above "
                        "48 KB the kernel uses dynamic shared memory">];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect",
    "::mlir::tensor::TensorDialect", "::mlir::gpu::GPUDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def BoundLocalBuffersPass : Pass<"dyncc-bound-local-buffers", "mlir::func::FuncOp"> {
  let summary = "Turn a kernel's tile temporaries into static local buffers";
  let description = [{
    After bufferization, every `memref.alloc` in a `dyncc.kernel` function
    (a tile's temporary) becomes a buffer of its static upper bound, computed
    through ValueBoundsOpInterface from the tile sizes, allocated once at the
    kernel's entry and viewed at the dynamic size. A temporary with no static
    bound, temporaries beyond `max-bytes` per thread, or shared buffers
    beyond `shared-bytes` per block, are errors. Every `memref.copy`
    becomes a linalg copy, so no kernel calls into MLIR's run-time library.
  }];
  let options = [Option<"maxBytes", "max-bytes", "int64_t", "65536",
                        "the most bytes of temporaries per thread">,
                 Option<"sharedBytes", "shared-bytes", "int64_t", "49152",
                        "the most bytes of shared buffers per block">];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def ApproximateMathPass : Pass<"dyncc-approximate-math"> {
  let summary = "Replace erf and erfc by polynomial approximations, and "
                "integer powers by a loop";
  let description = [{
    `math.erf` and `math.erfc` have no LLVM intrinsic; rather than libm calls
    on the CPU and libdevice on the GPU, both targets get upstream's
    polynomial approximation, so the numbers CI checks on the CPU are the
    GPU's too. `math.ipowi` becomes exponentiation by squaring in an
    `scf.while`, in place: upstream's software version is a function in the
    top-level module, which a GPU kernel cannot call. `math.powf` by a
    constant integer exponent from -4 to 4 becomes multiplications (and a
    reciprocal), on both targets, instead of a `powf` / `__nv_powf` call.

    With `host`, for host kernels (after their math is widened to f32),
    `math.exp`, `math.tanh` (softmax, sigmoid, GELU's tanh form) and
    `math.log` (a subnormal input scaled by 2^24 first: upstream clamps it)
    become upstream's approximations too, and every `math.fma` a multiply and an
    add marked `contract`. As libm calls they were scalar, cost the
    portable build a call to `fmaf` per polynomial step, and went through
    libm's error handling (`errno`) on every underflow, which softmax's
    masked lanes hit; inline, they vectorize. GPU kernels keep
    libdevice's `__nv_expf` and `__nv_tanhf`.
  }];
  let options = [Option<"host", "host", "bool", "false",
                        "also approximate exp, tanh and log, and contract fma "
                        "(host kernels)">];
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def VectorizeMmaPass : Pass<"dyncc-vectorize-mma"> {
  let summary = "Turn static warp and thread products into register code";
  let description = [{
    For each contraction marked `dyncc.mma = array<i64: M, N, K>` (a warp's
    product of static shared-memory tiles, made by dyncc-tile-and-fuse for a
    config with an instruction tile): vectorizes it, folds the operands'
    extensions into the `vector.contract` and the subviews into the
    transfers, hoists the accumulator out of the k-step loop into
    registers, unrolls to the instruction shape and converts to
    `nvgpu.ldmatrix` and `nvgpu.mma.sync`. A marked contraction left
    unconverted is an error.

    For each contraction marked `dyncc.register_tile` (a thread's product of
    static shared tiles, for a SIMT config): vectorizes it, unrolls it into
    rows and chunks of K, keeps the accumulator's rows in registers across
    k-steps where the thread's indices are invariant in the k-step loop
    (the GPU's grid mapping), lowers the contraction to FMAs by outer
    products and the rows to aligned vector loads and stores.

    Run on kernels after grid mapping. With `target=cpu` only register
    tiles are lowered (the CPU runs warp products as loops): the host runs
    the same vector code the GPU does, so CI checks its numerics.
  }];
  let options = [Option<"target", "target", "std::string", "\"gpu\"",
                        "gpu or cpu">];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def PrivateAccumulatorsPass : Pass<"dyncc-private-accumulators"> {
  let summary = "Accumulate a thread's output tile in a private buffer";
  let description = [{
    Run on GPU kernels after grid mapping. A static subview of a kernel
    argument in global memory (a thread's tile of the output), through
    which every access to that argument goes, and which a linalg op inside
    a loop below it reads and writes (a conv's product at every k-step),
    is replaced in those ops by a private buffer allocated at the kernel's
    entry: copied in before the first access unless that access writes it
    whole, and copied out once after the last; the first access must be an
    op of the tile's block (not under a guard or loop) writing all of it.
    Every op on the buffer becomes loops, a product's reductions outermost,
    the buffer's elements unrolled, so LLVM promotes it to registers.
    The views between the tile and the argument may be subviews and the
    reshapes a unit batch dimension leaves (reinterpret_cast, collapse,
    expand, cast).
  }];
  let options = [Option<"maxBytes", "max-bytes", "int64_t", "512",
                        "the largest tile, in bytes, kept private">];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def OverlapSharedAccumulatorsPass : Pass<"dyncc-overlap-shared-accumulators"> {
  let summary = "Lay a GPU kernel's shared buffers out by liveness";
  let description = [{
    Run on GPU kernels after dyncc-vectorize-mma. A view of the kernel's
    dynamic shared memory that nothing inside a k-step loop touches, and
    that before it is only filled with one value and read (the hoisted
    accumulator reads, one of which is an initial iteration argument of the
    loop), is an accumulator: its reads before the loop become the fill
    value and its fills go, so it lives only after the loop. The views are
    then laid out by liveness: in a block, views whose accesses fall in ops
    that do not meet share bytes, those all inside one `scf.if`'s then-block
    laid out there first (products computed in turn share too). A barrier
    (after `cp.async.wait_group 0` where the earlier view was copied into
    asynchronously) goes before the first op of a view that takes another's
    bytes, unless one is there. The kernel's `dyncc.dynamic_shared_bytes`
    becomes the new total; above `shared-bytes` (when positive) it is an
    error.
  }];
  let options = [Option<"sharedBytes", "shared-bytes", "int64_t", "0",
                        "the shared memory a block may use (0: no limit)">];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def ContractFloatOpsPass : Pass<"dyncc-contract-float-ops"> {
  let summary = "Mark float multiplies and adds contractible (fused multiply-add)";
  let description = [{
    Sets the `contract` fast-math flag on every `arith.mulf`, `arith.addf`
    and `arith.subf`, so LLVM may fuse `a * b + c` into one FMA, as nvcc
    does by default. Run on GPU kernels only: the host CPU target keeps
    separate roundings.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ExpandHalfConversionsPass : Pass<"dyncc-expand-half-conversions"> {
  let summary = "Convert between f16 and f32 with integer operations";
  let description = [{
    On a CPU without F16C, LLVM lowers `arith.extf` f16 to f32 and
    `arith.truncf` f32 to f16 to calls into libgcc or compiler-rt
    (`__extendhfsf2`, `__truncsfhf2`); host kernels may depend on libc and
    libm only. This pass writes both conversions as integer operations on
    the bits: exact widening (subnormals, infinities and NaNs included) and
    narrowing rounded to nearest even, overflowing to infinity, NaN kept a
    quiet NaN. Scalars only: the kernels are not vectorized.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def MapForallToGridPass : Pass<"dyncc-map-forall-to-grid", "mlir::ModuleOp"> {
  let summary = "Turn block/thread foralls into a GPU kernel or a CPU block entry";
  let description = [{
    Upstream's forall mapping rejects dynamically sized foralls, so dyncc maps
    them itself. For `target=gpu`, each bufferized kernel function becomes a
    `gpu.func` kernel in the `gpu.module @dyncc_kernels`: block-level forall
    induction variables come from `gpu.block_id` (guarded against the upper
    bound) and the thread-level forall becomes a loop strided by the block
    size starting at `gpu.thread_id`. For `target=cpu`, the kernel keeps
    being a `func.func` that takes three more `index` arguments (the block
    ids x, y, z) and runs one block per call; the thread-level forall becomes
    an `scf.for`. The run-time calls it over the same grid a GPU would launch.
    A GPU kernel's shared buffers become workgroup attributions, or, beyond
    the 48 KB of static shared memory, views of `gpu.dynamic_shared_memory`
    with the bytes recorded as `dyncc.dynamic_shared_bytes`.
  }];
  let options = [Option<"target", "target", "std::string", "\"gpu\"",
                        "gpu or cpu">];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def PipelineKStepsPass : Pass<"dyncc-pipeline-k-steps", "mlir::func::FuncOp"> {
  let summary = "cp.async and a multi-stage pipeline for chunked k-step copies";
  let description = [{
    On a bufferized kernel before grid mapping, for each tensor-core product
    (`dyncc.mma`) whose k-step operands dyncc-tile-and-fuse copies in chunks
    (a forall over `#gpu.thread<linear_dim_0>` of vector transfer pairs):
    with `target=gpu` each pair becomes an `nvgpu.device_async_copy` with a
    source-element count (zero-filled tails); with the tile config's
    `stages` > 1 the chunked shared tiles get one buffer per stage and the
    k-step loop is software-pipelined (a prologue issues the first
    `stages - 1` steps' copies, step i issues step i + stages - 1's); on the
    GPU each step's copies are one cp.async group, waited for (at most
    `stages - 1` in flight) before the step's product. `target=cpu` builds
    the same buffers, prologue and predicates with synchronous copies.
  }];
  let options = [Option<"target", "target", "std::string", "\"gpu\"",
                        "gpu or cpu">];
  let dependentDialects = ["::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def WidenChunkedCopiesPass : Pass<"dyncc-widen-chunked-copies", "mlir::func::FuncOp"> {
  let summary = "Host kernels: chunked copies in runs of chunks, unmasked where they can be";
  let description = [{
    On a bufferized host kernel before grid mapping: each chunked copy (a
    forall over `#gpu.thread<linear_dim_0>` of vector transfer pairs into
    shared tiles, one chunk of at most 16 bytes per GPU thread) moves runs
    of consecutive chunks per iteration, as many as fit in `bytes`, where
    the copy's index maps (functions of the chunk index alone, evaluated at
    every chunk) put a run's chunks side by side in one row of both the
    source and the buffer: the forall's count divides by the run, each read
    and write takes the run's vector. Each read also becomes in bounds in
    every dimension where its indices keep it inside a static extent. The
    host runs a copy's chunks one after another, each paying its index
    arithmetic and its mask.
  }];
  let options = [Option<"bytes", "bytes", "int64_t", "64",
                        "the most bytes a widened chunk moves">];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def PrefetchKStepsPass : Pass<"dyncc-prefetch-k-steps", "mlir::func::FuncOp"> {
  let summary = "Host kernels: prefetch the next k-step's chunked copies";
  let description = [{
    On a bufferized host kernel before grid mapping: each chunked copy (a
    forall over `#gpu.thread<linear_dim_0>` of vector transfer pairs into
    shared tiles) in a k-step loop (the nearest `scf.for` around it that is
    the nearest loop around the step's product, a `dyncc.register_tile` or
    `dyncc.mma` contraction) also prefetches, chunk by chunk, what
    the same copy reads at the loop's next step (`memref.prefetch`, read,
    locality 3), under an `scf.if` that the next step exists, that the
    conditions the copy runs under hold there (a pipelined copy's), and that
    a chunk that may leave its tile starts inside it. The host runs
    a block's copies and products one after another, so a step's copy
    waited on the rows of B and A that it read, each row its own stream
    (a B tile's rows are a row of the matrix apart) that the hardware
    prefetchers do not follow; the prefetch issued a step ahead has a whole
    step's products to arrive in. The GPU overlaps the same copies with
    cp.async stages (dyncc-pipeline-k-steps). A read whose address does not
    depend on the loop, or depends on it through an operation that is not
    pure or a value the loop carries, is left alone.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def ShuffleLaneMergesPass : Pass<"dyncc-shuffle-lane-merges", "mlir::func::FuncOp"> {
  let summary = "Merge the lanes' partials of a row reduction by warp shuffles";
  let description = [{
    GPU only, on a bufferized kernel before grid mapping. dyncc-tile-and-fuse
    splits a row's reduction over the lanes (x threads) of a warp or block:
    each lane folds its share into a private value and copies it into its
    slot of a buffer of partials, which a `dyncc.lane_merge` generic folds
    into the reduction's accumulator. Each thread's buffer being its own on
    the GPU, the copy and the merge become a butterfly of `gpu.shuffle xor`
    over the warp, whose value every lane folds into its accumulator; with
    more lanes than
    a warp, lane 0 of each warp stores the warp's value into a shared slot
    and a second forall over the lanes folds the slots. With fewer lanes
    than a warp (`reduce column`: a group of 2 to 32 lanes per output, the
    block's x threads), the butterfly stays within the group: `nvvm.shfl.sync`
    with the group's lanes as its member mask, so groups of one warp whose
    outputs are out of bounds may skip it.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerVectorTransfersPass : Pass<"dyncc-lower-vector-transfers", "mlir::func::FuncOp"> {
  let summary = "Turn a kernel's aligned vector transfers into aligned loads and stores";
  let description = [{
    On a bufferized kernel, each in-bounds, unmasked 1-D vector transfer
    along the unit-stride innermost dimension of a memref (the ones
    dyncc-tile-and-fuse makes when it vectorizes an elementwise thread
    tile, only where every vector is provably aligned to its size) becomes
    a `vector.load` or `vector.store` with `alignment` = the vector's bytes
    (at most 16): 16-byte global accesses on the GPU.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // DYNCC_CODEGEN_PASSES_TD
