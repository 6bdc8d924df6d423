"""Functional control flow as eager TensorFlow runs it (tf.cond, tf.while_loop, tf.switch_case, tf.case,
tf.scan, tf.map_fn, tf.foldl/foldr, tf.vectorized_map) and the gradient wrappers (tf.custom_gradient as a
function, tf.recompute_grad, tf.grad_pass_through). In eager mode TensorFlow calls the program's functions
in Python, so every op they run records itself: the gradients through each construct are those of the ops
it ran. The options that only shape a graph (parallel_iterations, swap_memory, shape_invariants, back_prop,
infer_shape, name) are accepted and change nothing, as in eager TensorFlow."""
from __future__ import annotations

import contextlib

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, NoAttribute, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import CUSTOM_GRADIENT, BoundMethod, ProgramObject, custom_gradient_call, flatten
from tapecli.interpreter.registry import builtin, register
from tapecli.library.core import to_dtype
from tapecli.runtime.context import current
from tapecli.runtime.limits import admit_bytes, tick
from tapecli.runtime.specs import RaggedTensorSpec, Shape, static_shape
from tapecli.runtime.tape import Tape, check_unconnected, recording, type_word
from tapecli.interpreter.classes import off_the_tape
from tapecli.runtime.values import DType, NumpyArray, PythonBool, Tensor, Variable, dtype_name
from tapecli.runtime import spelling


# ------------------------------------------------------------- nests (tf.nest)
def pack_as(structure, leaves: list):
    """``leaves`` in the shape of ``structure`` (tf.nest.pack_sequence_as)."""
    it = iter(leaves)

    def pack(s):
        if isinstance(s, (list, tuple)):
            return type(s)(pack(v) for v in s)
        if isinstance(s, dict):
            packed = {k: pack(s[k]) for k in sorted(s)}
            return {k: packed[k] for k in s}
        return next(it)
    return pack(structure)


def same_structure(a, b) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b) and \
            all(same_structure(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b) and \
            all(same_structure(a[k], b[k]) for k in a)
    return True


def _tensor(value, where: str) -> Tensor:
    try:
        return ops.to_tensor(value)
    except TdfTypeError:
        raise TdfTypeError(f"{where}: expected tensors, got {type_word(value)}") from None


def _strong(value, where: str) -> Tensor:
    """A program value converted as tf.convert_to_tensor converts it: a literal takes its default dtype."""
    t = _tensor(value, where)
    return ops.materialize(t) if t.weak else t


# ------------------------------------------------------------- branches
@builtin("cond", interp=True)
def cond(interp, pred, true_fn=None, false_fn=None, name=None):
    """tf.cond: eager TensorFlow calls the branch the predicate picks and returns what it returns."""
    if true_fn is None or false_fn is None:
        raise TdfTypeError(f"tf.cond(): '{'true_fn' if true_fn is None else 'false_fn'}' argument required")
    return interp.call_value(true_fn if _predicate(pred, "tf.cond") else false_fn, [])


def _predicate(pred, where: str) -> bool:
    t = _tensor(pred, where)
    if t.dtype.kind != "b":
        raise TdfTypeError(f"{where}: the predicate must be a bool tensor, got {t.dtype}")
    if t.value.size != 1:
        raise TdfValueError(f"{where}: the predicate must be a single bool, got shape {list(t.shape)}")
    return bool(t.value.reshape(()))


@builtin("switch_case", interp=True)
def switch_case(interp, branch_index, branch_fns, default=None, name="switch_case"):
    """tf.switch_case: branch_fns a list (or a dict of int keys, or (key, fn) pairs); an index that names no
    branch runs ``default``, and without one the last branch."""
    if not isinstance(branch_index, (Tensor, Variable)) or getattr(branch_index, "weak", False):
        raise TdfTypeError(f"tf.switch_case(): 'branch_index' must be a Tensor, got {type_word(branch_index)}",
                           hint=spelling.call("constant", "i"))
    t = ops.to_tensor(branch_index)
    if t.dtype.kind not in "iu" or t.ndim != 0:
        raise TdfTypeError(f"tf.switch_case(): 'branch_index' must be a scalar int32 Tensor, got {t.dtype} {list(t.shape)}")
    if isinstance(branch_fns, dict):
        branch_fns = list(branch_fns.items())
    if branch_fns and all(isinstance(b, (list, tuple)) for b in branch_fns):
        pairs = sorted(((to_int(k, "a branch key"), f) for k, f in branch_fns), key=lambda kv: kv[0])
    else:
        pairs = list(enumerate(branch_fns))
    keys = [k for k, _ in pairs]
    if keys != list(range(len(keys))):
        raise TdfValueError(f"tf.switch_case(): branch_fns keys must be 0..{len(keys) - 1}, got {keys}")
    if not pairs:
        raise TdfValueError("tf.switch_case(): branch_fns must not be empty")
    index = int(t.value)
    fn = pairs[index][1] if 0 <= index < len(pairs) else (default if default is not None else pairs[-1][1])
    return interp.call_value(fn, [])


switch_case.literals = "a Python index is refused, as TensorFlow does"     # (interpreter/registry.py: call_builtin)
cond.branches = switch_case.branches = "what the branch returns, as it returns it"


@builtin("case", interp=True)
def case(interp, pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """tf.case: the first pair whose predicate holds runs (eager TensorFlow does not check ``exclusive``);
    none holding runs ``default``, and without one is an error."""
    if not isinstance(pred_fn_pairs, (list, tuple)):
        raise TdfTypeError("tf.case(): pred_fn_pairs must be a list of (predicate, function) pairs")
    for pair in pred_fn_pairs:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise TdfTypeError("tf.case(): each entry of pred_fn_pairs is a (predicate, function) pair")
        pred = pair[0]
        if not isinstance(pred, (Tensor, Variable)) or getattr(pred, "weak", False):
            raise TdfTypeError(f"tf.case(): pred must be a Tensor, got: {type_word(pred)}")
    for pred, fn in pred_fn_pairs:
        if _predicate(pred, "tf.case"):
            return interp.call_value(fn, [])
    if default is None:
        raise TdfValueError("tf.case(): none of the conditions evaluated as True and there is no default")
    return interp.call_value(default, [])


case.branches = cond.branches


# ------------------------------------------------------------- loops
@builtin("while_loop", interp=True)
def while_loop(interp, cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """tf.while_loop (TensorFlow 2: the result has loop_vars' structure): ``cond(*vars)`` and
    ``vars = body(*vars)`` in Python, at most ``maximum_iterations`` times; the result's leaves are tensors."""
    loop_vars = _numbers_listed(loop_vars)
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise TdfValueError("tf.while_loop(): 'loop_vars' must be provided: a non-empty list or tuple")
    limit = None
    if maximum_iterations is not None:
        m = _tensor(maximum_iterations, "tf.while_loop(maximum_iterations=)")
        if m.ndim != 0:
            raise TdfValueError(f"'maximum_iterations' must be a scalar. Received shape: {list(m.shape)}")
        limit = int(m.value)
    values, count = loop_vars, 0
    while True:
        go = _predicate(interp.call_value(cond, list(values)), "tf.while_loop's cond")
        if limit is not None and count >= limit or not go:
            break
        result = _numbers_listed(interp.call_value(body, list(values)))
        if not isinstance(result, (list, tuple)) or not same_structure(list(result), list(loop_vars)):
            raise TdfValueError("tf.while_loop(): body must return the structure of loop_vars "
                                f"({len(loop_vars)} value(s)), got {type_word(result)}")
        values, count = result, count + 1       # (TensorFlow 2 returns the body's structure, tuple or list)
        tick()
    return pack_as(values, [leaf if isinstance(leaf, TensorArray) else _strong(leaf, "tf.while_loop")
                            for leaf in flatten(values)])


def _numbers_listed(value):
    """A list of Python numbers (a weak tensor as a literal arrives; on CPython a body's ``[i + 1, s * 2]`` of
    Python ints too) as the list of its numbers, each a weak tensor."""
    if isinstance(value, Tensor) and value.weak and value.ndim == 1:
        return [Tensor(v, weak=True) for v in value.value]
    return value


def _rows(elems, where: str) -> tuple[list, list, int]:
    """elems as tf.scan/map_fn read it: its leaves as tensors (a tf.SparseTensor as it is: it gives its rows), and
    how many rows they share."""
    leaves = [leaf if hasattr(leaf, "row") else _strong(leaf, where) for leaf in flatten(elems)]
    if not leaves:
        raise TdfValueError(f"{where}: elems must be a tensor or a nest of tensors")
    if any(len(t.shape) == 0 for t in leaves):
        raise TdfValueError(f"{where}: elems must be tensors of rank 1 or more (a list of numbers is a nest of "
                            "scalars: wrap it in tf.constant)")
    n = leaves[0].shape[0]
    if any(t.shape[0] != n for t in leaves):
        raise TdfValueError(f"{where}: the elems tensors have different first dimensions: "
                            f"{[t.shape[0] for t in leaves]}")
    return leaves, elems, n


def _row(leaves, structure, i):
    return pack_as(structure, [t.row(i) if hasattr(t, "row") else ops.getitem(t, i) for t in leaves])


def _stack(outputs: list, structure, where: str, dtypes=None):
    flat = [flatten(o) for o in outputs]
    columns = []
    for j in range(len(flat[0])):
        column = [_strong(o[j], where) if dtypes is None else ops.cast(_tensor(o[j], where), dtypes[j])
                  for o in flat]
        columns.append(ops.stack(column))
    return pack_as(structure, columns)


def _fold(interp, fn, elems, initializer, where, reverse, keep_all):
    leaves, structure, n = _rows(elems, where)
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise TdfValueError(f"{where}: elems is empty and there is no initializer")
        acc, order = _row(leaves, structure, order[0]), order[1:]
        outputs = [acc]
    else:
        acc, outputs = initializer, []
    for i in order:
        acc = interp.call_value(fn, [acc, _row(leaves, structure, i)])
        outputs.append(acc)
        tick()
    if not keep_all:
        return pack_as(acc, [_strong(leaf, where) for leaf in flatten(acc)])
    if not outputs:
        raise TdfValueError(f"{where}: elems is empty: there is nothing to stack")
    if reverse:
        outputs = outputs[::-1]
    return _stack(outputs, acc, where)


@builtin("foldl", interp=True)
def foldl(interp, fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """tf.foldl: acc = fn(acc, row) over elems' rows, first to last (acc starts at initializer or row 0)."""
    return _fold(interp, fn, elems, initializer, "tf.foldl", False, False)


@builtin("foldr", interp=True)
def foldr(interp, fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """tf.foldr: as tf.foldl, last row to first."""
    return _fold(interp, fn, elems, initializer, "tf.foldr", True, False)


@builtin("scan", interp=True)
def scan(interp, fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """tf.scan: every accumulator of the fold, stacked (in elems' order, also with reverse=True)."""
    return _fold(interp, fn, elems, initializer, "tf.scan", truth(reverse), True)


@builtin("map_fn", interp=True)
def map_fn(interp, fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """tf.map_fn: fn on each row of elems, the results stacked. Their structure and dtypes are
    fn_output_signature's (or dtype's), else elems' (as TensorFlow: a result of another dtype is an error)."""
    if dtype is not None and fn_output_signature is not None:
        raise TdfValueError("tf.map_fn(): the arguments 'dtype' and 'fn_output_signature' cannot both be given")
    leaves, structure, n = _rows(elems, "tf.map_fn")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    if isinstance(signature, RaggedTensorSpec) or signature is None and len(leaves) == 1 \
            and getattr(leaves[0], "is_ragged", False):     # (rows of a ragged result: elems' spec, or the one given)
        from tapecli.library.tf_ragged_ops import rows_of   # (ragged tensors' family: loaded where one is made)
        results = []
        for i in range(n):
            results.append(interp.call_value(fn, [_row(leaves, structure, i)]))
            tick()
        return rows_of(results, leaves[0].dtype if signature is None else signature.dtype.np)
    if signature is None and any(hasattr(t, "row") for t in leaves):
        raise TdfValueError("tf.map_fn(): fn's results would be SparseTensors, as elems is one: tapecli stacks "
                            "tensors only", hint="give fn_output_signature (a dtype)")
    if signature is None:
        want_structure, want = structure, [t.dtype for t in leaves]
    else:
        want_structure, want = signature, [to_dtype(d) for d in flatten(signature)]
    if n == 0:
        raise TdfValueError("tf.map_fn(): elems has no rows: tapecli cannot infer the result's shape")
    outputs = []
    for i in range(n):
        out = interp.call_value(fn, [_row(leaves, structure, i)])
        if not same_structure(out, want_structure) or len(flatten(out)) != len(want):
            raise TdfValueError("tf.map_fn(): fn's result does not have the structure of "
                                + ("fn_output_signature" if signature is not None else "elems (give fn_output_signature)"))
        for leaf, d in zip(flatten(out), want):
            t = _tensor(leaf, "tf.map_fn")
            if not t.weak and t.dtype != d:
                raise TdfTypeError(f"tf.map_fn(): fn returned {t.dtype}, the output signature says {d}"
                                   + ("" if signature is not None else " (elems' dtype): give fn_output_signature"))
        outputs.append(out)
        tick()
    return _stack(outputs, want_structure, "tf.map_fn", dtypes=want)


@builtin("vectorized_map", interp=True)
def vectorized_map(interp, fn, elems, fallback_to_while_loop=True, warn=True):
    """tf.vectorized_map: fn on each row of elems, the results stacked (their dtypes are fn's)."""
    leaves, structure, n = _rows(elems, "tf.vectorized_map")
    if n == 0:
        raise TdfValueError("tf.vectorized_map(): elems has no rows: tapecli cannot infer the result's shape")
    outputs = []
    for i in range(n):
        outputs.append(interp.call_value(fn, [_row(leaves, structure, i)]))
        tick()
    return _stack(outputs, outputs[0], "tf.vectorized_map")


# ------------------------------------------------------------- gradient wrappers
class _Wrapped(ProgramObject):
    """What tf.custom_gradient(f), tf.recompute_grad(f) and tf.grad_pass_through(f) give: a callable."""

    kind_word = "a function"

    def __init__(self, fn, kind: str):
        self.fn = fn
        self.kind = kind
        self.name = getattr(fn, "name", kind)

    def call(self, interp, args, kwargs, node):
        if self.kind == "custom_gradient":
            return custom_gradient_call(interp, self.name, lambda: interp.call_value(self.fn, args, kwargs, node),
                                        args, kwargs)
        if self.kind == "grad_pass_through":
            if len(args) != 1 or kwargs:
                raise TdfTypeError("tf.grad_pass_through(f): the function takes one tensor")
            return custom_gradient_call(interp, self.name,
                                        lambda: [interp.call_value(self.fn, args, {}, node), _IDENTITY_GRAD], args, {})
        return custom_gradient_call(interp, self.name, lambda: self._recomputed(interp, args, kwargs, node), args,
                                    kwargs)

    def _recomputed(self, interp, args, kwargs, node):
        """TensorFlow's recompute_grad: f's result, unrecorded, and a gradient function that calls f again on
        identities of its tensor arguments under a tape of its own, differentiated with respect to them and to the
        variables f read (unconnected ones: zeros)."""
        y = interp.call_value(self.fn, args, kwargs, node)
        if isinstance(y, (list, tuple, dict)):
            raise TdfTypeError(f"tf.recompute_grad({self.name}): tapecli records a function giving one tensor, not "
                               f"{type_word(y)}")

        def backward(call_node, dy, variables=None):
            from tapecli.autodiff.gradients import gradient        # (a recompute_grad's backward pass: rare)
            inputs = [ops.identity(a) if _a_tensor(a) else a for a in args]       # (a Python number stays one)
            tape = Tape("<recompute_grad>")
            with recording(tape, alone=True):
                for t, a in zip(inputs, args):
                    if _a_tensor(a):
                        tape.watch_tensor(t, None, None)
                for v in variables or []:
                    tape.watch_variable(v, "watch", None)
                recomputed = interp.call_value(self.fn, inputs, kwargs, node)
            sources = [t for t, a in zip(inputs, args) if _a_tensor(a)]
            _, values, _ = gradient(tape, recomputed, sources + list(variables or []), output_gradients=dy,
                                    unconnected_gradients="zero")
            found = dict(zip(map(id, sources), values))
            # one gradient an input as custom_gradient_call counts them (a Python number's, a nested one's: None)
            grads = [found.get(id(t)) for t, a in zip(inputs, args) for _ in _counted(a)] + \
                [None for _ in _counted(kwargs)]
            return [grads, values[len(sources):]] if variables else grads
        grad_fn = BoundMethod("recompute_grad", backward)
        grad_fn.takes_keyword = lambda name: name == "variables"
        return [y, grad_fn]


def _a_tensor(value) -> bool:
    return isinstance(value, (Tensor, Variable)) and not getattr(value, "weak", False)


def _counted(value) -> list:
    """The inputs custom_gradient_call makes of an argument: its leaves that are tensors or Python numbers."""
    return [a for a in flatten(value if isinstance(value, (list, tuple, dict)) else [value])
            if isinstance(a, (Tensor, Variable, bool, int, float))]


def _identity_grad(dy):
    return dy


_identity_grad.is_builtin = True
_identity_grad.wants_interp = False
_identity_grad.positional = (1, 1)
_IDENTITY_GRAD = _identity_grad


@builtin("custom_gradient")
def custom_gradient(f=None):
    """tf.custom_gradient(f) (also @tf.custom_gradient): f returns (y, grad_fn)."""
    if f is None:
        return custom_gradient
    return _Wrapped(f, "custom_gradient")


@builtin("recompute_grad")
def recompute_grad(f):
    """tf.recompute_grad: f runs unrecorded, and again in the backward pass, whose gradients are the recomputation's
    (f's Python runs twice, as TensorFlow's)."""
    return _Wrapped(f, "recompute_grad")


@builtin("grad_pass_through")
def grad_pass_through(f):
    """tf.grad_pass_through: the value of f(x), the gradient of the identity."""
    return _Wrapped(f, "grad_pass_through")


# ------------------------------------------------------------- tapes as values
@builtin("GradientTape")
def gradient_tape(persistent=False, watch_accessed_variables=True):
    """tf.GradientTape runs as a block: ``with tf.GradientTape() as t:``, or ``t = tf.GradientTape()`` and then
    ``with t:`` in the same block (the front end makes both the tape block); any other use of the call is refused."""
    raise TdfTypeError("tapecli runs a GradientTape in a with statement: `with tf.GradientTape() as t:`, or "
                       "`t = tf.GradientTape()` followed by `with t:` in the same block")


class _Enum(ProgramObject):
    """An enum of TensorFlow whose members are the strings its functions also accept."""

    kind_word = "an enum"

    def __init__(self, name: str, members: dict):
        self.name, self.members = name, members

    def get_attribute(self, interp, attr, node):
        if attr not in self.members:
            raise TdfTypeError(f"{self.name} has no member {attr}", hint=f"one of {', '.join(self.members)}")
        return self.members[attr]


register("UnconnectedGradients", _Enum("tf.UnconnectedGradients", {"NONE": "none", "ZERO": "zero"}))


# ------------------------------------------------------------- TensorArray, py_function
class TensorArray(ProgramObject):
    """tf.TensorArray as eager TensorFlow keeps it: a list of tensors (``write`` stores in place and gives the
    array back), read once by default (``clear_after_read``), unwritten entries zeros of the element shape.
    One made inside a tf.function is TensorFlow's TensorList there, which ignores ``clear_after_read``: its
    entries may be read again.
    Its reads, stacks and gathers are ops on the tapes, so gradients flow through it."""

    kind_word = "a TensorArray"

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if handle is not None or flow is not None:
            raise TdfValueError("TensorArray handles are not supported when eager execution is enabled.")
        if size is None:
            raise TdfValueError("Size must be declared for TensorArrays when eager execution is enabled.")
        self.dtype = to_dtype(dtype)
        count = to_int(size, "size")
        admit_bytes(count, count * 8, "a TensorArray")      # (a list of that many slots, before it is made)
        self.items: list = [None] * count
        self.dynamic = truth(dynamic_size) if dynamic_size is not None else False
        in_graph = current().functions > 0
        self.clear = not in_graph and (truth(clear_after_read) if clear_after_read is not None else True)
        self.infer = truth(infer_shape)
        given = None if element_shape is None else static_shape(element_shape)     # (dimensions may be None)
        self.shape = tuple(given) if given is not None and given.known else None
        self.read_before: set = set()

    def get_attribute(self, interp, attr, node):
        if attr == "dtype":
            return DType(dtype_name(self.dtype))
        if attr == "element_shape":         # (known once given or written: unstack leaves it as it was)
            return Shape(self.shape)
        if attr == "dynamic_size":
            return self.dynamic
        method = getattr(self, "m_" + attr, None)
        if method is None:
            raise TdfTypeError(f"TensorArray has no method {attr} in tapecli")
        return BoundMethod(attr, lambda call_node, *a, **k: method(*a, **k))

    def _index(self, index, what):
        i = to_int(index, "index")
        if i < 0:
            raise TdfValueError(f"{what} negative indices (index {i}) is not allowed.")
        return i

    def _zero(self, i):
        if self.items[i] is None:
            if self.shape is None or None in self.shape:
                raise TdfValueError("TensorArray: an unwritten entry, and no element shape to make its zeros")
            self.items[i] = Tensor(np.zeros(self.shape, self.dtype))
        return self.items[i]

    def m_write(self, index, value, name=None):
        i = self._index(index, "Writing to")
        if i >= len(self.items):
            if not self.dynamic:
                raise TdfValueError(f"Tried to write to index {i} but array is not resizeable and size is: "
                                    f"{len(self.items)}")
            self.items.extend([None] * (i - len(self.items) + 1))
        t = _tensor(value, "TensorArray.write") if not isinstance(value, list) else ops.stack(value)
        if t.weak:
            t = ops.materialize(t, self.dtype if self.dtype.kind == "f" or t.dtype.kind != "f" else None)
        if t.dtype != self.dtype:
            raise TdfTypeError(f"TensorArray dtype is {dtype_name(self.dtype)} but Op is trying to write dtype "
                               f"{dtype_name(t.dtype)}")
        if self.shape is not None and (len(t.shape) != len(self.shape) or any(
                d is not None and d != n for d, n in zip(self.shape, t.shape))):
            raise TdfValueError(f"Incompatible shape for value ({list(t.shape)}), expected ({list(self.shape)})")
        if self.infer:
            self.shape = tuple(t.shape)
        self.items[i] = t
        return self

    def m_read(self, index, name=None):
        i = self._index(index, "Reading from")
        if i >= len(self.items):
            raise TdfValueError(f"Tried to read from index {i} but array size is: {len(self.items)}")
        if self.items[i] is None and i in self.read_before:
            raise KernelValueError(f"Could not read index {i} twice because it was cleared after a previous read "
                                "(perhaps try setting clear_after_read = false?)")
        t = self._zero(i)
        if self.clear:
            self.items[i] = None
            self.read_before.add(i)
        return t

    def m_stack(self, name=None):
        if not self.items:
            return Tensor(np.zeros((0, *(self.shape if self.shape and None not in self.shape else ())), self.dtype))
        return ops.stack([self._zero(i) for i in range(len(self.items))])

    def m_gather(self, indices, name=None):
        return ops.stack([self._zero(to_int(i, "an index")) for i in _ints(indices)])

    def m_concat(self, name=None):
        return ops.concat([self._zero(i) for i in range(len(self.items))], 0)

    def m_unstack(self, value, name=None):
        rows = ops.rows(_strong(value, "TensorArray.unstack"))
        if len(rows) > len(self.items) and not self.dynamic:
            raise TdfValueError(f"Cannot unstack {len(rows)} tensors into a TensorArray of static size "
                                f"{len(self.items)}")
        self.items = list(rows)
        return self

    def m_split(self, value, lengths, name=None):
        """The rows of ``value`` in consecutive pieces of ``lengths`` rows, one an element."""
        t, sizes = _strong(value, "TensorArray.split"), _ints(lengths)
        if sum(sizes) != (t.shape[0] if t.ndim else None):
            raise TdfValueError(f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                                f"{sum(sizes)} and value's shape is: {list(t.shape)} ")
        if not self.dynamic and len(sizes) != len(self.items):
            raise TdfValueError(f"TensorArray's size is not equal to the size of lengths ({len(self.items)} vs. "
                                f"{len(sizes)}), and the TensorArray is not marked as dynamically resizeable.")
        starts = np.cumsum([0, *sizes])
        self.items = [ops.getitem(t, slice(int(a), int(b))) for a, b in zip(starts[:-1], starts[1:])]
        return self

    def m_scatter(self, indices, value, name=None):
        for i, row in zip(_ints(indices), ops.rows(_strong(value, "TensorArray.scatter"))):
            self.m_write(i, row)
        return self

    def m_size(self, name=None):
        return Tensor(np.array(len(self.items), dtype=np.int32))

    def m_identity(self):
        return self

    def m_close(self, name=None):
        return None


def _ints(indices) -> list:
    if isinstance(indices, list):
        return [to_int(i, "an index") for i in indices]
    return [int(i) for i in np.atleast_1d(ops.to_tensor(indices).value)]


@builtin("TensorArray")
def tensor_array(dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None, handle=None,
                 flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True, name=None):
    return TensorArray(dtype, size, dynamic_size, clear_after_read, tensor_array_name, handle, flow, infer_shape,
                       element_shape, colocate_with_first_write_call, name)


@builtin("py_function", interp=True)
def py_function(interp, func=None, inp=None, Tout=None, name=None):  # noqa: N803 (TensorFlow's name)
    """tf.py_function: eager TensorFlow runs func on the tensors, on the tape (gradients flow through it);
    the results are converted to Tout. Without func, a decorator: the function it decorates runs so on its
    arguments."""
    decorator = _script_decorator(interp, "tf.py_function", py_function, func, inp, Tout)
    if decorator is not None:
        return decorator
    sources = [_strong(a, "tf.py_function") for a in _arguments(inp)]      # (TensorFlow converts each argument to a tensor)
    inputs = [Tensor(t.value) for t in sources]     # the function's own eager tensors
    inner = Tape("<py_function>", persistent=True)
    for t in inputs:
        inner.watch_tensor(t, None, None)
    with recording(inner, alone=True), _eagerly(interp):   # (the tapes outside see the op, not what it did)
        outputs = _outputs(interp.call_value(func, inputs), Tout, "tf.py_function")
    if not any(t.recording for t in current().tapes) or not sources:
        return outputs
    if isinstance(outputs, list):
        return [_recorded_py_function(interp, inner, sources, inputs, o) for o in outputs]
    return _recorded_py_function(interp, inner, sources, inputs, outputs)


def _recorded_py_function(interp, inner, sources, inputs, output):
    """``output`` of a py_function as one op of the tapes outside, its inputs the function's tensor arguments: its
    gradient is the function's own tape's, a None of an unconnected argument a scalar 0.0 (TensorFlow's EagerFunc
    converts a gradient function's None so)."""
    from tapecli.autodiff.gradients import gradient       # (a py_function on a tape: rare)

    def backward(call_node, dy):
        _, values, _ = gradient(inner, output, inputs, output_gradients=dy)
        return [Tensor(np.zeros((), s.dtype)) if g is None else g for g, s in zip(values, sources)]
    made = Tensor(output.value)
    ops.emit(CUSTOM_GRADIENT, sources, made, {"backward": BoundMethod("tf.py_function", backward),
                                               "name": "tf.py_function", "variables": [], "args": len(sources),
                                               "interp": interp})
    return made


@builtin("numpy_function", interp=True)
def numpy_function(interp, func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """tf.numpy_function: func computes on NumPy values, which no tape follows (its gradient is None); without
    func, a decorator."""
    decorator = _script_decorator(interp, "tf.numpy_function", numpy_function, func, inp, Tout)
    if decorator is not None:
        return decorator
    inside = current().functions > 0
    # eagerly TensorFlow calls func on np.array of each argument (a Python float: float64) and converts what it
    # returns as it is (Tout unread); inside a tf.function on the arrays of the op's tensors, its results cast to Tout
    arrays = [NumpyArray(np.array(_strong(a, "tf.numpy_function").value if inside else _python_value(a)))
              for a in _arguments(inp)]
    with _eagerly(interp):
        result = off_the_tape(lambda: interp.call_value(func, arrays), "tf.numpy_function", None, _arguments(inp))
    if not inside:
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        results = [Tensor(_strong(v, "tf.numpy_function").value) for v in values]     # (a NumPy array: a tensor of it)
        return results[0] if len(results) == 1 else results
    return _outputs(_numpy_results(result, Tout), Tout, "tf.numpy_function")


def _python_value(value):
    """What np.array takes of a program's argument: a tensor's array, a Python value as it is."""
    if isinstance(value, (Tensor, Variable)):
        t = ops.to_tensor(value)
        return t.value.item() if t.weak and t.ndim == 0 else t.value
    return value


def _numpy_results(result, tout):
    """What a numpy_function's function returned as NumPy converts it to Tout (np.asarray(value, dtype)), as
    TensorFlow's FuncRegistry does."""
    if isinstance(tout, list):
        values = result if isinstance(result, list) else [result]
        return [_numpy_result(v, d) for v, d in zip(values, tout)] if len(values) == len(tout) else result
    return _numpy_result(result, tout)


def _numpy_result(value, dtype):
    if isinstance(value, (Tensor, Variable)):
        return Tensor(np.asarray(ops.to_tensor(value).value, dtype=to_dtype(dtype)))
    return value


@contextlib.contextmanager
def _eagerly(interp):
    """A py_function's or numpy_function's function runs eagerly, each time it is called: outside any tf.function
    (its prints run even where the tf.function calling it runs its traced graph)."""
    holders = [h for h in (interp, getattr(interp, "sandbox", None)) if hasattr(h, "muted_prints")]
    ctx = current()
    held, functions = [h.muted_prints for h in holders], ctx.functions
    for h in holders:
        h.muted_prints = 0
    ctx.functions = 0
    try:
        yield
    finally:
        for h, muted in zip(holders, held):
            h.muted_prints = muted
        ctx.functions = functions


def _arguments(inp) -> list:
    """The arguments of a py_function's ``inp`` (a list of Python numbers may come as one tensor: its rows)."""
    return ops.rows(inp) if isinstance(inp, Tensor) else list(inp)


def _script_decorator(interp, where, script_op, func, inp, tout):
    """TensorFlow's _check_args_and_maybe_make_decorator: Tout is required; without func, a decorator whose
    function takes its arguments as ``inp``; else ``inp`` is required."""
    if tout is None:
        raise TdfTypeError(f"Missing required argument: 'Tout'\n  If using {where} as a decorator, set `Tout`\n"
                           f"  **by name** above the function:\n  `@{where}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TdfTypeError(f"Don't set the `inp` argument when using {where} as a decorator (`func=None`).")
        return BoundMethod(where, lambda call_node, fun: BoundMethod(
            where, lambda node, *args: script_op(interp, fun, list(args), tout)))
    if inp is None:
        raise TdfTypeError(f"Missing argument `inp`:\n  You must set the `inp` argument (the list of arguments to "
                           f"the\n  function), unless you use `{where}` as a decorator(`func=None`).")
    return None


def _outputs(result, tout, where):
    if tout is None:
        raise TdfTypeError(f"{where}(): Tout is required")
    if isinstance(tout, list):
        values = result if isinstance(result, list) else [result]
        if len(values) != len(tout):
            raise TdfValueError(f"{where}(): func returned {len(values)} value(s) for {len(tout)} Tout dtype(s)")
        return [_output(v, d, where) for v, d in zip(values, tout)]
    return _output(result, tout, where)


def _output(value, dtype, where):
    want = to_dtype(dtype)
    t = _tensor(value, where)
    if t.weak:
        return ops.materialize(t, want)
    if t.dtype != want:
        raise TdfTypeError(f"{where}(): func returned {dtype_name(t.dtype)}, Tout says {dtype_name(want)}")
    return t if t.__class__ is Tensor else Tensor(t.value)      # (a NumPy array returned: TensorFlow's tensor of it)


@builtin("executing_eagerly")
def executing_eagerly():
    """tapecli runs as eager TensorFlow does (a @tf.function body too: tracing changes no value)."""
    return PythonBool(np.array(True))


# ------------------------------------------------------------- forward mode
class ForwardAccumulator(ProgramObject):
    """tf.autodiff.ForwardAccumulator(primals, tangents): inside its ``with`` block a tape of its own records
    the ops on the primals; ``jvp(target)`` pushes the tangents through those records with the ops'
    forward-mode rules (the rules tapecli's forward-mode jacobians use)."""

    kind_word = "a ForwardAccumulator"

    def __init__(self, primals, tangents):
        self.primals = flatten(primals)
        self.tangents = flatten(tangents)
        if len(self.primals) != len(self.tangents):
            raise TdfValueError(f"ForwardAccumulator: {len(self.primals)} primal(s) but {len(self.tangents)} tangent(s)")
        self.seeds = {}
        for p, t in zip(self.primals, self.tangents):
            value = ops.to_tensor(p)
            tangent = _tensor(t, "ForwardAccumulator's tangents")
            tangent = ops.materialize(tangent, value.dtype) if tangent.weak else tangent
            if tuple(tangent.shape) != tuple(value.shape) or tangent.dtype != value.dtype:
                raise TdfValueError(f"ForwardAccumulator: a tangent of shape {list(tangent.shape)} "
                                    f"{dtype_name(tangent.dtype)} for a primal of shape {list(value.shape)} "
                                    f"{dtype_name(value.dtype)}")
            self.seeds[value.id] = Tensor(tangent.value[None])          # a batch of one tangent
        self.tape = Tape("<ForwardAccumulator>")
        self._block = None          # its ``with`` block while it runs (runtime/tape.recording)

    def enter(self):
        ctx = current()
        for p in self.primals:
            if isinstance(p, Variable):
                self.tape.watch_variable(p, "watch", ctx.settings.line)
            else:
                self.tape.watch_tensor(ops.to_tensor(p), None, ctx.settings.line)
        self._block = recording(self.tape)
        self._block.__enter__()
        return self

    def exit(self):
        block, self._block = self._block, None
        block.__exit__(None, None, None)

    def get_attribute(self, interp, attr, node):
        if attr != "jvp":
            raise NoAttribute(f"ForwardAccumulator has no attribute {attr} in tapecli", hint="use acc.jvp(target)")
        return BoundMethod(attr, lambda call_node, *a, **k: self.jvp(*a, **k))

    def jvp(self, primals, unconnected_gradients="none"):
        unconnected = check_unconnected(unconnected_gradients)
        if isinstance(primals, (list, dict)):
            return pack_as(primals, [self.jvp(p, unconnected) for p in flatten(primals)])
        target = ops.to_tensor(primals)
        ctx = current()
        path, reach = self.tape.path(list(self.seeds), per_op=True)
        tangents = dict(self.seeds)
        ctx.running.append(self.tape)
        try:
            for rec in path:
                ts = [tangents.get(inp.id) for inp in rec.inputs]
                if all(t is None for t in ts):
                    continue
                if rec.op.jvp is None:
                    raise TdfTypeError(f"ForwardAccumulator: the op {rec.op.name} has no forward-mode rule in tapecli")
                out = rec.op.jvp(rec, ts)
                if out is not None:
                    tangents[rec.output.id] = out
        finally:
            ctx.running.pop()
        found = tangents.get(target.id)
        if found is None:
            return None if unconnected == "none" else Tensor(np.zeros(target.shape, dtype=target.dtype))
        return ops.reshape(found, target.shape)


@builtin("ForwardAccumulator")
def forward_accumulator(primals, tangents):
    return ForwardAccumulator(primals, tangents)
