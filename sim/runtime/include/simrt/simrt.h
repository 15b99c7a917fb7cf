/* simrt: a minimal HSA-style user runtime for the simulated GPU, with a C API.
 *
 * It talks to the GPU only through the real KFD interface: open("/dev/kfd"), GET_VERSION,
 * RUNTIME_ENABLE before the first queue (as ROCr does), CREATE_QUEUE with a real AQL ring and an
 * amd_queue_t-shaped block (write dispatch id at +0x38, read dispatch id at +0x80), mmap of the
 * doorbell, 64-byte AQL packets written into the ring. Under `kfdsim run` the shim and kfdsimd
 * answer; on a machine with a KFD the same calls reach the kernel (the packets then name
 * simulated kernel descriptors, which real hardware cannot run: simrt is for the simulator).
 *
 * Errors are negative errno values; simrt_last_error() describes the last one of this thread.
 */
#ifndef SIMRT_SIMRT_H
#define SIMRT_SIMRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct simrt_runtime simrt_runtime;
typedef struct simrt_queue simrt_queue;
typedef struct simrt_signal simrt_signal;

typedef struct simrt_options {
  size_t size;          /* sizeof(simrt_options): lets the struct grow */
  const char* kfd_path; /* NULL = "/dev/kfd" */
  uint32_t gpu_id;      /* 0 = the first GPU node of the topology (or $SIMRT_GPU_ID) */
} simrt_options;

typedef struct simrt_kernel {
  const char* name;        /* at most 39 bytes are kept */
  uint32_t grid[3];        /* work-items per dimension (0 is treated as 1) */
  uint16_t workgroup[3];   /* work-items per workgroup (0 is treated as 1) */
  uint64_t wg_cost_ns;     /* how long one workgroup holds its compute-unit slot */
} simrt_kernel;

/* Opens the KFD and enables the runtime. `opts` may be NULL. */
int simrt_open(const simrt_options* opts, simrt_runtime** out);
/* Destroys the remaining queues, disables the runtime (RUNTIME_ENABLE with mode 0) and closes. */
void simrt_close(simrt_runtime* rt);
uint32_t simrt_gpu_id(const simrt_runtime* rt);
/* KFD ioctl version reported by GET_VERSION. */
void simrt_kfd_version(const simrt_runtime* rt, uint32_t* major, uint32_t* minor);

/* priority 0..15 (KFD queue priority; 7 is ROCr's normal). ring_packets: power of two >= 16,
 * 0 = 4096. */
int simrt_queue_create(simrt_runtime* rt, uint32_t priority, uint32_t ring_packets,
                       simrt_queue** out);
int simrt_queue_destroy(simrt_queue* q);
uint32_t simrt_queue_id(const simrt_queue* q);
/* Address of the queue's amd_queue_t-shaped block (what the HIP log prints as HWq). */
uint64_t simrt_queue_hwq_address(const simrt_queue* q);
uint64_t simrt_queue_ring_address(const simrt_queue* q);

/* completion may be NULL. The packet carries the barrier bit (in-order queue). */
int simrt_dispatch(simrt_queue* q, const simrt_kernel* k, simrt_signal* completion);
/* Up to 5 dependencies (AQL barrier-AND); completion may be NULL. */
int simrt_barrier_and(simrt_queue* q, simrt_signal* const* deps, size_t n,
                      simrt_signal* completion);

int simrt_signal_create(simrt_runtime* rt, int64_t initial, simrt_signal** out);
void simrt_signal_destroy(simrt_signal* s);
int64_t simrt_signal_load(const simrt_signal* s);
void simrt_signal_store(simrt_signal* s, int64_t value);
/* Waits until the value equals `value`: 0, or -ETIMEDOUT after timeout_ns (UINT64_MAX = never),
 * or -errno (-ENODEV) when the GPU went away meanwhile (simrt_last_error says so). */
int simrt_signal_wait_eq(const simrt_signal* s, int64_t value, uint64_t timeout_ns);
/* Simulated-device timestamps the command processor wrote for the last packet, in ns of the
 * simulated clock (the signal holds ticks of the GPU's 100 MHz counter: 10 ns resolution). */
uint64_t simrt_signal_start_ts(const simrt_signal* s);
uint64_t simrt_signal_end_ts(const simrt_signal* s);

const char* simrt_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SIMRT_SIMRT_H */
