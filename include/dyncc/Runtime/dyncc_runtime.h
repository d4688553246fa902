/*===- dyncc_runtime.h - C API of the dyncc run-time --------------*- C -*-===*\
|*                                                                            *|
|* Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.         *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Loads a compiled model (.dyncc artifact) and runs it. Pure C, usable from  *|
|* ctypes: every function returns a status code or a plain value, and the     *|
|* message of the last failure on the calling thread is dyncc_last_error().   *|
|* See docs/Runtime.md.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef DYNCC_RUNTIME_DYNCC_RUNTIME_H
#define DYNCC_RUNTIME_DYNCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DYNCC_API __attribute__((visibility("default")))
#else
#define DYNCC_API
#endif

/** Status codes; DYNCC_OK is 0. */
typedef enum {
  DYNCC_OK = 0,
  DYNCC_ERROR_IO,               /**< the file cannot be read */
  DYNCC_ERROR_FORMAT,           /**< malformed artifact or manifest */
  DYNCC_ERROR_VERSION,          /**< unsupported format version */
  DYNCC_ERROR_CHECKSUM,         /**< the artifact is corrupt */
  DYNCC_ERROR_INVALID_ARGUMENT, /**< bad index, name, null pointer, device */
  DYNCC_ERROR_SHAPE,            /**< input shapes do not fit the model */
  DYNCC_ERROR_UNSUPPORTED,      /**< e.g. a device this build cannot use */
  DYNCC_ERROR_DEVICE,           /**< the device failed */
  DYNCC_ERROR_INTERNAL          /**< a bug or an inconsistent artifact */
} dyncc_status;

/** A loaded artifact: immutable, shareable between threads and sessions. */
typedef struct dyncc_artifact dyncc_artifact;
/** An execution context: inputs, outputs, scratch memory, a thread pool.
 *  One session must not be used from two threads at once; distinct sessions
 *  are independent. */
typedef struct dyncc_session dyncc_session;

/** The message of the last failed call on this thread (one line, never
 *  null; "" if nothing failed yet). Valid until the next failing call. */
DYNCC_API const char *dyncc_last_error(void);
/** "DYNCC_OK", "DYNCC_ERROR_SHAPE", ... */
DYNCC_API const char *dyncc_status_name(dyncc_status status);
/** The run-time's version string, e.g. "0.1.0". */
DYNCC_API const char *dyncc_runtime_version(void);

/*===--- Artifacts --------------------------------------------------------===*/

/** Opens, memory-maps and validates `path`, parses its manifest and loads its
 *  host CPU code. */
DYNCC_API dyncc_status dyncc_artifact_load(const char *path,
                                           dyncc_artifact **out);
/** Frees an artifact (null is ignored). Sessions created from it keep what
 *  they need alive, so this may be called before freeing them. */
DYNCC_API void dyncc_artifact_free(dyncc_artifact *artifact);

/* Queries. Strings are owned by the artifact. Out-of-range indices return
 * NULL / 0. */
DYNCC_API const char *dyncc_artifact_model_name(const dyncc_artifact *artifact);
DYNCC_API const char *dyncc_artifact_producer(const dyncc_artifact *artifact);
DYNCC_API size_t dyncc_artifact_num_targets(const dyncc_artifact *artifact);
DYNCC_API const char *dyncc_artifact_target(const dyncc_artifact *artifact,
                                            size_t index);
/** The instruction-set level of the host code loaded: the highest of the
 *  artifact's builds this processor runs, under DYNCC_HOST_ISA ("x86-64-v2",
 *  the portable build, "x86-64-v3", "x86-64-v4"; docs/Runtime.md, "Host code
 *  levels"). "" where the artifact's host code has no levels (artifacts
 *  from before them) or none of its builds was loaded; null for null. */
DYNCC_API const char *dyncc_artifact_host_isa(const dyncc_artifact *artifact);

DYNCC_API size_t dyncc_artifact_num_inputs(const dyncc_artifact *artifact);
DYNCC_API const char *dyncc_artifact_input_name(const dyncc_artifact *artifact,
                                                size_t index);
/** "f32", "i64", "bool", ... */
DYNCC_API const char *dyncc_artifact_input_dtype(const dyncc_artifact *artifact,
                                                 size_t index);
DYNCC_API size_t dyncc_artifact_input_rank(const dyncc_artifact *artifact,
                                           size_t index);
/** The expression of dimension `dim` ("B", "64", ...). */
DYNCC_API const char *dyncc_artifact_input_dim(const dyncc_artifact *artifact,
                                               size_t index, size_t dim);
/** Finds an input by name. */
DYNCC_API dyncc_status dyncc_artifact_find_input(const dyncc_artifact *artifact,
                                                 const char *name,
                                                 size_t *index);

DYNCC_API size_t dyncc_artifact_num_outputs(const dyncc_artifact *artifact);
DYNCC_API const char *dyncc_artifact_output_name(const dyncc_artifact *artifact,
                                                 size_t index);
DYNCC_API const char *
dyncc_artifact_output_dtype(const dyncc_artifact *artifact, size_t index);
DYNCC_API size_t dyncc_artifact_output_rank(const dyncc_artifact *artifact,
                                            size_t index);
DYNCC_API const char *dyncc_artifact_output_dim(const dyncc_artifact *artifact,
                                                size_t index, size_t dim);
DYNCC_API dyncc_status dyncc_artifact_find_output(
    const dyncc_artifact *artifact, const char *name, size_t *index);

DYNCC_API size_t dyncc_artifact_num_symbols(const dyncc_artifact *artifact);
DYNCC_API const char *dyncc_artifact_symbol_name(const dyncc_artifact *artifact,
                                                 size_t index);
DYNCC_API int64_t dyncc_artifact_symbol_min(const dyncc_artifact *artifact,
                                            size_t index);
DYNCC_API int64_t dyncc_artifact_symbol_max(const dyncc_artifact *artifact,
                                            size_t index);
/** The symbol's values are multiples of this (1 for any value). */
DYNCC_API int64_t dyncc_artifact_symbol_divisor(const dyncc_artifact *artifact,
                                                size_t index);
/** Null for a symbol an input dimension binds; for a size read from data
 *  in the middle of a run, the op it belongs to ("dg.reshape 'r'"). */
DYNCC_API const char *
dyncc_artifact_symbol_source(const dyncc_artifact *artifact, size_t index);

DYNCC_API size_t dyncc_artifact_num_groups(const dyncc_artifact *artifact);
DYNCC_API const char *dyncc_artifact_group_name(const dyncc_artifact *artifact,
                                                size_t index);
DYNCC_API const char *dyncc_artifact_group_kind(const dyncc_artifact *artifact,
                                                size_t index);
/** The number of variants of group `group` (0 if out of range). */
DYNCC_API size_t
dyncc_artifact_group_num_variants(const dyncc_artifact *artifact,
                                  size_t group);
/** The kernel of variant `variant` of group `group`, or null. */
DYNCC_API const char *
dyncc_artifact_group_variant(const dyncc_artifact *artifact, size_t group,
                             size_t variant);
/** The symbols group `group`'s selection reads (its variants' conditions
 *  and its table's keys): writes the first min(count, capacity) symbol
 *  indices to `indices` (null if capacity is 0) and returns the count. */
DYNCC_API size_t dyncc_artifact_group_symbols(const dyncc_artifact *artifact,
                                              size_t group, size_t *indices,
                                              size_t capacity);
/** The number of devices `dyncc tune` measured the artifact's variants on
 *  (its `calibration` section). */
DYNCC_API size_t
dyncc_artifact_num_calibrations(const dyncc_artifact *artifact);
/** The device of measurement `index`: "NVIDIA H200 (sm_90, 132 SMs)", or
 *  null. */
DYNCC_API const char *
dyncc_artifact_calibration_device(const dyncc_artifact *artifact,
                                  size_t index);

/*===--- Sessions ---------------------------------------------------------===*/

/** Creates a session on `device`: "cpu" (or null), or "cuda:N" ("cuda" is
 *  "cuda:0"). A CUDA session loads libcuda.so.1 with dlopen (or the library
 *  $DYNCC_CUDA_DRIVER names) on first use; the model's kernels and weights
 *  are loaded onto the device by its first session there and shared by the
 *  others. Fails with DYNCC_ERROR_DEVICE where there is no driver or device,
 *  DYNCC_ERROR_UNSUPPORTED where the artifact has no code the device runs. */
DYNCC_API dyncc_status dyncc_session_create(const dyncc_artifact *artifact,
                                            const char *device,
                                            dyncc_session **out);
DYNCC_API void dyncc_session_free(dyncc_session *session);

/** Binds input `index` to `data`, a C-contiguous array of the input's dtype
 *  with the given shape. The session keeps the pointer, not a copy: the data
 *  must stay valid and unchanged until dyncc_session_run returns. Rank, static
 *  dimensions and symbol ranges are checked here; consistency between inputs
 *  is checked by dyncc_session_run. */
DYNCC_API dyncc_status dyncc_session_set_input(dyncc_session *session,
                                               size_t index, const void *data,
                                               const int64_t *shape,
                                               size_t rank);
DYNCC_API dyncc_status dyncc_session_set_input_by_name(dyncc_session *session,
                                                       const char *name,
                                                       const void *data,
                                                       const int64_t *shape,
                                                       size_t rank);

/** Binds input `index` to device memory at `address` (a CUdeviceptr of the
 *  session's GPU), C-contiguous; CUDA sessions only. As for
 *  dyncc_session_set_input, the memory must stay valid until the run that
 *  reads it has completed. */
DYNCC_API dyncc_status dyncc_session_set_input_device(dyncc_session *session,
                                                      size_t index,
                                                      uint64_t address,
                                                      const int64_t *shape,
                                                      size_t rank);

/** Binds the symbols, checks the constraints, selects a variant per group and
 *  runs the steps, and waits for them. Outputs are valid until the next run
 *  or free. */
DYNCC_API dyncc_status dyncc_session_run(dyncc_session *session);
/** As dyncc_session_run, but on CUDA only enqueues the work on the session's
 *  stream and returns (host inputs are copied before it returns). Wait with
 *  dyncc_session_synchronize or on the stream. On the CPU: the whole run. */
DYNCC_API dyncc_status dyncc_session_enqueue(dyncc_session *session);
/** Waits for the work enqueued on the session's stream. */
DYNCC_API dyncc_status dyncc_session_synchronize(dyncc_session *session);
/** CUDA sessions: enqueue on `stream` (a CUstream of the session's device)
 *  from now on; null restores the session's own stream. */
DYNCC_API dyncc_status dyncc_session_set_stream(dyncc_session *session,
                                                void *stream);
/** CUDA sessions: the stream runs are enqueued on (the session's own unless
 *  set); null on the cpu. DLPack producers order their work before it. */
DYNCC_API void *dyncc_session_stream(const dyncc_session *session);
/** CUDA sessions: the device time of the last run in milliseconds, from
 *  events recorded before its first step and after its last. */
DYNCC_API dyncc_status dyncc_session_device_time(dyncc_session *session,
                                                 double *milliseconds);
/** One line naming the session's device: "cpu (N threads)", or the CUDA
 *  device, its architecture and how many kernels came from a cubin and how
 *  many the driver compiled from PTX at load. Valid until the next call. */
DYNCC_API const char *dyncc_session_device(const dyncc_session *session);
/** CUDA sessions: the device's name (cuDeviceGetName), its architecture
 *  ("sm_90") and SM count, which `dyncc tune`'s measurements are kept
 *  under. The strings live as long as the session. */
DYNCC_API dyncc_status dyncc_session_gpu(const dyncc_session *session,
                                         const char **name, const char **arch,
                                         int64_t *sms);
/** The device `dyncc tune`'s measurements are kept under and found by: on
 *  CUDA what dyncc_session_gpu gives; on the cpu the host processor's name
 *  (/proc/cpuinfo's "model name", else "cpu"), "cpu-" and its architecture
 *  ("cpu-x86_64") and the session's threads. The strings live as long as
 *  the session. */
DYNCC_API dyncc_status dyncc_session_tuning_device(const dyncc_session *session,
                                                   const char **device,
                                                   const char **arch,
                                                   int64_t *units);

/** Profiling and tuning (what `dyncc tune` measures with). */
/** Times each launch of the following runs (`enable` nonzero): on CUDA
 *  with events around each step, on the CPU with the host clock. */
DYNCC_API dyncc_status dyncc_session_set_profiling(dyncc_session *session,
                                                   int enable);
/** The last profiled run's time of group `group`'s launches in
 *  milliseconds, and the blocks they launched (either pointer may be null).
 *  Waits for the run on CUDA. */
DYNCC_API dyncc_status dyncc_session_group_time(dyncc_session *session,
                                                size_t group,
                                                double *milliseconds,
                                                uint64_t *blocks);
/** CUDA sessions: times the host's calls into the driver from the next
 *  enqueue on (`enable` nonzero), so that a run's host time splits into
 *  the run-time's own work (bind, check, select, plan) and the driver's
 *  (launch calls, copies, allocations, event records). Each driver call
 *  then costs two clock reads more. UNSUPPORTED on the cpu. */
DYNCC_API dyncc_status dyncc_session_set_driver_timing(dyncc_session *session,
                                                       int enable);
/** The last enqueue's host time inside CUDA driver calls in microseconds,
 *  and their count (either pointer may be null); 0 and 0 without driver
 *  timing. */
DYNCC_API dyncc_status dyncc_session_driver_time(const dyncc_session *session,
                                                 double *microseconds,
                                                 uint64_t *calls);
/** The last enqueue's host time copying host inputs into page-locked
 *  memory in microseconds, and the bytes it copied (either pointer may be
 *  null): the caller's data moving, neither the run-time's own work nor
 *  the driver's; 0 and 0 without driver timing or pinned inputs. */
DYNCC_API dyncc_status dyncc_session_input_copy_time(
    const dyncc_session *session, double *microseconds, uint64_t *bytes);
/** CUDA graphs: the runs that replayed a graph and the graphs captured
 *  (either pointer may be null), and why graphs are off ("" when on; "not
 *  a CUDA session" on the cpu). A CUDA session on its own stream records a
 *  run's launches and copies; the second run with the same ones (the same
 *  kernels, grids and parameters: the same shapes and buffers) captures
 *  them into a graph, and later ones replay it with one driver call. They
 *  are off where the driver lacks them, with DYNCC_CUDA_GRAPHS=0, for
 *  plans that bind sizes from data in the middle of a run, and after a
 *  capture failed; runs then launch kernel by kernel. */
DYNCC_API dyncc_status dyncc_session_cuda_graphs(const dyncc_session *session,
                                                 uint64_t *replays,
                                                 uint64_t *captures,
                                                 const char **off_reason);
/** Host inputs through page-locked memory: the copies to the device made
 *  from it (either pointer may be null), and why inputs are copied from
 *  the caller's memory instead ("" when they are not; "not a CUDA session"
 *  on the cpu). A CUDA session copies each input bound to host memory into
 *  a page-locked buffer of its own, then to the device asynchronously; it
 *  stops where the driver has no page-locked memory or an allocation of it
 *  fails. */
DYNCC_API dyncc_status dyncc_session_pinned_inputs(const dyncc_session *session,
                                                   uint64_t *copies,
                                                   const char **off_reason);
/** Runs variant `variant` of group `group` from the next run on, wherever
 *  its conditions hold (elsewhere the group selects as usual); -1 restores
 *  the usual selection. */
DYNCC_API dyncc_status dyncc_session_force_variant(dyncc_session *session,
                                                   size_t group,
                                                   int64_t variant);
/** The blocks of variant `variant` of group `group` that run at once: on
 *  CUDA, those resident on the device (the driver's occupancy per SM times
 *  the SM count); on the cpu, the session's threads. One wave. */
DYNCC_API dyncc_status dyncc_session_blocks_per_wave(
    const dyncc_session *session, size_t group, size_t variant,
    int64_t *blocks);

/** Writes the rank of output `index` to `*rank` and its first
 *  min(rank, capacity) dimensions to `shape` (which may be null if capacity
 *  is 0). Needs a successful run. */
DYNCC_API dyncc_status dyncc_session_output_shape(const dyncc_session *session,
                                                  size_t index, int64_t *shape,
                                                  size_t capacity,
                                                  size_t *rank);
/** The size in bytes of output `index` after the last successful run. */
DYNCC_API size_t dyncc_session_output_size(const dyncc_session *session,
                                           size_t index);
/** The host data of output `index` (owned by the session), or null before
 *  a successful run. On CUDA it is copied from the device on the first call
 *  after each run (null with dyncc_last_error set if that fails). */
DYNCC_API const void *dyncc_session_output_data(const dyncc_session *session,
                                                size_t index);
/** CUDA sessions: the device address of output `index` after a run (owned
 *  by the session, valid until the next run or free); 0 otherwise. */
DYNCC_API uint64_t dyncc_session_output_device(const dyncc_session *session,
                                               size_t index);

/** The value symbol `index` was bound to by the last successful run. */
DYNCC_API dyncc_status dyncc_session_symbol_value(const dyncc_session *session,
                                                  size_t index, int64_t *value);
/** The name of the kernel that last ran for group `group`, or null if the
 *  group has not run yet (or the index is out of range). */
DYNCC_API const char *dyncc_session_group_variant(const dyncc_session *session,
                                                  size_t group);
/** Why that kernel ran for group `group`, at the last run's symbol values:
 *  its variant index and the tile search's table (each key's value and the
 *  interval holding it), the variant's conditions, or the group's one
 *  variant. Null if the group has not run yet (or the index is out of
 *  range). Valid until the next call on this session. */
DYNCC_API const char *dyncc_session_group_reason(const dyncc_session *session,
                                                 size_t group);
/** The number of kernels the last run launched (steps whose grid was empty
 *  launch none). */
DYNCC_API size_t dyncc_session_num_launches(const dyncc_session *session);
/** The number of threads running kernel blocks. */
DYNCC_API size_t dyncc_session_num_threads(const dyncc_session *session);
/** The memory of the last successful run's temporaries: `*arena_bytes`,
 *  the arena their placement needs at that run's shapes, and
 *  `*live_peak_bytes`, the most bytes of them live at any one step (the
 *  least any placement could need). */
DYNCC_API dyncc_status dyncc_session_memory(const dyncc_session *session,
                                            uint64_t *arena_bytes,
                                            uint64_t *live_peak_bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DYNCC_RUNTIME_DYNCC_RUNTIME_H */
