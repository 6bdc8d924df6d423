"""tapecli's performance benchmarks, beside NumPy written by hand and, with --peers, JAX, PyTorch and TensorFlow.

    python benchmarks/run.py                  # the full sizes, beside NumPy (and CPython) by hand
    python benchmarks/run.py --peers          # also JAX jit, PyTorch eager, TensorFlow eager and tf.function
    python benchmarks/run.py --peers --peer-python ../tf/bin/python   # peers installed in another Python too
    python benchmarks/run.py --scaling        # cost curves: each workload over three decades or more of size
    python benchmarks/run.py --scaling --plot curves.png
    python benchmarks/run.py --quick          # smaller sizes and fewer runs, to try it out
    python benchmarks/run.py --only mlp,tiny --json results.json
    python benchmarks/run.py --peers --only train,cnn --cores 1   # every tool on one core: per-core speed

Workloads (the .tdf files here; array inputs are generated, seeded, into benchmarks/data/ and bound
with ``--set NAME=@file.npy``; the loops are resized with ``--set steps=N``):

* tiny         start-up: ``tapecli grad tiny.tdf`` as a whole process, against
               ``python -c "import numpy"``, the two alternating, medians of --startup-runs.
* elementwise  sum(sigmoid(x) * tanh(x * 1.5 + 0.5)) and its gradient, x float32, 1e7 elements.
* mlp          mean((relu(relu(xb @ w1) @ w2) @ w3) ** 2), gradient w.r.t. w1, w2, w3; float32,
               xb, w1, w2 1024 x 1024, w3 1024 x 10.
* jacobian     the jacobian of sin(M @ x) * x w.r.t. x, n = 1000, float32.
* scalar_loop  100 steps of y = sin(y) * 1.01 on a tape, then the gradient.
* loop         100,000 steps of y = sin(y) * 1.01 + 0.001 that no tape records: the interpreter alone.
* train        train.py, a Keras training loop as TensorFlow users write it: an MLP 64 -> 128 relu -> 10,
               batch 256, SparseCategoricalCrossentropy(from_logits=True), Adam, 200 steps (its own data).
* train_long   train_long.py: the same MLP, 2,000 steps: a long loop, where a loop's plans pay most.
* train_function  train_function.py: train.py with its loop in a function (``def train(steps)``), as TensorFlow's
               tutorials write it: the function's locals are the loop plan's names; tapecli alone.
* fit          fit.py: the same MLP trained by Keras's model.fit, batch 32, 2 epochs of 256 batches with a
               validation pass each (loop plans serve fit's batches: library/keras/fit_plans.py); tapecli alone.
* fit_step     fit_step.py: fit.py with the model's own train_step and test_step (keras.io's "Customizing what
               happens in fit()", straight-line code: loop plans take them as a hand-written loop); tapecli alone.
* cnn          cnn.py: Conv2D 16 and 32, max pooling, Dense 10 on 32 images of 28 x 28, 20 Adam steps.
               The peers train the same models on seeded inputs (peers.py); NumPy by hand trains the MLP.

tapecli runs each workload in ``tapecli bench --json`` (parsed once, inputs bound before timing,
untimed warm-up runs, medians of the timed runs, all in one process); the baselines (baselines.py)
run in this process, and each peer (peers.py) in a process of its own, with the first of this Python
and the --peer-python ones that can import it; all with the same warm-up (about 0.2 s of it for a workload
whose runs take a millisecond or less: SHORT_RUN_WARMUP) and at most as many timed runs, medians, stopping
early once a measurement has taken --budget seconds (at least 3 runs). Every figure of a report comes from
one run of this script; the load average is printed at its start
and its end (on a shared machine, ratios move with the load).

Rounds: each workload is measured in --rounds rounds (default 3; --budget shared by them), tapecli,
the baselines and every peer one after another in each, each round in new processes with its own
warm-up, and each figure is the median of all its rounds' runs. On a machine whose speed drifts for seconds at a time (a shared
host), a tool measured in one block of time gets that block's speed; measured in turns, every tool
gets a share of each, so a ratio moves less from one run of this script to the next.

Cores: --cores N runs this process and every process it starts (tapecli, the peers) on the first N cores
it may use (their affinity is inherited): what each tool does with that many cores. OpenBLAS and PyTorch
size their thread pools to the cores a process may use (on one core: one thread each).

Memory: the elementwise run's peak (tracemalloc, in ``tapecli bench``) against the least any program
holds (the input and its gradient), and the bytes per record of the tape of a 100,000-step
recorded scalar loop (the run's peak over the records ``tapecli tape`` lists).

Before timing start-up, the tapecli package is byte-compiled (as an installed package is), so a
checkout run with PYTHONDONTWRITEBYTECODE does not compile its sources in every process.
"""
from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import baselines
import peers
import scaling

HERE = Path(__file__).resolve().parent

WORKLOADS = ("tiny", "elementwise", "mlp", "jacobian", "scalar_loop", "loop", "train", "train_long", "train_function",
             "fit", "fit_step", "cnn")
LOOPS = ("scalar_loop", "loop")
# the workloads no anchor runs, and their sizes (their batches, or steps)
TAPECLI_ALONE = {"train_function": 200, "fit": 512, "fit_step": 512}
OWN_DATA = (*peers.TRAINING, *TAPECLI_ALONE)      # the workloads whose .py program makes its own data

# The targets of the performance issue: workload -> (anchor, the most tapecli / anchor may be).
TARGETS = {
    "tiny": ("import numpy", 1.0),
    "elementwise": ("jax jit", 1.0),
    "mlp": ("numpy", 1.05),
    "jacobian": ("jax jit", 0.5),
    "scalar_loop": ("torch eager", 0.5),
    "loop": ("torch eager", 0.2),
    "train": ("jax jit", 1.3),
    "train_long": ("jax jit", 1.0),
    "cnn": ("torch eager", 1.0),
}
ANCHOR_NAMES = {"numpy": "NumPy by hand", "cpython": "CPython floats"}
MEMORY_TARGETS = {"elementwise_x_minimum": 2.0, "bytes_per_record": 200}

FULL = {"elementwise": 10_000_000, "mlp": 1024, "jacobian": 1000, "scalar_loop": 100, "loop": 100_000,
        "record_steps": 100_000, "repeat": 10, "warmup": 2, "startup_runs": 21, **peers.TRAINING,
        **TAPECLI_ALONE}
QUICK = {"elementwise": 1_000_000, "mlp": 256, "jacobian": 200, "scalar_loop": 100, "loop": 10_000,
         "record_steps": 10_000, "repeat": 3, "warmup": 1, "startup_runs": 7, **peers.TRAINING,
         **TAPECLI_ALONE}
MLP_OUT = 10
# Untimed runs of the workloads whose runs take a millisecond or less, tapecli's and every anchor's alike: a CPU
# that was idle a moment runs the first dozen of them up to half again as slow (after a second's sleep, tapecli's
# recorded scalar loop took 0.70-0.91 ms a run where it had taken 0.45), so these warm up for about 0.2 s.
# An explicit --warmup is taken as it is.
SHORT_RUN_WARMUP = {"scalar_loop": 200}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    parser.add_argument("--only", help=f"comma-separated workloads ({', '.join(WORKLOADS)})")
    parser.add_argument("--peers", action="store_true",
                        help="also time JAX, PyTorch and TensorFlow where they are importable")
    parser.add_argument("--peer-python", action="append", default=[], type=Path, metavar="PYTHON",
                        help="with --peers: another Python to look for peers in (repeatable)")
    parser.add_argument("--scaling", action="store_true", help="cost curves over sizes, with growth exponents")
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="with --scaling: draw the curves (needs matplotlib)")
    parser.add_argument("--repeat", type=int, help="timed runs per measurement")
    parser.add_argument("--warmup", type=int, help="untimed runs before them")
    parser.add_argument("--budget", type=float, default=20.0,
                        help="seconds after which a measurement in this process stops repeating (default 20)")
    parser.add_argument("--startup-runs", type=int, help="process pairs for the start-up workload")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of measurements, the tools taking turns in each (default 3)")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="where the inputs go (default benchmarks/data)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--cores", type=int, help="run every tool on this many of the cores this process may use")
    args = parser.parse_args(argv)
    args.workloads = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = sorted(set(args.workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload {unknown[0]}")
    if args.peer_python and not args.peers:
        parser.error("--peer-python says where the --peers are")
    if args.plot and not args.scaling:
        parser.error("--plot draws the cost curves of --scaling")
    if args.cores is not None and not hasattr(os, "sched_setaffinity"):
        parser.error("--cores needs a system whose processes can be pinned to cores (Linux)")
    for key in ("repeat", "warmup", "startup_runs", "rounds", "cores"):
        value = getattr(args, key)
        if value is not None and value < (0 if key == "warmup" else 1):
            parser.error(f"--{key.replace('_', '-')} must be at least {0 if key == 'warmup' else 1}")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        sys.stderr.write("--plot needs matplotlib: pip install 'tapecli[plot]'\n")
        raise SystemExit(2)
    args.sizes = dict(QUICK if args.quick else FULL)
    for key in ("repeat", "warmup", "startup_runs"):
        if getattr(args, key) is not None:
            args.sizes[key] = getattr(args, key)
    return args


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "unknown (no /proc/loadavg)"


# ------------------------------------------------------------------ inputs

def make_inputs(workload: str, size: int, folder: Path, seed: int = 0) -> dict[str, Path]:
    """Seeded inputs of ``workload`` at ``size`` as .npy files, {name: path}; none for the loops."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    if workload == "elementwise":
        arrays = {"x": lambda: rng.standard_normal(size, dtype=f32)}
    elif workload == "mlp":
        scale = f32(math.sqrt(size))
        arrays = {"xb": lambda: rng.standard_normal((size, size), dtype=f32),
                  "w1": lambda: rng.standard_normal((size, size), dtype=f32) / scale,
                  "w2": lambda: rng.standard_normal((size, size), dtype=f32) / scale,
                  "w3": lambda: rng.standard_normal((size, MLP_OUT), dtype=f32) / scale}
    elif workload == "jacobian":
        arrays = {"M": lambda: rng.standard_normal((size, size), dtype=f32) / f32(math.sqrt(size)),
                  "x": lambda: rng.standard_normal(size, dtype=f32)}
    elif workload in peers.TRAINING:          # the peers' batch (tapecli's program makes its own)
        shape = (256, 64) if workload in peers.MLP_LOOPS else (32, 28, 28, 1)
        arrays = {"x": lambda: rng.standard_normal(shape, dtype=f32),
                  "y": lambda: rng.integers(0, 10, shape[0]).astype(np.int32)}
    else:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, make in arrays.items():
        path = folder / f"{workload}-{name}-{size}-seed{seed}.npy"
        if not path.exists():
            np.save(path, make())
        paths[name] = path
    return paths


# ------------------------------------------------------------------ tapecli

def tapecli_command() -> list[str]:
    """The tapecli script installed beside this Python, else ``python -m tapecli``."""
    script = Path(sys.executable).with_name("tapecli")
    if script.exists():
        return [str(script)]
    found = shutil.which("tapecli")
    return [found] if found else [sys.executable, "-m", "tapecli"]


def bindings(workload: str, size: int, inputs: dict[str, Path]) -> list[str]:
    """The --set options of a run: the input files, or the step count of a loop (a training loop: none)."""
    if workload in OWN_DATA:
        return []
    if workload in LOOPS:
        return ["--set", f"steps={size}"]
    return [arg for name, path in inputs.items() for arg in ("--set", f"{name}=@{path}")]


def warmups(workload: str, sizes: dict, explicit: bool) -> tuple[int, int]:
    """The untimed runs of ``workload`` for tapecli and for the anchors: the sizes' (tapecli's unrecorded loop,
    one), at least SHORT_RUN_WARMUP's for a short workload unless --warmup said how many."""
    short = 0 if explicit else SHORT_RUN_WARMUP.get(workload, 0)
    mine = min(sizes["warmup"], 1) if workload == "loop" else sizes["warmup"]
    return max(mine, short), max(sizes["warmup"], short)


def run_tapecli(*args: str) -> dict:
    cmd = [*tapecli_command(), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout)


def tapecli_bench(workload: str, size: int, inputs: dict[str, Path], repeat: int, warmup: int) -> dict:
    program = f"{workload}.py" if workload in OWN_DATA else f"{workload}.tdf"
    return run_tapecli("bench", "--json", "--repeat", str(repeat), "--warmup", str(warmup),
                       str(HERE / program), *bindings(workload, size, inputs))


def startup(runs: int) -> dict:
    """Medians of whole-process times, `tapecli grad tiny.tdf` and `python -c "import numpy"` alternating.
    The package is found, not imported: importing it sets OPENBLAS_THREAD_TIMEOUT (tapecli/__init__.py), which
    the anchor would inherit from this process (`import numpy` took 30% less with it than as a shell runs it,
    on 2 busy cores)."""
    spec = importlib.util.find_spec("tapecli")
    if spec is not None and spec.origin:
        try:
            compileall.compile_dir(os.path.dirname(spec.origin), quiet=1)
        except OSError:
            pass
    tdf = [*tapecli_command(), "grad", str(HERE / "tiny.tdf")]
    numpy_only = [sys.executable, "-c", "import numpy"]
    for cmd in (tdf, numpy_only):            # warm the file cache; and tapecli's caches
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times = {"tapecli": [], "numpy": []}
    for _ in range(runs):
        for key, cmd in (("tapecli", tdf), ("numpy", numpy_only)):
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[key].append(time.perf_counter() - start)
    return {"tapecli": statistics.median(times["tapecli"]), "numpy": statistics.median(times["numpy"]),
            "tapecli_min": min(times["tapecli"]), "numpy_min": min(times["numpy"]), "runs": runs}


def tape_bytes_per_record(steps: int) -> dict:
    """The peak memory of a ``steps``-step recorded scalar loop over the number of records on its tape."""
    args = (str(HERE / "scalar_loop.tdf"), *bindings("scalar_loop", steps, {}))
    peak = run_tapecli("bench", "--json", "--repeat", "1", "--warmup", "0", *args)["peak_bytes"]
    records = sum(len(tape["records"]) for tape in run_tapecli("tape", "--json", *args)["tapes"])
    return {"steps": steps, "peak_bytes": peak, "records": records, "bytes_per_record": peak / records}


# --------------------------------------------------------- this process

def workload_args(workload: str, size: int, inputs: dict[str, Path]):
    """What baselines and peers take: the arrays of the inputs (loaded), or the step count."""
    return size if workload in LOOPS else [np.load(path) for path in inputs.values()]


def measure_here(workload: str, size: int, inputs: dict, sizes: dict, budget: float, peer_pythons=None) -> dict:
    """{anchor: {"median_s", "runs"} or {"error": why}} for the baselines (in this process) and the peers
    ({peer: the Python that has it}, each in a process of its own)."""
    out = {}
    if baselines.BASELINES.get(workload):
        data = workload_args(workload, size, inputs)
        for name, fn in baselines.BASELINES[workload].items():
            out[name] = peers.time_runs(lambda: fn(*([data] if workload in LOOPS else data)), sizes["repeat"],
                                        sizes["warmup"], budget)
    what = ["--steps", str(size)] if workload in LOOPS else ["--inputs", *map(str, inputs.values())]
    for peer, python in (peer_pythons or {}).items() if workload not in TAPECLI_ALONE else ():
        out[peer] = run_peer(python, [peer, workload, *what, "--repeat", str(sizes["repeat"]),
                                      "--warmup", str(sizes["warmup"]), "--budget", str(budget)])
    return out


def merged(rounds: list[dict]) -> dict:
    """{anchor: the median of its runs in every round, and their number}, or the first error it met."""
    out = {}
    for name in rounds[0]:
        measured = [r[name] for r in rounds]
        failed = next((m for m in measured if "error" in m), None)
        times = [t for m in measured for t in m.get("times_s", ())]
        out[name] = failed or {"median_s": statistics.median(times), "runs": len(times), "times_s": times}
    return out


def run_peer(python, args: list[str]) -> dict:
    """What ``python peers.py ARGS`` prints (its last line of output), or {"error": why}."""
    try:
        proc = subprocess.run([str(python), str(HERE / "peers.py"), *args], capture_output=True, text=True)
    except OSError as e:
        return {"error": f"{python}: {e.strerror}"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return {"error": why[:100]}
    return json.loads(lines[-1])


def find_peers(pythons: list) -> tuple[dict, dict]:
    """({peer: version or None}, {peer: the first Python that imports it}) over ``pythons``."""
    status, where = dict.fromkeys(peers.PEERS), {}
    for python in pythons:
        found = run_peer(python, ["--installed"])
        for peer, version in found.items() if "error" not in found else ():
            if version is not None and peer not in where:
                status[peer], where[peer] = version, python
    return status, where


# ------------------------------------------------------------------ report

def fmt_s(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds < 0.01 else f"{seconds * 1e3:.1f} ms"


def anchor_cell(anchor: dict | None) -> str:
    """A peer's or baseline's time, or why there is none."""
    if anchor is None:
        return "not installed"
    if "error" in anchor:
        return f"failed ({anchor['error']})"
    return f"{fmt_s(anchor['median_s'])} ({anchor['runs']} runs)"


def comparison_rows(workload: str, result: dict, peer_status: dict) -> list[tuple[str, str, str]]:
    """(anchor, its time, tapecli / anchor) for each anchor of a workload."""
    ours = result["tapecli"]
    rows = []
    for name, anchor in result["anchors"].items():
        ratio = f"{ours / anchor['median_s']:.2f}x" if "median_s" in anchor else "-"
        rows.append((ANCHOR_NAMES.get(name, name), anchor_cell(anchor), ratio))
    for peer, version in peer_status.items():
        if version is None and workload not in ("tiny", *TAPECLI_ALONE):
            rows.append((peer, "not installed", "-"))
    return rows or [("-", "no anchor", "-")]


def target_line(workload: str, result: dict) -> str:
    anchor_key, most = TARGETS[workload]
    anchor = result["anchors"].get(anchor_key)
    label = ANCHOR_NAMES.get(anchor_key, anchor_key)
    if anchor is None or "median_s" not in anchor:
        return f"{workload:12s} <= {most:.2f}x {label}: no figure ({'not installed' if anchor is None else 'failed'})"
    ratio = result["tapecli"] / anchor["median_s"]
    return (f"{workload:12s} <= {most:.2f}x {label}: {ratio:.2f}x "
            f"({fmt_s(result['tapecli'])} vs {fmt_s(anchor['median_s'])})  {'met' if ratio <= most else 'NOT MET'}")


def compare(args) -> dict:
    sizes = args.sizes
    peer_status, peer_pythons = find_peers([sys.executable, *args.peer_python]) if args.peers else ({}, {})
    if args.peers:
        print("peers: " + ", ".join(f"{peer} {version or 'not installed'}" for peer, version in peer_status.items()))
    results = {}
    for workload in args.workloads:
        if workload == "tiny":
            s = startup(sizes["startup_runs"])
            results["tiny"] = {"tapecli": s["tapecli"], "anchors": {"import numpy": {"median_s": s["numpy"],
                               "runs": s["runs"]}}, "startup": s}
            continue
        size = sizes[workload]
        inputs = make_inputs(workload, size, args.data)
        repeat = sizes["repeat"] if workload != "loop" else min(sizes["repeat"], 5)
        warmup, anchors_warmup = warmups(workload, sizes, args.warmup is not None)
        per_round = {**sizes, "repeat": -(-sizes["repeat"] // args.rounds), "warmup": anchors_warmup}
        docs, anchors = [], []
        for _ in range(args.rounds):
            docs.append(tapecli_bench(workload, size, inputs, -(-repeat // args.rounds), warmup))
            anchors.append(measure_here(workload, size, inputs, per_round, args.budget / args.rounds, peer_pythons))
        times = [t for doc in docs for t in doc["times_s"]]
        results[workload] = {"size": size, "tapecli": statistics.median(times), "tapecli_runs": len(times),
                             "bench": {**docs[-1], "times_s": times}, "anchors": merged(anchors)}
    if "elementwise" in results:
        n = sizes["elementwise"]
        peak = results["elementwise"]["bench"]["peak_bytes"]
        results["elementwise"]["memory"] = {"peak_bytes": peak, "input_bytes": 4 * n, "minimum_bytes": 8 * n,
                                            "x_minimum": (peak + 4 * n) / (8 * n)}
    if "scalar_loop" in results:
        results["scalar_loop"]["tape"] = tape_bytes_per_record(sizes["record_steps"])
    per_iteration = per_iteration_after_warmup(results)

    print(f"\n{'workload':12s} {'tapecli':>26s}   {'anchor':16s} {'anchor time':>26s}  tapecli/anchor")
    for workload, result in results.items():
        runs = result.get("tapecli_runs", result.get("startup", {}).get("runs"))
        first = f"{fmt_s(result['tapecli'])} ({runs} runs)"
        for i, (anchor, cell, ratio) in enumerate(comparison_rows(workload, result, peer_status)):
            print(f"{workload if i == 0 else '':12s} {first if i == 0 else '':>26s}   {anchor:16s} {cell:>26s}  {ratio}")
    print("\ntargets (tapecli / anchor, medians, this run):")
    for workload, result in results.items():
        if workload in TARGETS:
            print("  " + target_line(workload, result))
    if "elementwise" in results:
        e, m = results["elementwise"], results["elementwise"]["memory"]
        moved = 8 * sizes["elementwise"]
        print(f"\nelementwise: {moved / 1e6:.0f} MB moved at least (x read once, the gradient written once, float32): "
              f"tapecli {moved / e['tapecli'] / 1e9:.2f} GB/s" + "".join(
                  f", {ANCHOR_NAMES.get(k, k)} {moved / a['median_s'] / 1e9:.2f} GB/s"
                  for k, a in e["anchors"].items() if "median_s" in a))
        print(f"elementwise memory: peak {m['peak_bytes'] / 1e6:.1f} MB above the bound input x "
              f"({m['input_bytes'] / 1e6:.0f} MB), so {(m['peak_bytes'] + m['input_bytes']) / 1e6:.1f} MB held = "
              f"{m['x_minimum']:.2f}x the minimum {m['minimum_bytes'] / 1e6:.0f} MB (x + its gradient); "
              f"target <= {MEMORY_TARGETS['elementwise_x_minimum']:.1f}x")
    if "scalar_loop" in results:
        t = results["scalar_loop"]["tape"]
        print(f"recorded scalar loop, {t['steps']:,} steps: peak {t['peak_bytes'] / 1e6:.1f} MB over {t['records']:,} "
              f"tape records = {t['bytes_per_record']:.0f} bytes per record; target <= {MEMORY_TARGETS['bytes_per_record']}")
    if per_iteration:
        print(f"\nper iteration after warm-up ((train_long - train) / {per_iteration['iterations']:,} iterations): "
              + ", ".join(f"{ANCHOR_NAMES.get(k, k)} {fmt_s(v)}" for k, v in per_iteration["times_s"].items()))
    if "tiny" in results:
        s = results["tiny"]["startup"]
        print(f"start-up: medians of {s['runs']} alternating runs each; minimums tapecli "
              f"{s['tapecli_min'] * 1e3:.1f} ms, import numpy {s['numpy_min'] * 1e3:.1f} ms")
    return {"peers": peer_status, "results": results, "per_iteration": per_iteration}


def per_iteration_after_warmup(results: dict) -> dict | None:
    """Each tool's time for one more training step once its loop runs warm: train_long's median less train's,
    over the steps between them (the same model and data; start-up, tracing, compiling and the first steps
    cancel out)."""
    if "train" not in results or "train_long" not in results:
        return None
    iterations = peers.TRAINING["train_long"] - peers.TRAINING["train"]
    short, long = results["train"], results["train_long"]
    times = {"tapecli": (long["tapecli"] - short["tapecli"]) / iterations}
    for name, anchor in long["anchors"].items():
        other = short["anchors"].get(name, {})
        if "median_s" in anchor and "median_s" in other:
            times[name] = (anchor["median_s"] - other["median_s"]) / iterations
    return {"iterations": iterations, "times_s": times}


def curves(args) -> dict:
    """Time (tapecli and NumPy by hand) and tapecli's peak memory per size; exponents and flags."""
    warmup = min(args.sizes["warmup"], 1)
    out = {}
    for workload in (w for w in args.workloads if w in scaling.CURVES):
        what, sizes, work, memory_work = scaling.CURVES[workload]
        sizes = scaling.QUICK_CURVES[workload] if args.quick else sizes
        curve = {"what": what, "sizes": sizes, "tapecli": [], "numpy": [], "peak_bytes": []}
        for size in sizes:
            repeat = curve_repeat(args.sizes["repeat"], args.budget, curve, size, work)
            inputs = make_inputs(workload, size, args.data)
            doc = tapecli_bench(workload, size, inputs, repeat, warmup)
            numpy_time = measure_here(workload, size, inputs, {"repeat": repeat, "warmup": warmup}, args.budget)["numpy"]
            curve["tapecli"].append(doc["median_s"])
            curve["numpy"].append(numpy_time["median_s"])
            curve["peak_bytes"].append(doc["peak_bytes"])
            print(f"  {workload:12s} {what} {size:>11,}: tapecli {fmt_s(doc['median_s']):>11s}  NumPy by hand "
                  f"{fmt_s(numpy_time['median_s']):>11s}  tapecli peak memory {doc['peak_bytes'] / 1e6:9.3f} MB", flush=True)
        curve.update(exponents(curve, work, memory_work))
        out[workload] = curve
    print(f"\n{'workload':12s} {'sizes':>16s}  {'work':>4s}  {'tapecli: all / large end':>24s}  "
          f"{'NumPy: all / large end':>22s}  {'memory: need / large end':>24s}  flags")
    for workload, c in out.items():
        span = f"{c['sizes'][0]:.0e}..{c['sizes'][-1]:.0e}"
        flags = ", ".join(c["flags"]) or "-"
        print(f"{workload:12s} {span:>16s}  {c['work']:>4d}  {c['tapecli_exponent']:>11.2f} / {c['tapecli_large_end']:<10.2f}  "
              f"{c['numpy_exponent']:>9.2f} / {c['numpy_large_end']:<10.2f}  {c['memory_work']:>11d} / "
              f"{c['memory_large_end']:<10.2f}  {flags}")
    print(f"(exponents k of time ~ size^k, log-log least squares over all sizes and over the largest "
          f"{scaling.LARGE_END}; flagged where the large end exceeds the work's exponent by more than "
          f"{scaling.TOLERANCE})")
    if args.plot:
        scaling.plot(out, args.plot)
        print(f"curves drawn in {args.plot}")
    return out


def curve_repeat(most: int, budget: float, curve: dict, size: int, work: int) -> int:
    """Timed runs at ``size``: as many as fit in ``budget`` seconds (3 to ``most``), guessed from the
    previous size's time scaled by the work's growth."""
    if not curve["tapecli"]:
        return most
    guess = max(curve["tapecli"][-1], curve["numpy"][-1]) * (size / curve["sizes"][len(curve["tapecli"]) - 1]) ** work
    return max(3, min(most, int(budget / max(guess, 1e-9))))


def exponents(curve: dict, work: int, memory_work: int) -> dict:
    fitted = {"work": work, "memory_work": memory_work, "flags": []}
    for who in ("tapecli", "numpy"):
        fitted[f"{who}_exponent"] = scaling.fit_exponent(curve["sizes"], curve[who])
        fitted[f"{who}_large_end"] = scaling.large_end_exponent(curve["sizes"], curve[who])
    fitted["memory_large_end"] = scaling.large_end_exponent(curve["sizes"], [max(b, 1) for b in curve["peak_bytes"]])
    if scaling.superlinear(fitted["tapecli_large_end"], work):
        fitted["flags"].append(f"time superlinear in the work ({fitted['tapecli_large_end']:.2f} > {work})")
    if scaling.superlinear(fitted["memory_large_end"], memory_work):
        fitted["flags"].append(f"memory superlinear ({fitted['memory_large_end']:.2f} > {memory_work})")
    return fitted


def pin(cores: int) -> list[int]:
    """This process (and every process it starts) on the first ``cores`` of the cores it may use: those cores."""
    chosen = sorted(os.sched_getaffinity(0))[:cores]
    os.sched_setaffinity(0, chosen)
    return chosen


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.cores is not None:
        print(f"on cores {pin(args.cores)}", flush=True)
    print(f"load average at the start: {load_average()}", flush=True)
    report = {"quick": args.quick, "sizes": args.sizes}
    if args.scaling:
        report["curves"] = curves(args)
    else:
        report.update(compare(args))
    print(f"load average at the end: {load_average()}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
