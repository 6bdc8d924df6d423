"""Program classes and modules (docs/spec/LANGUAGE.md §11): ``class`` definitions with methods,
attributes and inheritance, ``tf.Module`` / Keras variable collection, ``super()``, and the
namespaces that ``import tensorflow as tf`` and friends bind.

A program's classes and instances are ProgramObjects: attribute reads and writes go through
``get_attribute`` / ``set_attribute`` and never reach Python's own attributes.
"""
from __future__ import annotations

import re

import numpy as np

from tapecli.errors import TdfNameError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.objects import BoundMethod, Function, ProgramObject, Property
from tapecli.runtime.context import current
from tapecli.runtime.tape import leave_tapes, none_recording
from tapecli.runtime.values import BFLOAT16, DTYPE_ALIASES, DTYPES, DType, PythonBool, PythonTuple, Tensor, Variable

# The frameworks a program class can derive from: how they order the variables they collect.
MODULE, KERAS = "tf.Module", "keras"
# The Keras bases a program's model or layer derives from (FrameworkBase names).
LAYER, KERAS_MODEL = "keras.layers.Layer", "keras.Model"


def is_instance(value, kind) -> bool | None:
    """``isinstance(value, kind)`` where ``kind`` is a program's class, a framework base (``tf.Module``,
    ``keras.layers.Layer``, ``keras.Model``...) or a constructor of the library's objects that Keras has as a
    class (``keras.layers.Dense``: its ``makes``); None for a ``kind`` of none of these."""
    if isinstance(kind, ProgramClass):
        return isinstance(value, Instance) and value.cls.derives_from(kind)
    if isinstance(kind, FrameworkBase):
        return kind.has_instance(value)
    made = getattr(kind, "makes", None)
    if made is None:
        return None
    if isinstance(made, FrameworkBase):         # keras.Model, keras.Sequential: the base as well as a maker
        return made.has_instance(value)
    return isinstance(value, made)


class FrameworkBase(ProgramObject):
    """``tf.Module`` or ``keras.layers.Layer`` / ``keras.Model`` as a base class; ``role`` names a Keras base
    whose inherited behaviour the library gives (HOOKS["keras_model"]): "metric" (``keras.metrics.Metric``:
    calling updates and gives the result), "loss" (``keras.losses.Loss``: calling reduces ``call``'s values)."""

    kind_word = "a base class"

    def __init__(self, name: str, framework: str, role: str | None = None):
        self.name = name
        self.framework = framework
        self.role = role

    def call(self, interp, args, kwargs, node):
        raise TdfTypeError(f"{self.name} is a base class here: derive from it with class M({self.name}): ...")

    def has_instance(self, value) -> bool:
        """``isinstance(value, base)``: a program's instance of a class derived from it, or one of the library's
        objects that is one in TensorFlow (a Keras layer is a ``keras.layers.Layer``, not a ``tf.Module``)."""
        if isinstance(value, Instance):
            return value.cls.derives_from(self)
        return self.name in getattr(value, "keras_bases", ())


class ProgramClass(ProgramObject):
    kind_word = "a class"

    def __init__(self, name: str, bases: list, namespace: dict):
        self.name = name
        self.bases = [b for b in bases if isinstance(b, ProgramClass)]
        self.framework_bases = [b for b in bases if isinstance(b, FrameworkBase)]
        frameworks = [b.framework for b in bases if isinstance(b, (ProgramClass, FrameworkBase)) and b.framework]
        self.framework = frameworks[0] if frameworks else None
        self.role = next((b.role for b in bases if isinstance(b, (ProgramClass, FrameworkBase)) and b.role), None)
        self.namespace = namespace

    def find(self, attr: str, skip_self=False):
        """The class attribute ``attr`` and the class that defines it, along the bases (depth first)."""
        if not skip_self and attr in self.namespace:
            return self.namespace[attr], self
        for base in self.bases:
            found = base.find(attr)
            if found[1] is not None:
                return found
        return None, None

    def derives_from(self, kind) -> bool:
        """Whether this class is ``kind`` (a program class or a framework base) or derives from it: Keras's
        ``Model`` is a ``Layer``, so a Model subclass is both."""
        if kind is self:
            return True
        if isinstance(kind, FrameworkBase) and any(
                b.name == kind.name or kind.name == LAYER and b.name == KERAS_MODEL for b in self.framework_bases):
            return True
        return any(b.derives_from(kind) for b in self.bases)

    def get_attribute(self, interp, attr, node):
        value, _ = self.find(attr)
        if value is None and attr == "from_config" and self.framework == KERAS:    # Keras's: cls(**config)
            return BoundMethod(attr, lambda call_node, config: self.call(interp, [], dict(config), call_node))
        if value is None and attr != "__name__":
            raise TdfTypeError(f"class {self.name} has no attribute {attr}")
        return self.name if attr == "__name__" else value

    def set_attribute(self, interp, attr, value, node):
        self.namespace[attr] = value

    def call(self, interp, args, kwargs, node):
        instance = Instance(self, interp)
        if self.framework == KERAS:         # (Keras's Operation keeps them: a layer's automatic config)
            instance.keras_arguments = (list(args), dict(kwargs))
        init, owner = self.find("__init__")
        if isinstance(init, Function):
            result = call_method(interp, init, owner, instance, args, kwargs, node)
            if result is not None:
                raise TdfTypeError(f"{self.name}.__init__ must return None")
        elif self.framework == MODULE:                # tf.Module.__init__(name=None)
            _name_module(instance, *args, **kwargs)
        elif self.framework == KERAS and self.role in (None, "loss"):
            from tapecli.interpreter.registry import HOOKS      # keras.Model(inputs, outputs), or its name; a Loss's
            HOOKS["keras_model"](interp, instance, "__init__").fn(node, *args, **kwargs)
        elif args or (kwargs and not self.framework):
            raise TdfTypeError(f"{self.name}() takes no arguments")
        return instance


class Instance(ProgramObject):
    kind_word = "an object"

    def __init__(self, cls: ProgramClass, interp=None):
        self.cls = cls
        self.interp = interp        # (the run that made it: its printing calls the class's __str__ and __repr__)
        self.attrs: dict = {}
        # what a framework base's __init__ made (keras.Model(inputs, outputs): a functional model): its
        # variables come first, calling the instance calls it unless the class defines call, and it answers the
        # attributes the class and the framework leave unanswered (layers, get_weights, summary, ...)
        self.inner: ProgramObject | None = None
        self.label = cls.name.lower()        # the prefix of its variables' names until it is bound
        self.keras_name: str | None = None   # a Keras layer's or model's name: given, or Keras's automatic one

    def get_attribute(self, interp, attr, node):
        if attr in self.attrs:
            return self.attrs[attr]
        value, owner = self.cls.find(attr)
        if isinstance(value, Function) and attr == "build" and self.cls.framework == KERAS:
            return BoundMethod(attr, lambda call_node, *a, **k: self._built_by(
                call_method(interp, value, owner, self, list(a), k, call_node), a[0] if a else k.get("input_shape")))
        if isinstance(value, Function):
            return BoundMethod(attr, lambda call_node, *a, **k: call_method(interp, value, owner, self, list(a), k,
                                                                            call_node), function=value)
        if isinstance(value, Property):
            return call_method(interp, value.getter, owner, self, [], {}, node)
        if owner is not None:
            return value
        if self.cls.framework:
            # (a tf.Module's collections are tuples, a Keras layer's lists: as TensorFlow and Keras give them)
            held = PythonTuple if self.cls.framework == MODULE else list
            if attr == "submodules" and self.cls.framework == MODULE:
                return held(module_leaves(self, lambda m: m.attrs, _is_module, _is_module))
            if attr == "variables":
                return held(self.layer_variables())
            # (a Keras layer set trainable = False holds every weight of its as non-trainable)
            frozen = self.cls.framework == KERAS and "trainable" in self.attrs and not truth(self.attrs["trainable"])
            if attr in ("trainable_variables", "trainable_weights"):
                return held(v for v in self.owned_variables() if v.trainable and not frozen)
            if attr in ("non_trainable_variables", "non_trainable_weights"):
                listed = self.layer_variables() if attr == "non_trainable_variables" else self.owned_variables()
                return held(v for v in listed if not v.trainable or frozen)
            if attr == "weights":          # Keras: each layer's weights in turn (owned_variables)
                return list(self.owned_variables())
            if attr == "name":
                return self.keras_name or self.label if self.cls.framework != MODULE else \
                    getattr(self, "module_name", None) or module_name(self.cls.name)
            if attr == "built" and self.cls.framework == KERAS:    # (set when build ran: a first call, or build())
                return PythonBool(np.array(getattr(self, "keras_built", False)))
            if attr == "add_weight" and self.cls.framework == KERAS:
                return BoundMethod(attr, lambda call_node, *a, **k: _add_weight(interp, self, *a, **k))
            from tapecli.interpreter.registry import HOOKS
            if self.cls.framework == KERAS and "keras_model" in HOOKS:     # compile, fit, add_loss, metrics, ...
                found = HOOKS["keras_model"](interp, self, attr)
                if found is not None:
                    return found
            if self.inner is not None:
                return self.inner.get_attribute(interp, attr, node)
        raise TdfTypeError(f"{self.cls.name} object has no attribute {attr}")

    def set_attribute(self, interp, attr, value, node):
        if isinstance(self.cls.find(attr)[0], Property):
            raise TdfTypeError(f"property {attr} of {self.cls.name} has no setter", hint="tapecli reads properties only")
        if isinstance(value, Variable) and value.name in ("Variable", "") or (
                isinstance(value, Variable) and value.name.startswith("<")):
            value.name = f"{self.label}.{attr}"
        self.attrs[attr] = value
        if attr == "trainable" and self.cls.framework == KERAS and self.cls.role is None:
            from tapecli.interpreter.registry import HOOKS     # (Keras's setter: its weights and layers follow)
            HOOKS["keras_trainable"](interp, self, value)

    def called_method(self) -> Function | None:
        """The program's method that calling the object runs as it is now (``__call__``, or a built Keras
        model's or layer's ``call``), or None where the call does more (builds the object, or is a Keras
        metric's or loss's own): what a loop plan may take in (``interpreter/loop_plans.py``)."""
        method = self.cls.find("__call__")[0]
        if method is None and self.cls.role is None and self.cls.framework == KERAS \
                and getattr(self, "keras_built", False):
            method = self.cls.find("call")[0]
        return method if isinstance(method, Function) else None

    def call(self, interp, args, kwargs, node):
        if self.cls.framework == KERAS and self.cls.role is None and self.cls.find("__call__")[0] is None:
            from tapecli.interpreter.registry import HOOKS     # Keras's Layer.__call__ around the call
            if "keras_call" in HOOKS:
                return HOOKS["keras_call"](interp, self, args, kwargs, node, self.call_as_defined)
        return self.call_as_defined(interp, args, kwargs, node)

    def call_as_defined(self, interp, args, kwargs, node):
        method, owner = self.cls.find("__call__")
        if method is None and self.cls.role is not None:        # a Keras Metric's or Loss's own __call__
            from tapecli.interpreter.registry import HOOKS
            return HOOKS["keras_model"](interp, self, "__call__").fn(node, *args, **kwargs)
        if method is None and self.cls.framework == KERAS:
            method, owner = self.cls.find("call")
            if method is None and self.inner is not None:
                return self.inner.call(interp, args, kwargs, node)
            if isinstance(method, Function) and "training" in kwargs and \
                    "training" not in {p.name for p in method.node.params}:
                kwargs = {k: v for k, v in kwargs.items() if k != "training"}
        if not isinstance(method, Function):
            raise TdfTypeError(f"{self.cls.name} object is not callable", hint="define __call__ (or call, for Keras)")
        if self.cls.framework == KERAS and not getattr(self, "keras_built", False):
            self._build(interp, args, node)
        return call_method(interp, method, owner, self, args, kwargs, node)

    def own_text(self, *names: str) -> str | None:
        """The text the first of the methods ``names`` (``__str__``, ``__repr__``) the program's class defines gives,
        as Python's str and repr call it; None where it defines none."""
        for name in names:
            method, owner = self.cls.find(name)
            if isinstance(method, Function):
                text = call_method(self.interp, method, owner, self, [], {}, None)
                if not isinstance(text, str):
                    raise TdfTypeError(f"{name} returned non-string (type {type(text).__name__})")
                return text
        return None

    def _built_by(self, result, shape):
        """Keras's: a layer whose ``build`` the program calls is built (its first call builds it no more), and
        records the shape it was built for (its config's build_config)."""
        self.keras_built = True
        self.keras_build_shape = shape
        return result

    def _build(self, interp, args, node):
        """Keras calls a layer's ``build(input_shape)`` before its first ``call``."""
        self.keras_built = True
        if not args:
            return
        from tapecli.interpreter.registry import HOOKS

        def shape_of(x):            # (a list of inputs: a list of their shapes, as Keras's build gets them)
            if isinstance(x, (list, tuple)):
                return [shape_of(v) for v in x]
            return HOOKS["attribute"](interp, x, "shape", node) if isinstance(x, (Tensor, Variable)) else None
        self.keras_build_shape = shape_of(args[0])          # (its config's build_config)
        build, owner = self.cls.find("build")
        if isinstance(build, Function):
            call_method(interp, build, owner, self, [self.keras_build_shape], {}, node)

    def owned_variables(self, variables: bool = False) -> list:
        """Its variables (a Keras layer's ``weights``); with ``variables``, a Keras layer's ``variables``: the seed
        generators' states too, those it holds after its own weights."""
        if self.cls.framework == MODULE:
            return list(module_leaves(self, lambda m: m.attrs, _is_module, lambda v: isinstance(v, Variable)))
        names = list(self.attrs)
        out, seen = [], set()
        if self.cls.framework == KERAS:
            # Keras's Layer.weights: the layer's own variables (trainable, then the others), then each layer it
            # holds, in the order assigned, with its weights in the same order
            own = [v for v in self.attrs.values() if isinstance(v, Variable)]
            for v in [v for v in own if v.trainable] + [v for v in own if not v.trainable]:
                _collect(v, out, seen)
            if variables:
                for held in self.attrs.values():
                    if isinstance(held, ProgramObject) and held.keras_own_state:
                        _collect(held, out, seen, variables)
        if self.inner is not None:
            _collect(self.inner, out, seen, variables)
        for name in names:
            _collect(self.attrs[name], out, seen, variables)
        return out

    def layer_variables(self) -> list:
        return self.owned_variables(variables=self.cls.framework == KERAS)

    def bind_name(self, name: str) -> None:
        """The first binding names the object's variables: ``model.w`` rather than ``linear.w``."""
        old = self.label
        if old == name or not old == self.cls.name.lower():
            return
        self.label = name
        for v in self.owned_variables():
            if v.name.startswith(old + "."):
                v.name = name + v.name[len(old):]


# TensorFlow's camel_to_snake (module.py): a tf.Module's default name is its class's name in snake case.
# Both compiled on first use (re's cache): a program without a tf.Module never needs them.
_CAMEL_TO_SNAKE = r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))"
_IDENTIFIER = r"^[a-zA-Z_]([a-zA-Z0-9_])*$"


def module_name(class_name: str, given=None) -> str:
    """A tf.Module's name: the one given to its ``__init__`` (a Python identifier), else its class's."""
    if given is None:
        return re.sub(_CAMEL_TO_SNAKE, r"_\1", class_name).lower()
    if not isinstance(given, str) or not re.match(_IDENTIFIER, given):
        raise TdfValueError(f"'{given}' is not a valid module name. Module names must be valid Python identifiers "
                            "(e.g. a valid class name).")
    return given


def _name_module(instance, name=None) -> None:
    instance.module_name = module_name(instance.cls.name, name)


def module_leaves(module, fields, is_module, predicate, seen: set | None = None, stack: tuple = ()):
    """What ``tf.Module`` collects (``variables``, ``submodules``), as TensorFlow's module.py does: the values of
    the module's ``fields`` in sorted order, each flattened as ``tf.nest`` flattens (lists and tuples in order,
    dicts by sorted key), every leaf once, those ``predicate`` takes; then those of the modules it holds, in the
    order found. A Keras layer is no module (nor a nest): its variables are not a tf.Module's."""
    seen = {id(module)} if seen is None else seen
    held = []
    own = fields(module)
    for key in sorted(own):
        for leaf in _nest_leaves(own[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if is_module(leaf) and id(module) not in stack:
                held.append(leaf)
    for submodule in held:
        yield from module_leaves(submodule, fields, is_module, predicate, seen, (*stack, id(module)))


def _nest_leaves(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _nest_leaves(item)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from _nest_leaves(value[key])
    else:
        yield value


def _is_module(value) -> bool:
    return isinstance(value, Instance) and value.cls.framework == MODULE


def _collect(value, out: list, seen: set, variables: bool = False) -> None:
    """The variables ``value`` holds (a layer's weights; with ``variables``, its ``layer_variables``), each once."""
    if isinstance(value, Variable):
        if id(value) not in seen:
            seen.add(id(value))
            out.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, out, seen, variables)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            _collect(value[key], out, seen, variables)
    elif isinstance(value, ProgramObject):
        for v in value.layer_variables() if variables else value.owned_variables():
            _collect(v, out, seen)


def call_method(interp, fn: Function, owner: ProgramClass, instance, args, kwargs, node):
    """Call a method with ``self``; ``super()`` inside it sees the class that defines it."""
    interp.method_stack.append((owner, instance))
    try:
        return interp.call_function(fn, [instance, *args], kwargs, node)
    finally:
        interp.method_stack.pop()


class Super(ProgramObject):
    kind_word = "super()"

    def __init__(self, owner: ProgramClass, instance: Instance):
        self.owner = owner
        self.instance = instance

    def get_attribute(self, interp, attr, node):
        value, owner = self.owner.find(attr, skip_self=True)
        if isinstance(value, Property):
            return call_method(interp, value.getter, owner, self.instance, [], {}, node)
        if isinstance(value, Function):
            return BoundMethod(attr, lambda call_node, *a, **k: call_method(interp, value, owner, self.instance,
                                                                            list(a), k, call_node))
        if attr == "__init__" and self.owner.role is not None:     # a Keras Loss keeps its reduction
            from tapecli.interpreter.registry import HOOKS
            return HOOKS["keras_model"](interp, self.instance, "super().__init__")
        if attr == "__init__" and self.owner.framework == KERAS:     # keras.Model(inputs, outputs), or nothing
            from tapecli.interpreter.registry import HOOKS
            return HOOKS["keras_model"](interp, self.instance, "__init__")
        if attr == "__init__" and self.owner.framework == MODULE:
            return BoundMethod(attr, lambda call_node, name=None: _name_module(self.instance, name))
        if attr == "__init__" and self.owner.framework:
            return BoundMethod(attr, lambda call_node, *a, **k: None)    # a Layer: nothing to set up
        if value is not None:
            return value
        if self.owner.framework == KERAS and attr != "__init__":     # super().compile(), super().get_config()
            from tapecli.interpreter.registry import HOOKS
            found = HOOKS["keras_model"](interp, self.instance, attr) if "keras_model" in HOOKS else None
            if found is not None:
                return found
        raise TdfTypeError(f"super() has no attribute {attr}")


def _add_weight(interp, instance, name=None, shape=None, initializer="glorot_uniform", trainable=True,
                dtype=None, regularizer=None, constraint=None, **ignored):
    from tapecli.interpreter.registry import HOOKS
    from tapecli.runtime.context import current
    from tapecli.runtime.values import DType
    if isinstance(shape, (Tensor, Variable)):
        dims = [int(d) for d in np.atleast_1d(numpy_value(shape))]
    else:
        dims = [int(numpy_value(d)) for d in (shape if isinstance(shape, list) else [] if shape is None else [shape])]
    want = dtype.np if isinstance(dtype, DType) else current().settings.float_dtype
    value = HOOKS["initializer"](initializer, interp=interp).make(dims, interp.rng, want)
    scopes = list(getattr(interp, "keras_scopes", ()))      # (Keras's path: the layers' name scopes open)
    own = instance.keras_name or instance.label
    path = "/".join([*scopes, *([own] if not scopes or scopes[-1] != own else []), name or "variable"])
    var = Variable(f"{instance.label}.{name or 'weight'}", value, trainable=bool(
        trainable.value if isinstance(trainable, Tensor) else trainable), tf_name=name or "variable", keras=path)
    if var.trainable:           # (it follows the layer's trainable: subclassing.set_trainable)
        instance.__dict__.setdefault("keras_trainable_made", set()).add(var.id)
    instance.attrs.setdefault(name or f"weight_{len(instance.attrs)}", var)
    HOOKS["weight_constraint"](var, constraint, interp)       # (applied after each optimizer step)
    if regularizer is not None:         # (layer.losses applies it to the weight: keras/training.py)
        instance.weight_regularizers = [*getattr(instance, "weight_regularizers", []), (var, regularizer)]
    return var


class Namespace(ProgramObject):
    """A module a program imported (``tf``, ``tf.keras.layers``, ``np``, ``math``): its attributes are the
    builtins of the same name, looked up when read, so every builtin family is reachable. Where a module's
    name differs from TensorFlow's (``keras.layers.add`` takes a list), the builtin registered as
    ``"layers.add"`` (the module's last name, a dot, the attribute) wins over the flat one."""

    kind_word = "a module"
    is_module = True                 # (registry.converting: a call through a module the program imported)
    SUBMODULES = frozenset(("math", "nn", "linalg", "random", "keras", "layers", "losses", "optimizers",
                            "activations", "initializers", "metrics", "schedules", "experimental", "compat",
                            "v1", "v2", "config", "dtypes", "backend", "ops", "models", "regularizers", "signal",
                            "image", "io", "data", "strings", "sparse", "audio", "train", "summary", "distribute",
                            "bitwise", "autograph", "debugging", "nest", "ragged", "sets", "test", "saved_model",
                            "lite", "callbacks", "utils", "preprocessing", "applications", "constraints",
                            "mixed_precision", "datasets", "special", "tpu", "xla", "quantization", "autodiff",
                            "saving", "sequence", "text", "lookup", "raw_ops"))
    # TensorFlow spellings whose builtin has another name (same meaning).
    ALIASES = {"array": "convert_to_tensor", "asarray": "convert_to_tensor", "Tensor": "convert_to_tensor",
               "random_normal": "normal", "random_uniform": "uniform", "mean_squared_error": "mean_squared_error",
               "tanh": "tanh", "float_": "float64", "seed": "set_seed", "double": "float64", "realdiv": "truediv",
               "rint": "round", "absolute": "abs"}

    # Modules whose names are their own builtins alone (``experimental.numpy.sum``, NumPy's sum as TensorFlow gives
    # it), never the flat builtin of that name (tf.split's sizes are not np.split's indices): a name tapecli does not
    # give there is not given at all; so are tf.raw_ops's ops (tf.raw_ops.Add is no tf.add of a program's arguments).
    CLOSED = frozenset(("tf.experimental.numpy", "tf.raw_ops"))

    def __init__(self, path: str):
        self.path = path

    def get_attribute(self, interp, attr, node):
        from tapecli.interpreter.registry import BUILTINS, HOOKS, load_deferred, load_word
        load_word(attr)                 # the families that register a name of this word (read where CPython runs tf)
        load_word(self.path.partition(".")[0])      # and those of the module's (np, where numpy is imported as onp)
        if self.path == "tf" and attr in _TF1_GRAPHS:
            raise TdfNameError(f"tf.{attr} (TensorFlow 1's graphs, sessions and optimizers: tf.compat.v1) runs on "
                               "CPython's run only, not on tapecli's interpreter",
                               hint="TAPECLI_TF_ON_CPYTHON=1 or auto (the default) runs the program on CPython")
        why = HOOKS["out_of_scope"](f"{self.path}.{attr}") if "out_of_scope" in HOOKS else None
        if why is not None:
            raise TdfNameError(f"{self.path}.{attr} is out of scope for tapecli: {why}",
                               hint="docs/tf-surface.md lists what is left out, and why")
        lacks = tensorflow_lacks(self.path, attr)
        if lacks is not None:
            raise TdfNameError(lacks[0], hint=lacks[1])
        # A builtin registered for this module only wins over the flat name: np.random.seed, random.split,
        # keras.initializers.zeros (not tf.zeros), keras.random.normal (tf.keras.random.normal too).
        # keras.ops.nn, .numpy, .linalg, .image, .math, .core are keras.ops' functions (keras.ops.nn.max_pool is
        # keras.ops.max_pool, not tf.nn.max_pool) before their module's flat name.
        parts = self.path.split(".")
        keras_ops = "keras" in parts and "ops" in parts[:-1]
        qualified = next((q for q in (f"{self.path}.{attr}", f"{self.path.removeprefix('tf.')}.{attr}",
                                      *((f"ops.{attr}",) if keras_ops else ()), f"{parts[-1]}.{attr}")
                          if q in BUILTINS), None)
        if f"{self.path}.{attr}" in self.CLOSED or parts[-1] == "ops" and "keras" in parts and attr in _KERAS_OPS_MODULES:
            return Namespace(f"{self.path}.{attr}")
        if qualified is None and self.path in self.CLOSED:
            if load_deferred():         # (a family its program's text does not name)
                return self.get_attribute(interp, attr, node)
            raise TdfNameError(f"tapecli has no {self.path}.{attr}: it gives part of {self.path}, not this function",
                               hint="docs/tf-surface.md lists what it gives")
        if qualified is None and self.path.split(".")[0] in _OFF_THE_TAPE and "host_module_name" in HOOKS:
            found = HOOKS["host_module_name"](self.path, attr)      # NumPy's own, computed by NumPy
            if found is not None:
                return NumpyFunction(found, f"{self.path}.{attr}") if getattr(found, "is_builtin", False) else found
        if attr in self.SUBMODULES and attr not in BUILTINS and qualified is None:
            return Namespace(f"{self.path}.{attr}")
        name = qualified or self.ALIASES.get(attr, attr)
        if name in DTYPES or name in DTYPE_ALIASES or name == BFLOAT16:
            return DType(name)             # tf.bool is the dtype; the bare name bool is Python's function
        if name in BUILTINS:
            found = BUILTINS[name]
            if self.path.split(".")[0] in _OFF_THE_TAPE and getattr(found, "is_builtin", False):
                return NumpyFunction(found, f"{self.path}.{attr}")
            if (parts[-1] == "ops" or keras_ops) and "keras" in parts and getattr(found, "is_builtin", False) \
                    and "keras_op" in HOOKS:
                return HOOKS["keras_op"](found)         # (on Keras tensors: a node of a functional model's graph)
            return found
        if attr in self.SUBMODULES:
            return Namespace(f"{self.path}.{attr}")
        if load_deferred():         # (a name its program's text does not spell out)
            return self.get_attribute(interp, attr, node)
        raise TdfNameError(f"tapecli has no {self.path}.{attr}", hint=_close_hint(attr, BUILTINS))


# keras.ops' modules (keras.ops.numpy.cumsum is keras.ops.cumsum)
_KERAS_OPS_MODULES = frozenset(("nn", "numpy", "linalg", "image"))

# tf's names of TensorFlow 1's graphs, which CPython's run gives (execution/tf_sessions.py)
_TF1_GRAPHS = frozenset({"compat", "Graph", "gradients", "hessians"})


def tensorflow_lacks(path: str, attr: str) -> tuple[str, str | None] | None:
    """TensorFlow's error (and a hint) where its module ``path`` has no ``attr``: a name resolves only where
    TensorFlow has it, not wherever tapecli has a builtin of that name (library/scope.py)."""
    from tapecli.interpreter.registry import HOOKS
    return HOOKS["tensorflow_lacks"](path, attr) if "tensorflow_lacks" in HOOKS else None


# Modules whose functions compute with NumPy (or Python floats) on a tensor's values: no tape records them.
_OFF_THE_TAPE = ("np", "math")


class NumpyFunction(ProgramObject):
    """``np.square(x)``, ``math.exp(x)``: the builtin's values, off every tape (TensorFlow gives None for
    a gradient through NumPy); each recording tape notes where its path left it, for the `why`."""

    kind_word = "a NumPy function"

    def __init__(self, fn, spelling: str):
        self.fn = fn
        self.spelling = spelling

    def call(self, interp, args, kwargs, node):
        from tapecli.interpreter.registry import call_builtin
        return off_the_tape(lambda: call_builtin(self.fn, interp, node, args, kwargs), f"{self.spelling}()",
                            node.line, list(args) + list(kwargs.values()))

    def get_attribute(self, interp, attr, node):
        """The function's own attributes: a ufunc's methods (``np.add.at``, ``np.maximum.reduce``), NumPy's."""
        from tapecli.interpreter.registry import HOOKS
        found = HOOKS["host_module_name"](self.spelling, attr)
        if found is None:
            raise TdfNameError(f"{self.spelling} has no attribute {attr!r}")
        return NumpyFunction(found, f"{self.spelling}.{attr}") if getattr(found, "is_builtin", False) else found


def off_the_tape(compute, what: str, line, inputs):
    """``compute()``'s value with every tape paused, as values no tape knows (new tensors)."""
    tapes = current().tapes
    leave_tapes(tapes, what, line, inputs)
    with none_recording(tapes):
        return detached(compute())


def detached(value):
    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, Tensor):
        out = value.__class__(value.value, weak=value.weak)     # (a NumPy value stays one)
        if hasattr(value, "source"):        # (a numpy() copy: the tensor it is the values of)
            out.source = value.source
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(detached(v) for v in value)
    return value


def _close_hint(name: str, names) -> str | None:
    import difflib
    close = difflib.get_close_matches(name, [n for n in names if not n.startswith("_")], n=1, cutoff=0.8)
    return f"the closest builtin is {close[0]}" if close else None


def numpy_value(t) -> object:
    """A scalar tensor as a Python number, for formatting (f-strings, %, float())."""
    a = t.read().value if isinstance(t, Variable) else t.value
    return a.item() if a.ndim == 0 else a

