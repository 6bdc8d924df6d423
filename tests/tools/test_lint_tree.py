"""`tapecli lint` over files and folders: noqa comments, --select/--ignore, pyproject settings, --github."""
import textwrap

from conftest import cli
from tapecli.tools.lint import LintSettings, lint_checked, noqa_lines, read_settings

UNUSED = "var x = 2.0\ntape t:\n    y = x\n"             # TDF004 at line 2
TWICE = "var x = 2.0\ntape t:\n    y = x * x\na = t.gradient(y, x)\nb = t.gradient(y, x)\n"   # TDF001 at line 5


def test_noqa_silences_the_codes_it_names_on_its_line():
    assert noqa_lines("a = 1  # noqa\nb = 2  # NOQA: tdf001, TDF004\nc = 3\n") == \
        {1: None, 2: frozenset({"TDF001", "TDF004"})}
    assert [f.code for f in lint_checked(UNUSED)] == ["TDF004"]
    assert lint_checked(UNUSED.replace("tape t:", "tape t:  # noqa: TDF004")) == []
    assert [f.code for f in lint_checked(UNUSED.replace("tape t:", "tape t:  # noqa: TDF001"))] == ["TDF004"]
    assert lint_checked(UNUSED, settings=LintSettings(ignore=("TDF00",))) == []
    assert lint_checked(TWICE, settings=LintSettings(select=("TDF004",))) == []


def test_lint_a_folder_select_ignore_and_github(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "unused.tdf").write_text(UNUSED)
    (tmp_path / "twice.tdf").write_text(TWICE)
    (tmp_path / "clean.tdf").write_text("var x = 1.0\n")
    res = cli("lint", tmp_path)
    assert res.code == 1
    assert [line.split(": ")[0] for line in res.stdout.splitlines()[:-1]] == \
        [f"{tmp_path}/sub/unused.tdf:2:1", f"{tmp_path}/twice.tdf:5:5"]
    assert res.stdout.splitlines()[-1] == "2 findings in 2 of 3 files"
    assert cli("lint", "--select", "TDF001", tmp_path / "sub").stdout.strip() == "no findings"
    assert cli("lint", "--ignore", "TDF001,TDF004", tmp_path).code == 0
    doc = cli("lint", "--json", tmp_path).json
    assert doc["file"] is None and len(doc["files"]) == 3 and [f["code"] for f in doc["findings"]] == ["TDF004", "TDF001"]
    gh = cli("lint", "--github", tmp_path / "twice.tdf")
    assert f"::error file={tmp_path}/twice.tdf,line=5,col=5,title=TDF001::" in gh.stdout
    assert cli("lint", "--select", "NOPE", tmp_path).code == 2


def test_settings_come_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.tapecli.lint]
        ignore = ["TDF004"]
        """))
    (tmp_path / "unused.tdf").write_text(UNUSED)
    assert read_settings(tmp_path)[0] == LintSettings((), ("TDF004",))
    assert cli("lint", "unused.tdf", cwd=tmp_path).code == 0
    assert cli("lint", "--select", "TDF004", "unused.tdf", cwd=tmp_path).code == 0     # still ignored
    (tmp_path / "pyproject.toml").write_text('[tool.tapecli.lint]\nselct = ["TDF001"]\n')
    res = cli("lint", "unused.tdf", cwd=tmp_path)
    assert res.code == 2 and "no setting 'selct'" in res.stderr


def test_a_file_that_does_not_parse_does_not_stop_the_others(tmp_path):
    (tmp_path / "a_bad.tdf").write_text("y = (1 +\n")
    (tmp_path / "b_unused.tdf").write_text(UNUSED)
    res = cli("lint", tmp_path)
    assert res.code == 3 and "SyntaxError" in res.stderr and "b_unused.tdf:2:1: TDF004" in res.stdout


TF_CONSTANT = ("import tensorflow as tf\nc = tf.constant(1.0)\nwith tf.GradientTape() as t:\n    w = c * c\n"
               "g = t.gradient(w, c)\n")                                     # TDF006 at line 5


def test_lint_a_folder_reads_its_tensorflow_python_files(tmp_path):
    (tmp_path / "train.py").write_text(TF_CONSTANT)
    (tmp_path / "setup.py").write_text("import os\ntry:\n    x = 1\nexcept Exception:\n    pass\n")    # not TF
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "hidden.py").write_text(TF_CONSTANT)
    (tmp_path / "rebind.tdf").write_text("var x = 2.0\ntape t:\n    y = x * x\nx = x - 0.1 * t.gradient(y, x)\n")
    res = cli("lint", tmp_path)
    assert res.code == 1, res.stderr
    assert [line.split(": ")[0] for line in res.stdout.splitlines()[:-1]] == \
        [f"{tmp_path}/rebind.tdf:4:1", f"{tmp_path}/train.py:5:19"]
    assert "TDF007" in res.stdout and "`x.assign_sub(0.1 * t.gradient(y, x))`" in res.stdout
    assert "TDF006" in res.stdout and "`t.watch(c)`" in res.stdout
    assert res.stdout.splitlines()[-1] == "2 findings in 2 of 2 files"
    doc = cli("lint", "--json", tmp_path).json
    assert [(f["file"].rsplit("/", 1)[-1], f["code"], f["line"]) for f in doc["findings"]] == \
        [("rebind.tdf", "TDF007", 4), ("train.py", "TDF006", 5)]
    assert cli("lint", "--ignore", "TDF006", tmp_path / "train.py").code == 0
    assert cli("lint", "--select", "TDF007", tmp_path).stdout.count("TDF006") == 0
    (tmp_path / "train.py").write_text(TF_CONSTANT.replace("g = t.gradient(w, c)", "g = t.gradient(w, c)  # noqa: TDF006"))
    assert cli("lint", tmp_path / "train.py").stdout.strip() == "no findings"
