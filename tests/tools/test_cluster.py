"""--scheduler: check suites and sweeps on a real Dask LocalCluster (worker processes on 127.0.0.1, two of
them with one thread each), compared with the same work in one process. Skipped without distributed."""
from __future__ import annotations

import os
import signal
import socket

import numpy as np
import pytest

pytest.importorskip("distributed")

from conftest import cli  # noqa: E402
from tapecli.api import Options  # noqa: E402
from tapecli.tools.cluster import Cluster  # noqa: E402
from tapecli.tools.sweep import run_sweep  # noqa: E402

CUBE = "var x = 0.0\ntape t:\n    y = reduce_sum(x * x * x)\ng = t.gradient(y, x)\n"


@pytest.fixture(scope="module")
def cluster():
    with Cluster("local:2") as c:
        yield c


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """200 small files: most pass, every 17th has a failing expectation, every 50th a program error."""
    folder = tmp_path_factory.mktemp("suite")
    for i in range(200):
        if i % 50 == 49:
            text = f"var x = {i}.0\ny = x +\n"
        else:
            wrong = 1.0 if i % 17 == 0 else 0.0
            text = (f"var x = {i % 7}.0\ntape t:\n    y = x * x\ng = t.gradient(y, x)\n"
                    f"expect g == {2 * (i % 7) + wrong}\nexpect y == {(i % 7) ** 2}.0\n")
        (folder / f"f{i:03d}.tdf").write_text(text)
    return folder


def test_check_on_the_cluster_equals_one_process(cluster, suite, tmp_path):
    address = cluster.local.scheduler_address
    one = cli("check", suite, "--json", "--junit", tmp_path / "one.xml")
    many = cli("check", suite, "--json", "--junit", tmp_path / "many.xml", "--scheduler", address)
    assert one.code == many.code == 3
    doc = many.json
    assert doc.pop("scheduler") == address
    assert doc == one.json
    assert (doc["passed"], doc["failed"], doc["errors"]) == (2 * 196 - 12, 12, 4)
    assert untimed((tmp_path / "one.xml").read_text()) == untimed((tmp_path / "many.xml").read_text())


def untimed(junit: str) -> str:
    """JUnit XML without its `time` attributes (the seconds each run took)."""
    import re
    return re.sub(r' time="[0-9.]+"', "", junit)


def test_a_500_point_sweep_on_the_cluster_equals_one_process_and_each_point(cluster, tmp_path):
    xs = np.linspace(-3, 3, 500).astype(np.float32)
    np.save(tmp_path / "x.npy", xs)
    (tmp_path / "p.tdf").write_text(CUBE)
    args = ("grad", tmp_path / "p.tdf", "--json", "--sweep", f"x=@{tmp_path / 'x.npy'}")
    one = cli(*args)
    many = cli(*args, "--scheduler", cluster.local.scheduler_address)
    assert one.code == many.code == 0
    doc = many.json
    doc.pop("scheduler")
    assert doc == one.json
    values = np.asarray(doc["gradients"][0]["value"], dtype=np.float32)
    import tapecli
    per_point = np.asarray([tapecli.run(CUBE, sets={"x": x}).gradients[0]["value"] for x in xs])
    assert np.array_equal(values, per_point)
    np.testing.assert_allclose(values, 3 * xs.astype(np.float64) ** 2, rtol=1e-6, atol=1e-6)


def test_a_vectorised_sweep_on_the_cluster_from_the_environment_equals_one_process(cluster, tmp_path):
    np.save(tmp_path / "x.npy", np.linspace(-6, 6, 500).astype(np.float32))
    (tmp_path / "p.tdf").write_text("var x = 0.0\ntape t:\n    y = sigmoid(x)\ndy_dx = t.gradient(y, x)\n")
    args = ("grad", tmp_path / "p.tdf", "--json", "--sweep", f"x=@{tmp_path / 'x.npy'}")
    one, many = cli(*args), cli(*args, env={"TAPECLI_SCHEDULER": cluster.local.scheduler_address})
    assert one.code == many.code == 0 and one.json["sweep"]["vectorised"]
    doc = many.json
    assert doc.pop("scheduler") == cluster.local.scheduler_address
    assert doc == one.json


def test_an_unreachable_scheduler_is_a_usage_error_naming_it(tmp_path):
    with socket.socket() as s:                     # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "p.tdf").write_text("var x = 1.0\nexpect x == 1.0\n")
    r = cli("check", tmp_path / "p.tdf", "--scheduler", f"tcp://127.0.0.1:{port}",
            env={"TAPECLI_SCHEDULER_TIMEOUT": "1"})
    assert r.code == 2 and f"127.0.0.1:{port}" in r.stderr and "within 1 s" in r.stderr


SLOW = ("var x = 0.0\ntape t:\n    y = x * 0.0\n    for i in range(60):\n        y = y + reduce_sum(x * x * x)\n"
        "g = t.gradient(y, x)\n")


def test_killing_a_worker_mid_run_still_gives_every_result(cluster):
    """Last in this file: it leaves the cluster one worker short while the nanny restarts it."""
    xs = np.linspace(-2, 2, 240).astype(np.float32)
    expected, _ = run_sweep("grad", SLOW, "p.tdf", Options(), {"x": xs})
    pids = cluster.client.run(os.getpid)
    killed = []

    def progress(k):
        if not killed:              # the first batch is back: kill a worker that is running one now
            busy = [addr for addr, keys in cluster.client.processing().items() if keys]
            assert busy
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(busy[0])
    outcomes, _ = run_sweep("grad", SLOW, "p.tdf", Options(), {"x": xs}, cluster=cluster, progress=progress)
    assert killed
    assert len(outcomes) == 240 and outcomes == expected
    np.testing.assert_allclose([o["doc"]["gradients"][0]["value"] for o in outcomes], 180 * xs.astype(float) ** 2,
                               rtol=1e-5)
