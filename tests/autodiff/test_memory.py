"""What a tape keeps alive: only what the backward pass needs (``Op.saves`` in the op table), and a
tape that is not persistent lets go of it as its backward pass consumes it.

Measured two ways: the bytes of the arrays a tape's records keep (``Tape.saved_bytes``), and weak
references to arrays that only the tape held.
"""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from conftest import fast_paths, open_tape, run_program
from autodiff.test_op_gradients import CASES

from tapecli import ops
from tapecli.autodiff.gradients import gradient
from tapecli.runtime.tape import Record, Stub
from tapecli.runtime.values import Tensor, is_float

N = 10_000          # elements: well over the size below which tensors are kept whole
# Tensors under STUB_BYTES (scalars, literals) are kept whole even where no rule reads them: a stub
# costs more than they do. "Keeps nothing" below means nothing of that size.
from tapecli.runtime.tape import STUB_BYTES  # noqa: E402


pytestmark = pytest.mark.usefixtures("float64_state")
_tape = open_tape


def _x(n=N, seed=0):
    return Tensor(np.random.default_rng(seed).normal(size=n))


def _only(tape, op):
    recs = [r for r in tape.records if r.op is op]
    assert len(recs) == 1
    return recs[0]


# ------------------------------------------------------------- what is kept

def test_relu_keeps_its_output_not_its_input():
    x = _x()
    with _tape([x]) as t:
        y = ops.relu(x)
    rec = _only(t, ops.RELU)
    assert isinstance(rec.inputs[0], Stub) and rec.output is y
    assert rec.saved_bytes() == y.value.nbytes


@pytest.mark.parametrize("fn,op", [
    (lambda x: ops.add(x, x), ops.ADD), (lambda x: ops.sub(x, 1.0), ops.SUB), (ops.neg, ops.NEG),
    (lambda x: ops.reshape(x, (100, 100)), ops.RESHAPE), (lambda x: ops.transpose(ops.reshape(x, (100, 100))),
                                                          ops.TRANSPOSE),
    (lambda x: ops.reduce_sum(x), ops.SUM), (lambda x: ops.reduce_mean(x), ops.MEAN),
    (lambda x: ops.getitem(x, (slice(1, None),)), ops.GETITEM), (lambda x: ops.concat([x, x]), ops.CONCAT),
    (lambda x: ops.stack([x, x]), ops.STACK), (lambda x: ops.broadcast_to(x, (2, N)), ops.BROADCAST_TO),
    (lambda x: ops.cast(x, np.float32), ops.CAST),
], ids=["add", "sub", "neg", "reshape", "transpose", "sum", "mean", "getitem", "concat", "stack", "broadcast_to",
        "cast"])
def test_ops_with_constant_gradients_keep_no_arrays(fn, op):
    x = _x()
    with _tape([x]) as t:
        fn(x)
    assert _only(t, op).saved_bytes() < STUB_BYTES


@pytest.mark.parametrize("fn,op,keeps", [
    (ops.exp, ops.EXP, "out"), (ops.sin, ops.SIN, "in"), (ops.tanh, ops.TANH, "out"),
    (ops.sigmoid, ops.SIGMOID, "out"), (ops.sqrt, ops.SQRT, "out"), (ops.log, ops.LOG, "in"),
    (ops.abs_, ops.ABS, "in"), (lambda x: ops.softmax(x), ops.SOFTMAX, "out"),
])
def test_unary_ops_keep_one_array(fn, op, keeps):
    x = Tensor(np.abs(_x().value) + 0.5)
    with _tape([x]) as t:
        y = fn(x)
    rec = _only(t, op)
    assert rec.saved_bytes() == x.value.nbytes
    assert (rec.output is y) == (keeps == "out") and (rec.inputs[0] is x) == (keeps == "in")


def test_a_chain_keeps_less_than_every_tensor():
    x = _x()
    with _tape([x]) as t:
        h = ops.add(ops.sin(x), 1.0)          # sin keeps x; add nothing
        e = ops.exp(h)                         # keeps e
        loss = ops.reduce_sum(ops.mul(e, 2.0))  # mul keeps e (and the scalar); sum nothing
    assert 2 * x.value.nbytes <= t.saved_bytes() < 2 * x.value.nbytes + STUB_BYTES     # x and e (and scalars)
    every = 5 * x.value.nbytes            # x, sin(x), h, e, e * 2.0: what records keeping everything would hold
    assert t.saved_bytes() < every / 2
    del h, e, loss


# ---------------------------------------------------- releasing (non-persistent)

def _chain(persistent):
    x = _x()
    with _tape([x], persistent=persistent) as t:
        e = ops.exp(ops.sin(x))              # exp keeps its output, held by nobody else below
        loss = ops.reduce_sum(ops.mul(ops.square(e), 3.0))
    ref = weakref.ref(_only(t, ops.EXP).output.value)
    del e
    return x, t, loss, ref


def test_non_persistent_tape_frees_what_the_backward_pass_used():
    x, t, loss, ref = _chain(persistent=False)
    gc.collect()
    assert ref() is not None and t.saved_bytes() > 0
    _, (g,), _ = gradient(t, loss, [x], line=9)
    gc.collect()
    assert ref() is None, "the tape still keeps exp's output after its backward pass"
    assert t.saved_bytes() < STUB_BYTES
    e = np.exp(np.sin(x.value))
    np.testing.assert_allclose(g.value, 6 * e * e * np.cos(x.value))
    assert len(t.records) == 5            # the records themselves stay (explain, tapecli tape)


def test_persistent_tape_keeps_what_it_needs():
    x, t, loss, ref = _chain(persistent=True)
    first, _, _ = gradient(t, loss, [x])
    gc.collect()
    assert ref() is not None and t.saved_bytes() > 0
    second, _, _ = gradient(t, loss, [x])
    np.testing.assert_array_equal(first[0].value, second[0].value)


def test_program_level_release():
    r = run_program("""
        var x = linspace(0.0, 1.0, 5000)
        tape t:
            y = sum(exp(sin(x)) * 2.0)
        g = t.gradient(y, x)
        tape p(persistent=True):
            z = sum(exp(sin(x)) * 2.0)
        h = p.gradient(z, x)
    """)
    t, p = r.tapes
    assert t.saved_bytes() < STUB_BYTES and p.saved_bytes() > 5000 * 8


def test_records_off_the_gradients_path_are_released_too():
    # records on the path and off it interleave: both lets go (release_rest walks the path along the tape)
    r = run_program("""
        var x = linspace(0.0, 1.0, 5000)
        var z = linspace(1.0, 2.0, 5000)
        tape t:
            a = exp(sin(x))
            b = exp(sin(z))
            c = sum(a * 2.0)
            d = sum(exp(b))
            e = sum(cos(a))
        g = t.gradient(c + e, x)
    """)
    (t,) = r.tapes
    assert len(t.records) >= 8
    assert t.saved_bytes() < STUB_BYTES


def test_a_record_shared_with_a_persistent_tape_is_kept():
    """Nested tapes share records: the inner, non-persistent tape must not free what the outer one needs."""
    x = _x(seed=1)
    with _tape([x], "outer", persistent=True) as outer:
        with _tape([x], "inner", persistent=False) as inner:
            loss = ops.reduce_sum(ops.exp(ops.sin(x)))
        _, (g,), _ = gradient(inner, loss, [x], line=3)
        s = ops.reduce_sum(g)
    _, (h,), _ = gradient(outer, s, [x])
    # d/dx of sum(exp(sin x) cos x): exp(sin x) (cos^2 x - sin x)
    v = x.value
    np.testing.assert_allclose(h.value, np.exp(np.sin(v)) * (np.cos(v) ** 2 - np.sin(v)), rtol=1e-12)
    assert inner.saved_bytes() > 0            # the records are the outer tape's too
    _, (g_outer,), _ = gradient(outer, loss, [x])
    np.testing.assert_allclose(g_outer.value, g.value)


def test_reset_of_a_released_tape_does_not_free_another_tapes_records():
    x = _x(seed=2)
    with _tape([x], "a", persistent=False) as a, _tape([x], "b", persistent=False) as b, \
            _tape([x], "c", persistent=True) as c:
        loss = ops.reduce_sum(ops.exp(x))
    gradient(a, loss, [x], line=1)
    a.reset()
    gradient(b, loss, [x], line=2)
    _, (g,), _ = gradient(c, loss, [x])
    np.testing.assert_allclose(g.value, np.exp(x.value))


# ------------------------------------------------ saves are enough: every op

def _dead(t):
    """A stub whose value is gone: a rule that reads it fails. (A record may hold a stub already,
    its array gone: copy what it knows.)"""
    if isinstance(t, Stub):
        s = Stub.__new__(Stub)
        s.id, s.shape, s.dtype = t.id, t.shape, t.dtype
    else:
        s = Stub(t)
    s._ref = None
    return s


def _stripped(rec):
    op = rec.op
    if op._save_in is None:
        return rec
    inputs = [t if i in op._save_in else _dead(t) for i, t in enumerate(rec.inputs)]
    return Record(op, inputs, rec.output if op._save_out else _dead(rec.output), rec.attrs, rec.line)


def _results(values):
    return [None if v is None else np.asarray(v.value) for v in values]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_saves_are_enough_for_every_rule(case):
    """Every gradient and tangent rule runs on a record that kept only what ``Op.saves`` declares
    (with every other tensor really gone), plain-array and recorded, and gives the same numbers."""
    arrays, rng = case.sample()
    xs = [Tensor(a) for a in arrays]
    with _tape(xs) as t:
        case.fn(*xs)
    for rec in t.records:
        slim = _stripped(rec)
        w = Tensor(rng.normal(size=rec.output.shape).astype(rec.output.dtype))
        full = _results(rec.op.vjp(rec, w))
        np.testing.assert_allclose(_results(rec.op.vjp(slim, w))[0] if full[0] is not None else 0,
                                   full[0] if full[0] is not None else 0)
        for a, b in zip(_results(rec.op.vjp(slim, w)), full):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
        with _tape([w], "recording"):           # a tape watching the cotangent: the recorded path
            for a, b in zip(_results(rec.op.vjp(slim, w)), full):
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)
        if rec.op.jvp is not None:
            ts = [Tensor(rng.normal(size=x.shape).astype(x.dtype)) if is_float(x.dtype) else None
                  for x in rec.inputs]
            want = rec.op.jvp(rec, ts)
            got = rec.op.jvp(slim, ts)
            assert (want is None) == (got is None)
            if want is not None:
                np.testing.assert_allclose(got.value, want.value, rtol=1e-14, atol=1e-14)


def test_check_numerics_keeps_every_input():
    x = _x()
    r = run_program("""
        var x = linspace(0.5, 1.0, 5000)
        tape t(persistent=True):
            y = x + 1.0
    """, check_numerics=True)
    (rec,) = r.tapes[0].records
    assert not any(isinstance(t, Stub) for t in rec.inputs)
    del x


_RESIDENT_DROP = """
import sys
import numpy as np
from tapecli.runtime import limits
if sys.argv[1] == "program":
    import tapecli
    tapecli.run("x = ones([1000, 1000])\\ny = x * 2.0")      # one large array: the run asks once
    assert limits._freed_memory_kept
arrays = [np.ones(1 << 20, np.float32) for _ in range(8)]       # 8 x 4 MiB, touched
arrays.append(np.ones(12 << 20, np.float32))                     # and 48 MiB, over glibc's largest mmap threshold
before = limits.resident_bytes()
del arrays
print(before - limits.resident_bytes())
"""


def _glibc() -> bool:
    import os
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):
        return False


@pytest.mark.skipif(not _glibc(), reason="the policy is glibc's mallopt")
@pytest.mark.parametrize("how", ["program", "untouched"])
def test_freed_large_arrays_stay_for_reuse(how):
    """After a run's first large array, freed memory stays in the process for the next arrays, blocks of
    tens of megabytes included (glibc would unmap or trim it, and fresh pages cost a fault each); without a
    large array, nothing changes."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _RESIDENT_DROP, how], capture_output=True, text=True, check=True)
    dropped = int(proc.stdout)
    if how == "program":
        assert dropped < 8 << 20
    else:
        assert dropped > 64 << 20


_KEPT_THEN_TRIMMED = """
import numpy as np
import tapecli
from tapecli.runtime import limits
tapecli.run("x = ones([1000, 1000])\\ny = x * 2.0")
big = np.ones(25 << 20, np.float32)          # 100 MiB, touched
small = np.ones(1 << 18, np.float32)         # 1 MiB above it in the heap: the freed 100 MiB stays mapped
del big
kept = limits.resident_bytes()
print(kept - limits.resident_within(kept - (50 << 20)))
"""


@pytest.mark.skipif(not _glibc(), reason="the policy is glibc's mallopt")
def test_memory_kept_for_reuse_goes_back_before_the_cap_refuses():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _KEPT_THEN_TRIMMED], capture_output=True, text=True, check=True)
    assert int(proc.stdout) > 64 << 20


@fast_paths
def test_a_recorded_scalar_statement_is_one_record_and_a_loop_of_it_one_more():
    """From its second run, a recorded scalar statement's ops are one record of its inputs and output
    (ops/statement.py): the values between the ops are not kept; a generated loop of that statement alone is
    one record, which keeps each step's value. `tapecli tape` still lists every op."""
    from tapecli.ops.statement import LoopRecord, StatementRecord
    from tapecli.tools.tapelist import describe
    result = run_program("""
        var x = 0.5
        tape t(persistent=True):
            y = x * 1.0
            for i in range(1000):
                y = sin(y) * 1.01
                if i == 500:
                    y = y * 1.0
        """)
    (t,) = result.tapes
    # x * 1.0; the loop as written: its first step's two ops, a statement's record a step, and the multiplication
    # at step 500
    assert len(t.records) == 1 + 2 + 999 + 1
    assert sum(rec.__class__ is StatementRecord for rec in t.records) == 999
    assert [r["op"] for r in describe(t, "now")["records"]] == ["mul"] + ["sin", "mul"] * 501 + ["mul"] + \
        ["sin", "mul"] * 499
    result = run_program("""
        var x = 0.5
        tape t(persistent=True):
            y = x * 1.0
            for i in range(1000):
                y = sin(y) * 1.01
        """)
    (t,) = result.tapes
    assert [rec.__class__ for rec in t.records] == [Record, Record, Record, LoopRecord]
    assert len(t.records[-1].values) == 999
    assert [r["op"] for r in describe(t, "now")["records"]] == ["mul"] + ["sin", "mul"] * 1000


def test_the_resident_size_is_read_again_only_near_half_the_cap(monkeypatch):
    """Arrays of a megabyte or more are weighed against the memory cap. While the size last read plus every
    such array since stays under half the cap, no read is needed: a loop of them reads the size once under a
    large cap, and at every array near a small one, where the array that goes over is refused."""
    import gc

    import tapecli
    from tapecli.errors import LimitError
    from tapecli.runtime import limits
    gc.collect()        # what earlier tests in this process left is freed now, not while the caps below are read
    reads = []
    resident = limits.resident_bytes

    def counted():
        reads.append(1)
        return resident()
    monkeypatch.setattr(limits, "resident_bytes", counted)
    program = "total = zeros([1000, 1000])\nfor i in range(20):\n    total = total + ones([1000, 1000])\n"
    tapecli.run(program, limits=limits.Limits(max_memory=resident() + (2 << 30)))
    assert len(reads) == 1
    reads.clear()
    tight = resident() + (40 << 20)           # forty more megabytes: each 4 MB array is weighed near the cap
    tapecli.run(program, limits=limits.Limits(max_memory=tight))
    assert len(reads) == 41
    kept = "kept = []\nfor i in range(100):\n    kept.append(ones([1000, 1000]))\n"   # 400 MB, far past the cap
    with pytest.raises(LimitError, match="memory limit"):
        tapecli.run(kept, limits=limits.Limits(max_memory=tight))
