"""The backward pass's order (autodiff/backward.py): where a path is a chain, ``_chain`` gives it without the queue's
tables, and the order is the queue's (so the gradients' bits are too)."""
from pathlib import Path

import pytest

import tapecli
from tapecli.autodiff import backward

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.tdf"))

PROGRAMS = {
    "scalar loop": ("var x = 0.5\ntape t:\n    y = x * 1.0\n    for i in range(20):\n        y = sin(y) * 1.01\n"
                    "dy_dx = t.gradient(y, x)\n", True),
    "a result read twice by one op": ("var x = 0.3\ntape t:\n    y = x * 2.0\n    for i in range(5):\n"
                                      "        y = y * y\ng = t.gradient(y, x)\n", True),
    "a result read by two ops": ("var x = 0.3\ntape t:\n    y = x * 2.0\n    for i in range(5):\n"
                                 "        y = y * y + sin(y) * 0.5\ng = t.gradient(y, x)\n", False),
    "vectors": ("var x = [1.0, 2.0, 3.0]\ntape t:\n    y = reduce_sum(tanh(x) * x)\ng = t.gradient(y, x)\n", True),
    "two results meeting": ("var x = 0.7\ntape t:\n    a = sin(x)\n    b = cos(x)\n    y = a * b\n"
                            "g = t.gradient(y, x)\n", False),
    "a result read two steps on": ("var x = 0.7\ntape t:\n    a = sin(x)\n    b = a * 3.0\n    y = b * a\n"
                                   "g = t.gradient(y, x)\n", False),
    "two targets": ("var x = 0.7\ntape t:\n    a = sin(x)\n    b = a * 3.0\ng = t.gradient([a, b], x)\n", False),
}


@pytest.fixture
def compared(monkeypatch):
    """Every path the chain's shortcut is asked about: whether it took it; each order it gave is the queue's."""
    taken = []
    chain = backward._chain

    def both(path, targets, reach):
        order = chain(path, targets, reach)
        taken.append(order is not None)
        if order is not None:
            queued = backward._queue(path, targets, reach, {})
            assert queued is not None and [id(n) for n in order] == [id(n) for n in queued]
        return order
    monkeypatch.setattr(backward, "_chain", both)
    return taken


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_chains_order_is_the_queues(name, compared):
    source, is_chain = PROGRAMS[name]
    expected = tapecli.run(source).values["g" if "g =" in source else "dy_dx"]
    assert compared and any(compared) == is_chain
    compared.clear()
    backward_taken = tapecli.run(source).values["g" if "g =" in source else "dy_dx"]
    assert repr(backward_taken) == repr(expected)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_chain_is_ordered_as_the_queue_orders_it(example, compared):
    tapecli.run(example)


def test_a_processs_first_backward_pass_gives_the_bits_of_its_later_ones():
    # an op's compiled small rules were made by its first gradient, which ran on tensors: the first run of an
    # overflowing second derivative gave a NaN of the other sign than every run after it
    import subprocess
    import sys
    program = ("var x = 0.5\ntape outer:\n    tape inner:\n        y = x * 1.0\n        for i in range(130):\n"
               "            y = sqrt(exp(y))\n    g = inner.gradient(y, x)\nh = outer.gradient(g, x)\n")
    script = ("import tapecli\nfor _ in range(3):\n"
              f"    print(tapecli.run({program!r}).values['h'].tobytes().hex())\n")
    runs = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert len(runs) == 3 and len(set(runs)) == 1
