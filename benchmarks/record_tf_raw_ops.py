"""Record the signatures of TensorFlow's raw ops that tapecli gives (tapecli/library/tf_raw_ops.py), so that
tests/library/test_tf_raw_ops.py checks each op's keyword names, defaults and attr types without TensorFlow.

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TFVENV/bin/python benchmarks/record_tf_raw_ops.py

For each op: its Python function's name (TensorFlow's errors name it), its signature as ``inspect`` prints it, the
types of the attrs a program sets (those TensorFlow infers from the inputs are left out), by the wrapper's names.
"""
from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "data" / "tf_raw_ops.json"


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    from tensorflow.python.framework import op_def_registry
    sys.path.insert(0, str(ROOT))
    from tapecli.library.tf_raw_ops import OPS
    found = {}
    for op in sorted(OPS):
        wrapper = getattr(tf.raw_ops, op)
        op_def = op_def_registry.get(op)
        parameters = list(inspect.signature(wrapper).parameters)
        inferred = {name for arg in op_def.input_arg for name in (arg.type_attr, arg.number_attr, arg.type_list_attr)}
        # the wrapper's attrs follow its inputs, those without a default first (Squeeze's squeeze_dims is its axis)
        settable = sorted((attr for attr in op_def.attr if attr.name not in inferred), key=lambda a: a.HasField(
            "default_value"))
        found[op] = {"function": wrapper.__name__, "signature": str(inspect.signature(wrapper)),
                     "attrs": {name: attr.type for name, attr in zip(parameters[len(op_def.input_arg):-1], settable)}}
    TARGET.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
