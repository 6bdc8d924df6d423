"""The interpreter's values beside tensors: scopes, functions, tapes as values, bound methods,
gradient requests."""
from __future__ import annotations

import contextlib

import numpy as np

from tapecli.frontend import ast
from tapecli.frontend.spellings import graph_body, trace_only
from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.runtime.tape import Tape, as_tensor, recording
from tapecli.runtime import spelling
from tapecli.runtime.context import current
from tapecli.runtime.values import SEQUENCES, NumpyArray, PythonBool, PythonTuple, Tensor, Variable, is_float



def _list_as_tensor(value):
    """A list compared with a tensor: its elements stacked (an empty list is an empty tensor)."""
    if not isinstance(value, list):
        return value
    return ops.stack(value) if value else Tensor(np.zeros(0, dtype=np.int64), weak=True)



_MISSING = object()
_PYFUNCTION = type(lambda: None)
_FUSABLE = (ast.BinOp, ast.Call, ast.UnaryOp)       # expressions fusion may take (tapecli/fusion.py)

class Scope:
    __slots__ = ("vars", "parent", "consts")

    def __init__(self, parent: "Scope | None" = None):
        self.vars: dict = {}
        self.parent = parent
        self.consts: set[str] = set()

    def get(self, name: str, default=None):
        """The value bound to ``name`` here or in an enclosing scope, else ``default``."""
        scope = self
        while scope is not None:
            value = scope.vars.get(name, _MISSING)
            if value is not _MISSING:
                return value
            scope = scope.parent
        return default

    def lookup(self, name: str):
        value = self.get(name, _MISSING)
        if value is _MISSING:
            raise KeyError(name)
        return value

    def names(self) -> set[str]:
        out, scope = set(), self
        while scope is not None:
            out.update(scope.vars)
            scope = scope.parent
        return out


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Function:
    kind_word = "a function"
    traces = None       # a tf.function's Traces, made at its first call
    traced = False      # a @tf.function (or tf.function(f)): its calls run inside a function, variables it returns read
    relaxed = False     # tf.function(reduce_retracing=True)'s: Traces(relax=True)
    _graph_body = None

    def __init__(self, node: ast.FuncDef, closure: Scope, interp: object):
        self.node = node
        self.name = node.name
        self.closure = closure
        self.interp = interp
        self.plain = all(not p.kind for p in node.params)

    def __call__(self, args, kwargs=None, node=None):
        return self.interp.call_function(self, args, kwargs or {}, node)

    def graph_body(self, callee: bool = False) -> list:
        """What a call of this @tf.function that runs its traced graph executes (``callee``: a call of this
        function inside one): its body without the statements that are only Python side effects on objects from
        outside it (spellings.trace_only)."""
        if self._graph_body is None:
            self._graph_body = {}
        if callee not in self._graph_body:
            self._graph_body[callee] = graph_body(self.node, trace_only(self.node, callee)[0])
        return self._graph_body[callee]

    def bind(self, local: dict, args, kwargs, evaluate) -> None:
        """Bind a call's arguments to the parameters in ``local`` as Python does (positional, then keywords,
        then defaults evaluated in the closure; *args a list (as tuples are), **kwargs a dict; "pos" parameters only by
        position, "kw" ones only by keyword); ``evaluate(node, scope)`` computes a default."""
        params = self.node.params
        if self.plain:
            if len(args) > len(params):
                raise TdfTypeError(f"{self.name}() takes {len(params)} argument(s), got {len(args)}")
            for param, value in zip(params, args):
                local[param.name] = value
        else:
            positional = [p for p in params if p.kind in ("", "pos")]
            star = next((p for p in params if p.kind == "*"), None)
            if len(args) > len(positional) and star is None:
                raise TdfTypeError(f"{self.name}() takes {len(positional)} positional argument(s), got {len(args)}")
            for param, value in zip(positional, args):
                local[param.name] = value
            if star is not None:
                local[star.name] = PythonTuple(args[len(positional):])
        extra = next((p for p in params if p.kind == "**"), None) if not self.plain else None
        if extra is not None:
            local[extra.name] = {}
        for name, value in kwargs.items():
            param = next((p for p in params if p.name == name and p.kind in ("", "kw")), None)
            if param is None:
                if extra is None:
                    raise TdfTypeError(f"{self.name}() has no parameter {name}")
                local[extra.name][name] = value
                continue
            if name in local:
                raise TdfTypeError(f"{self.name}() got two values for {name}")
            local[name] = value
        for param in params:
            if param.name not in local:
                if param.default is None:
                    which = "keyword-only argument" if param.kind == "kw" else "argument"
                    raise TdfTypeError(f"{self.name}() is missing the {which} {param.name}")
                local[param.name] = evaluate(param.default, self.closure)


def trace_key(value):
    """What TensorFlow traces a ``tf.function`` again for, of one argument: a tensor's (or a NumPy array's,
    a variable's) shape and dtype, a Python number's value, the items of a list, tuple or dict, an object's
    identity. A call whose arguments' keys were all seen runs the traced graph, without the function's Python
    side effects (its ``print``s)."""
    if isinstance(value, Variable):
        return ("variable", value.shape, str(value.dtype))
    if isinstance(value, Tensor):
        if value.weak and value.ndim == 0:
            return ("python", value.value.item())
        return ("tensor", value.shape, str(value.dtype))
    if isinstance(value, np.ndarray):
        return ("tensor", value.shape, str(value.dtype))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(trace_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, trace_key(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))))
    if value is None or isinstance(value, (bool, int, float, str)):
        return ("python", value)
    return ("object", id(value))


class Traces:
    """The signatures a ``tf.function`` was traced for (per function object, so per run): ``seen(key)`` says
    whether a call with these arguments runs the traced graph (True) or traces (False, and remembers it). With
    an ``input_signature`` (its TensorSpecs), one trace serves every call. Each trace is a concrete function
    whose random ops are kernels of its own (``kernels``), going on from one of its calls to the next."""

    def __init__(self, signature=None, relax=False):
        self.keys: dict = {}        # (a dict: the traces in the order they were made)
        self.signature = signature
        self.relax = relax          # reduce_retracing: a new trace is for the shapes that cover the calls seen
        self.served: dict = {}      # reduce_retracing's: a call's key, the trace's that runs it
        self.again = 0          # traces TensorFlow made again, of a call whose trace made variables
        self.kernels: dict = {}     # by trace: its seeded random ops' kernels (tf_random.StatefulRandom)

    def _trace(self, key):
        return "input_signature" if self.signature is not None else self.served.get(key, key)

    def seen(self, key) -> bool:
        if self.relax and self.signature is None:
            return self._relaxed(key)
        key = self._trace(key)
        if key in self.keys:
            return True
        self.keys[key] = None
        return False

    def _relaxed(self, key) -> bool:
        """reduce_retracing (TypeDispatchTable): a call runs a trace whose shapes cover its own (its dimensions
        or None); else its key is relaxed against each trace in turn (their most specific common supertype:
        a dimension that differs unknown, a rank that differs unknown) and that relaxed key traces."""
        if key in self.served:
            return True
        found = next((trace for trace in self.keys if _covers(trace, key)), None)
        if found is not None:
            self.served[key] = found
            return True
        relaxed = key
        for trace in self.keys:
            relaxed = _supertype(relaxed, trace) or relaxed
        self.keys[relaxed] = None
        self.served[key] = relaxed
        return False

    @property
    def count(self) -> int:
        """experimental_get_tracing_count()."""
        return len(self.keys) + self.again

    @contextlib.contextmanager
    def tracing(self, arguments: dict, muted: bool, specs: dict | None = None, key=None):
        """A call (of the trace for ``key``; None: a trace that runs nothing, get_concrete_function's): while its
        body runs, its random ops are the trace's kernels, and where it traces, its parameters' tensors print
        as the graph's placeholders (``Tensor("x:0", shape=(None,), dtype=float32)``), with the
        input_signature's shapes (or ``specs``', by parameter)."""
        from tapecli.kernels.tf_random import run_state
        ctx = current()
        held, made = ctx.graph_arguments, len(ctx.variables)
        if not muted:
            listed = list(self.signature or ())
            specs = specs or {name: listed[n] for n, name in enumerate(arguments) if n < len(listed)}
            ctx.graph_arguments = {**held, **{id(v): _placeholder(name, v, specs.get(name))
                                              for name, v in arguments.items()
                                              if isinstance(v, Tensor) and not v.weak or isinstance(v, Variable)}}
        kernels = {} if key is None else self.kernels.setdefault(self._trace(key), {})
        try:
            with run_state().function_kernels(kernels):
                yield
        finally:        # (the interpreter's return is an exception)
            ctx.graph_arguments = held
            if not muted and len(ctx.variables) > made:     # (TensorFlow lifts the variables a trace made, and
                self.again += 1                              # traces the function again)


def _covers(trace, key) -> bool:
    """Whether a trace's key serves a call's: the same but for the trace's unknown dimensions and ranks."""
    if trace == key:
        return True
    if not (isinstance(trace, tuple) and isinstance(key, tuple)) or len(trace) != len(key):
        return False
    if trace[0] == "tensor" and key[0] == "tensor":
        return trace[2] == key[2] and (trace[1] is None or key[1] is not None and len(trace[1]) == len(key[1])
                                        and all(t is None or t == k for t, k in zip(trace[1], key[1])))
    return all(_covers(t, k) for t, k in zip(trace, key))


def _supertype(a, b):
    """The most specific key both keys' calls match (TensorShape's most_specific_common_supertype for a tensor),
    or None where there is none (Python values that differ, other dtypes, other structures)."""
    if a == b:
        return a
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
        return None
    if a[0] == "tensor" and b[0] == "tensor":
        if a[2] != b[2]:
            return None
        if a[1] is None or b[1] is None or len(a[1]) != len(b[1]):
            return ("tensor", None, a[2])
        return ("tensor", tuple(x if x == y else None for x, y in zip(a[1], b[1])), a[2])
    parts = [_supertype(x, y) for x, y in zip(a, b)]
    return None if any(p is None and (x is not None or y is not None) for p, x, y in zip(parts, a, b)) \
        else tuple(parts)


def _placeholder(name: str, value, spec) -> tuple[str, str, tuple]:
    """The str and repr of a traced function's parameter in its graph (a tensor's placeholder, a variable as
    captured, no value), and its static shape (the input_signature's, None where a dimension is unknown)."""
    if isinstance(value, Variable):
        text = f"<tf.Variable '{value.tf_name or 'Variable'}:0' shape={_dims(value.shape)} dtype={value.dtype.name}>"
        return text, text, value.shape
    static = tuple(value.shape if spec is None else spec.shape)
    dtype = value.dtype.name if spec is None else spec.dtype.name
    return (f'Tensor("{name}:0", shape={_dims(static)}, dtype={dtype})',
            f"<tf.Tensor '{name}:0' shape={_dims(static)} dtype={dtype}>", static)


def _dims(shape) -> str:
    return str(tuple(None if d is None else int(d) for d in shape))


def function_outputs(value):
    """What a ``tf.function`` returns: TensorFlow's function outputs are tensors, so a variable it returns (an
    ``assign``'s result) is read, a Python number or a NumPy array converted (tf.convert_to_tensor's dtypes), in a
    list, tuple or dict too."""
    if isinstance(value, Variable):
        return value.read()
    if value.__class__ is Tensor and value.weak:
        return ops.materialize(value)
    if value.__class__ is NumpyArray or value.__class__ is PythonBool:
        return Tensor(value.value)
    if value.__class__ in SEQUENCES:
        return value.__class__(function_outputs(v) for v in value)
    if value.__class__ is dict:
        return {k: function_outputs(v) for k, v in value.items()}
    return value


class Property:
    """A method defined under ``@property`` in a class: reading the attribute of an instance calls it."""

    kind_word = "a property"

    def __init__(self, getter: Function):
        self.getter = getter
        self.name = getter.name


class CustomGradientFunction(Function):
    """@custom_gradient: the body runs unrecorded; one op with the user's backward is recorded."""

    def __call__(self, args, kwargs=None, node=None):
        interp = self.interp
        return custom_gradient_call(interp, self.name, lambda: interp.call_function(self, args, kwargs or {}, node),
                                    args, kwargs or {})


def flatten(value) -> list:
    """The leaves of a nest of lists, tuples and dicts (dicts in sorted key order, as tf.nest)."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flatten(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in flatten(value[k])]
    return [value]


def custom_gradient_call(interp, name: str, call, args, kwargs):
    """TensorFlow's eager ``custom_gradient``: ``call()`` gives ``(y, grad_fn)``; y is recorded as one op whose
    inputs are the (flattened) arguments and the trainable variables the body read that are not arguments, and
    whose gradient is ``grad_fn(dy)`` — or ``grad_fn(dy, variables=[...])`` giving (input grads, variable grads)
    where the body read variables (grad_fn must then take ``variables``)."""
    watcher = Tape("<custom_gradient>")
    with recording(watcher, alone=True):
        result = call()
    if not (isinstance(result, (list, tuple)) and len(result) == 2 and _callable(result[1])):
        raise TdfTypeError(f"the custom_gradient function {name} must return (value, grad_fn)",
                           hint="end it with: return y, grad_fn")
    value, grad_fn = result
    shapes = None
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (Tensor, Variable)) for v in value):
        parts = [ops.to_tensor(v) for v in value]
        if len({p.dtype for p in parts}) == 1 and is_float(parts[0].dtype):
            # several outputs of one float dtype: one op of them all, flattened and joined, that each output is a
            # piece of (its gradient, zeros where an output is not used, is split again for grad_fn)
            shapes = [p.shape for p in parts]
            value = Tensor(np.concatenate([p.value.reshape(-1) for p in parts]))
    if isinstance(value, (list, tuple, dict)):
        raise TdfTypeError(f"the custom_gradient function {name} returns a structure: tapecli records one tensor",
                           hint="return one tensor (split the function in one per output)")
    flat_args = flatten(list(args)) + flatten(kwargs)
    inputs = [ops.to_tensor(a) for a in flat_args if isinstance(a, (Tensor, Variable, bool, int, float))]
    variables = [v for v in watcher.watched_variables() if all(v is not a for a in flat_args)]
    if variables and not takes_keyword(grad_fn, "variables"):
        raise TdfTypeError(f"@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function "
                           f"uses variables: {[v.name for v in variables]}")
    inputs += [ops.to_tensor(v) for v in variables]      # (watched by the tapes that read them, as TensorFlow)
    output = Tensor(ops.to_tensor(value).value)
    ops.emit(CUSTOM_GRADIENT, inputs, output, {"backward": grad_fn, "name": name, "variables": variables,
                                               "args": len(inputs) - len(variables), "interp": interp,
                                               "shapes": shapes})
    if shapes is None:
        return output
    return PythonTuple(ops.reshape(piece, shape) for piece, shape in zip(_pieces(output, shapes), shapes))


def _pieces(flat: Tensor, shapes) -> list:
    """``flat``'s pieces along its last axis, one of each shape's size."""
    pieces, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape, dtype=np.int64))
        pieces.append(ops.getitem(flat, (Ellipsis, slice(start, start + size))))
        start += size
    return pieces


def _callable(value) -> bool:
    return isinstance(value, (Function, ProgramObject, BoundMethod)) or getattr(value, "is_builtin", False)


def takes_keyword(fn, name: str) -> bool:
    if not isinstance(fn, Function):      # (a function CPython runs says so itself: execution/tf_calls.py)
        takes = getattr(fn, "takes_keyword", None)
        return takes is not None and takes(name)
    return any(p.name == name and p.kind != "pos" or p.kind == "**" for p in fn.node.params)


def _custom_vjp(record, g):
    backward, variables, interp = record.attrs["backward"], record.attrs["variables"], record.attrs["interp"]
    shapes = record.attrs.get("shapes")
    lead = g.shape[:g.ndim - 1] if shapes is not None else ()
    dys = [g] if shapes is None else [ops.reshape(piece, lead + tuple(shape))
                                      for piece, shape in zip(_pieces(g, shapes), shapes)]
    if variables:
        result = interp.call_value(backward, dys, {"variables": list(variables)})
        if not (isinstance(result, (list, tuple)) and len(result) == 2):
            raise TdfTypeError(f"the grad_fn of {record.attrs['name']} takes variables=, so it returns "
                               "(input gradients, variable gradients)")
        grads, variable_grads = result
        variable_grads = list(variable_grads) if isinstance(variable_grads, (list, tuple)) else [variable_grads]
        if len(variable_grads) != len(variables):
            raise TdfValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
    else:
        grads, variable_grads = interp.call_value(backward, dys), []
    grads = flatten(grads) if isinstance(grads, (list, tuple)) else [grads]
    if len(grads) != record.attrs["args"]:        # (TensorFlow's ValueError, and its words in a Python program)
        raise TdfValueError(spelling.either(
            f"the backward function of {record.attrs['name']} returned {len(grads)} gradient(s) for "
            f"{record.attrs['args']} input(s)", f"custom_gradient function expected to return {record.attrs['args']} "
            f"gradients, but returned {len(grads)} instead."))
    out = []
    for inp, gr in zip(record.inputs, grads + variable_grads):
        if gr is None:
            out.append(None)
            continue
        gr = ops.to_tensor(gr)
        out.append(ops.materialize(gr, inp.dtype) if gr.weak else gr)
    return tuple(out)


CUSTOM_GRADIENT = ops.Op("custom_gradient", vjp=_custom_vjp)


class TapeObject:
    """The program-visible tape: its methods are the gradient requests."""

    kind_word = "a tape"

    def __init__(self, tape: Tape, interp: object):
        self.tape = tape
        self.interp = interp


class PausedTape:
    """What ``tape.stop_recording()`` gives: a `with` statement runs its block with the tape paused."""

    kind_word = "a paused tape"

    def __init__(self, tape: Tape):
        self.tape = tape


class ProgramObject:
    """A program value implemented in Python (a layer, an optimizer, a loss, an instance of a program's
    class): the interpreter reads its attributes, assigns them and calls it through these three methods,
    so a new kind of object needs no change to the interpreter. ``kind_word`` names it in messages."""

    kind_word = "an object"
    indexed_by_values = False       # x[...] is x.index(items), the items as they are (slices of them)

    def get_attribute(self, interp, attr: str, node):
        raise TdfTypeError(f"{self.kind_word} has no attribute {attr}")

    def set_attribute(self, interp, attr: str, value, node) -> None:
        raise TdfTypeError(f"cannot set attribute {attr} of {self.kind_word}")

    def call(self, interp, args: list, kwargs: dict, node):
        raise TdfTypeError(f"{self.kind_word} is not callable")

    def items(self):
        """What a ``for`` loop, ``list()`` or a comprehension takes from the object, one by one."""
        raise TdfTypeError(f"cannot loop over {self.kind_word}")

    def owned_variables(self) -> list:
        """The variables this object holds, trainable or not, in its framework's order: what a
        ``tf.Module`` or Keras model that holds it collects into ``variables``."""
        return []

    # a Keras layer holding this object lists its ``layer_variables`` among its own variables, before those of the
    # layers it holds (a SeedGenerator's state), rather than in the order assigned
    keras_own_state = False

    def layer_variables(self) -> list:
        """What a Keras layer holding this object lists among its ``variables`` (not its ``weights``): the owned
        variables, and a layer's seed generators' states (library/keras)."""
        return self.owned_variables()

    def replay_kind(self, args: list, kwargs: dict, tracked) -> str | None:
        """What calling the object with these arguments is to a loop plan (``interpreter/loop_plans.py``):
        PURE where the call computes its tensors by kernels and changes nothing else; None (the default)
        where a loop calling it runs as written. ``tracked(value)``: whether a value comes from the plan's
        inputs (an argument the call reads into Python must not)."""
        return None


def object_operator(op: str, left, right):
    """A library object's own Python operator (``rt + 1``, ``rt == 0`` of a tf.RaggedTensor): the left operand's
    ``operator(op, other, reflected)``, else the right one's, else NotImplemented."""
    for value, other, reflected in ((left, right, False), (right, left, True)):
        if isinstance(value, ProgramObject) and hasattr(value, "operator"):
            return value.operator(op, other, reflected)
    return NotImplemented


# What a call is to a loop plan (interpreter/loop_plans.py): None, it may do anything (the loop runs as
# written); PURE, it computes tensors by kernels from its arguments' layouts and Python values and changes
# nothing; EFFECT, it changes variables (an optimizer's step, an assign), and a plan makes the call itself
# again on the new arrays; REQUEST, a tape's gradient: pure, and the plan adds its gradient request.
PURE, EFFECT, REQUEST = "pure", "effect", "request"


class BoundMethod:
    kind_word = "a method"

    def __init__(self, name, fn, replay: str | None = None, planned=None, function=None):
        self.name = name
        self.fn = fn
        self.replay = replay        # its kind, or a function of a call's (args, kwargs, tracked) giving it
        self.function = function    # the program's Function it calls (a method of its class), for a plan to take in
        # an effect's faster call in a loop plan: planned(args, kwargs, compiled), the traced call's argument
        # templates and whether the plan compiles its kernels, gives a function of the plan's slot list with
        # the call's effect, or None (interpreter/loop_steps.py)
        self.planned = planned


class Request:
    """One gradient/jacobian call, for `grad --json` and `jacobian --json`."""

    def __init__(self, kind, line, tape, target_text, labels, values, result, why, leaves=None, objective=None,
                 targets=None, tape_obj=None):
        self.kind = kind              # "gradient" | "jacobian" | "batch_jacobian"
        self.line = line
        self.tape = tape
        self.target_text = target_text
        self.labels = labels          # one per source leaf
        self.values = values          # one Tensor | None per source leaf
        self.why = why                # one str | None per source leaf
        self.result = result          # the structure returned to the program
        self.names: list | None = None
        self.second: list | None = None  # a hessian block's entries: each one's second source (None: the first's)
        self.leaves = leaves or []    # the source tensors/variables, for finite-difference checks
        self.versions = [leaf.version if isinstance(leaf, Variable) else None for leaf in self.leaves]
        self.snapshots = [as_tensor(leaf).value for leaf in self.leaves]     # source values when asked
        self._objective = objective   # () -> sum(target * seed) as asked (autodiff.gradients.objective)
        self.targets = targets        # the target tensors, kept for `explain`
        self.tape_obj = tape_obj      # the Tape itself, kept for `explain`

    @property
    def objective(self) -> float | None:
        """sum(target * seed) of a gradient request, for finite-difference checks (None for others)."""
        if callable(self._objective):
            self._objective = self._objective()
        return self._objective

    @property
    def site(self) -> tuple:
        """Where and of what the request was made: a loop's requests at one call site share it."""
        return self.kind, self.line, self.tape, self.target_text, tuple(self.labels)


class RequestLog(list):
    """The run's gradient requests in the order made. Marks count the requests made (``mark()``), so that the
    requests made since one (``since``) are found though the log forgets.

    A run whose command reports no request (``run``, ``bench``: the run context's ``keep_requests``) forgets each
    request when the next one is made, unless a gradient in it is None (the message of an error about that None
    names its request) and no later one was made at its call site: a long training loop holds its last step's
    gradients, not every step's (a Keras MLP's 2,000 steps held 400 MB)."""

    def __init__(self):
        super().__init__()
        self.made = 0
        self.keep_all = current().settings.keep_requests

    def mark(self) -> int:
        return self.made

    def since(self, mark: int) -> list:
        """The requests made after ``mark`` that the log holds."""
        start = len(self)
        while start and self[start - 1].seq >= mark:
            start -= 1
        return self[start:]

    def append(self, request: Request) -> None:
        request.seq = self.made
        self.made += 1
        if not self.keep_all and self:
            site = request.site
            self[:] = [r for r in self if r.site != site and any(v is None for v in r.values)]
        super().append(request)
