//===- ThreadPool.cpp - Runs the blocks of a kernel grid --------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <cstdlib>

using namespace dyncc::runtime;

ThreadPool::ThreadPool(unsigned numThreads)
    : numThreads(numThreads == 0 ? 1 : numThreads) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wakeWorkers.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

unsigned ThreadPool::defaultSize() {
  unsigned hardware = std::thread::hardware_concurrency();
  if (hardware == 0)
    hardware = 1;
  if (const char *env = std::getenv("DYNCC_NUM_THREADS")) {
    char *end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0 &&
        static_cast<unsigned long>(value) < hardware)
      hardware = static_cast<unsigned>(value);
  }
  return hardware;
}

void ThreadPool::start() {
  workers.reserve(numThreads - 1);
  for (unsigned i = 0; i + 1 < numThreads; ++i)
    workers.emplace_back([this] { workerLoop(); });
}

void ThreadPool::drain() {
  while (true) {
    uint64_t index = nextIndex.fetch_add(1, std::memory_order_relaxed);
    if (index >= jobCount)
      return;
    jobFn(jobCtx, index);
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    wakeWorkers.wait(lock, [&] { return stopping || generation != seen; });
    if (stopping)
      return;
    seen = generation;
    // Join only while work is left: once the caller has seen the last index
    // claimed and no active worker, it may reuse the job fields.
    if (nextIndex.load(std::memory_order_relaxed) >= jobCount)
      continue;
    ++activeWorkers;
    lock.unlock();
    drain();
    lock.lock();
    if (--activeWorkers == 0)
      jobDone.notify_all();
  }
}

void ThreadPool::parallelFor(uint64_t count, void (*fn)(void *, uint64_t),
                             void *ctx) {
  if (count == 0)
    return;
  if (count == 1 || numThreads == 1) {
    for (uint64_t i = 0; i < count; ++i)
      fn(ctx, i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (workers.empty())
      start();
    jobFn = fn;
    jobCtx = ctx;
    jobCount = count;
    nextIndex.store(0, std::memory_order_relaxed);
    ++generation;
  }
  wakeWorkers.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex);
  jobDone.wait(lock, [&] { return activeWorkers == 0; });
}
