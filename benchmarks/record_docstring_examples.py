"""Record TensorFlow's and Keras's own docstring examples, with what TensorFlow printed for them, for the
docstring conformance suite (tests/conformance/test_docstring_examples.py).

For each function and class of tests/data/tf_surface.tsv, its docstring (``inspect.getdoc`` of the live
object) is parsed with ``doctest.DocTestParser``; its ``>>>`` examples, in order, are one small program (as
doctest runs them: one namespace, TensorFlow's doctest globals ``tf`` and ``np``, Keras's ``keras``, ``ops``
and ``np``). The program runs here in TensorFlow on the CPU, and for each example that shows output the text
TensorFlow actually printed is recorded (what doctest captures: the repr of an expression's value and what
the example prints, not the docstring's abbreviated text), or the exception's class when the docstring
expects one. Aliases sharing one docstring are one entry; a name of the docstring's own module that doctest
would find in the module's globals is bound in the entry's "setup" (``Dense = keras.layers.Dense``). Programs
are skipped, with the reason recorded, when the docstring marks them +SKIP, when they need files, the network or
a device, or when TensorFlow itself fails to run them; an example whose text differs between two runs (random
numbers without a seed, timings) is kept, marked "random", and not compared.

Run it with the python of a development venv that has TensorFlow and Keras (never tapecli's runtime):

    TFVENV/bin/python benchmarks/record_docstring_examples.py

It writes tests/tf_expectations/docstrings/tf.json (tf.*) and keras.json (tf.keras.*), a folder of its own
(the surface harness reads the files of tests/tf_expectations/ itself); with symbols as arguments it prints
their entries instead. The examples are TensorFlow's and Keras's (Apache License 2.0), as each file's "source"
field says.
"""
from __future__ import annotations

import contextlib
import doctest
import inspect
import io
import json
import os
import re
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SURFACE = ROOT / "tests" / "data" / "tf_surface.tsv"
FOLDER = ROOT / "tests" / "tf_expectations" / "docstrings"
SECONDS = 60
# what an example needs that the suite cannot give it: files, the network, devices, distribution
NEEDS = [
    (re.compile(r"\bopen\(|\btf\.io\b|gfile|\bos\.|tempfile|\.save\(|load_model|save_model|\.h5\b|\.keras['\"]|"
                r"\.weights\b|saved_model|checkpoint|Checkpoint|tf\.data\.experimental\.(?:load|save)"),
     "reads or writes files"),
    (re.compile(r"https?://|get_file|\.datasets\."), "downloads data over the network"),
    (re.compile(r"GPU|TPU|tf\.config|tf\.distribute|experimental_distribute|Strategy"), "needs devices or distribution"),
]
ADDRESS = re.compile(r"\bat 0x[0-9a-f]+>")      # object addresses change from run to run
PREAMBLES = {
    "tf": "import tensorflow as tf\nimport numpy as np\n",
    "keras": "import tensorflow as tf\nimport numpy as np\nimport keras\nfrom keras import ops\n",
}
SOURCE = {
    "tf": "TensorFlow 2.21 docstrings (the examples of its public Python API; Apache License 2.0)",
    "keras": "Keras 3 docstrings, as TensorFlow 2.21's tf.keras (Apache License 2.0)",
}


class _Timeout(Exception):
    pass


class _Failed(Exception):
    """TensorFlow raised where the docstring expects no error (or ran where it expects one)."""

    def __init__(self, index: int, error: BaseException | None, text: str):
        super().__init__(f"example {index}: {text}")
        self.error = error


def _alarm(signum, frame):
    raise _Timeout()


def surface() -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in SURFACE.read_text().splitlines() if line and not line.startswith("#")]
    return [(row[0], row[1]) for row in rows]


def globs(family: str) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf
    names = {"tf": tf, "np": np}
    if family == "keras":
        names.update(keras=keras, ops=keras.ops)
    return names


def run_examples(examples, family: str, setup: str) -> list[dict]:
    """Run a docstring's examples in one fresh namespace, as doctest would: each example's printed text."""
    import keras
    keras.backend.clear_session()        # Keras's layer names count from the start again (dense, dense_1, ...)
    namespace = globs(family)
    exec(setup, namespace)
    results = []
    for i, example in enumerate(examples):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                code = compile(example.source, f"<example {i}>", "single")
                exec(code, namespace)
            except _Timeout:
                raise
            except BaseException as e:  # noqa: BLE001 - what the example raised is its result
                if example.exc_msg is None:
                    raise _Failed(i, e, f"TensorFlow raised {type(e).__name__}: "
                                        f"{str(e).splitlines()[0] if str(e) else ''}") from None
                results.append({"raises": type(e).__name__})
                continue
        if example.exc_msg is not None:
            raise _Failed(i, None, f"the docstring expects {example.exc_msg.strip()}, TensorFlow ran it")
        results.append({"output": ADDRESS.sub("at 0x...>", out.getvalue())})
    return results


def setup_line(name: str, symbol: str, family: str) -> str | None:
    """Where a docstring uses a name of its own module (doctest's globals are the module's), that name bound
    from the public module: ``GlorotNormal = keras.initializers.GlorotNormal``."""
    import tensorflow as tf
    parent = symbol.rsplit(".", 1)[0]
    if family == "keras":
        parent = parent.removeprefix("tf.")
    for module in (parent, "keras.layers", "keras.ops", "keras", "tf.linalg", "tf"):
        if not module.startswith(("keras", "tf")) or (family == "tf" and module.startswith("keras")):
            continue
        try:
            found = eval(module, globs(family) | {"tf": tf})  # noqa: S307 - a module path of the surface
        except Exception:  # noqa: BLE001
            continue
        if hasattr(found, name):
            return f"{name} = {module}.{name}\n"
    return None


def record_program(examples, family: str, symbol: str) -> tuple[list[dict] | None, str | None, str]:
    """The recorded examples of one docstring (and the setup lines binding its module's names), or None and
    why it is skipped."""
    source = "".join(e.source for e in examples)
    for pattern, why in NEEDS:
        if pattern.search(source):
            return None, why, ""
    if any(e.options.get(doctest.SKIP) for e in examples):
        return None, "the docstring marks an example +SKIP", ""
    setup = ""
    while True:
        signal.alarm(SECONDS)
        try:
            first = run_examples(examples, family, setup)
            second = run_examples(examples, family, setup)
            break
        except _Timeout:
            return None, f"takes over {SECONDS} s in TensorFlow", setup
        except _Failed as e:  # TensorFlow itself fails to run the docstring as written
            line = setup_line(e.error.name, symbol, family) if isinstance(e.error, NameError) else None
            if line is None or line in setup:
                return None, f"TensorFlow fails to run it: {e}"[:240], setup
            setup += line
        finally:
            signal.alarm(0)
    rows = []
    for example, got, again in zip(examples, first, second):
        row = {"source": example.source}
        if "raises" in got:
            row["raises"] = got["raises"]
        elif example.want and got != again:
            row["random"] = "TensorFlow prints different text on two runs (random numbers, timings)"
        elif example.want:
            row["output"] = got["output"]
        rows.append(row)
    return rows, None, setup


def main(argv: list[str]) -> None:
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import numpy as np
    import tensorflow as tf
    tf.config.set_visible_devices([], "GPU")
    np.set_printoptions(legacy=False)
    tf.get_logger().setLevel("ERROR")
    signal.signal(signal.SIGALRM, _alarm)
    only = set(argv)
    parser = doctest.DocTestParser()
    files: dict[str, dict] = {family: {"source": SOURCE[family], "preamble": PREAMBLES[family], "entries": [],
                                       "no_examples": []} for family in PREAMBLES}
    by_doc: dict[tuple[str, str], dict] = {}
    for symbol, kind in surface():
        if only and symbol not in only:
            continue
        family = "keras" if symbol.startswith("tf.keras.") else "tf"
        doc = None
        if kind in ("function", "class"):
            try:
                doc = inspect.getdoc(eval(symbol, {"tf": tf}))  # noqa: S307 - a name of the surface table
            except Exception:  # noqa: BLE001 - a symbol this TensorFlow lacks has no docstring
                doc = None
        examples = parser.get_examples(doc or "") if doc else []
        if not examples:
            files[family]["no_examples"].append(symbol)
            continue
        if (family, doc) in by_doc:
            by_doc[(family, doc)]["symbols"].append(symbol)
            continue
        rows, why, setup = record_program(examples, family, symbol)
        entry = {"symbols": [symbol], "setup": setup, "examples": rows} if rows is not None else \
            {"symbols": [symbol], "skip": why, "setup": setup, "examples": [{"source": e.source} for e in examples]}
        by_doc[(family, doc)] = entry
        files[family]["entries"].append(entry)
        print(f"{symbol}: {len(examples)} examples" + (f" (skipped: {why})" if why else ""), file=sys.stderr)
    for family, data in files.items():
        if only:
            print(json.dumps(data, indent=1))
            continue
        path = FOLDER / f"{family}.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        examples = sum(len(e["examples"]) for e in data["entries"])
        print(f"{path.name}: {len(data['entries'])} docstrings, {examples} examples")


if __name__ == "__main__":
    main(sys.argv[1:])
