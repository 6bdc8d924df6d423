"""GPU parity: every public conformance case and every example gives on ``--device cuda`` what it gives on
the CPU, run under numba's CUDA simulator (no GPU needed); and the run's limits hold there too.

The conformance programs (seed ``cases``, ``tf`` and ``mixed``) are copied in tests/data/conformance with
their specs (the spec names the command, which sets the run's options). Each program runs in this
process on the cpu and on cuda, with the options of its command, and the two runs must agree: the same
error (kind and line) or the same values, gradients and jacobians (dtypes, shapes, structure and strings
exactly; floats within the conformance runner's tolerance: device kernels such as sigmoid or a reduction's
tree round in their own order), the same printed lines (their numbers within that tolerance), the same
expectation results, and the same warnings beside the device's own notes (an op with no device kernel
runs on the host, said once per op name).

Skipped, with the reason, where numba-cuda is not installed (it comes with the test extra).
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

# The simulator must be chosen before numba.cuda is first imported (nothing imports it before the cuda
# backend is asked for).
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (it comes with the test extra: "
                                         "pip install -e '.[test]')")

import numba  # noqa: E402
import numpy as np  # noqa: E402

numba.config.reload_config()        # numba may have been imported by an earlier test

from tapecli.api import Options, run_source  # noqa: E402
from tapecli.cli.render import to_json  # noqa: E402
from tapecli.documents import request_entries  # noqa: E402
from tapecli.errors import LimitError, TdfError  # noqa: E402
from tapecli.runtime.limits import Limits  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "data" / "conformance"
PROGRAMS = sorted(CONFORMANCE.glob("*/*.tdf")) + sorted((ROOT / "examples").glob("*.tdf"))
RTOL, ATOL = 1e-5, 1e-6             # the conformance runner's defaults
DEVICE_NOTE = ": it runs on the host (its inputs are copied from the device"     # the device's own notes
# The options each command of the specs runs a program with (as the command line sets them).
COMMAND_OPTIONS = {"run": {}, "check": {}, "watched": {"explain": True},
                   "jacobian": {"explain": True, "request": "jacobian"}}


def _command(path: Path) -> str:
    spec = path.with_suffix(".json")
    if not spec.exists():           # an example: its sidecar is NAME.expected.json, run --json by default
        spec = path.with_name(path.stem + ".expected.json")
    return json.loads(spec.read_text()).get("args", ["run"])[0]


def _outcome(path: Path, device: str) -> dict:
    options = Options(device=device, **COMMAND_OPTIONS[_command(path)])
    try:
        result = run_source(path.read_text(), path.name, options)
    except TdfError as e:
        return {"error": [e.kind, e.line]}
    scope = result.scope.vars
    return {"values": {name: to_json(value, name) for name, value in scope.items()},
            "requests": request_entries(result.requests + result.implicit),
            "output": list(result.output),
            "expectations": [[e["line"], e["ok"]] for e in result.expectations],
            "warnings": [w for w in result.warnings if DEVICE_NOTE not in w["message"]]}


_NUMBER = re.compile(r"-?(?:\d+\.\d*(?:e[-+]?\d+)?|\d+e[-+]?\d+|nan|inf)")


def _agree(cpu, dev, where: str, errors: list) -> None:
    if isinstance(cpu, float) and isinstance(dev, float):
        if not (cpu == dev or (cpu != cpu and dev != dev) or abs(cpu - dev) <= ATOL + RTOL * abs(cpu)):
            errors.append(f"{where}: cpu {cpu!r}, cuda {dev!r}")
    elif isinstance(cpu, str) and isinstance(dev, str) and where.startswith("output"):
        # printed numbers within the tolerance, the rest of the line exactly
        if _NUMBER.sub("#", cpu) != _NUMBER.sub("#", dev):
            errors.append(f"{where}: cpu {cpu!r}, cuda {dev!r}")
        else:
            for a, b in zip(_NUMBER.findall(cpu), _NUMBER.findall(dev)):
                _agree(float(a), float(b), where, errors)
    elif isinstance(cpu, dict) and isinstance(dev, dict) and cpu.keys() == dev.keys():
        for k in cpu:
            _agree(cpu[k], dev[k], f"{where}.{k}", errors)
    elif isinstance(cpu, list) and isinstance(dev, list) and len(cpu) == len(dev):
        for i, (a, b) in enumerate(zip(cpu, dev)):
            _agree(a, b, f"{where}[{i}]", errors)
    elif type(cpu) is not type(dev) or cpu != dev:
        errors.append(f"{where}: cpu {str(cpu)[:200]}, cuda {str(dev)[:200]}")


@pytest.mark.parametrize("path", PROGRAMS, ids=[f"{p.parent.name}/{p.stem}" for p in PROGRAMS])
def test_a_program_gives_on_cuda_what_it_gives_on_the_cpu(path):
    cpu = _outcome(path, "cpu")
    dev = _outcome(path, "cuda")
    errors: list = []
    _agree(cpu, dev, "", errors)
    assert not errors, "\n".join(errors[:20])


def test_every_public_conformance_folder_is_here():
    counts = {folder: len(list((CONFORMANCE / folder).glob("*.tdf"))) for folder in ("cases", "tf", "mixed")}
    assert counts == {"cases": 41, "tf": 15, "mixed": 28}
    assert all(p.with_suffix(".json").exists() for p in CONFORMANCE.glob("*/*.tdf"))


def test_literal_arithmetic_stays_on_the_host():
    # Python forms compute on literals (comprehensions, conditional expressions, f-strings); their
    # values are Python numbers, on the host, wherever the tensors live
    src = ("import tensorflow as tf\nx = tf.Variable(2.0)\nscales = [0.5 * i for i in range(3)]\n"
           "limit = 3 if len(scales) > 2 else 1\n"
           "with tf.GradientTape() as t:\n    y = tf.clip_by_value(x * scales[2], 0.0, limit * 1.0)\n"
           "g = t.gradient(y, x)\nnames = {f'k{i}': i * 2 for i in range(2)}\n")
    cpu, dev = (run_source(src, options=Options(device=d)) for d in ("cpu", "cuda"))
    for name in ("scales", "limit", "y", "g", "names"):
        assert to_json(dev.scope.vars[name]) == to_json(cpu.scope.vars[name]), name
    on_device, on_host = dev.scope.vars["scales"][1], cpu.scope.vars["scales"][1]     # (CPython's: Python floats)
    assert type(getattr(on_device, "value", on_device)) is type(getattr(on_host, "value", on_host))


def test_library_code_that_reads_values_reads_them_on_the_host():
    # matrix_rank counts singular values with NumPy: the svd's result on the device is copied first
    src = ("import tensorflow as tf\na = tf.constant([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])\n"
           "r = tf.linalg.matrix_rank(a)\np = tf.linalg.pinv(a)\n")
    cpu, dev = (run_source(src, options=Options(device=d)) for d in ("cpu", "cuda"))
    assert to_json(dev.scope.vars["r"]) == to_json(cpu.scope.vars["r"]) == 2
    np.testing.assert_allclose(np.asarray(dev.scope.vars["p"].value), np.asarray(cpu.scope.vars["p"].value),
                               rtol=1e-5, atol=1e-6)


def test_an_op_without_a_device_kernel_runs_on_the_host_and_says_so_once():
    src = ("var x = [0.5, -1.0, 2.0]\ntape t:\n    a = sinh(x)\n    b = sinh(a) + cosh(x)\n"
           "    y = reduce_sum(a * b)\ng = t.gradient(y, x)\ni = argmax(x)\nj = argmax(g)\n")
    cpu = run_source(src, options=Options())
    dev = run_source(src, options=Options(device="cuda"))
    for name in ("a", "b", "y", "g", "i", "j"):
        assert to_json(dev.scope.vars[name]) == to_json(cpu.scope.vars[name]), name   # NumPy's bits, on the host
    notes = [w for w in dev.warnings if DEVICE_NOTE in w["message"]]
    said = sorted(w["message"].split(" ", 1)[0] for w in notes)
    assert said == sorted(set(said)) and {"sinh", "cosh", "argmax"} <= set(said)
    assert next(w for w in notes if w["message"].startswith("sinh "))["line"] == 3     # where it first ran
    assert not [w for w in cpu.warnings if DEVICE_NOTE in w["message"]]


def test_the_time_limit_holds_inside_a_long_kernel():
    # two million elements: minutes of the simulator's threads; the limit stops the kernel's launches
    src = "x = ones([2000000])\ny = sin(x)\n"
    started = time.monotonic()
    with pytest.raises(LimitError, match="ran longer than 1 s") as info:
        run_source(src, options=Options(device="cuda", limits=Limits(max_seconds=1)))
    assert time.monotonic() - started < 15
    assert info.value.line in (1, 2)


def test_the_element_and_memory_caps_hold_on_cuda():
    src = "x = ones([3000, 1])\ny = x * transpose(x)\n"
    with pytest.raises(LimitError, match="would have 9,000,000 elements"):
        run_source(src, options=Options(device="cuda", limits=Limits(max_elements=1_000_000)))
    with pytest.raises(LimitError, match="memory limit"):
        run_source("x = ones([3000, 3000])\n", options=Options(device="cuda", limits=Limits(max_memory=50_000_000)))


def test_a_large_kernel_on_the_simulator_takes_seconds():
    # a launch is one block looping over its elements: 50,000 elements in seconds (a thread per
    # element was ~0.5 ms each, minutes)
    x = np.linspace(-3.0, 3.0, 50_000, dtype=np.float32)
    started = time.monotonic()
    dev = run_source("var x = 0.0\ntape t:\n    y = reduce_sum(tanh(x) * x)\ng = t.gradient(y, x)\n",
                     options=Options(device="cuda", overrides={"x": x}))
    assert time.monotonic() - started < 60
    cpu = run_source("var x = 0.0\ntape t:\n    y = reduce_sum(tanh(x) * x)\ng = t.gradient(y, x)\n",
                     options=Options(overrides={"x": x}))
    np.testing.assert_allclose(np.asarray(dev.scope.vars["g"].value), np.asarray(cpu.scope.vars["g"].value),
                               rtol=1e-6, atol=1e-7)


def test_inf_and_nan_on_the_simulator_are_values_not_warnings():
    # the simulator's threads compute outside the run's np.errstate: nothing may reach stderr
    from conftest import cli
    proc = cli("run", "-", "--json", "--device", "cuda", input="var x = [1e30, 2.0]\ny = exp(x * x) - exp(x * x)\n",
               env={"NUMBA_ENABLE_CUDASIM": "1"})
    assert proc.code == 0 and proc.stderr == ""
    cpu = cli("run", "-", "--json", input="var x = [1e30, 2.0]\ny = exp(x * x) - exp(x * x)\n")
    assert proc.json["values"] == cpu.json["values"]


def test_a_cast_from_float_to_an_integer_dtype_gives_the_cpu_s_integers():
    # NaN and floats out of range become what NumPy's C casts give (no device formula does): on the host
    src = ("var w = [[-13.39, 16.05], [-1e30, 300.7]]\na = cast(w, int32)\nb = cast(w, int64)\n"
           "c = cast(w / 0.0 - w / 0.0, int32)\nd = cast(w > 0.0, int32)\ne = cast(w, float64)\n")
    cpu, dev = (run_source(src, options=Options(device=d)) for d in ("cpu", "cuda"))
    for name in "abcde":
        assert to_json(dev.scope.vars[name]) == to_json(cpu.scope.vars[name]), name
    assert [w["line"] for w in dev.warnings if "a cast from a float to an integer dtype" in w["message"]] == [2]


def test_inf_flows_through_device_kernels_as_through_numpy(monkeypatch):
    # a sum, product or mean of an inf is inf (its first value times 0 was nan), trig of inf is nan (Python's
    # math raised under the simulator), and the cuda.jit product starts from zero, not from its output
    src = ("var x = [1e30, -1e30, 2.0]\ny = reduce_sum(x * x)\np = reduce_prod(x * x)\nm = reduce_mean(x * x)\n"
           "t = tan(x * x) + sin(x * x) + cos(x * x)\n")
    cpu, dev = (run_source(src, options=Options(device=d)) for d in ("cpu", "cuda"))
    for name in "ypmt":
        on_device, on_cpu = (np.asarray(r.scope.vars[name].value) for r in (dev, cpu))
        assert on_device.dtype == on_cpu.dtype and on_device.shape == on_cpu.shape, name
        # the infinities and NaNs where NumPy has them; a finite value within a rounding (NumPy's float32 trig
        # is not correctly rounded on every CPU: with AVX-512, tan(4) is a unit in the last place off)
        np.testing.assert_array_equal(np.isfinite(on_device), np.isfinite(on_cpu), err_msg=name)
        finite = np.isfinite(on_cpu)
        np.testing.assert_array_equal(on_device[~finite], on_cpu[~finite], err_msg=name)
        np.testing.assert_allclose(on_device[finite], on_cpu[finite], rtol=1e-6, err_msg=name)
    from tapecli.kernels import backends
    from tapecli.kernels.cuda import table
    gpu = backends.get("cuda")
    fresh = table.cuda.device_array
    monkeypatch.setattr(table.cuda, "device_array", lambda n, dtype: table.cuda.to_device(np.full(n, np.nan, dtype)))
    a = np.array([[[np.inf, 1.0], [2.0, 3.0]]])                 # new device memory holds anything: nan here
    got = gpu.matmul_kernel(gpu.asarray(a), gpu.asarray(a), (1,), 2, 2, 2, np.dtype(np.float64))
    np.testing.assert_array_equal(np.asarray(got), a @ a)
    assert fresh is not table.cuda.device_array


@pytest.mark.parametrize("call", ["reduce_mean(x, -1)", "reduce_mean(x, 0)", "reduce_sum(x, 0)", "reduce_max(x, -1)",
                                  "reduce_sum(x, 1)", "reduce_max([1.0, 2.0], 1)"])
def test_a_reduction_s_axis_on_cuda_is_taken_or_refused_as_on_the_cpu(call):
    outcomes = []
    for device in ("cpu", "cuda"):
        try:
            outcomes.append(to_json(run_source(f"x = 3.0\ny = {call}\n", options=Options(device=device)).scope.vars["y"]))
        except TdfError as e:
            outcomes.append((e.kind, e.message, e.line))
    assert outcomes[0] == outcomes[1]
