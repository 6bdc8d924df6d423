"""Scalar formulas of the elementwise ops and gradient helpers, as numba.cuda device functions.

One function per hand-written NumPy kernel of an elementwise op (attribute variants get their own:
``masked_grad`` per kind, ``cast`` to bool), following NumPy's special values: nan propagates
through ``maximum``/``minimum``/``relu``, ``sign(0) = 0``, ``round`` rounds half to even. The generated
kernels (``launch.elementwise``) call them once per element; the fused expressions of a program call
the same table (``launch.fused``).
"""
from __future__ import annotations

import math
import types

import numba
import numpy as np
from numba import cuda

from tapecli.kernels import formulas
from tapecli.kernels.numpy_kernels import FORMULAS as OP_FORMULAS



def _neg(x): return -x
def _sin(x): return math.sin(x) if x - x == 0 else math.nan        # inf: nan (Python's math raises)
def _cos(x): return math.cos(x) if x - x == 0 else math.nan
def _tan(x): return math.tan(x) if x - x == 0 else math.nan
def _exp(x): return math.inf if x > 709.782712893384 else math.exp(x)      # (Python's math.exp raises)
def _log(x): return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
def _log1p(x): return math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan)
def _sqrt(x): return math.sqrt(x) if x >= 0 else math.nan
def _rsqrt(x): return 1.0 / math.sqrt(x) if x > 0 else (math.copysign(math.inf, x) if x == 0 else math.nan)
def _square(x): return x * x
def _abs(x): return abs(x)
def _tanh(x): return math.tanh(x)
def _erf(x): return math.erf(x)
def _floor(x): return x if (x != x or abs(x) >= 4503599627370496.0) else float(math.floor(x))     # nan, inf, and
def _ceil(x): return x if (x != x or abs(x) >= 4503599627370496.0) else float(math.ceil(x))       # 2**52+ as they are
def _logical_not(x): return not x
def _identity(x): return x
def _nonzero(x): return x != 0


def _sign(x):
    return 0 if x == 0 else (1 if x > 0 else (-1 if x < 0 else x))


def _round(x):
    # half to even, as np.round
    if x != x or abs(x) >= 4503599627370496.0:
        return x
    f = float(math.floor(x))
    d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 != 0):
        return f + 1
    return f


def _sigmoid(x):
    e = math.exp(-abs(x))
    return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)


def _softplus(x):
    return (x if x > 0 else 0.0) + math.log1p(math.exp(-abs(x)))


def _relu(x):
    return 0 if x < 0 else x       # (TensorFlow's: nan stays nan, -0 stays -0)


def _elu(x, alpha):
    return x if x > 0 else alpha * math.expm1(x)


def _leaky_relu(x, alpha):
    return x if x > 0 else x * alpha


def _masked_relu(g, x, alpha):
    return g if x > 0 else 0


def _masked_abs(g, x, alpha):
    return g * (0 if x == 0 else (1 if x > 0 else (-1 if x < 0 else x)))


def _masked_leaky(g, x, alpha):
    return g if x > 0 else g * alpha


def _add(a, b): return a + b
def _sub(a, b): return a - b
def _mul(a, b): return a * b
def _pow(a, b): return a ** b
def _less(a, b): return a < b
def _less_equal(a, b): return a <= b
def _greater(a, b): return a > b
def _greater_equal(a, b): return a >= b
def _equal(a, b): return a == b
def _not_equal(a, b): return a != b
def _logical_and(a, b): return bool(a) and bool(b)
def _logical_or(a, b): return bool(a) or bool(b)


def _div(a, b):
    if b == 0:
        return math.nan if a == 0 or a != a else (math.inf if a > 0 else -math.inf) * (1 if math.copysign(1.0, b) > 0 else -1)
    return a / b


def _floordiv(a, b):
    return _floor(a / b) if b != 0 else _div(a, b)


def _mod(a, b):
    return a - _floor(a / b) * b if b != 0 else math.nan


def _maximum(a, b):
    return a if (a > b or a != a) else b


def _minimum(a, b):
    return a if (a < b or a != a) else b


def _where(c, a, b):
    return a if c else b


def _clip(x, lo, hi):
    y = x if (x > lo or x != x) else lo
    return y if (y < hi or y != y) else hi


FORMULAS = {
    "neg": _neg, "sin": _sin, "cos": _cos, "tan": _tan, "exp": _exp, "log": _log, "log1p": _log1p,
    "sqrt": _sqrt, "rsqrt": _rsqrt, "square": _square, "abs": _abs, "sign": _sign, "tanh": _tanh,
    "sigmoid": _sigmoid, "softplus": _softplus, "relu": _relu, "elu": _elu, "leaky_relu": _leaky_relu,
    "erf": _erf, "round": _round, "floor": _floor, "ceil": _ceil,
    "logical_not": _logical_not, "cast": _identity, "cast_bool": _nonzero,
    "add": _add, "sub": _sub, "mul": _mul, "div": _div, "floordiv": _floordiv, "mod": _mod, "pow": _pow,
    "maximum": _maximum, "minimum": _minimum, "less": _less, "less_equal": _less_equal, "greater": _greater,
    "greater_equal": _greater_equal, "equal": _equal, "not_equal": _not_equal, "logical_and": _logical_and,
    "logical_or": _logical_or, "where": _where, "clip": _clip,
    "masked_grad": _masked_relu, "masked_grad_abs": _masked_abs, "masked_grad_leaky": _masked_leaky,
}

# The attributes a formula takes after its inputs, in order (with the kernel's defaults).
ATTRS = {"elu": (("alpha", 1.0),), "leaky_relu": (("alpha", 0.2),), "masked_grad": (("alpha", 0.2),),
         "masked_grad_abs": (("alpha", 0.2),), "masked_grad_leaky": (("alpha", 0.2),)}

# formulas that are another of a kernel's (its attributes choose): the others are the kernels' names
VARIANTS = {"cast_bool": "cast", "masked_grad_abs": "masked_grad",
            "masked_grad_leaky": "masked_grad"}
KERNELS = frozenset(FORMULAS) - VARIANTS.keys()

DEVICE = {name: cuda.jit(device=True)(f) for name, f in FORMULAS.items()}
SIMULATED = bool(numba.config.ENABLE_CUDASIM)


# The scalar helpers a fused expression's statements call (``fusion.codegen.element_body``), under the
# names and signatures of ``kernels.fusion_math``.
def _relu2(x, zero): return zero if x < zero else x
def _sign3(x, zero, one): return zero if x == zero else (one if x > zero else (-one if x < zero else x))


FUSED = {name: DEVICE[op] for name, op in (("_exp", "exp"), ("_tanh", "tanh"), ("_sigmoid", "sigmoid"),
                                           ("_softplus", "softplus"), ("_log", "log"), ("maximum", "maximum"),
                                           ("minimum", "minimum"))}
FUSED.update(relu=cuda.jit(device=True)(_relu2), sign=cuda.jit(device=True)(_sign3))


# Under numba's CUDA simulator a kernel runs as Python, and Python's math raises where a GPU's math library (and
# NumPy, the CPU kernels') gives nan or inf: math.sqrt(-1), math.sin(inf), math.exp(1000), math.pow(0, -1),
# math.log(0). The fused kernels' statements call math.* (fusion.codegen); under the simulator they get this
# stand-in, whose functions give NumPy's answer where Python's math raises (the same bits where it does not).
_NUMPY_FOR = {"pow": np.power, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
              "acosh": np.arccosh, "atanh": np.arctanh, "atan2": np.arctan2, "lgamma": lambda x: np.inf}


def _numpy_where_math_raises(name: str):
    f = getattr(math, name)
    fallback = _NUMPY_FOR.get(name) or getattr(np, name)

    def call(*args):
        try:
            return f(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            with np.errstate(all="ignore"):
                return float(fallback(*(float(a) for a in args)))
    return call


SIMULATED_MATH = types.SimpleNamespace(**{name: getattr(math, name) for name in dir(math) if not name.startswith("_")})
for _name in ("sin", "cos", "tan", "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "pow", "sinh", "cosh",
              "asin", "acos", "asinh", "acosh", "atanh", "atan2", "lgamma"):
    setattr(SIMULATED_MATH, _name, _numpy_where_math_raises(_name))


def formula_function(name: str, dtype: np.dtype, attrs: dict) -> str:
    """The name in ``DEVICE`` of kernel ``name``'s formula (``kernels/formulas.py``: an op with no hand-written
    kernel) as a device function for results of ``dtype``, its attributes filled in; made on first use, in
    the fused kernels' scalar language (``FUSED``, ``_F`` the dtype's scalar type)."""
    key = f"{name}[{dtype.str}]{sorted(attrs.items())}"
    if key not in DEVICE:
        inputs = [f"x{j}" for j in range(OP_FORMULAS[name][1])]
        code = f"def f({', '.join(inputs)}):\n    return {formulas.source(name, inputs, attrs)}\n"
        ns = {"math": SIMULATED_MATH if SIMULATED else math, "np": np, "_F": dtype.type, "inf": math.inf,
              "nan": math.nan, **FUSED}
        exec(compile(code, f"<formula {name}>", "exec"), ns)
        DEVICE[key] = cuda.jit(device=True)(ns["f"])
    return key
