"""--sweep: a program run at many points, results stacked on a leading axis (in one process and in a
process pool; the Dask cluster is tests/tools/test_cluster.py). Expected values from the derivatives' formulas
computed here in NumPy, or from per-point runs of the library."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapecli
from conftest import cli
from tapecli.api import Options
from tapecli.frontend.parser import parse
from tapecli.tools.cluster import check_versions
from tapecli.errors import UsageError
from tapecli.tools.sweep import check_declarations, run_sweep, vectorisable

SIGMOID = "var x = 0.0\ntape t:\n    y = sigmoid(x)\ndy_dx = t.gradient(y, x)\n"
CUBE = "var x = 0.0\ntape t:\n    y = reduce_sum(x * x * x)\ng = t.gradient(y, x)\n"


def sweep_json(tmp_path, command, source, *args, **arrays):
    prog = tmp_path / "p.tdf"
    prog.write_text(source)
    flags = []
    for name, arr in arrays.items():
        np.save(tmp_path / f"{name}.npy", arr)
        flags += ["--sweep", f"{name}=@{tmp_path / f'{name}.npy'}"]
    return cli(command, prog, "--json", *flags, *args)


def test_sigmoid_derivative_over_points_is_vectorised_and_matches_the_formula(tmp_path):
    xs = np.linspace(-6, 6, 301).astype(np.float32)
    r = sweep_json(tmp_path, "grad", SIGMOID, x=xs)
    assert r.code == 0, r.stderr
    doc = r.json
    assert doc["sweep"] == {"names": ["x"], "points": 301, "vectorised": True}
    (entry,) = doc["gradients"]
    assert entry["shape"] == [] and entry["dtype"] == "float32" and len(entry["value"]) == 301
    s = 1 / (1 + np.exp(-xs.astype(np.float64)))
    np.testing.assert_allclose(entry["value"], s * (1 - s), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("extra", [(), ("--workers", "2")])
def test_a_single_point_sweep(tmp_path, extra):
    r = sweep_json(tmp_path, "grad", SIGMOID, *extra, x=np.array([0.0], np.float32))
    assert r.code == 0 and r.json["gradients"][0]["value"] == [0.25] and r.json["sweep"]["vectorised"]
    r = sweep_json(tmp_path, "grad", CUBE, *extra, x=np.array([1.0], np.float32))
    assert r.code == 0 and r.json["gradients"][0]["value"] == [3.0] and not r.json["sweep"]["vectorised"]


@pytest.mark.parametrize("source", [SIGMOID, "var x = -1.0\nconst c = 0.5\ntape t:\n    h = tanh(x * c) - x ** 3\n"
                                              "    y = exp(-h) / (1.0 + x * x)\ng = t.gradient(y, x)\n"])
def test_a_vectorised_batch_equals_the_points_run_one_by_one(tmp_path, source):
    xs = np.random.default_rng(1).standard_normal(200).astype(np.float32)
    doc = sweep_json(tmp_path, "grad", source, x=xs).json
    one_by_one = [tapecli.run(source, sets={"x": x}).gradients[0]["value"] for x in xs]
    assert doc["sweep"]["vectorised"]
    # (within float32's rounding: a point alone is a scalar, which TensorFlow's exp, tanh, ... compute on their
    # scalar path, and the batch a tensor, computed on the vector path: kernels/tf_float32.py)
    np.testing.assert_allclose(np.asarray(doc["gradients"][0]["value"], dtype=np.float32),
                               np.asarray(one_by_one, dtype=np.float32), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("source", [
    CUBE,                                                                  # a reduction
    "var x = 0.0\ntape t:\n    y = sigmoid(x)\nprint(y)\ndy_dx = t.gradient(y, x)\n",      # a print
    "var x = 0.0\nvar w = 2.0\ntape t:\n    y = w * x\ng = t.gradient(y, w)\n",  # w.r.t. an unswept var
    "var x = [0.0]\ntape t:\n    y = sigmoid(x)\ng = t.gradient(y, x)\n",     # not a scalar
])
def test_programs_that_do_not_vectorise(source):
    program = parse(source, "p.tdf")
    sweeps = {"x": np.zeros((3,) + ((1,) if "[0.0]" in source else ()), np.float32)}
    declared = check_declarations(program, "p.tdf", Options(), sweeps)
    assert not vectorisable(program, "grad", Options(), declared)


def test_a_looped_sweep_equals_per_point_runs_and_the_formula(tmp_path):
    xs = np.linspace(-2, 2, 41).astype(np.float32)
    doc = sweep_json(tmp_path, "grad", CUBE, x=xs).json
    assert doc["sweep"]["vectorised"] is False
    values = np.asarray(doc["gradients"][0]["value"], dtype=np.float32)
    per_point = np.asarray([tapecli.run(CUBE, sets={"x": x}).gradients[0]["value"] for x in xs])
    assert np.array_equal(values, per_point)
    np.testing.assert_allclose(values, 3 * xs.astype(np.float64) ** 2, rtol=1e-6)


@pytest.mark.parametrize("source", [CUBE, SIGMOID])
def test_workers_give_the_same_document_as_one_process(tmp_path, source):
    xs = np.linspace(-1, 1, 64).astype(np.float32)
    one = sweep_json(tmp_path, "grad", source, x=xs)
    two = sweep_json(tmp_path, "grad", source, "--workers", "2", x=xs)
    assert one.code == two.code == 0 and one.json == two.json


def test_zipped_sweeps_with_a_vector_declaration(tmp_path):
    source = "var w = [1.0, 2.0]\nconst c = 1.0\ntape t:\n    y = reduce_sum(w * w) * c\ng = t.gradient(y, w)\n"
    ws = np.arange(12, dtype=np.float32).reshape(6, 2)
    cs = np.linspace(0, 1, 6)
    doc = sweep_json(tmp_path, "grad", source, w=ws, c=cs).json
    (entry,) = doc["gradients"]
    assert entry["shape"] == [2]
    np.testing.assert_allclose(entry["value"], 2 * ws * cs.astype(np.float32)[:, None], rtol=1e-6)


def test_run_stacks_every_value(tmp_path):
    doc = sweep_json(tmp_path, "run", "const a = 1.0\nb = a * 3.0\n", a=np.array([1.0, 2.0, 4.0])).json
    assert doc["values"] == {"a": [1.0, 2.0, 4.0], "b": [3.0, 6.0, 12.0]}
    assert doc["types"]["b"]["shape"] == []


def test_none_entries_stay_per_point_with_their_why(tmp_path):
    source = "var x = 0.0\nconst c = 1.0\ntape t:\n    y = c * 2.0\ng = t.gradient(y, x)\n"
    doc = sweep_json(tmp_path, "grad", source, x=np.zeros(3, np.float32)).json
    (entry,) = doc["gradients"]
    assert entry["value"] == [None, None, None] and entry["dtype"] is None
    assert len(entry["why"]) == 3 and all(isinstance(w, str) and w for w in entry["why"])


def test_a_program_error_at_some_points_is_reported_per_point(tmp_path):
    source = ("var x = 0.0\ntape t:\n    y = x * x\nif x > 0.0:\n    z = no_such_name\n"
              "g = t.gradient(y, x)\n")
    r = sweep_json(tmp_path, "grad", source, x=np.array([-1.0, 1.0, -2.0, 3.0], np.float32))
    assert r.code == 3
    doc = r.json
    assert [e["point"] for e in doc["errors"]] == [1, 3] and all(e["line"] == 5 for e in doc["errors"])
    (entry,) = doc["gradients"]
    assert entry["value"][0] == -2.0 and entry["value"][2] == -4.0
    assert entry["value"][1] is None and "no_such_name" in entry["why"][1] and entry["why"][0] is None


def test_check_reports_each_point_where_an_expectation_fails(tmp_path):
    source = "var x = 0.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 2.0\n"
    r = sweep_json(tmp_path, "check", source, x=np.array([1.0, 0.0, 1.0, 3.0], np.float32))
    assert r.code == 1
    doc = r.json
    assert (doc["passed"], doc["failed"], doc["errors"]) == (1, 2, 0)
    ok = [res for res in doc["results"] if res["ok"]]
    assert ok[0]["points"] == 2
    assert [(res["point"], res["actual"]) for res in doc["results"] if not res["ok"]] == [(1, 0.0), (3, 6.0)]
    text = cli("check", tmp_path / "p.tdf", "--sweep", f"x=@{tmp_path / 'x.npy'}")
    assert "FAIL g == 2.0 at sweep point 3: actual 6.0, expected 2.0" in text.stdout
    assert text.stdout.strip().splitlines()[-1] == "1 passed, 2 failed"


@pytest.mark.parametrize("arr, words", [
    (np.zeros((4, 2), np.float32), ["[2]", "[]", "[4]"]),          # slices of the wrong shape
    (np.zeros((0,), np.float32), ["no points"]),                   # an empty sweep
    (np.zeros((3,), np.float32), None),                            # fine: control
])
def test_bad_sweep_files(tmp_path, arr, words):
    r = sweep_json(tmp_path, "grad", SIGMOID, x=arr)
    if words is None:
        assert r.code == 0, r.stderr
        return
    assert r.code == 2
    message = r.json["error"]["message"]
    assert all(w in message for w in words), message


def test_a_float_sweep_for_an_integer_declaration_is_refused(tmp_path):
    r = sweep_json(tmp_path, "run", "const n = 3\nm = n * 2\n", n=np.array([0.5, 1.5]))
    assert r.code == 2 and "float64" in r.json["error"]["message"] and "int32" in r.json["error"]["message"]


def test_zipped_sweeps_need_as_many_points_and_a_declaration(tmp_path):
    r = sweep_json(tmp_path, "grad", SIGMOID, x=np.zeros(3, np.float32), c=np.zeros(4))
    assert r.code == 2 and "x has 3" in r.json["error"]["message"] and "c has 4" in r.json["error"]["message"]
    r = sweep_json(tmp_path, "grad", SIGMOID, z=np.zeros(3, np.float32))
    assert r.code == 2 and "declares no var or const" in r.json["error"]["message"]


def test_workers_and_scheduler_need_a_sweep_outside_check(tmp_path):
    prog = tmp_path / "p.tdf"
    prog.write_text(SIGMOID)
    r = cli("grad", prog, "--workers", "2")
    assert r.code == 2 and "needs --sweep" in r.stderr


def test_scheduler_without_dask_says_what_to_install(tmp_path):
    prog = tmp_path / "p.tdf"
    prog.write_text("var x = 1.0\nexpect x == 1.0\n")
    runner = ("import sys; sys.modules['distributed'] = None\n"
              "from tapecli.cli.app import main\nsys.argv = ['tapecli', *sys.argv[1:]]\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", runner, "check", str(prog), "--scheduler", "local:2"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 2 and "pip install 'tapecli[dask]'" in proc.stderr, proc.stderr


def test_workers_of_another_version_are_refused_with_both_versions_named():
    check_versions({"tcp://127.0.0.1:1": "0.1.0"}, local="0.1.0")
    with pytest.raises(UsageError) as e:
        check_versions({"tcp://127.0.0.1:1": "0.1.0", "tcp://127.0.0.1:2": "0.0.9"}, local="0.1.0")
    assert "0.0.9" in str(e.value) and "0.1.0" in str(e.value) and "tcp://127.0.0.1:2" in str(e.value)


def test_a_sweep_command_line_runs_without_typer(tmp_path):
    prog = tmp_path / "p.tdf"
    prog.write_text(SIGMOID)
    np.save(tmp_path / "x.npy", np.zeros(2, np.float32))
    runner = ("import sys\nfrom tapecli.cli.app import main\nsys.argv = ['tapecli', *sys.argv[1:]]\n"
              "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
              "print(sorted(m for m in ('typer', 'click', 'distributed', 'dask') if m in sys.modules))\n"
              "sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", runner, "grad", str(prog), "--json", "--sweep",
                           f"x=@{tmp_path / 'x.npy'}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads(proc.stdout.splitlines()[0])["sweep"]["points"] == 2


def test_library_sweep_in_one_process():
    outcomes, vectorised = run_sweep("grad", CUBE, "p.tdf", Options(), {"x": np.array([1.0, 2.0], np.float32)})
    assert not vectorised
    assert [o["doc"]["gradients"][0]["value"] for o in outcomes] == [3.0, 12.0]


LOOPED = ("var x = 0.0\nconst k = [1.0, 2.0]\nn = 3\nfor i in range(2):\n    tape t:\n        y = sigmoid(x) * k\n"
          "    g = t.gradient(y, x)\nlabel = \"steps\"\npair = [x, k]\n")


@pytest.mark.parametrize("command, source", [("grad", SIGMOID), ("grad", LOOPED), ("run", LOOPED)])
def test_out_npz_stacks_each_entry_over_the_points_with_the_points_saved(tmp_path, command, source):
    points = np.linspace(-2, 2, 7).astype(np.float32)
    np.save(tmp_path / "x.npy", points)
    prog = tmp_path / "p.tdf"
    prog.write_text(source)
    res = cli(command, prog, "--sweep", f"x=@{tmp_path / 'x.npy'}", "-o", tmp_path / "out.npz", "--json")
    assert res.code == 0, res.stderr
    saved = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(saved["sweep:x"], points)
    assert saved["sweep:x"].dtype == np.float32
    s = 1 / (1 + np.exp(-points.astype(np.float64)))
    if command == "grad":
        expected = {"dy_dx": s * (1 - s)} if source == SIGMOID else {"g": s * (1 - s) * 3.0}   # (sum(y))
        expected.update({"g#2": expected["g"]} if "g" in expected else {})
        assert sorted(saved.files) == sorted([*expected, "sweep:x"])
        for key, value in expected.items():
            assert saved[key].dtype == np.float32 and saved[key].shape == value.shape
            np.testing.assert_allclose(saved[key], value, rtol=1e-5)
        for key, entry in zip([k for k in saved.files if k != "sweep:x"], res.json["gradients"]):
            np.testing.assert_array_equal(saved[key], np.array(entry["value"], np.float32))    # = the JSON
    else:           # run: the numbers and tensors; not the string, nor the list
        assert sorted(saved.files) == ["g", "i", "k", "n", "sweep:x", "x", "y"]
        assert saved["n"].dtype == np.int32 and saved["n"].tolist() == [3] * 7
        assert saved["k"].shape == (7, 2) and saved["y"].shape == (7, 2)
        np.testing.assert_allclose(saved["y"], s[:, None] * [1.0, 2.0], rtol=1e-5)


def test_out_with_errors_at_some_points_writes_nothing_and_says_so(tmp_path):
    np.save(tmp_path / "x.npy", np.array([1.0, -1.0, 2.0], np.float32))
    prog = tmp_path / "p.tdf"
    prog.write_text("var x = 1.0\nif x < 0.0:\n    z = undefined_name\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n")
    res = cli("grad", prog, "--sweep", f"x=@{tmp_path / 'x.npy'}", "-o", tmp_path / "out.npz")
    assert res.code == 3 and not (tmp_path / "out.npz").exists()
    assert "out.npz not written: the program failed at 1 of 3 points" in res.stderr
