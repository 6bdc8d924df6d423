"""The builtin registry: every name a program can call, registered with ``@builtin`` by the modules
of ``tapecli.library`` (the core names in ``library/core.py``, families beside it), a room above the interpreter:
the interpreter reaches the library only through BUILTINS and HOOKS."""
from __future__ import annotations

import importlib
import inspect
from _thread import allocate_lock   # threading.Lock (importing threading: 0.5 ms of a small run)
import types

import numpy as np

from tapecli.errors import TdfTypeError
from tapecli.frontend.ast import Attribute, Name
from tapecli.runtime.values import DTYPES, DType, PythonTuple, Tensor, Variable

BUILTINS: dict = {}
# What the interpreter asks the library without importing it (the library is the room above):
# "attribute" (value, attr: a tensor's, variable's or tape's), "python_attribute" (the methods of lists, dicts,
# strings; None if not one), "initializer" (a Keras initializer by name or object, for add_weight) and
# "keras_model" (what a program's Keras Layer/Model subclass inherits: compile, fit, add_loss, ...; None if not).
class _Hooks(dict):
    """HOOKS: a hook of a deferred family (``defer(..., hooks=)``) imports the family when first asked for or
    about (``"out_of_scope" in HOOKS``)."""

    def __missing__(self, name):
        module = _HOOK_FAMILIES.pop(name, None)
        if module is None:
            raise KeyError(name)
        _load({module})
        return self[name]

    def __contains__(self, name):
        return dict.__contains__(self, name) or name in _HOOK_FAMILIES


HOOKS: dict = _Hooks()
# Builtins that take a composite value (a tf.RaggedTensor) in place of a tensor, as TensorFlow's dispatch_for_api:
# id(builtin) -> its handler ``handler(f, interp, node, args, kwargs)``, which gives the result where an argument is
# such a value and NotImplemented otherwise. Filled by the families of those values (tf_ragged_math.py).
DISPATCH: dict = {}
# Families of builtins imported when a program may use them: a word of a program's text -> the modules that
# register a name it may look up by that word; those modules in the order they were deferred (and are imported in);
# what runs after a family is loaded (registry.defer, after_load)
_DEFERRED: dict = {}
_ORDER: list = []
_HOOK_FAMILIES: dict = {}       # a hook -> the deferred family that answers it
_AFTER_LOAD: list = []
_LOADING = allocate_lock()


def builtin(*names, interp=False, replaces=False, **marks):
    """Register a builtin under one or more names; ``interp=True`` passes the interpreter first;
    ``replaces=True`` where it takes over names another family registered (see ``register``); ``marks``: attributes
    the registry reads (``literals``: it takes a program's Python literals as they are; ``tensorflow_check``: a
    check of the arguments of a call spelled through tf or keras alone, call_builtin)."""
    def deco(f):
        builtin_function(f, interp)
        for mark, value in marks.items():
            setattr(f, mark, value)
        for name in names or (f.__name__.rstrip("_"),):
            register(name, f, replaces=replaces)
        return f
    return deco


def builtin_function(f, interp=False):
    """Mark ``f`` as a builtin a program calls (as ``@builtin`` does) without binding a name to it."""
    f.is_builtin = True
    f.wants_interp = interp
    f.positional = _positional_range(f)
    return f


def register(name: str, value, replaces: bool = False) -> None:
    """Bind a builtin name. A name bound twice says which binding wins: the later one, with
    ``replaces=True``; any other second binding (or a ``replaces`` with nothing to replace) is a
    mistake in tapecli, raised at import."""
    if (name in BUILTINS) != replaces:
        raise RuntimeError(f"builtin {name!r} is bound twice without replaces=True" if not replaces
                           else f"builtin {name!r} says it replaces a binding, but there is none")
    BUILTINS[name] = value


def defer(module: str, words, hooks=()) -> None:
    """Register the builtins of ``module`` (a family whose import is a noticeable part of a run's start-up) when
    first needed: by a program whose text has one of ``words``, by a module attribute of that name
    (``classes.Namespace``: the `tf.X` of a program CPython runs too), by a name no loaded family has, or by the
    first use of one of the ``hooks`` it answers."""
    _ORDER.append(module)
    # (dict.fromkeys: a thousand words at every start-up, unlike a loop, cost little)
    shared = {word: (*_DEFERRED[word], module) for word in _DEFERRED.keys() & words}    # (families deferred before)
    _DEFERRED.update(dict.fromkeys(words, (module,)))
    _DEFERRED.update(shared)
    for name in hooks:
        _HOOK_FAMILIES[name] = module


def after_load(f):
    """Run ``f`` now and again after each load of deferred families (what marks builtins of several families)."""
    _AFTER_LOAD.append(f)
    f()
    return f


def load_word(word: str) -> None:
    """Import the deferred families that register a name ``word`` may look up (a module attribute read)."""
    if word in _DEFERRED:
        load_deferred((word,))


def named(name: str):
    """The builtin ``name``, its family imported first where it is deferred (the interpreter's own call of one)."""
    load_word(name)
    return BUILTINS[name]


def load_deferred(words=None) -> bool:
    """Import the deferred families a program with these ``words`` may use (every one for None), in the order they
    were deferred; whether any was imported (a name looked up in vain is then looked up again, and a hint sees
    every name). A family's words are forgotten once it is imported, under a lock: a run in another thread that
    finds none of its words left finds their names registered."""
    if words is not None and not any(word in _DEFERRED for word in words):
        return False
    return _load(set(_ORDER) if words is None else
                 {module for word in words if word in _DEFERRED for module in _DEFERRED[word]})


def _load(wanted: set) -> bool:
    """Import the deferred families ``wanted`` that are not yet, in the order they were deferred; whether any was."""
    with _LOADING:
        wanted &= set(_ORDER)
        if not wanted:
            return False
        for module in [module for module in _ORDER if module in wanted]:
            importlib.import_module(module)
            _ORDER.remove(module)
        for word in list(_DEFERRED):
            left = [module for module in _DEFERRED[word] if module not in wanted]
            if left:
                _DEFERRED[word] = left
            else:
                del _DEFERRED[word]
        for f in _AFTER_LOAD:
            f()
    return True


def hook(name):
    """Register the library's answer to one of the interpreter's questions (HOOKS)."""
    def deco(f):
        HOOKS[name] = f
        return f
    return deco


def _positional_range(f) -> tuple[int, int] | None:
    """(fewest, most) positional arguments that always bind, for a function of plain parameters.

    Read from the code object: ``inspect.signature`` for each of the ~280 builtins at import cost
    several milliseconds of every run's start-up."""
    if not isinstance(f, types.FunctionType) or hasattr(f, "__wrapped__") or hasattr(f, "__signature__"):
        params = list(signature(f).parameters.values())
        if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
            return None
        return sum(p.default is inspect.Parameter.empty for p in params), len(params)
    code = f.__code__
    if code.co_posonlyargcount or code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    return code.co_argcount - len(f.__defaults__ or ()), code.co_argcount


def signature(f) -> inspect.Signature:
    """The builtin's signature, made on the first call that needs it (binding errors, usage) and kept."""
    sig = f.__dict__.get("_signature")
    if sig is None:
        sig = f._signature = inspect.signature(f)
    return sig


def call_builtin(f, interp, node, args, kwargs):
    """Call a builtin. TensorFlow's function called on a Python literal first (``tf.boolean_mask([1, 2], m)``,
    ``tf.math.multiply(7, 6)``) converts it as tf.convert_to_tensor does, unless another argument gives it a dtype
    or the builtin reads its literals itself (an attribute ``literals``: tf.range's widest argument)."""
    if DISPATCH:            # (before the conversion: a literal beside a ragged tensor takes its dtype)
        handler = DISPATCH.get(id(f))
        if handler is not None:
            result = handler(f, interp, node, args, kwargs)
            if result is not NotImplemented:
                return result
    if interp is not None and args and isinstance(args[0], list) and not hasattr(f, "literals") \
            and converting(interp, node):
        args = [literal_list(args[0]), *args[1:]]
    if interp is not None and args and args[0].__class__ is Tensor and args[0].weak and not hasattr(f, "literals") \
            and converting(interp, node) \
            and not any(_typed(v, args[0]) for v in (*args[1:], *kwargs.values())):
        from tapecli import ops
        # (a tensor of its own, as TensorFlow's conversion makes: materialize's one constant of the value would be
        # the tensor tf.constant(3.0) returns, which a tape may watch, and so every later literal 3.0)
        args = [Tensor(ops.materialize(args[0]).value), *args[1:]]
    check = getattr(f, "tensorflow_check", None)
    if check is not None and _framework_call(interp, node):
        check(*args, **kwargs)
    return builtin_result(f, interp, node, args, _call_builtin(f, interp, node, args, kwargs))


def builtin_result(f, interp, node, args, result):
    """A builtin's result as the program holds it: a Python number the library returns as the interpreter holds
    one; a tensor where TensorFlow's function was called on literals (tensorflow_result); Python's own number
    where the function is Python's operation (python_operation)."""
    if result.__class__ is float or result.__class__ is int:     # (keras.backend.epsilon())
        return Tensor(np.array(result), weak=True)
    if result.__class__ is tuple:       # (keras.ops.histogram's pair) a tuple, as the interpreter holds one
        return PythonTuple(result)
    # (an attribute ``branches``: tf.cond's result is what its branch returned, a Python 2 as 2 in eager TensorFlow;
    # ``numpy_results``: tf.experimental.numpy's, whose every tensor NumPy's rules typed and whose Python number is
    # one, as tnp.size gives it)
    if hasattr(f, "branches") or hasattr(f, "numpy_results"):
        return result
    return tensorflow_result(interp, node, python_operation(f, node, args, result))


# The op table's functions that are Python's builtins too (abs, pow), as their public functions name them
_PYTHON_OPERATIONS = frozenset(("abs_", "pow_"))


def python_operation(f, node, args, result):
    """Python's ``abs(x)`` and ``pow(x, y)``, called by their bare names on a NumPy value: NumPy's value
    (``tf.abs`` of one is a tensor)."""
    if result.__class__ is Tensor and not result.weak and getattr(f, "__name__", None) in _PYTHON_OPERATIONS \
            and getattr(node, "func", None).__class__ is Name:
        from tapecli.runtime.values import numpy_result
        return numpy_result(result, *args)
    return result


# The modules whose functions convert a Python literal as TensorFlow does (tf.convert_to_tensor: int32, float32)
_CONVERTING = frozenset(("tf", "tf.math", "tf.nn", "tf.linalg", "tf.random", "tf.signal", "tf.bitwise", "keras.ops",
                         "tf.keras.ops", "tf.raw_ops"))


def converting(interp, node) -> bool:
    """Whether the call ``node`` of a TensorFlow program spells a function of TensorFlow's (``tf.reshape``,
    ``tf.math.add``, ``keras.ops.sum``) through a module the program imported: its Python literals are then
    TensorFlow's tensors (``tf.reshape([1, 2, 3, 4], [2, 2])`` is an int32 tensor, ``tf.size(t)`` one too)."""
    if getattr(interp, "calls_tensorflow", False):      # a bridged run calls builtins only as tf's functions
        return True
    func, path = getattr(node, "func", None), []
    if not interp.ctx.settings.python_spelling:
        return False
    while func.__class__ is Attribute:
        path.append(func.attr)
        func = func.value
    if func.__class__ is not Name or not path:
        return False
    module = interp.globals.vars.get(func.id)          # an imported module: classes.Namespace
    return getattr(module, "is_module", False) and ".".join([module.path, *reversed(path[1:])]) in _CONVERTING


def tensorflow_result(interp, node, result):
    """A TensorFlow function's result: a tensor, where its arguments were literals (``tf.add(2, 3)``)."""
    if result.__class__ is Tensor and result.weak and interp is not None and converting(interp, node):
        from tapecli import ops
        return ops.materialize(result)
    return result


def literal_list(value: list):
    """A Python list of Python numbers (nested, rectangular) as the literal tensor TensorFlow's function converts
    it to; any other list as it is (the function packs its tensors, or refuses it)."""
    from tapecli import ops
    from tapecli.errors import TdfError
    try:
        converted = ops.to_tensor(value)
    except TdfError:
        return value
    return converted if converted.__class__ is Tensor and converted.weak else value


def _typed(value, literal: Tensor) -> bool:
    """A dtype, or a tensor or variable whose dtype the literal can take (a bool's for a bool, a float's for a
    float, an int's or a float's for an int), among a call's other arguments: the literal takes its dtype, not
    its own (``tf.add([1, 2], x)``; not ``tf.boolean_mask([1, 2], mask)`` nor ``tf.gather([1.5, 2.5], i)``).
    A dtype's name is a dtype (``tf.constant(2, dtype="int64")``)."""
    if isinstance(value, DType) or (value.__class__ is str and DType(value).name in DTYPES):
        return True
    if not isinstance(value, (Tensor, Variable)) or getattr(value, "weak", False):
        return False
    kind = value.dtype.kind
    return kind in {"b": "b", "f": "f"}.get(literal.dtype.kind, "iuf")      # an int literal meets floats too


def _call_builtin(f, interp, node, args, kwargs):
    fast = f.positional
    if fast is not None and not kwargs and not f.wants_interp and fast[0] <= len(args) <= fast[1]:
        return f(*args)       # the arguments bind: skip inspect's (slow) check
    full = [interp, *args] if f.wants_interp else list(args)
    if fast is not None and not kwargs and fast[0] <= len(full) <= fast[1]:
        return f(*full)
    hidden = next((k for k in kwargs if k.startswith("_")), None)
    if hidden is not None:                  # the implementation's own parameters (e.g. _op) are not the program's
        name = _called_name(f, interp, node)
        raise TdfTypeError(f"{name}() got an unexpected keyword argument '{hidden}'", hint=f"usage: {name}{_usage(f)}")
    try:
        signature(f).bind(*full, **kwargs)
    except TypeError as e:
        name = _called_name(f, interp, node)
        parameters = _tensorflow_parameters(f) if _framework_call(interp, node) else None
        if parameters is None:
            raise TdfTypeError(f"{name}(): {e}", hint=f"usage: {name}{_usage(f)}") from None
        full = full[:1] if f.wants_interp else []
        kwargs = tensorflow_call(name, parameters, args, kwargs)
        try:
            signature(f).bind(*full, **kwargs)
        except TypeError:               # (a mapping the table's test would have refused: the call's own error)
            raise TdfTypeError(f"{name}(): {e}", hint=f"usage: {name}{_usage(f)}") from None
    return f(*full, **kwargs)


def _framework_call(interp, node) -> bool:
    """Whether the call spells a function of TensorFlow's or Keras's (``tf.reduce_sum(...)``, any call of a run
    CPython runs): TensorFlow's parameters bind it; a TDF program's bare ``sin(x, 3)`` stays its TypeError."""
    if getattr(interp, "calls_tensorflow", False):
        return True
    func = getattr(node, "func", None)
    if func.__class__ is not Attribute or interp is None:
        return False
    while func.__class__ is Attribute:
        func = func.value
    module = interp.globals.vars.get(func.id) if func.__class__ is Name else None
    return getattr(module, "is_module", False) and module.path.split(".")[0] in ("tf", "keras")


def builtin_key(f) -> str:
    """The key of builtin ``f`` in tf_parameters.PARAMETERS: its module and qualified name."""
    return f"{f.__module__}:{f.__qualname__}"


def _tensorflow_parameters(f):
    """TensorFlow's parameters of the function that resolves to builtin ``f`` (tf_parameters.py), or None."""
    from tapecli.interpreter.tf_parameters import PARAMETERS
    found = PARAMETERS.get(builtin_key(f))
    return None if found is None else found[1]


def tensorflow_call(name: str, parameters, args, kwargs) -> dict:
    """The builtin's keyword arguments of a call bound to TensorFlow's ``parameters`` (tf_parameters.py) where it did
    not bind the builtin's own (``tf.reduce_sum(x, name="total")``, ``tf.reshape(tensor=t, shape=s)``): each
    argument given to the builtin parameter it maps to, ``name`` dropped (TensorFlow's eager ops ignore it). A call
    that does not bind TensorFlow's parameters either is its TypeError, with TensorFlow's usage."""
    empty = inspect.Parameter.empty
    tensorflow = inspect.Signature([
        inspect.Parameter(own, inspect.Parameter.POSITIONAL_OR_KEYWORD if kind == "p" else
                          inspect.Parameter.KEYWORD_ONLY, default=empty if default is None else default)
        for own, kind, default, _ in parameters])
    usage = f"usage: {name}({', '.join(own if default is None else f'{own}={default}' for own, _, default, _ in parameters)})"
    try:
        given = tensorflow.bind(*args, **kwargs).arguments
    except TypeError as e:
        raise TdfTypeError(f"{name}(): {e}", hint=usage) from None
    mapped = {own: builtin for own, _, _, builtin in parameters}
    out = {}
    for own, value in given.items():
        builtin = mapped[own]
        if builtin is None:
            raise TdfTypeError(f"{name}(): tapecli does not take TensorFlow's argument '{own}' yet", hint=usage)
        if builtin:
            out[builtin] = value
    return out


def _called_name(f, interp, node) -> str:
    """The builtin's name as the program's call spells it; its own where the library calls it (no call node: a
    builtin given as tf.while_loop's cond)."""
    return (interp.text(node.func) if getattr(node, "func", None) is not None else None) or f.__name__.rstrip("_")


def _usage(f) -> str:
    params = list(signature(f).parameters.values())
    if f.wants_interp:
        params = params[1:]
    return "(" + ", ".join(str(p) for p in params if not p.name.startswith("_")) + ")"
