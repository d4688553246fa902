//===- Artifact.cpp - The .dyncc artifact container -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Artifact.h"

#include "ThreadPool.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dyncc::runtime;

uint64_t dyncc::runtime::fnv1a64(const void *data, size_t size, uint64_t hash) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// XXH64 as the xxHash specification (doc/xxhash_spec.md, "XXH64
// Algorithm Description") gives it: four lanes over 32-byte stripes, then
// the remaining bytes by 8, 4 and 1, and an avalanche.
namespace {
constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/// Little-endian loads (memcpy: any alignment; hosts are little-endian,
/// which the run-time checks for weights too).
uint64_t read64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
uint32_t read32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint64_t xxRound(uint64_t acc, uint64_t input) {
  acc += input * kPrime2;
  acc = rotl(acc, 31);
  return acc * kPrime1;
}

uint64_t mergeRound(uint64_t acc, uint64_t lane) {
  acc ^= xxRound(0, lane);
  return acc * kPrime1 + kPrime4;
}

/// Consumes the whole stripes of `size` bytes at `p` into `lanes`; returns
/// the bytes consumed.
size_t consumeStripes(uint64_t (&lanes)[4], const uint8_t *p, size_t size) {
  size_t done = 0;
  uint64_t a = lanes[0], b = lanes[1], c = lanes[2], d = lanes[3];
  for (; size - done >= 32; done += 32) {
    a = xxRound(a, read64(p + done));
    b = xxRound(b, read64(p + done + 8));
    c = xxRound(c, read64(p + done + 16));
    d = xxRound(d, read64(p + done + 24));
  }
  lanes[0] = a;
  lanes[1] = b;
  lanes[2] = c;
  lanes[3] = d;
  return done;
}
} // namespace

Xxh64::Xxh64(uint64_t seed) : seed(seed) {
  lanes[0] = seed + kPrime1 + kPrime2;
  lanes[1] = seed + kPrime2;
  lanes[2] = seed;
  lanes[3] = seed - kPrime1;
}

void Xxh64::update(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  total += size;
  // A stripe begun by an earlier piece.
  if (pendingSize != 0) {
    size_t take = std::min(size, sizeof(pending) - pendingSize);
    std::memcpy(pending + pendingSize, p, take);
    pendingSize += take;
    p += take;
    size -= take;
    if (pendingSize < sizeof(pending))
      return;
    consumeStripes(lanes, pending, sizeof(pending));
    pendingSize = 0;
  }
  size_t done = consumeStripes(lanes, p, size);
  pendingSize = size - done;
  if (pendingSize != 0)
    std::memcpy(pending, p + done, pendingSize);
}

uint64_t Xxh64::digest() const {
  uint64_t h;
  if (total >= 32) {
    h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) +
        rotl(lanes[3], 18);
    for (uint64_t lane : lanes)
      h = mergeRound(h, lane);
  } else {
    h = seed + kPrime5;
  }
  h += total;
  const uint8_t *p = pending;
  size_t left = pendingSize;
  for (; left >= 8; p += 8, left -= 8) {
    h ^= xxRound(0, read64(p));
    h = rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (left >= 4) {
    h ^= static_cast<uint64_t>(read32(p)) * kPrime1;
    h = rotl(h, 23) * kPrime2 + kPrime3;
    p += 4;
    left -= 4;
  }
  for (; left > 0; ++p, --left) {
    h ^= *p * kPrime5;
    h = rotl(h, 11) * kPrime1;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

uint64_t Xxh64::hash(const void *data, size_t size, uint64_t seed) {
  Xxh64 state(seed);
  state.update(data, size);
  return state.digest();
}

namespace {
void storeU32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void storeU64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t loadU32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
uint64_t loadU64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
uint64_t alignUp(uint64_t value) {
  return (value + kSectionAlignment - 1) / kSectionAlignment *
         kSectionAlignment;
}
std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%016llx",
                static_cast<unsigned long long>(value));
  return buffer;
}
std::string errnoText() { return std::strerror(errno); }

/// Renders a section name from the file for a one-line message.
std::string printable(std::string_view name) {
  std::string result;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\'') {
      result += c;
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", u);
      result += buffer;
    }
  }
  return result;
}

/// Writes all of `size` bytes, retrying on EINTR and short writes.
bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}
} // namespace

void ChunkedXxh64::update(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  while (size != 0) {
    size_t take = static_cast<size_t>(
        std::min<uint64_t>(size, kChecksumChunkBytes - chunkFill));
    chunk.update(p, take);
    chunkFill += take;
    p += take;
    size -= take;
    if (chunkFill == kChecksumChunkBytes) {
      uint8_t word[8];
      storeU64(word, chunk.digest());
      chunkHashes.update(word, sizeof(word));
      chunk = Xxh64();
      chunkFill = 0;
    }
  }
}

uint64_t ChunkedXxh64::digest() const {
  if (chunkFill == 0)
    return chunkHashes.digest();
  Xxh64 hashes = chunkHashes;
  uint8_t word[8];
  storeU64(word, chunk.digest());
  hashes.update(word, sizeof(word));
  return hashes.digest();
}

namespace {
struct ChunkJob {
  const uint8_t *data;
  size_t size;
  uint8_t *words;
};
} // namespace

uint64_t ChunkedXxh64::hash(const void *data, size_t size, unsigned threads) {
  size_t chunks = static_cast<size_t>((size + kChecksumChunkBytes - 1) /
                                      kChecksumChunkBytes);
  std::vector<uint8_t> words(chunks * 8);
  ChunkJob job{static_cast<const uint8_t *>(data), size, words.data()};
  auto hashChunk = [](void *context, uint64_t index) {
    const ChunkJob &job = *static_cast<const ChunkJob *>(context);
    uint64_t begin = index * kChecksumChunkBytes;
    size_t length = static_cast<size_t>(
        std::min<uint64_t>(kChecksumChunkBytes, job.size - begin));
    storeU64(job.words + 8 * index, Xxh64::hash(job.data + begin, length));
  };
  // A pool's threads cost tens of microseconds to start: only a file of
  // several chunks a thread is worth them.
  unsigned useful =
      static_cast<unsigned>(std::min<size_t>(threads, chunks / 2));
  if (useful > 1) {
    ThreadPool pool(useful);
    pool.parallelFor(chunks, hashChunk, &job);
  } else {
    for (size_t i = 0; i < chunks; ++i)
      hashChunk(&job, i);
  }
  return Xxh64::hash(words.data(), words.size());
}

uint64_t dyncc::runtime::artifactChecksum(uint32_t version, const void *data,
                                          size_t size, unsigned threads) {
  if (version == 1)
    return fnv1a64(data, size);
  if (version == 2)
    return Xxh64::hash(data, size);
  if (threads == 0)
    threads = std::min(ThreadPool::defaultSize(), 8u);
  return ChunkedXxh64::hash(data, size, threads);
}

//===----------------------------------------------------------------------===//
// ArtifactWriter
//===----------------------------------------------------------------------===//

void ArtifactWriter::addSection(std::string name, const void *data,
                                size_t size) {
  sections.push_back(
      {std::move(name), std::string(static_cast<const char *>(data), size)});
}

void ArtifactWriter::addSection(std::string name, std::string data) {
  sections.push_back({std::move(name), std::move(data)});
}

void ArtifactWriter::setManifest(std::string json) {
  manifest = std::move(json);
  hasManifest = true;
}

bool ArtifactWriter::layout(std::vector<uint64_t> &offsets, uint64_t &fileSize,
                            std::string &error) const {
  if (!hasManifest) {
    error = "no manifest was set";
    return false;
  }
  std::unordered_set<std::string_view> names;
  for (const Section &section : sections) {
    const std::string &name = section.name;
    if (name.empty()) {
      error = "a section has an empty name";
      return false;
    }
    if (name.size() > kMaxSectionNameLength) {
      error = "section name '" + printable(name) + "' is " +
              std::to_string(name.size()) + " bytes long, at most " +
              std::to_string(kMaxSectionNameLength) + " are allowed";
      return false;
    }
    if (name.find('\0') != std::string::npos) {
      error = "section name '" + printable(name) + "' contains a NUL byte";
      return false;
    }
    if (name == kManifestSectionName) {
      error = "section name 'manifest' is reserved for setManifest";
      return false;
    }
    if (!names.insert(name).second) {
      error = "duplicate section name '" + printable(name) + "'";
      return false;
    }
  }
  uint64_t count = sections.size() + 1;
  uint64_t cursor = alignUp(kArtifactHeaderSize + count * kSectionEntrySize);
  offsets.clear();
  offsets.push_back(cursor);
  cursor = alignUp(cursor + manifest.size());
  fileSize = offsets.back() + manifest.size();
  for (const Section &section : sections) {
    offsets.push_back(cursor);
    fileSize = cursor + section.data.size();
    cursor = alignUp(fileSize);
  }
  return true;
}

template <typename Sink, typename HeaderSink>
bool ArtifactWriter::emit(Sink &&sink, HeaderSink &&writeHeader,
                          std::string &error) const {
  std::vector<uint64_t> offsets;
  uint64_t fileSize;
  if (!layout(offsets, fileSize, error))
    return false;

  ChunkedXxh64 checksum;
  uint64_t position = kArtifactHeaderSize;
  auto put = [&](const void *data, size_t size) {
    checksum.update(data, size);
    position += size;
    return sink(data, size);
  };
  static const uint8_t zeros[kSectionAlignment] = {};
  auto padTo = [&](uint64_t target) {
    while (position < target) {
      size_t n = static_cast<size_t>(
          std::min<uint64_t>(target - position, sizeof(zeros)));
      if (!put(zeros, n))
        return false;
    }
    return true;
  };

  // Section table.
  auto entry = [&](std::string_view name, uint64_t offset, uint64_t size) {
    uint8_t bytes[kSectionEntrySize] = {};
    std::memcpy(bytes, name.data(), name.size());
    storeU64(bytes + 40, offset);
    storeU64(bytes + 48, size);
    storeU32(bytes + 56, 0);
    storeU32(bytes + 60, kSectionAlignment);
    return put(bytes, sizeof(bytes));
  };
  if (!entry(kManifestSectionName, offsets[0], manifest.size()))
    return false;
  for (size_t i = 0; i < sections.size(); ++i)
    if (!entry(sections[i].name, offsets[i + 1], sections[i].data.size()))
      return false;

  // Section data.
  if (!padTo(offsets[0]) || !put(manifest.data(), manifest.size()))
    return false;
  for (size_t i = 0; i < sections.size(); ++i)
    if (!padTo(offsets[i + 1]) ||
        !put(sections[i].data.data(), sections[i].data.size()))
      return false;

  uint8_t header[kArtifactHeaderSize] = {};
  std::memcpy(header, kArtifactMagic, sizeof(kArtifactMagic));
  storeU32(header + 8, kArtifactFormatVersion);
  storeU32(header + 12, kArtifactHeaderSize);
  storeU64(header + 16, fileSize);
  storeU64(header + 24, checksum.digest());
  storeU32(header + 32, static_cast<uint32_t>(sections.size() + 1));
  storeU32(header + 36, 0);
  storeU64(header + 40, kArtifactHeaderSize);
  return writeHeader(header);
}

bool ArtifactWriter::serialize(std::string &out, std::string &error) const {
  out.assign(kArtifactHeaderSize, '\0');
  auto sink = [&](const void *data, size_t size) {
    out.append(static_cast<const char *>(data), size);
    return true;
  };
  auto header = [&](const uint8_t *bytes) {
    std::memcpy(&out[0], bytes, kArtifactHeaderSize);
    return true;
  };
  if (emit(sink, header, error))
    return true;
  out.clear();
  return false;
}

bool ArtifactWriter::write(const std::string &path, std::string &error) const {
  std::string tempPath = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(&tempPath[0]);
  if (fd < 0) {
    error = path + ": cannot create a temporary file: " + errnoText();
    return false;
  }
  auto failWith = [&](const std::string &message) {
    if (fd >= 0)
      ::close(fd);
    ::unlink(tempPath.c_str());
    error = path + ": " + message;
    return false;
  };

  if (::fchmod(fd, 0644) != 0)
    return failWith("cannot set the permissions of " + tempPath + ": " +
                    errnoText());
  std::string ioError;
  auto sink = [&](const void *data, size_t size) {
    if (writeAll(fd, data, size))
      return true;
    ioError = "cannot write " + tempPath + ": " + errnoText();
    return false;
  };
  auto header = [&](const uint8_t *bytes) {
    ssize_t n;
    do {
      n = ::pwrite(fd, bytes, kArtifactHeaderSize, 0);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(kArtifactHeaderSize))
      return true;
    ioError = "cannot write the header of " + tempPath + ": " +
              (n < 0 ? errnoText() : std::string("short write"));
    return false;
  };
  // The header is written last, once the checksum is known: reserve it.
  static const uint8_t blank[kArtifactHeaderSize] = {};
  if (!writeAll(fd, blank, sizeof(blank)))
    return failWith("cannot write " + tempPath + ": " + errnoText());
  std::string layoutError;
  if (!emit(sink, header, layoutError))
    return failWith(ioError.empty() ? layoutError : ioError);
  if (::fsync(fd) != 0)
    return failWith("cannot sync " + tempPath + ": " + errnoText());
  int closeResult = ::close(fd);
  fd = -1;
  if (closeResult != 0)
    return failWith("cannot close " + tempPath + ": " + errnoText());
  if (::rename(tempPath.c_str(), path.c_str()) != 0)
    return failWith("cannot rename " + tempPath + " to " + path + ": " +
                    errnoText());

  // Make the rename durable; failure here does not undo the write.
  std::string directory = ".";
  size_t slash = path.rfind('/');
  if (slash != std::string::npos)
    directory = slash == 0 ? "/" : path.substr(0, slash);
  int dirFd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// ArtifactFile
//===----------------------------------------------------------------------===//

ArtifactFile::~ArtifactFile() {
  if (mappedLength != 0)
    ::munmap(const_cast<uint8_t *>(base), mappedLength);
  std::free(ownedCopy);
}

std::unique_ptr<ArtifactFile> ArtifactFile::open(const std::string &path,
                                                 std::string &error,
                                                 ArtifactError *kind) {
  auto fail = [&](ArtifactError errorKind, const std::string &message) {
    error = path + ": " + message;
    if (kind)
      *kind = errorKind;
    return nullptr;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(ArtifactError::Io, "cannot open: " + errnoText());
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    std::string message = "cannot stat: " + errnoText();
    ::close(fd);
    return fail(ArtifactError::Io, message);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return fail(ArtifactError::Io, "not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size < kArtifactHeaderSize) {
    ::close(fd);
    return fail(ArtifactError::Format,
                "file is too small to be a dyncc artifact (" +
                    std::to_string(size) + " bytes, the header alone is " +
                    std::to_string(kArtifactHeaderSize) + ")");
  }
  void *mapping =
      ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  std::string mapError = errnoText();
  ::close(fd);
  if (mapping == MAP_FAILED)
    return fail(ArtifactError::Io, "cannot mmap: " + mapError);

  std::unique_ptr<ArtifactFile> file(new ArtifactFile());
  file->fileName = path;
  file->base = static_cast<const uint8_t *>(mapping);
  file->fileSize = size;
  file->mappedLength = static_cast<size_t>(size);
  ArtifactError errorKind = ArtifactError::None;
  if (!file->validate(error, errorKind)) {
    if (kind)
      *kind = errorKind;
    return nullptr;
  }
  if (kind)
    *kind = ArtifactError::None;
  return file;
}

std::unique_ptr<ArtifactFile>
ArtifactFile::openMemory(const void *data, size_t size, const std::string &name,
                         std::string &error, ArtifactError *kind) {
  std::unique_ptr<ArtifactFile> file(new ArtifactFile());
  file->fileName = name;
  file->fileSize = size;
  size_t capacity = static_cast<size_t>(alignUp(size == 0 ? 1 : size));
  file->ownedCopy = std::aligned_alloc(kSectionAlignment, capacity);
  if (!file->ownedCopy) {
    error = name + ": out of memory";
    if (kind)
      *kind = ArtifactError::Io;
    return nullptr;
  }
  if (size != 0)
    std::memcpy(file->ownedCopy, data, size);
  file->base = static_cast<const uint8_t *>(file->ownedCopy);
  ArtifactError errorKind = ArtifactError::None;
  if (!file->validate(error, errorKind)) {
    if (kind)
      *kind = errorKind;
    return nullptr;
  }
  if (kind)
    *kind = ArtifactError::None;
  return file;
}

bool ArtifactFile::validate(std::string &error, ArtifactError &kind) {
  auto fail = [&](ArtifactError errorKind, const std::string &message) {
    error = fileName + ": " + message;
    kind = errorKind;
    return false;
  };
  if (fileSize < kArtifactHeaderSize)
    return fail(ArtifactError::Format,
                "file is too small to be a dyncc artifact (" +
                    std::to_string(fileSize) + " bytes, the header alone is " +
                    std::to_string(kArtifactHeaderSize) + ")");
  if (std::memcmp(base, kArtifactMagic, sizeof(kArtifactMagic)) != 0)
    return fail(ArtifactError::Format, "not a dyncc artifact (bad magic)");
  uint32_t version = loadU32(base + 8);
  if (version < kOldestArtifactFormatVersion ||
      version > kArtifactFormatVersion)
    return fail(ArtifactError::Version,
                "unsupported artifact format version " +
                    std::to_string(version) +
                    " (this run-time reads versions " +
                    std::to_string(kOldestArtifactFormatVersion) + " to " +
                    std::to_string(kArtifactFormatVersion) + ")");
  uint32_t headerSize = loadU32(base + 12);
  if (headerSize != kArtifactHeaderSize)
    return fail(ArtifactError::Format,
                "header size is " + std::to_string(headerSize) + ", expected " +
                    std::to_string(kArtifactHeaderSize));
  uint64_t storedSize = loadU64(base + 16);
  if (storedSize > fileSize)
    return fail(ArtifactError::Format, "file is truncated: the header says " +
                                           std::to_string(storedSize) +
                                           " bytes, found " +
                                           std::to_string(fileSize));
  if (storedSize < fileSize)
    return fail(ArtifactError::Format, "file has " + std::to_string(fileSize) +
                                           " bytes but the header says " +
                                           std::to_string(storedSize) +
                                           " (trailing data)");
  uint64_t storedChecksum = loadU64(base + 24);
  uint64_t checksum =
      artifactChecksum(version, base + kArtifactHeaderSize,
                       static_cast<size_t>(fileSize - kArtifactHeaderSize));
  if (storedChecksum != checksum)
    return fail(ArtifactError::Checksum,
                "checksum mismatch (stored " + hex(storedChecksum) +
                    ", computed " + hex(checksum) + ")");
  uint32_t count = loadU32(base + 32);
  uint32_t reserved = loadU32(base + 36);
  if (reserved != 0)
    return fail(ArtifactError::Format, "reserved header field is " +
                                           std::to_string(reserved) +
                                           ", expected 0");
  uint64_t tableOffset = loadU64(base + 40);
  uint64_t tableBytes = static_cast<uint64_t>(count) * kSectionEntrySize;
  if (tableOffset < kArtifactHeaderSize)
    return fail(ArtifactError::Format, "section table at offset " +
                                           std::to_string(tableOffset) +
                                           " overlaps the header");
  if (tableOffset > fileSize || tableBytes > fileSize - tableOffset)
    return fail(ArtifactError::Format,
                "section table [offset " + std::to_string(tableOffset) + ", " +
                    std::to_string(count) +
                    " entries] extends past end of file (size " +
                    std::to_string(fileSize) + ")");

  table.clear();
  table.reserve(count);
  std::unordered_set<std::string_view> names;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *entry = base + tableOffset + uint64_t(i) * kSectionEntrySize;
    const void *nul = std::memchr(entry, 0, kSectionNameField);
    if (!nul)
      return fail(ArtifactError::Format, "section " + std::to_string(i) +
                                             ": name is not NUL-terminated");
    ArtifactSection section;
    section.name.assign(reinterpret_cast<const char *>(entry),
                        static_cast<const uint8_t *>(nul) - entry);
    section.offset = loadU64(entry + 40);
    section.size = loadU64(entry + 48);
    section.flags = loadU32(entry + 56);
    section.alignment = loadU32(entry + 60);
    if (section.name.empty())
      return fail(ArtifactError::Format,
                  "section " + std::to_string(i) + ": empty name");
    std::string label = "section '" + printable(section.name) + "' [offset " +
                        std::to_string(section.offset) + ", size " +
                        std::to_string(section.size) + "]";
    if (section.offset < kArtifactHeaderSize)
      return fail(ArtifactError::Format, label + " overlaps the header");
    if (section.offset > fileSize || section.size > fileSize - section.offset)
      return fail(ArtifactError::Format,
                  label + " extends past end of file (size " +
                      std::to_string(fileSize) + ")");
    if (section.offset % kSectionAlignment != 0)
      return fail(ArtifactError::Format, label + " is not aligned to " +
                                             std::to_string(kSectionAlignment) +
                                             " bytes");
    if (section.size != 0 && section.offset < tableOffset + tableBytes &&
        tableOffset < section.offset + section.size)
      return fail(ArtifactError::Format, label + " overlaps the section table");
    section.data = base + section.offset;
    table.push_back(std::move(section));
  }
  for (const ArtifactSection &section : table)
    if (!names.insert(section.name).second)
      return fail(ArtifactError::Format,
                  "duplicate section name '" + printable(section.name) + "'");

  std::vector<size_t> order;
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i].size != 0)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return table[a].offset < table[b].offset;
  });
  for (size_t i = 1; i < order.size(); ++i) {
    const ArtifactSection &prev = table[order[i - 1]];
    const ArtifactSection &next = table[order[i]];
    if (prev.offset + prev.size > next.offset)
      return fail(ArtifactError::Format, "sections '" + printable(prev.name) +
                                             "' and '" + printable(next.name) +
                                             "' overlap");
  }

  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].name == kManifestSectionName) {
      manifestIndex = i;
      return true;
    }
  }
  return fail(ArtifactError::Format, "no 'manifest' section");
}

const ArtifactSection *ArtifactFile::findSection(std::string_view name) const {
  for (const ArtifactSection &section : table)
    if (section.name == name)
      return &section;
  return nullptr;
}

std::string_view ArtifactFile::manifest() const {
  return table[manifestIndex].bytes();
}
