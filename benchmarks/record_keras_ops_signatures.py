"""Record the signatures of Keras 3's keras.ops functions, so that tests/library/test_keras_ops_surface.py checks by
machine that every keras.ops name a program may call resolves in tapecli to a function of Keras's own parameters
(names, order, defaults), without Keras.

Run it with the python of a development venv that has Keras and TensorFlow (never tapecli's runtime):

    TFVENV/bin/python benchmarks/record_keras_ops_signatures.py

For each public function of keras.ops and of its modules nn, numpy, linalg and image (as
``module.name``): its parameters, each [name, kind, repr of its default or None].
"""
from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "tests" / "data" / "keras_ops_signatures.json"
SUBMODULES = ("nn", "numpy", "linalg", "image")


def parameters(f) -> list:
    return [[p.name, p.kind.name, None if p.default is p.empty else repr(p.default)]
            for p in inspect.signature(f).parameters.values()]


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    found = {"keras": keras.__version__}
    for prefix, module in [("", keras.ops), *((f"{name}.", getattr(keras.ops, name)) for name in SUBMODULES)]:
        for name in sorted(dir(module)):
            f = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(f) or inspect.isclass(f) or not callable(f):
                continue
            found[prefix + name] = parameters(f)
    TARGET.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
    print(f"{len(found) - 1} functions of keras.ops {keras.__version__} -> {TARGET}")


if __name__ == "__main__":
    main()
