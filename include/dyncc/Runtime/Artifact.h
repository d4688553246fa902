//===- Artifact.h - The .dyncc artifact container ---------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A compiled model is one file: a 64-byte header, a table of named sections
// and the sections' bytes, each aligned to 64 bytes. See
// docs/ArtifactFormat.md for the byte layout. ArtifactWriter is shared by the
// compiler and the tests; ArtifactFile is the validating, memory-mapping
// reader of the run-time.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_ARTIFACT_H
#define DYNCC_RUNTIME_ARTIFACT_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dyncc::runtime {

/// The first eight bytes of every artifact.
inline constexpr char kArtifactMagic[8] = {'D', 'Y',  'N',  'C',
                                           'C', '\0', '\r', '\n'};
/// The format version this run-time writes. It also reads versions 1 and 2,
/// the same layout with other checksums: version 1's is FNV-1a 64, version
/// 2's XXH64 over all the bytes in one stream, version 3's XXH64 over 4 MiB
/// chunks (ChunkedXxh64), which a reader hashes on several threads.
inline constexpr uint32_t kArtifactFormatVersion = 3;
/// The oldest format version this run-time reads.
inline constexpr uint32_t kOldestArtifactFormatVersion = 1;
/// Size of the file header.
inline constexpr uint32_t kArtifactHeaderSize = 64;
/// Size of one section table entry.
inline constexpr uint32_t kSectionEntrySize = 64;
/// Alignment of section data (and of the section table) in the file.
inline constexpr uint32_t kSectionAlignment = 64;
/// Size of the NUL-padded name field of a section entry.
inline constexpr size_t kSectionNameField = 40;
/// Longest section name (the field always holds a terminating NUL).
inline constexpr size_t kMaxSectionNameLength = kSectionNameField - 1;
/// The name of the JSON manifest section.
inline constexpr std::string_view kManifestSectionName = "manifest";

/// FNV-1a 64-bit hash of `size` bytes, continuing from `hash`: format
/// version 1's checksum.
uint64_t fnv1a64(const void *data, size_t size,
                 uint64_t hash = 0xcbf29ce484222325ull);

/// XXH64, the xxHash specification's 64-bit hash, over bytes given in any
/// number of pieces: format version 2's checksum (with seed 0).
class Xxh64 {
public:
  explicit Xxh64(uint64_t seed = 0);
  /// Adds `size` bytes at `data`.
  void update(const void *data, size_t size);
  /// The hash of every byte added so far.
  uint64_t digest() const;
  /// The hash of `size` bytes at `data`, in one piece.
  static uint64_t hash(const void *data, size_t size, uint64_t seed = 0);

private:
  uint64_t lanes[4];
  uint64_t seed;
  uint64_t total = 0;
  /// The bytes of a 32-byte stripe not yet consumed.
  uint8_t pending[32];
  size_t pendingSize = 0;
};

/// Format version 3's checksum: the bytes cut into chunks of
/// kChecksumChunkBytes (the last may be shorter), each hashed with XXH64
/// (seed 0), and XXH64 (seed 0) of those hashes as 8-byte little-endian
/// words, in order. The chunks hash independently, so a reader verifies a
/// large artifact on several threads; a writer streams it.
class ChunkedXxh64 {
public:
  /// Adds `size` bytes at `data`.
  void update(const void *data, size_t size);
  /// The checksum of every byte added so far.
  uint64_t digest() const;
  /// The checksum of `size` bytes at `data`, its chunks hashed on up to
  /// `threads` threads (the caller's among them).
  static uint64_t hash(const void *data, size_t size, unsigned threads);

private:
  /// The hashes of the whole chunks added so far.
  Xxh64 chunkHashes;
  /// The chunk being added, and its bytes so far.
  Xxh64 chunk;
  uint64_t chunkFill = 0;
};

/// The chunk size of ChunkedXxh64.
inline constexpr uint64_t kChecksumChunkBytes = uint64_t(4) << 20;

/// The checksum of format `version` (1, 2 or 3) over `size` bytes. Version
/// 3's is hashed on up to `threads` threads (0: ThreadPool's default, at
/// most 8; memory bandwidth bounds it beyond).
uint64_t artifactChecksum(uint32_t version, const void *data, size_t size,
                          unsigned threads = 0);

/// Builds an artifact and writes it atomically.
class ArtifactWriter {
public:
  /// Adds a section holding a copy of `size` bytes at `data`. Names are
  /// checked by write/serialize (1 to 39 bytes, no NUL, unique, not
  /// "manifest").
  void addSection(std::string name, const void *data, size_t size);
  /// Adds a section taking ownership of `data`.
  void addSection(std::string name, std::string data);
  /// Sets the manifest (JSON text); it becomes the first section.
  void setManifest(std::string json);

  /// Serializes the artifact into `out`.
  bool serialize(std::string &out, std::string &error) const;

  /// Writes the artifact to `path`: to `path + ".tmp.XXXXXX"` first (mkstemp,
  /// same directory), fsync, then rename over `path`. On failure the
  /// temporary file is removed, `path` is untouched and `error` says why.
  bool write(const std::string &path, std::string &error) const;

private:
  struct Section {
    std::string name;
    std::string data;
  };

  /// Checks names and computes the layout: section offsets, file size.
  bool layout(std::vector<uint64_t> &offsets, uint64_t &fileSize,
              std::string &error) const;
  /// Streams the file body (everything after the header) to `sink`, then
  /// the header with the final checksum to `writeHeader`.
  template <typename Sink, typename HeaderSink>
  bool emit(Sink &&sink, HeaderSink &&writeHeader, std::string &error) const;

  std::vector<Section> sections;
  std::string manifest;
  bool hasManifest = false;
};

/// One entry of the section table, with a pointer to its bytes.
struct ArtifactSection {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t flags = 0;
  uint32_t alignment = 0;
  const uint8_t *data = nullptr;

  std::string_view bytes() const {
    return {reinterpret_cast<const char *>(data), static_cast<size_t>(size)};
  }
};

/// Why an artifact was rejected.
enum class ArtifactError : uint8_t { None, Io, Format, Version, Checksum };

/// A validated, read-only, memory-mapped artifact.
class ArtifactFile {
public:
  /// Opens and mmaps `path` and validates it. On failure returns null and
  /// sets `error` to one line "PATH: what is wrong" (and `kind`, if given).
  static std::unique_ptr<ArtifactFile> open(const std::string &path,
                                            std::string &error,
                                            ArtifactError *kind = nullptr);

  /// Validates a copy of `size` bytes at `data`; `name` stands for the file
  /// name in messages. The copy is 64-byte aligned.
  static std::unique_ptr<ArtifactFile>
  openMemory(const void *data, size_t size, const std::string &name,
             std::string &error, ArtifactError *kind = nullptr);

  ~ArtifactFile();
  ArtifactFile(const ArtifactFile &) = delete;
  ArtifactFile &operator=(const ArtifactFile &) = delete;

  /// The path (or name) given to open.
  const std::string &name() const { return fileName; }
  /// The whole file.
  const uint8_t *data() const { return base; }
  uint64_t size() const { return fileSize; }
  /// The sections in table order.
  const std::vector<ArtifactSection> &sections() const { return table; }
  /// The section named `name`, or null.
  const ArtifactSection *findSection(std::string_view name) const;
  /// The manifest's JSON text.
  std::string_view manifest() const;

private:
  ArtifactFile() = default;
  bool validate(std::string &error, ArtifactError &kind);

  std::string fileName;
  const uint8_t *base = nullptr;
  uint64_t fileSize = 0;
  /// mmap length, or 0 when `base` is a heap copy.
  size_t mappedLength = 0;
  void *ownedCopy = nullptr;
  std::vector<ArtifactSection> table;
  size_t manifestIndex = 0;
};

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_ARTIFACT_H
