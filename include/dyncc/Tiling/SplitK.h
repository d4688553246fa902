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

} // namespace dyncc

#endif // DYNCC_TILING_SPLITK_H
