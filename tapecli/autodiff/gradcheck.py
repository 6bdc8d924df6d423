"""gradcheck / gradgradcheck: the tape's derivatives against central finite differences.

The function is re-run on float64 copies of its arguments, so the finite differences
are accurate; the full jacobian is compared for small problems and a few seeded random
directions (v^T J u) for large ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tapecli.autodiff import gradients, jacobians
from tapecli import ops
from tapecli.errors import TdfTypeError
from tapecli.runtime.context import current
from tapecli.runtime.tape import Tape, as_tensor, recording
from tapecli.runtime.values import Tensor, Variable, dtype_name, is_float

# Defaults by the dtype the check runs in: (eps, rtol, atol).
DEFAULTS = {"float64": (1e-6, 1e-5, 1e-8), "float32": (1e-3, 1e-2, 1e-4)}
FULL_JACOBIAN_LIMIT = 4096        # input elements x output elements compared one by one
DIRECTIONS = 3


@dataclass
class GradcheckReport:
    ok: bool
    dtype: str
    eps: float
    rtol: float
    atol: float
    method: str                     # "full jacobian" or "N random directions"
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    worst: str | None = None        # where the largest error is
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (f"{self.method} in {self.dtype}: max abs error {self.max_abs_error:.3g}, "
                f"max rel error {self.max_rel_error:.3g} (eps {self.eps:g}, rtol {self.rtol:g}, atol {self.atol:g})")
        if self.worst:
            text += f", worst at {self.worst}"
        if self.seed is not None:
            text += f", seed {self.seed}"
        for note in self.notes:
            text += f"; {note}"
        return text


class _Paused:
    """Run without the program's open tapes: finite differences must not be recorded."""

    def __enter__(self):
        ctx = current()
        self.saved = list(ctx.tapes)
        ctx.tapes.clear()

    def __exit__(self, *exc):
        current().tapes[:] = self.saved


def _as_args(args) -> list[Tensor]:
    items = args if isinstance(args, (list, tuple)) else [args]
    out = []
    for a in items:
        if not isinstance(a, (Tensor, Variable)):
            raise TdfTypeError("gradcheck takes a list of tensors or variables as its arguments")
        t = as_tensor(a)
        out.append(ops.materialize(t) if t.weak else Tensor(t.value))
    return out


def _output(value) -> Tensor:
    if not isinstance(value, (Tensor, Variable)):
        raise TdfTypeError("the function given to gradcheck must return a tensor")
    return as_tensor(value)


def _in_dtype(args, dtype) -> list[Tensor]:
    return [Tensor(a.value.astype(dtype)) if is_float(a.dtype) else a for a in args]


def _tape_run(call, args):
    """Run ``call`` on a fresh persistent tape watching the float arguments."""
    tape = Tape("gradcheck", persistent=True)
    with recording(tape):
        for a in args:
            tape.watch_tensor(a, None, None)
        y = _output(call(args))
    return tape, y


def gradcheck(call, args, eps=None, rtol=None, atol=None, seed: int = 0) -> GradcheckReport:
    """``call(list_of_tensors) -> Tensor``; compares d call / d args with finite differences."""
    ctx = current()
    args = _as_args(args)
    float_args = [i for i, a in enumerate(args) if is_float(a.dtype)]
    if not float_args:
        raise TdfTypeError("gradcheck needs at least one float argument")
    saved = ctx.settings.float_dtype
    dtype = np.dtype(np.float64)
    notes = []
    try:
        ctx.settings.float_dtype = dtype
        work = _in_dtype(args, dtype)
        with _Paused():
            _output(call(work))         # a trial run: does the function run in float64?
    except TdfTypeError as e:   # the function mixes in tensors of its own dtype: check in that dtype
        dtype = args[float_args[0]].dtype
        notes.append(f"ran in {dtype_name(dtype)}: {e.message}")
        work = args
    finally:
        ctx.settings.float_dtype = saved
    d_eps, d_rtol, d_atol = DEFAULTS[dtype_name(dtype)]
    eps = d_eps if eps is None else float(eps)
    rtol = d_rtol if rtol is None else float(rtol)
    atol = d_atol if atol is None else float(atol)
    ctx.settings.float_dtype = dtype if dtype.kind == "f" else saved
    try:
        tape, y = _tape_run(call, work)
        if not is_float(y.dtype):
            raise TdfTypeError(f"gradcheck needs a float output, the function returned {dtype_name(y.dtype)}")
        size = sum(work[i].size for i in float_args) * y.size
        if size <= FULL_JACOBIAN_LIMIT:
            report = _full(call, work, float_args, tape, y, eps, rtol, atol)
        else:
            report = _directions(call, work, float_args, tape, y, eps, rtol, atol, seed)
    finally:
        ctx.settings.float_dtype = saved
    report.dtype = dtype_name(dtype)
    report.notes = notes
    return report


def _perturbed(call, work, k, delta) -> np.ndarray:
    moved = list(work)
    moved[k] = Tensor(work[k].value + delta)
    with _Paused():
        return _output(call(moved)).value.astype(np.float64)


def _full(call, work, float_args, tape, y, eps, rtol, atol) -> GradcheckReport:
    _, jacs, _ = jacobians.jacobian(tape, y, [work[k] for k in float_args], unconnected_gradients="zero")
    report = GradcheckReport(True, "", eps, rtol, atol, "full jacobian")
    for k, jac in zip(float_args, jacs):
        analytic = jac.value.reshape(y.size, work[k].size).astype(np.float64)
        numeric = np.empty_like(analytic)
        for i in range(work[k].size):
            delta = np.zeros(work[k].size, dtype=work[k].dtype)
            delta[i] = eps
            delta = delta.reshape(work[k].shape)
            plus = _perturbed(call, work, k, delta)
            minus = _perturbed(call, work, k, -delta)
            numeric[:, i] = ((plus - minus) / (2 * eps)).ravel()
        _compare(report, analytic, numeric, lambda o, i, k=k: _where(k, work[k].shape, i, y.shape, o))
    return report


def _directions(call, work, float_args, tape, y, eps, rtol, atol, seed) -> GradcheckReport:
    rng = np.random.default_rng(seed)
    report = GradcheckReport(True, "", eps, rtol, atol, f"{DIRECTIONS} random directions", seed=seed)
    grads_for = {}
    for d in range(DIRECTIONS):
        v = Tensor(rng.standard_normal(y.shape).astype(y.dtype))
        _, grads, _ = gradients.gradient(tape, y, [work[k] for k in float_args], output_gradients=v,
                                         unconnected_gradients="zero")
        grads_for[d] = grads
        for k, g in zip(float_args, grads):
            u = rng.standard_normal(work[k].shape).astype(work[k].dtype)
            analytic = float(np.sum(g.value.astype(np.float64) * u))
            plus = _perturbed(call, work, k, eps * u)
            minus = _perturbed(call, work, k, -eps * u)
            numeric = float(np.sum((plus - minus) / (2 * eps) * v.value))
            _compare(report, np.array([[analytic]]), np.array([[numeric]]),
                     lambda o, i, k=k, d=d: f"argument {k}, direction {d}")
    return report


def _where(k, in_shape, i, out_shape, o) -> str:
    src = [int(n) for n in np.unravel_index(i, in_shape)] if in_shape else []
    out = [int(n) for n in np.unravel_index(o, out_shape)] if out_shape else []
    return f"argument {k}{src}, output {out}"


def _compare(report: GradcheckReport, analytic, numeric, where) -> None:
    err = np.abs(analytic - numeric)
    if not np.all(np.isfinite(analytic)) or not np.all(np.isfinite(numeric)):
        bad = ~(np.isfinite(analytic) & np.isfinite(numeric))
        err = np.where(bad, np.inf, err)
    rel = err / np.maximum(np.abs(numeric), np.finfo(np.float64).tiny)
    allowed = report.atol + report.rtol * np.abs(numeric)
    o, i = np.unravel_index(int(np.argmax(err - allowed)), err.shape)
    if err.size and float(err.max()) >= report.max_abs_error:
        report.max_abs_error = float(err.max())
        report.worst = where(int(o), int(i))
    report.max_rel_error = max(report.max_rel_error, float(rel.max()) if rel.size else 0.0)
    if np.any(err > allowed):
        report.ok = False
        report.worst = where(int(o), int(i)) + (f": tape {analytic[o, i]:.6g}, finite differences "
                                                 f"{numeric[o, i]:.6g}")


def gradgradcheck(call, args, eps=None, rtol=None, atol=None, seed: int = 0) -> GradcheckReport:
    """Second derivatives: gradcheck of x -> d(sum(call(x) * v))/dx, with v random (seeded)."""
    rng = np.random.default_rng(seed + 1)
    weights = {}

    def first_gradient(xs):
        tape, y = _tape_run(call, xs)
        if "v" not in weights:
            weights["v"] = rng.standard_normal(y.shape)
        v = Tensor(weights["v"].astype(y.dtype))
        _, grads, _ = gradients.gradient(tape, y, list(xs), output_gradients=v, unconnected_gradients="zero")
        flat = [ops.reshape(g, (g.size,)) for g, x in zip(grads, xs) if is_float(x.dtype)]
        return ops.concat(flat) if len(flat) > 1 else flat[0]

    return gradcheck(first_gradient, args, eps, rtol, atol, seed)
