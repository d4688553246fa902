//===- ArtifactTest.cpp - Tests of the artifact container -------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "dyncc/Runtime/Artifact.h"

#include "gtest/gtest.h"

#include <cstring>

#include <sys/stat.h>

using namespace dyncc::runtime;
using namespace dyncc::test;

namespace {

void storeU32(std::string &bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[offset + i] = static_cast<char>(value >> (8 * i));
}
void storeU64(std::string &bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    bytes[offset + i] = static_cast<char>(value >> (8 * i));
}
uint64_t loadU64(const std::string &bytes, size_t offset) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | static_cast<uint8_t>(bytes[offset + i]);
  return value;
}

/// Recomputes the checksum after a test edited the body (or the version).
void fixChecksum(std::string &bytes) {
  uint32_t version = static_cast<uint8_t>(bytes[8]);
  storeU64(bytes, 24,
           artifactChecksum(version, bytes.data() + 64, bytes.size() - 64));
}

/// A small artifact: manifest, w0 (1000 bytes), an empty section, w1.
std::string sampleArtifact() {
  ArtifactWriter writer;
  writer.setManifest("{\"hello\": 1}");
  std::string w0(1000, '\0');
  for (size_t i = 0; i < w0.size(); ++i)
    w0[i] = static_cast<char>(i * 7 + 1);
  writer.addSection("w0", w0.data(), w0.size());
  writer.addSection("empty", std::string());
  writer.addSection("w1", std::string(3, 'x'));
  std::string bytes, error;
  EXPECT_TRUE(writer.serialize(bytes, error)) << error;
  return bytes;
}

/// Offset of section entry `index` in sampleArtifact().
size_t entryOffset(size_t index) { return 64 + 64 * index; }

/// Expects openMemory to reject `bytes` with a message containing `message`.
void expectRejected(const std::string &bytes, const std::string &message,
                    ArtifactError expectedKind = ArtifactError::Format) {
  std::string error;
  ArtifactError kind = ArtifactError::None;
  auto file = ArtifactFile::openMemory(bytes.data(), bytes.size(),
                                       "model.dyncc", error, &kind);
  EXPECT_EQ(file, nullptr);
  EXPECT_EQ(error, "model.dyncc: " + message);
  EXPECT_EQ(kind, expectedKind);
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(ArtifactTest, RoundTripThroughFile) {
  TempDir dir;
  std::string path = dir.file("model.dyncc");
  ArtifactWriter writer;
  writer.setManifest("{\"model\": \"m\"}");
  std::string w0(4097, '\0');
  for (size_t i = 0; i < w0.size(); ++i)
    w0[i] = static_cast<char>(i % 251);
  writer.addSection("w0", w0.data(), w0.size());
  writer.addSection("cpu.so", std::string("\x7f"
                                          "ELF",
                                          4));
  writer.addSection(std::string(kMaxSectionNameLength, 'n'), std::string("z"));
  std::string error;
  ASSERT_TRUE(writer.write(path, error)) << error;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"model.dyncc"});

  std::string serialized;
  ASSERT_TRUE(writer.serialize(serialized, error)) << error;
  EXPECT_EQ(readFile(path), serialized);

  std::unique_ptr<ArtifactFile> file = ArtifactFile::open(path, error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->size(), serialized.size());
  EXPECT_EQ(file->manifest(), "{\"model\": \"m\"}");
  ASSERT_EQ(file->sections().size(), 4u);
  EXPECT_EQ(file->sections()[0].name, "manifest");
  const ArtifactSection *section = file->findSection("w0");
  ASSERT_NE(section, nullptr);
  EXPECT_EQ(section->bytes(), w0);
  EXPECT_EQ(section->offset % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(section->data) % 64, 0u);
  EXPECT_EQ(section->alignment, 64u);
  EXPECT_EQ(file->findSection("cpu.so")->bytes(), std::string("\x7f"
                                                              "ELF",
                                                              4));
  EXPECT_EQ(file->findSection(std::string(39, 'n'))->bytes(), "z");
  EXPECT_EQ(file->findSection("w1"), nullptr);
  // The header says what the file is.
  EXPECT_EQ(std::memcmp(serialized.data(), kArtifactMagic, 8), 0);
  EXPECT_EQ(loadU64(serialized, 16), serialized.size());
  EXPECT_EQ(serialized[8], 3);
  EXPECT_EQ(
      loadU64(serialized, 24),
      ChunkedXxh64::hash(serialized.data() + 64, serialized.size() - 64, 1));
}

TEST(ArtifactTest, OverwritesExistingFileAtomically) {
  TempDir dir;
  std::string path = dir.file("model.dyncc");
  writeFile(path, "old contents");
  ArtifactWriter writer;
  writer.setManifest("{}");
  std::string error;
  ASSERT_TRUE(writer.write(path, error)) << error;
  EXPECT_NE(readFile(path), "old contents");
  EXPECT_NE(ArtifactFile::open(path, error), nullptr) << error;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"model.dyncc"});
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(ArtifactTest, FailedWriteLeavesNoFile) {
  TempDir dir;
  ArtifactWriter writer;
  writer.setManifest("{}");
  std::string error;

  // A directory that does not exist.
  std::string missing = dir.file("no/such/dir/model.dyncc");
  EXPECT_FALSE(writer.write(missing, error));
  EXPECT_NE(error.find("cannot create a temporary file"), std::string::npos)
      << error;
  EXPECT_TRUE(dir.list().empty());

  // The target is a directory: the temporary file is written, the rename
  // fails, and the temporary file must be gone.
  std::string target = dir.file("target");
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  writeFile(target + "/keep", "x");
  EXPECT_FALSE(writer.write(target, error));
  EXPECT_NE(error.find("cannot rename"), std::string::npos) << error;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"target"});

  // Layout errors are reported before anything is created.
  ArtifactWriter bad;
  bad.setManifest("{}");
  bad.addSection("w0", std::string("a"));
  bad.addSection("w0", std::string("b"));
  EXPECT_FALSE(bad.write(dir.file("bad.dyncc"), error));
  EXPECT_EQ(error, dir.file("bad.dyncc") + ": duplicate section name 'w0'");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"target"});
}

TEST(ArtifactTest, WriterRejectsBadSections) {
  std::string bytes, error;
  ArtifactWriter noManifest;
  EXPECT_FALSE(noManifest.serialize(bytes, error));
  EXPECT_EQ(error, "no manifest was set");

  ArtifactWriter longName;
  longName.setManifest("{}");
  longName.addSection(std::string(40, 'a'), std::string());
  EXPECT_FALSE(longName.serialize(bytes, error));
  EXPECT_NE(error.find("is 40 bytes long, at most 39 are allowed"),
            std::string::npos)
      << error;

  ArtifactWriter reserved;
  reserved.setManifest("{}");
  reserved.addSection("manifest", std::string());
  EXPECT_FALSE(reserved.serialize(bytes, error));
  EXPECT_EQ(error, "section name 'manifest' is reserved for setManifest");

  ArtifactWriter empty;
  empty.setManifest("{}");
  empty.addSection("", std::string());
  EXPECT_FALSE(empty.serialize(bytes, error));

  ArtifactWriter nul;
  nul.setManifest("{}");
  nul.addSection(std::string("a\0b", 3), std::string());
  EXPECT_FALSE(nul.serialize(bytes, error));
  EXPECT_NE(error.find("contains a NUL byte"), std::string::npos);
}

TEST(ArtifactTest, AcceptsSample) {
  std::string bytes = sampleArtifact();
  std::string error;
  auto file = ArtifactFile::openMemory(bytes.data(), bytes.size(),
                                       "model.dyncc", error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->sections().size(), 4u);
  EXPECT_EQ(file->findSection("empty")->size, 0u);
  EXPECT_EQ(file->findSection("w1")->bytes(), "xxx");
}

TEST(ArtifactTest, RejectsBadMagic) {
  std::string bytes = sampleArtifact();
  bytes[0] = 'X';
  expectRejected(bytes, "not a dyncc artifact (bad magic)");
}

TEST(ArtifactTest, RejectsOtherVersion) {
  std::string bytes = sampleArtifact();
  storeU32(bytes, 8, 4);
  expectRejected(bytes,
                 "unsupported artifact format version 4 (this run-time reads "
                 "versions 1 to 3)",
                 ArtifactError::Version);
  storeU32(bytes, 8, 0);
  expectRejected(bytes,
                 "unsupported artifact format version 0 (this run-time reads "
                 "versions 1 to 3)",
                 ArtifactError::Version);
}

// Version 1 (FNV-1a 64 as its checksum) is still read; its checksum is
// not version 2's.
TEST(ArtifactTest, ReadsVersionOne) {
  std::string bytes = sampleArtifact();
  storeU32(bytes, 8, 1);
  char expected[128];
  std::snprintf(expected, sizeof(expected),
                "checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                static_cast<unsigned long long>(loadU64(bytes, 24)),
                static_cast<unsigned long long>(
                    fnv1a64(bytes.data() + 64, bytes.size() - 64)));
  expectRejected(bytes, expected, ArtifactError::Checksum);
  fixChecksum(bytes);
  EXPECT_EQ(loadU64(bytes, 24), fnv1a64(bytes.data() + 64, bytes.size() - 64));
  std::string error;
  std::unique_ptr<ArtifactFile> file =
      ArtifactFile::openMemory(bytes.data(), bytes.size(), "v1", error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->findSection("w1")->bytes(), "xxx");
}

// Version 2 (XXH64 over the bytes in one stream) is still read; its
// checksum is not version 3's.
TEST(ArtifactTest, ReadsVersionTwo) {
  std::string bytes = sampleArtifact();
  EXPECT_EQ(static_cast<uint8_t>(bytes[8]), 3);
  storeU32(bytes, 8, 2);
  uint64_t streamed = Xxh64::hash(bytes.data() + 64, bytes.size() - 64);
  EXPECT_NE(loadU64(bytes, 24), streamed);
  char expected[128];
  std::snprintf(expected, sizeof(expected),
                "checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                static_cast<unsigned long long>(loadU64(bytes, 24)),
                static_cast<unsigned long long>(streamed));
  expectRejected(bytes, expected, ArtifactError::Checksum);
  fixChecksum(bytes);
  EXPECT_EQ(loadU64(bytes, 24), streamed);
  std::string error;
  std::unique_ptr<ArtifactFile> file =
      ArtifactFile::openMemory(bytes.data(), bytes.size(), "v2", error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->findSection("w1")->bytes(), "xxx");
}

TEST(ArtifactTest, RejectsBadHeaderSize) {
  std::string bytes = sampleArtifact();
  storeU32(bytes, 12, 128);
  expectRejected(bytes, "header size is 128, expected 64");
}

TEST(ArtifactTest, RejectsTruncatedFile) {
  std::string bytes = sampleArtifact();
  size_t full = bytes.size();
  bytes.resize(full - 10);
  expectRejected(bytes, "file is truncated: the header says " +
                            std::to_string(full) + " bytes, found " +
                            std::to_string(full - 10));
  expectRejected(bytes.substr(0, 10),
                 "file is too small to be a dyncc artifact (10 bytes, the "
                 "header alone is 64)");
  expectRejected(std::string(),
                 "file is too small to be a dyncc artifact (0 bytes, the "
                 "header alone is 64)");
}

TEST(ArtifactTest, RejectsTruncatedFileOnDisk) {
  TempDir dir;
  std::string bytes = sampleArtifact();
  std::string path = dir.file("model.dyncc");
  writeFile(path, bytes.substr(0, bytes.size() - 1));
  std::string error;
  ArtifactError kind;
  EXPECT_EQ(ArtifactFile::open(path, error, &kind), nullptr);
  EXPECT_EQ(error, path + ": file is truncated: the header says " +
                       std::to_string(bytes.size()) + " bytes, found " +
                       std::to_string(bytes.size() - 1));
  EXPECT_EQ(kind, ArtifactError::Format);

  EXPECT_EQ(ArtifactFile::open(dir.file("missing.dyncc"), error, &kind),
            nullptr);
  EXPECT_EQ(error, dir.file("missing.dyncc") +
                       ": cannot open: No such file or directory");
  EXPECT_EQ(kind, ArtifactError::Io);

  EXPECT_EQ(ArtifactFile::open(dir.path(), error, &kind), nullptr);
  EXPECT_EQ(error, dir.path() + ": not a regular file");
}

TEST(ArtifactTest, RejectsTrailingData) {
  std::string bytes = sampleArtifact();
  size_t full = bytes.size();
  bytes += "junk";
  expectRejected(bytes, "file has " + std::to_string(full + 4) +
                            " bytes but the header says " +
                            std::to_string(full) + " (trailing data)");
}

TEST(ArtifactTest, RejectsChecksumMismatch) {
  std::string bytes = sampleArtifact();
  uint64_t stored = loadU64(bytes, 24);
  bytes[bytes.size() - 1] ^= 1;
  uint64_t computed =
      ChunkedXxh64::hash(bytes.data() + 64, bytes.size() - 64, 1);
  char expected[128];
  std::snprintf(expected, sizeof(expected),
                "checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                static_cast<unsigned long long>(stored),
                static_cast<unsigned long long>(computed));
  expectRejected(bytes, expected, ArtifactError::Checksum);
}

TEST(ArtifactTest, RejectsSectionPastEnd) {
  std::string bytes = sampleArtifact();
  size_t entry = entryOffset(1); // w0
  uint64_t offset = loadU64(bytes, entry + 40);
  storeU64(bytes, entry + 48, 999999);
  fixChecksum(bytes);
  expectRejected(bytes, "section 'w0' [offset " + std::to_string(offset) +
                            ", size 999999] extends past end of file (size " +
                            std::to_string(bytes.size()) + ")");

  // An offset + size that wraps around 2^64 must not pass.
  storeU64(bytes, entry + 48, ~uint64_t(0) - 10);
  fixChecksum(bytes);
  std::string error;
  EXPECT_EQ(ArtifactFile::openMemory(bytes.data(), bytes.size(), "m", error),
            nullptr);
  EXPECT_NE(error.find("extends past end of file"), std::string::npos);
}

TEST(ArtifactTest, RejectsSectionOverlappingHeader) {
  std::string bytes = sampleArtifact();
  size_t entry = entryOffset(1);
  storeU64(bytes, entry + 40, 0);
  fixChecksum(bytes);
  expectRejected(bytes,
                 "section 'w0' [offset 0, size 1000] overlaps the header");
}

TEST(ArtifactTest, RejectsSectionOverlappingTable) {
  std::string bytes = sampleArtifact();
  size_t entry = entryOffset(1);
  storeU64(bytes, entry + 40, 64);
  fixChecksum(bytes);
  expectRejected(
      bytes, "section 'w0' [offset 64, size 1000] overlaps the section table");
}

TEST(ArtifactTest, RejectsMisalignedSection) {
  std::string bytes = sampleArtifact();
  size_t entry = entryOffset(1);
  uint64_t offset = loadU64(bytes, entry + 40);
  storeU64(bytes, entry + 40, offset + 8);
  fixChecksum(bytes);
  expectRejected(bytes, "section 'w0' [offset " + std::to_string(offset + 8) +
                            ", size 1000] is not aligned to 64 bytes");
}

TEST(ArtifactTest, RejectsOverlappingSections) {
  std::string bytes = sampleArtifact();
  uint64_t w0 = loadU64(bytes, entryOffset(1) + 40);
  storeU64(bytes, entryOffset(3) + 40, w0 + 64); // w1 inside w0
  fixChecksum(bytes);
  expectRejected(bytes, "sections 'w0' and 'w1' overlap");
}

TEST(ArtifactTest, RejectsUnterminatedName) {
  std::string bytes = sampleArtifact();
  std::memset(&bytes[entryOffset(2)], 'a', 40);
  fixChecksum(bytes);
  expectRejected(bytes, "section 2: name is not NUL-terminated");
}

TEST(ArtifactTest, RejectsEmptyName) {
  std::string bytes = sampleArtifact();
  bytes[entryOffset(2)] = '\0';
  fixChecksum(bytes);
  expectRejected(bytes, "section 2: empty name");
}

TEST(ArtifactTest, RejectsMissingManifest) {
  std::string bytes = sampleArtifact();
  bytes[entryOffset(0) + 7] = 'X'; // "manifesX"
  fixChecksum(bytes);
  expectRejected(bytes, "no 'manifest' section");
}

TEST(ArtifactTest, RejectsDuplicateManifest) {
  std::string bytes = sampleArtifact();
  std::memcpy(&bytes[entryOffset(2)], "manifest", 9); // "empty" -> "manifest"
  fixChecksum(bytes);
  expectRejected(bytes, "duplicate section name 'manifest'");
}

TEST(ArtifactTest, RejectsTableOutOfRange) {
  std::string bytes = sampleArtifact();
  storeU32(bytes, 32, 1000000);
  expectRejected(bytes, "section table [offset 64, 1000000 entries] extends "
                        "past end of file (size " +
                            std::to_string(bytes.size()) + ")");
  bytes = sampleArtifact();
  storeU64(bytes, 40, 8);
  expectRejected(bytes, "section table at offset 8 overlaps the header");
}

TEST(ArtifactTest, RejectsNonzeroReserved) {
  std::string bytes = sampleArtifact();
  storeU32(bytes, 36, 7);
  expectRejected(bytes, "reserved header field is 7, expected 0");
}

TEST(ArtifactTest, NamesFromFileArePrintable) {
  std::string bytes = sampleArtifact();
  bytes[entryOffset(1)] = '\n'; // "\nw0"
  storeU64(bytes, entryOffset(1) + 48, 999999);
  fixChecksum(bytes);
  std::string error;
  EXPECT_EQ(ArtifactFile::openMemory(bytes.data(), bytes.size(), "m", error),
            nullptr);
  EXPECT_NE(error.find("section '\\x0a0'"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  // Printable ASCII from the space to the tilde stays; DEL does not.
  for (auto [first, shown] : {std::pair('\x7f', "'\\x7f0'"),
                              std::pair(' ', "' 0'"), std::pair('~', "'~0'")}) {
    bytes[entryOffset(1)] = first;
    fixChecksum(bytes);
    EXPECT_EQ(ArtifactFile::openMemory(bytes.data(), bytes.size(), "m", error),
              nullptr);
    EXPECT_NE(error.find(std::string("section ") + shown), std::string::npos)
        << error;
  }
}

TEST(ArtifactTest, Fnv1aKnownValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

// XXH64 with seed 0, as the reference implementation (Python's `xxhash`
// 3.x) gives it: the empty input, a byte, under a stripe, and two lengths
// over 32 bytes that end with 8-, 4- and 1-byte tails.
TEST(ArtifactTest, Xxh64KnownValues) {
  EXPECT_EQ(Xxh64::hash("", 0), 0xef46db3751d8e999ull);
  EXPECT_EQ(Xxh64::hash("a", 1), 0xd24ec4f1a98c6e5bull);
  EXPECT_EQ(Xxh64::hash("abc", 3), 0x44bc2cf5ad770999ull);
  EXPECT_EQ(Xxh64::hash("Nobody inspects the spammish repetition", 39),
            0xfbcea83c8a378bf1ull);
  std::string bytes;
  for (int i = 0; i < 512; ++i)
    bytes += static_cast<char>(i % 256);
  EXPECT_EQ(Xxh64::hash(bytes.data(), bytes.size()), 0x7b3bfcaac0348ac0ull);
}

// Hashed in pieces of every size from 1 to 37 bytes, each prefix of a
// 1000-byte pattern hashes as in one piece: stripes begun in one piece end
// in the next.
TEST(ArtifactTest, Xxh64InPiecesIsOnePiece) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i)
    bytes += static_cast<char>(i * 131 + 7);
  for (size_t size : {0, 1, 7, 8, 31, 32, 33, 64, 100, 999, 1000})
    for (size_t piece = 1; piece <= 37; ++piece) {
      Xxh64 state;
      for (size_t at = 0; at < size; at += piece)
        state.update(bytes.data() + at, std::min(piece, size - at));
      ASSERT_EQ(state.digest(), Xxh64::hash(bytes.data(), size))
          << size << " bytes in pieces of " << piece;
    }
  EXPECT_EQ(Xxh64::hash(bytes.data(), 1000), 0x0bf0bdbcc82eb373ull);
}

/// `size` bytes of a pattern that differs from chunk to chunk.
std::string chunkPattern(size_t size) {
  std::string bytes(size, '\0');
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < size; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    bytes[i] = static_cast<char>(state >> 56);
  }
  return bytes;
}

// Version 3's checksum is XXH64 of the chunks' XXH64s as little-endian
// words, whether hashed on one thread, several, or streamed in pieces that
// straddle the chunks' ends.
TEST(ArtifactTest, ChunkedXxh64IsTheHashOfItsChunksHashes) {
  const size_t chunk = static_cast<size_t>(kChecksumChunkBytes);
  std::string bytes = chunkPattern(3 * chunk + 5);
  for (size_t size : {size_t(0), size_t(1), size_t(1000), chunk - 1, chunk,
                      chunk + 1, 2 * chunk, 3 * chunk + 5}) {
    std::string words;
    for (size_t at = 0; at < size; at += chunk) {
      uint64_t hash =
          Xxh64::hash(bytes.data() + at, std::min(chunk, size - at));
      for (int i = 0; i < 8; ++i)
        words += static_cast<char>(hash >> (8 * i));
    }
    uint64_t expected = Xxh64::hash(words.data(), words.size());
    for (unsigned threads : {1u, 2u, 3u, 8u})
      EXPECT_EQ(ChunkedXxh64::hash(bytes.data(), size, threads), expected)
          << size << " bytes on " << threads << " threads";
    EXPECT_EQ(artifactChecksum(3, bytes.data(), size), expected) << size;
    for (size_t piece : {size_t(1) << 20, chunk - 3, chunk, chunk + 7}) {
      ChunkedXxh64 state;
      for (size_t at = 0; at < size; at += piece)
        state.update(bytes.data() + at, std::min(piece, size - at));
      EXPECT_EQ(state.digest(), expected)
          << size << " bytes in pieces of " << piece;
    }
  }
  // One byte changed anywhere changes it (a chunk's hash, then the whole).
  for (size_t at : {size_t(0), chunk - 1, chunk, 3 * chunk + 4}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x20;
    EXPECT_NE(ChunkedXxh64::hash(damaged.data(), damaged.size(), 2),
              ChunkedXxh64::hash(bytes.data(), bytes.size(), 2))
        << at;
  }
}

// An artifact of several chunks, written to disk and read back; a byte
// flipped in its last chunk is a checksum error.
TEST(ArtifactTest, VerifiesAnArtifactOfManyChunks) {
  TempDir dir;
  std::string path = dir.file("big.dyncc");
  ArtifactWriter writer;
  writer.setManifest("{\"model\": \"m\"}");
  writer.addSection(
      "w", chunkPattern(static_cast<size_t>(5 * kChecksumChunkBytes + 12345)));
  std::string error;
  ASSERT_TRUE(writer.write(path, error)) << error;
  ASSERT_NE(ArtifactFile::open(path, error), nullptr) << error;
  std::string bytes = readFile(path);
  bytes[bytes.size() - 100] ^= 1;
  ArtifactError kind = ArtifactError::None;
  EXPECT_EQ(
      ArtifactFile::openMemory(bytes.data(), bytes.size(), "big", error, &kind),
      nullptr);
  EXPECT_EQ(kind, ArtifactError::Checksum) << error;
}

} // namespace
