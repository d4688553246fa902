//===- Bounds.h - Static bounds of tile sizes -------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Static bounds of the index values that size tiles, shared by the passes
// that give tile temporaries and promoted operands a static footprint.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_CODEGEN_BOUNDS_H
#define DYNCC_LIB_CODEGEN_BOUNDS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/VectorInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace dyncc {

/// A closed range of index values; INT64_MIN / INT64_MAX stand for no bound.
struct Interval {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
};

constexpr int64_t kNoLo = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoHi = std::numeric_limits<int64_t>::max();

/// True for a buffer in GPU workgroup (shared) memory: a block's promoted
/// operands and block-level temporaries.
inline bool isWorkgroupMemory(mlir::MemRefType type) {
  auto space = llvm::dyn_cast_or_null<mlir::gpu::AddressSpaceAttr>(
      type.getMemorySpace());
  return space && space.getValue() == mlir::gpu::AddressSpace::Workgroup;
}

/// The attribute dyncc-tile-and-fuse puts on a warp's contraction bound for
/// tensor cores, holding the instruction shape (M, N, K) that
/// dyncc-vectorize-mma lowers it to.
constexpr llvm::StringLiteral kMmaAttrName = "dyncc.mma";

/// The attribute dyncc-tile-and-fuse puts on a SIMT GEMM's per-step
/// product over static padded tiles (a thread's rows of A, its columns of
/// B, its part of the accumulator), which dyncc-vectorize-mma keeps in
/// registers across k-steps and lowers to FMAs on the GPU.
constexpr llvm::StringLiteral kRegisterTileAttrName = "dyncc.register_tile";

/// The attribute dyncc-tile-and-fuse puts on a GEMM kernel whose static
/// product's shared accumulator is to take the bytes of its operand tiles
/// once the k-steps are done (dyncc-overlap-shared-accumulators): the bytes
/// they share, which dyncc-bound-local-buffers leaves out of the kernel's
/// total. Grid mapping makes such a kernel's shared buffers views of
/// dynamic shared memory, whose offsets the overlap can move.
constexpr llvm::StringLiteral kOverlappedSharedBytesAttrName =
    "dyncc.overlapped_shared_bytes";

/// The attribute dyncc-tile-and-fuse puts on the generic that folds a row
/// reduction's lane partials, which dyncc-shuffle-lane-merges turns into
/// warp shuffles on the GPU.
constexpr llvm::StringLiteral kLaneMergeAttrName = "dyncc.lane_merge";

/// Static shared memory a block may use without opting in to more: the
/// budget of promotion and the limit dyncc-bound-local-buffers enforces.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// The bytes a shared buffer of `elements` takes: rounded up to 16, so
/// every shared buffer starts 16-byte aligned (vector and cp.async
/// accesses), and at least 16.
inline int64_t getSharedBufferBytes(int64_t elements, int64_t elementBytes) {
  int64_t bytes = std::max<int64_t>(elements * elementBytes, 1);
  return (bytes + 15) / 16 * 16;
}

/// Bytes per element, or 0 for a type a kernel cannot hold.
int64_t getElementBytes(mlir::Type type);

/// Bounds of index value `v`: ValueBoundsOpInterface's, or, where it has
/// none, interval arithmetic through affine.apply/min/max (the interface
/// states no upper bound for an affine.max, whose bound is the largest of
/// its results' bounds; tiled pads clamp their windows with them).
Interval getBounds(mlir::Value v, int depth = 0);

/// Every canonicalization pattern of the loaded dialects and registered
/// ops, for passes that canonicalize parts of a kernel as they go (gather
/// once, in `initialize`).
mlir::FrozenRewritePatternSet
getAllCanonicalizationPatterns(mlir::MLIRContext *ctx);

/// Replaces `op`, an in-bounds transfer of a 1-D vector along a memref's
/// innermost dimension, with a `vector.load` or `vector.store` of that
/// vector carrying `alignment` bytes (LLVM otherwise assumes the element's).
void replaceWithAlignedAccess(mlir::RewriterBase &rewriter,
                              mlir::VectorTransferOpInterface op,
                              int64_t alignment);

/// True if `op` is a chunked copy: a forall over the block's threads as one
/// linear dimension (`#gpu.thread<linear_dim_0>`) whose body writes shared
/// memory only through vector transfers of vector transfer reads.
bool isChunkedCopy(mlir::Operation *op);

/// Checks a pass's `target` option (`gpu` or `cpu`), reporting on `op`.
mlir::LogicalResult verifyTargetOption(mlir::Operation *op,
                                       llvm::StringRef target);

} // namespace dyncc

#endif // DYNCC_LIB_CODEGEN_BOUNDS_H
