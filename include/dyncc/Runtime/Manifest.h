//===- Manifest.h - The artifact manifest -----------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The `manifest` section of an artifact is JSON describing the model's
// symbols, inputs, outputs, buffers, kernels, variant groups and the step
// list (schema in docs/ArtifactFormat.md). parseManifest turns it into these
// structures, with every expression compiled and every cross reference
// (buffer ids, kernel and group indices, symbol names) resolved to an index,
// so that the executor never has to look anything up by name.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_MANIFEST_H
#define DYNCC_RUNTIME_MANIFEST_H

#include "dyncc/CostModel/Partition.h"
#include "dyncc/Runtime/DType.h"
#include "dyncc/Runtime/KernelResources.h"
#include "dyncc/Runtime/ShapeExpr.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dyncc::runtime {

class ArtifactFile;

/// The manifest format version this run-time reads.
inline constexpr int64_t kManifestFormatVersion = 2;

/// `readyAfter` of what the input shapes alone determine.
inline constexpr size_t kAtBinding = SIZE_MAX;

/// A shape symbol (a dynamic dimension) and its admissible values.
struct SymbolInfo {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
  /// Every value must be a multiple of this (1: no constraint).
  int64_t divisor = 1;
  /// The first input dimension that is this bare symbol: it binds it.
  size_t bindingInput = 0;
  size_t bindingDim = 0;
  /// A data-dependent symbol: the bind step that binds it (kAtBinding:
  /// an input dimension does).
  size_t bindingStep = kAtBinding;
};

/// An equality `lhs == rhs` checked once the symbols are bound.
struct ConstraintInfo {
  ShapeExpr lhs;
  ShapeExpr rhs;
  std::string where;
  /// The bind step after which its symbols are all bound (kAtBinding: the
  /// inputs bind them all).
  size_t readyAfter = kAtBinding;
};

enum class BufferKind : uint8_t { Input, Output, Weight, Temp };

/// "input", "output", "weight" or "temp".
const char *bufferKindName(BufferKind kind);

struct BufferInfo {
  int64_t id = 0;
  BufferKind kind = BufferKind::Temp;
  DType dtype = DType::F32;
  std::vector<ShapeExpr> shape;
  /// Weights: the section holding the data.
  std::string section;
  /// Temps: the first and last step that use the buffer (indices into
  /// Manifest::steps). The run-time places temps in its arena by these
  /// lifetimes once their sizes are known.
  size_t firstStep = 0;
  size_t lastStep = 0;
  /// A temp of kind "workspace" in the manifest: scratch for the kernels of
  /// some variants of the group its one step launches (split-K partial
  /// sums). It takes arena bytes only in runs where such a variant is
  /// chosen.
  bool workspace = false;
  /// A workspace: the group its step launches, and the kernels leading the
  /// variants of that group whose kernels take it; a run whose variant
  /// leads with another leaves it empty.
  size_t workspaceGroup = SIZE_MAX;
  std::vector<size_t> workspaceLeads;
  /// Inputs and outputs: the index in Manifest::inputs / outputs.
  size_t port = 0;
  /// The bind step after which its shape can be evaluated (kAtBinding: at
  /// the start of a run).
  size_t readyAfter = kAtBinding;
};

/// A model input or output.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<ShapeExpr> shape;
  /// Index into Manifest::buffers.
  size_t buffer = 0;
};

/// One entry of a kernel's `params`.
struct KernelParam {
  /// True: a buffer (memref descriptor); false: one int64 expression.
  bool isBuffer = true;
  /// Index into Manifest::buffers.
  size_t buffer = 0;
  ShapeExpr expr;
};

/// A kernel's code for one GPU architecture.
struct GpuCode {
  std::string arch;
  /// The PTX section.
  std::string section;
  std::string entry;
  /// The cubin section, where ptxas assembled one (else empty).
  std::string cubinSection;
  /// ptxas' report for the entry; meaningful when cubinSection is set.
  KernelResources resources;
};

struct KernelInfo {
  std::string name;
  std::vector<KernelParam> params;
  /// The `then` of the variants this kernel leads (the reader checks they
  /// agree): launched after it in the same step.
  std::vector<size_t> then;
  ShapeExpr grid[3];
  /// The GPU code takes its block from the linear id x + gridDim.x * (y +
  /// gridDim.y * z): a grid over 65535 blocks along y or z may be launched
  /// along x alone (`linear_grid`; artifacts before it index y and z).
  bool linearGrid = false;
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  bool hasCpu = false;
  std::string cpuSection;
  std::string cpuSymbol;
  std::vector<GpuCode> gpu;
  std::string config;
  /// The number of 8-byte slots of the flattened parameter list.
  size_t numSlots = 0;
};

/// A variant applies when every symbol lies in its [min, max].
struct VariantCondition {
  size_t symbol = 0;
  int64_t min = 0;
  int64_t max = 0;
};

struct VariantInfo {
  /// Index into Manifest::kernels.
  size_t kernel = 0;
  /// Kernels launched after `kernel`, in order, in the same step (`then`:
  /// a split-K variant's reduction).
  std::vector<size_t> then;
  std::vector<VariantCondition> when;

  /// Whether every condition holds at `symbols` (values by slot).
  bool holds(const int64_t *symbols) const {
    for (const VariantCondition &cond : when)
      if (symbols[cond.symbol] < cond.min || symbols[cond.symbol] > cond.max)
        return false;
    return true;
  }

  /// `kernel`, then `then`.
  std::vector<size_t> kernels() const {
    std::vector<size_t> all{kernel};
    all.insert(all.end(), then.begin(), then.end());
    return all;
  }
};

/// What a GEMM group computes, in terms of the symbols: batch x [M x K] x
/// [K x N] (the tile search's problem, which its variants are chosen by).
struct GemmProblemInfo {
  bool present = false;
  ShapeExpr batch, m, n, k;
  int64_t operandBytes = 0;
  int64_t outputBytes = 0;
  /// Products of the problem each block computes in turn (fused Q, K and V
  /// projections); 1 where the manifest has none.
  int64_t products = 1;
};

/// How a searched group picks its variant (the tile search's table,
/// docs/CostModel.md): the keys, expressions of the symbols (none for a
/// static problem, else M, or the batch and M, ...), and a decision table
/// with a level per key: the second's interval tables per interval of the
/// first, and so on. Plus what the search recorded, for `dyncc explain`.
struct VariantSelection {
  bool present = false;
  std::vector<ShapeExpr> keys;
  std::vector<std::string> keyTexts;
  /// A level per key (one for a static problem).
  cost::DecisionTable table;
  /// The device the search predicted for: a GPU's name, or `host-LEVEL`
  /// for the host's search of an artifact with no GPU target (the table
  /// is for that build of the host code at `hostThreads` pool threads).
  std::string device;
  int64_t hostThreads = 0;
  int64_t candidates = 0;
  int64_t considered = 0;
  int64_t cap = 0;
  double maxRegret = 0;
  double target = 0;
  /// [lo, hi] per key, as searched.
  std::vector<int64_t> keyRanges;
  /// Per key, the divisor of every value it takes (absent: 1).
  std::vector<int64_t> keyDivisors;
  /// "gemm" (or absent), "rows" or "conv": which model the search used.
  std::string model;
  /// The problem's dimensions (GEMM: batch, M, N, K; rows: batch, rows,
  /// length; conv: batch, out_c, out_h, out_w): the key each is (-1:
  /// none), and the value of those that are none.
  std::vector<int64_t> dimKeys;
  std::vector<int64_t> dimValues;
  /// Convs: input channels, filter rows and columns, strides and
  /// dilations (rows, columns).
  std::vector<int64_t> window;
  /// Row-wise groups: element bytes, bytes moved per element, whether the
  /// rows are reduced, and whether the kernel reads element by element.
  int64_t elementBytes = 0;
  int64_t bytesPerElement = 0;
  int64_t reduction = 0;
  int64_t scalarAccess = 0;
  /// A column reduction: the fourth dimension is the extent each output
  /// folds (cost::RowProblem::columnLength), not the planes.
  int64_t columns = 0;
  /// "ptxas" when the table was redone with ptxas' register counts.
  std::string registers;
  /// Variants dropped after ptxas (spills).
  int64_t dropped = 0;
  /// Why the group was not searched ("" when it was, or is not a GEMM).
  std::string reason;

  /// The variant at `symbols` (values by slot); false if a key cannot be
  /// evaluated.
  bool lookup(const int64_t *symbols, size_t &variant) const;
  /// The keys' values at `symbols` (0 past the keys); false if one cannot
  /// be evaluated.
  bool evaluateKeys(const int64_t *symbols,
                    int64_t (&values)[cost::DecisionTable::kMaxKeys]) const;
};

struct GroupInfo {
  std::string name;
  std::string kind;
  std::vector<VariantInfo> variants;
  /// GEMM groups: their problem (absent for other kinds, and for GEMMs
  /// whose problem the compiler could not express).
  GemmProblemInfo problem;
  /// Searched GEMM groups: the table that picks the variant.
  VariantSelection select;
  /// The symbols any condition or key reads, each once (the memoization key).
  std::vector<size_t> keySymbols;

  /// The variant the search's table picks at `symbols` where its
  /// conditions hold, else the first whose conditions hold (what a run
  /// selects without `dyncc tune`'s measurements); false where none holds.
  bool pick(const int64_t *symbols, size_t &variant) const;

  void addKeySymbol(size_t slot) {
    if (std::find(keySymbols.begin(), keySymbols.end(), slot) ==
        keySymbols.end())
      keySymbols.push_back(slot);
  }
};

struct StepInfo {
  enum class Op : uint8_t { Launch, Copy, Bind };
  Op op = Op::Launch;
  /// Launch: index into Manifest::groups.
  size_t group = 0;
  /// Copy: indices into Manifest::buffers. Bind: `src` is the buffer read.
  size_t src = 0;
  size_t dst = 0;
  /// Bind: one expression per element of `src`; per element, the symbol it
  /// binds, or kAtBinding where it is checked against its expression.
  std::vector<ShapeExpr> dims;
  std::vector<size_t> binds;
  /// Bind: the op whose sizes these are; 1 stands for a bound expression
  /// (broadcast).
  std::string where;
  bool broadcast = false;
  /// Bind of a Reshape's shape: its input's shape, by whose rules 0 copies
  /// an input dimension (unless allowzero) and -1 is inferred; whether the
  /// symbols of that shape are bound before the step.
  bool reshape = false;
  std::vector<ShapeExpr> reshapeOf;
  bool allowzero = false;
  bool reshapeReady = false;
};

/// A placement of the temps the compiler planned ahead (the manifest's
/// `arena`): the temps empty (zero bytes) where it was made, and the others
/// from the lowest offset up, each placed just above the temps before it
/// in `order` whose lifetimes meet its own. That makes each offset the
/// expression max(offset_j + size_j) over those temps, valid at any sizes
/// where the `empty` temps are empty; a run takes it where it reaches the
/// live-set peak (ArenaPlanner). Indices into Manifest::buffers.
struct ArenaPlanInfo {
  std::vector<size_t> empty;
  std::vector<size_t> order;
};

/// One build of the artifact's host code (docs/ArtifactFormat.md,
/// `host_code`): the section holding every kernel's CPU entry point,
/// compiled for instruction-set level `isa` (dyncc/Runtime/HostIsa.h).
struct HostCodeInfo {
  std::string isa;
  std::string section;
};

struct Manifest {
  int64_t format = kManifestFormatVersion;
  std::string producer;
  std::string model;
  std::vector<std::string> targets;
  std::vector<SymbolInfo> symbols;
  /// The symbol names, in slot order (what ShapeExpr::parse resolves to).
  std::vector<std::string> symbolNames;
  std::vector<ConstraintInfo> constraints;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<BufferInfo> buffers;
  std::vector<KernelInfo> kernels;
  std::vector<GroupInfo> groups;
  std::vector<StepInfo> steps;
  /// The host code's builds; empty in artifacts from
  /// before the host code had levels (one build, each kernel's
  /// `cpuSection`, for x86-64-v2).
  std::vector<HostCodeInfo> hostCode;
  /// Absent (`hasArena` false) in artifacts from before the compiler
  /// planned the arena, and where it had nothing to plan; the model plans it
  /// when it loads those.
  std::vector<ArenaPlanInfo> arena;
  /// Whether the manifest has an `arena`, even an empty one.
  bool hasArena = false;
};

/// Parses and validates manifest JSON. On failure returns false with `error`
/// set to one line "manifest: JSON.PATH: what is wrong"; `isVersionError` (if
/// given) tells an unsupported "format" apart from other errors.
bool parseManifest(std::string_view json, Manifest &out, std::string &error,
                   bool *isVersionError = nullptr);

/// Whether every symbol group `group` selects by is bound after step
/// `afterStep` (kAtBinding: by the inputs). A workspace whose group is not
/// yet selectable keeps its bytes.
bool isSelectable(const Manifest &manifest, size_t group, size_t afterStep);

/// Checks the manifest's references into the artifact: weight sections exist
/// and have the exact byte size of their (static) shape; CPU and GPU code
/// sections exist.
bool checkManifestSections(const Manifest &manifest, const ArtifactFile &file,
                           std::string &error);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_MANIFEST_H
