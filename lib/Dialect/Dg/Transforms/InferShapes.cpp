//===- InferShapes.cpp - Symbolic shape propagation -----------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Propagates symbolic shapes through each graph function with a worklist
// over the ops' shape functions until the constraint store learns nothing
// more, then rewrites every type with the resolved shapes and materializes
// the facts that remain as `sym.constraint` ops.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_INFERSHAPESPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// An op as messages and `defined_by` name it: `dg.reshape 'name'` (the
/// name from its location, when it has one).
static std::string describeOp(Operation *op) {
  std::string what = op->getName().getStringRef().str();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    what += " '" + loc.getName().getValue().str() + "'";
  return what;
}

/// A fresh data-dependent symbol: its name and what it measures.
struct FreshSymbol {
  std::string name;
  std::string what;
};

/// Shape state of one function: the symbolic shape of every tensor value
/// and the symbolic contents of small integer tensors.
class ShapePropagation {
public:
  ShapePropagation(ShapeConstraints &constraints,
                   std::vector<FreshSymbol> &fresh,
                   llvm::StringSet<> &usedNames)
      : constraints(constraints), fresh(fresh), usedNames(usedNames) {}

  /// The worklist algorithm (TSCompiler, Algorithm 1). Every op is queued
  /// once, in program order, so each runs after its operands. An op whose
  /// results change queues its users. Sibling inference (MatMul's K dims,
  /// broadcast partners, reshape volumes) teaches the constraint store facts
  /// about dimensions that ops earlier in the order already used: when a
  /// round learned anything, every op whose operands now resolve
  /// differently, or whose result needed fresh symbols (those are decisions
  /// the new facts may make exact), is queued again. A re-run result is
  /// required equal to the earlier one, so a fresh symbol that became
  /// computable is substituted away. The fixpoint is a round that learns
  /// nothing.
  LogicalResult run(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments()) {
      if (!isa<TensorType>(arg.getType()))
        continue;
      if (!isa<RankedTensorType>(arg.getType()))
        return func.emitOpError("argument ")
               << arg.getArgNumber() << " is unranked: " << arg.getType()
               << " (graph inputs need a rank)";
      std::optional<SmallVector<DimExpr>> shape =
          sym::getSymbolicShape(arg.getType());
      if (!shape)
        return func.emitOpError("argument ")
               << arg.getArgNumber()
               << " has a dynamic dimension with no symbol: "
               << arg.getType();
      shapes[arg] = SymShape(shape->begin(), shape->end());
    }
    dropBinds(func);
    SmallVector<Operation *> ops;
    DenseMap<Operation *, unsigned> order;
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      order[&op] = ops.size();
      ops.push_back(&op);
    }
    std::vector<OpState> states(ops.size());
    std::vector<bool> queued(ops.size(), true);
    for (unsigned rounds = 1;; ++rounds) {
      uint64_t generation = constraints.getGeneration();
      for (unsigned i = 0; i < ops.size(); ++i) {
        if (!queued[i])
          continue;
        queued[i] = false;
        FailureOr<bool> changed = infer(*ops[i], states[i]);
        if (failed(changed))
          return failure();
        if (!*changed)
          continue;
        // Users come later in the block: this round reaches them.
        for (Operation *user : ops[i]->getUsers())
          if (auto it = order.find(user); it != order.end())
            queued[it->second] = true;
      }
      if (constraints.getGeneration() == generation || rounds == kMaxRounds)
        break;
      bool any = false;
      for (unsigned i = 0; i < ops.size(); ++i) {
        if (!states[i].fresh.empty() || operandsChanged(*ops[i], states[i])) {
          queued[i] = true;
          any = true;
        }
      }
      if (!any)
        break;
    }
    for (auto [op, state] : llvm::zip(ops, states))
      if (state.dataBinding)
        dataBindings.push_back({op, *state.dataBinding});
    return success();
  }

  /// Rewrites every type of `func` with the final (fully substituted) shapes.
  void apply(func::FuncOp func) {
    auto retype = [&](Value value) {
      auto it = shapes.find(value);
      if (it == shapes.end())
        return;
      auto type = cast<TensorType>(value.getType());
      SymShape shape = constraints.resolve(it->second);
      auto ranked = RankedTensorType::get(
          SmallVector<int64_t>(shape.size(), ShapedType::kDynamic),
          type.getElementType());
      value.setType(sym::withSymbolicShape(ranked, shape));
    };
    for (BlockArgument arg : func.getArguments())
      retype(arg);
    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        retype(result);
    });
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    func.setType(FunctionType::get(func.getContext(),
                                   func.getBody().front().getArgumentTypes(),
                                   ret.getOperandTypes()));
    bindDataSizes();
    bindNonZeroCounts(func);
    bindRangeCounts(func);
    bindSliceLengths(func);
  }

private:
  /// What an op was last inferred from, and the fresh symbols it asked for
  /// (in order: a re-run asking again gets the same ones).
  struct OpState {
    bool inferred = false;
    SmallVector<SymShape> operandShapes;
    SmallVector<std::optional<SymValue>> operandValues;
    SmallVector<DimExpr> fresh;
    /// The operand whose data gives sizes, and its elements' symbols.
    std::optional<std::pair<unsigned, SymValue>> dataBinding;
  };
  static constexpr unsigned kMaxRounds = 16;

  void resolveOperands(Operation &op, SmallVectorImpl<SymShape> &operandShapes,
                       SmallVectorImpl<std::optional<SymValue>> &operandValues) {
    for (Value operand : op.getOperands()) {
      auto it = shapes.find(operand);
      operandShapes.push_back(it == shapes.end()
                                  ? SymShape()
                                  : constraints.resolve(it->second));
      auto v = values.find(operand);
      operandValues.push_back(v == values.end()
                                  ? std::nullopt
                                  : std::optional<SymValue>(
                                        constraints.resolve(v->second)));
    }
  }

  bool operandsChanged(Operation &op, const OpState &state) {
    SmallVector<SymShape> operandShapes;
    SmallVector<std::optional<SymValue>> operandValues;
    resolveOperands(op, operandShapes, operandValues);
    return operandShapes != state.operandShapes ||
           operandValues != state.operandValues;
  }

  /// Runs the shape function of `op` unless its operands resolve as they did
  /// last time; true when its results (shapes or contents) changed.
  FailureOr<bool> infer(Operation &op, OpState &state) {
    auto iface = dyn_cast<SymbolicShapeOpInterface>(op);
    if (!iface)
      return op.emitOpError("has no symbolic shape function");
    for (auto [i, operand] : llvm::enumerate(op.getOperands()))
      if (!shapes.count(operand))
        return op.emitOpError("operand #") << i << " has no known shape";
    SmallVector<SymShape> operandShapes;
    SmallVector<std::optional<SymValue>> operandValues;
    resolveOperands(op, operandShapes, operandValues);
    if (state.inferred && state.fresh.empty() &&
        operandShapes == state.operandShapes &&
        operandValues == state.operandValues)
      return false;
    unsigned freshUsed = 0;
    ShapeInferenceContext context{operandShapes, operandValues, constraints,
                                  [&](StringRef hint) {
                                    if (freshUsed < state.fresh.size())
                                      return state.fresh[freshUsed++];
                                    ++freshUsed;
                                    return state.fresh.emplace_back(
                                        makeFresh(op, hint));
                                  },
                                  {},
                                  {}};
    context.resultValues.resize(op.getNumResults());
    SmallVector<SymShape> resultShapes;
    if (failed(iface.inferSymbolicShapes(context, resultShapes)))
      return failure();
    if (resultShapes.size() != op.getNumResults())
      return op.emitOpError("shape function returned ")
             << resultShapes.size() << " shapes for " << op.getNumResults()
             << " results";
    bool changed = !state.inferred;
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      auto ranked = dyn_cast<RankedTensorType>(result.getType());
      if (ranked && ranked.getRank() != (int64_t)resultShapes[i].size())
        return op.emitOpError("result #")
               << i << " is declared with rank " << ranked.getRank()
               << " but its shape function gives rank "
               << resultShapes[i].size();
      if (state.inferred) {
        // Both are the shape of the same tensor: the new one refines.
        const SymShape &old = shapes[result];
        if (old.size() != resultShapes[i].size())
          return op.emitOpError("result #")
                 << i << " changed rank from " << old.size() << " to "
                 << resultShapes[i].size() << " when inferred again";
        for (auto [d, pair] : llvm::enumerate(llvm::zip(old, resultShapes[i])))
          if (failed(constraints.requireEqual(
                  std::get<0>(pair), std::get<1>(pair), &op,
                  "result #" + Twine(i) + " dimension " + Twine(d) +
                      " as inferred before and again")))
            return failure();
        changed |= constraints.resolve(old) !=
                   constraints.resolve(resultShapes[i]);
      }
      shapes[result] = resultShapes[i];
      if (context.resultValues[i]) {
        auto v = values.find(result);
        changed |= v == values.end() ||
                   constraints.resolve(v->second) !=
                       constraints.resolve(*context.resultValues[i]);
        values[result] = *context.resultValues[i];
      }
    }
    // A fresh symbol a re-run no longer asks for was required equal to what
    // replaced it above, so it is substituted away and not declared.
    state.fresh.truncate(freshUsed);
    state.dataBinding = std::move(context.dataBinding);
    state.inferred = true;
    state.operandShapes = std::move(operandShapes);
    state.operandValues = std::move(operandValues);
    return changed;
  }

  /// Drops the `sym.bind`s an earlier run made, with the counts computed
  /// only for them: propagation runs again with fresh symbols of its own,
  /// which it binds anew.
  static void dropBinds(func::FuncOp func) {
    SmallVector<Operation *> dead;
    for (auto bind :
         llvm::make_early_inc_range(func.getBody().front().getOps<sym::BindOp>())) {
      dead.push_back(bind.getValues().getDefiningOp());
      bind->erase();
    }
    // An op two erased ones read is queued twice: erased once.
    DenseSet<Operation *> erased;
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      if (!op || erased.contains(op) || !isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        dead.push_back(operand.getDefiningOp());
      erased.insert(op);
      op->erase();
    }
  }

  /// NonZero's count: the number of elements that are not zero, computed
  /// by ordinary ops (not, equal, cast, reduce_sum) right after the input,
  /// and bound from that count before the NonZero runs, whose result then
  /// has its exact size.
  void bindNonZeroCounts(func::FuncOp func) {
    SmallVector<NonZeroOp> ops;
    func.walk([&](NonZeroOp op) {
      if (!op.countsEveryElement())
        ops.push_back(op);
    });
    for (NonZeroOp op : ops) {
      Value input = op.getInput();
      auto inType = dyn_cast<RankedTensorType>(input.getType());
      auto resultType = dyn_cast<RankedTensorType>(op.getType());
      std::optional<SmallVector<DimExpr>> result =
          resultType ? sym::getSymbolicShape(resultType) : std::nullopt;
      if (!inType || !result || result->size() != 2)
        continue;
      OpBuilder builder(op);
      Location loc = op.getLoc();
      Type element = inType.getElementType();
      auto like = [&](Type elem) {
        return RankedTensorType::get(inType.getShape(), elem,
                                     inType.getEncoding());
      };
      Value zeros = filledConstant(builder, loc, {}, element, 0);
      Value isZero = EqualOp::create(builder, loc, like(builder.getI1Type()),
                                     input, zeros);
      Value nonzero =
          NotOp::create(builder, loc, like(builder.getI1Type()), isZero);
      Value ones = CastOp::create(builder, loc, like(builder.getI64Type()),
                                  nonzero);
      Value count = ReduceSumOp::create(
          builder, loc, RankedTensorType::get({}, builder.getI64Type()), ones,
          /*axes=*/nullptr, builder.getBoolAttr(false));
      Value values = UnsqueezeOp::create(
          builder, loc, RankedTensorType::get({1}, builder.getI64Type()),
          count, builder.getDenseI64ArrayAttr({0}));
      bindComputed(builder, loc, values, (*result)[1], op);
    }
  }

  /// A constant tensor of `shape` whose elements are all `value`.
  static Value filledConstant(OpBuilder &builder, Location loc,
                              ArrayRef<int64_t> shape, Type element,
                              double value) {
    auto type = RankedTensorType::get(shape, element);
    Attribute attr = isa<FloatType>(element)
                         ? Attribute(FloatAttr::get(element, value))
                         : Attribute(IntegerAttr::get(
                               element, static_cast<int64_t>(value)));
    return ConstantOp::create(
        builder, loc, type,
        cast<ElementsAttr>(DenseElementsAttr::get(type, attr)));
  }

  /// True where `dim` is a fresh (data-dependent) symbol.
  bool isFresh(const DimExpr &dim) const {
    std::optional<std::string> name = dim.getSymbol();
    return name && llvm::any_of(fresh, [&](const FreshSymbol &symbol) {
             return symbol.name == *name;
           });
  }

  /// Binds `symbol`, `op`'s size, to the one element of `values`, which
  /// ops just put before `op` compute.
  static void bindComputed(OpBuilder &builder, Location loc, Value values,
                           const DimExpr &symbol, Operation *op) {
    sym::BindOp::create(builder, loc, values,
                        sym::ShapeAttr::get(op->getContext(), {symbol}),
                        builder.getStringAttr(describeOp(op)),
                        /*reshape_of=*/sym::ShapeAttr(),
                        /*allowzero=*/false, /*broadcast=*/false);
  }

  /// A Range whose bounds are data: its length, max(ceil((limit - start) /
  /// delta), 0), computed by ordinary ops right before it and bound, so
  /// that the Range runs with its result at its exact size. Integers
  /// divide exactly (a truncating quotient, plus 1 where the remainder is
  /// not 0 and has delta's sign); floats truncate the quotient to an
  /// integer and add 1 where that is below it. A delta of 0 (ONNX leaves it
  /// undefined) counts as 1, so the count is never a division by zero.
  void bindRangeCounts(func::FuncOp func) {
    SmallVector<RangeOp> ops;
    func.walk([&](RangeOp op) { ops.push_back(op); });
    for (RangeOp op : ops) {
      auto resultType = dyn_cast<RankedTensorType>(op.getType());
      std::optional<SmallVector<DimExpr>> result =
          resultType ? sym::getSymbolicShape(resultType) : std::nullopt;
      if (!result || result->size() != 1 || !isFresh((*result)[0]))
        continue;
      OpBuilder builder(op);
      Location loc = op.getLoc();
      Type element = resultType.getElementType();
      auto scalarOf = [](Type type) { return RankedTensorType::get({}, type); };
      Type i1 = builder.getI1Type(), i64 = builder.getI64Type();
      Type t = scalarOf(element), b = scalarOf(i1), l = scalarOf(i64);
      Value zero = filledConstant(builder, loc, {}, element, 0);
      Value one = filledConstant(builder, loc, {}, element, 1);
      Value delta = op.getDelta();
      delta = SelectOp::create(builder, loc, t,
                              EqualOp::create(builder, loc, b, delta, zero),
                              one, delta);
      Value diff =
          SubOp::create(builder, loc, t, op.getLimit(), op.getStart());
      Value quotient = DivOp::create(builder, loc, t, diff, delta);
      Value truncated = element == i64
                            ? quotient
                            : CastOp::create(builder, loc, l, quotient);
      Value up;
      if (isa<FloatType>(element)) {
        Value back = CastOp::create(builder, loc, t, truncated);
        up = LessOp::create(builder, loc, b, back, quotient);
      } else {
        Value remainder = SubOp::create(
            builder, loc, t, diff,
            MulOp::create(builder, loc, t, quotient, delta));
        Value sameSign = EqualOp::create(
            builder, loc, b,
            GreaterOp::create(builder, loc, b, remainder, zero),
            GreaterOp::create(builder, loc, b, delta, zero));
        Value inexact = NotOp::create(
            builder, loc, b,
            EqualOp::create(builder, loc, b, remainder, zero));
        up = AndOp::create(builder, loc, b, sameSign, inexact);
      }
      Value count = AddOp::create(builder, loc, l, truncated,
                                  CastOp::create(builder, loc, l, up));
      count = MaxOp::create(builder, loc, l, count,
                            filledConstant(builder, loc, {}, i64, 0));
      Value values = UnsqueezeOp::create(
          builder, loc, RankedTensorType::get({1}, i64), count,
          builder.getDenseI64ArrayAttr({0}));
      bindComputed(builder, loc, values, (*result)[0], op);
    }
  }

  /// A Slice whose starts or ends are data: each sliced dimension's length
  /// is computed by ordinary ops right before it, with ONNX's clamping (a
  /// negative index counts from the end; then [0, D] for a positive step,
  /// [0, D - 1] for a start and [-1, D - 1] for an end with a negative one)
  /// and the constant step: max(ceil((end - start) / step), 0), and bound,
  /// so that the Slice runs with its result at its exact size.
  void bindSliceLengths(func::FuncOp func) {
    SmallVector<SliceOp> ops;
    func.walk([&](SliceOp op) { ops.push_back(op); });
    for (SliceOp op : ops) {
      auto resultType = dyn_cast<RankedTensorType>(op.getType());
      std::optional<SmallVector<DimExpr>> result =
          resultType ? sym::getSymbolicShape(resultType) : std::nullopt;
      auto startsType = dyn_cast<RankedTensorType>(op.getStarts().getType());
      if (!result || !startsType || !startsType.hasStaticShape() ||
          startsType.getRank() != 1)
        continue;
      int64_t rank = result->size(), count = startsType.getDimSize(0);
      // Axes and steps are constants (the shape function requires it):
      // their contents as propagated.
      auto constantsOf = [&](Value v) -> std::optional<SmallVector<int64_t>> {
        auto known = values.find(v);
        if (known == values.end())
          return std::nullopt;
        SmallVector<int64_t> out;
        for (const DimExpr &x : known->second) {
          std::optional<int64_t> c = x.getConstant();
          if (!c)
            return std::nullopt;
          out.push_back(*c);
        }
        return out;
      };
      SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
      SmallVector<int64_t> steps(count, 1);
      if (op.getAxes()) {
        std::optional<SmallVector<int64_t>> values = constantsOf(op.getAxes());
        if (!values || (int64_t)values->size() != count)
          continue;
        axes = *values;
      }
      if (op.getSteps()) {
        std::optional<SmallVector<int64_t>> values = constantsOf(op.getSteps());
        if (!values || (int64_t)values->size() != count)
          continue;
        steps = *values;
      }
      OpBuilder builder(op);
      Location loc = op.getLoc();
      Type i64 = builder.getI64Type();
      auto one = RankedTensorType::get({1}, i64);
      auto b1 = RankedTensorType::get({1}, builder.getI1Type());
      auto constant = [&](int64_t value) {
        return filledConstant(builder, loc, {1}, i64, value);
      };
      auto element = [&](Value values, int64_t i) -> Value {
        Value taken = GatherOp::create(
            builder, loc,
            RankedTensorType::get(
                {1}, cast<RankedTensorType>(values.getType()).getElementType()),
            values, constant(i), builder.getI64IntegerAttr(0));
        return cast<RankedTensorType>(taken.getType()).getElementType() == i64
                   ? taken
                   : CastOp::create(builder, loc, one, taken).getResult();
      };
      auto clamp = [&](Value v, Value lo, Value hi) -> Value {
        return MinOp::create(builder, loc, one,
                             MaxOp::create(builder, loc, one, v, lo), hi);
      };
      for (int64_t i = 0; i < count; ++i) {
        int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axis < 0 || axis >= rank || steps[i] == 0 ||
            !isFresh((*result)[axis]))
          continue;
        Value dim = ShapeOfOp::create(builder, loc, one, op.getInput(),
                                      builder.getI64IntegerAttr(axis),
                                      builder.getI64IntegerAttr(axis + 1));
        Value zero = constant(0);
        auto fromEnd = [&](Value index) -> Value {
          Value negative = LessOp::create(builder, loc, b1, index, zero);
          return SelectOp::create(builder, loc, one, negative,
                                  AddOp::create(builder, loc, one, index, dim),
                                  index);
        };
        Value start = fromEnd(element(op.getStarts(), i));
        Value end = fromEnd(element(op.getEnds(), i));
        Value span;
        if (steps[i] > 0) {
          start = clamp(start, zero, dim);
          end = clamp(end, zero, dim);
          span = SubOp::create(builder, loc, one, end, start);
        } else {
          Value last = SubOp::create(builder, loc, one, dim, constant(1));
          start = clamp(start, zero, last);
          end = clamp(end, constant(-1), last);
          span = SubOp::create(builder, loc, one, start, end);
        }
        // ceil(span / |step|) for span >= 0, and 0 below.
        int64_t by = std::abs(steps[i]);
        Value positive = MaxOp::create(builder, loc, one, span, zero);
        Value length =
            by == 1 ? positive
                    : Value(DivOp::create(
                          builder, loc, one,
                          AddOp::create(builder, loc, one, positive,
                                        constant(by - 1)),
                          constant(by)));
        bindComputed(builder, loc, length, (*result)[axis], op);
      }
    }
  }

  /// Sizes read from data: a `sym.bind` of the operand that gives them,
  /// right after the operand is computed (the earliest point), so that the
  /// run-time binds the symbols before any op whose type uses them.
  void bindDataSizes() {
    for (auto &[op, binding] : dataBindings) {
      Value values = op->getOperand(binding.first);
      // After the binds already there, so that binds keep program order.
      OpBuilder builder(op->getContext());
      Block *block = values.getParentBlock();
      Block::iterator at = block->begin();
      if (Operation *def = values.getDefiningOp())
        at = std::next(def->getIterator());
      while (at != block->end() && isa<sym::BindOp>(*at))
        ++at;
      builder.setInsertionPoint(block, at);
      std::string where = describeOp(op);
      auto dims =
          sym::ShapeAttr::get(op->getContext(),
                              constraints.resolve(binding.second));
      // A Reshape's values follow its rules over its input's shape.
      sym::ShapeAttr reshapeOf;
      auto reshape = dyn_cast<ReshapeOp>(op);
      if (reshape)
        if (auto input = shapes.find(reshape.getOperand(0));
            input != shapes.end())
          reshapeOf = sym::ShapeAttr::get(op->getContext(),
                                          constraints.resolve(input->second));
      sym::BindOp::create(builder, op->getLoc(), values, dims,
                          builder.getStringAttr(where), reshapeOf,
                          /*allowzero=*/reshape && reshape.getAllowzero(),
                          /*broadcast=*/isa<ExpandOp>(op));
    }
  }

  DimExpr makeFresh(Operation &op, StringRef hint) {
    std::string base = hint.str();
    std::string name;
    for (unsigned i = nextIndex[base];; ++i) {
      name = base + std::to_string(i);
      if (!usedNames.contains(name)) {
        nextIndex[base] = i + 1;
        break;
      }
    }
    usedNames.insert(name);
    fresh.push_back({name, describeOp(&op)});
    return DimExpr::symbol(name);
  }

  ShapeConstraints &constraints;
  std::vector<FreshSymbol> &fresh;
  llvm::StringSet<> &usedNames;
  /// The next index to try per fresh-symbol prefix (no rescans).
  std::map<std::string, unsigned> nextIndex;
  DenseMap<Value, SymShape> shapes;
  DenseMap<Value, SymValue> values;
  /// The ops whose sizes are read from an operand's data.
  SmallVector<std::pair<Operation *, std::pair<unsigned, SymValue>>>
      dataBindings;
};

struct InferShapes final : ::dyncc::dg::impl::InferShapesPassBase<InferShapes> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ShapeConstraints constraints;
    // The declared facts feed range and divisibility reasoning.
    declareSymbolFacts(module, constraints);
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr("dyncc.kernel"))
        funcs.push_back(func);

    // Analyse first, then mutate.
    std::vector<FreshSymbol> fresh;
    llvm::StringSet<> usedNames;
    for (auto symbol : module.getOps<sym::SymbolOp>())
      usedNames.insert(symbol.getSymName());
    SmallVector<std::unique_ptr<ShapePropagation>> states;
    for (func::FuncOp func : funcs) {
      states.push_back(
          std::make_unique<ShapePropagation>(constraints, fresh, usedNames));
      if (failed(states.back()->run(func)))
        return signalPassFailure();
    }
    if (failed(checkSymbols(module, constraints)))
      return signalPassFailure();
    for (auto [func, state] : llvm::zip(funcs, states))
      state->apply(func);

    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToStart(module.getBody());
    for (auto symbol : module.getOps<sym::SymbolOp>())
      builder.setInsertionPointAfter(symbol);
    // Data-dependent sizes: bound at run time by the op that defines them.
    for (const FreshSymbol &f : fresh) {
      if (constraints.getSubstitutions().count(f.name))
        continue; // Refined to an expression of other symbols.
      auto symbol = sym::SymbolOp::create(
          builder, module.getLoc(), builder.getStringAttr(f.name),
          builder.getI64IntegerAttr(0), builder.getI64IntegerAttr(INT32_MAX),
          IntegerAttr(), IntegerAttr(), builder.getUnitAttr());
      symbol->setAttr("defined_by", builder.getStringAttr(f.what));
    }
    // The store keeps deferred equalities substituted and simplified, but
    // not mapped through their own class (which would make them trivial).
    for (const DeferredEquality &eq : constraints.getDeferred())
      sym::ConstraintOp::create(
          builder, module.getLoc(), sym::ExprAttr::get(&getContext(), eq.lhs),
          sym::ExprAttr::get(&getContext(), eq.rhs),
          builder.getStringAttr(eq.reason));
  }

  /// Checks refinements against the declared symbol facts and drops the
  /// symbols that were substituted away, narrowing the survivors' ranges.
  LogicalResult checkSymbols(ModuleOp module,
                             const ShapeConstraints &constraints) {
    llvm::StringMap<sym::SymbolOp> symbols;
    for (auto symbol : module.getOps<sym::SymbolOp>())
      symbols[symbol.getSymName()] = symbol;
    SmallVector<sym::SymbolOp> dead;
    for (const auto &[name, value] : constraints.getSubstitutions()) {
      auto it = symbols.find(name);
      if (it == symbols.end())
        continue;
      sym::SymbolOp symbol = it->second;
      if (std::optional<int64_t> constant = value.getConstant()) {
        int64_t lo = symbol.getMin(), hi = symbol.getMax();
        if (*constant < lo || *constant > hi)
          return symbol.emitOpError("is required to equal ")
                 << *constant << ", outside its range [" << lo << ", " << hi
                 << "]";
        // Within a range the user gave: valid, but not what was asked.
        if (lo < hi && symbol->hasAttr(sym::getDimFlagAttrName()))
          symbol.emitWarning("--dim ")
              << name << "=" << lo << ":" << hi << ": the model fixes " << name
              << " to " << *constant
              << ", so the artifact takes only that value";
      } else if (std::optional<std::string> other = value.getSymbol()) {
        auto otherIt = symbols.find(*other);
        if (otherIt != symbols.end()) {
          sym::SymbolOp survivor = otherIt->second;
          int64_t lo = std::max<int64_t>(symbol.getMin(), survivor.getMin());
          int64_t hi = std::min<int64_t>(symbol.getMax(), survivor.getMax());
          if (lo > hi)
            return survivor.emitOpError("is required to equal @")
                   << name << " but their ranges do not intersect";
          survivor.setMin(lo);
          survivor.setMax(hi);
        }
      }
      dead.push_back(symbol);
    }
    for (sym::SymbolOp symbol : dead)
      symbol.erase();
    return success();
  }
};

} // namespace
