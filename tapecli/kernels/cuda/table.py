"""The cuda backend: the NumPy kernel table (``kernels.NUMPY_KERNELS``) on device arrays.

Elementwise ops and gradient helpers run their ``device_math`` formula; reductions are a tree per
block (``launch.reduction``); softmax, log_softmax, logsumexp and extreme_share are compositions of
those kernels, as in ``numpy_kernels``; shape ops and indexing gather or scatter through an index map
that the host computes from the shapes alone (no values cross); the gradient of indexing is a segmented
sum. matmul calls cuBLAS through CuPy; under numba's CUDA simulator, where there is no cuBLAS, a NumPy
stand-in computes it (``BLAS``). A kernel without a device version (``argmax``/``argmin``, and the
hand-written kernels added to the op table since: ``sinh``, ``lgamma``, the linalg family, ...; an op with
a formula and no device function written by hand gets one made from it, ``formulas.py``) runs NumPy's kernel
on the host, its result copied back to the device: the CPU's numbers, bit for bit. The run's warnings say so
once per kernel name.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from tapecli.kernels.interface import Backend
from tapecli.kernels.numpy_kernels import FORMULAS, RAW_KERNELS
from tapecli.runtime.context import current

from . import device_math, launch
from .array import DeviceArray


class CudaBackend(Backend):
    name = "cuda"
    on_device = True

    def __init__(self, device_name: str, blas: str):
        self.device_name = device_name
        self.blas = blas                    # "cublas", "numpy-stand-in" (the simulator) or "kernel"
        self._uploads: dict = {}            # id of a read-only host array -> (array, its device copy)
        self._maps: dict = {}               # index maps by (kind, shapes): device int64 arrays
        self._out_dtypes: dict = {}
        # every kernel with a device formula, and the kernels generated from an op's formula
        t = {name: self._ew(name) for name in device_math.KERNELS | FORMULAS.keys()}
        t.update({k: self._reduce(k) for k in ("sum", "prod", "max", "min", "mean")})
        t.update(logsumexp=self.logsumexp, extreme_share=self.extreme_share, softmax=self.softmax,
                 log_softmax=self.log_softmax, matmul=self.matmul, reshape=self.reshape, transpose=self.transpose,
                 broadcast_to=self.broadcast_to, concat=self.concat, stack=self.stack, getitem=self.getitem,
                 index_grad=self.index_grad)
        self.table = t

    def begin_run(self) -> None:
        """A new run: forget the host arrays uploaded for the last one."""
        self._uploads.clear()

    def describe(self) -> dict:
        return {"kind": "cuda", "name": self.device_name}

    def synchronize(self) -> None:
        cuda.synchronize()

    # ------------------------------------------------------------ arrays
    def run(self, name, args, attrs):
        f = self.table.get(name)
        if f is None and name in FORMULAS:        # (an op of a family imported since: ops.DEFERRED)
            f = self.table[name] = self._ew(name)
        if f is None:
            return self.on_host(name, args, attrs, f"{name} has no cuda kernel")
        return f(*args, **attrs)

    def on_host(self, name, args, attrs, why: str) -> DeviceArray:
        """NumPy's kernel ``name`` on the host (the CPU's bits), the result back on the device; the run's
        warnings say so once per ``why``."""
        current().settings.warn_once(f"{why}: it runs on the host (its inputs are copied from the device and "
                                     "its result back)")
        host = [a.dev.copy_to_host().reshape(a.shape) if a.__class__ is DeviceArray else a for a in args]
        return self.asarray(np.asarray(RAW_KERNELS[name](*host, **attrs)))

    def alloc(self, shape, dtype) -> DeviceArray:
        dtype = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
        try:
            dev = cuda.device_array(n, dtype=dtype)
        except Exception as e:
            raise _memory_error(e, shape, n * dtype.itemsize) from None
        return DeviceArray(dev, shape, dtype)

    def asarray(self, value) -> DeviceArray:
        """A host value on the device, copied once: the array is kept (read-only from then on) with its copy
        until the next run, so a literal, a declared value or a ``--set`` array crosses once."""
        if value.__class__ is DeviceArray:
            return value
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"no device arrays of dtype {arr.dtype}")
        key = id(value)
        if value.__class__ is np.ndarray:
            entry = self._uploads.get(key)
            if entry is not None and entry[0] is value:
                return entry[1]
        try:
            dev = cuda.to_device(np.ascontiguousarray(arr).reshape(-1))
        except Exception as e:
            raise _memory_error(e, arr.shape, arr.nbytes) from None
        out = DeviceArray(dev, arr.shape, arr.dtype)
        if value.__class__ is np.ndarray:
            if len(self._uploads) > 4096:
                self._uploads.clear()
            if value.flags.writeable and value.flags.owndata:
                value.flags.writeable = False
            if not value.flags.writeable:
                self._uploads[key] = (value, out)
        return out

    def to_host(self, value) -> np.ndarray:
        return np.asarray(value)

    def zeros(self, shape, dtype):
        return self._full(tuple(shape), dtype, 0)

    def ones(self, shape, dtype):
        return self._full(tuple(shape), dtype, 1)

    def _full(self, shape, dtype, value):
        out = self.alloc(shape, dtype)
        if out.size:
            launch.over(launch.fill, out.size, out.dtype.type(value), out.dev)
        return out

    def _map(self, key, make) -> DeviceArray:
        m = self._maps.get(key)
        if m is None:
            if len(self._maps) > 1024:
                self._maps.clear()
            m = self._maps[key] = self.asarray(np.array(make(), dtype=np.int64))
        return m

    def _gather(self, x: DeviceArray, idx: DeviceArray, shape) -> DeviceArray:
        out = self.alloc(shape, x.dtype)
        if out.size:
            launch.over(launch.gather, out.size, x.dev, idx.dev, out.dev)
        return out

    # ------------------------------------------------------ elementwise
    def _ew(self, name):
        def run(*args, **attrs):
            return self.elementwise(name, args, attrs)
        run.__name__ = name
        return run

    def out_dtype(self, name, args, attrs) -> np.dtype:
        """The dtype NumPy's kernel gives for these inputs (asked of it on empty arrays)."""
        key = (name, tuple(a.dtype.char if hasattr(a, "dtype") else type(a) for a in args),
               tuple(sorted((k, str(v)) for k, v in attrs.items())))
        dt = self._out_dtypes.get(key)
        if dt is None:
            probe = [np.empty((0,), a.dtype) if hasattr(a, "dtype") else a for a in args]
            with np.errstate(all="ignore"):
                dt = self._out_dtypes[key] = np.asarray(RAW_KERNELS[name](*probe, **attrs)).dtype
        return dt

    def elementwise(self, name, args, attrs):
        out_dtype = self.out_dtype(name, args, attrs)
        formula, consts = name, []
        if name == "cast":
            if out_dtype.kind in "iu" and args[0].dtype.kind == "f":
                # NaN and floats out of the integer's range become what NumPy's C casts give on this
                # machine, which no device formula reproduces
                return self.on_host(name, args, attrs, "a cast from a float to an integer dtype")
            formula = "cast_bool" if out_dtype.kind == "b" else "cast"
        elif name == "masked_grad":
            kind = attrs.get("kind", "relu")
            formula = {"relu": "masked_grad", "abs": "masked_grad_abs"}.get(kind, "masked_grad_leaky")
        elif name not in device_math.DEVICE:        # no device function written by hand: its formula's
            formula = device_math.formula_function(name, out_dtype, attrs)
        for attr, default in device_math.ATTRS.get(formula, ()):
            v = attrs.get(attr, default)
            consts.append(out_dtype.type(v) if out_dtype.kind == "f" else v)
        # a Python number takes the dtype NumPy gives it beside the first non-bool array (its weak rule)
        first = next((a.dtype for a in args if hasattr(a, "dtype") and a.dtype.kind != "b"), None)
        devs = [self.asarray(a if hasattr(a, "dtype") else
                             np.asarray(a, dtype=np.result_type(first, a) if first is not None else None)) for a in args]
        shape = np.broadcast_shapes(*(d.shape for d in devs))
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        modes = []
        for j, d in enumerate(devs):
            if d.shape == shape:
                modes.append("a")
            elif d.size == 1:
                modes.append("s")
            else:
                devs[j] = self.broadcast_to(d, shape)
                modes.append("a")
        out = self.alloc(shape, out_dtype)
        if n:
            k = launch.elementwise(formula, "".join(modes), len(consts))
            launch.over(k, n, *(d.dev for d in devs), *consts, out.dev)
        return out

    # -------------------------------------------------------- reductions
    def _reduce(self, kind):
        def run(x, axis=None, keepdims=False):
            return self.reduce(kind, x, axis, keepdims)
        run.__name__ = kind
        return run

    def reduce(self, kind, x, axis=None, keepdims=False):
        x = self.asarray(x)
        nd = x.ndim
        axes = tuple(range(nd)) if axis is None or not nd else tuple(sorted(
            {int(a) % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}))
        for a in (axis if isinstance(axis, (tuple, list)) else () if axis is None else (axis,)):
            # a 0-d value (a NumPy scalar on the cpu) takes axis 0 or -1, except in np.mean
            if not -max(nd, 1) <= int(a) < max(nd, 1) or (nd == 0 and kind == "mean"):
                raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
        out_dtype = x.dtype if x.dtype.kind != "b" or kind in ("max", "min") else np.dtype(np.int64)
        if x.dtype != out_dtype:
            x = self.elementwise("cast", (x,), {"dtype": out_dtype})
        kept = tuple(a for a in range(nd) if a not in axes)
        out_shape = tuple(1 if a in axes else x.shape[a] for a in range(nd)) if keepdims else \
            tuple(x.shape[a] for a in kept)
        rows = int(np.prod([x.shape[a] for a in kept], dtype=np.int64))
        cols = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        perm = kept + axes
        if perm != tuple(range(nd)):
            x = self.transpose(x, perm)
        if kind == "mean":
            total = self.reduce("sum", x.reshape(rows, cols) if nd else x, 1 if nd else None)
            out = self.elementwise("div", (total, float(cols)), {})
            if out.dtype != out_dtype:
                out = self.elementwise("cast", (out,), {"dtype": out_dtype})
            return out.reshape(out_shape)
        if cols == 0:
            if kind in ("max", "min"):
                raise ValueError("zero-size array to reduction operation which has no identity")
            return self._full(out_shape, out_dtype, 0 if kind == "sum" else 1)
        out = self.alloc(out_shape, out_dtype)
        if rows:
            launch.over_rows(launch.reduction(kind, out_dtype), rows, x.dev, cols, out_dtype.type(kind == "prod"), out.dev)
        return out

    def logsumexp(self, x, axis=None, keepdims=False):
        x = self.asarray(x)
        m = self.reduce("max", x, axis, True)
        finite = self.elementwise("equal", (self.elementwise("sub", (m, m), {}), 0), {})
        m = self.elementwise("where", (finite, m, 0), {})
        s = self.reduce("sum", self.elementwise("exp", (self.elementwise("sub", (x, m), {}),), {}), axis, True)
        out = self.elementwise("add", (self.elementwise("log", (s,), {}), m), {})
        if not keepdims:
            listed = axis if isinstance(axis, (tuple, list)) else (axis,)
            axes = range(x.ndim) if axis is None else {int(a) % x.ndim for a in listed}
            out = out.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))
        return out

    def extreme_share(self, x, y, axis=None):
        hit = self.elementwise("cast", (self.elementwise("equal", (x, y), {}),), {"dtype": x.dtype})
        return self.elementwise("div", (hit, self.reduce("sum", hit, axis, True)), {})

    def softmax(self, x, axis=-1):
        x = self.asarray(x)
        e = self.elementwise("exp", (self.elementwise("sub", (x, self.reduce("max", x, axis, True)), {}),), {})
        return self.elementwise("div", (e, self.reduce("sum", e, axis, True)), {})

    def log_softmax(self, x, axis=-1):
        x = self.asarray(x)
        shifted = self.elementwise("sub", (x, self.reduce("max", x, axis, True)), {})
        s = self.reduce("sum", self.elementwise("exp", (shifted,), {}), axis, True)
        return self.elementwise("sub", (shifted, self.elementwise("log", (s,), {})), {})

    # ------------------------------------------------------------ shapes
    def reshape(self, x, shape):
        return self.asarray(x).reshape(shape)

    def transpose(self, x, perm=None, view=False):      # (a view or a copy: the same values on the device)
        x = self.asarray(x)
        perm = tuple(reversed(range(x.ndim))) if perm is None else tuple(int(p) % max(x.ndim, 1) for p in perm)
        if perm == tuple(range(x.ndim)):
            return x
        idx = self._map(("T", x.shape, perm), lambda: np.arange(x.size).reshape(x.shape).transpose(perm).ravel())
        return self._gather(x, idx, tuple(x.shape[p] for p in perm))

    def broadcast_to(self, x, shape):
        x = self.asarray(x)
        shape = tuple(int(n) for n in shape)
        if x.shape == shape:
            return x
        idx = self._map(("B", x.shape, shape), lambda: np.broadcast_to(np.arange(x.size).reshape(x.shape), shape).ravel())
        return self._gather(x, idx, shape)

    def getitem(self, x, index):
        x = self.asarray(x)
        index = _host_index(index)
        key = ("I", x.shape, _index_key(index))
        if key[2] is None:
            key = None
        make = lambda: np.arange(x.size).reshape(x.shape)[index]
        idx = self.asarray(np.array(make(), dtype=np.int64)) if key is None else self._map(key, make)
        return self._gather(x, idx, idx.shape)

    def index_grad(self, g, shape, index):
        g = self.asarray(g)
        shape = tuple(int(n) for n in shape)
        index = _host_index(index)
        target = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[index]
        if target.shape != g.shape:
            g = self.broadcast_to(g, target.shape)
        flat = target.ravel()
        order = np.argsort(flat, kind="stable")
        starts = np.zeros(int(np.prod(shape, dtype=np.int64)) + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=len(starts) - 1), out=starts[1:])
        out = self.zeros(shape, g.dtype)
        if out.size and g.size:
            launch.over(launch.segment_sum, out.size, g.dev, self.asarray(order.astype(np.int64)).dev,
                        self.asarray(starts).dev, out.dev)
        return out

    def concat(self, *xs, axis=0):
        xs = [self.asarray(x) for x in xs]
        if not xs or any(x.ndim == 0 for x in xs):
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        nd = xs[0].ndim
        if not -nd <= axis < nd:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
        axis %= nd
        for x in xs:
            if x.ndim != nd or any(x.shape[a] != xs[0].shape[a] for a in range(nd) if a != axis):
                raise ValueError("all the input array dimensions except for the concatenation axis must match")
        dtype = np.result_type(*(x.dtype for x in xs))
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        out = self.alloc(tuple(shape), dtype)
        start = 0
        for x in xs:
            if x.dtype != dtype:
                x = self.elementwise("cast", (x,), {"dtype": dtype})
            sl = (slice(None),) * axis + (slice(start, start + x.shape[axis]),)
            idx = self._map(("C", tuple(shape), axis, start, x.shape[axis]),
                            lambda sl=sl: np.arange(out.size).reshape(out.shape)[sl].ravel())
            if x.size:
                launch.over(launch.scatter, x.size, x.dev, idx.dev, out.dev)
            start += x.shape[axis]
        return out

    def stack(self, *xs, axis=0):
        xs = [self.asarray(x) for x in xs]
        if not xs or any(x.shape != xs[0].shape for x in xs):
            raise ValueError("all input arrays must have the same shape")
        nd = xs[0].ndim + 1
        if not -nd <= axis < nd:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
        axis %= nd
        shape = xs[0].shape[:axis] + (1,) + xs[0].shape[axis:]
        return self.concat(*(x.reshape(shape) for x in xs), axis=axis)

    # ------------------------------------------------------------ matmul
    def matmul(self, a, b):
        a, b = self.asarray(a), self.asarray(b)
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError("matmul: Input operand does not have enough dimensions")
        a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
        b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
        n, k = a2.shape[-2:]
        k2, m = b2.shape[-2:]
        if k != k2:
            raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {k2} is different from {k})")
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        shape = batch + (n, m)
        dtype = np.result_type(a.dtype, b.dtype)
        if self.blas == "cublas":
            out = self._cublas(a2, b2, shape)
        elif self.blas == "numpy-stand-in":
            # the simulator has no cuBLAS: NumPy computes the product of the simulated arrays
            host = np.matmul(a2.dev.copy_to_host().reshape(a2.shape), b2.dev.copy_to_host().reshape(b2.shape))
            out = DeviceArray(cuda.to_device(np.ascontiguousarray(host).reshape(-1)), host.shape, host.dtype)
        else:
            out = self.matmul_kernel(a2, b2, batch, n, k, m, dtype)
        final = shape[:-2] + ((n,) if a.ndim > 1 else ()) + ((m,) if b.ndim > 1 else ())
        return out.reshape(final)

    def matmul_kernel(self, a2, b2, batch, n, k, m, dtype):
        """A plain cuda.jit product, one thread per output element (GPUs without CuPy)."""
        if a2.dtype != dtype:
            a2 = self.elementwise("cast", (a2,), {"dtype": dtype})
        if b2.dtype != dtype:
            b2 = self.elementwise("cast", (b2,), {"dtype": dtype})
        ab, bb = a2.shape[:-2], b2.shape[:-2]
        ia = self._map(("MA", ab, batch, n * k), lambda: np.broadcast_to(
            np.arange(int(np.prod(ab, dtype=np.int64))).reshape(ab), batch).ravel() * (n * k))
        ib = self._map(("MB", bb, batch, k * m), lambda: np.broadcast_to(
            np.arange(int(np.prod(bb, dtype=np.int64))).reshape(bb), batch).ravel() * (k * m))
        out = self.alloc(batch + (n, m), dtype)
        if out.size:
            launch.over(launch.matmul, out.size, a2.dev, b2.dev, ia.dev, ib.dev, n, k, m, out.dtype.type(0), out.dev)
        return out

    def _cublas(self, a2, b2, shape):
        import cupy
        ca = cupy.asarray(a2.dev).reshape(a2.shape)
        cb = cupy.asarray(b2.dev).reshape(b2.shape)
        try:
            co = cupy.ascontiguousarray(cupy.matmul(ca, cb))
        except Exception as e:
            raise _memory_error(e, shape, int(np.prod(shape)) * ca.dtype.itemsize) from None
        return DeviceArray(cuda.as_cuda_array(co.reshape(-1)), co.shape, co.dtype)


def _host_index(index):
    """An index with its device arrays (tensor indices) read to the host."""
    if isinstance(index, tuple):
        return tuple(_host_index(i) for i in index)
    if isinstance(index, list):
        return [_host_index(i) for i in index]
    return np.asarray(index) if index.__class__ is DeviceArray else index


def _index_key(index):
    """A hashable key for a basic index (ints, slices, None, Ellipsis); None for one with arrays."""
    parts = index if isinstance(index, tuple) else (index,)
    key = []
    for p in parts:
        if isinstance(p, slice):
            key.append(("s", p.start, p.stop, p.step))
        elif p is None or p is Ellipsis or (isinstance(p, (int, np.integer)) and not isinstance(p, bool)):
            key.append(p if p is None or p is Ellipsis else int(p))
        else:
            return None
    return (isinstance(index, tuple), tuple(key))


def _memory_error(e: Exception, shape, nbytes: int) -> Exception:
    text = f"{type(e).__name__}: {e}"
    if "OUT_OF_MEMORY" in text.upper() or "OutOfMemory" in text:
        from tapecli.errors import LimitError
        return LimitError(f"out of device memory for a tensor of shape {list(shape)} ({nbytes:,} bytes)",
                          hint="use smaller tensors, or run on the cpu")
    return e

