"""tapecli bench, tapecli tape and tapecli warmup: their documents and what they count (no timings asserted)."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import cli, fast_paths

SMALL = "var x = [1.0, 2.0, 3.0]\ntape t:\n    y = sum(sin(x) * x)\ng = t.gradient(y, x)\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------- bench

def test_bench_json_document(tmp_path):
    r = cli("bench", "--json", "--repeat", "4", "--warmup", "2", write(tmp_path, "p.tdf", SMALL))
    assert r.code == 0, r.stderr
    doc = r.json
    assert doc["schema"] == "tapecli/1" and doc["command"] == "bench" and doc["file"].endswith("p.tdf")
    assert doc["repeat"] == 4 and doc["warmup"] == 2 and len(doc["times_s"]) == 4
    for key in ("median_s", "min_s", "max_s"):
        assert isinstance(doc[key], float) and doc[key] > 0
    assert doc["min_s"] <= doc["median_s"] <= doc["max_s"]
    assert doc["min_s"] == min(doc["times_s"]) and doc["max_s"] == max(doc["times_s"])
    assert isinstance(doc["peak_bytes"], int) and doc["peak_bytes"] > 0
    assert doc["peak_rss_bytes"] is None or doc["peak_rss_bytes"] > doc["peak_bytes"]
    assert doc["backward_passes"] == 1 and doc["backward_replayed"] == 0 and doc["loop_replayed"] == 0


@fast_paths
def test_bench_counts_the_backward_passes_and_loop_iterations_that_ran_as_plans(tmp_path):
    body = "    tape t:\n        y = sum(sin(x) * x)\n    g = t.gradient(y, x)\n"
    loop = "var x = [1.0, 2.0, 3.0]\ni = 0\nwhile i < 6:\n" + body + "    i = i + 1\n"
    r = cli("bench", "--json", "--repeat", "1", "--warmup", "0", write(tmp_path, "loop.tdf", loop))
    assert r.code == 0, r.stderr
    # passes 1-3 of the one structure run ordinarily (2 and 3 also traced to check the plan); 4-6 as its plan
    assert (r.json["backward_passes"], r.json["backward_replayed"], r.json["loop_replayed"]) == (6, 3, 0)
    r = cli("bench", "--repeat", "1", "--warmup", "0", write(tmp_path, "loop.tdf", loop))
    assert "backward passes in a run 6, 3 of them as plans" in r.stdout
    # a for loop: iteration 0 as written, 1 and 2 traced, 3 to 5 as the loop's plan (no backward pass)
    loop = "var x = [1.0, 2.0, 3.0]\nfor i in range(6):\n" + body
    r = cli("bench", "--json", "--repeat", "1", "--warmup", "0", write(tmp_path, "loop.tdf", loop))
    assert (r.json["backward_passes"], r.json["backward_replayed"], r.json["loop_replayed"]) == (3, 0, 3)
    r = cli("bench", "--repeat", "1", "--warmup", "0", write(tmp_path, "loop.tdf", loop))
    assert "3, 0 of them as plans; loop iterations as plans 3" in r.stdout


def test_bench_for_people(tmp_path):
    r = cli("bench", "--repeat", "3", write(tmp_path, "p.tdf", SMALL))
    assert r.code == 0 and "3 runs after 1 untimed" in r.stdout and "median" in r.stdout and "peak memory" in r.stdout


def test_bench_runs_the_program_warmup_plus_repeat_times_and_once_for_memory(monkeypatch):
    from tapecli.tools import bench
    runs = []
    real = bench.run_program
    monkeypatch.setattr(bench, "run_program", lambda *a, **k: runs.append(a[2].runs_after) or real(*a, **k))
    result = bench.bench_source(SMALL, "p.tdf", repeat=5, warmup=3)
    assert len(runs) == 5 + 3 + 1 and result.repeat == 5 and len(result.times) == 5
    # each run knows how many of the same program follow it in the process (a loop plan's compiled kernels pay
    # over them: interpreter/loop_plans.py)
    assert runs == list(range(8, -1, -1)) and result.last.context.runs_after == 0
    runs.clear()
    bench.bench_source(SMALL, "p.tdf", repeat=2, warmup=0, memory=False)
    assert runs == [1, 0]


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_bench_runs_a_program_on_the_runner_run_chooses(monkeypatch, on_cpython):
    """A TensorFlow program is timed where ``tapecli run`` runs it; a Python program the interpreter cannot parse
    (try/except) on CPython, whatever the setting."""
    from tapecli import execution
    from tapecli.tools import bench
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    program = "import tensorflow as tf\nx = tf.Variable(2.0)\nwith tf.GradientTape() as t:\n    y = x * x\ng = t.gradient(y, x)\n"
    result = bench.bench_source(program, "p.py", repeat=2, warmup=1)
    assert isinstance(result.last.interpreter, execution.PythonRun) == (on_cpython == "1")
    assert float(result.last.scope.vars["g"].value) == 4.0 and result.last.context.backward_passes == 1
    result = bench.bench_source("try:\n    n = 1 // 0\nexcept ZeroDivisionError:\n    n = 7\n", "p.py", repeat=2)
    assert isinstance(result.last.interpreter, execution.PythonRun) and result.last.scope.vars["n"] == 7


@fast_paths        # (told apart by their replayed iterations)
def test_bench_replays_the_training_loop_of_a_function_on_cpython_by_default_with_the_bits_of_accel_0(monkeypatch):
    """benchmarks/train_function.py (train.py's loop in a function): its iterations after the first three as the
    loop's plan, on CPython by default and when asked; with TAPECLI_ACCEL=0 none, and the same loss."""
    from tapecli import execution
    from tapecli.tools import bench
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "train_function.py"
    losses = {}
    for setting, value, replayed in [("TAPECLI_TF_ON_CPYTHON", "auto", 197), ("TAPECLI_TF_ON_CPYTHON", "1", 197),
                                     ("TAPECLI_ACCEL", "0", 0)]:
        monkeypatch.setenv(setting, value)
        result = bench.bench_source(path.read_text(), str(path), repeat=1, warmup=0, memory=False).last
        assert isinstance(result.interpreter, execution.PythonRun) and result.context.loop_replayed == replayed
        losses[setting, value] = result.scope.vars["loss"].value.tobytes()
    assert len(set(losses.values())) == 1


def test_bench_parses_once(monkeypatch):
    from tapecli.tools import bench
    parses = []
    real = bench.parse
    monkeypatch.setattr(bench, "parse", lambda *a: parses.append(1) or real(*a))
    bench.bench_source(SMALL, "p.tdf", repeat=3, warmup=1)
    assert len(parses) == 1


def test_bench_analyses_and_compiles_a_python_program_once_and_each_run_is_its_own(monkeypatch):
    """A program's text is analysed and compiled once in a process (execution._program); every run of it still
    starts from nothing of another's: its own variables, output and loop plans."""
    from tapecli import execution
    from tapecli.execution import guard, tensorflow
    from tapecli.tools import bench
    compiled, analysed = [], []
    real_compile, real_analysis = guard.compile_program, tensorflow.Analysis.__init__
    monkeypatch.setattr(guard, "compile_program", lambda *a: compiled.append(1) or real_compile(*a))
    monkeypatch.setattr(tensorflow.Analysis, "__init__", lambda self, *a: analysed.append(1) or real_analysis(self, *a))
    program = ("# test_bench_analyses_and_compiles_a_python_program_once\nimport tensorflow as tf\n"
               "v = tf.Variable(1.0)\nfor i in range(8):\n    with tf.GradientTape() as t:\n        y = v * v\n"
               "    g = t.gradient(y, v)\n    v.assign_sub(0.125 * g)\nprint(float(v))\n")
    result = bench.bench_source(program, "p.py", repeat=3, warmup=1)
    assert len(compiled) == 1 and len(analysed) == 1
    last = result.last
    assert float(last.scope.vars["v"].read().value) == 0.75 ** 8 and last.output == [str(0.75 ** 8)]
    # (this run's: iterations 3 to 7 as the loop's plan; none where TAPECLI_ACCEL=0 turns plans off)
    assert last.context.loop_replayed == (0 if os.environ.get("TAPECLI_ACCEL") == "0" else 5)
    bench.bench_source(program.replace("0.125", "0.25"), "p.py", repeat=1, warmup=0, memory=False)
    assert len(compiled) == 2 and len(analysed) == 2          # (another text: its own)
    monkeypatch.setattr(execution, "_KEPT_CHARS", len(program) - 1)     # (a larger text: compiled at each run)
    bench.bench_source(program.replace("0.125", "0.375"), "p.py", repeat=2, warmup=0, memory=False)
    assert len(compiled) == 2 + 2


def test_bench_binds_set_files_before_timing(tmp_path, monkeypatch):
    """--set x=@x.npy is read once, when the options are made, before any run; every run sees it."""
    from tapecli import api
    from tapecli.tools import bench
    np.save(tmp_path / "x.npy", np.array([0.5, 1.5, 2.5, 3.5]))
    loads = []
    real_load = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(1) or real_load(*a, **k))
    options = api.Options(overrides=dict([api.parse_set(f"x=@{tmp_path / 'x.npy'}")]))
    assert len(loads) == 1
    result = bench.bench_source(SMALL, "p.tdf", options, repeat=3, warmup=1)
    assert len(loads) == 1
    x = result.last.scope.vars["x"].read().value
    assert x.dtype == np.float32 and x.tolist() == [0.5, 1.5, 2.5, 3.5]
    g = result.last.scope.vars["g"].value
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-6)


def test_bench_set_through_the_cli(tmp_path):
    np.save(tmp_path / "x.npy", np.linspace(-1, 1, 1000))
    program = write(tmp_path, "p.tdf", SMALL)
    r = cli("bench", "--json", "--repeat", "2", "--set", f"x=@{tmp_path / 'x.npy'}", program)
    assert r.code == 0 and r.json["repeat"] == 2
    assert r.json["peak_bytes"] >= 1000 * 4        # the float32 gradient of 1000 elements, at least
    missing = cli("bench", "--json", "--set", f"x=@{tmp_path / 'nope.npy'}", program)
    assert missing.code == 2 and missing.json["error"]["kind"] == "UsageError"


def test_bench_errors(tmp_path):
    r = cli("bench", "--json", "--repeat", "0", write(tmp_path, "p.tdf", SMALL))
    assert r.code == 2 and r.json["error"]["kind"] == "UsageError"
    r = cli("bench", "--json", write(tmp_path, "bad.tdf", "y = (1 +\n"))
    assert r.code == 3 and r.json["error"]["kind"] == "SyntaxError"
    r = cli("bench", "--json", write(tmp_path, "fails.tdf", "tape t:\n    y = 1.0\ng = t.gradient(y, zz)\n"))
    assert r.code == 3 and r.json["command"] == "bench"


# -------------------------------------------------------------------- tape

TAPES = """\
var x = zeros([10000])
tape t(persistent=True):
    a = sin(x)
    b = cos(x)
    c = a * b
tape u:
    d = exp(x)
g = u.gradient(d, x)
"""


def test_tape_lists_records_with_shapes_and_saved_bytes(tmp_path):
    r = cli("tape", "--json", write(tmp_path, "p.tdf", TAPES))
    assert r.code == 0, r.stderr
    doc = r.json
    assert doc["schema"] == "tapecli/1" and doc["command"] == "tape"
    t, u = doc["tapes"]
    assert (t["name"], t["line"], t["persistent"]) == ("t", 2, True)
    assert [(rec["op"], rec["line"]) for rec in t["records"]] == [("sin", 3), ("cos", 4), ("mul", 5)]
    assert t["records"][2]["inputs"] == [[10000], [10000]] and t["records"][2]["output"] == [10000]
    for rec in t["records"]:
        assert isinstance(rec["saved_bytes"], int) and rec["saved_bytes"] >= 0
    sin, cos, mul = (rec["saved_bytes"] for rec in t["records"])
    assert sin >= 40000 and cos >= 40000             # both keep x (float32, 10000 elements) for their gradients
    assert t["saved_bytes"] < sin + cos + mul        # x is counted once on the tape
    assert t["saved_bytes"] >= max(sin, cos, mul)
    assert "end of the program" in t["when"]


def test_a_tape_that_is_not_persistent_is_listed_before_its_request(tmp_path):
    u = cli("tape", "--json", write(tmp_path, "p.tdf", TAPES)).json["tapes"][1]
    assert (u["name"], u["persistent"]) == ("u", False) and "line 8" in u["when"]
    assert [rec["op"] for rec in u["records"]] == ["exp"] and u["saved_bytes"] >= 40000


def test_tape_saved_bytes_count_each_kept_scalar(tmp_path):
    # a record of a scalar op keeps its float32 scalars whole (4 bytes each): the tape counts each once
    r = cli("tape", "--json", write(tmp_path, "p.tdf", "var a = 1.0\nvar b = 2.0\nvar c = 3.0\n"
                                    "tape t(persistent=True):\n    d = a * b\n    e = d * c\n"))
    (t,) = r.json["tapes"]
    assert [(rec["op"], rec["saved_bytes"]) for rec in t["records"]] == [("mul", 12), ("mul", 12)]
    assert t["saved_bytes"] == 20           # a, b, d, c, e


def test_tape_for_people(tmp_path):
    r = cli("tape", write(tmp_path, "p.tdf", TAPES))
    assert r.code == 0 and "tape t (line 2, persistent)" in r.stdout and "saved bytes" in r.stdout
    r = cli("tape", write(tmp_path, "none.tdf", "x = 1\n"))
    assert r.code == 0 and "no tapes" in r.stdout


def test_tape_saved_bytes_count_a_view_as_the_array_it_shares(tmp_path):
    from tapecli.ops.core import Op
    from tapecli.tools import tapelist
    from tapecli.runtime.tape import Record, Tape
    from tapecli.runtime.values import Tensor

    base = np.zeros(1000, dtype=np.float32)
    tape = Tape("t")
    tape.records = [Record(Op("fake"), (Tensor(base), Tensor(base[:10])), Tensor(base.reshape(10, 100)), {}, 1)]
    listing = tapelist.describe(tape, "now")
    assert listing["records"][0]["saved_bytes"] == 4000 and listing["saved_bytes"] == 4000


# ------------------------------------------------------------------ warmup

def test_warmup_compiles_the_kernels_it_is_asked_for(tmp_path):
    pytest.importorskip("numba")
    env = {"TAPECLI_CACHE_DIR": str(tmp_path / "cache")}
    r = cli("warmup", "--json", "--dtype", "float32", "--kernel", "add", "--kernel", "sum", env=env)
    assert r.code == 0, r.stderr
    doc = r.json
    assert doc["command"] == "warmup" and doc["errors"] == []
    assert {(k["kernel"], k["dtype"]) for k in doc["kernels"]} == {("add", "float32"), ("sum", "float32")}
    assert all(k["calls"] >= 1 for k in doc["kernels"])
    assert list((tmp_path / "cache").rglob("*.nbi")), "numba saved nothing in the cache"
    people = cli("warmup", "--dtype", "float64", "--kernel", "mul", env=env)
    assert people.code == 0 and "float64: 1 kernel, " in people.stdout and "total" in people.stdout


def test_warmup_errors():
    assert cli("warmup", "--kernel", "nope").code == 2
    assert cli("warmup", "--dtype", "int8").code == 2


# ------------------------------------------------------- benchmarks/run.py

def load_benchmark(name):
    """A module of benchmarks/ (run.py imports its siblings by name, so the folder goes on the path)."""
    import importlib
    import sys
    from pathlib import Path
    folder = str(Path(__file__).resolve().parents[2] / "benchmarks")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def test_run_options():
    run = load_benchmark("run")
    args = run.parse_args([])
    assert args.workloads == list(run.WORKLOADS) and args.sizes == run.FULL and not args.peers and not args.scaling
    args = run.parse_args(["--quick", "--only", "loop,tiny", "--repeat", "4", "--peers"])
    assert args.workloads == ["loop", "tiny"] and args.peers
    assert args.sizes["repeat"] == 4 and args.sizes["loop"] == run.QUICK["loop"] and run.FULL["repeat"] != 4
    assert run.parse_args(["--scaling", "--warmup", "0"]).sizes["warmup"] == 0
    assert args.rounds == 3 and run.parse_args(["--rounds", "1"]).rounds == 1
    for bad in (["--only", "mlp,nope"], ["--plot", "c.png"], ["--repeat", "0"], ["--startup-runs", "0"],
                ["--warmup", "-1"], ["--rounds", "0"], ["--cores", "0"]):
        with pytest.raises(SystemExit) as e:
            run.parse_args(bad)
        assert e.value.code == 2, bad


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pinning to cores is Linux's")
def test_cores_pins_the_benchmark_and_the_processes_it_starts():
    folder = Path(__file__).resolve().parents[2] / "benchmarks"
    first = min(os.sched_getaffinity(0))
    code = ("import os, subprocess, sys, run; print(run.pin(1)); "
            "print(subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'], "
            "capture_output=True, text=True).stdout)")
    out = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, check=True).stdout
    assert out.split() == [f"[{first}]"] * 2


def test_a_short_workload_warms_up_longer_for_every_tool_unless_told():
    run = load_benchmark("run")
    assert run.warmups("scalar_loop", run.FULL, explicit=False) == (run.SHORT_RUN_WARMUP["scalar_loop"],) * 2
    assert run.warmups("scalar_loop", dict(run.FULL, warmup=5), explicit=True) == (5, 5)
    assert run.warmups("loop", run.FULL, explicit=False) == (1, run.FULL["warmup"])
    assert run.warmups("mlp", run.QUICK, explicit=False) == (run.QUICK["warmup"],) * 2


def test_plot_without_matplotlib_is_a_usage_error_naming_the_extra(monkeypatch, capsys):
    import importlib.util
    run = load_benchmark("run")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(SystemExit) as e:
        run.parse_args(["--scaling", "--plot", "curves.png"])
    assert e.value.code == 2 and "pip install 'tapecli[plot]'" in capsys.readouterr().err


def test_the_exponent_fit_on_synthetic_curves():
    scaling = load_benchmark("scaling")
    rng = np.random.default_rng(1)
    sizes = [10 ** e for e in range(2, 8)]
    for k in (0.5, 1.0, 2.0, 3.0):
        noisy = [3e-9 * n ** k * rng.uniform(0.95, 1.05) for n in sizes]
        assert scaling.fit_exponent(sizes, noisy) == pytest.approx(k, abs=0.03)
    # a fixed cost flattens the small sizes: the large end shows the growth
    overhead = [1e-4 + 1e-8 * n for n in sizes]
    assert scaling.fit_exponent(sizes, overhead) < 0.8 and scaling.large_end_exponent(sizes, overhead) > 0.9
    with pytest.raises(ValueError):
        scaling.fit_exponent([100], [1.0])
    with pytest.raises(ValueError):
        scaling.fit_exponent([100, 100], [1.0, 2.0])


def test_the_superlinear_flag_compares_with_the_work():
    run, scaling = load_benchmark("run"), load_benchmark("scaling")
    assert scaling.superlinear(1.2, 1) and not scaling.superlinear(1.1, 1)
    assert not scaling.superlinear(2.1, 2) and scaling.superlinear(3.3, 3)
    sizes = [10 ** e for e in range(3, 8)]
    linear = {"sizes": sizes, "tapecli": [1e-8 * n for n in sizes], "numpy": [2e-8 * n for n in sizes],
              "peak_bytes": [8 * n for n in sizes]}
    assert run.exponents(linear, work=1, memory_work=1)["flags"] == []
    n_log_cubed = dict(linear, tapecli=[1e-8 * n * math.log(n) ** 3 for n in sizes])     # exponent ~1.2 at 1e7
    flagged = run.exponents(n_log_cubed, work=1, memory_work=1)["flags"]
    assert len(flagged) == 1 and flagged[0].startswith("time superlinear")
    assert run.exponents(n_log_cubed, work=2, memory_work=1)["flags"] == []       # quadratic work: not superlinear
    memory = run.exponents(dict(linear, peak_bytes=[n * n for n in sizes]), work=1, memory_work=1)["flags"]
    assert len(memory) == 1 and memory[0].startswith("memory superlinear")


def test_without_the_peers_they_are_not_installed(monkeypatch):
    run, peers = load_benchmark("run"), load_benchmark("peers")

    def missing(name):
        raise ImportError(name)
    monkeypatch.setattr(peers.importlib, "import_module", missing)
    status = peers.installed()
    assert set(status) == set(peers.PEERS) and set(status.values()) == {None}
    result = {"tapecli": 0.02, "anchors": {"numpy": {"median_s": 0.04, "runs": 3}}}
    rows = run.comparison_rows("elementwise", result, status)
    assert rows[0] == ("NumPy by hand", "40.0 ms (3 runs)", "0.50x")
    assert [row for row in rows[1:]] == [(peer, "not installed", "-") for peer in peers.PEERS]
    assert "no figure (not installed)" in run.target_line("elementwise", result)      # its anchor is JAX
    assert run.target_line("mlp", dict(result, tapecli=0.041)).endswith("met")           # 1.02x NumPy by hand


def test_a_peer_that_fails_is_reported_not_fatal(monkeypatch):
    run, peers = load_benchmark("run"), load_benchmark("peers")

    def broken(peer, workload, inputs):
        raise RuntimeError("no such kernel\nsecond line")
    monkeypatch.setattr(peers, "runner", broken)
    out = run.measure_here("loop", 10, {}, {"repeat": 3, "warmup": 0}, budget=1.0)
    out["torch eager"] = peers.measure("torch eager", "loop", 10, repeat=3, warmup=0, budget=1.0)
    assert out["torch eager"] == {"error": "RuntimeError: no such kernel"}
    assert out["numpy"]["runs"] == 3 and out["cpython"]["runs"] == 3
    assert run.anchor_cell(out["torch eager"]).startswith("failed (RuntimeError")
    assert "no figure (failed)" in run.target_line("loop", {"tapecli": 1.0, "anchors": out})


def test_rounds_merge_into_one_median_of_every_run_or_the_first_error():
    run = load_benchmark("run")
    rounds = [{"numpy": {"median_s": 2.0, "runs": 2, "times_s": [1.0, 3.0]},
               "torch eager": {"median_s": 5.0, "runs": 1, "times_s": [5.0]}},
              {"numpy": {"median_s": 9.0, "runs": 1, "times_s": [9.0]},
               "torch eager": {"error": "RuntimeError: out of memory"}}]
    merged = run.merged(rounds)
    assert merged["numpy"] == {"median_s": 3.0, "runs": 3, "times_s": [1.0, 3.0, 9.0]}
    assert merged["torch eager"] == {"error": "RuntimeError: out of memory"}


def test_time_runs_warms_up_then_repeats_within_the_budget():
    peers = load_benchmark("peers")
    calls = []
    assert peers.time_runs(lambda: calls.append(1), repeat=7, warmup=2, budget=60.0)["runs"] == 7
    assert len(calls) == 9
    assert peers.time_runs(lambda: None, repeat=7, warmup=0, budget=0.0)["runs"] == 3     # at least 3 runs


def test_peers_run_in_processes_of_their_own_and_the_training_loops_have_their_inputs(tmp_path):
    import sys
    run = load_benchmark("run")
    status, where = run.find_peers([sys.executable, tmp_path / "no-such-python"])
    assert set(status) == set(run.peers.PEERS)
    assert all(where[peer] == sys.executable for peer, version in status.items() if version is not None)
    assert run.run_peer(sys.executable, ["no such peer", "train", "--steps", "1"])["error"].startswith("KeyError")
    assert "error" in run.run_peer(tmp_path / "no-such-python", ["--installed"])
    inputs = run.make_inputs("cnn", 20, tmp_path)
    assert np.load(inputs["x"]).shape == (32, 28, 28, 1) and np.load(inputs["y"]).dtype == np.int32
    assert run.bindings("train", 200, run.make_inputs("train", 200, tmp_path)) == []
    with pytest.raises(SystemExit) as e:
        run.parse_args(["--peer-python", sys.executable])
    assert e.value.code == 2
    assert run.parse_args(["--peers", "--peer-python", "py", "--only", "train,cnn"]).workloads == ["train", "cnn"]


def test_inputs_are_seeded_and_loops_take_a_step_count(tmp_path):
    run = load_benchmark("run")
    a = run.make_inputs("mlp", 12, tmp_path / "a")
    b = run.make_inputs("mlp", 12, tmp_path / "b")
    assert list(a) == ["xb", "w1", "w2", "w3"] and np.load(a["w3"]).shape == (12, run.MLP_OUT)
    assert all(np.array_equal(np.load(a[k]), np.load(b[k])) and np.load(a[k]).dtype == np.float32 for k in a)
    assert run.make_inputs("loop", 1000, tmp_path) == {}
    assert run.bindings("loop", 1000, {}) == ["--set", "steps=1000"]
    assert run.bindings("jacobian", 5, {"M": tmp_path / "M.npy"}) == ["--set", f"M=@{tmp_path / 'M.npy'}"]


@pytest.mark.parametrize("workload", ["elementwise", "mlp", "jacobian", "scalar_loop", "loop"])
def test_the_baselines_compute_what_the_programs_compute(workload, tmp_path):
    """The hand-written baselines are the same computations as the benchmark programs (small sizes)."""
    import tapecli
    from pathlib import Path
    run, baselines = load_benchmark("run"), load_benchmark("baselines")
    size = {"elementwise": 50, "mlp": 8, "jacobian": 6, "scalar_loop": 20, "loop": 300}[workload]
    inputs = run.make_inputs(workload, size, tmp_path)
    sets = {name: np.load(path) for name, path in inputs.items()} or {"steps": size}
    result = tapecli.run(Path(run.HERE / f"{workload}.tdf"), sets=sets)
    data = run.workload_args(workload, size, inputs)
    for name, fn in baselines.BASELINES[workload].items():
        out = fn(*([data] if workload in run.LOOPS else data))
        if workload == "loop":
            np.testing.assert_allclose(out, result.values["y"], rtol=1e-5, err_msg=name)
        elif workload == "jacobian":
            np.testing.assert_allclose(out[1], result.jacobians[0]["value"], rtol=1e-4, atol=1e-5)
        else:
            got = [g["value"] for g in result.gradients]
            want = list(out[1]) if workload == "mlp" else [out[1]]
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


def test_a_curve_repeats_as_many_runs_as_fit_the_budget():
    run = load_benchmark("run")
    curve = {"sizes": [100, 1000, 10000], "tapecli": [], "numpy": []}
    assert run.curve_repeat(10, 20.0, curve, 100, work=1) == 10              # nothing to guess from
    curve.update(tapecli=[0.001], numpy=[0.002])
    assert run.curve_repeat(10, 20.0, curve, 1000, work=1) == 10              # 0.02 s a run
    assert run.curve_repeat(10, 20.0, curve, 1000, work=3) == 10
    curve.update(tapecli=[0.001, 0.5], numpy=[0.002, 0.4])
    assert run.curve_repeat(10, 20.0, curve, 10000, work=1) == 4              # 5 s a run
    assert run.curve_repeat(10, 20.0, curve, 10000, work=2) == 3              # 50 s a run: the least


def test_a_workload_tapecli_alone_runs_binds_nothing_and_has_no_anchor():
    run, peers = load_benchmark("run"), load_benchmark("peers")
    assert run.bindings("fit", run.FULL["fit"], {}) == [] and "fit" not in peers.TRAINING
    status = dict.fromkeys(peers.PEERS)
    assert run.comparison_rows("fit", {"tapecli": 1.0, "anchors": {}}, status) == [("-", "no anchor", "-")]
