"""tapecli's performance benchmarks, each beside a NumPy program written by hand.

    python benchmarks/run.py            # the full sizes (a few minutes)
    python benchmarks/run.py --quick    # smaller sizes and fewer runs, to try it out
    python benchmarks/run.py --only mlp,tiny --json results.json

Workloads (the .tdf files here; inputs are generated, seeded, into benchmarks/data/ and
bound with ``--set NAME=@file.npy``):

* tiny         start-up: ``tapecli grad tiny.tdf`` as a whole process, against
               ``python -c "import numpy"``, the two alternating, medians of --startup-runs.
* elementwise  sum(sigmoid(x) * tanh(x * 1.5 + 0.5)) and its gradient, x float32, 1e7 elements.
* mlp          mean((relu(relu(xb @ w1) @ w2) @ w3) ** 2), gradient w.r.t. w1, w2, w3; float32,
               xb, w1, w2 1024 x 1024, w3 1024 x 10.
* jacobian     the jacobian of sin(M @ x) * x w.r.t. x, n = 1000, float32.
* scalar_loop  100 steps of y = sin(y) * 1.01 on a tape, then the gradient: the interpreter's speed.

Each workload but tiny runs in ``tapecli bench --json`` (parsed once, inputs bound before timing,
--warmup untimed runs, medians of --repeat runs in one process), and the baseline in this
process, with the same warm-up and repeat counts. The baselines compute the same forward pass
and the same derivatives by hand: the analytic gradient in NumPy for elementwise and mlp,
diag(cos(Mx) * x) @ M + diag(sin(Mx)) for the jacobian, and for the scalar loop a loop on
NumPy float32 scalars that keeps its intermediates, then a hand-written backward loop.

Elementwise also reports bytes moved and GB/s, counting the least traffic any program
needs: x read once and the gradient written once (8 bytes per element in float32); the
temporaries of either program are not counted.

Before timing start-up, the tapecli package is byte-compiled (as an installed package is),
so a checkout run with PYTHONDONTWRITEBYTECODE does not compile its sources in every process.

No TensorFlow, JAX or PyTorch: the baselines are NumPy.
"""
from __future__ import annotations

import argparse
import compileall
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# workload -> the target: ("ratio", R) is tapecli / baseline <= R; ("time", S) is tapecli's median <= S seconds.
TARGETS = {
    "tiny": ("ratio", 1.5),            # the whole process, against `python -c "import numpy"`
    "elementwise": ("ratio", 0.3),     # JAX jit reaches 0.19x, TensorFlow 0.62x
    "mlp": ("ratio", 1.10),            # BLAS bound
    "jacobian": ("time", 0.036),       # 1.5x JAX jit; TensorFlow takes 0.106 s
    "scalar_loop": ("time", 0.0023),   # PyTorch eager
}

FULL = {"elementwise": 10_000_000, "mlp": 1024, "mlp_out": 10, "jacobian": 1000, "repeat": 10, "warmup": 2,
        "startup_runs": 21}
QUICK = {"elementwise": 1_000_000, "mlp": 256, "mlp_out": 10, "jacobian": 200, "repeat": 3, "warmup": 1,
         "startup_runs": 7}


# ------------------------------------------------------------------ inputs

def make_inputs(sizes: dict, folder: Path, seed: int = 0) -> dict[str, dict[str, Path]]:
    """Seeded inputs for each workload, as .npy files: {workload: {name: path}}."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n, h, k, m = sizes["elementwise"], sizes["mlp"], sizes["mlp_out"], sizes["jacobian"]
    arrays = {
        "elementwise": {"x": rng.standard_normal(n, dtype=np.float32)},
        "mlp": {"xb": rng.standard_normal((h, h), dtype=np.float32),
                "w1": (rng.standard_normal((h, h), dtype=np.float32) / np.float32(math.sqrt(h))),
                "w2": (rng.standard_normal((h, h), dtype=np.float32) / np.float32(math.sqrt(h))),
                "w3": (rng.standard_normal((h, k), dtype=np.float32) / np.float32(math.sqrt(h)))},
        "jacobian": {"M": rng.standard_normal((m, m), dtype=np.float32) / np.float32(math.sqrt(m)),
                     "x": rng.standard_normal(m, dtype=np.float32)},
        "scalar_loop": {},
    }
    paths = {}
    for workload, named in arrays.items():
        paths[workload] = {}
        for name, arr in named.items():
            path = folder / f"{workload}-{name}-{'x'.join(map(str, arr.shape))}.npy"
            if not path.exists():
                np.save(path, arr)
            paths[workload][name] = path
    return paths


# --------------------------------------------------------------- baselines

def elementwise_numpy(x):
    s = 1 / (1 + np.exp(-x))
    th = np.tanh(x * np.float32(1.5) + np.float32(0.5))
    loss = np.sum(s * th)
    dx = th * s * (1 - s) + s * (1 - th * th) * np.float32(1.5)
    return loss, dx


def mlp_numpy(xb, w1, w2, w3):
    h1 = xb @ w1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ w2
    a2 = np.maximum(h2, 0)
    out = a2 @ w3
    loss = np.mean(out ** 2)
    dout = out * np.float32(2 / out.size)
    dw3 = a2.T @ dout
    dh2 = (dout @ w3.T) * (h2 > 0)
    dw2 = a1.T @ dh2
    dh1 = (dh2 @ w2.T) * (h1 > 0)
    dw1 = xb.T @ dh1
    return loss, (dw1, dw2, dw3)


def jacobian_numpy(M, x):
    z = M @ x
    y = np.sin(z) * x
    jac = (np.cos(z) * x)[:, None] * M
    jac[np.diag_indices_from(jac)] += np.sin(z)
    return y, jac


def scalar_loop_numpy(x=np.float32(0.5), steps=100):
    k = np.float32(1.01)
    ys = [x * np.float32(1.0)]
    for _ in range(steps):
        ys.append(np.sin(ys[-1]) * k)
    g = np.float32(1.0)
    for y in reversed(ys[:-1]):
        g = g * k * np.cos(y)
    return ys[-1], g * np.float32(1.0)


def time_baseline(fn, args, repeat: int, warmup: int) -> float:
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


BASELINES = {
    "elementwise": (elementwise_numpy, ("x",)),
    "mlp": (mlp_numpy, ("xb", "w1", "w2", "w3")),
    "jacobian": (jacobian_numpy, ("M", "x")),
    "scalar_loop": (scalar_loop_numpy, ()),
}


# ------------------------------------------------------------------ tapecli

def tapecli_command() -> list[str]:
    """The tapecli script installed beside this Python, else ``python -m tapecli``."""
    script = Path(sys.executable).with_name("tapecli")
    if script.exists():
        return [str(script)]
    found = shutil.which("tapecli")
    return [found] if found else [sys.executable, "-m", "tapecli"]


def tapecli_bench(workload: str, inputs: dict[str, Path], repeat: int, warmup: int) -> dict:
    cmd = [*tapecli_command(), "bench", "--json", "--repeat", str(repeat), "--warmup", str(warmup),
           str(HERE / f"{workload}.tdf")]
    for name, path in inputs.items():
        cmd += ["--set", f"{name}=@{path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout)


def startup(runs: int) -> dict:
    """Medians of whole-process times, `tapecli grad tiny.tdf` and `python -c "import numpy"` alternating."""
    try:
        import tapecli
        compileall.compile_dir(os.path.dirname(tapecli.__file__), quiet=1)
    except (ImportError, OSError):
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
            "tapecli_min": min(times["tapecli"]), "numpy_min": min(times["numpy"]), "runs": runs,
            "command": " ".join(["tapecli", "grad", "benchmarks/tiny.tdf"])}


# ------------------------------------------------------------------ report

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    parser.add_argument("--only", help="comma-separated workloads (tiny, elementwise, mlp, jacobian, scalar_loop)")
    parser.add_argument("--repeat", type=int, help="timed runs per workload")
    parser.add_argument("--warmup", type=int, help="untimed runs before them")
    parser.add_argument("--startup-runs", type=int, help="process pairs for the start-up workload")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="where the inputs go (default benchmarks/data)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    sizes = dict(QUICK if args.quick else FULL)
    for key in ("repeat", "warmup", "startup_runs"):
        if getattr(args, key) is not None:
            sizes[key] = getattr(args, key)
    wanted = args.only.split(",") if args.only else list(TARGETS)
    unknown = set(wanted) - set(TARGETS)
    if unknown:
        parser.error(f"unknown workload {sorted(unknown)[0]}")

    paths = make_inputs(sizes, args.data)
    rows, results = [], {}
    for workload in wanted:
        if workload == "tiny":
            s = startup(sizes["startup_runs"])
            results["tiny"] = s
            rows.append(("tiny (process)", s["tapecli"], s["numpy"], TARGETS["tiny"], "import numpy"))
            continue
        doc = tapecli_bench(workload, paths[workload], sizes["repeat"], sizes["warmup"])
        fn, names = BASELINES[workload]
        arrays = [np.load(paths[workload][name]) for name in names]
        base = time_baseline(fn, arrays, sizes["repeat"], sizes["warmup"])
        results[workload] = {"tapecli": doc, "baseline_median_s": base}
        target = None if args.quick else TARGETS[workload]
        rows.append((workload, doc["median_s"], base, target, "numpy by hand"))
        if workload == "elementwise":
            moved = 8 * sizes["elementwise"]
            results[workload]["bytes_moved"] = moved
            results[workload]["gb_per_s"] = moved / doc["median_s"] / 1e9
            results[workload]["baseline_gb_per_s"] = moved / base / 1e9

    print(f"{'workload':16s} {'tapecli':>11s} {'baseline':>11s} {'ratio':>7s} {'target':>7s}  met?  (baseline)")
    for name, ours, base, target, what in rows:
        ratio = ours / base
        if target is None:
            met, shown = "-", "-"
        elif target[0] == "ratio":
            met, shown = ("yes" if ratio <= target[1] else "NO"), f"{target[1]:.2f}x"
        else:
            met, shown = ("yes" if ours <= target[1] else "NO"), f"{target[1] * 1e3:g}ms"
        print(f"{name:16s} {ours * 1e3:9.2f}ms {base * 1e3:9.2f}ms {ratio:7.2f} {shown:>7s}  {met:4s}  ({what})")
    if "elementwise" in results:
        e = results["elementwise"]
        print(f"\nelementwise: {e['bytes_moved'] / 1e6:.0f} MB moved at least (x read once, the gradient written "
              f"once, float32): tapecli {e['gb_per_s']:.2f} GB/s, numpy by hand {e['baseline_gb_per_s']:.2f} GB/s")
        print(f"elementwise: peak memory of a tapecli run {e['tapecli']['peak_bytes'] / 1e6:.0f} MB "
              f"(x is {sizes['elementwise'] * 4 / 1e6:.0f} MB)")
    if "tiny" in results:
        s = results["tiny"]
        print(f"start-up: medians of {s['runs']} alternating runs each; minimums tapecli "
              f"{s['tapecli_min'] * 1e3:.1f} ms, numpy {s['numpy_min'] * 1e3:.1f} ms")
    if args.json:
        args.json.write_text(json.dumps({"quick": args.quick, "sizes": sizes, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
