"""tf.raw_ops (library/tf_raw_ops.py): each op tapecli gives takes TensorFlow's keyword names, defaults and attr
types, as TensorFlow 2.21's wrappers spell them (tests/data/tf_raw_ops.json, recorded by
benchmarks/record_tf_raw_ops.py), and the recorded programs print what TensorFlow printed on the interpreter too
(tests/conformance/test_tf_programs_both_runners.py runs them on CPython's runner; the one that catches errors runs
there only)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapecli import api
from tapecli.errors import TdfNameError
from tapecli.interpreter.core import ErrorLine
from tapecli.library.tf_raw_ops import OPS, parameters

DATA = Path(__file__).parents[1] / "data"
RECORDED = json.loads((DATA / "tf_raw_ops.json").read_text())
PROGRAMS = json.loads((DATA / "tf_programs_raw_ops.json").read_text())


def test_every_op_tapecli_gives_is_recorded():
    assert sorted(OPS) == sorted(RECORDED)


@pytest.mark.parametrize("op", sorted(OPS))
def test_an_op_has_tensorflow_s_signature_and_attr_types(op):
    function, text, _ = OPS[op]
    params = parameters(text)
    spelled = ", ".join(name if default is None else f"{name}={default}" for name, _, default in params)
    assert (function, f"({spelled}, name=None)") == (RECORDED[op]["function"], RECORDED[op]["signature"])
    assert {name: kind for name, kind, _ in params if kind} == RECORDED[op]["attrs"]


@pytest.mark.parametrize("name", sorted(name for name, program in PROGRAMS.items() if "try:" not in program["program"]))
def test_a_program_prints_what_tensorflow_printed_on_the_interpreter(name, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    result = api.run_source(PROGRAMS[name]["program"], f"{name}.py")
    printed = [line for line in result.output if type(line) is not ErrorLine]
    assert "\n".join(printed).splitlines() == PROGRAMS[name]["stdout"].splitlines()


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_an_op_tapecli_lacks_is_named(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    with pytest.raises(TdfNameError, match="tapecli has no tf.raw_ops.Svd"):
        api.run_source("import tensorflow as tf\nx = tf.raw_ops.Svd(input=tf.eye(2))\n", "p.py")
