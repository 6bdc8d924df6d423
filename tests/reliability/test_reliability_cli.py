"""Reliability of the command line, its output, `check` and the caches (issues 11 and 16, the CLI and
process rows): each test is named after its row and runs the real command line where the row is about it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import cli

PROGRAM = "var x = 3.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n"
# Large enough for numba under TAPECLI_NUMBA_THRESHOLD=16, without fusion: plain cached kernels.
NUMBA_PROGRAM = "var x = ones([64])\ntape t:\n    y = sum(sigmoid(x) * tanh(x))\ng = t.gradient(y, x)\n"
# NUMBA_CACHE_DIR emptied: the test process may have set it (tapecli does on import), and it would win over
# the test's own TAPECLI_CACHE_DIR.
NUMBA_ENV = {"TAPECLI_NUMBA_THRESHOLD": "16", "TAPECLI_FUSION": "0", "NUMBA_CACHE_DIR": ""}


def _write(tmp_path, text, name="p.tdf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _popen(*args, env=None, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tapecli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, **(env or {})), **kw)


# ------------------------------------------------------------------ caches (issue 16)

@pytest.mark.parametrize("kind", ["nbi", "nbc"])
@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_a_corrupt_numba_cache_file_is_discarded_and_recompiled(tmp_path, kind, damage):
    env = {**NUMBA_ENV, "TAPECLI_CACHE_DIR": str(tmp_path / "cache")}
    program = _write(tmp_path, NUMBA_PROGRAM)
    first = cli("run", "--json", program, env=env)
    assert first.code == 0, first.stderr
    files = list((tmp_path / "cache").rglob(f"*.{kind}"))
    assert files, "the run compiled no cached kernel"
    for f in files:
        data = f.read_bytes()
        f.write_bytes(b"" if damage == "empty" else data[:len(data) // 2])
    for _ in range(2):              # the damaged run heals the cache; the next one loads it
        again = cli("run", "--json", program, env=env)
        assert again.code == 0, again.stdout + again.stderr
        assert again.json["values"] == first.json["values"]
    assert all(f.stat().st_size > 0 for f in (tmp_path / "cache").rglob(f"*.{kind}"))


HOLD_LOCK = textwrap.dedent("""\
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(120)
    """)


@pytest.mark.skipif(sys.platform == "win32", reason="the helper holds the lock with fcntl")
def test_a_held_compile_lock_times_out_and_the_kernel_compiles_privately(tmp_path):
    from tapecli.cache import numba_version
    from tapecli.version import __version__
    cache = tmp_path / "cache"
    folder = cache / f"tapecli-{__version__}" / f"numba-{numba_version()}"
    folder.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(folder / "tapecli-compile.lock")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        env = {**NUMBA_ENV, "TAPECLI_CACHE_DIR": str(cache), "TAPECLI_COMPILE_LOCK_TIMEOUT": "0.5"}
        r = cli("run", "--json", _write(tmp_path, NUMBA_PROGRAM), env=env)
    finally:
        holder.kill()
        holder.wait()
    assert r.code == 0, r.stdout + r.stderr
    assert any("compile lock" in w["message"] for w in r.json["warnings"])
    assert "compile lock" in r.stderr or not r.stderr      # --json: warnings are in the document
    assert not list(cache.rglob("*.nbc"))                 # nothing written to the cache it could not lock


# ------------------------------------------------------------------ check

def _count_processes_runner(tmp_path) -> Path:
    """A wrapper of the CLI's entry point that reports on stderr how many processes it started."""
    return _write(tmp_path, textwrap.dedent("""\
        import multiprocessing.process, sys
        started = []
        real_start = multiprocessing.process.BaseProcess.start
        def start(self):
            started.append(self)
            return real_start(self)
        multiprocessing.process.BaseProcess.start = start
        from tapecli.cli.app import main
        sys.argv = ["tapecli", *sys.argv[1:]]
        try:
            main()
        finally:
            sys.stderr.write("\\nprocesses started: %d\\n" % len(started))
        """), "runner.py")


@pytest.mark.parametrize("workers, files", [(40, 1), (64, 3)])      # a cap that regressed forks only 64
def test_check_workers_never_outnumber_files_or_cpus(tmp_path, workers, files):
    paths = [_write(tmp_path, "expect 1 == 1\n", f"f{i}.tdf") for i in range(files)]
    runner = _count_processes_runner(tmp_path)
    r = subprocess.run([sys.executable, runner, "check", "--json", "--workers", str(workers), *paths],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["passed"] == files
    started = int(r.stderr.rsplit("processes started:", 1)[1])
    cap = min(files, os.cpu_count() or 1)
    assert started <= (cap if cap > 1 else 0)


def test_check_reports_good_files_and_a_files_internal_error_in_json_and_junit(tmp_path, monkeypatch, capsys):
    from tapecli.cli.app import app
    from tapecli.tools import check as c
    good = _write(tmp_path, "expect 1 == 1\nexpect 2 == 2\n", "good.tdf")
    bad = _write(tmp_path, "expect 1 == 1\n", "bad.tdf")
    junit = tmp_path / "out.xml"
    junit.write_text("stale")
    real = c.run_source

    def failing(source, path, options):
        if path.endswith("bad.tdf"):
            raise RuntimeError("simulated bug")
        return real(source, path, options)
    monkeypatch.setattr(c, "run_source", failing)
    with pytest.raises(SystemExit) as exit_info:
        app(args=["check", "--json", "--junit", str(junit), str(good), str(bad)])
    assert exit_info.value.code == 4
    doc = json.loads(capsys.readouterr().out)
    assert (doc["passed"], doc["failed"], doc["errors"]) == (2, 0, 1)
    errors = [res for res in doc["results"] if "error" in res]
    assert errors[0]["file"] == str(bad) and errors[0]["error"]["kind"] == "InternalError"
    assert "simulated bug" in errors[0]["error"]["message"]
    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root}
    assert suites[str(good)].get("tests") == "2" and suites[str(bad)].get("errors") == "1"


def test_check_keeps_the_expectations_that_ran_before_an_error(tmp_path):
    r = cli("check", "--json", _write(tmp_path, "expect 1 == 1\nexpect 1 == 2\nq = undefined_name\n"))
    assert r.code == 3
    assert (r.json["passed"], r.json["failed"], r.json["errors"]) == (1, 1, 1)
    assert [res["line"] for res in r.json["results"]] == [1, 2, 3]


def test_check_over_a_folder_reports_every_expectation_that_ran(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    _write(folder, "expect 1 == 1\nq = nope\n", "a.tdf")
    _write(folder, "expect 2 == 2\nexpect 3 == 4\n", "b.tdf")
    _write(folder, "expect 5 == 5\nq = [1.0][::0]\nexpect 6 == 6\n", "c.tdf")
    r = cli("check", "--json", folder)
    assert r.code == 3
    assert (r.json["passed"], r.json["failed"], r.json["errors"]) == (3, 1, 2)
    ran = sorted((Path(res["file"]).name, res["line"]) for res in r.json["results"] if "error" not in res)
    assert ran == [("a.tdf", 1), ("b.tdf", 1), ("b.tdf", 2), ("c.tdf", 1)]


@pytest.mark.parametrize("source", [
    's = "a\\x01b\\x1f" +\n',                    # the control characters are in the excerpt of the error
    'expect "a\\x01b" == "a\\x02b"\nq = (\n',
    'q = "\\x0b"\nexpect q == "\\x0c"\n',
])
def test_junit_is_well_formed_with_control_characters(tmp_path, source):
    program = tmp_path / "p.tdf"
    program.write_bytes(source.encode().decode("unicode_escape").encode())
    junit = tmp_path / "out.xml"
    r = cli("check", "--junit", junit, program)
    assert r.code in (1, 3), r.stderr
    root = ET.parse(junit).getroot()              # raises on malformed XML
    assert root.find("testsuite") is not None


# ------------------------------------------------------------------ environment and options

@pytest.mark.parametrize("name, value, words", [
    ("TAPECLI_MAX_SECONDS", "abc", "a positive number of seconds"),
    ("TAPECLI_NUMBA_THRESHOLD", "abc", "a whole number of elements"),
    ("TAPECLI_FUSION_THRESHOLD", "-3", "a whole number of elements"),
    ("TAPECLI_MAX_MEMORY", "lots", "a positive number of bytes"),
    ("TAPECLI_SCHEDULER_TIMEOUT", "soon", "a positive number of seconds"),
    ("TAPECLI_COMPILE_LOCK_TIMEOUT", "inf", "a positive number of seconds"),
    ("TAPECLI_BACKEND", "gpu", "auto, numpy or numba"),
    ("TAPECLI_FUSION", "yes", "0 or 1"),
    ("TAPECLI_PLAN_KERNELS", "off", "0 or 1"),
    ("TAPECLI_ACCEL", "on", "0 or 1"),
    ("TAPECLI_PARSER", "bogus", "compare"),
])
def test_bad_tapecli_environment_values_exit_2_naming_the_variable(tmp_path, name, value, words):
    from tapecli.environment import VARIABLES
    assert name in VARIABLES
    program = _write(tmp_path, PROGRAM)
    r = cli("run", program, env={name: value})
    assert r.code == 2 and name in r.stderr and words in r.stderr, r.stderr
    r = cli("grad", "--json", program, env={name: value})
    assert r.code == 2 and r.json["error"]["kind"] == "UsageError" and name in r.json["error"]["message"]


def test_every_valued_tapecli_variable_is_checked():
    """Each TAPECLI_ variable the code reads with a value is in environment.VARIABLES (or takes any text)."""
    import re
    from tapecli.environment import VARIABLES
    root = Path(__file__).resolve().parents[2] / "tapecli"
    read = set()
    for path in root.rglob("*.py"):
        read |= set(re.findall(r"TAPECLI_[A-Z_]+[A-Z]", path.read_text()))
    free_text = {"TAPECLI_CACHE_DIR", "TAPECLI_SCHEDULER", "TAPECLI_DEBUG", "TAPECLI_NO_FAST_CLI", "TAPECLI_COMPLETE"}
    assert read - free_text - set(VARIABLES) == set()


@pytest.mark.parametrize("args, words", [
    (["run", "--json", "--bogus"], "No such option: --bogus"),
    (["run", "--json", "--max-steps", "abc"], "--max-steps"),
    (["grad", "--max-elements", "1.5", "--json"], "--max-elements"),
])
def test_usage_errors_under_json_are_a_json_document(tmp_path, args, words):
    r = cli(*args, _write(tmp_path, PROGRAM))
    assert r.code == 2
    assert r.json["error"]["kind"] == "UsageError" and words in r.json["error"]["message"]
    assert r.json["command"] == args[0] and r.json["schema"] == "tapecli/1"


def test_explain_with_an_empty_wrt_is_a_usage_error(tmp_path):
    program = _write(tmp_path, PROGRAM)
    r = cli("explain", "--of", "y", "--wrt", "", program)
    assert r.code == 2 and "--wrt needs a name" in r.stderr
    r = cli("explain", "--json", "--of", "y", "--wrt", " , ", program)
    assert r.code == 2 and r.json["error"]["kind"] == "UsageError"


# ------------------------------------------------------------------ input

def test_invalid_utf8_on_stdin_is_the_same_error_as_in_a_file(tmp_path):
    raw = b'x = "\xff"\n'
    path = tmp_path / "p.tdf"
    path.write_bytes(raw)
    from_file = cli("run", "--json", path)
    proc = subprocess.run([sys.executable, "-m", "tapecli", "run", "--json", "-"], input=raw, capture_output=True)
    assert from_file.code == proc.returncode == 2
    message = json.loads(proc.stdout)["error"]["message"]
    assert message.endswith("is not UTF-8 text") and from_file.json["error"]["message"].endswith("is not UTF-8 text")
    assert "\\udc" not in proc.stdout.decode()


def test_a_directory_as_file_is_named_a_directory(tmp_path):
    r = cli("run", tmp_path)
    assert r.code == 2 and "is a directory" in r.stderr
    r = cli("grad", "--json", tmp_path)
    assert r.code == 2 and "is a directory" in r.json["error"]["message"]


# ------------------------------------------------------------------ output

def test_a_broken_pipe_ends_quietly_with_141(tmp_path):
    program = _write(tmp_path, "var x = ones([200000])\ntape t:\n    y = sum(x * x)\ng = t.gradient(y, x)\n")
    proc = _popen("grad", "--json", program)
    assert proc.stdout.read(10).startswith(b"{")
    proc.stdout.close()                     # the reader goes away, as `| head -c 10` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""


def test_a_closed_stdout_is_an_io_error(tmp_path):
    program = _write(tmp_path, PROGRAM)
    r = subprocess.run([sys.executable, "-m", "tapecli", "grad", "--json", str(program)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1), timeout=120)
    assert r.returncode == 2 and "standard output is closed" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_dev_full_is_an_io_error_and_a_narrow_encoding_is_escaped(tmp_path):
    program = _write(tmp_path, PROGRAM)
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "tapecli", "run", str(program)], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 2 and "cannot write to standard output" in r.stderr
    hello = _write(tmp_path, 'print("h\u00e9llo")\n', "hello.tdf")
    r = cli("run", hello, env={"PYTHONIOENCODING": "ascii"})
    assert r.code == 0 and "h\\xe9llo" in r.stdout


def _cpu_seconds(pid: int) -> float:
    """The CPU time of a process and its children (the workers of ``check --workers``), from /proc."""
    total = 0.0
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry == str(pid) or fields[1] == str(pid):          # (fields[1]: the parent's pid)
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _until_looping(pid: int) -> None:
    """Until the program's loop is running: a start-up takes ~0.4 s of CPU, however long a loaded machine makes
    it take on the clock (a SIGINT during the interpreter's own start-up, in a .pth file, is lost)."""
    if not os.path.isdir("/proc"):
        time.sleep(3)
        return
    deadline = time.monotonic() + 60
    while _cpu_seconds(pid) < 2.0 and time.monotonic() < deadline:
        time.sleep(0.1)


def _interrupted(tmp_path, *args, files=1):
    programs = [_write(tmp_path, "var x = 0.0\nwhile True:\n    x = x + 1.0\n", f"p{i}.tdf") for i in range(files)]
    proc = _popen(*args, "--max-steps", "1000000000", *programs, text=True)
    _until_looping(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_sigint_exits_130_with_one_line(tmp_path):
    code, out, err = _interrupted(tmp_path, "run")
    assert code == 130 and err.strip().splitlines() == ["tapecli run: interrupted"], err


def test_sigint_stops_check_workers(tmp_path):
    """The workers' pipes close (communicate returns) because they are stopped, not left to loop."""
    code, out, err = _interrupted(tmp_path, "check", "--json", "--workers", "2", files=2)
    assert code == 130 and json.loads(out)["error"]["kind"] == "Interrupted"


def test_sigint_during_start_up_ends_the_process_with_one_line(tmp_path):
    # before run_process's handler (an import under way): Python's default would raise KeyboardInterrupt
    # there, which an import may drop, leaving the run deaf to Ctrl-C
    probe = _write(tmp_path, "import os, signal, time\nfrom tapecli.cli.process import interrupt_early\n"
                             "interrupt_early()\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n", "probe.py")
    r = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and r.stderr == "tapecli: interrupted\n", r.stderr


def test_sigint_under_json_writes_an_error_document(tmp_path):
    code, out, err = _interrupted(tmp_path, "run", "--json")
    assert code == 130 and json.loads(out)["error"]["kind"] == "Interrupted"
    assert err.strip() == "tapecli run: interrupted"


# The peak is the process's own VmHWM: getrusage's ru_maxrss keeps the parent's peak across fork and exec, so a
# child of a large test process would report the parent's size.
PEAK_RUNNER = textwrap.dedent("""\
    import sys
    from tapecli.cli.app import main
    sys.argv = ["tapecli", *sys.argv[1:]]
    try:
        main()
    finally:
        hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
        sys.stderr.write("\\npeak KiB: %d\\n" % int(hwm.split()[1]))
    """)


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM in /proc is Linux's")
def test_rendering_under_a_memory_cap_stays_under_it(tmp_path):
    """`run --json` of a 25,000,000-element tensor under a 1 GB cap: refused while rendering, and the
    process's peak resident size stayed under the cap."""
    runner = _write(tmp_path, PEAK_RUNNER, "runner.py")
    program = _write(tmp_path, "x = ones([5000, 5000])\n")
    r = subprocess.run([sys.executable, runner, "run", "--json", program], capture_output=True, text=True,
                       env=dict(os.environ, TAPECLI_MAX_MEMORY="1000000000"), timeout=300)
    assert r.returncode == 3 and json.loads(r.stdout)["error"]["kind"] == "LimitError"
    assert int(r.stderr.rsplit("peak KiB:", 1)[1]) * 1024 < 1_000_000_000


def test_table_cells_of_shared_lists_are_bounded(tmp_path):
    r = cli("run", "--no-color", _write(tmp_path, "xs = [1.0]\nfor i in range(26):\n    xs = [xs, xs]\n"))
    assert r.code == 0 and "xs" in r.stdout and "…" in r.stdout
    from tapecli.cli.render import CELL_CHARS
    assert len(r.stdout) < 4 * CELL_CHARS


def test_table_summaries_match_the_whole_array_statistics():
    import numpy as np
    from tapecli.cli import tensorfmt
    rng = np.random.default_rng(1)
    arr = rng.standard_normal(3 * tensorfmt._BLOCK + 7).astype(np.float32)
    arr[[5, 10]] = np.nan
    arr[11] = np.inf
    text = tensorfmt.summary(arr, shape_and_dtype=False)
    finite = arr[np.isfinite(arr)].astype(np.float64)
    g = tensorfmt._g
    assert text == (f"min {g(finite.min())}  max {g(finite.max())}  mean {g(finite.mean())}  "
                    f"norm {g(float(np.linalg.norm(finite)))}  NaN 2")


# ------------------------------------------------------------------ round 4: no internal errors (F6)

def test_an_integer_too_long_to_write_is_a_limit_error_naming_its_name(tmp_path):
    """A Python program may hold an integer of over 4,300 decimal digits (a hex literal, 10 ** 5000), as
    CPython's does; its JSON and its table cell cannot write it: a LimitError (exit 3), not exit 4."""
    program = _write(tmp_path, "x = 0x" + "f" * 3600 + "\n", "p.py")
    r = cli("run", "--json", program)
    assert r.code == 3 and r.json["error"]["kind"] == "LimitError", r.stdout
    assert r.json["error"]["message"].startswith("x: an integer of more than 4,300 decimal digits"), r.stdout
    r = cli("run", "--no-color", _write(tmp_path, "x = (1, 10 ** 5000)\ny = hex(x[1])\n", "q.py"))
    assert r.code == 3 and "LimitError: x: a tuple holding an integer" in r.stderr, r.stderr
    # where TDF reads the literal itself (a program that is not Python alone), an integer literal fits int64
    r = cli("run", "--json", _write(tmp_path, "var y = 1.0\nx = 0x" + "f" * 3600 + "\n"))
    assert r.code == 3 and r.json["error"]["kind"] == "SyntaxError" and r.json["error"]["line"] == 2, r.stdout
    assert "out of range for int64" in r.json["error"]["message"]


def test_tf_constant_of_a_list_nested_65_deep_is_a_value_error(tmp_path):
    source = "import tensorflow as tf\nl = [1.0]\nfor i in range({n}):\n    l = [l]\nq = tf.constant(l)\n"
    r = cli("run", "--json", _write(tmp_path, source.format(n=64), "p.py"))
    assert r.code == 3 and r.json["error"]["kind"] == "ValueError" and r.json["error"]["line"] == 5, r.stdout
    assert "at most 64 dimensions" in r.json["error"]["message"]
    r = cli("run", "--json", _write(tmp_path, source.format(n=63), "q.py"))
    assert r.code == 0 and len(r.json["types"]["q"]["shape"]) == 64


@pytest.mark.parametrize("json_out", [True, False])
def test_reading_a_closed_standard_input_is_a_usage_error(tmp_path, json_out):
    r = subprocess.run([sys.executable, "-m", "tapecli", "run", *(["--json"] if json_out else []), "-"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, preexec_fn=lambda: os.close(0),
                       timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    message = json.loads(r.stdout)["error"]["message"] if json_out else r.stderr
    assert "standard input is closed" in message


def test_lint_under_a_pyproject_toml_that_is_not_utf8_is_a_usage_error(tmp_path):
    """A pyproject.toml that cannot be read is reported as one that does not parse is (exit 2): its
    settings would choose what lint reports, so lint does not go on without them."""
    _write(tmp_path, "var x = 1.0\n", "a.tdf")
    (tmp_path / "pyproject.toml").write_bytes(b"\xff\xfe[tool]\n")
    r = cli("lint", "a.tdf", cwd=tmp_path)
    assert r.code == 2 and "pyproject.toml: not UTF-8 text" in r.stderr, r.stderr
    r = cli("lint", "--json", "a.tdf", cwd=tmp_path)
    assert r.code == 2 and r.json["error"]["kind"] == "UsageError"


# ------------------------------------------------------------------ round 4: --set of a float too large (F8)

@pytest.mark.parametrize("value, words", [("3e39", "3e+39 does not fit float32"),
                                          ("[1.0, -3e39]", "-3e+39 does not fit float32"),
                                          ("1e400", "1e400 does not fit float64")])
def test_set_of_a_finite_float_too_large_for_the_declaration_is_a_usage_error(tmp_path, value, words):
    r = cli("run", "--json", _write(tmp_path, "var x = 1.0\n"), "--set", f"x={value}")
    assert r.code == 2 and r.json["error"]["kind"] == "UsageError", r.stdout
    assert words in r.json["error"]["message"], r.stdout


def test_set_float_range_checks_a_npy_file_and_keeps_what_fits_or_is_given_as_infinity(tmp_path):
    import numpy as np
    program = _write(tmp_path, "var x = 1.0\nvar y: float64 = 1.0\n")
    np.save(tmp_path / "big.npy", np.array([1.0, 3e39]))
    r = cli("run", "--json", program, "--set", f"x=@{tmp_path / 'big.npy'}")
    assert r.code == 2 and "3e+39 does not fit float32" in r.json["error"]["message"], r.stdout
    r = cli("run", "--json", program, "--set", "x=[Infinity, NaN, 3.4028235e38]", "--set", "y=3e39")
    assert r.code == 0, r.stdout
    assert r.json["values"] == {"x": ["Infinity", "NaN", 3.4028235e38], "y": 3e39}


# ------------------------------------------------------------------ round 4: output files that are inputs (F9)

def test_junit_onto_a_file_being_checked_is_refused_and_the_file_left_as_it_was(tmp_path):
    program = _write(tmp_path, "expect 1.0 == 1.0\n")
    (tmp_path / "link.xml").symlink_to(program)
    for junit, args in ((program, [program]), (tmp_path / "link.xml", [tmp_path])):
        r = cli("check", "--junit", junit, *args)
        assert r.code == 2 and "this command reads that file" in r.stderr, r.stderr
        assert r.stdout == ""           # refused before any file was checked
    assert program.read_text() == "expect 1.0 == 1.0\n"
    r = cli("check", "--junit", tmp_path / "report.xml", program)
    assert r.code == 0 and (tmp_path / "report.xml").read_text().startswith("<?xml")


def test_out_and_plot_output_onto_a_file_the_command_reads_are_refused(tmp_path):
    import numpy as np
    np.save(tmp_path / "x.npy", np.array(2.0))
    program = _write(tmp_path, "var x = 1.0\ny = x * 2.0\n", "p.npz")
    r = cli("run", "--json", program, "--out", program)
    assert r.code == 2 and "this command reads that file" in r.json["error"]["message"], r.stdout
    r = cli("grad", program, "--set", f"x=@{tmp_path / 'x.npy'}", "--of", "y", "--wrt", "x",
            "--out", f"x={tmp_path / 'x.npy'}")
    assert r.code == 2 and "this command reads that file" in r.stderr, r.stderr
    assert np.load(tmp_path / "x.npy") == 2.0
    drawn = _write(tmp_path, "const x = linspace(0.0, 1.0, 5)\ny = x * x\n", "p.png")
    r = cli("plot", drawn, "--y", "y", "-o", drawn)
    assert r.code == 2 and "-o" in r.stderr and "this command reads that file" in r.stderr, r.stderr
    assert program.read_text().startswith("var x") and drawn.read_text().startswith("const x")


# ------------------------------------------------------------------ round 4: stderr closed or full (F10)

def _without_stderr(how: str, *args):
    if how == "closed":
        return subprocess.run([sys.executable, "-m", "tapecli", *map(str, args)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, preexec_fn=lambda: os.close(2), timeout=120)
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-m", "tapecli", *map(str, args)], stdout=subprocess.PIPE,
                              stderr=full, text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("how", ["closed", "full"])
def test_an_error_that_cannot_be_written_to_stderr_keeps_its_exit_code(tmp_path, how):
    bad = _write(tmp_path, "y = nope\n")
    assert _without_stderr(how, "run", bad).returncode == 3
    assert _without_stderr(how, "run", tmp_path / "missing.tdf").returncode == 2
    r = _without_stderr(how, "run", "--json", bad)
    assert r.returncode == 3 and json.loads(r.stdout)["error"]["kind"] == "NameError"
    warned = _write(tmp_path, "import numpy as np\nx = np.float64(1.0) / 0.0\n", "w.py")
    r = _without_stderr(how, "run", "--no-color", warned)
    assert r.returncode == 0 and "inf" in r.stdout
    failing = _write(tmp_path, "expect 1.0 == 2.0\n", "f.tdf")
    assert _without_stderr(how, "check", failing).returncode == 1


# ------------------------------------------------------------------ round 4: control characters for a terminal (F11)

RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x7f", "\x9b")


def test_an_error_excerpt_escapes_control_characters_and_its_caret_still_points_at_the_error(tmp_path):
    r = cli("run", _write(tmp_path, 'a = "\x1b[31m\x07" + nope # \x1b]0;PWNED\x07\x1b[2J\n'))
    assert r.code == 3 and not any(c in r.stderr for c in RAW_CONTROLS), repr(r.stderr)
    lines = r.stderr.splitlines()
    excerpt = next(line for line in lines if line.lstrip().startswith("1 |"))
    assert excerpt.endswith('a = "^[[31m^G" + nope # ^[]0;PWNED^G^[[2J')
    carets = lines[lines.index(excerpt) + 1]
    assert carets.index("^") == excerpt.index("nope") and carets.count("^") == 4, (excerpt, carets)


def test_messages_warnings_and_check_reports_escape_control_characters(tmp_path):
    program = _write(tmp_path, 'import warnings\nwarnings.warn("w\\x1b[2J")\nraise ValueError("bad\\x07\\x1b]0;T\\x07")\n',
                     "p.py")
    r = cli("run", program)
    assert r.code == 3 and not any(c in r.stderr for c in RAW_CONTROLS), repr(r.stderr)
    assert "warning: UserWarning: w^[[2J" in r.stderr and "ValueError: bad^G^[]0;T^G" in r.stderr, r.stderr
    assert cli("run", "--json", program).json["error"]["message"] == "bad\x07\x1b]0;T\x07"
    failing = _write(tmp_path, 'expect 1 == 2, "m\x1b[2J\x9b"\n', "f.tdf")
    r = cli("check", failing)
    assert r.code == 1 and "FAIL 1 == 2: m^[[2JM-^[" in r.stdout and not any(c in r.stdout for c in RAW_CONTROLS)
    assert cli("check", "--json", failing).json["results"][0]["message"] == "m\x1b[2J\x9b"


def test_the_table_of_values_escapes_control_characters_and_json_keeps_them(tmp_path):
    program = _write(tmp_path, 's = "\x1b]52;c;SGVsbG8=\x07"\nt = ["\\r\\x7f"]\n')
    r = cli("run", "--no-color", program, env={"COLUMNS": "120"})
    assert r.code == 0 and not any(c in r.stdout for c in RAW_CONTROLS), repr(r.stdout)
    assert "^[]52;c;SGVsbG8=^G" in r.stdout and "[^M^?]" in r.stdout, r.stdout
    assert cli("run", "--json", program).json["values"] == {"s": "\x1b]52;c;SGVsbG8=\x07", "t": ["\r\x7f"]}


def test_terminal_text_escapes_as_cat_v_does():
    from tapecli.documents import terminal_text
    from tapecli.errors import escape_controls
    assert escape_controls("a\x00\x1b\x07\t\x7f\x85\x9b\u00e9") == "a^@^[^G\t^?M-^EM-^[\u00e9"
    assert escape_controls("a\nb") == "a^Jb" and escape_controls("a\nb", newlines=True) == "a\nb"
    text = "f.tdf:1:7: NameError: x\n    1 | s = '\x1b' + x\n      |            ^"
    assert terminal_text(text) == "f.tdf:1:7: NameError: x\n    1 | s = '^[' + x\n      |             ^"


ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x9b"


def _escaping_programs(tmp_path) -> dict:
    (tmp_path / "p.tdf").write_text(f'var x = 3.0\ntape t:\n    y = x * x # {ESCAPES}\ng = t.gradient(y, x)\n'
                                    f'print("p{ESCAPES}")\n')
    (tmp_path / f"we{ESCAPES}ird.tdf").write_text("x = 1.0\n")
    (tmp_path / "syntax.tdf").write_text(f"x = = 1 # {ESCAPES}\n")
    return {"p": "p.tdf", "weird": f"we{ESCAPES}ird.tdf", "syntax": "syntax.tdf"}


@pytest.mark.parametrize("args", [
    ["explain", "{p}", "--of", "y", "--wrt", "x"], ["bench", "--repeat", "1", "--warmup", "0", "{weird}"],
    ["jacobian", "{weird}"], ["grad", "{weird}"], ["tape", "{weird}"], ["check", "{weird}"],
    ["lint", "{syntax}"], ["check", "{syntax}"], ["diff", "{weird}", "{p}"],
    ["explain", "{p}", "--of", f"y{ESCAPES}", "--wrt", "x"],
])
def test_text_output_of_every_command_escapes_control_characters(tmp_path, args):
    files = _escaping_programs(tmp_path)
    r = cli(*[a.format(**files) for a in args], cwd=tmp_path, env={"COLUMNS": "200"})
    assert "^[" in r.stdout + r.stderr, (r.stdout, r.stderr)
    shown = [line for line in (r.stdout + r.stderr).splitlines() if not line.startswith("p\x1b")]     # (print output)
    assert not any(c in line for line in shown for c in RAW_CONTROLS), (r.stdout, r.stderr)


def test_explain_escapes_the_statements_text_and_json_keeps_it(tmp_path):
    _escaping_programs(tmp_path)
    r = cli("explain", "p.tdf", "--of", "y", "--wrt", "x", cwd=tmp_path)
    assert r.code == 0 and "line 3: y = x * x # ^[]0;PWNED^G^[[2JM-^[" in r.stdout, r.stdout
    doc = cli("explain", "--json", "p.tdf", "--of", "y", "--wrt", "x", cwd=tmp_path).json
    assert doc["explanations"][0]["chain"][0]["text"] == f"y = x * x # {ESCAPES}"


def test_print_output_is_the_programs_own_in_a_pipe_and_escaped_on_a_terminal(tmp_path):
    import pty
    _escaping_programs(tmp_path)
    piped = cli("run", "p.tdf", cwd=tmp_path)
    assert piped.code == 0 and f"p{ESCAPES}\n" in piped.stdout       # the program's data, as CPython writes it
    assert cli("run", "--json", "p.tdf", cwd=tmp_path).json["output"] == [f"p{ESCAPES}"]
    main, tty = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "tapecli", "run", "p.tdf"], stdout=tty, stderr=tty, cwd=tmp_path,
                            env=env)
    os.close(tty)
    out = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:             # (the terminal closed: the process ended)
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert proc.wait(timeout=60) == 0
    text = out.decode("utf-8", "replace")
    assert "p^[]0;PWNED^G^[[2JM-^[" in text and "\x07" not in text and "\x1b]0" not in text, repr(text)
