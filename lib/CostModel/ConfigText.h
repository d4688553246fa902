//===- ConfigText.h - Tile config text, word by word -----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/CostModel: the words of a tile config's text (TileConfig::
// str, `block 1x64x64 warp 1x32x32 thread 1x4x8 k 32 mma 16x8x16 stages 3`
// or `block 1x4x32 thread 1x1x1 k 64 reduce warp`), which GEMM and row
// tiles are read back from. Plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_CONFIGTEXT_H
#define DYNCC_COSTMODEL_CONFIGTEXT_H

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dyncc::cost::detail {

struct ConfigWords {
  std::vector<int64_t> block, warp, thread, mma;
  /// `k N`: N. `k AxBxC` (a k-step per reduction loop): the largest, and
  /// the sizes in `kSteps`.
  int64_t kStep = 0;
  std::vector<int64_t> kSteps;
  int64_t stages = 0;
  int64_t splitK = 0;
  std::string reduce;
};

/// A positive decimal of at most 9 digits.
inline bool parseConfigNumber(const std::string &word, int64_t &out) {
  if (word.empty() || word.size() > 9 ||
      word.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoll(word);
  return true;
}

/// `AxBxC`, every size positive.
inline bool parseConfigSizes(const std::string &word,
                             std::vector<int64_t> &out) {
  out.clear();
  for (size_t at = 0; at <= word.size();) {
    size_t x = word.find('x', at);
    if (x == std::string::npos)
      x = word.size();
    int64_t v;
    if (!parseConfigNumber(word.substr(at, x - at), v) || v < 1)
      return false;
    out.push_back(v);
    at = x + 1;
  }
  return true;
}

/// `N` or `AxBxC`.
inline bool parseKStep(const std::string &word, ConfigWords &out) {
  out.kSteps.clear();
  if (word.find('x') == std::string::npos)
    return parseConfigNumber(word, out.kStep);
  if (!parseConfigSizes(word, out.kSteps))
    return false;
  out.kStep = *std::max_element(out.kSteps.begin(), out.kSteps.end());
  return true;
}

/// The key-value words of `text`; nullopt for an unknown key, a key with
/// no value, or a malformed value.
inline std::optional<ConfigWords> parseConfigWords(const std::string &text) {
  std::vector<std::string> words;
  for (size_t at = 0; at < text.size();) {
    size_t space = text.find(' ', at);
    if (space == std::string::npos)
      space = text.size();
    if (space > at)
      words.push_back(text.substr(at, space - at));
    at = space + 1;
  }
  if (words.size() % 2)
    return std::nullopt;
  ConfigWords out;
  for (size_t i = 0; i < words.size(); i += 2) {
    const std::string &key = words[i], &value = words[i + 1];
    bool ok = key == "block"     ? parseConfigSizes(value, out.block)
              : key == "warp"    ? parseConfigSizes(value, out.warp)
              : key == "thread"  ? parseConfigSizes(value, out.thread)
              : key == "mma"     ? parseConfigSizes(value, out.mma)
              : key == "k"       ? parseKStep(value, out)
              : key == "stages"  ? parseConfigNumber(value, out.stages)
              : key == "split_k" ? parseConfigNumber(value, out.splitK)
              : key == "reduce"  ? (out.reduce = value, true)
                                 : false;
    if (!ok)
      return std::nullopt;
  }
  return out;
}

} // namespace dyncc::cost::detail

#endif // DYNCC_COSTMODEL_CONFIGTEXT_H
