"""Scopes and checks of eager TensorFlow: ``tf.name_scope``, ``tf.control_dependencies``, ``tf.device``,
``tf.init_scope`` and Keras's ``name_scope`` / ``device`` run their ``with`` body as eager TensorFlow does
(ops run in program order, on the one device tapecli has); ``tf.Assert`` and the ``tf.assert_*`` checks raise
where TensorFlow does; ``tf.group`` is what eager TensorFlow makes of it (None)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfAssertionError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.objects import ProgramObject
from tapecli.interpreter.registry import builtin
from tapecli.library.core import NamedResult, to_dtype
from tapecli.runtime.context import current
from tapecli.runtime.tape import none_recording
from tapecli.runtime.values import PythonBool, Tensor, dtype_name


class Scope(ProgramObject):
    """A context whose ``with`` runs its body unchanged; ``as`` binds ``bound`` (None for most)."""

    kind_word = "a scope"

    def __init__(self, bound=None):
        self.bound = bound

    def enter(self):
        return self.bound

    def exit(self):
        return None


class NameScope(Scope):
    """``tf.name_scope(name)``: ``as`` binds "outer/name/", and ``tf.get_current_name_scope()`` reads
    "outer/name" inside (the run context keeps the open names); a name ending in "/" is the whole scope (a
    tf.Module's, taken where it was made). A ``tf.Variable`` made inside is named in it ("outer/name/v:0")."""

    def __init__(self, name, keras=False):
        if not isinstance(name, str):
            raise TdfTypeError("name_scope(name): name must be a string")
        super().__init__()
        self.name = name
        self.keras = keras
        self.outer = []

    def enter(self):
        ctx = current()
        self.outer = ctx.name_scopes
        ctx.name_scopes = [part for part in self.name.split("/") if part] if self.name.endswith("/") else \
            [*self.outer, self.name]
        return self if self.keras else "/".join(ctx.name_scopes) + "/"

    def exit(self):
        current().name_scopes = self.outer

    def get_attribute(self, interp, attr, node):
        if attr == "name":          # (the name given: a tf.Module's whole scope, "mlp/")
            return self.name
        return super().get_attribute(interp, attr, node)


@builtin("name_scope")
def name_scope(name):
    return NameScope(name)


@builtin("keras.name_scope")
def keras_name_scope(name, **kwargs):
    return NameScope(name, keras=True)


@builtin("get_current_name_scope")
def get_current_name_scope():
    return "/".join(current().name_scopes)


@builtin("control_dependencies")
def control_dependencies(control_inputs):
    """Eager ops run in program order: the inputs have run already (TensorFlow's eager no-op)."""
    return Scope()


@builtin("device", "keras.device")
def device(device_name):
    """tapecli has one device for a run (--device): a placement inside it changes no value."""
    if device_name is not None and not isinstance(device_name, str):
        raise TdfTypeError("device(device_name): the name must be a string such as '/cpu:0'")
    return Scope()


# ------------------------------------------------------------------ tf.config's devices

def _devices(kind: str, device_type) -> list:
    """The run's devices as TensorFlow lists them: the CPU, and the GPU a ``--device cuda`` run computes on;
    ``device_type`` ('CPU', 'GPU') keeps those of that type, compared as TensorFlow compares it (exactly)."""
    prefix = "/physical_device" if kind == "PhysicalDevice" else "/device"
    types = ["CPU"] + (["GPU"] if current().device is not None else [])
    return [NamedResult(("name", "device_type"), [f"{prefix}:{t}:0", t], kind)
            for t in types if device_type is None or device_type == t]


@builtin("list_physical_devices", "get_visible_devices")
def list_physical_devices(device_type=None):
    """tf.config.list_physical_devices (and get_visible_devices: tapecli hides none)."""
    return _devices("PhysicalDevice", device_type)


@builtin("list_logical_devices")
def list_logical_devices(device_type=None):
    return _devices("LogicalDevice", device_type)


@builtin("set_memory_growth")
def set_memory_growth(device, enable):
    """tf.config.experimental.set_memory_growth: how TensorFlow reserves GPU memory, which changes no value."""
    if not (isinstance(device, NamedResult) and device.type_name == "PhysicalDevice"):
        raise TdfValueError("set_memory_growth(device, enable): device is one of tf.config.list_physical_devices()")
    return None


class InitScope(Scope):
    """``tf.init_scope()``: lifts code out of a graph being built (eager code is in none), and pauses the
    gradient tapes while its body runs, as TensorFlow's does: what it computes is a constant to them."""

    def __init__(self):
        super().__init__()
        self._block = None          # its ``with`` block while it runs (runtime/tape.none_recording)

    def enter(self):
        self._block = none_recording(current().tapes)
        self._block.__enter__()
        return None

    def exit(self):
        block, self._block = self._block, None
        block.__exit__(None, None, None)


@builtin("init_scope")
def init_scope():
    return InitScope()


@builtin("group")
def group(*inputs, name=None):
    """Eager TensorFlow has run the inputs already: the group is None."""
    return None


def _tensor(value) -> Tensor:
    return ops.to_tensor(value)


@builtin("run_functions_eagerly")
def run_functions_eagerly(run_eagerly):
    """tf.config.run_functions_eagerly: each call of a tf.function runs its Python (its prints every time), and
    tf.inside_function() is False in it, until it is switched off."""
    current().functions_eagerly = truth(run_eagerly)
    return None


@builtin("functions_run_eagerly")
def functions_run_eagerly():
    return PythonBool(np.array(current().functions_eagerly))


_NUMERIC_KINDS = "iufc"


@builtin("debugging.is_numeric_tensor")
def is_numeric_tensor(tensor):
    """Whether ``tensor`` is a tensor of a numeric dtype (not bool, not string); a Python number, a NumPy array
    or a variable is none."""
    return PythonBool(np.array(tensor.__class__ is Tensor and not tensor.weak and tensor.dtype.kind in _NUMERIC_KINDS))


is_numeric_tensor.literals = True       # (a Python number is no tensor: not converted to one first)


@builtin("check_numerics", "assert_all_finite")
def check_numerics(tensor, message, name=None):
    """tf.debugging.check_numerics (and assert_all_finite): the tensor, or TensorFlow's InvalidArgumentError
    naming the NaN values it had first, else its infinities."""
    t = _tensor(tensor)
    if t.dtype.kind != "f":
        raise TdfTypeError(f"check_numerics needs a float tensor, got {dtype_name(t.dtype)}")
    values = np.asarray(t.value)
    for found, what in ((np.isnan(values), "NaN"), (np.isinf(values), "Inf")):
        if found.any():
            raise TdfAssertionError(f"{message} : Tensor had {what} values [Op:CheckNumerics] name: ")
    return t


@builtin("Assert")
def assert_(condition, data, summarize=None, name=None):
    """Raises if ``condition`` is false, with the data (InvalidArgumentError in TensorFlow)."""
    if not truth(_tensor(condition)):
        shown = ", ".join(str(np.asarray(_tensor(d).value).tolist()) for d in (data if isinstance(data, list) else [data]))
        raise TdfAssertionError(f"Assert: the condition is false; data: {shown}")
    return None


def _assert_lines(symbol, x, y, held, summarize) -> list[str]:
    """TensorFlow's message of a failed eager check_ops comparison (_make_assert_msg_data): the condition, the
    first differing values where x and y have one shape, and the first elements of each."""
    count = 3 if summarize is None else int(to_int(summarize, "summarize"))
    count = 10 ** 9 if count < 0 else count
    lines = [f"Condition x {symbol} y did not hold."]
    if count > 0:
        if x.shape == y.shape and x.ndim:
            mask = ~held
            shown = min(count, int(mask.sum()))
            lines += [f"Indices of first {shown} different values:", str(np.argwhere(mask)[:shown]),
                      "Corresponding x values:", str(x[mask].reshape(-1)[:shown]),
                      "Corresponding y values:", str(y[mask].reshape(-1)[:shown])]
        for name, v in (("x", x.reshape(-1)), ("y", y.reshape(-1))):
            lines += [f"First {min(v.size, count)} elements of {name}:", str(v[:min(v.size, count)])]
    return lines


def _compare(what, symbol, test):
    def check(x, y, message=None, summarize=None, name=None):
        a, b = _tensor(x), _tensor(y)
        try:
            held = test(np.asarray(a.value), np.asarray(b.value))
        except ValueError:
            raise TdfValueError(f"{what}: shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
        if not np.all(held):
            lines = ([str(message)] if message is not None else []) + _assert_lines(
                symbol, np.asarray(a.value), np.asarray(b.value), np.asarray(held), summarize)
            raise TdfAssertionError("\n".join(lines))
        return None
    check.__name__ = what
    return check


builtin("assert_equal")(_compare("assert_equal", "==", np.equal))
builtin("assert_none_equal")(_compare("assert_none_equal", "!=", np.not_equal))
builtin("assert_greater")(_compare("assert_greater", ">", np.greater))
builtin("assert_greater_equal")(_compare("assert_greater_equal", ">=", np.greater_equal))
builtin("assert_less")(_compare("assert_less", "<", np.less))
builtin("assert_less_equal")(_compare("assert_less_equal", "<=", np.less_equal))


def _sign(what, description, test):
    def check(x, message=None, summarize=None, name=None):
        t = _tensor(x)
        values = np.asarray(t.value)
        if not np.all(test(values)):        # (TensorFlow's words: its message, '' by default, then the values)
            count = 3 if summarize is None else int(to_int(summarize, "summarize"))
            flat = values.reshape(-1)
            shown = [str(v) for v in flat[:10 ** 9 if count < 0 else count]]
            between = "" if description == "x <= 0" else "\n"      # (assert_non_positive's has no line break)
            raise TdfAssertionError(f"{f'{message}.  ' if message else ''}\nCondition {description} did not hold "
                                    f"element-wise:{between}x (shape={tuple(values.shape)} "
                                    f"dtype={dtype_name(t.dtype)}) = \n"
                                    f"{shown + ['...'] if len(shown) < flat.size else shown}")
        return None
    check.__name__ = what
    return check


builtin("assert_positive")(_sign("assert_positive", "x > 0", lambda v: v > 0))
builtin("assert_negative")(_sign("assert_negative", "x < 0", lambda v: v < 0))
builtin("assert_non_negative")(_sign("assert_non_negative", "x >= 0", lambda v: v >= 0))
builtin("assert_non_positive")(_sign("assert_non_positive", "x <= 0", lambda v: v <= 0))


@builtin("assert_near")
def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """|x - y| <= atol + rtol * |y| elementwise; both tolerances default to 10 epsilons of the dtype."""
    a, b = _tensor(x), _tensor(y)
    dtype = a.value.dtype if a.value.dtype.kind == "f" else np.dtype(np.float32)
    eps = 10 * np.finfo(dtype).eps
    rtol = eps if rtol is None else float(np.asarray(_tensor(rtol).value))
    atol = eps if atol is None else float(np.asarray(_tensor(atol).value))
    av, bv = np.asarray(a.value, dtype=dtype), np.asarray(b.value, dtype=dtype)
    if not np.all(np.abs(av - bv) <= atol + rtol * np.abs(bv)):
        text = f"{message}\n" if message else ""
        raise TdfAssertionError(f"{text}x and y not equal to tolerance rtol = {rtol}, atol = {atol}; x = "
                                f"{av.tolist()}, y = {bv.tolist()}")
    return None


@builtin("assert_rank")
def assert_rank(x, rank, message=None, name=None):
    t = _tensor(x)
    want = to_int(rank, "rank")
    if t.ndim != want:
        text = f"{message}.  " if message else ""        # (TensorFlow's words: an eager tensor has no name)
        raise TdfValueError(f"{text}Tensor  must have rank {want}.  Received rank {t.ndim}, shape {tuple(t.shape)}")
    return None


@builtin("assert_type")
def assert_type(tensor, tf_type, message=None, name=None):
    """TensorFlow's static check of a tensor's dtype: its TypeError, in its words, where the dtype differs."""
    want, have = dtype_name(to_dtype(tf_type)), dtype_name(_tensor(tensor).dtype)
    if want != have:
        raise TdfTypeError(f"{f'{message}.  ' if message else ''}tensor must be of type tf.{want}; got tf.{have}")
    return None


@builtin("assert_shapes")
def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """TensorFlow's check of several tensors' shapes against symbolic ones (``(x, ('N', 3))``): an int is a
    size, a string a size the same wherever it appears, None or '.' any size, and a leading '...' or '*' any
    leading dimensions. The ranks are checked first, then the sizes in order, with TensorFlow's eager messages."""
    prefix = f"{message}.  " if message else ""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else [tuple(pair) for pair in shapes]
    checked = []
    for x, symbols in pairs:
        if symbols is None:
            continue
        t = _tensor(x)
        symbols = tuple(symbols.value.tolist()) if isinstance(symbols, Tensor) else tuple(symbols)
        symbols = tuple(None if s is None else s.value.item() if isinstance(s, Tensor) else s for s in symbols)
        leading = bool(symbols) and symbols[0] in (Ellipsis, "*")
        if any(s in (Ellipsis, "*") for s in symbols[1:]):
            raise TdfValueError(f"{prefix}Tensor {_described(t)} specified shape index "
                                f"{next(i for i, s in enumerate(symbols) if i and s in (Ellipsis, '*'))}.  Symbol "
                                "`...` or `*` for a variable number of unspecified dimensions is only allowed as "
                                "the first entry")
        sizes = (symbols[1:] if leading else symbols) or (1,)         # (a scalar is a vector of size 1)
        checked.append((t, leading, sizes))
    for t, leading, sizes in checked:
        rank, shape = len(sizes), _shape_text(t.shape)
        if leading and rank > 1 and t.ndim < rank:
            raise TdfValueError(f"{prefix}Tensor  must have rank at least {rank}.  Received rank {t.ndim}, "
                                f"shape {shape}")
        if not leading and rank <= 1 and t.ndim > 1:
            raise TdfValueError(f"{prefix}Tensor  must have rank in (0, 1).  Received rank {t.ndim}, shape {shape}")
        if not leading and rank > 1 and t.ndim != rank:
            raise TdfValueError(f"{prefix}Tensor  must have rank {rank}.  Received rank {t.ndim}, shape {shape}")
    specified = {}
    for t, leading, sizes in checked:
        actual = list(t.shape) or [1]
        for i, symbol in enumerate(sizes):
            if symbol is None or symbol == ".":
                continue
            dim = i - len(sizes) if leading else i
            if symbol in specified or _is_size(symbol):
                if _is_size(symbol):
                    want, how = int(symbol), "Specified explicitly"
                else:
                    want, by, at = specified[symbol]
                    how = f"Specified by tensor {_described(by)} dimension {at}"
                if actual[dim] != want:
                    raise TdfValueError(f"{prefix}{how}.  Tensor {_described(t)} dimension {dim} must have size "
                                        f"{want}.  Received size {actual[dim]}, shape {_shape_text(t.shape)}")
            else:
                specified[symbol] = (actual[dim], t, dim)
    return None


def _is_size(symbol) -> bool:
    """A symbol TensorFlow reads as an explicit size: one ``int()`` parses."""
    try:
        int(symbol)
    except (ValueError, TypeError):
        return False
    return True


def _shape_text(shape) -> str:
    return str(tuple(shape))


def _described(t: Tensor) -> str:
    return f"shape={_shape_text(t.shape)} dtype={dtype_name(t.dtype)}"


# ------------------------------------------------------------------ what scripts set and ask first

_LEVELS = {"CRITICAL": 50, "FATAL": 50, "ERROR": 40, "WARNING": 30, "WARN": 30, "INFO": 20, "DEBUG": 10, "NOTSET": 0}


class Logger(ProgramObject):
    """``tf.get_logger()``: TensorFlow's Python logger "tensorflow" (its level 0 until a program sets one, Python's
    WARNING in effect). A message at or above the level in effect is written to standard error as TensorFlow's
    handler writes it (``ERROR:tensorflow:...``); scripts mostly call setLevel to quiet it. (A program on CPython
    has logging's own logger, execution/run_logging.py.)"""

    kind_word = "a logger"

    def __init__(self):
        self.level = 0

    def get_attribute(self, interp, attr, node):
        from tapecli.interpreter.objects import BoundMethod
        if attr == "name":
            return "tensorflow"
        if attr == "level":
            return Tensor(np.array(self.level, dtype=np.int64), weak=True)
        if attr == "setLevel":
            return BoundMethod(attr, lambda call_node, level: self._set_level(level))
        if attr == "getEffectiveLevel":
            return BoundMethod(attr, lambda call_node: Tensor(np.array(self.level or 30, dtype=np.int64), weak=True))
        if attr.upper() in _LEVELS and attr.islower() or attr in ("warn", "exception"):
            kind = "ERROR" if attr == "exception" else attr.upper()
            return BoundMethod(attr, lambda call_node, message, *args: self._log(interp, kind, message, args))
        return super().get_attribute(interp, attr, node)

    def _set_level(self, level):
        if isinstance(level, str):
            if level.upper() not in _LEVELS:
                raise TdfValueError(f"Unknown level: {level!r}")
            self.level = _LEVELS[level.upper()]
        else:
            self.level = to_int(level, "level")

    def _log(self, interp, kind: str, message, args):
        from tapecli.interpreter.pyforms import percent_format
        if _LEVELS[kind] >= (self.level or 30):
            text = percent_format(str(message), list(args)) if args else str(message)     # (weighed first)
            name = {"WARN": "WARNING", "FATAL": "CRITICAL"}.get(kind, kind)     # (logging's names of the levels)
            interp.output.write_error(f"{name}:tensorflow:{text}\n")


@builtin("get_logger")
def get_logger():
    """tf.get_logger(): the run's one logger (made on first use, as TensorFlow's module-level one); on CPython, the
    run's ``logging.getLogger("tensorflow")`` itself, as TensorFlow's is Python's."""
    ctx = current()
    if ctx.tf_logger is None:
        ctx.tf_logger = ctx.run_logging().getLogger("tensorflow") if ctx.run_logging is not None else Logger()
    return ctx.tf_logger


@builtin("autograph.set_verbosity")
def set_verbosity(level, alsologtostdout=False):
    """tf.autograph.set_verbosity: how much AutoGraph logs of its conversions; tapecli converts nothing."""
    to_int(level, "level")
    return None


@builtin("test.is_built_with_cuda", "test.is_built_with_gpu_support")
def is_built_with_cuda():
    """What TensorFlow's pip wheel answers (it is built with CUDA; tapecli's cuda backend is its `cuda` extra)."""
    return PythonBool(np.array(True))


@builtin("test.is_gpu_available")
def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether the run computes on a GPU (``--device cuda``), as TensorFlow's answer is whether it has one."""
    return PythonBool(np.array(current().device is not None))


@builtin("test.gpu_device_name")
def gpu_device_name():
    return "/device:GPU:0" if current().device is not None else ""
