"""Initializers with Keras 3's defaults, fans, scales and numbers: a random initializer takes its seed when it
is made (the one given, else Keras's make_default_seed: ``randint(1, 1e9)`` of the run's Python ``random``,
which keras.utils.set_random_seed seeds), and draws with TensorFlow's stateless ops of that seed, as Keras's
TensorFlow backend does (kernels/tf_random.py: bit for bit), the same values at every call."""
from __future__ import annotations

import math

import numpy as np

from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.kernels import tf_linalg, tf_random
from tapecli.library.keras.common import KerasObject, dims, float_dtype, num, seed_value
from tapecli.runtime.context import current
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import NumpyArray, Tensor, Variable

_TRUNC_STD = 0.87962566103423978      # stddev of a unit normal truncated at two stddevs


def fans(shape) -> tuple[float, float]:
    """Keras's compute_fans."""
    shape = tuple(shape)
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


def glorot_uniform(shape, rng: np.random.Generator, dtype) -> np.ndarray:
    """Uniform on [-limit, limit], limit = sqrt(6 / (fan_in + fan_out))."""
    limit = glorot_limit(shape)
    return rng.uniform(-limit, limit, size=shape).astype(dtype)


def glorot_limit(shape) -> float:
    """sqrt(6 / (fan_in + fan_out)), as Keras's docstring states it; Keras's VarianceScaling divides
    by max(1, fan_avg), which makes it sqrt(3) for an empty shape."""
    fan_in, fan_out = fans(shape)
    return math.sqrt(6.0 / (fan_in + fan_out)) if fan_in + fan_out >= 2 else math.sqrt(3.0)


def truncated_normal(rng, shape, mean, stddev) -> np.ndarray:
    """Normal values redrawn until within two stddevs of the mean, as Keras's truncated_normal."""
    out = rng.normal(0.0, 1.0, size=shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.normal(0.0, 1.0, size=int(bad.sum()))
        bad = np.abs(out) > 2.0
    return mean + stddev * out


KERAS_SEED_MOD = 2**31 - 2        # keras.random's _cast_seed: floormod(seed, int32 max - 1)


def keras_seed(seed: int, counter: int = 0) -> tuple[int, int]:
    """The stateless seed keras.random gives TensorFlow for an int seed (draw_seed: [seed, 0], then _cast_seed)."""
    return seed % KERAS_SEED_MOD, counter % KERAS_SEED_MOD


def make_default_seed() -> int:
    """Keras's make_default_seed: an int of the run's Python random (seeded by keras.utils.set_random_seed)."""
    return current().python_random().randint(1, int(1e9))


class SeedGenerator(KerasObject):
    """keras.random.SeedGenerator: state [seed, 0] (seed None: make_default_seed, drawn when it is made);
    ``next()`` gives the state's stateless seed, then counts on (a Dropout layer's draws at each training
    call); Keras's global one (``ordered=False``) moves its state to ``(state + 1) * 5387 % 933199``. Its state is
    Keras's non-trainable ``seed_generator_state`` variable once a layer's variables list it (``variable``): the
    variable then holds it, so that an assign of it (a stateless call's, a program's) is the state the next draw
    reads."""

    kind_word = "a SeedGenerator"
    keras_name = "SeedGenerator"
    keras_own_state = True

    def __init__(self, seed=None, name=None, **ignored):
        if name is None:            # (Keras's auto_name, counted per run)
            ctx = current()
            name = "seed_generator" + (f"_{ctx.seed_generators}" if ctx.seed_generators else "")
            ctx.seed_generators += 1
        self.name = name
        self.held = [make_default_seed() if seed is None else int(seed_value(seed)), 0]
        self.state_variable: Variable | None = None

    @property
    def state(self) -> list[int]:
        if self.state_variable is None:
            return self.held
        return [int(v) for v in self.state_variable.read().value]

    @state.setter
    def state(self, value: list[int]) -> None:
        self.held = value
        if self.state_variable is not None:
            self.state_variable.assign(np.array(value, np.int64))

    def variable(self) -> Variable:
        """Keras's state variable (int64 [seed, counter], not trainable), made at its first use."""
        if self.state_variable is None:
            path = f"{self.name}/seed_generator_state"
            self.state_variable = Variable(path, np.array(self.held, np.int64), False, tf_name="seed_generator_state",
                                           keras=path)
        return self.state_variable

    def layer_variables(self) -> list:
        return [self.variable()]

    def next(self, ordered=True) -> tuple[int, int]:
        state = self.state
        found = keras_seed(*state)
        self.state = [state[0], state[1] + 1] if ordered else [(v + 1) * 5387 % 933199 for v in state]
        return found

    def attributes(self):
        return {"state": self.variable, "name": self.name}

    def methods(self):
        return {"next": lambda ordered=True: Tensor(np.array(self.next(ordered), np.int32))}


class Initializer(KerasObject):
    kind_word = "an initializer"
    keras_name = "Initializer"
    keras_bases = ("keras.Initializer",)
    seeded = True           # (its values are drawn)
    default_seed = True     # (Keras's RandomInitializer: a seed drawn when made; TensorFlow's own: none)

    def __init__(self, seed=None, **config):
        self.seed = seed_of(seed)
        self.config = config
        self.drawn_seed = make_default_seed() if self.seeded and self.default_seed and self.seed is None else None

    def sample(self, shape, rng) -> np.ndarray:
        raise NotImplementedError

    def values(self, shape, seed, dtype) -> np.ndarray:
        """Keras's numbers of a random initializer: keras.random's draws of the stateless seed ``seed``."""
        raise NotImplementedError

    def python_class(self) -> str | None:
        """``type(initializer)``: Keras 3's class, in its module (TensorFlow's own initializers: init_ops_v2's)."""
        if not self.default_seed or self.keras_name.endswith("_initializer"):
            return f"tensorflow.python.ops.init_ops_v2.{_TF_CLASSES.get(self.keras_name, self.keras_name)}"
        module = "random_initializers" if self.seeded else "constant_initializers"
        return f"keras.src.initializers.{module}.{self.keras_name}"

    def make(self, shape, rng, dtype) -> np.ndarray:
        seed = self.seed if self.seed is not None else self.drawn_seed
        if self.seeded and seed is not None and np.dtype(dtype).kind == "f":
            return np.asarray(self.values(tuple(shape), keras_seed(int(seed)), np.dtype(dtype)), dtype)
        if self.seed is not None:
            rng = np.random.default_rng(self.seed)
        return np.asarray(self.sample(tuple(shape), rng), dtype=np.float64).astype(dtype)

    def call(self, interp, args, kwargs, node):
        shape = dims(args[0] if args else kwargs.get("shape"), "shape")
        from tapecli.runtime.values import DType
        dtype = kwargs.get("dtype")
        if isinstance(dtype, str):
            dtype = DType(dtype)
        dtype = dtype.np if isinstance(dtype, DType) else self.default_dtype()
        return Tensor(self.make(shape, interp.rng, dtype))

    def default_dtype(self):
        return float_dtype()

    def attributes(self):
        return {k: (lambda v=v: Tensor(np.asarray(v, np.float32))) for k, v in self.config.items()}

    def get_config(self) -> dict:
        """Keras 3.15's config: the seed (of an initializer that draws), then the arguments."""
        return {"seed": self.seed, **self.config} if self.seeded else dict(self.config)

    def clone(self) -> "Initializer":
        """``cls.from_config(init.get_config())``, as Keras's attention layers give each sublayer its own: one
        given no seed draws a fresh one (so their weights differ)."""
        return get({"class_name": self.keras_name, "config": self.get_config()})

    def methods(self):
        return {"get_config": self.get_config}


class Zeros(Initializer):
    keras_name = "Zeros"
    seeded = False

    def sample(self, shape, rng):
        return np.zeros(shape)


class Ones(Initializer):
    keras_name = "Ones"
    seeded = False

    def sample(self, shape, rng):
        return np.ones(shape)


def _array(value, what) -> np.ndarray:
    """A constant initializer's value as an array: a number, a (nested) list or a tensor; a NumPy array the
    program's own, as TensorFlow and Keras keep it (a later write to it shows in what the initializer makes)."""
    from tapecli.library.keras.common import tensor
    if value.__class__ is NumpyArray and value.ndim:
        return value.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.asarray(value, np.float32 if isinstance(value, float) else np.int32)
    try:
        return np.asarray(tensor(value, what).value)
    except TdfTypeError:
        raise TdfTypeError(f"{what} must be a number, a list of numbers or an array, got {type_word(value)}") \
            from None


class Constant(Initializer):
    """keras.initializers.Constant: ``cast(value, dtype) * ones(shape)`` (Keras 3), so an array value
    broadcasts against the shape."""
    keras_name = "Constant"
    seeded = False

    def __init__(self, value=0.0):
        super().__init__()
        self.value = _array(value, "Constant's value")

    def attributes(self):
        return {"value": lambda: Tensor(self.value.copy())}

    def get_config(self):
        return {"value": self.value.tolist()}

    def make(self, shape, rng, dtype):
        try:
            return (self.value.astype(dtype) * np.ones(shape, dtype)).astype(dtype)
        except ValueError:
            raise ShapeError(f"Constant: a value of shape {list(self.value.shape)} does not broadcast to the "
                             f"shape {list(shape)}") from None


class TFConstant(Constant):
    """tf.constant_initializer: ``tf.constant(value, dtype, shape)``: the value reshaped to the shape when
    it has as many elements, one element filled in, anything else a TypeError; without a dtype, the
    value's own."""
    keras_name = "constant_initializer"

    def __init__(self, value=0, support_partition=False):
        super().__init__(value)

    def make(self, shape, rng, dtype):
        dtype = self.value.dtype if dtype is None else dtype
        n = int(np.prod(shape))
        if self.value.size == n:
            return self.value.astype(dtype).reshape(shape)
        if self.value.size == 1:
            return np.full(shape, self.value.reshape(()), dtype)
        raise TdfTypeError(f"tf.constant_initializer: the value has {self.value.size} elements, but the shape "
                           f"{list(shape)} has {n} elements",
                           hint="give as many values as the shape has elements, or one value")

    def default_dtype(self):
        return None


class RandomNormal(Initializer):
    keras_name = "RandomNormal"

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed, mean=num(mean, "mean"), stddev=num(stddev, "stddev"))

    def sample(self, shape, rng):
        return rng.normal(self.config["mean"], self.config["stddev"], size=shape)

    def values(self, shape, seed, dtype):
        return tf_random.stateless_normal(seed, shape, dtype, self.config["mean"], self.config["stddev"])


class TruncatedNormal(Initializer):
    keras_name = "TruncatedNormal"

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed, mean=num(mean, "mean"), stddev=num(stddev, "stddev"))

    def sample(self, shape, rng):
        return truncated_normal(rng, shape, self.config["mean"], self.config["stddev"])

    def values(self, shape, seed, dtype):
        return tf_random.stateless_truncated_normal(seed, shape, dtype, self.config["mean"], self.config["stddev"])


class RandomUniform(Initializer):
    keras_name = "RandomUniform"

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed, minval=num(minval, "minval"), maxval=num(maxval, "maxval"))

    def sample(self, shape, rng):
        return rng.uniform(self.config["minval"], self.config["maxval"], size=shape)

    def values(self, shape, seed, dtype):
        return keras_uniform(seed, shape, dtype, self.config["minval"], self.config["maxval"])


class VarianceScaling(Initializer):
    keras_name = "VarianceScaling"

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise TdfValueError(f'mode must be "fan_in", "fan_out" or "fan_avg", got {mode!r}')
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise TdfValueError('distribution must be "truncated_normal", "untruncated_normal" or "uniform", '
                                f'got {distribution!r}')
        super().__init__(seed, scale=num(scale, "scale"))
        self.mode, self.distribution = mode, distribution

    def get_config(self):
        axes = {"input_axes": None, "output_axes": None}     # (Keras 3.15's; tapecli's fans are Keras's defaults)
        if type(self).keras_name != "VarianceScaling":       # GlorotUniform, HeNormal, ...: their seed alone
            return {"seed": self.seed, **axes}
        return {**super().get_config(), "mode": self.mode, "distribution": self.distribution, **axes}

    def sample(self, shape, rng):
        fan_in, fan_out = fans(shape)
        scale = self.config["scale"]
        scale /= max(1.0, {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode])
        if self.distribution == "truncated_normal":
            return truncated_normal(rng, shape, 0.0, math.sqrt(scale) / _TRUNC_STD)
        if self.distribution == "untruncated_normal":
            return rng.normal(0.0, math.sqrt(scale), size=shape)
        limit = math.sqrt(3.0 * scale)
        return rng.uniform(-limit, limit, size=shape)

    def values(self, shape, seed, dtype):
        fan_in, fan_out = fans(shape)
        scale = self.config["scale"]
        scale /= max(1.0, {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode])
        if self.distribution == "truncated_normal":
            return tf_random.stateless_truncated_normal(seed, shape, dtype, 0.0, math.sqrt(scale) / _TRUNC_STD)
        if self.distribution == "untruncated_normal":
            return tf_random.stateless_normal(seed, shape, dtype, 0.0, math.sqrt(scale))
        limit = math.sqrt(3.0 * scale)
        return keras_uniform(seed, shape, dtype, -limit, limit)


def keras_uniform(seed, shape, dtype, minval, maxval):
    """keras.random.uniform: its bounds cast to the dtype by TensorFlow (a Python float through float32)."""
    low, high = (np.float64(np.float32(v)) if dtype == np.float64 else v for v in (minval, maxval))
    return tf_random.stateless_uniform(seed, shape, dtype, low, high)


class GlorotUniform(VarianceScaling):
    keras_name = "GlorotUniform"

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def sample(self, shape, rng):
        limit = glorot_limit(shape)
        return rng.uniform(-limit, limit, size=shape)


def _variance_scaling(name, scale, mode, distribution):
    """A VarianceScaling initializer with Keras's fixed arguments (GlorotNormal, HeNormal, ...)."""
    def __init__(self, seed=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed)
    return type(name, (VarianceScaling,), {"keras_name": name, "__init__": __init__})


GlorotNormal = _variance_scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _variance_scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _variance_scaling("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _variance_scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _variance_scaling("LecunUniform", 1.0, "fan_in", "uniform")


class Identity(Initializer):
    """keras.initializers.Identity: ``gain * eye(rows, cols)``, for 2-D shapes only."""
    keras_name = "Identity"
    seeded = False

    def __init__(self, gain=1.0):
        super().__init__(gain=num(gain, "gain"))

    def get_config(self):
        return {}           # (Keras 3.15's Identity writes no gain)

    def sample(self, shape, rng):
        if len(shape) != 2:
            raise TdfValueError(f"Identity matrix initializer can only be used for 2D matrices. Received: "
                                f"shape={tuple(shape)} of rank {len(shape)}.")
        return self.config["gain"] * np.eye(*shape)


class Orthogonal(Initializer):
    keras_name = "Orthogonal"

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed, gain=num(gain, "gain"))

    def sample(self, shape, rng):
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        cols = shape[-1] if shape else 1
        a = rng.normal(0.0, 1.0, size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.config["gain"] * q.reshape(shape)

    def values(self, shape, seed, dtype):
        """Keras's: a normal draw of (max, min) of the rows and columns, its QR's Q with the signs of R's
        diagonal (TensorFlow's QR below 48 columns, NumPy's from there: the last bits may differ)."""
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        cols = shape[-1] if shape else 1
        a = tf_random.stateless_normal(seed, (max(rows, cols), min(rows, cols)), dtype)
        q, r = tf_linalg.qr(a) or np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (dtype.type(self.config["gain"]) * q.reshape(shape)).astype(dtype)


# TensorFlow's own initializer classes (tf.zeros_initializer, ...): their classes' names in init_ops_v2
_TF_CLASSES = {"zeros_initializer": "Zeros", "ones_initializer": "Ones", "random_normal_initializer": "RandomNormal",
               "random_uniform_initializer": "RandomUniform", "constant_initializer": "Constant"}

BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal, "normal": RandomNormal,
    "random_uniform": RandomUniform, "uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": HeNormal,
    "he_uniform": HeUniform, "orthogonal": Orthogonal, "variance_scaling": VarianceScaling,
    "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform, "identity": Identity,
}
CLASSES = [Zeros, Ones, Constant, TFConstant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
           GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal, LecunUniform, Identity, Orthogonal]
BY_CLASS_NAME = {cls.keras_name: cls for cls in CLASSES}
# keras.initializers' other spellings of its classes (registered as "initializers.NAME": tf.zeros is another)
ALIASES = {**{n: c for n, c in BY_NAME.items() if n not in ("normal", "uniform")},
           "IdentityInitializer": Identity, "OrthogonalInitializer": Orthogonal}


class ProgramInitializer(Initializer):
    """A program's function, or an instance of its Initializer subclass, called as Keras calls an
    initializer: ``initializer(shape, dtype=...)``."""

    def __init__(self, fn, interp):
        self.fn, self.interp = fn, interp

    def clone(self) -> "Initializer":
        return self         # (the program's own object: what its from_config would make is the program's)

    def make(self, shape, rng, dtype) -> np.ndarray:
        from tapecli.runtime.values import PythonTuple
        dims = PythonTuple(Tensor(np.array(d, dtype=np.int64), weak=True) for d in shape)
        value = self.interp.call_value(self.fn, [dims], {"dtype": np.dtype(dtype).name})
        return np.asarray(tensor_value(value), dtype=dtype) * np.ones(shape, dtype)


def tensor_value(value):
    return value.read().value if hasattr(value, "read") else value.value if isinstance(value, Tensor) else value


def described(value, interp=None) -> Initializer:
    """The initializer ``value`` names, made to write its config: the run's Python random is left as it was
    (Keras serializes the layer's own initializer, which drew its seed once, when the layer was made)."""
    generator = current().python_random()
    state = generator.getstate()
    try:
        return get(value, interp=interp)
    finally:
        generator.setstate(state)


def get(value, seed=None, interp=None) -> Initializer:
    """An initializer from a name, an initializer object or its config (keras.initializers.serialize's), or
    (with the interpreter) a program's function or callable object."""
    from tapecli.interpreter.objects import BoundMethod, Function, ProgramObject
    if isinstance(value, Initializer):
        return value
    if value is None:
        return AddWeightDefault()
    if interp is not None and isinstance(value, (Function, ProgramObject, BoundMethod)):
        return ProgramInitializer(value, interp)
    if isinstance(value, dict) and value.get("class_name") in BY_CLASS_NAME:
        config = {k: v for k, v in value.get("config", {}).items()      # (Keras 3.15's fan axes: tapecli's are
                  if k not in ("input_axes", "output_axes") or v is not None}   # its defaults, None)
        return BY_CLASS_NAME[value["class_name"]](**config)
    if isinstance(value, str) and value in BY_NAME:
        cls = BY_NAME[value]
        if cls in (Zeros, Ones, Constant, Identity):
            return cls()
        init = cls()
        init.seed = seed
        return init
    raise TdfValueError(f"unknown initializer {value!r}",
                        hint="use one of " + ", ".join(f'"{n}"' for n in BY_NAME) + " or an initializer object")


class AddWeightDefault(Initializer):
    """No initializer (None, as a layer's ``bias_initializer=None``): Keras's add_weight then makes one for the
    weight when it makes the weight (its seed drawn then), glorot_uniform for a float weight, else zeros."""
    keras_name = "AddWeightDefault"
    seeded = False

    def make(self, shape, rng, dtype):
        return get("glorot_uniform" if np.dtype(dtype).kind == "f" else "zeros").make(shape, rng, dtype)

    def clone(self) -> Initializer:
        return self


def seed_of(value):
    return seed_value(value)


# TensorFlow's own initializer classes (init_ops_v2), called as init(shape, dtype=tf.float32): Keras's, renamed
class OnesInitializer(Ones):
    keras_name = "ones_initializer"


class ZerosInitializer(Zeros):
    keras_name = "zeros_initializer"


class RandomNormalInitializer(RandomNormal):
    keras_name = "random_normal_initializer"
    default_seed = False        # (TensorFlow's: its seed is the op's, tf.random.normal's)


class RandomUniformInitializer(RandomUniform):
    keras_name = "random_uniform_initializer"
    default_seed = False


TENSORFLOW_INITIALIZERS = [OnesInitializer, ZerosInitializer, RandomNormalInitializer, RandomUniformInitializer]
