"""The README's GitHub Action and pre-commit examples are usable as written: no placeholder to fill in,
the Action from the checkout (uses: ./) with inputs action.yml declares, and a local pre-commit hook whose
entries are the shipped hooks' commands and run."""
import re
from pathlib import Path

import pytest

from conftest import cli

ROOT = Path(__file__).resolve().parents[2]
yaml = pytest.importorskip("yaml")


def _yaml_blocks() -> list:
    text = (ROOT / "README.md").read_text()
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def test_no_placeholder_repository_in_the_readme():
    text = (ROOT / "README.md").read_text()
    assert "OWNER" not in text and "github.com/" + "OWNER" not in text


def test_the_workflow_uses_the_action_from_the_checkout_with_declared_inputs():
    workflows = [b for b in _yaml_blocks() if isinstance(b, dict) and "jobs" in b]
    assert len(workflows) == 1
    steps = workflows[0]["jobs"]["check"]["steps"]
    ours = [s for s in steps if s.get("uses") == "./"]
    assert len(ours) == 1
    assert steps.index(ours[0]) > steps.index(next(s for s in steps if s.get("uses", "").startswith("actions/checkout")))
    declared = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(ours[0]["with"]) <= set(declared)
    for path in ours[0]["with"]["paths"].split():       # it checks something that exists here
        assert (ROOT / path).exists()


def test_the_local_pre_commit_hooks_are_the_shipped_hooks_and_run(tmp_path):
    configs = [b for b in _yaml_blocks() if isinstance(b, dict) and "repos" in b]
    assert len(configs) == 1
    repo = configs[0]["repos"][0]
    assert repo["repo"] == "local"
    shipped = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    for hook in repo["hooks"]:
        assert hook["entry"] == shipped[hook["id"]]["entry"] and hook["files"] == shipped[hook["id"]]["files"]
        assert hook["language"] == "system"
        args = hook["entry"].split()[1:] + hook.get("args", []) + [str(ROOT / "examples" / "37_expectations.tdf")]
        assert cli(*args).code == 0, hook["id"]
