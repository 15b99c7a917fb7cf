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
import threading
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _pop_mode, _push_mode

from . import _runtime, composites, costs, meta_rules

_CPU = torch.device("cpu")
_make_wrapper = torch.Tensor._make_wrapper_subclass
_LOCAL_SCALAR = torch.ops.aten._local_scalar_dense.default


# Tensors this small (inputs and outputs alike) are also computed on the CPU in compute=False, so
# that host-visible scalars are right: an optimizer's step counter, a learning-rate schedule.
SMALL = 64


class _NoValue(Exception):
    pass


class UnsupportedOperator(NotImplementedError):
    """An ATen operator torch_mode cannot price: it has no rule (costs.py) and no decomposition
    into operators that have one (composites.py), or no shape rule (meta_rules.py)."""


_DOCS = 'docs/torch.md, "Operators and their rules"'


def _model_context():
    """The nn.Modules whose forward is running, outermost first ("" outside any)."""
    import sys
    names = []
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "forward":
            m = f.f_locals.get("self")
            if isinstance(m, torch.nn.Module):
                names.append(type(m).__name__)
        f = f.f_back
    return " > ".join(reversed(names))


def _unsupported(func, why, remedy):
    where = _model_context()
    return UnsupportedOperator(
        "gpreempt.sim.torch_mode: cannot run %s%s on the simulated GPU: %s. %s (%s)" % (
            func, " in " + where if where else "", why, remedy, _DOCS))


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


# (operator, argument shapes, dtypes and values) -> its kernels: a model repeats the same calls
# every step, and pricing them is most of this module's own host time.
_COSTS = {}
# The same key -> the outputs' (size, stride, dtype) for functional operators: their meta kernels
# are Python decompositions in torch 1.13 (batch norm and its backward among the slowest).
_OUTS = {}
# Per thread, the operators being decomposed: a decomposition that calls its own operator is
# refused, not looped.
_DECOMPOSING = threading.local()
# Operators whose Meta kernel is missing in this torch: their shapes come from meta_rules.
_NO_META = set()
# id(real tensor) -> (weak reference, meta twin), shared by every block so that a training loop
# with a block per step does not rebuild the twins of its parameters.
_META = {}


def _forget(key, ref):
    hit = _META.get(key)
    if hit is not None and hit[0] is ref:
        del _META[key]


def _functional(func, cache={}):
    r = cache.get(func)
    if r is None:
        schema = func._schema
        r = cache[func] = not any(a.alias_info is not None for a in schema.arguments) and \
            not any(ret.alias_info is not None for ret in schema.returns)
    return r


def _spec(out):
    if type(out) is torch.Tensor:
        return (out.size(), out.stride(), out.dtype)
    if type(out) in (tuple, list) and all(o is None or type(o) is torch.Tensor for o in out):
        return type(out)([None if o is None else (o.size(), o.stride(), o.dtype) for o in out])
    return None


def _from_spec(spec):
    if type(spec) is tuple and len(spec) == 3 and type(spec[2]) is torch.dtype:
        return torch.empty_strided(spec[0], spec[1], dtype=spec[2], device="meta")
    return type(spec)([None if o is None else
                       torch.empty_strided(o[0], o[1], dtype=o[2], device="meta") for o in spec])


class _Mode(TorchDispatchMode):
    def __init__(self, compute, trace, append=False):
        super().__init__()
        self.compute = compute
        self.trace = trace
        self.append = append
        self._open = None  # (the block's Trace, the trace it replaced) while inside
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
        self._open = None
        if self.trace is not None:
            outer = dev.trace
            self._open = (dev.trace_to(str(self.trace), append=self.append), outer)
        try:
            return super().__enter__()
        except BaseException:
            if self._open is not None:
                dev.trace, self._open = self._open[1], None
            raise

    def __exit__(self, *exc):
        r = super().__exit__(*exc)
        if self._open is not None:
            # The block's dispatches may still run on the GPU (the host runs ahead): wait for
            # them, as torch.profiler synchronizes at its end, so that the file is final here.
            # An enclosing block's trace takes the dispatches from now on.
            trace, outer = self._open
            dev = _runtime.device()
            dev.trace = outer
            self._open = None
            dev.finish_trace(trace)
        return r

    # ---- operators --------------------------------------------------------------------------
    def _to_meta(self, x, sig, st):
        """x with every tensor replaced by its meta twin; appends the shapes, dtypes and other
        arguments to `sig` (the cost cache key) and tracks the largest input and the first
        device in `st`."""
        tt = type(x)
        if tt is SimTensor:
            e = x.elem
        elif tt is list or tt is tuple:
            sig.append(len(x))
            return tt([self._to_meta(y, sig, st) for y in x])
        elif isinstance(x, torch.Tensor):
            k = id(x)
            hit = _META.get(k)
            if hit is not None and hit[0]() is x and hit[1].shape == x.shape:
                e = hit[1]
            else:
                e = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device="meta")
                ref = weakref.ref(x, lambda r, k=k: _forget(k, r))
                _META[k] = (ref, e)
        else:
            sig.append(x)
            return x
        sig.append(e.shape)
        sig.append(e.dtype)
        n = e.numel()
        if n > st[0]:
            st[0] = n
        if st[1] is None:
            st[1] = x.device
        return e

    def _submit(self, func, args, kwargs, out, key=None):
        ks = None
        if key is not None:
            try:
                ks = _COSTS.get(key)
            except TypeError:  # an unhashable argument: price this call afresh
                key = None
        if ks is None:
            name = str(func)
            ks = [(name,) + k for k in costs.kernels(func, args, kwargs, out)]
            if key is not None:
                if len(_COSTS) > 100_000:
                    _COSTS.clear()
                _COSTS[key] = ks
        if not ks:
            return
        q = _runtime.current_stream().queue
        ops = self.ops
        for name, grid, wg, flops, nbytes, mt, matrix in ks:
            self.busy_ns += q.dispatch_op(name, grid, wg, flops, nbytes, mt, matrix)
            self.flops += flops
            self.bytes += nbytes
            if matrix:
                self.matrix_flops += flops
            ops[name] = ops.get(name, 0) + 1
        self.dispatches += len(ks)

    def _decompose(self, func, args, kwargs):
        """Run `func` as the operators the GPU runs for it, each through this mode."""
        fn = composites.decomposition(func)
        active = getattr(_DECOMPOSING, "ops", None)
        if active is None:
            active = _DECOMPOSING.ops = set()
        if fn is None or func in active:
            raise _unsupported(
                func, "it has no cost rule and no decomposition into operators that have one",
                "If the GPU runs it as one kernel, give it a rule: "
                "gpreempt.sim.costs.add_rule(%r, kind); else add the operators it runs to "
                "gpreempt/sim/composites.py" % func.name())
        active.add(func)
        _push_mode(self)
        try:
            return fn(*args, **kwargs)
        finally:
            _pop_mode()
            active.discard(func)

    def _meta(self, func, margs, mkw):
        """func's outputs on the meta device, from its Meta kernel or, without one, from
        meta_rules.fallback()."""
        if func not in _NO_META:
            try:
                return func(*margs, **mkw)
            except NotImplementedError as e:
                if "'Meta' backend" not in str(e):
                    raise
                _NO_META.add(func)
        try:
            return meta_rules.fallback(func, margs, mkw)
        except LookupError:
            raise _unsupported(
                func, "this torch has no Meta kernel (shape rule) for it",
                "Add one to gpreempt/sim/meta_rules.py, or register it with "
                "torch.library.Library('aten', 'IMPL', 'Meta')") from None

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
        if costs.rule(func) is None:  # composites.GPU_COMPOSITES have none: they run decomposed
            return self._decompose(func, args, kwargs)
        if self.compute:
            out = func(*args, **kwargs)
            self._submit(func, args, kwargs, out)
            return out
        sig = [func]
        st = [0, None]
        margs = [self._to_meta(a, sig, st) for a in args]
        if kwargs:
            mkw = {}
            for k, v in kwargs.items():
                sig.append(k)
                mkw[k] = self._to_meta(v, sig, st)
        else:
            mkw = kwargs
        key = tuple(sig)
        functional = _functional(func)
        out = None
        if functional:
            try:
                spec = _OUTS.get(key)
            except TypeError:
                spec = key = None
            if spec is not None:
                out = _from_spec(spec)
        if out is None:
            out = self._meta(func, margs, mkw)
            if functional and key is not None:
                spec = _spec(out)
                if spec is not None:
                    if len(_OUTS) > 100_000:
                        _OUTS.clear()
                    _OUTS[key] = spec
        self._submit(func, margs, mkw, out, key)
        real = None
        if st[0] <= SMALL and _small(out):
            try:
                rk = {k: _to_real(v) for k, v in kwargs.items()} if kwargs else kwargs
                real = func(*[_to_real(a) for a in args], **rk)
            except _NoValue:
                pass
        device = st[1] or _CPU
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


def torch_mode(trace=None, compute=False, append=False):
    """Context manager: every ATen operator run inside also runs on the simulated GPU.

    trace: a path; one JSON line per dispatch of the block (pid, queue_id, name, grid, workgroup,
    flops, bytes, submit_us, start_us, end_us on the simulated GPU clock), each written whole as
    the dispatch finishes. The block's end waits for its dispatches still running, so the file
    is complete once the block has exited.
    append: add to an existing file; by default each block starts the file afresh. A file that
    an enclosing block of this process still writes is refused (ValueError) without append=True.
    compute: also compute every operator on the CPU (outputs are real); False: shapes only.
    The returned object's stats() gives the totals of what was dispatched.
    """
    return _Mode(compute=compute, trace=trace, append=append)
