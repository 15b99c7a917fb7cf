"""Drives the real ROCr (libhsa-runtime64, ROCm 5.2) through ctypes, one step per output line, so
that a test (test_hsa_runtime.py) sees how far the runtime gets on the simulated KFD:

    init ok
    agents cpu=<name> gpu=<name>
    pool cpu <bytes> fine|coarse ...
    pool gpu <bytes> fine|coarse ...
    vram_used <bytes>            (while the 1 MiB device buffer is held)
    alloc cpu ok / alloc gpu ok
    queue ok size=<n> id=<id>
    signal ok
    barrier ok value=0

Run it under `kfdsim run --profile mi210 -- python3 hsa_probe.py [LIBRARY] [--hold]`; with --hold
it stops after "signal ok" ("holding") and takes commands on stdin (see below) until another line. A step that fails prints
"<step> FAIL <status>" and the probe exits 1.
"""
import ctypes as C
import sys

HSA_STATUS_SUCCESS = 0
HSA_STATUS_INFO_BREAK = 1
HSA_AGENT_INFO_NAME = 0
HSA_AGENT_INFO_DEVICE = 17
HSA_DEVICE_TYPE_CPU = 0
HSA_DEVICE_TYPE_GPU = 1
HSA_AMD_SEGMENT_GLOBAL = 0
HSA_AMD_MEMORY_POOL_INFO_SEGMENT = 0
HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS = 1
HSA_AMD_MEMORY_POOL_INFO_SIZE = 2
HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED = 5
FLAG_FINE = 2
FLAG_COARSE = 4
HSA_QUEUE_TYPE_MULTI = 0
HSA_PACKET_TYPE_KERNEL_DISPATCH = 2
HSA_PACKET_TYPE_BARRIER_AND = 3
HSA_FENCE_SCOPE_SYSTEM = 2
HSA_SIGNAL_CONDITION_LT = 2
HSA_WAIT_STATE_BLOCKED = 0
HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT = 22
UINT32_MAX = 0xFFFFFFFF


class Agent(C.Structure):
    _fields_ = [("handle", C.c_uint64)]


class Pool(C.Structure):
    _fields_ = [("handle", C.c_uint64)]


class Signal(C.Structure):
    _fields_ = [("handle", C.c_uint64)]


class Queue(C.Structure):  # hsa_queue_t, large model
    _fields_ = [("type", C.c_uint32), ("features", C.c_uint32), ("base_address", C.c_void_p),
                ("doorbell_signal", Signal), ("size", C.c_uint32), ("reserved1", C.c_uint32),
                ("id", C.c_uint64)]


class KernelDispatch(C.Structure):  # hsa_kernel_dispatch_packet_t
    _fields_ = [("header", C.c_uint16), ("setup", C.c_uint16), ("workgroup_size_x", C.c_uint16),
                ("workgroup_size_y", C.c_uint16), ("workgroup_size_z", C.c_uint16),
                ("reserved0", C.c_uint16), ("grid_size_x", C.c_uint32),
                ("grid_size_y", C.c_uint32), ("grid_size_z", C.c_uint32),
                ("private_segment_size", C.c_uint32), ("group_segment_size", C.c_uint32),
                ("kernel_object", C.c_uint64), ("kernarg_address", C.c_void_p),
                ("reserved2", C.c_uint64), ("completion_signal", Signal)]


class BarrierAnd(C.Structure):  # hsa_barrier_and_packet_t
    _fields_ = [("header", C.c_uint16), ("reserved0", C.c_uint16), ("reserved1", C.c_uint32),
                ("dep_signal", Signal * 5), ("reserved2", C.c_uint64),
                ("completion_signal", Signal)]


def fail(step, status):
    print(f"{step} FAIL {status:#x}", flush=True)
    sys.exit(1)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    hsa = C.CDLL(args[0] if args else "libhsa-runtime64.so.1")
    st = hsa.hsa_init()
    if st != HSA_STATUS_SUCCESS:
        fail("init", st)
    print("init ok", flush=True)

    AgentCb = C.CFUNCTYPE(C.c_int, Agent, C.c_void_p)
    found = {}

    def on_agent(agent, _data):
        kind = C.c_uint32()
        hsa.hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, C.byref(kind))
        name = C.create_string_buffer(64)
        hsa.hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name)
        key = {HSA_DEVICE_TYPE_CPU: "cpu", HSA_DEVICE_TYPE_GPU: "gpu"}.get(kind.value)
        if key and key not in found:
            found[key] = (Agent(agent.handle), name.value.decode())
        return HSA_STATUS_SUCCESS

    st = hsa.hsa_iterate_agents(AgentCb(on_agent), None)
    if st != HSA_STATUS_SUCCESS or "cpu" not in found or "gpu" not in found:
        fail("agents", st)
    print(f"agents cpu={found['cpu'][1]} gpu={found['gpu'][1]}", flush=True)

    PoolCb = C.CFUNCTYPE(C.c_int, Pool, C.c_void_p)
    pools = {"cpu": [], "gpu": []}
    for key in ("cpu", "gpu"):
        def on_pool(pool, _data, key=key):
            seg, flags, alloc = C.c_uint32(), C.c_uint32(), C.c_bool()
            size = C.c_size_t()
            hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, C.byref(seg))
            if seg.value != HSA_AMD_SEGMENT_GLOBAL:
                return HSA_STATUS_SUCCESS
            hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, C.byref(flags))
            hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, C.byref(size))
            hsa.hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                             C.byref(alloc))
            if alloc.value:
                pools[key].append((Pool(pool.handle), size.value, flags.value))
            return HSA_STATUS_SUCCESS
        st = hsa.hsa_amd_agent_iterate_memory_pools(found[key][0], PoolCb(on_pool), None)
        if st != HSA_STATUS_SUCCESS or not pools[key]:
            fail(f"pools {key}", st)
        for _, size, flags in pools[key]:
            grain = "fine" if flags & FLAG_FINE else "coarse"
            print(f"pool {key} {size} {grain}", flush=True)

    hsa.hsa_amd_memory_pool_allocate.argtypes = [Pool, C.c_size_t, C.c_uint32, C.POINTER(C.c_void_p)]
    hsa.hsa_amd_memory_pool_free.argtypes = [C.c_void_p]
    system_pool = next(p for p, _, f in pools["cpu"] if f & FLAG_FINE)
    for key, pool in (("cpu", system_pool), ("gpu", pools["gpu"][0][0])):
        ptr = C.c_void_p()
        st = hsa.hsa_amd_memory_pool_allocate(pool, 1 << 20, 0, C.byref(ptr))
        if st != HSA_STATUS_SUCCESS or not ptr.value:
            fail(f"alloc {key}", st)
        if key == "gpu":  # amdgpu's VRAM counter (rocm-smi's "VRAM Total Used") includes it
            with open("/sys/class/drm/card0/device/mem_info_vram_used") as f:
                print(f"vram_used {int(f.read())}", flush=True)
        if key == "cpu":  # host memory: the CPU writes and reads it directly
            C.memset(ptr, 0x5a, 4096)
            if C.string_at(ptr, 4) != b"\x5a" * 4:
                fail("alloc cpu readback", 0)
        st = hsa.hsa_amd_memory_pool_free(ptr)
        if st != HSA_STATUS_SUCCESS:
            fail(f"free {key}", st)
        print(f"alloc {key} ok", flush=True)

    hsa.hsa_queue_create.argtypes = [Agent, C.c_uint32, C.c_uint32, C.c_void_p, C.c_void_p,
                                     C.c_uint32, C.c_uint32, C.POINTER(C.POINTER(Queue))]
    queue = C.POINTER(Queue)()
    st = hsa.hsa_queue_create(found["gpu"][0], 64, HSA_QUEUE_TYPE_MULTI, None, None, UINT32_MAX,
                              UINT32_MAX, C.byref(queue))
    if st != HSA_STATUS_SUCCESS:
        fail("queue", st)
    q = queue.contents
    print(f"queue ok size={q.size} id={q.id}", flush=True)
    hsa.hsa_signal_create.argtypes = [C.c_int64, C.c_uint32, C.c_void_p, C.POINTER(Signal)]
    hsa.hsa_signal_load_relaxed.argtypes = [Signal]
    hsa.hsa_signal_load_relaxed.restype = C.c_int64
    hsa.hsa_signal_store_relaxed.argtypes = [Signal, C.c_int64]
    hsa.hsa_signal_store_screlease.argtypes = [Signal, C.c_int64]
    hsa.hsa_signal_wait_scacquire.argtypes = [Signal, C.c_int, C.c_int64, C.c_uint64, C.c_int]
    hsa.hsa_signal_wait_scacquire.restype = C.c_int64
    done = Signal()
    st = hsa.hsa_signal_create(1, 0, None, C.byref(done))
    if st != HSA_STATUS_SUCCESS:
        fail("signal", st)
    hsa.hsa_signal_store_relaxed(done, 7)
    if hsa.hsa_signal_load_relaxed(done) != 7:
        fail("signal", 0)
    hsa.hsa_signal_store_relaxed(done, 1)
    print("signal ok", flush=True)

    hsa.hsa_queue_add_write_index_relaxed.argtypes = [C.POINTER(Queue), C.c_uint64]
    hsa.hsa_queue_add_write_index_relaxed.restype = C.c_uint64
    header = (HSA_PACKET_TYPE_BARRIER_AND | 1 << 8 | HSA_FENCE_SCOPE_SYSTEM << 9 |
              HSA_FENCE_SCOPE_SYSTEM << 11)

    def submit_barrier(completion, dep=None):
        index = hsa.hsa_queue_add_write_index_relaxed(queue, 1)
        slot = q.base_address + (index % q.size) * 64
        C.memset(slot + 2, 0, 62)
        pkt = BarrierAnd.from_address(slot)
        if dep is not None:
            pkt.dep_signal[0] = dep
        pkt.completion_signal = completion
        C.c_uint16.from_address(slot).value = header  # the header last: it publishes the packet
        hsa.hsa_signal_store_screlease(q.doorbell_signal, index)

    def wait_zero(signal, timeout_ns):
        return hsa.hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 1, timeout_ns,
                                             HSA_WAIT_STATE_BLOCKED)

    if "--hold" in sys.argv:
        # Another program (gpreempt) works on the queue now, and asks for barriers on stdin:
        # "barrier MS" submits one and waits up to MS ms, "wait MS" waits again for it; each
        # answers "barrier done" or "barrier pending". Any other line continues.
        print("holding", flush=True)
        held = Signal()
        hsa.hsa_signal_create(1, 0, None, C.byref(held))
        for line in sys.stdin:
            words = line.split()
            if len(words) != 2 or words[0] not in ("barrier", "wait"):
                break
            if words[0] == "barrier":
                hsa.hsa_signal_store_relaxed(held, 1)
                submit_barrier(held)
            value = wait_zero(held, int(words[1]) * 10**6)
            print("barrier done" if value == 0 else "barrier pending", flush=True)
        hsa.hsa_signal_destroy(held)

    # One barrier-AND packet without dependencies: the packet processor completes it at once and
    # decrements its completion signal.
    submit_barrier(done)
    value = wait_zero(done, 10 * 10**9)
    if value != 0:
        print(f"barrier FAIL value={value}", flush=True)
        sys.exit(1)
    print("barrier ok value=0", flush=True)

    # A barrier waiting on a signal the CPU releases later: the main thread sleeps in ROCr's
    # blocked wait (hsaKmtWaitOnEvent with a 60 s timeout) and must be woken by the completion's
    # interrupt (the event id in the signal's mailbox), long before the timeout.
    import threading
    import time
    dep = Signal()
    if hsa.hsa_signal_create(1, 0, None, C.byref(dep)) != HSA_STATUS_SUCCESS:
        fail("interrupt", 0)
    hsa.hsa_signal_store_relaxed(done, 1)
    submit_barrier(done, dep)
    release = threading.Timer(0.5, lambda: hsa.hsa_signal_store_screlease(dep, 0))
    release.start()
    start = time.monotonic()
    value = wait_zero(done, 60 * 10**9)
    waited = time.monotonic() - start
    release.join()
    if value != 0:
        print(f"interrupt FAIL value={value}", flush=True)
        sys.exit(1)
    print(f"interrupt ok waited={waited:.3f}", flush=True)

    # A kernel dispatch of a real compiled kernel: its 64-byte AMDHSA kernel descriptor (from a
    # code object, --kernel-descriptor FILE) placed in host memory the GPU can read. The simulated
    # GPU does not run its ISA; it takes the kernel's duration from its model and completes the
    # packet's signal.
    kd_file = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--kernel-descriptor=")),
                   None)
    def dispatch(kernel_object, kernarg, what):
        hsa.hsa_signal_store_relaxed(done, 1)
        index = hsa.hsa_queue_add_write_index_relaxed(queue, 1)
        slot = q.base_address + (index % q.size) * 64
        C.memset(slot + 2, 0, 62)
        pkt = KernelDispatch.from_address(slot)
        pkt.setup = 1
        pkt.workgroup_size_x, pkt.workgroup_size_y, pkt.workgroup_size_z = 64, 1, 1
        pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z = 256, 1, 1
        pkt.kernel_object = kernel_object
        pkt.kernarg_address = kernarg
        pkt.completion_signal = done
        C.c_uint16.from_address(slot).value = (HSA_PACKET_TYPE_KERNEL_DISPATCH | 1 << 8 |
                                               HSA_FENCE_SCOPE_SYSTEM << 9 |
                                               HSA_FENCE_SCOPE_SYSTEM << 11)
        hsa.hsa_signal_store_screlease(q.doorbell_signal, index)
        value = wait_zero(done, 10 * 10**9)
        if value != 0:
            print(f"{what} FAIL value={value}", flush=True)
            sys.exit(1)
        print(f"{what} ok value=0", flush=True)

    if kd_file:
        kd = open(kd_file, "rb").read()
        mem = C.c_void_p()
        if hsa.hsa_amd_memory_pool_allocate(system_pool, 4096, 0, C.byref(mem)) != 0:
            fail("dispatch", 0)
        C.memmove(mem, kd, 64)
        # The kernel's arguments (out pointer, value) are never read.
        dispatch(mem.value, mem.value + 256, "dispatch")
        hsa.hsa_amd_memory_pool_free(mem)
    hsa.hsa_signal_destroy(dep)
    # ROCr's loader on a real code object (--code-object=FILE): it copies the code into VRAM with
    # its own blit kernels on an internal queue and invalidates the code caches with a PM4
    # packet; both complete on the simulated GPU, so the executable freezes. The copies arrive
    # (the simulated CP does what ROCr's blit kernels do), so the loaded kernel's descriptor is in
    # VRAM and a dispatch of its kernel_object completes.
    co_file = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--code-object=")), None)
    if co_file:
        data = open(co_file, "rb").read()
        reader, executable = Signal(), Signal()  # both are {uint64 handle}
        hsa.hsa_code_object_reader_create_from_memory.argtypes = [C.c_char_p, C.c_size_t,
                                                                   C.POINTER(Signal)]
        hsa.hsa_executable_create_alt.argtypes = [C.c_int, C.c_int, C.c_char_p, C.POINTER(Signal)]
        hsa.hsa_executable_load_agent_code_object.argtypes = [Signal, Agent, Signal, C.c_char_p,
                                                              C.c_void_p]
        hsa.hsa_executable_freeze.argtypes = [Signal, C.c_char_p]
        hsa.hsa_executable_destroy.argtypes = [Signal]
        steps = [
            ("reader", lambda: hsa.hsa_code_object_reader_create_from_memory(
                data, len(data), C.byref(reader))),
            ("executable", lambda: hsa.hsa_executable_create_alt(0, 0, None, C.byref(executable))),
            ("load", lambda: hsa.hsa_executable_load_agent_code_object(
                executable, found["gpu"][0], reader, None, None)),
            ("freeze", lambda: hsa.hsa_executable_freeze(executable, None)),
        ]
        for name, step in steps:
            st = step()
            if st != HSA_STATUS_SUCCESS:
                fail(f"code object {name}", st)
        print("code object frozen", flush=True)
        hsa.hsa_executable_get_symbol_by_name.argtypes = [Signal, C.c_char_p, C.POINTER(Agent),
                                                          C.POINTER(Signal)]
        hsa.hsa_executable_symbol_get_info.argtypes = [Signal, C.c_int, C.c_void_p]
        symbol, kernel_object = Signal(), C.c_uint64()
        gpu = found["gpu"][0]
        st = hsa.hsa_executable_get_symbol_by_name(executable, b"fill.kd", C.byref(gpu),
                                                   C.byref(symbol))
        if st != HSA_STATUS_SUCCESS:
            fail("symbol fill.kd", st)
        st = hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                                C.byref(kernel_object))
        if st != HSA_STATUS_SUCCESS:
            fail("symbol kernel object", st)
        args = C.c_void_p()
        if hsa.hsa_amd_memory_pool_allocate(system_pool, 4096, 0, C.byref(args)) != 0:
            fail("loaded kernel arguments", 0)
        dispatch(kernel_object.value, args.value, "loaded kernel dispatch")
        hsa.hsa_amd_memory_pool_free(args)
        hsa.hsa_executable_destroy(executable)

    hsa.hsa_queue_destroy(queue)
    hsa.hsa_signal_destroy(done)
    hsa.hsa_shut_down()
    print("shutdown ok", flush=True)


if __name__ == "__main__":
    main()
