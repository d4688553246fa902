//===- ThreadPool.h - Runs the blocks of a kernel grid ----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A small fork-join pool owned by one session. parallelFor hands out indices
// one at a time from an atomic counter to the workers and the calling
// thread, and returns when every index has been processed. Workers are
// started on the first parallelFor that has more than one index.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_THREADPOOL_H
#define DYNCC_LIB_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace dyncc::runtime {

class ThreadPool {
public:
  /// A pool of `numThreads` threads, the caller of parallelFor included.
  explicit ThreadPool(unsigned numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// The number of threads that run work (the caller included).
  unsigned size() const { return numThreads; }

  /// Calls `fn(ctx, i)` for every i in [0, count), in parallel, and waits.
  void parallelFor(uint64_t count, void (*fn)(void *, uint64_t), void *ctx);

  /// min(hardware_concurrency, $DYNCC_NUM_THREADS if it is a positive
  /// integer), at least 1.
  static unsigned defaultSize();

private:
  void start();
  void workerLoop();
  void drain();

  unsigned numThreads;
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wakeWorkers;
  std::condition_variable jobDone;
  bool stopping = false;
  uint64_t generation = 0;
  unsigned activeWorkers = 0;

  // The current job; written under `mutex` before `generation` changes.
  void (*jobFn)(void *, uint64_t) = nullptr;
  void *jobCtx = nullptr;
  uint64_t jobCount = 0;
  std::atomic<uint64_t> nextIndex{0};
};

} // namespace dyncc::runtime

#endif // DYNCC_LIB_RUNTIME_THREADPOOL_H
