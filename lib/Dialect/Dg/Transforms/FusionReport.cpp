//===- FusionReport.cpp - What fusion saves, per group --------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionReport.h"

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

/// The bytes of a tensor value as an expression over the symbols (0 for a
/// tensor whose shape has no symbolic form).
static DimExpr bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  std::optional<SmallVector<DimExpr>> shape = shapeOf(value);
  if (!type || !shape)
    return DimExpr(0);
  Type et = type.getElementType();
  int64_t width =
      et.isIntOrFloat() ? std::max(1u, et.getIntOrFloatBitWidth() / 8) : 8;
  DimExpr bytes(width);
  for (const DimExpr &d : *shape)
    bytes = bytes * d;
  return bytes;
}

/// Reads of distinct tensor operands plus writes of results, for `ops`
/// seen as one kernel (values produced inside are not read again).
static DimExpr traffic(ArrayRef<Operation *> ops, ValueRange results) {
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if ((def && inside.contains(def)) || isa_and_nonnull<DimValuesOp>(def))
        continue; // On chip, or evaluated from the symbols.
      inputs.insert(operand);
    }
  DimExpr total(0);
  for (Value v : inputs)
    total = total + bytesOf(v);
  for (Value v : results)
    total = total + bytesOf(v);
  return total;
}

static std::string shapeString(Value value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  std::optional<SmallVector<DimExpr>> shape = shapeOf(value);
  os << "[";
  if (shape)
    llvm::interleaveComma(*shape, os, [&](const DimExpr &d) { os << d.str(); });
  os << "]" << getElementTypeOrSelf(value.getType());
  return s;
}

void dg::printFusionReport(ModuleOp module, raw_ostream &os) {
  unsigned index = 0, opCount = 0;
  DimExpr fusedTotal(0), unfusedTotal(0);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || func->hasAttr("dyncc.kernel"))
      continue;
    for (auto group : func.getBody().getOps<FusionOp>()) {
      SmallVector<Operation *> ops;
      for (Operation &op : group.getBody().front().without_terminator())
        ops.push_back(&op);
      DimExpr fused = traffic(ops, group.getResults());
      DimExpr unfused(0);
      for (Operation *op : ops)
        unfused = unfused + traffic({op}, op->getResults());
      fusedTotal = fusedTotal + fused;
      unfusedTotal = unfusedTotal + unfused;
      opCount += ops.size();
      os << "group " << index++ << " " << stringifyFusionKind(group.getKind())
         << ":";
      for (Operation *op : ops) {
        os << " " << op->getName().stripDialect();
        if (op->hasAttr(FusionOp::getBackboneAttrName()))
          os << "*";
      }
      os << "\n  results:";
      llvm::interleave(
          group.getResults(), os, [&](Value v) { os << " " << shapeString(v); },
          ",");
      os << "\n  bytes: " << fused.str() << " (unfused " << unfused.str()
         << ")\n";
    }
  }
  os << "total: " << index << " groups of " << opCount << " ops; bytes "
     << fusedTotal.str() << " (unfused " << unfusedTotal.str() << ")\n";
}
