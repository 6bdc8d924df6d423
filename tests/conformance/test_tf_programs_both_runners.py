"""TensorFlow programs run on both of tapecli's runners and compared with what TensorFlow 2.21 printed for them
(tests/data/tf_programs_*.json, recorded by benchmarks/record_tf_programs.py in a development venv): string
tensors and tf.strings, TensorFlow's string hashes and Keras's vocabulary and hashing layers, narrow and unsigned
integers and half floats. Each runs on the runner tapecli chooses for it (the interpreter, or CPython for one that
catches errors or reads bytes) and on CPython's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tapecli import api
from tapecli.interpreter.core import ErrorLine

PROGRAMS = {name: program for store in sorted((Path(__file__).parents[1] / "data").glob("tf_programs_*.json"))
            for name, program in json.loads(store.read_text()).items()}


@pytest.mark.parametrize("on_cpython", ["auto", "1"], ids=["chosen", "cpython"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_program_prints_what_tensorflow_printed(name, on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    program = PROGRAMS[name]
    result = api.run_source(program["program"], f"{name}.py")
    printed = [line for line in result.output if type(line) is not ErrorLine]     # (tf.print's go to stderr)
    assert "\n".join(printed).splitlines() == program["stdout"].splitlines()
