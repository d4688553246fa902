/*===- TestKernels.c - CPU kernels for the run-time tests ---------*- C -*-===*\
|*                                                                            *|
|* Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.         *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Hand-written kernels that follow the dyncc kernel ABI (docs/               *|
|* ArtifactFormat.md): `void **params`, one 8-byte slot per flattened         *|
|* parameter, a rank-r buffer being {allocated, aligned, offset, sizes[r],    *|
|* strides[r]}, called once per block. Built as a shared object and packed    *|
|* into test artifacts as their `cpu.so` section.                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdint.h>

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
} MemRef;

/* Reads a rank-`rank` descriptor starting at slot `first`. */
static MemRef readMemRef(void **params, int first, int rank) {
  MemRef ref;
  ref.allocated = *(void **)params[first];
  ref.aligned = *(void **)params[first + 1];
  ref.offset = *(int64_t *)params[first + 2];
  for (int d = 0; d < rank; ++d) {
    ref.sizes[d] = *(int64_t *)params[first + 3 + d];
    ref.strides[d] = *(int64_t *)params[first + 3 + rank + d];
  }
  return ref;
}

static int64_t readInt(void **params, int slot) {
  return *(int64_t *)params[slot];
}

/* T[M, N] = X[M, K] * W[K, N]; params: X (rank 2, slots 0-6), W (7-13),
 * T (14-20), rowsPerBlock (21). Block x handles rows
 * [x * rowsPerBlock, (x + 1) * rowsPerBlock) of the M rows. */
void test_matmul(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)by;
  (void)bz;
  MemRef x = readMemRef(params, 0, 2);
  MemRef w = readMemRef(params, 7, 2);
  MemRef t = readMemRef(params, 14, 2);
  int64_t rowsPerBlock = readInt(params, 21);
  const float *xp = (const float *)x.aligned + x.offset;
  const float *wp = (const float *)w.aligned + w.offset;
  float *tp = (float *)t.aligned + t.offset;
  for (int64_t i = 0; i < rowsPerBlock; ++i) {
    int64_t row = bx * rowsPerBlock + i;
    if (row >= x.sizes[0])
      return;
    for (int64_t n = 0; n < w.sizes[1]; ++n) {
      float sum = 0.0f;
      for (int64_t k = 0; k < x.sizes[1]; ++k)
        sum += xp[row * x.strides[0] + k * x.strides[1]] *
               wp[k * w.strides[0] + n * w.strides[1]];
      tp[row * t.strides[0] + n * t.strides[1]] = sum;
    }
  }
}

/* Y = relu(T + 1) elementwise over `size` elements, 64 per block; params:
 * T (rank 2, slots 0-6), Y (rank 2, 7-13), size (14). */
void test_add1_relu(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)by;
  (void)bz;
  MemRef t = readMemRef(params, 0, 2);
  MemRef y = readMemRef(params, 7, 2);
  int64_t size = readInt(params, 14);
  const float *tp = (const float *)t.aligned;
  float *yp = (float *)y.aligned;
  for (int64_t i = 0; i < 64; ++i) {
    int64_t index = bx * 64 + i;
    if (index >= size)
      return;
    float value = tp[index] + 1.0f;
    yp[index] = value > 0.0f ? value : 0.0f;
  }
}

/* Fills a rank-1 f32 buffer (slots 0-4) with the value of slot 5. */
void test_fill(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)bx;
  (void)by;
  (void)bz;
  MemRef o = readMemRef(params, 0, 1);
  float value = (float)readInt(params, 5);
  for (int64_t i = 0; i < o.sizes[0]; ++i)
    ((float *)o.aligned)[i * o.strides[0]] = value;
}

/* Zeroes a rank-1 i64 buffer (slots 0-4). */
void test_zero(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)bx;
  (void)by;
  (void)bz;
  MemRef q = readMemRef(params, 0, 1);
  for (int64_t i = 0; i < q.sizes[0]; ++i)
    ((int64_t *)q.aligned)[i] = 0;
}

/* Records the ABI it sees: params P (rank 3, slots 0-8), Q (i64 rank 1,
 * slots 9-13), an expression (14). Block (0,0,0) writes P's descriptor and
 * the expression to Q[0..8]; every block counts itself in Q[9] and sets bit
 * x + 2y + 6z of Q[10]. */
void test_probe(void **params, int64_t bx, int64_t by, int64_t bz) {
  MemRef p = readMemRef(params, 0, 3);
  MemRef q = readMemRef(params, 9, 1);
  int64_t *out = (int64_t *)q.aligned;
  if (bx == 0 && by == 0 && bz == 0) {
    out[0] = p.allocated == p.aligned && p.aligned != 0;
    out[1] = p.offset;
    for (int d = 0; d < 3; ++d) {
      out[2 + d] = p.sizes[d];
      out[5 + d] = p.strides[d];
    }
    out[8] = readInt(params, 14);
  }
  __atomic_fetch_add(&out[9], 1, __ATOMIC_RELAXED);
  __atomic_fetch_or(&out[10], (int64_t)1 << (bx + 2 * by + 6 * bz),
                    __ATOMIC_RELAXED);
}

/* Counts its blocks in Q[11]; params: Q (i64 rank 1, slots 0-4). */
void test_count(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)bx;
  (void)by;
  (void)bz;
  MemRef q = readMemRef(params, 0, 1);
  __atomic_fetch_add(&((int64_t *)q.aligned)[11], 1, __ATOMIC_RELAXED);
}

/* Split-K: part y of T = X * W over the y-th of WS's parts of K, into
 * WS[y]; params: X (rank 2, slots 0-6), W (7-13), WS (rank 3, 14-22),
 * rowsPerBlock (23). */
void test_matmul_part(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)bz;
  MemRef x = readMemRef(params, 0, 2);
  MemRef w = readMemRef(params, 7, 2);
  MemRef ws = readMemRef(params, 14, 3);
  int64_t rowsPerBlock = readInt(params, 23);
  const float *xp = (const float *)x.aligned + x.offset;
  const float *wp = (const float *)w.aligned + w.offset;
  float *out = (float *)ws.aligned + ws.offset + by * ws.strides[0];
  int64_t chunk = x.sizes[1] / ws.sizes[0];
  for (int64_t i = 0; i < rowsPerBlock; ++i) {
    int64_t row = bx * rowsPerBlock + i;
    if (row >= x.sizes[0])
      return;
    for (int64_t n = 0; n < w.sizes[1]; ++n) {
      float sum = 0.0f;
      for (int64_t k = by * chunk; k < (by + 1) * chunk; ++k)
        sum += xp[row * x.strides[0] + k * x.strides[1]] *
               wp[k * w.strides[0] + n * w.strides[1]];
      out[row * ws.strides[1] + n * ws.strides[2]] = sum;
    }
  }
}

/* T = the sum of WS's parts, 64 elements per block; params: WS (rank 3,
 * slots 0-8), T (rank 2, 9-15). */
void test_sum_parts(void **params, int64_t bx, int64_t by, int64_t bz) {
  (void)by;
  (void)bz;
  MemRef ws = readMemRef(params, 0, 3);
  MemRef t = readMemRef(params, 9, 2);
  const float *wp = (const float *)ws.aligned + ws.offset;
  float *tp = (float *)t.aligned + t.offset;
  int64_t size = t.sizes[0] * t.sizes[1];
  for (int64_t i = bx * 64; i < (bx + 1) * 64 && i < size; ++i) {
    float sum = 0.0f;
    for (int64_t s = 0; s < ws.sizes[0]; ++s)
      sum += wp[s * ws.strides[0] + i];
    tp[i] = sum;
  }
}
