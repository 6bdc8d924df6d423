"""The pre-commit hooks and the GitHub Action: their files name real commands, and the Action's check step,
run as GitHub runs it, annotates, writes JUnit and appends a job summary."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli

ROOT = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml")


def test_pre_commit_hooks_run_check_and_lint_on_tdf_files(tmp_path):
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"tapecli-check", "tapecli-lint"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["files"] == r"\.tdf$"
    # Each hook's entry, with the changed files appended as pre-commit does.
    plain = tmp_path / "plain.tdf"
    plain.write_text("var x = 1.0\n")              # no expectations: the check hook passes it
    for hook, code in (("tapecli-check", 0), ("tapecli-lint", 0)):
        args = hook_args(hooks[hook]) + [str(ROOT / "examples" / "37_expectations.tdf"), str(plain)]
        assert cli(*args).code == code, hook
    bad = tmp_path / "bad.tdf"
    bad.write_text("var x = 1.0\nexpect x == 2.0\ntape t:\n    y = x\n")
    assert cli(*hook_args(hooks["tapecli-check"]), bad).code == 1
    assert cli(*hook_args(hooks["tapecli-lint"]), bad).code == 1


def hook_args(hook) -> list[str]:
    entry = hook["entry"].split()
    assert entry[0] == "tapecli"
    return entry[1:]


def test_the_action_checks_annotates_and_writes_a_job_summary(tmp_path):
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    install, check = action["runs"]["steps"]
    assert "pip install" in install["run"]
    (tmp_path / "ok.tdf").write_text("var x = 3.0\nexpect x == 3.0\n")
    (tmp_path / "bad.tdf").write_text("var x = 3.0\nexpect x == 4.0\n")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATHS": f"{tmp_path}/ok.tdf {tmp_path}/bad.tdf", "ARGS": "--workers 1",
           "JUNIT": str(tmp_path / "junit.xml"), "PYTHON": sys.executable, "GITHUB_STEP_SUMMARY": str(summary)}
    proc = subprocess.run(["bash", "-c", check["run"]], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert f"::error file={tmp_path}/bad.tdf,line=2,title=expect failed::x == 4.0" in proc.stdout
    text = summary.read_text()
    assert text.startswith("### ❌ tapecli check: 1 passed, 1 failed, 0 skipped, 0 errors")
    assert f"| `{tmp_path}/bad.tdf:2` | failed | x == 4.0: actual 3.0, expected 4.0 |" in text
    assert (tmp_path / "junit.xml").is_file()


def test_allow_empty_passes_nothing_to_check(tmp_path):
    (tmp_path / "plain.tdf").write_text("var x = 1.0\n")
    assert cli("check", tmp_path / "plain.tdf").code == 5
    assert cli("check", "--allow-empty", tmp_path / "plain.tdf").code == 0
