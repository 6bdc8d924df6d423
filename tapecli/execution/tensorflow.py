"""TensorFlow programs that CPython runs (docs/language.md, "TensorFlow programs on CPython").

A program that imports ``tensorflow`` and uses only the part of it listed here (``bridgeable``: decided from its
text, before it runs) is compiled and executed by CPython as a Python-only program is, under the same guards.
Its ``tf`` is a per-run module whose attributes are tapecli's own builtins, found as the interpreter's
``Namespace`` finds them, each called with the program's values converted to the library's (a Python number is a
weak tensor, a tuple a list, a NumPy array a tensor that stays NumPy's) and its result converted back. Tensors and
variables are tapecli's own: their Python operators ask the run's :class:`Eager`, which applies the ops, so the
tapes record them. ``tf.GradientTape`` is a context manager over a runtime tape; its gradient calls record the
same requests as the interpreter's, labelled from the call's text (the guard passes each call site, guard.py).
This is the default (``TAPECLI_TF_ON_CPYTHON=auto``, and ``1``): a program's Python values are Python's. Every other
TensorFlow program runs on the interpreter, as does every one while ``TAPECLI_TF_ON_CPYTHON=0``."""
from __future__ import annotations

import ast
import builtins
import collections
import inspect
import itertools
import re
import sys
import types

import numpy as np

from tapecli import ops
from tapecli.ops.promotion import numpy_operands
from tapecli.errors import ShapeError, TdfError, TdfNameError, TdfTypeError, TdfValueError
from tapecli.execution.tf_errors import ATTRIBUTES as ERROR_ATTRIBUTES
from tapecli.execution.tf_errors import CLASSES as ERROR_CLASSES
from tapecli.execution.tf_errors import CODES as ERROR_CODES
from tapecli.execution.tf_calls import custom_gradient, tf_function, traced_functions, type_of
from tapecli.execution import tf_nest
from tapecli.execution.tf_errors import HIDDEN, catchable, errors_module
from tapecli.execution import keras_bases, keras_derived, keras_fitting  # noqa: F401 (keras_derived registers)
from tapecli.execution.keras_paths import KERAS_CLASSES
from tapecli.execution.tf_gradient_tape import GradientTape
from tapecli.execution.tf_module import Module
from tapecli.execution import tf_sessions
from tapecli.execution.planned_loops import ProgramLoops
from tapecli.execution.training_loops import planned_loops
from tapecli.execution.frameworks import BRIDGED
from tapecli.execution.tf_values import (NUMPY_ATTRIBUTES, Keyword, Node, Shape, as_tensorflow, index_of,
                                         leave_tapes_for_numpy, library_function, library_value, numpy_attribute,
                                         operand_of, program_function, to_library, to_program,
                                         TensorType, variable_type)
from tapecli.interpreter.classes import Namespace, tensorflow_lacks
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.core import Interpreter, new_request, source_labels
from tapecli.interpreter.objects import ProgramObject, RequestLog, Scope, TapeObject
from tapecli.interpreter.printing import numpy_of, python_format, python_repr, python_str
from tapecli.interpreter.registry import BUILTINS, HOOKS, load_word
from tapecli.interpreter.statements import Statements, note_binding
from tapecli.library.core import DEVICE, SPARSE_SCATTERS, variable_constraint
from tapecli.library.keras.layers import eager_mask
from tapecli.library.keras.keras_tensor import KERAS_MASK
from tapecli.runtime import spelling
from tapecli.runtime.specs import TensorSpec, TypeSpec
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape, UnconnectedGradients
from tapecli.version import KERAS_VERSION, TENSORFLOW_VERSION
from tapecli.runtime.values import (BackendVariable, DType, Tensor, Variable, dtype_name, keras_path, not_an_index,
                                    tensorflow_name)

TOP = "tensorflow"
# The builtin families whose functions a bridged program may call through ``tf``: they compute with ops on their
# arguments, call no program function and keep no interpreter state.
FAMILIES = frozenset({"tapecli.ops.core", "tapecli.ops.elementwise", "tapecli.library.core",
                      "tapecli.library.tf_math", "tapecli.library.tf_nn", "tapecli.library.tf_linalg",
                      "tapecli.library.tf_array", "tapecli.library.tf_nn_losses", "tapecli.library.tf_segments",
                      "tapecli.library.tf_scopes", "tapecli.library.control", "tapecli.library.tf_indexed_slices",
                      "tapecli.library.tf_image", "tapecli.library.tf_strings", "tapecli.library.tf_sets",
                      "tapecli.library.tf_bitwise", "tapecli.library.tf_sparse", "tapecli.library.tf_sparse_math",
                      "tapecli.library.tf_checkpoint", "tapecli.library.tf_hashing", "tapecli.library.tf_image_random",
                      "tapecli.library.tf_signal", "tapecli.library.tf_ragged_ops", "tapecli.library.tf_numpy",
                      "tapecli.library.tf_numpy_arrays", "tapecli.library.tf_numpy_indexing",
                      "tapecli.library.tf_numpy_math", "tapecli.library.tf_tensor_proto", "tapecli.library.tf_test",
                      "tapecli.library.tf_image_boxes", "tapecli.library.tf_png",
                      "tapecli.library.tf_distribute", "tapecli.library.tf_quantization", "tapecli.library.tf_lookup",
                      "tapecli.library.tf_raw_ops"})
# tf.cond, tf.while_loop, tf.map_fn, tf.sparse.map_values...: the functions a program passes them are called back as
# the program's (tf_values.ProgramCallable, Run.call_value), as tf.data's are.
CALLING_BACK = frozenset({"tapecli.library.control", "tapecli.library.tf_sparse_math",
                          "tapecli.library.tf_ragged_ops", "tapecli.library.tf_test",
                          "tapecli.library.tf_distribute"})
# tf.random (path ``random...``): its functions draw from the run's generator, the ``interp`` they are given being
# the bridge's Run (Run.rng, Run.tf_global_generator); its classes (Generator, Algorithm) are held by the program
# behind a proxy (tf_values.LibraryObject).
RANDOM = "random"
RANDOM_FAMILIES = frozenset({"tapecli.library.tf_random", "tapecli.library.tf_random_generator"})
# tf.data: its Dataset class (and the datasets it makes) held behind the same proxy; the functions a program
# passes to them (map, filter) called back as the program's (tf_values.ProgramCallable, Run.call_value).
KERAS = "keras"
HELD = frozenset({RANDOM, "data", KERAS, "image", "distribute"})  # (tf.image.ResizeMethod: an enum held so)
# Builtins of those families that are Python's (``tf.len`` is no TensorFlow name) or take a function.
_NOT_TF = frozenset({"print", "len", "range", "sum", "min", "max", "isinstance"})
_CALLABLE_PARAMETERS = frozenset({"fn", "func", "f", "body", "cond", "true_fn", "false_fn", "loop_fn", "callable"})
# Names of ``tf`` the bridge gives itself (the rest are builtins), and its modules of its own.
OWN = frozenset({"GradientTape", "Variable", "Tensor", "constant", "print", "function", "TensorSpec", "TensorShape",
                 "TypeSpec", "custom_gradient", "Module", "UnconnectedGradients"}) | tf_sessions.TF2_NAMES.keys()
# The attributes of those that are classes a program reads (``@tf.Module.with_name_scope``).
OWN_CLASS_ATTRIBUTES = {"Module": frozenset({"with_name_scope"}), "UnconnectedGradients": frozenset({"NONE", "ZERO"})}
OWN_MODULES = {"errors": (errors_module, frozenset(ERROR_CLASSES) | frozenset(ERROR_CODES)), tf_sessions.COMPAT: (
                   tf_sessions.module, frozenset()),     # (TensorFlow 1's graphs: tf_sessions.supported)
               "nest": (tf_nest.nest_module, frozenset(tf_nest.NAMES))}
# The attributes of tensors, variables and tapes a bridged program may read (Eager.attribute).
TENSOR_ATTRIBUTES = frozenset({"numpy", "shape", "dtype", "ndim", "get_shape", "set_shape", "device"})
ASSIGNS = frozenset({"assign", "assign_add", "assign_sub"})
VARIABLE_ATTRIBUTES = TENSOR_ATTRIBUTES | ASSIGNS | {"name", "trainable", "read_value", "value", "scatter_nd_update", "path",
                                                     "scatter_nd_add", "scatter_nd_sub", "constraint",
                                                     "sparse_read"} | SPARSE_SCATTERS.keys()
TAPE_ATTRIBUTES = frozenset({"gradient", "jacobian", "batch_jacobian", "watch", "watched_variables", "reset",
                             "stop_recording", "persistent"})
# Attribute names read through the guard in a bridged program: what tensors, variables and tapes answer, and every
# other name their Python classes have (their internals stay out of reach), and tapecli's attributes of its errors.
GUARDED = frozenset(TENSOR_ATTRIBUTES | VARIABLE_ATTRIBUTES | TAPE_ATTRIBUTES | NUMPY_ATTRIBUTES | {
    "tape", "interp", "named", "method"} | {
    name for cls in (Tensor, Variable, Tape, TapeObject) for name in dir(cls) if not name.startswith("_")} | HIDDEN)
# Calls whose site (the text of their arguments) the guard passes on: the requests' labels, watch's labels.
SITE_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian", "watch"})


def interpreter_refuses(tree: ast.Module) -> bool:
    """Whether the interpreter would refuse, when its line runs, a form of this program that its parser reads:
    an import, a decorator or a Python builtin it does not give, or a keyword ``print`` does not take there.
    Asked of the interpreter's own tables, so that such a program runs on CPython instead."""
    from tapecli.interpreter.pyforms import importable
    from tapecli.interpreter.statements import DECORATORS
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    classes = any(isinstance(node, ast.ClassDef) and node.bases for node in ast.walk(tree))
    signatures = {id(node) for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
                  for decorator in function.decorator_list for node in ast.walk(decorator)}
    clocks = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
              for alias in node.names if alias.name == "time"}
    numpy_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                   for alias in node.names if alias.name == "numpy"}
    for node in ast.walk(tree):
        # a class of NumPy's (np.random.RandomState), a function of complex results (np.linalg.eigvals): the
        # interpreter's NumPy has its functions of real values, CPython's is NumPy
        if isinstance(node, ast.Attribute) and numpy_names and _numpy_class(node, numpy_names):
            return True
        # the interpreter's time has the clock's readings and sleep; CPython's has the rest (strftime, gmtime, ...)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in clocks \
                and builtin_named(f"time.{node.attr}") is None:
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "time" and not all(
                builtin_named(f"time.{alias.name}") for alias in node.names):
            return True
        if isinstance(node, ast.Import) and not all(importable(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.Attribute) and (node.attr in _CPYTHON_ONLY or node.attr == "TensorSpec"
                                                and id(node) not in signatures):
            return True
        # a tf.Variable's shape=, where it may have unknown dimensions: the interpreter's shapes are all known
        if isinstance(node, ast.Call) and _last_name(node.func) == "Variable" and any(
                k.arg == "shape" for k in node.keywords):
            return True
        # a tf.function's input_signature: the interpreter reads a decorator's name alone
        if isinstance(node, ast.keyword) and node.arg == "input_signature":
            return True
        if isinstance(node, ast.ClassDef) and any(_concrete_keras(b) for b in node.bases):    # (keras_derived.py)
            return True
        # a program's Keras class's config: Keras's automatic one (its constructor's arguments) is CPython's run's
        if isinstance(node, ast.Attribute) and node.attr in ("get_config", "from_config") and classes:
            return True
        # an item assignment (a tuple's too): NumPy's (``w = v.numpy(); w[:, 0] = 0``, into a view) is CPython's alone
        if isinstance(node, (ast.Assign, ast.AugAssign)) and any(isinstance(t, ast.Subscript) for target in getattr(
                node, "targets", [getattr(node, "target", None)]) for t in ast.walk(target)):
            return True
        if isinstance(node, ast.ImportFrom) and not all(importable(f"{node.module}.{alias.name}")
                                                        for alias in node.names):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not all(
                _last_name(d) in DECORATORS for d in node.decorator_list):
            return True
        # a Python builtin the interpreter does not give (set, frozenset, bytes, getattr...)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in _PYTHON_BUILTINS \
                and node.id not in bound and builtin_named(node.id) is None:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PYTHON_BUILTINS \
                and node.func.id not in bound and node.keywords and not _takes_keywords(node):
            return True
    return False


_PYTHON_BUILTINS = frozenset(dir(builtins))
# What only CPython's run gives: TensorFlow's static shapes with unknown dimensions and specs as values (the
# interpreter's shapes are tensors of known dimensions; it reads a TensorSpec in an input_signature only).
_CPYTHON_ONLY = frozenset({"TensorShape", "TypeSpec", "element_spec", "set_shape", "get_concrete_function",
                           "pretty_printed_concrete_signatures",
                           "compat", "Graph", "gradients", "hessians",     # (TensorFlow 1's graphs: tf_sessions.py)
                           "__name__", "nest",         # (the interpreter's type() knows fewer classes)
                           "decode", "encode",          # (bytes, a string tensor's elements, are CPython's)
                           "get_registered_name", "get_registered_object"}) | frozenset({     # (keras.saving's)
    # NumPy arrays' attributes the interpreter's arrays lack (runtime/numpy_gate.py's ARRAY_METHODS they have):
    # where ``t.numpy()`` is NumPy's own array
    # (less those a TensorFlow object has too: a LinearOperator's trace and diag_part, tf.fill)
    "tobytes", "nbytes", "itemsize", "strides", "ptp", "setflags", "getfield", "setfield"})


def _numpy_class(node: ast.Attribute, numpy_names) -> bool:
    """Whether ``node`` reads what of NumPy's the interpreter cannot give: a class (numpy_forms.interpreter_lacks)
    or a function whose results may be complex (numpy_forms.gives_complex)."""
    from tapecli.library.numpy_forms import gives_complex, interpreter_lacks
    parts, root = [], node.value
    while isinstance(root, ast.Attribute):
        parts.append(root.attr)
        root = root.value
    path = ".".join(["np", *reversed(parts)])
    return isinstance(root, ast.Name) and root.id in numpy_names and (
        interpreter_lacks(path, node.attr) or gives_complex(path, node.attr))


def _takes_keywords(call: ast.Call) -> bool:
    """Whether the interpreter's builtin of a Python builtin's name takes each keyword of this call
    (``min(xs, key=float)``, ``print(x, file=f)``: Python's keywords its builtins do not all have)."""
    from tapecli.interpreter.registry import signature
    found = builtin_named(call.func.id)
    if found is None:
        return True                 # (not the interpreter's: PYTHON_ONLY's question)
    parameters = signature(found).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return True
    return all(k.arg is not None and k.arg in parameters for k in call.keywords)


def _concrete_keras(base: ast.expr) -> bool:
    return getattr(getattr(builtin_named(_last_name(base) or ""), "makes", None), "derivable", False) is True


def _last_name(decorator: ast.expr) -> str | None:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)


# ------------------------------------------------------------------ what a program may use
def bridgeable(tree: ast.Module, allowed_modules, interpreter_can_run: bool = True) -> bool:
    """Whether CPython runs this TensorFlow program (refusal)."""
    return refusal(tree, allowed_modules, interpreter_can_run) is None


_NOT_TENSORFLOW = "no TensorFlow program"


def refusal(tree: ast.Module, allowed_modules, interpreter_can_run: bool = True) -> str | None:
    """Why CPython does not run this TensorFlow program (None: it does): it imports TensorFlow (``tensorflow``,
    ``keras``, from-imports of them) and no other framework, every name of TensorFlow it writes is one the bridge
    supports (with ``interpreter_can_run``: where the interpreter could run the program, every name is one the bridge
    has; else a name it lacks is an error when its line runs), and its classes derive from none of TensorFlow's but
    tf.Module and Keras's bases. Decided from the text alone (a program never runs twice); the reason names the
    line."""
    aliases = {}         # a name an import of TensorFlow binds -> the tf path it names
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                return f"line {node.lineno} imports relatively"
            if node.module.split(".")[0] in BRIDGED:
                for alias in node.names:
                    if alias.name == "*":
                        return f"line {node.lineno} imports * from {node.module}"
                    aliases[alias.asname or alias.name] = [*framework_path(node.module), alias.name]
            elif node.module.split(".")[0] not in allowed_modules:
                return f"line {node.lineno}: {_import_refusal(node.module)}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in BRIDGED:          # (``import tensorflow.keras`` binds ``tensorflow``)
                    aliases[alias.asname or top] = framework_path(alias.name if alias.asname else top)
                elif top not in allowed_modules:
                    return f"line {node.lineno}: {_import_refusal(alias.name)}"
    if not aliases:
        return _NOT_TENSORFLOW
    tree.tf_aliases = aliases
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, complex):
            return f"line {node.lineno} writes a complex number"    # (tapecli's tensors are real)
    fitting = keras_fitting.refusal(tree, lambda base: KERAS_CLASSES.get(tuple(_tf_path(base, aliases) or ())))
    if fitting is not None:
        return fitting
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    named = collections.defaultdict(list)       # a name -> the values assigned to it (Base = keras.X: class C(Base))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            named[node.targets[0].id].append(node.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and not all(_derivable(value, aliases) for base in node.bases
                                                      for value in named.get(getattr(base, "id", None), [base])):
            return (f"line {node.lineno} derives the class {node.name} from a class of TensorFlow's other than "
                    "tf.Module, keras.layers.Layer, keras.Model, keras.losses.Loss, keras.metrics.Metric, "
                    "keras.callbacks.Callback, keras.optimizers.schedules.LearningRateSchedule, "
                    "keras.regularizers.Regularizer, keras.constraints.Constraint, keras.initializers.Initializer, "
                    "keras.utils.PyDataset (keras.utils.Sequence) and Keras's concrete layers, optimizers and metrics")
        if isinstance(node, ast.Name) and node.id == "__import__":      # (the guard keeps it from programs)
            return f"line {node.lineno} imports with __import__"
        if isinstance(node, ast.Name) and node.id in aliases:
            if not isinstance(node.ctx, ast.Load):
                return f"line {node.lineno} binds {node.id} again"
            path, at = list(aliases[node.id]), node
            # (a dtype's attributes are the value's: tf.float32.is_floating)
            while isinstance(parents.get(at), ast.Attribute) and parents[at].value is at \
                    and not (path and isinstance(_resolve(path), DType)):
                at = parents[at]
                path.append(at.attr)
            # Where the interpreter cannot run the program anyway, every name is CPython's to read when its line
            # runs (tf_module): one the bridge lacks is an error at that line, after what ran before it, as a name
            # TensorFlow lacks is TensorFlow's AttributeError there; a module may be a value (hasattr(tf.math, ...)).
            if interpreter_can_run and not supported(path):
                if not path:
                    return f"line {node.lineno} uses {node.id} as a value"
                found = "tapecli does not have" if _resolve(path) is None else "tapecli runs on its interpreter only"
                return f"line {node.lineno} uses {'.'.join(['tf', *path])}, which {found}"
    return None


def _import_refusal(module: str) -> str:
    from tapecli.execution.modules import refusal as refused_import
    return refused_import(module).message


def why_not_on_cpython(source: str) -> str | None:
    """Why a TensorFlow program that is Python (it parses) does not run on CPython, for the error of a form the
    interpreter refuses; None for one that is not Python or not TensorFlow's."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    from tapecli.execution.modules import ALLOWED
    found = refusal(tree, {m.split(".")[0] for m in ALLOWED}, interpreter_can_run=False)
    return None if found == _NOT_TENSORFLOW else found


def _derivable(base: ast.expr, aliases: dict) -> bool:
    """Whether a program's class may derive from ``base`` here: from anything but TensorFlow's classes, of which
    ``tf.Module``, the Keras classes of KERAS_CLASSES (keras_classes.py, keras_bases.py) and the library's Keras
    classes whose overrides it calls back (keras_derived.py) are classes on CPython."""
    path = _tf_path(base, aliases)
    if path is None or path == ["Module"] or tuple(path) in KERAS_CLASSES:
        return True
    made = getattr(_resolve(path), "makes", None)
    return path[0] in _KERAS_TOPS and isinstance(made, type) and getattr(made, "derivable", False) is True


def _tf_path(node: ast.expr, aliases: dict) -> list[str] | None:
    """The tf path an expression names (``keras.layers.Layer``: ['keras', 'layers', 'Layer']), None for one that
    is not TensorFlow's."""
    path = []
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    return [*aliases[node.id], *path] if isinstance(node, ast.Name) and node.id in aliases else None


def framework_path(module: str) -> list[str]:
    """The tf path a module of TensorFlow names: ``tensorflow.math`` is tf.math, ``keras.layers`` tf.keras.layers."""
    top, *rest = module.split(".")
    return rest if top == TOP else [KERAS, *rest]


def tf_names(aliases: dict) -> set[str]:
    """The names that stand for the ``tf`` module itself."""
    return {name for name, path in aliases.items() if not path}


def declarations(tree: ast.Module, aliases: set[str]) -> tuple[set[int], set[str]]:
    """What the interpreter takes as declarations (frontend/spellings.py): the top-level ``x = tf.Variable(v, ...)``
    and ``c = tf.constant(v, ...)`` whose name is bound once in the program, with one value and literal options.
    The ids of the first (their variable is named ``x``), and the names of the second (constants, which explain
    names as such)."""
    counts = collections.Counter(node.id for node in ast.walk(tree) if isinstance(node, ast.Name)
                                 and not isinstance(node.ctx, ast.Load))
    counts.update(node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef)))
    variables, constants = set(), set()
    for node in tree.body:
        value = getattr(node, "value", None)
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and counts[node.targets[0].id] == 1 and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute) and value.func.attr in ("Variable", "constant")
                and isinstance(value.func.value, ast.Name) and value.func.value.id in aliases):
            continue
        variable = value.func.attr == "Variable"
        keywords = {k.arg: k.value for k in value.keywords}
        dtype = keywords.get("dtype")
        options = {"initial_value", "dtype", "name", "trainable"} if variable else {"value", "dtype", "name"}
        if len(value.args) > 1 or any(isinstance(a, ast.Starred) for a in value.args) or None in keywords \
                or set(keywords) - options or not (value.args or {"initial_value", "value"} & keywords.keys()) \
                or dtype is not None and not isinstance(dtype, ast.Attribute) \
                and not (isinstance(dtype, ast.Constant) and isinstance(dtype.value, str)):
            continue
        if variable:
            variables.add(id(node))
        else:
            constants.add(node.targets[0].id)
    return variables, constants


# The paths of tf.newaxis (and tnp's), which is None.
_NEWAXIS = (["newaxis"], ["experimental", "numpy", "newaxis"])


def supported(path: list[str]) -> bool:
    """Whether ``tf.<path>`` names something the bridge gives (a module alone, as a value, is not)."""
    if not path:
        return False
    if path in _NEWAXIS:                    # (None, which _resolve cannot tell from nothing)
        return True
    if path[0] == tf_sessions.COMPAT:       # (TensorFlow 1's graphs: tf_sessions.py)
        return tf_sessions.supported(path[1:])
    if path[0] in OWN:
        return len(path) == 1 or len(path) == 2 and path[1] in OWN_CLASS_ATTRIBUTES.get(path[0], ())
    if tuple(path) in KERAS_CLASSES:
        return True
    if path[0] in OWN_MODULES:
        return len(path) == 2 and path[1] in OWN_MODULES[path[0]][1]
    if len(path) > 1 and path[-1] in getattr(_resolve(path[:-1]), "class_methods", ()):
        return supported(path[:-1])         # (a class's factory: tf.RaggedTensor.from_row_splits, LibraryKind's)
    found = _resolve(path)
    if isinstance(found, DType) or found.__class__ is Tensor and found.weak:     # (a Python number: tf.data.AUTOTUNE)
        return True
    drawing = path[0] in _KERAS_TOPS or path[0] == RANDOM or tuple(path) in _DRAWING    # (the run's generator: Run.rng)
    if _held(found) or found is None and path[0] in HELD:   # (tf.random.Generator.from_seed: the object's own)
        return path[0] in HELD and any(_held(_resolve(path[:i])) for i in range(1, len(path) + 1))
    if isinstance(found, Namespace):
        return False
    if not getattr(found, "is_builtin", False) or not _of_families(found.__module__, path[0]):
        return False
    if found.__module__ in CALLING_BACK:    # (its functions call the program's back: Run.call_value)
        return True
    if found.wants_interp and not drawing or any(found is builtin_named(name) for name in _NOT_TF):
        return False
    code = getattr(found, "__code__", None)
    return code is None or not _CALLABLE_PARAMETERS & set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


# Functions outside tf.random that draw from the run's generator (their builtins take the run)
_DRAWING = frozenset({("nn", "dropout"), ("image", "random_hue"), ("image", "random_saturation")})


# tf's modules of Keras's: tf.keras, and tf.initializers (TensorFlow's name for keras.initializers)
_KERAS_TOPS = frozenset({KERAS, "initializers"})


def _of_families(module: str, top: str) -> bool:
    if top in _KERAS_TOPS:
        return module.startswith("tapecli.library.keras") or module in FAMILIES
    return module in (FAMILIES | RANDOM_FAMILIES if top == RANDOM else FAMILIES)


def _held(found) -> bool:
    """Whether ``found`` is an object of the library that the program holds behind a proxy (not a module)."""
    return isinstance(found, ProgramObject) and not isinstance(found, Namespace)


def builtin_named(name: str):
    """The registry's builtin of this name, or None: the bridge's one way to the registry (BUILTINS), which
    imports the family that registers it first where that family loads on first use."""
    load_word(name.rsplit(".", 1)[-1])
    return BUILTINS.get(name)


def _resolve(path: list[str], strict: bool = False):
    """What ``tf.<path>`` is to the interpreter (Namespace's lookup), or None where it is nothing (``strict``:
    the interpreter's NameError, which says why: out of scope, or tapecli has no such name)."""
    found = Namespace("tf")
    for attr in path:
        if not isinstance(found, Namespace):
            return None
        try:
            found = found.get_attribute(None, attr, None)
        except TdfError:
            if strict:
                raise
            return None
    return found


class Analysis:
    """What a TensorFlow program's text gives its runs (the same in every run of that text: execution/__init__.py
    keeps it with the program's code): its declarations, its ``@tf.function``s' warnings, its planned loops and the
    guard that compiles it (whose ``sites`` the compiled code's call sites index). Nothing here is a run's: a run
    takes copies of what it may change."""

    def __init__(self, tree: ast.Module, source: str):
        from tapecli.execution import guard
        variables, self.constants = declarations(tree, tf_names(tree.tf_aliases))
        self.traced, trace_only = traced_functions(tree, tf_names(tree.tf_aliases))
        self.planned = planned_loops(tree, source)          # (its loop plans: planned_loops.py)
        self.transform = guard.TensorFlowGuard(source, GUARDED, SITE_METHODS, site, variables, trace_only, self.planned)


class Bridge:
    """One run's TensorFlow: its Eager (and through it the tf module and the Run), and the runtime names the
    code that its program's guard (``Analysis.transform``) compiled calls."""

    def __init__(self, analysis: Analysis, sandbox, filename: str, source: str):
        self.eager = sandbox.eager = Eager(Run(sandbox, set(analysis.constants)), filename)
        self.eager.run.source_lines = source.splitlines()
        self.eager.run.traced = dict(analysis.traced)
        # (a tf.function's body is recorded where tf.gradients or tf.hessians may differentiate it: tf_calls)
        self.eager.run.symbolic = re.search(r"\.(?:gradients|hessians)\s*\(", source) is not None
        self.analysis, self.source = analysis, source

    def module(self, name: str) -> types.ModuleType:
        """The program's module of this name (``tensorflow``, ``tensorflow.math``, ``keras.layers``): tf's, or a
        module under it. A framework the bridge does not give (``tf_keras``) is refused by name."""
        if name.split(".")[0] not in BRIDGED:
            from tapecli.execution.modules import refusal
            raise refusal(name)
        module = self.eager.tf
        for attr in framework_path(name):
            module = getattr(module, attr)
        return module

    def names(self, scope: dict) -> dict:
        """The runtime names the guard's code calls, for a program whose globals are ``scope``."""
        from tapecli.execution import guard
        run, sites, (loops, plain) = self.eager.run, self.analysis.transform.sites, self.analysis.planned
        planned = run.loops = ProgramLoops(run.sandbox, self.eager, scope, [shape for _, shape in loops], plain,
                                           self.source)      # (fit's batches take the program's code: fit_plans)
        return {**planned.runtime_names(), guard.SITE: lambda obj, name, index: self.eager.method(obj, name, sites[index]),
                guard.TAPE: _named_tape, guard.COUNT: lambda names: (run.requests.mark(), [scope.get(n) for n in names]),
                guard.BOUND: lambda mark, value, names, line: run.bound(scope, mark, value, names, line),
                guard.DECLARE: _declared, guard.TRACING: lambda: not run.sandbox.muted_prints}


def _named_tape(value, name: str):
    if isinstance(value, GradientTape) and not value.named:
        value.tape.name, value.named = name, True
    return value


def _declared(value, name: str) -> None:
    if isinstance(value, Variable):
        value.name = name


# ------------------------------------------------------------------ the per-run interpreter view
def site(source: str, call: ast.Call) -> Node:
    """The call site of ``X.method(...)`` as the library's request and watch functions read it."""
    def node(arg):
        items = None
        if isinstance(arg, ast.List):
            items = [ast.get_source_segment(source, e) for e in arg.elts]
        elif isinstance(arg, ast.Dict):
            items = [ast.get_source_segment(source, v) for v in arg.values]
        return Node(ast.get_source_segment(source, arg), items, arg.lineno)
    return Node(ast.get_source_segment(source, call.func), line=call.lineno,
                 args=[node(a) for a in call.args if not isinstance(a, ast.Starred)],
                 keywords=[Keyword(k.arg, node(k.value)) for k in call.keywords if k.arg is not None])


class Run:
    """What the library asks of "the interpreter" in a bridged run: the requests and tapes it records, the
    program's output and draws, and the text of a call site (a ``Node``)."""

    _watch_on = Statements._watch_on
    watch_values = Statements.watch_values
    reset_tape = Statements.reset_tape
    _name_requests = Interpreter._name_requests
    _leaf_names = Interpreter._leaf_names
    call_value = Interpreter.call_value         # (a custom gradient's backward, a dataset's map: ProgramCallable)

    calls_tensorflow = True         # every builtin it calls is a function of the tf module (registry.converting)

    def __init__(self, sandbox, constants: set[str]):
        self.sandbox = sandbox
        self.requests = RequestLog()
        self.tapes: list = []
        self.globals = Scope()
        self.globals.consts = constants         # the names of the program's constants (declarations)
        self.numpy = (None, None)       # the last t.numpy() and its t: ``g = t.gradient(...).numpy()`` names a request
        self.labels: dict[int, tuple] = {}    # id of a program's instance -> (it, the prefix of its variables' names)
        self._rng = None
        self.traced: dict[int, str] = {}        # @tf.function's warnings, by line (tf_calls.traced_functions)
        self.symbolic = False       # whether the program names tf.gradients or tf.hessians (Bridge)
        self.function_tapes: list = []      # the tapes of the tf.functions running, innermost last (or None)
        self.tf_global_generator = None     # tf.random.get_global_generator's, made when first asked for
        self.captures = None        # what a tf.function's trace reads from outside it (tf_signatures.Captures)
        self.source_lines: list[str] = []       # the program's (what names a call that leaves the tapes)
        self.loops = None           # the runner of its loop plans (planned_loops.ProgramLoops), once it runs

    @property
    def rng(self):
        """The run's generator, as the interpreter's (seeded 0 until tf.random.set_seed seeds it): what tf.random's
        draws take their numbers from, so a program draws the same numbers on either."""
        if self._rng is None:
            self._rng = np.random.default_rng(0)
        return self._rng

    @rng.setter
    def rng(self, value) -> None:
        self._rng = value

    @property
    def np_random_state(self):
        """NumPy's global generator as the program's ``np.random`` draws from it (state.py): the one
        keras.utils.set_random_seed seeds."""
        return self.sandbox.stand_ins["numpy.random"]["seed"].__self__

    @property
    def output(self):
        return _Lines(self.sandbox)

    @staticmethod
    def text(node) -> str:
        return "" if node is None else node.text or ""

    def add_request(self, kind, tape, target, target_node, source_node, sources, values, result, whys,
                    objective=None):
        labels = source_labels(sources, None if source_node is None else source_node.text,
                               None if source_node is None else source_node.items)
        self.requests.append(new_request(kind, tape, target, self.text(target_node) or None, labels, sources,
                                         values, result, whys, objective, self.globals.consts))

    # ---- names, as the interpreter gives them
    def bound(self, scope: dict, mark: tuple, value, names, line: int) -> None:
        """After a top-level assignment (``mark``: the count of requests and the names' values before it): its
        gradient requests named by the names bound, a variable's name rebound to a tensor warned of, a program's
        instance named (its variables ``m.w``) by the first name it is bound to."""
        first, olds = mark
        if self.requests.mark() > first:
            self._name_requests(first, self.numpy[1] if value is self.numpy[0] else value, names)
        for name, old in zip([names] if isinstance(names, str) else names, olds):
            note_binding(scope, name, old, scope.get(name), line)
        if isinstance(names, str) and self.sandbox.program_made(value) and not isinstance(value, type):
            self.bind_name(value, names)
        # (a module is no layer: tf.raw_ops, whose names TensorFlow's recorded modules leave out, has no bind_name)
        elif isinstance(names, str) and not isinstance(value, types.ModuleType) \
                and hasattr(library_value(value), "bind_name"):
            library_value(value).bind_name(names)   # a Keras layer or model names its variables, as on the interpreter

    def label(self, instance) -> str:
        return self.labels.get(id(instance), (None, type(instance).__name__.lower()))[1]

    def bind_name(self, instance, name: str) -> None:
        old = self.label(instance)
        if old == name or old != type(instance).__name__.lower():
            return
        self.labels[id(instance)] = (instance, name)
        for v in _owned_variables(instance):
            if v.name.startswith(old + "."):
                v.name = name + v.name[len(old):]

    def attribute_set(self, obj, attr: str, value) -> None:
        """``obj.attr = value`` of a program's instance: an unnamed variable takes the name ``label.attr``."""
        if isinstance(value, Variable) and (value.name in ("Variable", "") or value.name.startswith("<")):
            value.name = f"{self.label(obj)}.{attr}"


def _owned_variables(obj, seen=None) -> list:
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, Variable):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [v for item in obj for v in _owned_variables(item, seen)]
    if isinstance(obj, dict):
        return [v for item in obj.values() for v in _owned_variables(item, seen)]
    attrs = getattr(obj, "__dict__", None)
    return [] if not isinstance(attrs, dict) else [v for item in attrs.values() for v in _owned_variables(item, seen)]


class _Lines:
    """The run's output as the library appends lines to it (tf.print) or writes text (a model's summary)."""

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def append(self, line: str) -> None:
        self.sandbox.write(line + "\n", "the library's output")

    def write(self, text: str) -> None:
        self.sandbox.write(text, "the library's output")

    def write_error(self, text: str) -> None:
        self.sandbox.stderr.write(text)


# ------------------------------------------------------------------ tensors' Python protocol
_BINARY = {"add": ops.add, "sub": ops.sub, "mul": ops.mul, "truediv": ops.div, "floordiv": ops.floordiv,
           "mod": ops.mod, "pow": ops.pow_, "matmul": ops.matmul, "eq": ops.equal, "ne": ops.not_equal,
           "lt": ops.less, "le": ops.less_equal, "gt": ops.greater, "ge": ops.greater_equal,
           **{name: (lambda symbol: lambda a, b: ops.bitwise_operator(symbol, a, b))(symbol)
              for name, symbol in (("and", "&"), ("or", "|"), ("xor", "^"))}}
_UNARY = {"neg": ops.neg, "pos": ops.to_tensor, "abs": ops.abs_, "invert": lambda x: ops.bitwise_operator("~", x)}


class Eager:
    """The run's answers to Python's operators and conversions of tensors and variables (values.EagerProtocol),
    and to the program's reads of their attributes (the sandbox's guard)."""

    classes = (Tensor, Variable, GradientTape)

    def __init__(self, run: Run, filename: str):
        self.run = run
        self.filename = filename
        self.tf = tf_module(self)

    def _line(self, depth: int = 2) -> None:
        """The line of the program's statement that runs, for the records and warnings: of the program's frame
        ``depth`` frames above this call, or a few more (an operator the guard weighs first)."""
        frame = sys._getframe(depth)
        for _ in range(3):
            if frame is None or frame.f_code.co_filename == self.filename:
                break
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename == self.filename:
            current().settings.line = frame.f_lineno

    def operator(self, name: str, tensor, *other):
        self._line(3)
        if self.run.captures is not None:
            self.run.captures.read((tensor, other))
        try:                    # (inline, not as_tensorflow: _line's frames, and the hottest path)
            if not other:
                return _UNARY[name](ops.to_tensor(tensor))
            reflected = name[0] == "r" and name[1:] in _BINARY
            value = operand_of(other[0])
            if not isinstance(value, (Tensor, Variable)):
                if not (isinstance(value, (str, bytes)) and tensor.dtype.hasobject
                        or isinstance(value, np.ndarray) and value.dtype.kind in "SU"):
                    return NotImplemented
                value = ops.to_tensor(value)        # a string tensor + "suffix", == NumPy's strings: TensorFlow's ops
            f = _BINARY[name[1:] if reflected else name]
            left, right = (value, tensor) if reflected else (tensor, value)
            return f(*numpy_operands(left, right))      # (NumPy's promotion, where a program switched it on)
        except TdfError as e:
            catchable(e)
            raise

    @as_tensorflow
    def truth(self, tensor) -> bool:
        return truth(tensor)

    @as_tensorflow
    def length(self, tensor) -> int:
        t = ops.to_tensor(tensor)
        if t.ndim == 0:
            raise TdfTypeError("Scalar tensor has no `len()`", hint=f"use {spelling.call('size', 'x')}")
        return t.shape[0]

    @as_tensorflow
    def rows(self, tensor):
        t = ops.to_tensor(tensor)
        if t.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        ops.admit_rows(t)           # (weighed as the interpreter weighs them; made a row at a time, as TensorFlow's)
        return map(as_tensorflow(ops.row), itertools.repeat(t), range(t.shape[0]))

    @as_tensorflow
    def getitem(self, tensor, key):
        self._line(3)
        if self.run.captures is not None:
            self.run.captures.read(tensor)
        t = ops.to_tensor(tensor)
        key = tuple(index_of(k) for k in (key if isinstance(key, tuple) else (key,)))
        if any(isinstance(k, float) for k in key):          # (NumPy's IndexError would read as out of range)
            raise TypeError(not_an_index(next(k for k in key if isinstance(k, float))))
        try:
            t.value[key]
        except IndexError as e:
            raise ShapeError(f"index out of range for shape {list(t.shape)}: {e}") from None
        except ValueError as e:
            raise TdfValueError(str(e)) from None
        result = ops.getitem(t, key)
        if isinstance(tensor, Variable):        # (its assign methods: v[0, 1].assign(5.0))
            current().variable_slices.remember(result, tensor, key)
        return result

    @as_tensorflow
    def number(self, tensor, kind):
        return kind(numpy_of(tensor))

    @as_tensorflow
    def index(self, tensor) -> int:
        return numpy_of(tensor).__index__()

    def str(self, value) -> str:
        return python_str(value)

    def repr(self, value) -> str:
        return python_repr(value)

    @as_tensorflow
    def format(self, value, spec: str) -> str:
        return python_format(value) if not spec else format(numpy_of(value)[()], spec)

    def array(self, tensor):
        leave_tapes_for_numpy(self, tensor)         # (NumPy reads it: np.square(x), np.asarray(x))

        @as_tensorflow
        def array(dtype=None, copy=None):
            value = numpy_of(tensor)
            return value.astype(dtype) if dtype is not None else value.copy()
        return array

    def functional_model(self, *args, **kwargs):
        """``keras.Model(inputs, outputs)``: the library's functional model (keras_classes.Model, called itself)."""
        return library_function(self, builtin_named("Model"), "tf.keras.Model")(*args, **kwargs)

    # ---- attributes
    @staticmethod
    def class_of(obj):
        """``obj.__class__``: as ``type(obj)`` in a TensorFlow program (a library value's named as TensorFlow's)."""
        return type_of(obj)

    def owns(self, obj) -> bool:
        return isinstance(obj, self.classes) or isinstance(obj, TdfError) or (
            isinstance(obj, type) and issubclass(obj, TdfError))

    def attribute(self, obj, name: str, node: Node | None = None):
        if name.startswith("__"):
            return getattr(obj, name)
        if isinstance(obj, (TdfError, type)):       # a library error the program caught (or its class): TensorFlow's
            if name not in ERROR_ATTRIBUTES:
                raise AttributeError(f"type object '{obj.__name__}' has no attribute '{name}'" if isinstance(
                    obj, type) else f"'{type(obj).__name__}' object has no attribute '{name}'")
            return getattr(obj, name)
        if isinstance(obj, GradientTape):
            if name not in TAPE_ATTRIBUTES:
                raise AttributeError(f"'GradientTape' object has no attribute '{name}'")
            return obj.method(name, node)
        if self.run.captures is not None:
            self.run.captures.read(obj)
        allowed = VARIABLE_ATTRIBUTES if isinstance(obj, Variable) else TENSOR_ATTRIBUTES
        if name == KERAS_MASK and isinstance(obj, Tensor) and eager_mask(self.run, obj) is not None:
            return eager_mask(self.run, obj)
        if name in NUMPY_ATTRIBUTES and isinstance(obj, Tensor) and current().numpy_behavior is not None:
            return numpy_attribute(self, obj, name)
        if name == "assign" and current().variable_slices.of(obj) is not None:      # v[0, 1].assign(5.0)
            allowed = {"assign"}
        if name not in allowed:
            raise AttributeError(f"'{'ResourceVariable' if isinstance(obj, Variable) else 'EagerTensor'}' object "
                                 f"has no attribute '{name}'")
        t = obj.read() if isinstance(obj, Variable) else obj
        if name == "numpy":
            def numpy():
                leave_tapes_for_numpy(self, obj)
                value = _numpy(t)
                self.run.numpy = (value, t)
                return value
            return numpy
        if name in ("shape", "get_shape"):      # (a tracing tf.function's parameter: its input_signature's shape)
            placeholder = current().graph_arguments.get(id(obj))
            shape = Shape(t.shape if placeholder is None else placeholder[2])
            if isinstance(obj, Variable) and obj.declared is not None:
                shape = obj.declared
            return shape if name == "shape" else lambda: shape
        if name == "set_shape":
            return lambda shape: _set_shape(t, shape)
        if name == "device":
            return DEVICE
        if name == "constraint":
            return to_program(variable_constraint(obj)) if isinstance(obj, Variable) else None
        if name == "dtype":         # (a Keras variable's dtype is the name of one)
            return dtype_name(t.dtype) if isinstance(obj, Variable) and obj.keras else DType(dtype_name(t.dtype))
        if name == "path" and isinstance(obj, Variable) and obj.keras:
            return keras_path(obj)
        if name == "ndim":
            return t.ndim
        if name == "value" and isinstance(obj, Variable) and obj.keras:     # (Keras's property: its tf.Variable)
            return to_program(BackendVariable(obj))
        if name in ("read_value", "value"):
            return obj.read
        if name == "trainable":
            return obj.trainable
        if name == "name":
            return tensorflow_name(obj)
        found = HOOKS["attribute"](self.run, obj, name, node)           # assign and scatter_nd_update's kin

        @as_tensorflow
        def method(*values, **given):
            self._line()
            if given:       # (a keyword it does not take: TensorFlow's TypeError, which names the method)
                signature = inspect.signature(found.fn)
                unknown = [key for key in given if key not in signature.parameters]
                try:
                    if unknown:
                        raise TypeError(f"got an unexpected keyword argument '{unknown[0]}'")
                    signature.bind(node, *values, **given)
                except TypeError as e:
                    raise TypeError(f"BaseResourceVariable.{name}() {e}") from None
            return found.fn(node, *(to_library(value) for value in values),
                            **{key: to_library(value) for key, value in given.items()})
        method.__name__, method.__qualname__ = name, f"BaseResourceVariable.{name}"
        return method

    def method(self, obj, name: str, node: Node):
        """``obj.name(...)`` at a call site the guard passes (SITE_METHODS): a tape's, with its text."""
        if isinstance(obj, GradientTape):
            return self.attribute(obj, name, node)
        return self.run.sandbox.get(obj, name)


def _numpy(t: Tensor):
    """``t.numpy()``: a copy of its values, a NumPy scalar for a 0-d tensor (as TensorFlow gives them)."""
    array = np.array((ops.materialize(t) if t.weak else t).value, copy=True)
    return array[()] if array.ndim == 0 else array


# ------------------------------------------------------------------ the tf module
def tf_module(eager: "Eager", path: str = "tf") -> types.ModuleType:
    """The program's ``tf`` (or a module under it): each attribute, on first read, the builtin of that name."""
    module = types.ModuleType(TOP if path == "tf" else TOP + path[2:])

    def resolve(attr: str):
        if attr == "__version__" and path in ("tf", "tf.keras"):       # (scripts print the versions first)
            return KERAS_VERSION if path == "tf.keras" else TENSORFLOW_VERSION
        if attr.startswith("_"):
            raise AttributeError(attr)
        lacks = tensorflow_lacks(path, attr)
        if lacks is not None:
            raise AttributeError(lacks[0])
        names = path.split(".")[1:] + [attr]
        if names in _NEWAXIS:
            return None
        value = _own(eager, attr) if len(names) == 1 and attr in OWN else KERAS_CLASSES.get(tuple(names))
        if len(names) == 1 and attr in OWN_MODULES:
            value = OWN_MODULES[attr][0]()
        if value is None:
            found = _resolve(names)
            if isinstance(found, Namespace):
                value = tf_module(eager, f"{path}.{attr}")
            elif not supported(names):
                if found is None:
                    _resolve(names, strict=True)        # (out of scope, with its reason; or a name tapecli lacks)
                raise TdfNameError(f"tf.{'.'.join(names)} runs on tapecli's interpreter only, and CPython runs this "
                                   "TensorFlow program (one the interpreter cannot read)",
                                   hint="the forms the interpreter reads are in docs/language.md")
            elif isinstance(found, (DType, ProgramObject)) or found.__class__ is Tensor:     # (a Python number)
                value = to_program(found)
            else:
                value = program_function(eager, found, f"tf.{'.'.join(names)}")
        module.__dict__[attr] = value
        return value
    module.__getattr__ = resolve
    return module


# The bridge's own classes and functions of tf, by name (tf.Graph and the graph-mode functions: tf_sessions.py).
_OWN_VALUES = {"GradientTape": GradientTape, "TensorSpec": TensorSpec, "TensorShape": Shape, "TypeSpec": TypeSpec,
               "custom_gradient": custom_gradient, "Module": Module, "UnconnectedGradients": UnconnectedGradients,
               "Tensor": TensorType, **tf_sessions.TF2_NAMES}


def _own(eager: "Eager", attr: str):
    if attr in _OWN_VALUES:
        return _OWN_VALUES[attr]
    if attr == "function":
        return tf_function(builtin_named("function"))
    if attr == "print":
        return library_function(eager, builtin_named("tf.print"), "tf.print")
    if attr == "constant":
        return library_function(eager, builtin_named("constant"), "tf.constant")
    return variable_type(library_function(eager, builtin_named("Variable"), "tf.Variable"))


def _set_shape(t: Tensor, shape) -> None:
    """``t.set_shape(shape)``: an eager tensor's shape is known; TensorFlow checks it against the one given."""
    if not Shape(t.shape).is_compatible_with(shape):
        raise TdfValueError(f"Tensor's shape {Shape(t.shape)} is not compatible with supplied shape {Shape(shape)}.")


