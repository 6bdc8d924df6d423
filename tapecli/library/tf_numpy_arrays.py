"""tf.experimental.numpy, its array functions: reductions and statistics with NumPy's dtypes (a sum of int32 is int64,
a mean of ints float64), sorting and searching, reshaping and moving axes, joining and splitting, flipping and
rounding, as np_array_ops.py and np_math_ops.py write them over TensorFlow's ops (tf_numpy.py says how the module is
reached; tf_numpy_indexing.py picks elements)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.library.core import _tensor_attribute, expand_dims as tf_expand_dims, squeeze as tf_squeeze, to_axis, \
    to_dtype, to_shape
from tapecli.library.tf_array import broadcast_to as tf_broadcast_to, repeat as tf_repeat
from tapecli.library.tf_math import count_nonzero as tf_count_nonzero, reduce_std, reduce_variance
from tapecli.library.tf_numpy import (as_float, asarray, check_axis, float32_for_float, full, is_python, numpy_dtype,
                                      numpy_function, promote, result_type, tensor_astype)
from tapecli.library.tf_nn import pad as tf_pad, split as tf_split
from tapecli.runtime.values import NumpyArray, PythonTuple, Tensor

# How a reduction reads integer and bool arrays (np_array_ops._reduce's promote_int): as int64 (uint64), as the
# float NumPy's mean gives, or as they are.
_TO_INT, _TO_FLOAT, _AS_IS = "int", "float", None


def _reduce(fn, a, axis=None, dtype=None, keepdims=None, promote_int=_TO_INT, bool_fn=None, preserve_bool=False):
    """np_array_ops._reduce: ``fn`` over ``axis`` of ``a`` (converted to ``dtype``); an integer or bool array
    is first cast as ``promote_int`` says, a bool one reduced by ``bool_fn`` where that keeps it bool."""
    want = numpy_dtype(dtype)
    keep = False if keepdims is None else truth(keepdims)
    t = asarray(a, want)
    ax = to_axis(axis)
    if bool_fn is not None and (want == np.bool_ or preserve_bool and t.dtype == np.bool_):
        return bool_fn(t, ax, keep)
    if want is None and t.dtype.kind in "iub":
        if promote_int == _TO_INT:
            signed = t.dtype.kind != "u"
            t = ops.cast(t, np.dtype(np.int64 if signed else np.uint64) if t.dtype.itemsize < 8 or t.dtype.kind == "b"
                         else t.dtype)
        elif promote_int == _TO_FLOAT:
            t = ops.cast(t, np.dtype(np.float64))
    return fn(t, ax, keep)


def _any(t, axis, keepdims):
    return Tensor(np.asarray(np.any(t.value, axis=axis, keepdims=keepdims)))


def _all(t, axis, keepdims):
    return Tensor(np.asarray(np.all(t.value, axis=axis, keepdims=keepdims)))


@numpy_function("sum")
def sum_(a, axis=None, dtype=None, keepdims=None):
    return _reduce(ops.reduce_sum, a, axis, dtype, keepdims, bool_fn=_any)


@numpy_function()
def prod(a, axis=None, dtype=None, keepdims=None):
    return _reduce(ops.reduce_prod, a, axis, dtype, keepdims, bool_fn=_all)


def _no_out(out):
    if out is not None:
        raise TdfValueError("Setting out is not supported.")


@numpy_function()
def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    _no_out(out)
    return _reduce(ops.reduce_mean, a, axis, dtype, keepdims, promote_int=_TO_FLOAT)


@numpy_function()
def amax(a, axis=None, out=None, keepdims=None):
    _no_out(out)
    return max_(a, axis, keepdims)


@numpy_function("max")
def max_(a, axis=None, keepdims=None):
    """tnp.max, whose third parameter is ``keepdims`` (tnp.amax's is ``out``)."""
    return _reduce(ops.reduce_max, a, axis, None, keepdims, promote_int=_AS_IS, bool_fn=_any, preserve_bool=True)


@numpy_function()
def amin(a, axis=None, out=None, keepdims=None):
    _no_out(out)
    return min_(a, axis, keepdims)


@numpy_function("min")
def min_(a, axis=None, keepdims=None):
    """tnp.min, whose third parameter is ``keepdims`` (tnp.amin's is ``out``)."""
    return _reduce(ops.reduce_min, a, axis, None, keepdims, promote_int=_AS_IS, bool_fn=_all, preserve_bool=True)


@numpy_function()
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=None):
    """The variance (np_array_ops.var); with ``ddof``, the sum of squared deviations over ``n - ddof``, cast to
    ``dtype`` (which TensorFlow's own code then needs: without one it is TensorFlow's TypeError)."""
    _no_out(out)
    # (the working dtype is NumPy's reading of ``dtype``, the result's tf.cast's: Python's float is float32 there)
    want = None if dtype is None else to_dtype(float32_for_float(dtype))
    working = result_type(a, numpy_dtype(dtype)) if dtype is not None else None
    delta = to_int(ddof, "ddof")

    def reduce_fn(t, ax, keep):
        if delta == 0:
            return reduce_variance(t, ax, keep)
        if want is None:
            raise TdfTypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
        deviations = ops.reduce_sum(ops.square(ops.sub(t, ops.reduce_mean(t, ax, True))), ax, keep)
        axes = range(t.ndim) if ax is None else ax if isinstance(ax, tuple) else (ax,)
        n = int(np.prod([t.shape[i] for i in axes])) - delta
        return ops.div(deviations, Tensor(np.array(n, dtype=t.dtype)))
    result = _reduce(reduce_fn, a, axis, None if working is None else working, keepdims, promote_int=_TO_FLOAT)
    return result if want is None else ops.cast(result, want)


@numpy_function()
def std(a, axis=None, keepdims=None):
    return _reduce(reduce_std, a, axis, None, keepdims, promote_int=_TO_FLOAT)


@numpy_function("all")
def all_(a, axis=None, keepdims=None):
    return _all(asarray(a, np.dtype(np.bool_)), to_axis(axis), truth(keepdims) if keepdims is not None else False)


@numpy_function("any")
def any_(a, axis=None, keepdims=None):
    return _any(asarray(a, np.dtype(np.bool_)), to_axis(axis), truth(keepdims) if keepdims is not None else False)


def _integral(t: Tensor) -> Tensor:
    """np_array_ops._maybe_promote_to_int: an integer narrower than int64 widened to it (NumPy's cumsum)."""
    if t.dtype.kind in "iu":
        widest = np.promote_types(t.dtype, np.int64)
        if widest != t.dtype:
            return ops.cast(t, widest)
    return t


def _scan(fn, a, axis, dtype):
    t = asarray(a, numpy_dtype(dtype))
    if dtype is None:
        t = _integral(t)
    if axis is None:
        return fn(ops.reshape(t, (-1,)), 0)
    return fn(t, check_axis(to_int(axis, "axis"), t.ndim, "cumsum"))


@numpy_function()
def cumsum(a, axis=None, dtype=None):
    return _scan(ops.cumsum, a, axis, dtype)


@numpy_function()
def cumprod(a, axis=None, dtype=None):
    return _scan(ops.cumprod, a, axis, dtype)


# ------------------------------------------------------------------ shapes

@numpy_function()
def size(x, axis=None):
    """The number of elements: NumPy's int64 product of the dimensions (a Python number's is the Python int 1)."""
    if axis is not None:
        raise TdfValueError("axis argument is not supported in the current `np.size` implementation")
    if x.__class__ is Tensor and x.weak and x.ndim == 0:
        return Tensor(np.array(1, dtype=np.int64), weak=True)
    return NumpyArray(np.array(asarray(x).size, dtype=np.int64))


@numpy_function()
def ndim(a):
    return Tensor(np.array(asarray(a).ndim, dtype=np.int64), weak=True)


@numpy_function()
def shape(a):
    return _tensor_attribute(asarray(a), "shape")


@numpy_function()
def isscalar(num):
    return Tensor(np.array(asarray(num).ndim == 0), weak=True)


@numpy_function()
def ravel(a):
    return ops.reshape(asarray(a), (-1,))


@numpy_function()
def reshape(a, newshape, order="C"):
    """``a`` in ``newshape`` (one entry may be -1), read in C order, or Fortran's (``order="F"``)."""
    if order not in ("C", "F"):
        raise TdfValueError(f"Unsupported order argument {order}")
    t = asarray(a)
    dims = list(to_shape(newshape, negative=True))
    if order == "F":
        return ops.transpose(_reshaped(ops.transpose(t), dims[::-1]))
    return _reshaped(t, dims)


def _reshaped(t: Tensor, dims: list) -> Tensor:
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise ShapeError(f"cannot reshape array of size {t.size} into shape {tuple(dims)}")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or t.size % known:
            raise ShapeError(f"cannot reshape array of size {t.size} into shape {tuple(dims)}")
        dims[dims.index(-1)] = t.size // known
    if int(np.prod(dims)) != t.size:
        raise ShapeError(f"cannot reshape array of size {t.size} into shape {tuple(dims)}")
    return ops.reshape(t, tuple(dims))


@numpy_function()
def flatten(a, order="C"):
    t = asarray(a)
    if order in ("C", "A", "K"):
        return ops.reshape(t, (-1,))
    if order == "F":
        return ops.reshape(ops.transpose(t), (-1,))
    raise TdfValueError("order can only be C, A, K (all row major) or F (column major).")


@numpy_function()
def expand_dims(a, axis):
    return tf_expand_dims(asarray(a), axis)


@numpy_function()
def squeeze(a, axis=None):
    return tf_squeeze(asarray(a), axis)


@numpy_function()
def transpose(a, axes=None):
    t = asarray(a)
    return ops.transpose(t, None if axes is None else to_shape(axes))


@numpy_function()
def swapaxes(a, axis1, axis2):
    t = asarray(a)
    first, second = (check_axis(to_int(x, "axis"), t.ndim, "swapaxes") for x in (axis1, axis2))
    perm = list(range(t.ndim))
    perm[first], perm[second] = second, first
    return ops.transpose(t, perm)


@numpy_function()
def moveaxis(a, source, destination):
    """``a`` with the axes ``source`` moved to the places ``destination`` (each an int or a sequence)."""
    sources, destinations = (tuple(to_shape([v] if isinstance(v, int) else v, negative=True))
                             for v in (source, destination))
    if not sources and not destinations:
        return a
    t = asarray(a)
    if len(sources) != len(destinations):
        raise TdfValueError("The lengths of source and destination must equal")
    sources = [s + t.ndim if s < 0 else s for s in sources]
    destinations = [d + t.ndim if d < 0 else d for d in destinations]
    perm = [i for i in range(t.ndim) if i not in sources]
    for dest, src in sorted(zip(destinations, sources)):
        if dest > len(perm):
            raise ShapeError(f"moveaxis: destination {dest} is out of bounds for array of dimension {t.ndim}")
        perm.insert(dest, src)
    return ops.transpose(t, perm)


def at_least(n: int, a) -> Tensor:
    """np_array_ops._atleast_nd with NumPy's placement of the new axes: a scalar is [[x]], a vector [v] (and
    [v] with an axis after, for 3-d), a matrix m[..., None] for 3-d."""
    t = asarray(a)
    if t.ndim >= n:
        return t
    if n == 3 and t.ndim == 2:
        return ops.reshape(t, t.shape + (1,))
    if n == 3 and t.ndim == 1:
        return ops.reshape(t, (1,) + t.shape + (1,))
    return ops.reshape(t, (1,) * (n - t.ndim) + t.shape)


def _at_least_all(n: int, arys):
    found = [at_least(n, a) for a in arys]
    return found[0] if len(found) == 1 else found


@numpy_function()
def atleast_1d(*arys):
    return _at_least_all(1, arys)


@numpy_function()
def atleast_2d(*arys):
    return _at_least_all(2, arys)


@numpy_function()
def atleast_3d(*arys):
    return _at_least_all(3, arys)


@numpy_function()
def broadcast_to(array, shape):  # noqa: A002
    return full(shape, array)


@numpy_function()
def broadcast_arrays(*args, **kwargs):
    """The arrays broadcast to their common shape."""
    if truth(kwargs.pop("subok", False)):
        raise TdfValueError("subok=True is not supported.")
    if kwargs:
        raise TdfValueError(f"Received unsupported arguments {list(kwargs)}")
    arrays = [asarray(a) for a in args]
    try:
        common = np.broadcast_shapes(*(t.shape for t in arrays))
    except ValueError:
        raise ShapeError("broadcast_arrays: shapes " + ", ".join(str(list(t.shape)) for t in arrays) +
                         " do not broadcast") from None
    return [tf_broadcast_to(t, common) for t in arrays]


# ------------------------------------------------------------------ joining and splitting

def _arrays(arys, what: str) -> list:
    if isinstance(arys, Tensor) and not arys.weak:
        return ops.rows(arys)
    if isinstance(arys, Tensor):            # (a Python list of numbers: its rows)
        return ops.rows(asarray(arys))
    if not isinstance(arys, (list, tuple)) or not arys:
        raise TdfValueError(f"Need at least one array to {what}.")
    return list(arys)


@numpy_function()
def stack(arrays, axis=0):
    """The arrays (promoted to one dtype) stacked along a new ``axis``; a tensor is the stack of its rows."""
    at = to_int(axis, "axis")
    if isinstance(arrays, Tensor) and not arrays.weak:
        t = asarray(arrays)
        return t if at == 0 else swapaxes(t, 0, at)
    return ops.stack(promote(*_arrays(arrays, "stack")), at)


@numpy_function()
def hstack(tup):
    arrays = promote(*(at_least(1, a) for a in _arrays(tup, "concatenate")))
    return ops.concat(arrays, 0 if arrays[0].ndim == 1 else 1)


@numpy_function()
def vstack(tup):
    return ops.concat(promote(*(at_least(2, a) for a in _arrays(tup, "concatenate"))), 0)


@numpy_function()
def dstack(tup):
    return ops.concat(promote(*(at_least(3, a) for a in _arrays(tup, "concatenate"))), 2)


@numpy_function()
def concatenate(arys, axis=0):
    """The arrays (converted to their result type) joined along ``axis``."""
    arrays = _arrays(arys if isinstance(arys, (list, tuple)) or is_python(arys) else [arys], "concatenate")
    return ops.concat(promote(*arrays), to_int(axis, "axis"))


@numpy_function()
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


@numpy_function()
def split(ary, indices_or_sections, axis=0):
    """``ary`` in equal sections (an int), or cut at the indices given (np.split's boundaries, not tf.split's
    sizes)."""
    t = asarray(ary)
    at = to_int(axis, "axis")
    sections = indices_or_sections
    if isinstance(sections, Tensor) and sections.ndim == 0:
        return tf_split(t, to_int(sections, "indices_or_sections"), at)
    if at >= t.ndim:
        raise TdfValueError(f"axis {at} is out of bound for shape {tuple(t.shape)}")
    total, sizes, previous = t.shape[at], [], 0
    for i, b in enumerate(to_shape(sections, negative=True)):
        if b - previous < 0:
            raise TdfValueError(f"The {i}-th boundary {b} is smaller than the previous boundary {previous}")
        sizes.append(min(b - previous, max(0, total - sum(sizes))))
        previous = b
    sizes.append(max(0, total - sum(sizes)))
    return tf_split(t, sizes, at)


def _split_on(axis: int):
    def along(ary, indices_or_sections):
        t = asarray(ary)
        at = 0 if axis == 1 and t.ndim == 1 else axis
        if isinstance(indices_or_sections, Tensor) and indices_or_sections.ndim == 0 \
                and t.shape[at] % to_int(indices_or_sections):
            raise TdfValueError("array split does not result in an equal division")
        return split(t, indices_or_sections, at)
    return along


numpy_function("vsplit")(_split_on(0))
numpy_function("hsplit")(_split_on(1))
numpy_function("dsplit")(_split_on(2))


@numpy_function()
def repeat(a, repeats, axis=None):
    return tf_repeat(asarray(a), asarray(repeats), axis)


@numpy_function()
def tile(a, reps):
    """``a`` repeated ``reps`` times along each axis; the shorter of ``a``'s shape and ``reps`` padded with ones
    in front."""
    t = asarray(a)
    counts = list(to_shape(reps))
    counts = [1] * (t.ndim - len(counts)) + counts
    t = ops.reshape(t, (1,) * (len(counts) - t.ndim) + t.shape)
    return ops.tile(t, counts)


# ------------------------------------------------------------------ rearranging

@numpy_function()
def flip(m, axis=None):
    t = asarray(m)
    if axis is None:
        return ops.reverse(t, list(range(t.ndim)))
    return ops.reverse(t, [check_axis(to_int(axis, "axis"), t.ndim, "flip")])


@numpy_function()
def flipud(m):
    return flip(m, 0)


@numpy_function()
def fliplr(m):
    return flip(m, 1)


@numpy_function()
def roll(a, shift, axis=None):
    t = asarray(a)
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(t, (-1,)), [to_int(shift, "shift")], [0]), t.shape)
    shifts, axes = list(to_shape(shift, negative=True)), list(to_shape(axis, negative=True))
    if len(shifts) == 1 and len(axes) > 1:
        shifts *= len(axes)
    return ops.roll(t, shifts, axes)


@numpy_function()
def rot90(m, k=1, axes=(0, 1)):
    t = asarray(m)
    first, second = (check_axis(a, t.ndim, "rot90") for a in to_shape(axes, negative=True))
    turns = to_int(k, "k") % 4
    if turns == 0:
        return t
    if turns == 2:
        return flip(flip(t, first), second)
    perm = list(range(t.ndim))
    perm[first], perm[second] = second, first
    return ops.transpose(flip(t, second), perm) if turns == 1 else flip(ops.transpose(t, perm), second)


@numpy_function()
def pad(array, pad_width, mode, **kwargs):  # noqa: A002
    """tf.pad of ``array``: modes "constant", "reflect" and "symmetric" only."""
    if mode not in ("constant", "reflect", "symmetric"):
        raise TdfValueError(f"Unsupported padding mode: {mode}")
    return tf_pad(asarray(array), asarray(pad_width, np.dtype(np.int32)), mode.upper(),
                  kwargs.get("constant_values", 0))


# ------------------------------------------------------------------ sorting, searching, statistics

@numpy_function()
def sort(a, axis=-1, kind="quicksort", order=None):
    if kind != "quicksort":
        raise TdfValueError(f'Invalid value for argument `kind`. Only kind="quicksort" is supported. Received: '
                            f"kind={kind}")
    if order is not None:
        raise TdfValueError("The `order` argument is not supported. Pass order=None")
    t = asarray(a)
    if axis is None:
        return ops.sort(ops.reshape(t, (-1,)), 0)
    return ops.sort(t, to_int(axis, "axis"))


@numpy_function()
def argsort(a, axis=-1, kind="quicksort", order=None):
    """The indices that sort ``a`` (ties in order), int64."""
    if kind not in ("quicksort", "stable"):
        raise TdfValueError('Invalid value for argument `kind`. Only kind="quicksort" and kind="stable" are '
                            f"supported. Received: kind={kind}")
    if order is not None:
        raise TdfValueError("The `order` argument is not supported. Pass order=None")
    t = asarray(a)
    if t.ndim == 0:
        return Tensor(np.zeros(1, dtype=np.int64))
    found = ops.argsort(ops.reshape(t, (-1,)), 0) if axis is None else ops.argsort(t, to_int(axis, "axis"))
    return ops.cast(found, np.dtype(np.int64))


def _arg_extreme(f, a, axis):
    t = asarray(a)
    if axis is None:
        return f(ops.reshape(t, (-1,)), 0)
    t = t if t.ndim else ops.reshape(t, (1,))
    return f(t, check_axis(to_int(axis, "axis"), t.ndim, "argmax"))


@numpy_function()
def argmax(a, axis=None):
    return _arg_extreme(ops.argmax, a, axis)


@numpy_function()
def argmin(a, axis=None):
    return _arg_extreme(ops.argmin, a, axis)


@numpy_function()
def count_nonzero(a, axis=None):
    return tf_count_nonzero(asarray(a), axis)


@numpy_function()
def ptp(a, axis=None, keepdims=None):
    return ops.sub(amax(a, axis=axis, keepdims=keepdims), amin(a, axis=axis, keepdims=keepdims))


@numpy_function()
def average(a, axis=None, weights=None, returned=False):
    """The mean (integers as float64), or the ``weights``-weighted mean; with ``returned``, the sum of the weights
    beside it."""
    if axis is not None and not (isinstance(axis, Tensor) and axis.ndim == 0):
        raise TdfValueError(f"Argument `axis` must be an integer. Received axis={axis}")
    at = None if axis is None else to_int(axis, "axis")
    t = asarray(a)
    if weights is None:
        t = as_float(t)
        avg = ops.reduce_mean(t, at)
        count = t.size if at is None else t.shape[at]
        total = Tensor(np.array(count, dtype=t.dtype))
    else:
        floats = [] if t.dtype.kind == "f" else [np.dtype(np.float64)]
        dtype = result_type(t.dtype, weights, *floats)
        t, w = asarray(t, dtype), asarray(weights, dtype)
        if at is None or t.ndim == w.ndim:
            if t.shape != w.shape:
                raise ShapeError(f"average: the weights' shape {list(w.shape)} differs from a's {list(t.shape)}")
            total = ops.reduce_sum(w, at)
            avg = ops.div(ops.reduce_sum(ops.mul(t, w), at), total)
        else:
            total = ops.reduce_sum(w)
            avg = ops.div(ops.tensordot(t, w, [[at % t.ndim], [0]]), total)
    if truth(returned):
        return PythonTuple([avg, tf_broadcast_to(total, avg.shape)])
    return avg


def _nan_reduction(name: str, reduction, fill):
    def run(a, axis=None, dtype=None, keepdims=False):
        t = asarray(a)
        filled = ops.where(Tensor(np.isnan(as_float(t).value)), Tensor(np.array(fill, dtype=t.dtype)), t)
        return reduction(filled, axis=axis, dtype=dtype, keepdims=keepdims)
    run.__name__ = name
    numpy_function(name)(run)
    return run


nansum = _nan_reduction("nansum", sum_, 0)
_nan_reduction("nanprod", prod, 1)


@numpy_function()
def nanmean(a, axis=None, dtype=None, keepdims=None):
    t = asarray(a)
    if t.dtype.kind != "f":
        return mean(t, axis=axis, dtype=dtype, keepdims=keepdims)
    present = Tensor(~np.isnan(t.value))
    want = dtype if dtype is not None else t.dtype
    return ops.div(nansum(t, axis=axis, dtype=want, keepdims=keepdims),
                   sum_(present, axis=axis, dtype=want, keepdims=keepdims))


@numpy_function()
def around(a, decimals=0):
    """Rounded to ``decimals`` (halves to even), as ``round(a * 10**d) / 10**d`` in a float dtype, then cast
    back to ``a``'s."""
    t = asarray(a)
    factor = 10.0 ** to_int(decimals, "decimals")
    work = t if t.dtype.kind == "f" else tensor_astype(t, np.dtype(np.float64))
    scale = Tensor(np.array(factor, dtype=work.dtype))
    return tensor_astype(ops.div(ops.round_(ops.mul(work, scale)), scale), t.dtype)


numpy_function("round")(around)
