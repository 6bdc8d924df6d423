"""TAPECLI_MAX_SECONDS inside one long op (F5): the command line's watchdog ends the run with the run's
LimitError and exit 3; the library weighs a long op's FLOPs against the time left before it starts."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from conftest import cli
from tapecli.api import Options, run_source
from tapecli.errors import LimitError
from tapecli import ops
from tapecli.ops import OPS
from tapecli.ops import cost
from tapecli.runtime.limits import Limits

# NumPy's einsum of four 400-vectors without path optimisation: 2.6e10 products, minutes of one C call, which
# no FLOPs weighing of a program of Python alone sees (its NumPy calls are NumPy's own).
LONG_NUMPY_CALL = 'import numpy as np\na = np.ones(400)\ny = float(np.einsum("i,j,k,l->", a, a, a, a))\n'


def _timed_cli(*args, env):
    start = time.monotonic()
    r = cli(*args, env=env)
    return r, time.monotonic() - start


@pytest.mark.parametrize("json_out", [True, False])
def test_the_time_limit_ends_a_run_inside_one_long_numpy_call(tmp_path, json_out):
    program = tmp_path / "long.py"
    program.write_text(LONG_NUMPY_CALL)
    r, took = _timed_cli("run", *(["--json"] if json_out else []), program, env={"TAPECLI_MAX_SECONDS": "1"})
    assert r.code == 3 and took < 8, (r.code, took, r.stdout, r.stderr)
    if json_out:
        doc = r.json
        assert doc["ok"] is False and doc["command"] == "run" and doc["file"] == str(program)
        assert doc["error"]["kind"] == "LimitError" and doc["error"]["message"] == "the program ran longer than 1 s"
        assert (doc["error"]["line"], doc["error"]["column"]) == (3, 11)     # the einsum call
        assert r.stdout.count('"schema"') == 1 and r.stderr == ""
    else:
        assert r.stdout == "" and r.stderr.startswith(f"{program}:3:11: LimitError: the program ran longer than 1 s")
        excerpt, carets = r.stderr.splitlines()[1:3]
        assert carets.index("^") == excerpt.index("np.einsum"), r.stderr


def test_the_interpreters_own_time_limit_writes_one_document(tmp_path):
    """A loop reaches its limit between steps: the interpreter's LimitError, written once (the watchdog,
    closed as the run ends, writes nothing)."""
    program = tmp_path / "loop.tdf"
    program.write_text("x = 0.0\nwhile True:\n    x = x + 1.0\n")
    r, took = _timed_cli("run", "--json", program, env={"TAPECLI_MAX_SECONDS": "1"})
    assert r.code == 3 and r.stdout.count('"schema"') == 1 and took < 8
    assert r.json["error"]["kind"] == "LimitError" and r.json["error"]["line"] in (2, 3)


def test_a_run_that_ends_in_time_is_not_ended_by_the_watchdog(tmp_path):
    program = tmp_path / "quick.tdf"
    program.write_text("x = 2.0\ny = x * x\n")
    r = cli("run", "--json", program, env={"TAPECLI_MAX_SECONDS": "1"})
    assert r.code == 0 and r.json["values"]["y"] == 4.0


_WATCHDOG_SCRIPT = textwrap.dedent("""
    import sys, time
    from tapecli.cli.watchdog import Watchdog
    from tapecli.runtime.context import begin_run, observed

    def report(error):
        print(f"{error.kind} {error.message} line={error.line} column={error.column} warnings={error.warnings}")

    source = "x = 1\\n    y = long_op(x)\\n"
    watchdog = Watchdog(report, "p.tdf", source).start()
    with observed(watchdog.attach):
        ctx = begin_run(max_seconds=0.2)
    ctx.settings.line = 2
    ctx.settings.warn("a warning before it", 1)
    time.sleep(30)          # one long C call (the GIL released)
    print("not ended")
""")


def test_the_watchdog_writes_the_runs_limit_error_at_its_line_and_exits_3():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _WATCHDOG_SCRIPT], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 3 and time.monotonic() - start < 20, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ("LimitError the program ran longer than 0.2 s line=2 column=5 "
                           "warnings=[{'line': 1, 'message': 'a warning before it'}]\n"), proc.stdout


def test_a_closed_watchdog_writes_nothing():
    from tapecli.cli.watchdog import Watchdog
    from tapecli.runtime.context import begin_run, observed
    written = []
    watchdog = Watchdog(written.append, "p.tdf", None)
    watchdog.GRACE_S = 0.05
    watchdog.start()
    with observed(watchdog.attach):
        begin_run(max_seconds=0.05)
    watchdog.close()                    # the run ended (by itself, or with the interpreter's own LimitError)
    time.sleep(0.4)
    assert written == [] and not watchdog._thread.is_alive()


def test_only_runs_of_the_observing_thread_are_followed():
    from tapecli.runtime.context import begin_run, observed
    seen = []
    with observed(seen.append):
        ctx = begin_run()
        other = threading.Thread(target=begin_run)
        other.start()
        other.join()
    begin_run()
    assert seen == [ctx]


def test_the_temporaries_of_output_files_are_removed_and_their_targets_kept(tmp_path):
    from tapecli.tools import outfile
    target = tmp_path / "out.npz"
    target.write_bytes(b"before")
    seen = []

    def fill(f):
        f.write(b"half")
        seen.extend(outfile._TEMPORARIES)
        outfile.remove_temporaries()        # what the watchdog does before it ends the process

    with pytest.raises(outfile.OutputFileError):
        outfile.write_with(str(target), fill, "-o")
    assert len(seen) == 1 and not os.path.exists(seen[0]) and target.read_bytes() == b"before"
    assert sorted(os.listdir(tmp_path)) == ["out.npz"] and not outfile._TEMPORARIES


# ------------------------------------------------------------------ the library: FLOPs against the time left

def _run_limited(source: str, seconds: float):
    return run_source(textwrap.dedent(source).lstrip(), "p.py", Options(limits=Limits(max_seconds=seconds)))


@pytest.mark.parametrize("source, op, seconds", [
    # (an einsum of more operands is a chain of two-operand ones, as TensorFlow's: "i,j,k,l->" is cheap)
    ('import tensorflow as tf\na = tf.ones([6000, 6000])\ny = tf.einsum("ij,jk->ik", a, a)\n', "einsum", 5),
    # (estimates of about 5 s and 8 s against 3 s, so that a loaded machine's slow start leaves time to refuse them)
    ("import tensorflow as tf\na = tf.ones([6400, 6400])\nb = tf.linalg.inv(a)\n", "inv", 3),
    ("import tensorflow as tf\na = tf.ones([4000, 4000])\nb = tf.linalg.svd(a, compute_uv=False)\n", "svd_s", 3),
])
def test_the_library_refuses_an_op_that_cannot_end_in_the_time_left(source, op, seconds):
    with pytest.raises(LimitError) as e:         # refused before it started ("would take"), not after it ran
        _run_limited(source, seconds)
    assert e.value.line == 3 and e.value.message.startswith(f"{op} of shape")
    assert "would take about" in e.value.message and f"of the {seconds:g} s time limit" in e.value.message
    assert "TAPECLI_MAX_SECONDS" in e.value.hint


def test_ordinary_linear_algebra_under_a_time_limit_is_never_refused():
    result = _run_limited("""
        import tensorflow as tf
        a = tf.random.normal([200, 200], seed=1)
        s = a @ tf.transpose(a) + 200.0 * tf.eye(200)
        e = tf.linalg.eigh(s)
        q = tf.linalg.qr(a)
        v = tf.linalg.svd(a)
        c = tf.linalg.cholesky(s)
        x = tf.linalg.solve(s, a)
        t = tf.linalg.triangular_solve(c, a)
        i = tf.linalg.inv(s)
        d = tf.linalg.slogdet(s)
        b = tf.random.normal([60, 60], seed=2)
        y = tf.einsum("ij,jk,kl->il", b, b, b)
    """, 30)
    assert result.scope.vars["y"].shape == (60, 60) and result.scope.vars["i"].shape == (200, 200)


def test_without_a_time_limit_nothing_is_weighed():
    result = run_source('import tensorflow as tf\na = tf.ones([20])\ny = tf.einsum("i,j,k,l->", a, a, a, a)\n', "p.py")
    assert float(result.scope.vars["y"].value) == 20.0 ** 4


def test_the_ops_weighed_are_those_the_cost_table_counts():
    ops.load_deferred()
    assert {name for name, op in OPS.items() if op.flops is not None} == cost.FLOPS.keys()


@pytest.mark.parametrize("name", ["matmul", "einsum", "inv", "det", "log_abs_det", "cholesky", "eigh_values",
                                  "eigh_vectors", "solve", "triangular_solve", "qr_q", "qr_r", "svd_s", "svd_u",
                                  "svd_v"])
def test_every_long_op_has_its_cost(name):
    ops.load_deferred()             # (their families load on first use: whatever ran before in this process)
    op = OPS[name]
    assert op.flops is cost.FLOPS[name]
    attrs = {"ins": ("ij", "jk"), "out": "ik"}

    def flops(n):
        return op.flops([np.ones((n, n)), np.ones((n, n))][:2 if name in ("matmul", "einsum", "solve",
                                                                          "triangular_solve") else 1], attrs)[0]
    assert flops(200) == pytest.approx(8 * flops(100))      # cubic in the size of square matrices
