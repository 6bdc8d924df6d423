"""The command line as a shell user meets it: -h, -V, completion, plain metavars in --help."""
import re
import shlex
import subprocess
import sys

from conftest import cli
from tapecli.version import __version__


def test_short_help_and_version():
    for args in (("-h",), ("--help",)):
        res = cli(*args)
        assert res.code == 0 and "Usage: tapecli [OPTIONS] COMMAND" in res.stdout
    res = cli("grad", "-h")
    assert res.code == 0 and "Usage: tapecli grad [OPTIONS]" in res.stdout
    assert cli("-V").stdout.strip() == f"tapecli {__version__}" == cli("--version").stdout.strip()


def test_help_has_plain_metavars():
    for command in ("grad", "check", "lint", "run"):
        text = cli(command, "--help", env={"COLUMNS": "200"}).stdout
        assert "<bool>" not in text and "<int>" not in text and "<list[str]>" not in text.split("Options")[1]
        assert re.search(r"--json\s+Machine-readable", text), text
    grad = cli("grad", "--help", env={"COLUMNS": "200"}).stdout
    assert re.search(r"--set\s+NAME=VALUE", grad) and re.search(r"--max-steps\s+INTEGER", grad)


def test_shell_completion():
    # --show-completion is a flag: the shell is the one tapecli runs under (shellingham reads the process tree), so
    # the command runs under bash here whatever runs the tests (a second command keeps bash from exec'ing it)
    res = subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} -m tapecli --show-completion; true"],
                         capture_output=True, text=True, timeout=120)
    assert "_tapecli_completion" in res.stdout and "complete " in res.stdout, res.stderr[-2000:]
    env = {"_TAPECLI_COMPLETE": "complete_bash", "COMP_WORDS": "tapecli gr", "COMP_CWORD": "1"}
    assert cli(env=env).stdout.split() == ["grad"]
    env = {"_TAPECLI_COMPLETE": "complete_bash", "COMP_WORDS": "tapecli check --all", "COMP_CWORD": "2"}
    assert cli(env=env).stdout.split() == ["--allow-empty"]
    assert "--install-completion" in cli("--help").stdout

