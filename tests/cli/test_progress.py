"""warmup and bench show a progress bar on stderr while they run, when stderr is a terminal (as check does);
nothing when it is not, or under --json."""
import textwrap

from conftest import cli, on_a_terminal


def _stderr_on_a_terminal(*args, cwd=None):
    """Run the CLI with stderr on a pseudo-terminal: (exit code, stdout, what the terminal received)."""
    return on_a_terminal(*args, cwd=cwd, stdout_too=False)


def _program(tmp_path):
    path = tmp_path / "b.tdf"
    path.write_text(textwrap.dedent("""\
        var x = 2.0
        tape t:
            y = x * x
        g = t.gradient(y, x)
        """))
    return path


def test_bench_draws_its_runs_on_a_terminal(tmp_path):
    code, out, terminal = _stderr_on_a_terminal("bench", _program(tmp_path), "--repeat", "3", "--warmup", "1")
    assert code == 0 and "median" in out
    assert "runs" in terminal and "━" in terminal          # Rich's bar, on stderr only
    assert "━" not in out


def test_warmup_draws_its_kernels_on_a_terminal():
    code, out, terminal = _stderr_on_a_terminal("warmup", "--kernel", "abs", "--kernel", "exp", "--dtype",
                                                "float64")
    assert code == 0 and "float64: 2 kernels" in out
    assert "compiling" in terminal and "━" in terminal


def test_no_bar_when_stderr_is_not_a_terminal_or_under_json(tmp_path):
    res = cli("bench", _program(tmp_path), "--repeat", "2")
    assert res.code == 0 and res.stderr == ""
    code, out, terminal = _stderr_on_a_terminal("bench", _program(tmp_path), "--repeat", "2", "--json")
    assert code == 0 and "runs" not in terminal and "━" not in terminal
    res = cli("warmup", "--kernel", "abs", "--dtype", "float64")
    assert res.code == 0 and res.stderr == ""
