"""Record what TensorFlow prints for fresh programs (tests/conformance/test_tf_fresh_programs.py): each program runs as written
in a development venv that has TensorFlow (never tapecli's runtime), and its standard output is stored beside its
text under its file's stem, so that CI compares tapecli's output with TensorFlow's without TensorFlow.

    TFVENV/bin/python benchmarks/record_tf_programs.py tests/data/tf_fresh_programs_TOPIC.json PROGRAM.py ...

A program that exits with an error is not recorded (its error is printed).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def record(store: Path, programs: list[Path]) -> int:
    found = json.loads(store.read_text()) if store.exists() else {}
    failed = 0
    for program in programs:
        text = program.read_text()
        with tempfile.TemporaryDirectory() as folder:       # (a program's files, if any, stay out of the tree)
            done = subprocess.run([sys.executable, "-c", text], cwd=folder, capture_output=True, text=True,
                                  env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONHASHSEED": "0"})
        if done.returncode:
            print(f"{program}: exit {done.returncode}\n{done.stderr[-2000:]}", file=sys.stderr)
            failed += 1
            continue
        found[program.stem] = {"program": text, "stdout": done.stdout}
    store.write_text(json.dumps(found, indent=1, sort_keys=True))
    return failed


if __name__ == "__main__":
    sys.exit(1 if record(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]) else 0)
