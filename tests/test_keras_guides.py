"""The keras.io developer guides run as written (tests/data/keras_guides/: each guide's code with small
data, seeded NumPy weights where values after training are compared), and give Keras's values:
benchmarks/record_keras_guides.py recorded them with TensorFlow 2.21 and Keras 3
(tests/tf_expectations/keras_guides.json); here tapecli runs each program and its ``results`` must agree
within float32's tolerance."""
import json
from pathlib import Path

import numpy as np
import pytest

import tapecli

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "data" / "keras_guides"
RECORDED = json.loads((HERE / "tf_expectations" / "keras_guides.json").read_text())


def plain(value):
    """tapecli's values as the recorder writes Keras's: nested lists of Python numbers."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value).tolist()
    return value


def assert_close(got, want, where, rtol=1e-4, atol=1e-6):
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_close(got[k], want[k], f"{where}.{k}", rtol, atol)
    elif isinstance(want, str) or isinstance(want, bool) or want is None:
        assert got == want, f"{where}: {got!r} != {want!r}"
    else:
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=rtol, atol=atol,
                                   err_msg=where)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_guide_runs_as_written_and_matches_keras(name):
    result = tapecli.run(PROGRAMS / f"{name}.py")
    got = plain(result["results"])
    assert_close(got, RECORDED[name], name)


def test_every_guide_program_is_recorded():
    assert sorted(p.stem for p in PROGRAMS.glob("*.py")) == sorted(RECORDED)
