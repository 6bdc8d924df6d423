"""Tables keep the nested brackets of 3-D and larger tensors, elided as NumPy elides, within 80 columns."""
import re
import textwrap

import numpy as np
import pytest

from conftest import cli
from tapecli.cli.tensorfmt import MAX_LINES_ND, format_array


def _brackets(text: str) -> int:
    """The nesting depth the text opens with."""
    return len(text) - len(text.lstrip("["))


@pytest.mark.parametrize("shape", [(2, 3, 4), (4, 10, 12), (2, 3, 5, 6), (3, 4, 5, 6, 7), (2,) * 6, (50, 40, 30)])
def test_the_structure_is_kept_within_the_width_and_lines(shape):
    arr = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.5
    lines = format_array(arr, width=40, shape_and_dtype=False).splitlines()
    first_stat = next(i for i, line in enumerate(lines) if line.startswith("min 0"))
    body = "\n".join(lines[:first_stat])
    assert _brackets(body) == len(shape)                  # every axis opens its bracket
    assert body.count("[") == body.count("]") and body.endswith("]")
    assert all(len(line) <= 40 for line in lines) and len(lines) <= MAX_LINES_ND
    assert "" not in lines                                # no blank lines between blocks


def test_a_small_3d_tensor_is_shown_whole_as_numpy_prints_it():
    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 1.5
    text = format_array(arr, width=60)
    numpy = np.array2string(arr, separator=" ", suppress_small=True, precision=4)
    assert text.splitlines()[:6] == [line for line in numpy.splitlines() if line]


def test_a_deep_tensor_shows_its_first_block_and_elides_the_rest():
    arr = np.arange(3 * 4 * 5 * 6 * 7, dtype=np.float32).reshape(3, 4, 5, 6, 7)
    lines = format_array(arr, width=30).splitlines()
    assert lines[0].startswith("[[[[[ 0.")
    assert [line for line in lines if line.strip() == "...]"] == ["    ...]", "   ...]", "  ...]", " ...]"][1:]


def test_run_table_piped_at_80_columns(tmp_path):
    path = tmp_path / "t.tdf"
    path.write_text(textwrap.dedent("""\
        a = reshape(range(24), [2, 3, 4]) * 1.5
        b = reshape(range(180), [2, 3, 5, 6]) * 0.25
        """))
    res = cli("run", path, "--no-color", env={"COLUMNS": "80"})
    assert res.code == 0
    lines = res.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    cells = [re.split(r"[│|]", line)[-2].strip() for line in lines if line.count("│") >= 5 or line.count("|") >= 5]
    start = cells.index("[[[ 0.   1.5  3.   4.5]")
    assert cells[start + 3] == "[[18.  19.5 21.  22.5]" and "[30.  31.5 33.  34.5]]]" in cells
    assert any(c.startswith("[[[[ 0.") for c in cells)
