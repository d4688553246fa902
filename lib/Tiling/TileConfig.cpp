//===- TileConfig.cpp - Tile configurations as data -----------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/TileConfig.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dyncc;

StringRef dyncc::stringify(RowReduction reduction) {
  switch (reduction) {
  case RowReduction::Thread:
    return "thread";
  case RowReduction::Warp:
    return "warp";
  case RowReduction::Block:
    return "block";
  case RowReduction::Column:
    return "column";
  }
  llvm_unreachable("unknown row reduction strategy");
}

std::optional<RowReduction> dyncc::symbolizeRowReduction(StringRef name) {
  return llvm::StringSwitch<std::optional<RowReduction>>(name)
      .Case("thread", RowReduction::Thread)
      .Case("warp", RowReduction::Warp)
      .Case("block", RowReduction::Block)
      .Case("column", RowReduction::Column)
      .Default(std::nullopt);
}

TileConfig TileConfig::getDefault(StringRef kind, int64_t rank,
                                  bool tensorCore) {
  TileConfig config;
  if (kind == "gemm" && tensorCore && rank >= 2) {
    // 64x64 outputs per block in four 32x32 warp tiles, each 2x4 mma.sync
    // m16n8k16 instructions per 16 of K; 128 threads (4x8 outputs each for
    // the initialization and the epilogue). Per 32-wide k-step: 4 KB of A
    // and 4 KB of B, in three stages (two k-steps in flight while one
    // computes), and the 16 KB f32 accumulator: 40 KB of shared memory.
    for (int64_t i = 0; i + 2 < rank; ++i) {
      config.blockTile.push_back(1);
      config.warpTile.push_back(1);
      config.threadTile.push_back(1);
    }
    config.blockTile.append({64, 64});
    config.warpTile.append({32, 32});
    config.threadTile.append({4, 8});
    config.kStep = 32;
    config.mma = {16, 8, 16};
    config.stages = 3;
    return config;
  }
  if (kind == "conv") {
    // For an NCHW output, channels x rows x columns: 8x4x32 outputs per
    // block, 2x1x4 per thread (4x4x8 = 128 threads), so a block's input
    // window and weights are shared by 8 channels and 128 positions; per
    // 16-channel k-step a 3x3 window is 17.7 KB of f32 in shared memory, a
    // 7x7 stride-2 stem's 15.5 KB. Like every default, sizes align to the
    // innermost dimensions (a 1-D conv's [N, C, W] gets 8 on N).
    int64_t block[] = {8, 4, 32}, thread[] = {2, 1, 4};
    config.kStep = 16;
    for (int64_t i = 0; i + 3 < rank; ++i) {
      config.blockTile.push_back(1);
      config.threadTile.push_back(1);
    }
    for (int64_t i = std::max<int64_t>(0, 3 - rank); i < 3; ++i) {
      config.blockTile.push_back(block[i]);
      config.threadTile.push_back(thread[i]);
    }
    return config;
  }
  // Leading (batch-like) dimensions: one element per block.
  for (int64_t i = 0; i + 2 < rank; ++i) {
    config.blockTile.push_back(1);
    config.threadTile.push_back(1);
  }
  // Reductions walk 16 (GEMM, conv) or 64 (row reductions) elements per
  // step, which bounds every temporary fused into a step.
  config.kStep = kind == "gemm" ? 16 : 64;
  if (kind == "gemm") {
    // 32x64 outputs per block, 4x4 per thread: 8x16 = 128 threads.
    int64_t block[] = {32, 64}, thread[] = {4, 4};
    for (int64_t i = std::max<int64_t>(0, 2 - rank); i < 2; ++i) {
      config.blockTile.push_back(block[i]);
      config.threadTile.push_back(thread[i]);
    }
  } else if (kind == "reduce") {
    // A warp per row, 4 rows per block (128 threads): each lane takes one
    // element of the row in 32, so a warp's loads are 128 contiguous bytes.
    // Kernels whose reductions are not along rows (column reductions) keep
    // the tile levels with these tiles: 4x32 outputs, one per thread.
    int64_t block[] = {4, 32}, thread[] = {1, 1};
    for (int64_t i = std::max<int64_t>(0, 2 - rank); i < 2; ++i) {
      config.blockTile.push_back(block[i]);
      config.threadTile.push_back(thread[i]);
    }
    if (rank >= 1)
      config.reduction = RowReduction::Warp;
  } else {
    // Elementwise and the rest: 4x128 per block, 1x4 per thread: 128
    // threads, each touching a 16-byte vector of f32.
    int64_t block[] = {4, 128}, thread[] = {1, 4};
    for (int64_t i = std::max<int64_t>(0, 2 - rank); i < 2; ++i) {
      config.blockTile.push_back(block[i]);
      config.threadTile.push_back(thread[i]);
    }
  }
  return config;
}

SmallVector<int64_t, 4> TileConfig::getThreadsPerDim() const {
  SmallVector<int64_t, 4> threads;
  for (auto [b, t] : llvm::zip(blockTile, threadTile))
    threads.push_back(b / t);
  return threads;
}

SmallVector<int64_t, 3> TileConfig::getKSteps(size_t numReductions) const {
  if (kSteps.size() == numReductions)
    return kSteps;
  return SmallVector<int64_t, 3>(numReductions, kStep);
}

std::array<int64_t, 3> TileConfig::getBlockDims() const {
  SmallVector<int64_t, 4> threads = getThreadsPerDim();
  std::array<int64_t, 3> dims = {1, 1, 1};
  for (size_t axis = 0; axis < 3 && axis < threads.size(); ++axis)
    dims[axis] = threads[threads.size() - 1 - axis];
  return dims;
}

std::string TileConfig::verify() const {
  if (blockTile.size() != threadTile.size())
    return "block tile has " + std::to_string(blockTile.size()) +
           " sizes but thread tile has " + std::to_string(threadTile.size());
  int64_t threads = 1;
  for (auto [i, b, t] : llvm::enumerate(blockTile, threadTile)) {
    if (b <= 0 || t <= 0)
      return "tile sizes must be positive, dimension " + std::to_string(i) +
             " has block " + std::to_string(b) + " thread " + std::to_string(t);
    if (b % t != 0)
      return "thread tile " + std::to_string(t) +
             " does not divide block tile " + std::to_string(b) +
             " in dimension " + std::to_string(i);
    threads *= b / t;
  }
  if (kStep < 0)
    return "k-step must not be negative, got " + std::to_string(kStep);
  if (!kSteps.empty()) {
    if (llvm::any_of(kSteps, [](int64_t k) { return k <= 0; }))
      return "per-loop k-steps must be positive";
    if (kStep != *llvm::max_element(kSteps))
      return "k-step " + std::to_string(kStep) +
             " is not the largest of the per-loop k-steps";
    if (!mma.empty() || splitK != 1 || reduction != RowReduction::Thread)
      return "per-loop k-steps are for SIMT products (no mma, split_k or "
             "reduce)";
  }
  if (threads > 1024)
    return std::to_string(threads) + " threads per block exceed 1024";
  if (!warpTile.empty()) {
    if (warpTile.size() != blockTile.size())
      return "warp tile has " + std::to_string(warpTile.size()) +
             " sizes but block tile has " + std::to_string(blockTile.size());
    int64_t warps = 1;
    for (auto [i, b, w] : llvm::enumerate(blockTile, warpTile)) {
      if (w <= 0 || b % w != 0)
        return "warp tile " + std::to_string(w) +
               " does not divide block tile " + std::to_string(b) +
               " in dimension " + std::to_string(i);
      warps *= b / w;
    }
    if (32 * warps != threads)
      return std::to_string(warps) + " warps need " +
             std::to_string(32 * warps) + " threads, the thread tile gives " +
             std::to_string(threads);
  }
  if (!mma.empty()) {
    if (mma != llvm::ArrayRef<int64_t>{16, 8, 16})
      return "unsupported instruction tile (only mma 16x8x16)";
    size_t rank = warpTile.size();
    if (rank < 2)
      return "an instruction tile needs a warp tile of rank 2 or more";
    for (size_t i = 0; i + 2 < rank; ++i)
      if (warpTile[i] != 1)
        return "warp tile must be 1 outside its last two dimensions with an "
               "instruction tile";
    if (warpTile[rank - 2] % mma[0] != 0 || warpTile[rank - 1] % mma[1] != 0)
      return "warp tile is not a multiple of the instruction tile";
    if (kStep <= 0 || kStep % mma[2] != 0)
      return "k-step " + std::to_string(kStep) +
             " is not a multiple of the instruction's K " +
             std::to_string(mma[2]);
  }
  if (stages < 1 || stages > 8)
    return "stages must be 1 to 8, got " + std::to_string(stages);
  // Tensor cores and SIMT register tiles pipeline their k-steps' copies
  // (dyncc-pipeline-k-steps); a product with no k-steps has none.
  if (stages > 1 && kStep <= 0)
    return "a pipeline of " + std::to_string(stages) +
           " stages needs a k-step";
  if (splitK < 1 || splitK > 64)
    return "split_k must be 1 to 64, got " + std::to_string(splitK);
  if (splitK > 1 && (kStep <= 0 || reduction != RowReduction::Thread))
    return "split_k " + std::to_string(splitK) +
           " needs a k-step (a GEMM's tiles)";
  if (reduction != RowReduction::Thread) {
    if (!warpTile.empty() || !mma.empty())
      return "a row reduction strategy takes no warp or instruction tile";
    SmallVector<int64_t, 4> perDim = getThreadsPerDim();
    int64_t lanes = perDim.empty() ? 1 : perDim.back();
    for (size_t i = 0; i + 1 < threadTile.size(); ++i)
      if (threadTile[i] != 1)
        return "a row reduction strategy takes one row per thread (thread "
               "tile 1 but along the row), dimension " +
               std::to_string(i) + " has " + std::to_string(threadTile[i]);
    if (llvm::count_if(ArrayRef(blockTile).drop_back(),
                       [](int64_t b) { return b > 1; }) > 2)
      return "'reduce warp' maps rows to y and z: more than one row per "
             "block along at most two dimensions";
    if (reduction == RowReduction::Warp && lanes != 32)
      return "'reduce warp' needs 32 threads along the row (the innermost "
             "block tile over the thread tile), got " +
             std::to_string(lanes);
    if (reduction == RowReduction::Column) {
      if (lanes < 2 || lanes > 1024 || !llvm::isPowerOf2_64(lanes) ||
          threadTile.back() != 1)
        return "'reduce column' needs 2 to 1024 threads along the column, a "
               "power of two, of one element each (thread tile 1), got " +
               std::to_string(lanes) + " of " +
               std::to_string(threadTile.back());
      if (lanes > 32 && threads != lanes)
        return "'reduce column' with more lanes than a warp takes one "
               "output per block (every block tile size but the lanes a "
               "single thread)";
    }
    if (reduction == RowReduction::Block) {
      if (lanes % 32 != 0)
        return "'reduce block' needs a multiple of 32 threads along the row, "
               "got " +
               std::to_string(lanes);
      if (threads != lanes)
        return "'reduce block' takes one row per block (every block tile "
               "size but the innermost a single thread)";
    }
  }
  return "";
}

DictionaryAttr TileConfig::toAttr(MLIRContext *context) const {
  Builder b(context);
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("block", b.getDenseI64ArrayAttr(blockTile)),
      b.getNamedAttr("thread", b.getDenseI64ArrayAttr(threadTile)),
      b.getNamedAttr("k_step", b.getI64IntegerAttr(kStep))};
  if (!kSteps.empty())
    entries.push_back(
        b.getNamedAttr("k_steps", b.getDenseI64ArrayAttr(kSteps)));
  if (!warpTile.empty())
    entries.push_back(b.getNamedAttr("warp", b.getDenseI64ArrayAttr(warpTile)));
  if (!mma.empty())
    entries.push_back(b.getNamedAttr("mma", b.getDenseI64ArrayAttr(mma)));
  if (stages != 1)
    entries.push_back(b.getNamedAttr("stages", b.getI64IntegerAttr(stages)));
  if (reduction != RowReduction::Thread)
    entries.push_back(
        b.getNamedAttr("reduce", b.getStringAttr(stringify(reduction))));
  if (splitK != 1)
    entries.push_back(b.getNamedAttr("split_k", b.getI64IntegerAttr(splitK)));
  return b.getDictionaryAttr(entries);
}

FailureOr<TileConfig> TileConfig::fromAttr(DictionaryAttr attr) {
  if (!attr)
    return failure();
  auto block = attr.getAs<DenseI64ArrayAttr>("block");
  auto thread = attr.getAs<DenseI64ArrayAttr>("thread");
  if (!block || !thread)
    return failure();
  TileConfig config;
  config.blockTile.assign(block.asArrayRef().begin(), block.asArrayRef().end());
  config.threadTile.assign(thread.asArrayRef().begin(),
                           thread.asArrayRef().end());
  if (auto k = attr.getAs<IntegerAttr>("k_step"))
    config.kStep = k.getInt();
  if (auto steps = attr.getAs<DenseI64ArrayAttr>("k_steps"))
    config.kSteps.assign(steps.asArrayRef().begin(), steps.asArrayRef().end());
  if (auto warp = attr.getAs<DenseI64ArrayAttr>("warp"))
    config.warpTile.assign(warp.asArrayRef().begin(), warp.asArrayRef().end());
  if (auto mma = attr.getAs<DenseI64ArrayAttr>("mma"))
    config.mma.assign(mma.asArrayRef().begin(), mma.asArrayRef().end());
  if (auto stages = attr.getAs<IntegerAttr>("stages"))
    config.stages = stages.getInt();
  if (auto split = attr.getAs<IntegerAttr>("split_k"))
    config.splitK = split.getInt();
  if (Attribute reduce = attr.get("reduce")) {
    auto name = dyn_cast<StringAttr>(reduce);
    std::optional<RowReduction> reduction =
        name ? symbolizeRowReduction(name.getValue()) : std::nullopt;
    if (!reduction)
      return failure();
    config.reduction = *reduction;
  }
  if (!config.verify().empty())
    return failure();
  return config;
}

std::string TileConfig::str() const {
  auto join = [](ArrayRef<int64_t> sizes) {
    std::string s;
    for (auto [i, v] : llvm::enumerate(sizes))
      s += (i ? "x" : "") + std::to_string(v);
    return s;
  };
  std::string s = "block " + join(blockTile);
  if (!warpTile.empty())
    s += " warp " + join(warpTile);
  s += " thread " + join(threadTile) + " k " +
       (kSteps.empty() ? std::to_string(kStep) : join(kSteps));
  if (!mma.empty())
    s += " mma " + join(mma);
  if (stages != 1)
    s += " stages " + std::to_string(stages);
  if (reduction != RowReduction::Thread)
    s += " reduce " + stringify(reduction).str();
  if (splitK != 1)
    s += " split_k " + std::to_string(splitK);
  return s;
}

std::optional<TileConfig> TileConfig::parse(StringRef text,
                                            std::string &error) {
  SmallVector<StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  auto parseSizes = [&](StringRef word, SmallVectorImpl<int64_t> &sizes) {
    SmallVector<StringRef> parts;
    word.split(parts, 'x');
    for (StringRef part : parts) {
      int64_t v;
      if (part.getAsInteger(10, v))
        return false;
      sizes.push_back(v);
    }
    return true;
  };
  TileConfig config;
  bool sawBlock = false, sawThread = false, sawWarp = false, sawMma = false,
       sawStages = false, sawReduce = false, sawSplit = false;
  for (size_t i = 0; i < words.size(); i += 2) {
    if (i + 1 == words.size()) {
      error = "'" + words[i].str() + "' has no value";
      return std::nullopt;
    }
    StringRef key = words[i], value = words[i + 1];
    bool ok;
    if (key == "block" && !sawBlock) {
      ok = sawBlock = parseSizes(value, config.blockTile);
    } else if (key == "thread" && !sawThread) {
      ok = sawThread = parseSizes(value, config.threadTile);
    } else if (key == "warp" && !sawWarp) {
      ok = sawWarp = parseSizes(value, config.warpTile);
    } else if (key == "mma" && !sawMma) {
      ok = sawMma = parseSizes(value, config.mma);
    } else if (key == "stages" && !sawStages) {
      ok = sawStages = !value.getAsInteger(10, config.stages);
    } else if (key == "reduce" && !sawReduce) {
      std::optional<RowReduction> reduction = symbolizeRowReduction(value);
      if (!reduction) {
        error = "unknown row reduction strategy '" + value.str() +
                "' (expected thread, warp or block)";
        return std::nullopt;
      }
      config.reduction = *reduction;
      ok = sawReduce = true;
    } else if (key == "split_k" && !sawSplit) {
      ok = sawSplit = !value.getAsInteger(10, config.splitK);
    } else if (key == "k" && value.contains('x')) {
      config.kSteps.clear();
      ok = parseSizes(value, config.kSteps) && !config.kSteps.empty();
      if (ok)
        config.kStep = *llvm::max_element(config.kSteps);
    } else if (key == "k") {
      config.kSteps.clear();
      ok = !value.getAsInteger(10, config.kStep);
    } else {
      error = "unexpected '" + key.str() +
              "' (expected 'block AxB [warp AxB] thread CxD [k N|AxBxC] "
              "[mma MxNxK] [stages N] [reduce thread|warp|block|column] "
              "[split_k N]')";
      return std::nullopt;
    }
    if (!ok) {
      error = "bad sizes '" + value.str() + "' after '" + key.str() + "'";
      return std::nullopt;
    }
  }
  if (!sawBlock || !sawThread) {
    error = "'" + text.str() + "' needs both 'block' and 'thread' sizes";
    return std::nullopt;
  }
  error = config.verify();
  if (!error.empty())
    return std::nullopt;
  return config;
}

TileConfig TileConfig::fitToRank(int64_t rank) const {
  TileConfig config = *this;
  // A column split has a size beyond the outputs': its lanes.
  if (reduction == RowReduction::Column)
    ++rank;
  int64_t have = blockTile.size();
  if (have > rank) {
    config.blockTile.erase(config.blockTile.begin(),
                           config.blockTile.begin() + (have - rank));
    config.threadTile.erase(config.threadTile.begin(),
                            config.threadTile.begin() + (have - rank));
    if (!config.warpTile.empty())
      config.warpTile.erase(config.warpTile.begin(),
                            config.warpTile.begin() + (have - rank));
  } else {
    config.blockTile.insert(config.blockTile.begin(), rank - have, 1);
    config.threadTile.insert(config.threadTile.begin(), rank - have, 1);
    if (!config.warpTile.empty())
      config.warpTile.insert(config.warpTile.begin(), rank - have, 1);
  }
  return config;
}

std::string dyncc::getGridArgName(unsigned arg, std::optional<int64_t> dim) {
  std::string name = "__arg" + std::to_string(arg);
  if (dim)
    name += "_d" + std::to_string(*dim);
  return name;
}

bool dyncc::parseGridArgName(StringRef name, unsigned &arg,
                             std::optional<int64_t> &dim) {
  dim.reset();
  if (!name.consume_front("__arg") || name.consumeInteger(10, arg))
    return false;
  if (name.empty())
    return true;
  int64_t d;
  if (!name.consume_front("_d") || name.getAsInteger(10, d) || d < 0)
    return false;
  dim = d;
  return true;
}
