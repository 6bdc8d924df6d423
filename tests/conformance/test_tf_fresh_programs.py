"""TensorFlow programs written fresh, each run as written and compared with what TensorFlow 2.21 and Keras 3
printed for it (tests/data/tf_fresh_programs*.json, recorded by benchmarks/record_tf_programs.py in a development
venv with TensorFlow): a form on one runner only beside one on the other (``...`` or ``try`` beside ``tf.newaxis``,
``tf.nn.dropout``, ``layer.trainable = False``, tf.cond), the tuples and named tuples TensorFlow returns, the
errors a program catches as TensorFlow raises them, ``len`` of a dataset, a model's own ``compute_loss``; and
the ``round_*`` programs of a round written in the styles of TensorFlow's guides and training scripts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapecli import api
from tapecli.kernels.cpu import vector_width
from tapecli.interpreter.core import ErrorLine

PROGRAMS = {name: program for store in sorted((Path(__file__).parents[1] / "data").glob("tf_fresh_programs*.json"))
            for name, program in json.loads(store.read_text()).items()}
# the activations Grappler fuses into a MatMul in a graph, oneDNN's kernels (ops/remapper.py), as TensorFlow ran
# them on an AVX-512 machine: on each runner
FUSED = sorted(json.loads((Path(__file__).parents[1] / "data" / "tf_fresh_programs_fused.json").read_text()))
ON_CPYTHON_ALONE = {"fused_tf1_session"}
avx512 = pytest.mark.skipif(vector_width() != 16, reason="TensorFlow's fused kernels differ on this machine")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_fresh_program_prints_what_tensorflow_printed(name):
    if name in FUSED and vector_width() != 16:
        pytest.skip("TensorFlow's fused kernels differ on this machine")
    _prints_what_tensorflow_printed(name)


@avx512
@pytest.mark.parametrize("on_cpython", ["0", "1"])
@pytest.mark.parametrize("name", FUSED)
def test_a_fused_activation_program_prints_the_same_on_both_runners(name, on_cpython, monkeypatch):
    if on_cpython == "0" and name in ON_CPYTHON_ALONE:
        pytest.skip("TF1's graphs and sessions run on CPython alone")
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    _prints_what_tensorflow_printed(name)


def _prints_what_tensorflow_printed(name):
    program = PROGRAMS[name]
    result = api.run_source(program["program"], f"{name}.py")
    printed = [line for line in result.output if type(line) is not ErrorLine]     # (tf.print's go to stderr)
    assert "\n".join(printed).splitlines() == program["stdout"].splitlines()     # (a print's lines may be one entry)


def test_each_program_is_named_once_across_the_stores():
    names = [name for store in (Path(__file__).parents[1] / "data").glob("tf_fresh_programs*.json")
             for name in json.loads(store.read_text())]
    assert len(names) == len(set(names)) == len(PROGRAMS)
