"""Every program in examples/ runs through the real entry point and gives the values its sidecar states.

Each ``examples/NAME.tdf`` has ``examples/NAME.expected.json``::

    {"values": {"dy_dx": 6.0, "grads": [6.0, null]},  # run --json values (null = None)
     "exit": 0,                                        # expected exit status
     "warnings_min": 1,                                # optional: at least this many warnings
     "rtol": 1e-5, "atol": 1e-6,                       # optional tolerances (these are the defaults)
     "args": ["run", "--json"],                        # optional: the command and options
     "error_kind": "TapeError", "error_line": 15,      # optional, for a program that must fail
     "grad_entries": 4,                                # optional: entries `grad --json` must list
     "jacobians": {"j": [[2.0, 0.0], [0.0, 4.0]]}}     # optional: `jacobian --json` entries by name

The expected values come from the outputs TensorFlow printed in the seed documents or from
exact hand calculation (shown in the programs' comments), never from tapecli itself.
"""
from __future__ import annotations

import functools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.tdf"))

DEFAULT_ARGS = ("run", "--json")
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-6
FLOAT_DTYPES = {"float32", "float64"}

def sidecar_of(path: Path) -> Path:
    return path.with_name(path.stem + ".expected.json")


def load_expected(path: Path) -> dict:
    sidecar = sidecar_of(path)
    if not sidecar.exists():
        pytest.fail(f"{path.name} has no sidecar {sidecar.name}")
    with open(sidecar, encoding="utf-8") as f:
        return json.load(f)


def example_params() -> list:
    return [pytest.param(path, id=path.stem) for path in EXAMPLES]


@functools.lru_cache(maxsize=None)
def cli(args: tuple[str, ...], name: str) -> subprocess.CompletedProcess:
    """``python -m tapecli ARGS NAME`` run in examples/, as a user would run it (cached per test session)."""
    return subprocess.run([sys.executable, "-m", "tapecli", *args, name], capture_output=True, text=True,
                          cwd=EXAMPLES_DIR, stdin=subprocess.DEVNULL, timeout=300)


def run_json(args: tuple[str, ...], name: str, want_exit: int) -> dict:
    proc = cli(args, name)
    assert "Traceback" not in proc.stderr, f"a Python traceback was shown:\n{proc.stderr}"
    assert proc.returncode == want_exit, (
        f"tapecli {' '.join(args)} {name}: exit {proc.returncode}, expected {want_exit}\n"
        f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"stdout of tapecli {' '.join(args)} {name} is not one JSON document: {proc.stdout[:500]!r}")
    assert doc.get("schema") == "tapecli/1", doc.get("schema")
    assert doc.get("command") == args[0], doc.get("command")
    return doc


def compare(actual, expected, rtol: float, atol: float, where: str, errors: list[str]) -> None:
    """Collect the differences between a JSON value from tapecli and the expected one."""
    if expected is None:
        if actual is not None:
            errors.append(f"{where}: expected None, got {short(actual)}")
    elif isinstance(expected, (bool, str)):
        if actual != expected or type(actual) is not type(expected):
            errors.append(f"{where}: expected {expected!r}, got {short(actual)}")
    elif isinstance(expected, (int, float)):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            errors.append(f"{where}: expected {expected}, got {short(actual)}")
        elif math.isnan(expected):
            if not math.isnan(actual):
                errors.append(f"{where}: expected NaN, got {actual}")
        elif not abs(actual - expected) <= atol + rtol * abs(expected):
            errors.append(f"{where}: expected {expected}, got {actual} (rtol={rtol}, atol={atol})")
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            errors.append(f"{where}: expected a list of {len(expected)}, got {short(actual)}")
        else:
            for i, (a, e) in enumerate(zip(actual, expected)):
                compare(a, e, rtol, atol, f"{where}[{i}]", errors)
    elif isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            errors.append(f"{where}: expected a dict with keys {sorted(expected)}, got {short(actual)}")
        else:
            for k, e in expected.items():
                compare(actual[k], e, rtol, atol, f"{where}[{k!r}]", errors)
    else:
        errors.append(f"{where}: unsupported expectation {expected!r}")


def short(value, n: int = 120) -> str:
    s = json.dumps(value)
    return s if len(s) <= n else s[: n - 3] + "..."


def shape_of(value) -> list[int]:
    """The shape of a tensor written as nested lists (a scalar is [])."""
    if isinstance(value, list):
        return [len(value)] + (shape_of(value[0]) if value else [])
    return []


def is_number_tree(value) -> bool:
    if isinstance(value, list):
        return all(is_number_tree(v) for v in value)
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


_NAME = re.compile(r'^([A-Za-z_]\w*)((?:\[(?:-?\d+|"[^"]*")\])*)$')
_PART = re.compile(r'\[(-?\d+|"[^"]*")\]')
_MISSING = object()


def resolve(name: str, values: dict):
    """The run value an entry name such as ``dl_dw``, ``grads[1]`` or ``g["w"]`` refers to."""
    m = _NAME.match(name)
    if not m or m.group(1) not in values:
        return _MISSING
    v = values[m.group(1)]
    for part in _PART.findall(m.group(2)):
        try:
            v = v[json.loads(part)] if part.startswith('"') else v[int(part)]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return v


def test_examples_exist_and_every_one_has_a_sidecar():
    assert EXAMPLES, f"no examples in {EXAMPLES_DIR}"
    missing = [p.name for p in EXAMPLES if not sidecar_of(p).exists()]
    assert not missing, f"examples without a NAME.expected.json sidecar: {missing}"
    orphans = [p.name for p in EXAMPLES_DIR.glob("*.expected.json")
               if not p.with_name(p.name[: -len(".expected.json")] + ".tdf").exists()]
    assert not orphans, f"sidecars without an example: {orphans}"


@pytest.mark.parametrize("path", example_params())
def test_example_gives_the_expected_values(path: Path):
    expected = load_expected(path)
    args = tuple(expected.get("args", DEFAULT_ARGS))
    want_exit = expected.get("exit", 0)
    doc = run_json(args, path.name, want_exit)
    rtol, atol = expected.get("rtol", DEFAULT_RTOL), expected.get("atol", DEFAULT_ATOL)

    errors: list[str] = []
    if want_exit == 0:
        assert "error" not in doc, doc["error"]
        values = doc.get("values")
        assert isinstance(values, dict), f"no values in {short(doc)}"
        for name, want in expected.get("values", {}).items():
            if name not in values:
                errors.append(f"values: {name} missing (have {sorted(values)})")
            else:
                compare(values[name], want, rtol, atol, f"values.{name}", errors)
    else:
        error = doc.get("error") or {}
        if "error_kind" in expected and error.get("kind") != expected["error_kind"]:
            errors.append(f"error kind {error.get('kind')!r}, expected {expected['error_kind']!r}: {error}")
        if "error_line" in expected and error.get("line") != expected["error_line"]:
            errors.append(f"error line {error.get('line')!r}, expected {expected['error_line']}: {error}")
        if not error.get("message"):
            errors.append(f"the error document has no message: {error}")
    warnings = doc.get("warnings", [])
    if len(warnings) < expected.get("warnings_min", 0):
        errors.append(f"expected at least {expected['warnings_min']} warning(s), got {warnings}")
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("path", example_params())
def test_grad_json_lists_each_gradient_with_consistent_value_dtype_and_shape(path: Path):
    expected = load_expected(path)
    want_exit = expected.get("exit", 0)
    doc = run_json(("grad", "--json"), path.name, want_exit)
    if want_exit != 0:
        error = doc.get("error") or {}
        assert error.get("message"), f"the error document has no message: {short(doc)}"
        if "error_kind" in expected:
            assert error.get("kind") == expected["error_kind"], error
        return
    entries = doc.get("gradients")
    assert isinstance(entries, list), short(doc)
    if "grad_entries" in expected:
        assert len(entries) == expected["grad_entries"], (
            f"expected one entry per (request, source): {expected['grad_entries']}, got {len(entries)}:\n"
            + "\n".join(short(e, 200) for e in entries))
    if not entries:
        return

    errors: list[str] = []
    for i, e in enumerate(entries):
        where = f"gradients[{i}] ({e.get('name')})"
        for key in ("name", "line", "tape", "target", "source", "value", "dtype", "shape"):
            if key not in e:
                errors.append(f"{where}: no {key!r}")
        value, dtype, shape = e.get("value"), e.get("dtype"), e.get("shape")
        if value is None:
            if dtype is not None or shape is not None:
                errors.append(f"{where}: value is null but dtype={dtype!r}, shape={shape!r}")
        else:
            if dtype not in FLOAT_DTYPES:
                errors.append(f"{where}: a gradient of dtype {dtype!r}")
            if not is_number_tree(value):
                errors.append(f"{where}: value is not a tensor: {short(value)}")
            elif shape_of(value) != shape:
                errors.append(f"{where}: the value has shape {shape_of(value)}, the entry says {shape}")
    named = [e for e in entries if e.get("name")]
    if len(named) * 2 < len(entries):
        errors.append(f"only {len(named)} of {len(entries)} entries are named")

    # A named entry agrees with what `run` bound to that name (the last entry of a name
    # holds the name's final binding, e.g. in a loop).
    run_doc = run_json(("run", "--json"), path.name, 0)
    rtol, atol = expected.get("rtol", DEFAULT_RTOL), expected.get("atol", DEFAULT_ATOL)
    last = {e["name"]: e for e in named}
    for name, e in last.items():
        bound = resolve(name, run_doc.get("values", {}))
        if bound is not _MISSING:
            compare(e.get("value"), bound, rtol, atol, f"grad entry {name} vs run", errors)
    assert not errors, "\n".join(errors)


def jacobian_params() -> list:
    return [p for p in example_params()
            if sidecar_of(p.values[0]).exists()
            and "jacobians" in json.loads(sidecar_of(p.values[0]).read_text(encoding="utf-8"))]


@pytest.mark.parametrize("path", jacobian_params())
def test_jacobian_json_gives_the_expected_jacobians(path: Path):
    expected = load_expected(path)
    doc = run_json(("jacobian", "--json"), path.name, expected.get("exit", 0))
    entries = {e.get("name"): e for e in doc.get("jacobians", [])}
    rtol, atol = expected.get("rtol", DEFAULT_RTOL), expected.get("atol", DEFAULT_ATOL)
    errors: list[str] = []
    for name, want in expected["jacobians"].items():
        if name not in entries:
            errors.append(f"no jacobian entry named {name!r} (have {sorted(map(str, entries))})")
            continue
        e = entries[name]
        compare(e.get("value"), want, rtol, atol, f"jacobians.{name}", errors)
        if e.get("value") is not None and shape_of(e["value"]) != e.get("shape"):
            errors.append(f"jacobians.{name}: the value has shape {shape_of(e['value'])}, the entry says {e.get('shape')}")
    assert not errors, "\n".join(errors)
