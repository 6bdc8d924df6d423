"""keras.ops' control flow and scatter functions (keras/src/backend/tensorflow/core.py): switch, fori_loop,
map, while_loop and vectorized_map call the program's functions as TensorFlow's switch_case, while_loop, map_fn
and vectorized_map do, associative_scan as Keras's parallel prefix scan; scatter,
scatter_update and slice_update write into a copy; multi_hot is one_hot's maximum over the last input axis."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras.common import dims, integer
from tapecli.library.keras.ops_arrays import _ints
from tapecli.library.keras.ops_numpy import _tensor
from tapecli.runtime.values import DType, Tensor


def switch(interp, index, branches, *operands):
    """The branch at ``index`` (clipped into range) called with the operands."""
    i = min(max(int(_tensor(index).value), 0), len(branches) - 1)
    return interp.call_value(branches[i], list(operands))


def fori_loop(interp, lower, upper, body_fun, init_val):
    value = init_val
    for i in range(integer(lower, "lower"), integer(upper, "upper")):
        value = interp.call_value(body_fun, [Tensor(np.asarray(i, np.int32)), value])
    return value


def while_loop(interp, cond, body, loop_vars, maximum_iterations=None):
    """tf.while_loop on a tuple of the loop variables (a list's too: the result is a tuple), or on one value (the
    result one value), as Keras's."""
    from tapecli.library.control import while_loop as tf_while_loop
    from tapecli.runtime.limits import tick
    if isinstance(loop_vars, (list, tuple)) or isinstance(loop_vars, Tensor) and loop_vars.weak and loop_vars.ndim:
        return tuple(tf_while_loop(interp, cond, body, loop_vars, maximum_iterations=maximum_iterations))
    from tapecli.library.control import _predicate, _strong
    limit = None if maximum_iterations is None else integer(maximum_iterations, "maximum_iterations")
    value, count = loop_vars, 0
    while (limit is None or count < limit) and _predicate(interp.call_value(cond, [value]),
                                                          "keras.ops.while_loop's cond"):
        value, count = interp.call_value(body, [value]), count + 1
        tick()
    return _strong(value, "keras.ops.while_loop")


def vectorized_map(interp, function, elements):
    from tapecli.library.control import vectorized_map as tf_vectorized_map
    return tf_vectorized_map(interp, function, elements)


def keras_map(interp, f, xs):
    """f on each row of xs (a tensor or a structure of them), the results stacked (as tf.map_fn, its output
    signature f's result on the first row)."""
    from tapecli.library.control import map_fn
    signature = _signature(interp.call_value(f, [_first_rows(xs)]))
    return map_fn(interp, f, xs, fn_output_signature=signature)


def _first_rows(xs):
    if isinstance(xs, dict):
        return {k: _first_rows(v) for k, v in xs.items()}
    if isinstance(xs, (list, tuple)):
        return type(xs)(_first_rows(v) for v in xs)
    return ops.getitem(_tensor(xs), 0)


def _signature(out):
    if isinstance(out, dict):
        return {k: _signature(v) for k, v in out.items()}
    if isinstance(out, (list, tuple)):
        return type(out)(_signature(v) for v in out)
    return DType(str(_tensor(out).dtype))


def scatter(indices, values, shape):
    return ops.scatter_nd(_tensor(indices), _tensor(values), tuple(dims(shape, "shape")))


def scatter_update(inputs, indices, updates, reduction=None):
    from tapecli.library.tf_array import tensor_scatter_nd_update
    t, i, u = _tensor(inputs), _tensor(indices), _tensor(updates)
    if reduction is None:
        return tensor_scatter_nd_update(t, i, u)
    if reduction == "add":
        return ops.tensor_scatter_nd_add(t, i, u)
    raise TdfValueError(f"Unsupported reduction: {reduction}" if reduction not in ("max", "min", "mul") else
                        f"keras.ops.scatter_update(reduction={reduction!r}) is not supported by tapecli")


def slice_update(inputs, start_indices, updates):
    """inputs with the block at ``start_indices`` replaced by ``updates``: the block's cells scattered."""
    t, u = _tensor(inputs), _tensor(updates)
    starts = _ints(start_indices)
    cells = np.stack(np.indices(u.shape), -1) + np.asarray(starts, np.int64)
    return scatter_update(t, Tensor(cells.reshape(-1, t.ndim)), ops.reshape(u, (-1,)))


def get_item(x, key):
    return ops.getitem(_tensor(x), _index(key))


def _index(key):
    """A key as the call gives it (Python numbers arrive as weak tensors) as Python's subscript takes it."""
    if isinstance(key, (tuple, list)):
        return tuple(_index(k) for k in key)
    if isinstance(key, Tensor) and key.weak:
        return key.value.item() if key.ndim == 0 else key.value
    return key


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, num_tokens=None):
    """one_hot's maximum over the indices' axis (the second of a batch, the only one of a vector)."""
    from tapecli.library.keras.utilities import ops_one_hot
    if sparse:
        raise TdfValueError("ops.multi_hot(sparse=True) is not supported by tapecli")
    hot = ops_one_hot(inputs, num_classes if num_classes is not None else num_tokens, axis, dtype)
    return ops.reduce_max(hot, 1 if _tensor(inputs).ndim > 1 else 0)


def associative_scan(interp, f, elems, reverse=False, axis=0):
    """Keras's (tfp.math.scan_associative's) parallel prefix scan along ``axis``: ``f`` of the pairs (0, 1),
    (2, 3), ... scanned again, then of each scanned pair with the next even element, interleaved; lengths 2 and 3
    the base cases. The same combination order as Keras's, so that a float scan rounds as its does."""
    from tapecli.library.control import flatten, pack_as
    leaves = [_tensor(e) for e in flatten(elems)]
    if not leaves:
        raise TdfValueError("associative_scan: elems must be a tensor or a structure of tensors")
    axis = integer(axis, "axis") % leaves[0].ndim
    if any(t.ndim <= axis or t.shape[axis] != leaves[0].shape[axis] for t in leaves):
        raise TdfValueError("Array inputs to associative_scan must have the same first dimension.")
    if reverse:
        leaves = [ops.reverse(t, [axis]) for t in leaves]

    def cut(t, start=0, stop=None, step=1):
        return ops.getitem(t, (slice(None),) * axis + (slice(start, stop, step),))

    def combine(a, b):
        return [_tensor(t) for t in flatten(interp.call_value(f, [pack_as(elems, a), pack_as(elems, b)]))]

    def interleave(a, b):
        head = cut(a, 0, b.shape[axis]) if a.shape[axis] == b.shape[axis] + 1 else a
        paired = ops.stack([head, b], axis + 1)
        both = ops.reshape(paired, [*b.shape[:axis], 2 * b.shape[axis], *b.shape[axis + 1:]])
        return ops.concat([both, cut(a, -1)], axis) if head is not a else both

    def scan(level):
        n = level[0].shape[axis]
        if n < 2:
            return level
        reduced = combine([cut(t, 0, -1, 2) for t in level], [cut(t, 1, None, 2) for t in level])
        if n == 2:
            return [ops.concat([cut(t, 0, 1), r], axis) for t, r in zip(level, reduced)]
        if n == 3:
            again = combine(reduced, [cut(t, 2, 3) for t in level])
            return [ops.concat([cut(t, 0, 1), r, rr], axis) for t, r, rr in zip(level, reduced, again)]
        odd = scan(reduced)
        results = combine([cut(o, 0, -1) for o in odd] if n % 2 == 0 else odd, [cut(t, 2, None, 2) for t in level])
        even = [ops.concat([cut(t, 0, 1), r], axis) for t, r in zip(level, results)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    scanned = scan(leaves)
    if reverse:
        scanned = [ops.reverse(t, [axis]) for t in scanned]
    return pack_as(elems, scanned)


FUNCTIONS = {"ops.scatter": scatter, "ops.scatter_update": scatter_update, "ops.slice_update": slice_update,
             "ops.get_item": get_item, "ops.multi_hot": multi_hot}
WITH_INTERP = {"ops.switch": switch, "ops.fori_loop": fori_loop, "ops.map": keras_map, "ops.while_loop": while_loop,
               "ops.vectorized_map": vectorized_map, "ops.associative_scan": associative_scan}
