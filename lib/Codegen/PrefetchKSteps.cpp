//===- PrefetchKSteps.cpp - Host prefetches of the next k-step -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host runs a block's k-step as its chunked copies (the step's tiles of
// A and B into the block's buffers), then its threads' products, one after
// another. Each copy waits on its reads: a B tile's rows are a row of the
// matrix apart (12 KB for BERT-base's FFN), each a short stream that the
// hardware prefetchers do not pick up, so on a BERT-base layer the copy of
// B took 15-20% of the kernel's time in a profile, nearly all of it its
// loads. This pass gives every read of a chunked copy in a k-step loop (the
// nearest loop around it that is the nearest loop around the step's
// product) a software prefetch of the address the same chunk reads at the
// next step:
//
//   scf.for %k = %lb to %ub step %s {
//     scf.forall (%t) in (N) {              // a chunked copy
//       %v = vector.transfer_read %tile[%i, %j] ...   // %tile uses %k
//       vector.transfer_write %v, %shared[...]
//       // added:
//       %next = arith.addi %k, %s
//       scf.if (%next < %ub) {
//         %tile' = (the ops %tile and %i, %j are computed by, %k -> %next)
//         memref.prefetch %tile'[%i', %j'], read, locality<3>, data
//       }
//     }
//     ... the step's products
//   }
//
// The prefetch has the step's products to arrive in. The guards keep every
// prefetched address one the copy reads: the next step exists, the
// conditions the read runs under hold there (a pipelined copy, which step
// %k runs for step %k + stages - 1 under `scf.if`, is prefetched for step
// %k + stages only where that step exists), and, where the read may leave
// its tile (rows past M, columns past K), the chunk starts inside the next
// step's tile. Ops recomputed for the next step are pure and region-free; a
// read that depends on the loop through anything else (an impure op, a value
// the loop carries from step to step), sits in a region other than loops
// and ifs or in a loop whose bounds the k-step loop computes, or is masked,
// is left as it is. LLVM hoists the recomputed views out of the chunk loop.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace dyncc {
#define GEN_PASS_DEF_PREFETCHKSTEPSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {

/// A condition `read` runs under inside the loop: an `scf.if` around it
/// (a pipelined copy runs under `step + stages - 1 < K`), negated where the
/// read is in the else branch.
struct Condition {
  Value value;
  bool negated;
};

/// The conditions `read` runs under between it and `loop`, or failure where
/// it is nested in a region other than foralls, loops and ifs, or in a loop
/// whose bounds are computed inside `loop` (its iterations at the next step
/// may differ).
static LogicalResult getConditions(vector::TransferReadOp read, scf::ForOp loop,
                                   SmallVectorImpl<Condition> &conditions) {
  auto fromInside = [&](ValueRange bounds) {
    return llvm::any_of(bounds, [&](Value bound) {
      return loop->isAncestor(bound.getParentRegion()->getParentOp());
    });
  };
  for (Operation *child = read, *parent = read->getParentOp(); parent != loop;
       child = parent, parent = parent->getParentOp()) {
    if (auto branch = dyn_cast<scf::IfOp>(parent)) {
      conditions.push_back(
          {branch.getCondition(),
           child->getParentRegion() == &branch.getElseRegion()});
    } else if (auto inner = dyn_cast<scf::ForOp>(parent)) {
      if (fromInside(
              {inner.getLowerBound(), inner.getUpperBound(), inner.getStep()}))
        return failure();
    } else if (auto forall = dyn_cast<scf::ForallOp>(parent)) {
      if (fromInside(forall.getDynamicLowerBound()) ||
          fromInside(forall.getDynamicUpperBound()) ||
          fromInside(forall.getDynamicStep()))
        return failure();
    } else {
      return failure();
    }
  }
  return success();
}

/// The operations inside `loop` that `roots` are computed by, in program
/// order; or nullopt where one of them is not pure or has regions
/// (recomputing it for the next step would not be the same computation).
static std::optional<SetVector<Operation *>>
getSliceInLoop(ArrayRef<Value> roots, scf::ForOp loop) {
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  options.omitUsesFromAbove = false;
  options.filter = [&](Operation *op) { return loop->isAncestor(op); };
  SetVector<Operation *> slice;
  for (Value root : roots)
    if (Operation *def = root.getDefiningOp())
      if (options.filter(def) && failed(getBackwardSlice(def, &slice, options)))
        return std::nullopt;
  for (Operation *op : slice)
    if (!isPure(op) || op->getNumRegions() != 0)
      return std::nullopt;
  return mlir::topologicalSort(slice);
}

/// True if `read` or an operation of `slices` has an operand `matches`
/// accepts.
static bool usesAny(vector::TransferReadOp read,
                    ArrayRef<const SetVector<Operation *> *> slices,
                    function_ref<bool(Value)> matches) {
  auto uses = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), matches);
  };
  return uses(read) || llvm::any_of(slices, [&](auto *slice) {
           return llvm::any_of(*slice, uses);
         });
}

/// Adds the prefetch of `read`'s next-step address after it, or nothing
/// where that address cannot be recomputed or does not change with `loop`.
static void prefetchNextStep(OpBuilder &b, vector::TransferReadOp read,
                             scf::ForOp loop) {
  // A masked read may start past its extents with every lane off; an
  // unsigned loop's `k + step < ub` would be the wrong comparison.
  if (read.getMask() || loop.getUnsignedCmp())
    return;
  SmallVector<Condition> conditions;
  if (failed(getConditions(read, loop, conditions)))
    return;
  SmallVector<Value> conditionRoots;
  for (Condition condition : conditions)
    conditionRoots.push_back(condition.value);
  std::optional<SetVector<Operation *>> conditionSlice =
      getSliceInLoop(conditionRoots, loop);
  if (!conditionSlice)
    return;
  SmallVector<Value> addressRoots(read->getOperands());
  std::optional<SetVector<Operation *>> addressSlice =
      getSliceInLoop(addressRoots, loop);
  if (!addressSlice)
    return;
  // The address must change with the step, and the loop must carry nothing
  // it uses from step to step (an iteration argument): only the induction
  // variable is known at the next step.
  Value iv = loop.getInductionVar();
  if (!usesAny(read, {&*addressSlice}, [&](Value v) { return v == iv; }) ||
      usesAny(read, {&*conditionSlice, &*addressSlice}, [&](Value v) {
        return llvm::is_contained(loop.getRegionIterArgs(), v);
      }))
    return;

  Location loc = read.getLoc();
  b.setInsertionPointAfter(read);
  Value next =
      arith::AddIOp::create(b, loc, loop.getInductionVar(), loop.getStep());
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next,
                                     loop.getUpperBound());
  auto guard = scf::IfOp::create(b, loc, more, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), next);
  // The read runs at the next step only where its conditions hold there (a
  // pipelined copy's `step + stages - 1 < K`): the views are recomputed only
  // then.
  for (Operation *op : *conditionSlice)
    b.clone(*op, mapping);
  Value runs;
  for (Condition condition : conditions) {
    Value holds = mapping.lookupOrDefault(condition.value);
    if (condition.negated)
      holds = arith::XOrIOp::create(b, loc, holds,
                                    arith::ConstantIntOp::create(b, loc, 1, 1));
    runs = runs ? arith::AndIOp::create(b, loc, runs, holds) : holds;
  }
  if (runs) {
    auto check = scf::IfOp::create(b, loc, runs, /*withElseRegion=*/false);
    b.setInsertionPointToStart(check.thenBlock());
  }
  for (Operation *op : *addressSlice)
    if (!conditionSlice->contains(op))
      b.clone(*op, mapping);
  // A chunk past the operand's extents (rows past M in a block's last tile)
  // reads padding, not memory: no prefetch either.
  Value base = mapping.lookupOrDefault(read.getBase());
  SmallVector<Value> indices;
  for (Value index : read.getIndices())
    indices.push_back(mapping.lookupOrDefault(index));
  Value inside;
  for (auto [i, result] :
       llvm::enumerate(read.getPermutationMap().getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || read.isDimInBounds(i))
      continue;
    unsigned d = dim.getPosition();
    // A static tile's chunks start inside it (the copy's index bounds).
    auto type = cast<MemRefType>(base.getType());
    if (!type.isDynamicDim(d) &&
        dyncc::getBounds(read.getIndices()[d]).hi < type.getDimSize(d))
      continue;
    Value extent = memref::DimOp::create(b, loc, base, d);
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        indices[d], extent);
    inside = inside ? arith::AndIOp::create(b, loc, inside, below) : below;
  }
  if (inside) {
    auto check = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(check.thenBlock());
  }
  memref::PrefetchOp::create(b, loc, base, indices, /*isWrite=*/false,
                             /*localityHint=*/3, /*isDataCache=*/true);
}

/// The k-step loop around `copy`: the nearest enclosing `scf.for` that is
/// the nearest loop around a step's product (the contraction
/// dyncc-tile-and-fuse marks `dyncc.register_tile` or `dyncc.mma`, which
/// the copied tiles feed), or null. A loop inside the step (around the copy
/// alone) is not it, nor is a loop around the k-step loop (around a
/// pipelined prologue's copies): their next iterations are not the next
/// step's copies.
static scf::ForOp getKStepLoop(Operation *copy) {
  for (auto loop = copy->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    WalkResult found = loop.getBody()->walk([&](Operation *op) {
      return (op->hasAttr(dyncc::kRegisterTileAttrName) ||
              op->hasAttr(dyncc::kMmaAttrName)) &&
                     op->getParentOfType<scf::ForOp>() == loop
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (found.wasInterrupted())
      return loop;
  }
  return nullptr;
}

struct PrefetchKStepsPass
    : dyncc::impl::PrefetchKStepsPassBase<PrefetchKStepsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<vector::TransferReadOp, scf::ForOp>> reads;
    getOperation()->walk([&](Operation *op) {
      if (!dyncc::isChunkedCopy(op))
        return;
      scf::ForOp loop = getKStepLoop(op);
      if (!loop)
        return;
      op->walk([&](vector::TransferReadOp read) {
        if (isa<MemRefType>(read.getBase().getType()))
          reads.emplace_back(read, loop);
      });
    });
    OpBuilder b(&getContext());
    for (auto [read, loop] : reads)
      prefetchNextStep(b, read, loop);
  }
};

} // namespace
