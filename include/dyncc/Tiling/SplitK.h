//===- SplitK.h - A GEMM's K split over blocks ------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_SPLITK_H
#define DYNCC_TILING_SPLITK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace dyncc {

/// Why dyncc-split-k cannot split `kernel`'s K (whatever the parts), or
/// nullopt where it can: one contraction over one static reduction loop,
/// operands that are arguments or their reshapes, an f32 accumulator of
/// the destination's shape starting at zero.
std::optional<std::string> whyNoSplitK(mlir::func::FuncOp kernel);

/// The two kernels dyncc-split-k made of a split variant, as its function's
/// `dyncc.split_k` names them.
struct SplitKernels {
  mlir::func::FuncOp part, sum;
  int64_t parts = 0;
};

/// `variant`'s split kernels; nullopt where it has no `dyncc.split_k`, or
/// one that does not name two functions of its module and the parts.
std::optional<SplitKernels> getSplitKernels(mlir::func::FuncOp variant);

} // namespace dyncc

#endif // DYNCC_TILING_SPLITK_H
