"""-o/--out: results as NumPy arrays, compared with the --json document of the same command."""
import os
import textwrap

import numpy as np
import pytest

from conftest import cli

PROGRAM = textwrap.dedent("""\
    var w = [[1.0, 2.0], [3.0, 4.0]]
    var b = [0.5, -0.5]
    pi = 1.5
    x = [[1.0, 2.0]]
    tape t(persistent=True):
        y = x @ w + b
        loss = reduce_sum(y * y)
    grads = t.gradient(loss, [w, b])
    named = t.gradient(loss, {"w": w})
    for i in range(2):
        tape u:
            z = b * b
        g = u.gradient(z, b)
    nothing = t.gradient(loss, x)
    d = {"w": grads[0], "pair": [pi, [2.0, 3.0]], "text": "hello"}
    """)


@pytest.fixture
def program(tmp_path):
    (tmp_path / "prog.tdf").write_text(PROGRAM)
    return tmp_path / "prog.tdf"


def _load(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def test_grad_npz_holds_every_entry_under_its_name(program, tmp_path):
    out = tmp_path / "g.npz"
    res = cli("grad", program, "--json", "-o", out)
    assert res.code == 0, res.stderr
    arrays = _load(out)
    entries = [e for e in res.json["gradients"] if e["value"] is not None]
    keys = ["grads[0]", "grads[1]", 'named["w"]', "g", "g#2"]
    assert [e["name"] for e in entries] == ["grads[0]", "grads[1]", 'named["w"]', "g", "g"]
    assert list(arrays) == keys          # the None gradient (nothing) has no array
    for key, entry in zip(keys, entries):
        assert arrays[key].dtype == np.dtype(entry["dtype"]) and list(arrays[key].shape) == entry["shape"]
        np.testing.assert_array_equal(arrays[key], np.asarray(entry["value"], dtype=entry["dtype"]))


def test_run_npz_flattens_lists_and_dicts(program, tmp_path):
    out = tmp_path / "r.npz"
    assert cli("run", program, "-o", out, "-q").code == 0
    values = cli("run", program, "--json").json["values"]
    arrays = _load(out)
    assert {"w", "b", "x", "loss", "grads[0]", "grads[1]", 'd["w"]', 'd["pair"][0]', 'd["pair"][1]'} <= set(arrays)
    assert not any(k.startswith(("t", "nothing", 'd["text"]')) for k in arrays)   # a tape, None, a string
    np.testing.assert_array_equal(arrays['d["pair"][1]'], np.asarray(values["d"]["pair"][1], np.float32))
    np.testing.assert_array_equal(arrays["grads[0]"], np.asarray(values["grads"][0], np.float32))
    assert arrays["loss"].dtype == np.float32 and arrays["loss"].shape == ()


def test_jacobian_and_hessian_by_of_wrt(tmp_path):
    path = tmp_path / "f.tdf"
    path.write_text("var x = [1.0, 2.0, 3.0]\ny = x * x * x\ns = reduce_sum(y)\n")
    for command, of, key in (("jacobian", "y", "d(y)/d(x)"), ("hessian", "s", "d2(s)/d(x)2")):
        out = tmp_path / f"{command}.npy"
        res = cli(command, path, "--of", of, "--wrt", "x", "--json", "--out", out)
        assert res.code == 0, res.stderr
        entry = res.json[command + "s"][0]
        assert entry["name"] == key
        arr = np.load(out)
        assert arr.dtype == np.float32 and arr.shape == (3, 3)
        np.testing.assert_array_equal(arr, np.asarray(entry["value"], np.float32))


def test_one_entry_by_name_to_npy(program, tmp_path):
    out = tmp_path / "one.npy"
    assert cli("grad", program, "-o", f"grads[1]={out}", "-q").code == 0
    np.testing.assert_array_equal(np.load(out), np.asarray([15.0, 19.0], np.float32))


@pytest.mark.parametrize("spec, words", [
    ("{d}/all.npy", "the result has 5 entries"),
    ("nope={d}/x.npy", "no entry named nope"),
    ("{d}/x.txt", "must end in .npz"),
    ("{d}/missing/x.npz", "no such folder"),
    ("{d}", "must end in .npz"),
])
def test_usage_errors_write_nothing(program, tmp_path, spec, words):
    before = set(os.listdir(tmp_path))
    res = cli("grad", program, "-o", spec.format(d=tmp_path), "--json")
    assert res.code == 2 and words in res.json["error"]["message"]
    assert set(os.listdir(tmp_path)) == before


def test_through_a_symlink_and_never_into_a_fifo(program, tmp_path):
    real = tmp_path / "real.npz"
    real.write_bytes(b"old")
    link = tmp_path / "link.npz"
    link.symlink_to(real)
    assert cli("grad", program, "-o", link, "-q").code == 0
    assert link.is_symlink() and set(_load(real)) >= {"grads[0]"}
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    res = cli("grad", program, "-o", fifo)
    assert res.code == 2 and "is a FIFO" in res.stderr


def test_with_sweep_each_entry_is_stacked_as_in_json(program, tmp_path):
    points = tmp_path / "p.npy"
    np.save(points, np.array([[1.0, 2.0], [0.5, 0.0], [-1.0, 3.0]], np.float32))
    res = cli("grad", program, "--sweep", f"b=@{points}", "-o", tmp_path / "s.npz", "--json")
    assert res.code == 0, res.stderr
    saved = _load(tmp_path / "s.npz")
    assert set(saved) == {"grads[0]", "grads[1]", 'named["w"]', "g", "g#2", "sweep:b"}    # nothing: None
    entries = {(e["name"], e["source"]): e for e in res.json["gradients"]}
    np.testing.assert_array_equal(saved["grads[1]"], np.array(entries[("grads[1]", "b")]["value"], np.float32))
    assert saved["grads[0]"].shape == (3, 2, 2) and saved["g#2"].dtype == np.float32
    np.testing.assert_array_equal(saved["sweep:b"], np.load(points))
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    res = cli("grad", program, "--sweep", f"b=@{points}", "-o", fifo)       # refused before any point runs
    assert res.code == 2 and "is a FIFO" in res.stderr
