"""TensorFlow's float32 Reciprocal and Rsqrt on this machine's kind of CPU (kernels/tf_rcpps.py,
tf_float32.reciprocal and rsqrt): RCPPS's and RSQRTPS's tables and Eigen's Newton steps, against TensorFlow 2.21's
answers recorded on an AMD CPU of family 25."""
import hashlib

import numpy as np
import pytest

from tapecli.kernels import cpu, tf_float32, tf_rcpps

# sha256 of TensorFlow's tf.math.reciprocal of _inputs(seed) (its NaN as NumPy's), and of 8 plain values
RECORDED = {0: "36258ecb1ade4b6a79b7ac5a15629b4d64bf135d24d0dc9a269cdd4eb8201e6c",
            1: "031e694917c0f2cf794c21ff387492d4ea80f18baaed4e22e948698f6a5db649",
            2: "418bd59f462865653e2bf277cde06471899970864ec1c0dc8a86728e0f1661dc"}
PLAIN = ([0.1, 0.3, 3.0, 7.0, 1e-3, 123.456, -0.75, 2.5e30],
         [10.0, 3.3333332538604736, 0.3333333432674408, 0.1428571343421936, 1000.0, 0.008100051432847977,
          -1.3333333730697632, 3.999999918644759e-31])
# Rsqrt's, of |_inputs(seed)| for seeds 0 and 1 and of _inputs(2) (NaN for the negative ones)
RSQRT_RECORDED = {0: "9c1407277b420905d42c980144340e1a89ae2659e3e1c0ad99e2e83ffb106da9",
                  1: "fb50c188d2c8e0f63bf8a16153754ff7248ae17e338e08650ff62a30b8cd66b6",
                  2: "49ebc763dc5da37c2f14c681e7c131a6f0de5012ee508f64acf4af16dff09de3"}
RSQRT_PLAIN = ([0.1, 0.3, 3.0, 7.0, 1e-3, 123.456, 0.75, 2.5e30],
               [3.1622774600982666, 1.8257417678833008, 0.5773502588272095, 0.37796446681022644, 31.62277603149414,
                0.09000028669834137, 1.154700517654419, 6.324555200944669e-16])
on_the_tables_cpu = pytest.mark.skipif(not tf_rcpps.known(), reason="TensorFlow's answers of another CPU")


def _inputs(seed):
    """Floats of every exponent (random bits), zeros, infinities, NaN, subnormals, then ordinary values."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    specials = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, 1e-38, 1.17549435e-38, 2e38, 1.0],
                        np.float32)
    return np.concatenate([bits.view(np.float32), specials, rng.uniform(-3, 3, 4004).astype(np.float32)])


def _rsqrt_inputs(seed):
    """|_inputs(seed)| for seeds 0 and 1 (roots of every exponent), _inputs(2) itself (NaN for negatives)."""
    return np.abs(_inputs(seed)) if seed < 2 else _inputs(seed)


# each function, its recorded digests and plain values, its inputs, and what another CPU computes instead
FUNCTIONS = {"reciprocal": (tf_float32.reciprocal, RECORDED, PLAIN, _inputs, lambda x: np.float32(1) / x),
             "rsqrt": (tf_float32.rsqrt, RSQRT_RECORDED, RSQRT_PLAIN, _rsqrt_inputs,
                       lambda x: np.float32(1) / np.sqrt(x))}


@on_the_tables_cpu
@pytest.mark.parametrize("name, seed", [(name, seed) for name in FUNCTIONS for seed in FUNCTIONS[name][1]])
def test_the_packets_give_tensorflows_bits(name, seed, monkeypatch):
    function, recorded, _, inputs, _ = FUNCTIONS[name]
    x = inputs(seed)
    monkeypatch.setattr(tf_float32, "PACKET_LIMIT", x.size)
    y = function(x)
    y[np.isnan(y)] = np.nan
    assert hashlib.sha256(y.tobytes()).hexdigest() == recorded[seed]


@on_the_tables_cpu
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_plain_values_and_the_scalar_tail(name):
    function, _, plain, _, alone = FUNCTIONS[name]
    x, expected = (np.array(v, np.float32) for v in plain)
    assert function(x).tolist() == expected.tolist()
    tail = np.concatenate([x, x[:3]])           # (the last 3 of 11: Eigen's scalar path, IEEE's)
    assert function(tail)[8:].tolist() == alone(x[:3]).tolist()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_another_cpu_keeps_ieee_arithmetic(name, monkeypatch):
    function, _, plain, _, alone = FUNCTIONS[name]
    x = np.array(plain[0], np.float32)
    monkeypatch.setattr(tf_rcpps, "cpu", lambda: ("GenuineIntel", "6", frozenset({"avx"})))
    assert function(x).tolist() == alone(x).tolist()


def test_the_cpu_is_read_once_from_the_system():
    vendor, family, flags = cpu.cpu()
    assert isinstance(vendor, str) and isinstance(family, str) and isinstance(flags, frozenset)


@on_the_tables_cpu
def test_erfcs_packets_beyond_one_take_the_reciprocal():
    """generic_fast_erfc's preciprocal of x^2 beyond |x| = 1: TensorFlow's erfc of U(-6, 6), recorded (sha256)."""
    from tapecli.kernels import tf_erfc
    x = np.random.default_rng(7).uniform(-6, 6, 4096).astype(np.float32)
    assert hashlib.sha256(tf_erfc.erfc(x).tobytes()).hexdigest() == \
        "0cf87a5106bcb48fc617b9f2eaa321fbbfb86dd437d30a56bbb30e2066322255"
