"""Run unmodified PyTorch models on the simulated GPU.

Inside ``with torch_mode():`` every ATen operator a model executes (forward, autograd's backward,
the optimizer) is also submitted as kernel dispatches to this process's simulated GPU queues —
through the real KFD path, so gpreempt sees, suspends and resumes them like any GPU process.
Kernels are priced by costs.py and the device profile's roofline.

compute=False (the default) computes shapes only: tensors the operators produce are SimTensors,
tensors with a shape, a dtype and a device but no values, backed by the meta device; the host then
costs a few tens of µs per operator whatever the batch size. Values read on the host (``.item()``)
synchronize with the GPU, as with HIP, and read as 0. compute=True also runs every operator on the
CPU, so outputs are real (small models only).

Dispatches are asynchronous as HIP's: the host runs ahead of the simulated GPU until the ring of
the queue is full, a value is read on the host, or synchronize() is called.
"""
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _runtime, costs, meta_rules

_CPU = torch.device("cpu")
_make_wrapper = torch.Tensor._make_wrapper_subclass
_LOCAL_SCALAR = torch.ops.aten._local_scalar_dense.default


# Tensors this small (inputs and outputs alike) are also computed on the CPU in compute=False, so
# that host-visible scalars are right: an optimizer's step counter, a learning-rate schedule.
SMALL = 64


class _NoValue(Exception):
    pass


class SimTensor(torch.Tensor):
    """A tensor whose values exist only on the simulated GPU: shape, strides, dtype and device
    are real, the data is not (``elem`` is its meta-device twin). Small tensors also carry their
    value (``real``), computed on the CPU; others have ``real`` None."""

    __slots__ = ("elem", "real")
    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # Outside any torch_mode block (a result used after the block): still simulated.
        with _Mode(compute=False, trace=None):
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "SimTensor(shape=%s, dtype=%s, device=%s; values not computed: " \
               "gpreempt.sim.torch_mode(compute=False))" % (
                   tuple(self.shape), self.dtype, self.device)


def _wrap(e, device, real=None):
    if e.device.type != "meta":  # e.g. the empty placeholders some meta kernels create on CPU
        e = torch.empty_strided(e.size(), e.stride(), dtype=e.dtype, device="meta")
    r = _make_wrapper(SimTensor, e.size(), strides=e.stride(), storage_offset=e.storage_offset(),
                      dtype=e.dtype, layout=e.layout, device=device, requires_grad=False)
    r.elem = e
    r.real = real
    return r


def _small(x):
    tt = type(x)
    if tt is list or tt is tuple:
        return all(_small(y) for y in x)
    if isinstance(x, torch.Tensor):
        return x.numel() <= SMALL
    return True


def _to_real(x):
    tt = type(x)
    if tt is SimTensor:
        if x.real is None:
            raise _NoValue
        return x.real
    if tt is list or tt is tuple:
        return tt(_to_real(y) for y in x)
    if isinstance(x, torch.Tensor) and x.device.type == "meta":
        raise _NoValue
    return x


def _mutated_returns(func, cache={}):
    """For each return that aliases a written argument: (position, name) of that argument."""
    r = cache.get(func)
    if r is None:
        schema = func._schema
        written = {}
        for i, a in enumerate(schema.arguments):
            if a.alias_info is not None and a.alias_info.is_write:
                for s in a.alias_info.before_set:
                    written[s] = (i, a.name, a.kwarg_only)
        r = []
        for ret in schema.returns:
            hit = None
            if ret.alias_info is not None and ret.alias_info.is_write:
                for s in ret.alias_info.before_set:
                    hit = written.get(s, hit)
            r.append(hit)
        if not any(r):
            r = ()
        cache[func] = r
    return r


def _placeholder(dtype):
    if dtype == torch.bool:
        return False
    if dtype.is_floating_point:
        return 0.0
    if dtype.is_complex:
        return 0j
    return 0


class _Mode(TorchDispatchMode):
    def __init__(self, compute, trace):
        super().__init__()
        self.compute = compute
        self.trace = trace
        self._meta = {}  # id(real tensor) -> (weakref, meta twin)
        self.reset_stats()

    # ---- statistics -----------------------------------------------------------------------
    def reset_stats(self):
        self.dispatches = 0
        self.flops = 0.0
        self.matrix_flops = 0.0
        self.bytes = 0.0
        self.busy_ns = 0
        self.ops = {}

    def stats(self):
        """Totals since the block started: dispatches, flops (2 per multiply-add), matrix_flops
        (convolutions and GEMMs), bytes, busy_us (sum of the kernels' modelled busy time) and
        ops (dispatches per ATen operator)."""
        return {"dispatches": self.dispatches, "flops": self.flops,
                "matrix_flops": self.matrix_flops, "bytes": self.bytes,
                "busy_us": self.busy_ns / 1e3, "ops": dict(self.ops)}

    # ---- context ----------------------------------------------------------------------------
    def __enter__(self):
        meta_rules.register()
        dev = _runtime.device()
        if self.trace is not None:
            dev.trace_to(str(self.trace))
        return super().__enter__()

    def __exit__(self, *exc):
        r = super().__exit__(*exc)
        _runtime.device().flush_trace()
        return r

    # ---- operators --------------------------------------------------------------------------
    def _to_meta(self, t):
        tt = type(t)
        if tt is SimTensor:
            return t.elem
        if tt is list or tt is tuple:
            return tt(self._to_meta(x) for x in t)
        if isinstance(t, torch.Tensor):
            if isinstance(t, SimTensor):
                return t.elem
            hit = self._meta.get(id(t))
            if hit is not None and hit[0]() is t and hit[1].shape == t.shape:
                return hit[1]
            m = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")
            self._meta[id(t)] = (weakref.ref(t), m)
            return m
        return t

    def _submit(self, func, args, kwargs, out):
        ks = costs.kernels(func, args, kwargs, out)
        if not ks:
            return
        q = _runtime.current_stream().queue
        name = str(func)
        for grid, wg, flops, nbytes, mt, matrix in ks:
            self.busy_ns += q.dispatch_op(name, grid, wg, flops, nbytes, mt, matrix)
            self.dispatches += 1
            self.flops += flops
            self.bytes += nbytes
            if matrix:
                self.matrix_flops += flops
            self.ops[name] = self.ops.get(name, 0) + 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace == "profiler":
            return func(*args, **kwargs)
        if func is _LOCAL_SCALAR:
            # A value read on the host: wait for the GPU, as hipMemcpy to the host does.
            _runtime.synchronize()
            if self.compute or not isinstance(args[0], SimTensor):
                return func(*args, **kwargs)
            if args[0].real is not None:
                return func(args[0].real)
            return _placeholder(args[0].dtype)
        if self.compute:
            out = func(*args, **kwargs)
            self._submit(func, args, kwargs, out)
            return out
        margs = [self._to_meta(a) for a in args]
        mkw = {k: self._to_meta(v) for k, v in kwargs.items()} if kwargs else kwargs
        out = func(*margs, **mkw)
        self._submit(func, margs, mkw, out)
        real = None
        if _small(margs) and _small(out) and (not mkw or _small(list(mkw.values()))):
            try:
                rk = {k: _to_real(v) for k, v in kwargs.items()} if kwargs else kwargs
                real = func(*[_to_real(a) for a in args], **rk)
            except _NoValue:
                pass
        device = _CPU
        for a in args:
            if isinstance(a, torch.Tensor):
                device = a.device
                break
        aliases = _mutated_returns(func)
        if type(out) is torch.Tensor:
            if aliases and aliases[0]:
                i, name, kw_only = aliases[0]
                return kwargs[name] if kw_only or i >= len(args) else args[i]
            return _wrap(out, device, real)
        if type(out) in (tuple, list):
            res = []
            for j, o in enumerate(out):
                if aliases and j < len(aliases) and aliases[j]:
                    i, name, kw_only = aliases[j]
                    res.append(kwargs[name] if kw_only or i >= len(args) else args[i])
                elif type(o) is torch.Tensor:
                    res.append(_wrap(o, device, None if real is None else real[j]))
                else:
                    res.append(o)
            return type(out)(res)
        return out


def torch_mode(trace=None, compute=False):
    """Context manager: every ATen operator run inside also runs on the simulated GPU.

    trace: a path; one JSON line per finished dispatch is appended (pid, queue_id, name, grid,
    workgroup, flops, bytes, submit_us, start_us, end_us on the simulated GPU clock).
    compute: also compute every operator on the CPU (outputs are real); False: shapes only.
    The returned object's stats() gives the totals of what was dispatched.
    """
    return _Mode(compute=compute, trace=trace)
