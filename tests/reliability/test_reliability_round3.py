"""Reliability, round 3, the command line's part: output files, --set and --sweep inputs, worker counts,
signals, the Dask scheduler's replies and plot's limits. Each test runs the real command line where the
finding is about it."""
from __future__ import annotations

import errno
import json
import os
import resource
import stat
import subprocess
import sys

import numpy as np
import pytest

from conftest import cli
from reliability.test_reliability_cli import PEAK_RUNNER, _write

EXPECT = "expect 1.0 == 1.0\n"
CURVE = "const x = linspace(0.0, 1.0, 50)\ny = sin(x)\n"
PLAIN = {"NO_COLOR": "1", "COLUMNS": "80", "LINES": "20"}


# ------------------------------------------------------------------ output files

def test_junit_onto_a_fifo_is_refused_and_the_fifo_left_as_it_was(tmp_path):
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    r = cli("check", "--junit", fifo, _write(tmp_path, EXPECT))
    assert r.code == 2 and "is a FIFO" in r.stderr and "standard output" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert r.stdout == ""               # refused before any file was checked


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_junit_onto_a_device_node_is_refused_and_the_node_left_as_it_was(tmp_path):
    node = tmp_path / "devnull"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    r = cli("check", "--json", "--junit", node, _write(tmp_path, EXPECT))
    assert r.code == 2 and "character device" in r.json["error"]["message"], r.stdout
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_plot_onto_dev_null_is_refused_and_dev_null_is_not_replaced(tmp_path):
    pytest.importorskip("matplotlib")
    before = os.stat("/dev/null")
    link = tmp_path / "null.png"
    link.symlink_to("/dev/null")            # written through, so refused: /dev/null is a device
    r = cli("plot", _write(tmp_path, CURVE), "--y", "y", "-o", link)
    assert r.code == 2 and "character device" in r.stderr, r.stderr
    assert link.is_symlink()
    r = cli("check", "--junit", "/dev/null", _write(tmp_path, EXPECT))
    assert r.code == 2 and "character device" in r.stderr, r.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_output_files_are_written_through_a_symlink_to_its_target(tmp_path):
    pytest.importorskip("matplotlib")
    real, link = tmp_path / "real.xml", tmp_path / "link.xml"
    real.write_text("old")
    link.symlink_to(real)
    r = cli("check", "--junit", link, _write(tmp_path, EXPECT))
    assert r.code == 0, r.stderr
    assert link.is_symlink() and real.read_text().startswith("<?xml")
    png, png_link = tmp_path / "real.png", tmp_path / "plot.png"
    png_link.symlink_to(png)                      # a dangling link: the target is made
    r = cli("plot", _write(tmp_path, CURVE, "c.tdf"), "--y", "y", "-o", png_link)
    assert r.code == 0, r.stderr
    assert png_link.is_symlink() and png.read_bytes()[:4] == b"\x89PNG"


def test_a_new_output_file_gets_the_usual_mode_not_the_temporary_files(tmp_path):
    out = tmp_path / "out.xml"
    r = cli("check", "--junit", out, _write(tmp_path, EXPECT))
    umask = os.umask(0)
    os.umask(umask)
    assert r.code == 0 and stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tapecli-")] == []


@pytest.mark.parametrize("command", ["check", "plot"])
def test_a_directory_or_a_too_long_name_as_output_is_a_usage_error(tmp_path, command):
    if command == "plot":
        pytest.importorskip("matplotlib")
    folder = tmp_path / "d.png"
    folder.mkdir()
    long_name = tmp_path / ("x" * 300 + ".png")
    program = _write(tmp_path, EXPECT if command == "check" else CURVE)
    for target, words in ((folder, "is a directory"), (long_name, "too long")):
        args = ("check", "--json", "--junit", target, program) if command == "check" else \
            ("plot", "--json", program, "--y", "y", "-o", target)
        r = cli(*args)
        assert r.code == 2 and r.json["error"]["kind"] == "UsageError", r.stdout
        assert words in r.json["error"]["message"], r.stdout
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_the_file_size_limit_is_a_usage_error_and_leaves_no_file(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "big.png"

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    proc = subprocess.run([sys.executable, "-m", "tapecli", "plot", str(_write(tmp_path, CURVE)), "--y", "y",
                           "-o", str(out)], capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    assert proc.returncode == 2 and "file size limit" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".tapecli-")] == []


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "read-only")])
def test_a_full_or_read_only_disk_is_an_output_file_error(tmp_path, monkeypatch, code, words):
    from tapecli.tools import outfile

    def fill(f):
        raise OSError(code, os.strerror(code))
    with pytest.raises(outfile.OutputFileError, match=words):
        outfile.write_with(str(tmp_path / "a.xml"), fill, "--junit")
    assert list(tmp_path.iterdir()) == []
    import tempfile

    def no_temporary(*args, **kw):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(tempfile, "mkstemp", no_temporary)
    with pytest.raises(outfile.OutputFileError, match=words):
        outfile.write(str(tmp_path / "a.xml"), "text", "--junit")


# ------------------------------------------------------------------ --set and --sweep inputs

def test_set_from_a_file_never_shows_its_contents(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:hunter2:/root:/bin/bash\n")
    npy = tmp_path / "secret.npy"
    npy.write_text("root:x:0:0:hunter2:/root:/bin/bash\n")
    program = _write(tmp_path, "var x = 1.0\n")
    for path in (secret, npy):
        for option in ("--set", "--sweep"):
            r = cli("run", "--json", program, option, f"x=@{path}")
            assert r.code == 2 and r.json["error"]["kind"] == "UsageError", r.stdout
            assert "hunter2" not in r.stdout + r.stderr and "root:" not in r.stdout + r.stderr, r.stdout


def test_set_of_an_array_deeper_than_numpy_computes_on_is_a_usage_error(tmp_path):
    program = _write(tmp_path, "var b = 1.0\ny = b * 2.0\n")
    r = cli("run", "--json", program, "--set", "b=" + "[" * 35 + "1" + "]" * 35)
    assert r.code == 2 and "at most 32 dimensions" in r.json["error"]["message"], r.stdout
    deep = np.ones([1] * 33, dtype=np.float32)
    np.save(tmp_path / "deep.npy", deep)
    r = cli("run", "--json", program, "--set", f"b=@{tmp_path / 'deep.npy'}")
    assert r.code == 2 and "33 dimensions" in r.json["error"]["message"], r.stdout
    r = cli("run", "--json", program, "--set", "b=" + "[" * 32 + "1" + "]" * 32)
    assert r.code == 0, r.stdout


def _npy_claiming(points: int) -> bytes:
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({points},), }}".encode()
    header += b" " * (16 - (10 + len(header) + 1) % 16) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 12


def test_sweep_files_are_weighed_before_anything_is_built(tmp_path):
    program = _write(tmp_path, "var x = 1.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n")
    (tmp_path / "huge.npy").write_bytes(_npy_claiming(10 ** 12))
    (tmp_path / "empty.npy").write_bytes(b"")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "deep_dicts.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    cases = {"huge.npy": "1,000,000,000,000 elements", "empty.npy": "is empty", "deep.json": "nested 100000 deep",
             "deep_dicts.json": "nested 100000 deep"}
    for name, words in cases.items():
        r = cli("grad", "--json", program, "--sweep", f"x=@{tmp_path / name}")
        assert r.code == 2 and words in r.json["error"]["message"], (name, r.stdout)


def test_sweep_file_over_the_memory_cap_is_refused_before_it_is_read(tmp_path):
    program = _write(tmp_path, "var x = 1.0\ny = x * 2.0\n")
    np.save(tmp_path / "big.npy", np.zeros(30_000_000, dtype=np.float32))        # 120 MB
    r = cli("grad", "--json", program, "--sweep", f"x=@{tmp_path / 'big.npy'}", env={"TAPECLI_MAX_MEMORY": "1e8"})
    assert r.code == 2 and "memory limit" in r.json["error"]["message"], r.stdout


def test_sweep_results_are_weighed_before_any_point_runs(tmp_path):
    program = _write(tmp_path, "var x = 0.0\ntape t:\n    y = sigmoid(x)\ndy_dx = t.gradient(y, x)\n")
    np.save(tmp_path / "points.npy", np.linspace(-8, 8, 20_000_000, dtype=np.float32))     # 80 MB of points
    r = cli("grad", "--json", program, "--sweep", f"x=@{tmp_path / 'points.npy'}", env={"TAPECLI_MAX_MEMORY": "2e8"})
    assert r.code == 3 and r.json["error"]["kind"] == "LimitError", r.stdout
    assert "20,000,000 sweep points" in r.json["error"]["message"]


def test_diff_of_a_deeply_nested_json_file_is_a_usage_error(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    r = cli("diff", tmp_path / "deep.json", tmp_path / "deep.json")
    assert r.code == 2 and "nested too deep" in r.stderr, r.stderr


# ------------------------------------------------------------------ plot

def test_plot_logy_with_no_positive_value_is_a_usage_error(tmp_path):
    pytest.importorskip("plotext")
    program = _write(tmp_path, "y = [-1.0, -2.0, -3.0]\nz = [-1.0, 0.0, 2.0]\n")
    r = cli("plot", program, "--y", "y", "--logy", env=PLAIN)
    assert r.code == 2 and "no positive value" in r.stderr, r.stderr
    r = cli("plot", program, "--y", "z", "--logy", env=PLAIN)
    assert r.code == 0 and "z" in r.stdout, r.stderr


def test_plot_math_text_errors_are_usage_errors_and_names_are_drawn_as_written(tmp_path):
    pytest.importorskip("matplotlib")
    program = _write(tmp_path, CURVE, "K$x^{$.tdf")
    r = cli("plot", "--json", program, "--y", "y", "--title", "$x^{$", "-o", tmp_path / "k.png")
    assert r.code == 2 and "math text" in r.json["error"]["message"], r.stdout
    assert not (tmp_path / "k.png").exists()
    r = cli("plot", program, "--y", "y", "--title", "cost in $, $x^2$", "-o", tmp_path / "k.png")
    assert r.code == 0 and (tmp_path / "k.png").exists(), r.stderr
    named = _write(tmp_path, 'var x = linspace(0.0, 1.0, 5)\ntape t:\n    y = x * x\ng = t.gradient(y, {"$x^{$": x})\n',
                   "n.tdf")
    r = cli("plot", named, "--y", 'g["$x^{$"]', "-o", tmp_path / "n.svg")
    assert r.code == 0, r.stderr
    assert "$x^{$" in (tmp_path / "n.svg").read_text()


def test_plot_title_length_is_bounded(tmp_path):
    pytest.importorskip("plotext")
    r = cli("plot", _write(tmp_path, CURVE), "--y", "y", "--title", "a" * 100_000, env=PLAIN)
    assert r.code == 2 and "at most 1,000" in r.stderr, r.stderr


@pytest.mark.parametrize("columns, lines", [("200000", "200000"), ("80", "\u00b2"), ("\u0663\u0660", "20"),
                                            ("0", "-5")])
def test_plot_terminal_sizes_from_the_environment_are_bounded(tmp_path, columns, lines):
    pytest.importorskip("plotext")
    r = cli("plot", _write(tmp_path, CURVE), "--y", "y", env={"NO_COLOR": "1", "COLUMNS": columns, "LINES": lines})
    assert r.code == 0, r.stderr
    rows = r.stdout.splitlines()
    assert 8 <= len(rows) <= 200 and max(len(row) for row in rows) <= 500


def test_plot_of_many_points_is_weighed_and_thinned_for_the_terminal(tmp_path):
    pytest.importorskip("plotext")
    program = _write(tmp_path, "const x = 0.0\ny = sin(x)\n")
    np.save(tmp_path / "grid.npy", np.linspace(-8, 8, 1_000_000, dtype=np.float32))
    r = cli("plot", program, "--set", f"x=@{tmp_path / 'grid.npy'}", "--x", "x", "--y", "y", env=PLAIN)
    assert r.code == 0 and r.stdout.count("\n") >= 10, r.stderr
    np.save(tmp_path / "big.npy", np.linspace(-8, 8, 10_000_000, dtype=np.float32))
    for output in ((), ("-o", tmp_path / "big.png")):
        r = cli("plot", "--json", program, "--set", f"x=@{tmp_path / 'big.npy'}", "--x", "x", "--y", "y", *output,
                env={**PLAIN, "TAPECLI_MAX_MEMORY": "2e8"})
        assert r.code == 3 and r.json["error"]["kind"] == "LimitError", r.stdout
    assert not (tmp_path / "big.png").exists()


def test_terminal_thinning_keeps_every_cell_and_both_ends():
    from tapecli.cli.plot import _thin
    x = np.linspace(0.0, 1.0, 200_001)
    y = np.sin(40 * x)
    tx, ty = _thin(x, y, 80, 20, False)
    assert tx.size < 20_000 and tx[0] == 0.0 and tx[-1] == 1.0
    assert ty.min() == y.min() and ty.max() == y.max()

    def cells(a, b):
        column = ((a - x.min()) / (x.max() - x.min()) * 160).astype(int).clip(0, 159)
        row = ((b - y.min()) / (y.max() - y.min()) * 80).astype(int).clip(0, 79)
        return set(zip(column, row))
    assert cells(tx, ty) == cells(x, y)


# ------------------------------------------------------------------ expectations

def test_an_expect_whose_message_is_a_tensor_reports_it_as_text(tmp_path):
    program = _write(tmp_path, "var x = [1.0, 2.0]\nexpect x == 2.0, x\nl = []\nl.append(l)\nexpect 1.0 == 2.0, l\n")
    r = cli("check", "--json", "--junit", tmp_path / "out.xml", program)
    assert r.code == 1, r.stdout
    assert [res["message"] for res in r.json["results"]] == ["[1.0, 2.0]", "[\"[...]\"]"]   # inside itself: [...]
    assert "[1.0, 2.0]" in (tmp_path / "out.xml").read_text()
    r = cli("check", "--workers", "2", program, _write(tmp_path, "var x = 1.0\nexpect x == 2.0, x\n", "q.tdf"))
    assert r.code == 1 and "FAIL x == 2.0: 1.0;" in r.stdout, r.stdout


# ------------------------------------------------------------------ worker counts

@pytest.mark.parametrize("command", ["check", "grad"])
def test_an_absurd_worker_count_is_a_usage_error(tmp_path, command):
    program = _write(tmp_path, "var x = 1.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\nexpect g == 2.0 * x\n")
    np.save(tmp_path / "points.npy", np.linspace(0.0, 1.0, 10, dtype=np.float32))
    r = cli(command, "--json", program, "--sweep", f"x=@{tmp_path / 'points.npy'}", "--workers", "99999999999999999999")
    assert r.code == 2 and "at most 65,536" in r.json["error"]["message"], r.stdout


def test_sweep_workers_never_outnumber_batches_or_cpus(tmp_path):
    from reliability.test_reliability_cli import _count_processes_runner
    program = _write(tmp_path, "var x = 1.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n")
    np.save(tmp_path / "points.npy", np.linspace(0.0, 1.0, 10, dtype=np.float32))
    r = subprocess.run([sys.executable, _count_processes_runner(tmp_path), "grad", "--json", program, "--sweep",
                        f"x=@{tmp_path / 'points.npy'}", "--workers", "16"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert int(r.stderr.rsplit("processes started:", 1)[1]) <= min(16, len(os.sched_getaffinity(0)))


# ------------------------------------------------------------------ signals

LOOP = "var x = 0.0\nwhile True:\n    x = x + 1.0\n"
SWEPT_LOOP = "var x = 1.0\ny = x\nwhile x < 0.5:\n    y = y + 1.0\n"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _signalled(tmp_path, signum, args, workers=2):
    """Start ``tapecli ARGS`` (its work never ends), wait for its worker processes, send ``signum``."""
    import time
    proc = subprocess.Popen([sys.executable, "-m", "tapecli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while len(_children(proc.pid)) < workers and time.monotonic() < deadline:
        time.sleep(0.2)
    children = _children(proc.pid)
    time.sleep(1.0)                         # the workers busy with their files or points
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    time.sleep(0.5)
    return proc.returncode, out, err, children


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum, code, words", [(15, 143, "terminated (SIGTERM)"), (1, 129, "hung up (SIGHUP)")])
def test_sigterm_and_sighup_end_check_workers_with_the_parent(tmp_path, signum, code, words):
    programs = [_write(tmp_path, LOOP, f"loop{i}.tdf") for i in range(2)]
    status, out, err, children = _signalled(tmp_path, signum, ["check", "--json", "--workers", "2", "--max-steps",
                                                                "1000000000", *programs])
    assert len(children) == 2, children
    assert status == code and err.strip() == f"tapecli check: {words}", err
    assert json.loads(out)["error"] == {"kind": "Interrupted", "message": words, "line": None, "column": None}
    assert [pid for pid in children if _alive(pid)] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_ends_sweep_workers_with_the_parent(tmp_path):
    np.save(tmp_path / "points.npy", np.linspace(0.0, 1.0, 10, dtype=np.float32))
    status, out, err, children = _signalled(tmp_path, 15, ["run", _write(tmp_path, SWEPT_LOOP), "--sweep",
                                                            f"x=@{tmp_path / 'points.npy'}", "--workers", "2",
                                                            "--max-steps", "1000000000"])
    assert len(children) == 2 and status == 143 and "terminated" in err, (children, err)
    assert [pid for pid in children if _alive(pid)] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_end_when_their_parent_is_killed(tmp_path):
    programs = [_write(tmp_path, LOOP, f"loop{i}.tdf") for i in range(2)]
    status, out, err, children = _signalled(tmp_path, 9, ["check", "--workers", "2", "--max-steps", "1000000000",
                                                           *programs])
    assert len(children) == 2 and status == -9
    import time
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in children if _alive(pid)] == []


# ------------------------------------------------------------------ the Dask scheduler

def _server(greeting: bytes | None):
    """A local TCP server that accepts connections and writes ``greeting`` (None: never a byte)."""
    import socket
    import threading
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if greeting:
                conn.sendall(greeting)
    threading.Thread(target=serve, daemon=True).start()
    return server, f"tcp://127.0.0.1:{server.getsockname()[1]}"


@pytest.mark.parametrize("greeting, words", [(None, "sent nothing"),
                                             (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "web server")])
def test_a_scheduler_that_never_answers_or_speaks_http_is_a_usage_error_in_time(tmp_path, greeting, words):
    pytest.importorskip("distributed")
    import time
    server, address = _server(greeting)
    try:
        start = time.monotonic()
        r = cli("check", "--json", "--scheduler", address, _write(tmp_path, EXPECT),
                env={"TAPECLI_SCHEDULER_TIMEOUT": "2"})
        assert r.code == 2 and words in r.json["error"]["message"], r.stdout
        assert time.monotonic() - start < 30
    finally:
        server.close()


@pytest.mark.parametrize("address, words", [("ucx://127.0.0.1:8786", "not ucx://"),
                                            ("tls://127.0.0.1:8786", "TLS settings")])
def test_ucx_and_tls_addresses_are_usage_errors(tmp_path, address, words):
    pytest.importorskip("distributed")
    r = cli("check", "--json", "--scheduler", address, _write(tmp_path, EXPECT), env={"TAPECLI_SCHEDULER_TIMEOUT": "2"})
    assert r.code == 2 and words in r.json["error"]["message"], r.stdout


# ------------------------------------------------------------------ strings and lists under the memory cap

CAP = "2e8"       # 200 MB, as the reproductions run


def _peak_run(tmp_path, source: str, *args):
    """``run --json`` of a .py program under the 200 MB cap: its JSON document and its peak resident size
    (the process's own VmHWM, so nothing it refused was ever allocated)."""
    runner = _write(tmp_path, PEAK_RUNNER, "runner.py")
    program = _write(tmp_path, source, "p.py")
    r = subprocess.run([sys.executable, runner, "run", "--json", *args, program], capture_output=True, text=True,
                       env=dict(os.environ, TAPECLI_MAX_MEMORY=CAP), timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, json.loads(r.stdout), int(r.stderr.rsplit("peak KiB:", 1)[1]) * 1024


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM in /proc is Linux's")
@pytest.mark.parametrize("source, line, words", [
    # F: the width comes from the arguments
    ("s = '%*d' % (600000000, 1)\n", 1, "a string formatted with '%'"),
    ("s = '%*c' % (60000000, 120421)\n", 1, "memory limit"),          # 60M 4-byte characters: 240 MB
    # G: an f-string's fill character takes 4 bytes, 45M of them
    ("s = f'{1:\U0001d465>45000000}'\nn = len(s)\n", 1, "memory limit"),
    # H: str.replace growth
    ("s = 'a' * 30000\nt = s.replace('', 'b' * 20000)\nn = len(t)\n", 2, "replace()"),
    ("s = 'a' * 3000000\nt = s.replace('a', '\U0001d465' * 20)\n", 2, "memory limit"),   # 60M 4-byte chars
    # I: f-string concatenation; I2: ''.join; and + and * of strings
    ("s = 'a' * 60000000\nt = f'{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}'\nn = len(t)\n", 2, "an f-string"),
    ("s = 'a' * 10000\nl = [s] * 60000\nt = ''.join(l)\nn = len(t)\n", 3, "join()"),
    ("s = 'a' * 30000000\nt = 'x'\nt = '{}{}{}{}{}{}{}'.format(s, s, s, s, s, s, s)\n", 3, "format()"),
    ("s = '\U0001d465' * 90000000\n", 1, "a repeated string"),
    ("s = 'a' * 60000000\nt = s + s + s + s\n", 2, "a string"),
    # strings cut into lists of new strings, and the keys sorted keeps
    ("s = 'a ' * 30000000\nl = s.split()\n", 2, "split()"),
    ("s = 'a,' * 30000000\nl = s.split(',')\n", 2, "split()"),
    ("s = 'a\\n' * 30000000\nl = s.splitlines()\n", 2, "splitlines()"),
    ("s = 'a' * 50000000\nl = list(s)\n", 2, "list() of a string"),
    ("s = 'a' * 50000000\nl = [c for c in s]\n", 2, "the characters of a string"),
    ("s = 'ab'\nl = [s] * 12000000\nm = sorted(l)\n", 3, "sorted()"),
    ("s = 'a' * 20000000\nm = sorted(s)\n", 2, "sorted()"),
    ("l = [1.0, 'a'] * 30000000\n", 1, "a repeated list"),
    # the text of a list of long strings: str(), print, f-strings
    ("s = '\U0001d465' * 1000\nl = [s] * 60000\nt = str(l)\n", 3, "the text of a list"),
    ("s = 'a' * 1000\nl = [[s] * 60000, [s] * 60000]\nprint(l)\n", 3, "the text of a list"),
])
def test_strings_and_lists_are_weighed_before_they_are_built(tmp_path, source, line, words):
    code, doc, peak = _peak_run(tmp_path, source)
    assert code == 3 and doc["error"]["kind"] == "LimitError", doc
    assert doc["error"]["line"] == line and words in doc["error"]["message"], doc["error"]
    assert peak < 300_000_000, peak


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM in /proc is Linux's")
def test_strings_and_lists_just_under_the_cap_are_built(tmp_path):
    source = ("s = 'a' * 10000000\nt = s.replace('a', 'bb')\nn = len(t)\nw = '%*d' % (20000000, 7)\n"
              "u = ('x ' * 1000000).split()\nk = len(u)\nv = '\U0001d465' * 10000000\nm = len(v)\n"
              "f = f'{1:\U0001d465>5000000}'\nq = len(f)\nt = 0\ns = 0\nw = len(w)\nu = 0\nv = 0\nf = 0\n")
    code, doc, peak = _peak_run(tmp_path, source)
    assert code == 0, doc
    assert doc["values"] == {"s": 0, "t": 0, "n": 20000000, "w": 20000000, "u": 0, "k": 1000000, "v": 0,
                             "m": 10000000, "f": 0, "q": 5000000}
    assert peak < 200_000_000, peak


def test_character_widths_are_read_without_scanning():
    from tapecli.runtime.limits import char_bytes
    assert [char_bytes(t) for t in ("abc", "caf\xe9", "\u0101" * 5, "a\U0001d465")] == [1, 1, 2, 4]
    assert char_bytes("abc", "\u0101") == 2 and char_bytes() == 1
