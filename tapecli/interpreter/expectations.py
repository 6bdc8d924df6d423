"""`expect` and `expect_error` (docs/spec/LANGUAGE.md §8): checked, recorded, and execution goes on."""
from __future__ import annotations

import numpy as np

from tapecli.frontend import ast
from tapecli import ops
from tapecli.interpreter.conversions import to_float, to_int, truth
from tapecli.interpreter.registry import builtin, call_builtin
from tapecli.errors import ERROR_KINDS, TdfError, TdfNameError, TdfTypeError
from tapecli.runtime.tape import as_tensor, type_word
from tapecli.interpreter.objects import _list_as_tensor
from tapecli.runtime.values import Tensor, Variable, dtype_name

# The tolerance of `~=` by dtype: (rtol, atol).
DEFAULT_TOLERANCE = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-14)}


def tolerance(*tensors) -> tuple[float, float]:
    strong = [t for t in tensors if not t.weak] or list(tensors)
    names = {dtype_name(t.dtype) for t in strong}
    if "float32" in names or not names & {"float64"}:
        return DEFAULT_TOLERANCE["float32"] if names & {"float32", "float64"} else (0.0, 0.0)
    return DEFAULT_TOLERANCE["float64"]


def _close(a: Tensor, b: Tensor, rtol: float, atol: float) -> Tensor:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        from tapecli.errors import ShapeError
        raise ShapeError(f"cannot compare shapes {list(a.shape)} and {list(b.shape)}") from None
    with np.errstate(all="ignore"):
        x, y = a.value.astype(np.float64), b.value.astype(np.float64)
        return Tensor(np.asarray(np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)))


@builtin()
def allclose(a, b, rtol=1e-5, atol=1e-8):
    """True when every |a - b| <= atol + rtol * |b|, as numpy.allclose (NaN equals NaN)."""
    ta, tb = (ops.stack(x) if isinstance(x, list) else ops.to_tensor(x) for x in (a, b))
    return Tensor(np.array(bool(np.all(_close(ta, tb, to_float(rtol), to_float(atol)).value))))


def _program_call(interp, f):
    """A program function as gradcheck's ``call(list_of_tensors)``."""
    from tapecli.interpreter.objects import Function
    if not isinstance(f, Function):  # a builtin or a layer has no body to re-run in float64
        raise TdfTypeError(f"gradcheck takes a function first, got {type_word(f)}")
    return lambda xs: interp.call_value(f, list(xs))


def _check_kwargs(kwargs):
    out = {}
    for key in ("eps", "rtol", "atol"):
        if kwargs.get(key) is not None:
            out[key] = to_float(kwargs[key], key)
    if kwargs.get("seed") is not None:
        out["seed"] = to_int(kwargs["seed"], "seed")
    return out


def _derivative_check(name):
    def run(interp, f, args, eps=None, rtol=None, atol=None, seed=None):
        from tapecli.autodiff import gradcheck       # imported on use: not part of a small program's start-up
        report = getattr(gradcheck, name)(_program_call(interp, f), args, **_check_kwargs(
            {"eps": eps, "rtol": rtol, "atol": atol, "seed": seed}))
        interp.expectations.last_report = report
        return Tensor(np.array(report.ok))
    return run


builtin("gradcheck", interp=True)(_derivative_check("gradcheck"))
builtin("gradgradcheck", interp=True)(_derivative_check("gradgradcheck"))


def _jsonable(value):
    from tapecli.interpreter.jsonvalue import to_json
    return to_json(value)


class Expectations:
    def __init__(self, interp):
        self.interp = interp
        self.results = interp.expectation_results
        self.last_report = None       # the GradcheckReport of the latest gradcheck call

    def approx_equal(self, left, right):
        a, b = ops.to_tensor(left), ops.to_tensor(right)
        rtol, atol = tolerance(a, b)
        return _close(a, b, rtol, atol), rtol, atol

    def _record(self, node, ok, actual=None, expected=None, rtol=0.0, atol=0.0, message=None):
        self.results.append({"line": node.line, "expr": self.interp.text(node.test) if isinstance(node, ast.Expect)
                             else f"expect_error {node.kind}", "ok": bool(ok), "actual": actual,
                             "expected": expected, "rtol": rtol, "atol": atol, "message": message})

    def assertion(self, node, ok: bool, actual, expected, message: str | None) -> None:
        """A Python ``assert`` that ran: its test's text, and for a comparison both sides (``expected`` is
        True for any other test); ``message``, for a failure, says it as pytest does (``assert 0.5 < 1e-06``)."""
        self.results.append({"line": node.line, "expr": self.interp.text(node.test), "ok": bool(ok),
                             "actual": _jsonable(actual), "expected": _jsonable(expected), "rtol": 0.0, "atol": 0.0,
                             "message": message})

    def expect(self, node: ast.Expect, scope):
        interp = self.interp
        message = None if node.message is None else interp.eval(node.message, scope)
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left = interp.eval(test.left, scope)
            right = interp.eval(test.comparators[0], scope)
            op = test.ops[0]
            rtol = atol = 0.0
            if op in ("is", "is not"):
                ok = (left is right) == (op == "is")
            elif op == "~=" or op == "==":
                if _is_tensor(left) or _is_tensor(right):
                    left, right = _list_as_tensor(left), _list_as_tensor(right)
                if _is_tensor(left) and _is_tensor(right):
                    a, b = ops.to_tensor(left), ops.to_tensor(right)
                    if a.shape != b.shape and a.ndim and b.ndim:
                        ok = False          # only a scalar is compared with every element
                    elif op == "~=":
                        result, rtol, atol = self.approx_equal(a, b)
                        ok = bool(np.all(result.value))
                    else:
                        ok = bool(np.all(a.value == b.value)) if a.value.size or b.value.size else True
                else:
                    ok = truth(interp.compare(op, left, right)) if left is not None and right is not None \
                        else (left is right) == (op == "==")
            else:
                ok = bool(np.all(as_tensor(interp.compare(op, left, right)).value))
            self._record(node, ok, _jsonable(left), _jsonable(right), rtol, atol, message)
            return
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "allclose":
            args = [interp.eval(a, scope) for a in test.args]
            kwargs = {kw.name: interp.eval(kw.value, scope) for kw in test.keywords}
            rtol = to_float(kwargs.get("rtol", 1e-5))
            atol = to_float(kwargs.get("atol", 1e-8))
            ok = truth(call_builtin(allclose, interp, test, args, kwargs))
            self._record(node, ok, _jsonable(args[0]) if args else None,
                         _jsonable(args[1]) if len(args) > 1 else None, rtol, atol, message)
            return
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and \
                test.func.id in ("gradcheck", "gradgradcheck"):
            self.last_report = None
            value = interp.eval(test, scope)
            report = self.last_report
            self._record(node, report.ok, {"max_abs_error": report.max_abs_error,
                                           "max_rel_error": report.max_rel_error, "worst": report.worst},
                         "finite differences", report.rtol, report.atol,
                         message if message is not None else report.summary())
            return
        value = interp.eval(test, scope)
        ok = bool(np.all(as_tensor(value).value)) if _is_tensor(value) else truth(value)
        self._record(node, ok, _jsonable(value), True, message=message)

    def expect_error(self, node: ast.ExpectError, scope):
        if node.kind not in ERROR_KINDS:
            raise TdfNameError(f"unknown error kind {node.kind}", hint="one of " + ", ".join(sorted(ERROR_KINDS)))
        try:
            self.interp.exec_block(node.body, scope)
        except TdfError as e:
            if e.kind == "LimitError" != node.kind:
                raise                   # a limit stops the run: not the failure of an expectation to go past
            if e.kind == node.kind:
                self._record(node, True, e.kind, node.kind)
            else:
                self._record(node, False, e.kind, node.kind, message=e.message)
            return
        self._record(node, False, "no error", node.kind)


def _is_tensor(v) -> bool:
    return isinstance(v, (Tensor, Variable))
