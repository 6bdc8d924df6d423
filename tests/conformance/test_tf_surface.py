"""The TensorFlow/Keras surface, checked against TensorFlow (PyTorch's OpInfo is the model).

tests/data/tf_surface.tsv lists the public symbols of the modules GradientTape programs use (TensorFlow 2.21 /
Keras 3). Each is either supported or out of scope (tapecli/library/scope.py, with its reason, the table of
docs/tf-surface.md). A supported symbol has rows in tests/tf_expectations/*.json: small TensorFlow programs
whose values (and gradients, computed in the program) TensorFlow itself recorded
(benchmarks/record_tf_expectations.py); here tapecli runs each program and must give the same values,
dtypes and structure. A supported symbol without a row fails; so does an out-of-scope one that resolves.
What is neither supported nor out of scope yet is what ../reach/probe.py lists as missing (surface_status).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import tapecli
from tapecli.errors import TdfError, TdfNameError

ROOT = Path(__file__).resolve().parents[2]
SURFACE = [line.split("\t")[0] for line in (ROOT / "tests" / "data" / "tf_surface.tsv").read_text().splitlines()
           if line and not line.startswith("#")]
ROWS = [(path.stem, row) for path in sorted((ROOT / "tests" / "tf_expectations").glob("*.json"))
        for row in json.loads(path.read_text())]


def resolves(symbol: str) -> bool:
    """What ../reach/probe.py counts: tapecli does not answer that it has no such name."""
    try:
        tapecli.run(f"import tensorflow as tf\nf = {symbol}\n")
    except TdfNameError as e:
        return not ("has no" in e.message or "not defined" in e.message or "out of scope" in e.message)
    except TdfError:
        return True
    return True


def out_of_scope() -> dict[str, str]:
    from tapecli.library.scope import OUT_OF_SCOPE
    return OUT_OF_SCOPE


def _row_id(item) -> str:
    stem, row = item
    return f"{stem}:{row['symbols'][0]}:{row.get('case', '')}"


def _params(rows):
    """A row tapecli does not match yet names why (``known_difference``): an expected failure, which passing
    makes a failure of its own, so the row is updated when tapecli is."""
    for item in rows:
        why = item[1].get("known_difference")
        yield pytest.param(item, id=_row_id(item), marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])


@pytest.mark.parametrize("item", list(_params(ROWS)))
def test_tapecli_gives_tensorflows_values(item):
    _, row = item
    if row.get("raises") or row.get("deviation"):   # a deviation: where TensorFlow wraps silently, tapecli refuses
        with pytest.raises(TdfError):
            tapecli.run(row["program"])
        return
    values = tapecli.run(row["program"]).values
    for name in row["check"]:
        assert name in values, f"{name} is not bound"
        _compare(row["values"][name], values[name], row.get("rtol", 1e-5), row.get("atol", 1e-6), name)


def _compare(expected, actual, rtol, atol, where):
    if expected is None:
        assert actual is None, f"{where}: expected None, got {actual!r}"
    elif isinstance(expected, dict) and set(expected) == {"dtype", "value"}:
        got = np.asarray(getattr(actual, "value", actual))
        want = np.asarray(_decode(expected["value"]), dtype=expected["dtype"])
        assert str(got.dtype) == expected["dtype"], f"{where}: dtype {got.dtype}, TensorFlow's {expected['dtype']}"
        assert got.shape == want.shape, f"{where}: shape {got.shape}, TensorFlow's {want.shape}"
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        else:
            assert np.array_equal(got, want), f"{where}: {got.tolist()} != {want.tolist()}"
    elif isinstance(expected, list):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), \
            f"{where}: expected a sequence of {len(expected)}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare(e, a, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), f"{where}: keys {actual!r}"
        for k in expected:
            _compare(expected[k], actual[k], rtol, atol, f"{where}[{k!r}]")
    elif isinstance(expected, float):
        assert math.isclose(float(np.asarray(actual)), expected, rel_tol=rtol, abs_tol=atol), where
    else:
        got = actual.item() if isinstance(actual, np.ndarray) and actual.ndim == 0 else actual
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return float(value) if isinstance(value, str) else value


def surface_status() -> dict[str, list[str]]:
    """Each surface symbol's standing: supported with rows, supported without a row, out of scope (and
    refused, or wrongly resolving), or not yet there (../reach/probe.py's "missing")."""
    covered = {s for _, row in ROWS for s in row["symbols"]}
    scope = out_of_scope()
    status: dict[str, list[str]] = {"checked": [], "no row": [], "out of scope": [], "resolves though out of scope": [],
                                    "missing": []}
    for symbol in SURFACE:
        if symbol in scope:
            status["resolves though out of scope" if resolves(symbol) else "out of scope"].append(symbol)
        elif not resolves(symbol):
            status["missing"].append(symbol)
        else:
            status["checked" if symbol in covered else "no row"].append(symbol)
    return status


def test_every_supported_symbol_has_a_row_and_nothing_out_of_scope_resolves():
    status = surface_status()
    assert not status["resolves though out of scope"], status["resolves though out of scope"][:20]
    assert not status["no row"], f"supported without a row in tests/tf_expectations: {len(status['no row'])}: " \
                                 f"{status['no row'][:20]}"


def test_rows_name_only_symbols_of_the_surface():
    surface = set(SURFACE)
    strays = sorted({s for _, row in ROWS for s in row["symbols"]} - surface)
    assert not strays, strays


def test_an_out_of_scope_symbol_is_refused_with_its_reason():
    scope = out_of_scope()
    for symbol, reason in list(scope.items())[:25]:
        with pytest.raises(TdfNameError) as e:
            tapecli.run(f"import tensorflow as tf\nf = {symbol}\n")
        assert symbol in e.value.message and "out of scope" in e.value.message and reason in e.value.message


def test_the_docs_list_what_the_code_refuses():
    text = (ROOT / "docs" / "tf-surface.md").read_text()
    listed = dict(re.findall(r"^\| `(tf\.[\w.]+)` \| (.+?) \|$", text, re.M))
    assert listed == out_of_scope()


def test_the_docs_list_what_is_not_yet_supported():
    """docs/tf-surface.md's "Not yet supported" names exactly the symbols that neither resolve nor are out of scope."""
    text = (ROOT / "docs" / "tf-surface.md").read_text()
    section = text.split("## Not yet supported", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"`(tf\.[\w.]+)`", section)
    assert len(listed) == len(set(listed)), "a symbol is listed twice"
    assert sorted(listed) == sorted(surface_status()["missing"])


def test_out_of_scope_reasons_do_not_read_as_missing():
    """../reach/probe.py counts an answer saying "has no" or "not defined" as a missing name."""
    assert not [s for s, why in out_of_scope().items() if "has no" in why or "not defined" in why]
