"""Record the public names of TensorFlow's and Keras's modules (tapecli/library/tf_names.txt), so that a name
tapecli resolves under ``tf.math`` or ``keras.layers`` is one TensorFlow has there (``tf.math.matmul`` is not).

Run it with the python of a development venv that has TensorFlow (never tapecli's runtime):

    TFVENV/bin/python benchmarks/record_tf_names.py

It walks ``tf`` and ``keras`` from the top, through the modules of their public API (not ``tf.compat``, whose
v1 names are TensorFlow 1's, nor ``tf.raw_ops``, the generated op wrappers), and writes each module's names.
"""
from __future__ import annotations

import os
import types
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "tapecli" / "library" / "tf_names.txt"
SKIPPED = ("compat", "raw_ops")


def public(module: types.ModuleType) -> bool:
    name = module.__name__
    # (tf.experimental and tf.experimental.numpy are modules of their own name, not of the generated API's)
    return name.startswith(("tensorflow._api.v2", "tensorflow.experimental")) or (
        (name == "keras" or name.startswith("keras.")) and "src" not in name.split("."))


def walk(module: types.ModuleType, path: str, found: dict[str, list[str]]) -> None:
    names = sorted(n for n in dir(module) if not n.startswith("_"))
    found[path] = names
    for name in names:
        try:
            value = getattr(module, name)
        except Exception:           # (a lazy loader whose optional dependency is missing)
            continue
        if isinstance(value, types.ModuleType) and public(value) and name not in SKIPPED \
                and f"{path}.{name}" not in found:
            walk(value, f"{path}.{name}", found)


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    found: dict[str, list[str]] = {}
    walk(tf, "tf", found)
    walk(keras, "keras", found)
    lines = [f"# The public names of each module of TensorFlow {tf.__version__} and Keras {keras.__version__}, one module a",
             "# line (its path, then its names), recorded from the modules by benchmarks/record_tf_names.py."]
    lines += [" ".join([path, *found[path]]) for path in sorted(found)]
    TARGET.write_text("\n".join(lines) + "\n")
    print(f"{len(found)} modules, {sum(map(len, found.values()))} names -> {TARGET}")


if __name__ == "__main__":
    main()
