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
