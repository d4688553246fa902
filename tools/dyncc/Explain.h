//===- Explain.h - dyncc explain --------------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TOOLS_DYNCC_EXPLAIN_H
#define DYNCC_TOOLS_DYNCC_EXPLAIN_H

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace dyncc {

/// `dyncc explain OUT.dyncc [--plot FILE.svg]`; returns the exit status.
int explainMain(llvm::ArrayRef<std::string> args);

} // namespace dyncc

#endif // DYNCC_TOOLS_DYNCC_EXPLAIN_H
