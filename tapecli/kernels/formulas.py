"""Kernels generated from an elementwise op's scalar formula: the op table hands its formula down
(``kernels.register(..., formula=...)``) and every backend compiles it here, so an elementwise op without a
hand-written kernel is one entry in the op table and still runs on NumPy, Numba and cuda. An op with a NumPy
kernel written by hand may take its Numba kernel alone from its formula (``numba="formula"`` on its entry:
``add``, ``sqrt``, ``relu``, ...); a backend's kernel written by hand comes first.

A formula is the op's fusion template (``Op.fusion``): Python source of one element, ``{0}``, ``{1}`` its
inputs, ``{alpha}`` an attribute, in the scalar language of the fused kernels: ``math.*``, ``abs``,
``_F(1.0)`` (a constant of the result's dtype), ``a if c else b`` and the helpers ``_exp``, ``_log``,
``_tanh``, ``_sigmoid``, ``_softplus``, ``relu(x, zero)``, ``sign(x, zero, one)``, ``maximum``,
``minimum`` (``kernels/fusion_math.py``). Each backend evaluates it with its own functions of those names:

* NumPy: over whole arrays (``a if c else b`` as ``np.where``; ``math.f`` as NumPy's ufunc of that name),
  the op's own kernels for the helpers (``_exp`` is the exp kernel);
* Numba: a loop over the elements, compiled on first use for each dtype (and attributes) into the
  cache folder, launched as the hand-written Numba kernels are (``numba_support._launch``);
* cuda: a device function per dtype, called by the backend's elementwise kernel
  (``cuda.device_math.formula_function``).

The kernels room never reads the op table: what it knows of an op is what ``register`` handed down
(``kernels.FORMULAS``).
"""
from __future__ import annotations

import ast
import math

import numpy as np

from .numpy_kernels import FORMULAS


def source(name: str, inputs, attrs: dict) -> str:
    """The formula of kernel ``name`` as an expression of ``inputs`` (names), its attributes filled in."""
    formula, _ = FORMULAS[name]
    return formula.format(*inputs, **attrs)


def _key(attrs: dict):
    return tuple(sorted(attrs.items()))


# ------------------------------------------------------------------ NumPy

class _Vectorized(ast.NodeTransformer):
    """The scalar expression over arrays: ``a if c else b`` as ``_where(c, a, b)``, ``and``/``or``/``not`` as
    NumPy's logical functions (Python's would ask an array for its truth)."""

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Name("_where", ast.Load()), [node.test, node.body, node.orelse], [])

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "_and" if isinstance(node.op, ast.And) else "_or"
        out = node.values[0]
        for v in node.values[1:]:
            out = ast.Call(ast.Name(name, ast.Load()), [out, v], [])
        return out

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Name("_not", ast.Load()), [node.operand], [])
        return node


# math's names whose NumPy function is spelled otherwise
_NUMPY_SPELLING = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
                   "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


class _NumpyMath:
    """``math`` over arrays: NumPy's function of the name, else math's function element by element."""

    def __getattr__(self, name):
        f = getattr(np, _NUMPY_SPELLING.get(name, name), None)
        if f is None:
            scalar = getattr(math, name)
            vectorized = np.vectorize(scalar, otypes=[np.float64])
            f = (lambda *xs: vectorized(*xs)) if callable(scalar) else scalar
        setattr(self, name, f)
        return f


def _numpy_namespace():
    from .numpy_kernels import RAW_KERNELS as K
    return {"np": np, "math": _NumpyMath(), "abs": np.abs, "inf": np.inf, "nan": np.nan,
            "_where": np.where, "_and": np.logical_and, "_or": np.logical_or, "_not": np.logical_not,
            "_exp": K["exp"], "_log": K["log"], "_tanh": K["tanh"], "_sigmoid": K["sigmoid"],
            "_softplus": K["softplus"], "maximum": np.maximum, "minimum": np.minimum,
            "relu": lambda x, zero: np.where(x < zero, zero, x), "sign": lambda x, zero, one: np.sign(x)}


def _numpy_function(name: str, attrs: dict):
    """``f(_F, x0, x1, ...)``: the formula over arrays, ``_F`` the result's scalar type."""
    _, arity = FORMULAS[name]
    inputs = [f"x{j}" for j in range(arity)]
    tree = ast.parse(source(name, inputs, attrs), mode="eval")
    body = ast.fix_missing_locations(_Vectorized().visit(tree)).body
    args = [ast.arg("_F")] + [ast.arg(x) for x in inputs]
    function = ast.Expression(ast.Lambda(ast.arguments([], args, None, [], [], None, []), body))
    return eval(compile(ast.fix_missing_locations(function), f"<formula {name}>", "eval"), _numpy_namespace())


def numpy_kernel(name: str):
    compiled: dict = {}

    def run(*args, **attrs):
        key = _key(attrs)
        f = compiled.get(key)
        if f is None:
            f = compiled[key] = _numpy_function(name, attrs)
        dtype = np.result_type(*args)
        out = f(dtype.type, *args)
        return out.astype(dtype, copy=False) if isinstance(out, (np.ndarray, np.generic)) else np.asarray(out, dtype)
    run.__name__ = name
    return run


# ------------------------------------------------------------------ Numba

def numba_prelude(dtype: np.dtype) -> str:
    """The head of a generated Numba module: the scalar language's names for ``dtype`` (fusion's kernels
    start with it too)."""
    f32 = dtype == np.dtype(np.float32)
    impls = "expf, tanhf, sigmoidf, softplusf, logf" if f32 else "exp64, tanh64, sigmoid64, softplus64, log64"
    return f'''"""Generated by tapecli. Do not edit; delete freely."""
import math

import numpy as np
from numba import prange

from tapecli.kernels.numba_support import _at, _jit
from tapecli.kernels.fusion_math import (BLOCK, block_sum, expf, exp64, logf, log64, maximum, minimum, relu,
                                          sigmoid64, sigmoidf, sign, softplus64, softplusf, tanh64, tanhf)

_F = np.{"float32" if f32 else "float64"}
inf, nan = math.inf, math.nan      # the repr of a literal that overflowed
_exp, _tanh, _sigmoid, _softplus, _log = {impls}

'''


_NUMBA: dict = {}           # (name, dtype, attrs) -> compiled kernel


def _numba_kernel(name: str, dtype: np.dtype, attrs: dict):
    key = (name, dtype.char, _key(attrs))
    k = _NUMBA.get(key)
    if k is None:
        from .numba_support import load_source
        _, arity = FORMULAS[name]
        inputs = [f"x{j}" for j in range(arity)]
        lines = [numba_prelude(dtype), "@_jit", f"def kernel({', '.join(inputs)}, out):",
                 "    for i in range(out.size):"]
        lines += [f"        a{j} = _at(x{j}, i)" for j in range(arity)]
        lines.append(f"        out[i] = {source(name, [f'a{j}' for j in range(arity)], attrs)}")
        k = _NUMBA[key] = load_source("formula", "\n".join(lines) + "\n").kernel
    return k


def numba_call(name: str, *arrays, **attrs):
    """Kernel ``name`` on float arrays of one dtype (broadcast as NumPy does), compiled from its formula;
    NotImplemented for what the NumPy kernel takes instead (other dtypes, operands it would copy)."""
    from .numba_support import _float_dtype, _launch, _operands
    dtype = _float_dtype(*arrays)
    if dtype is None:
        return NotImplemented
    shape, flat = _operands(*arrays)
    if shape is None:
        return NotImplemented
    out = np.empty(shape, dtype)
    _launch(_numba_kernel(name, dtype, attrs), *flat, out.reshape(-1))
    return out
