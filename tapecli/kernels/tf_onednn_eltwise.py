"""oneDNN's float32 activations as TensorFlow runs them on an x86 CPU where Grappler's remapper fuses them: the
eltwise post-op of a MatMul fused with its bias (tanh, logistic, elu, gelu_erf, gelu_tanh: ``_FusedMatMul``), and
the swish kernel that replaces ``x * sigmoid(x)`` (``_MklSwish``), bit for bit (ops/remapper.py decides where).

They are the algorithms of oneDNN 3.7's jit eltwise injector (TensorFlow 2.21 bundles oneDNN 3.7.3), as its
AVX-512 code computes them, with TensorFlow's denormals flushed to zero (inputs read as zeros, results flushed):

- exp (tf_onednn.exp): range reduction by ln 2 and a degree-5 polynomial.
- logistic: ``e = exp(-|x|)``, ``e / (e + 1)``, and ``1 - that`` where x's sign bit is clear.
- tanh: odd; |x| below ``_TANH_LINEAR`` (and NaN) is itself, from ``_TANH_SATURATION`` 1; between, a degree-6
  polynomial of ``|x| - h`` in fused multiply-adds, one of 32 for each half binade, h being |x| cut to its sign,
  exponent and first fraction bit (which pick the polynomial).
- elu: x where x > 0 (and NaN), else ``exp(x) - 1``.
- swish: ``x * logistic(x)``.
- gelu_tanh: ``0.5 x (1 + tanh(sqrt(2 / pi) x (1 + 0.044715 x^2)))``, in oneDNN's order.
- gelu_erf: ``0.5 x (1 + erf(x / sqrt 2))``, erf(x / sqrt 2) a degree-5 polynomial of |x| from a table of 24, one
  per quarter binade from 2^-21... (the AVX-512 kernel; with AVX2 oneDNN takes Abramowitz and Stegun's formula,
  which tapecli does not follow: ``gelu_erf_known``).

A fused multiply-add is tf_matmul.fma's, rounded once. (Measured against TensorFlow 2.21's fused kernels on an
AVX-512 machine: tests/data/tf_onednn_eltwise_bits.json, recorded by benchmarks/record_tf_onednn_eltwise.py.)"""
from __future__ import annotations

import numpy as np

from tapecli.kernels.tf_matmul import fma
from tapecli.kernels.cpu import vector_width
from tapecli.kernels.tf_onednn import exp

_F32, _U32 = np.float32, np.uint32
_SIGN, _MAGNITUDE = _U32(0x80000000), _U32(0x7FFFFFFF)
_TINY = np.finfo(np.float32).tiny
_ONE, _HALF = _F32(1), _F32(0.5)


def _word(w: int) -> np.float32:
    return np.array([w], _U32).view(_F32)[0]


def _table(words: str) -> np.ndarray:
    """A coefficient table of oneDNN's: 32 float32 words (hex) per degree, lowest degree first."""
    return np.array([int(w, 16) for w in words.split()], _U32).view(_F32).reshape(-1, 32)


_TANH_IDX_BIAS, _TANH_IDX_MASK = _U32(0x39800000), _U32(0xFFC00000)
_TANH_LINEAR, _TANH_SATURATION = _word(0x39DDB3D7), _word(0x41102CB3)
_TANH = _table("""
00000000 39bfffff 39ffffff 3a3ffffe 3a7ffffb 3abffff7 3affffeb 3b3fffdc 3b7fffab 3bbfff70 3bfffeab 3c3ffdc0
3c7ffaab 3cbff701 3cffeaad 3d3fdc08 3d7faacd 3dbf7081 3dfeacc9 3e3dc7fd 3e7acbf5 3eb77a9f 3eec9a9f 3f22991f
3f42f7d6 3f67b7cc 3f76ca83 3f7ebbe9 3f7fd40c 3f7fff32 3f7ffffc 3f800000 3f800000 3f800018 3f7fffe8 3f7fffda
3f7fffdc 3f7fffdc 3f7fffac 3f7fff70 3f7ffeec 3f7ffdc0 3f7ffbed 3f7ff704 3f7feff5 3f7fdbca 3f7fbfff 3f7f7041
3f7f009b 3f7dc36c 3f7c0aa8 3f7734b8 3f70a4de 3f5f1fd8 3f495493 3f18b9ec 3ed706cb 3e390b06 3d90b11f 3c21a053
3aaf7fdb 37ccc1a3 355c6733 00000000 00000000 be4e0ff1 3d25b1b1 3d6b6dab 3c9fb1d5 babff06f 3c07b3f6 bb3fc1bc
3a9f5921 bbbf06f2 bbb0f402 bc47db9e bc73d5e7 bca25bda bcfca780 bd40e07c bd7dab03 bdbe4a0f bdfb14a5 be36cc8d
be6bd102 be9fe7c5 beba0f10 bec206a8 bea3c388 be277d62 bd8b7960 bc209f49 baad44ca b7c6eeac b663aa41 00000000
00000000 45b3ae96 c414eb20 c450e02e c3152b4e bead2f56 c2162e02 beb4bd5a c11a59a4 bed2f507 c020d32c 3dd0f506
bf2a75e2 bff950e3 bed47334 be809b8c beb64532 be961a5b be9b63ac bea0d4b2 be828a77 be378612 bdc20908 3d2d3957
3dd46e89 3db3f629 3d2c5e7b 3bd20403 3a59dfae 3770af45 372cc014 00000000 00000000 cc981a1b 4a7edd3d 4ab1007c
48fedd9c 41a557b5 477ee32a 422557f5 45ff3ce4 42a55641 446e0867 c33dc19a 42915214 43af4fad 4110fe88 c1099b75
3fc8a8dc bfbeaef5 be365aad 3f4d9652 3ddfa08f 3e34e9b8 3e2d07a6 3dc63567 3cdaeb78 bcd17537 bc92829c bb43ab99
b9b471dd b6baad5a b78bafc7 00000000 00000000 52f688d5 d0505c72 d08f98e3 ce505cc9 c7162b8a cc5061d6 c7162bdf
ca50b37f c7162a3a c8422086 471a714e c5ece1f1 c70e3d90 c3eba94a 43e0c424 c21f4552 42217cc8 405e7dc4 c10dd401
3e96b602 bd1a6d2f bd393883 bd674682 bd310016 b961e269 3ba32495 3a7680d5 38b3173c 35a9deea 375c3f2a 00000000
00000000 d8995ed1 558285ea 55b2cd69 53028625 4bc9991f 5082898a 4b4999b3 4e02c07c 4ac99764 4b72c822 ca40c0e1
489413e4 49b12224 46134c4e c60c2d57 43c83910 c3c872d1 c186bc9e 42325bc3 bf2ffa4a 3d9a203c bc545a43 bae08fee
3c80225d 3b1fd1df ba36b9d1 b91de544 b71f100f b408e2ed b685fec8 00000000
""")
_GELU_IDX_BIAS, _GELU_RBOUND = np.int32(-0x3DE00001), _word(0x40B15CEE)      # (0xc21fffff as int32)
_GELU_ERF = _table("""
a6f2cb94 32827792 3381cc0c 34523d4a 351ac44d 35f36d88 36ee8229 37b8a3bb 3867a213 3940033b 3a2a5a1d 3ae35863
3b7828f2 3c08b14b 3c515ed3 bb503236 bd8d8e5e be8abcd9 bf0c19a2 beccb328 3e176ced 3f470d99 3f7abb28 3f800000
00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 3f4c422a 3f4c421f 3f4c4207 3f4c41cb
3f4c413b 3f4c3fad 3f4c3a2f 3f4c2d40 3f4c146a 3f4bc341 3f4ad08c 3f48f8cf 3f45fac7 3f404e07 3f3b980f 3f48dff3
3f78b21b 3fbb0704 40019c32 3fe536d6 3f81331e 3e6c8684 3c98f936 00000000 3f800000 00000000 00000000 00000000
00000000 00000000 00000000 00000000 b62173f4 3735e4cf 37f2ff89 388c23be 3917535c 39ab2ab0 3a60fadb 3af9b960
3b6e5491 3c0a4ec5 3ca5aa8c 3d2138d9 3d8737d4 3ddfb660 3e0f27ab 3d94004b be0efdeb bf1d96c3 bf89db58 bf6d9897
bef69fb8 bdc4f8a8 bbde6422 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
be081a19 be084570 be08639b be089837 be08f409 be09ab95 be0b66d0 be0e400a be124df8 be1bde02 be2f19c9 be4931bf
be685fbc be89c95f be96cbca be8044aa be0550f2 3dcfd6a1 3e94c826 3e79345f 3decec91 3ca46568 3aa1e00a 00000000
00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 ba3d61db 39f097a3 3a5845dc 3ab1fa35
3b0cefb8 3b653ab6 3bcae527 3c221712 3c6c5840 3cc0a703 3d1dcc19 3d63656d 3d955907 3dbf9910 3dd53f69 3db7dcef
3d639ebe ba6ede48 bd22be69 bd041cf1 bc64f5ab bb097a32 b8ebf380 00000000 00000000 00000000 00000000 00000000
00000000 00000000 00000000 00000000 3cb7d80c 3c9b6050 3c978d11 3c92e850 3c8d058b 3c848454 3c6cd623 3c4c824b
3c2a7935 3be0b390 3b0651ac bb232f53 bbd42fa0 bc2c5366 bc492c9e bc2a7aa6 bbd55d04 ba823a76 3b102aa8 3ae25a7e
3a31f792 38b84375 3689bb5a 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
""")
_GELU_TANH_FIT, _SQRT_TWO_OVER_PI = _word(0x3D372713), _word(0x3F4C422A)


def known() -> bool:
    """Whether this machine's TensorFlow runs these kernels (x86-64 with AVX2 and FMA, or AVX-512)."""
    return vector_width() is not None


def gelu_erf_known() -> bool:
    """Whether its gelu_erf is the one here (the AVX-512 kernel's table)."""
    return vector_width() == 16


def _flushed(v: np.ndarray) -> np.ndarray:
    """Subnormal numbers as zeros of their sign (flush-to-zero, denormals-are-zero)."""
    bits = v.view(_U32)
    return np.where((bits & _MAGNITUDE) < _U32(0x00800000), bits & _SIGN, bits).view(_F32)


def _input(x) -> np.ndarray:
    return _flushed(np.ascontiguousarray(x, _F32))


def _logistic(x: np.ndarray) -> np.ndarray:
    bits = x.view(_U32)
    e = exp((bits | _SIGN).view(_F32))                      # exp(-|x|) (a NaN stays one)
    y = _flushed(e / (e + _ONE))
    return np.where(bits & _SIGN, y, _ONE - y)


def _tanh(x: np.ndarray) -> np.ndarray:
    bits = x.view(_U32)
    magnitude = bits & _MAGNITUDE
    s = magnitude.view(_F32)
    index = ((magnitude - _TANH_IDX_BIAS) >> _U32(22)) & _U32(31)        # (vpermt2ps reads 5 bits of the index)
    r = s - (magnitude & _TANH_IDX_MASK).view(_F32)
    pol = _TANH[6][index]
    for degree in range(5, -1, -1):
        pol = fma(pol, r, _TANH[degree][index])
    # (oneDNN's "greater than" is vcmpps's not-less-or-equal, true for NaN: a NaN is itself)
    out = np.where(~(s >= _TANH_SATURATION), pol, _ONE)
    out = np.where(~(s >= _TANH_LINEAR), s, out)
    return (out.view(_U32) ^ (bits & _SIGN)).view(_F32)


def logistic(x) -> np.ndarray:
    """oneDNN's eltwise logistic of a float32 array."""
    with np.errstate(all="ignore"):
        return _logistic(_input(x))


def tanh(x) -> np.ndarray:
    """oneDNN's eltwise tanh of a float32 array."""
    with np.errstate(all="ignore"):
        return _tanh(_input(x))


def elu(x) -> np.ndarray:
    """oneDNN's eltwise elu (alpha 1) of a float32 array."""
    x = _input(x)
    with np.errstate(all="ignore"):
        return np.where(~(x <= 0), x, exp(x) - _ONE)       # (not-less-or-equal: a NaN is itself)


def swish(x) -> np.ndarray:
    """oneDNN's eltwise swish (alpha 1) of a float32 array: TensorFlow's _MklSwish."""
    x = _input(x)
    with np.errstate(all="ignore"):
        return _flushed(_logistic(x) * x)


def gelu_tanh(x) -> np.ndarray:
    """oneDNN's eltwise gelu_tanh of a float32 array."""
    x = _input(x)
    with np.errstate(all="ignore"):
        g = fma(_flushed(x * x), _GELU_TANH_FIT, _ONE)
        g = _flushed(_flushed(g * x) * _SQRT_TWO_OVER_PI)
        return _flushed(_flushed((_tanh(g) + _ONE) * _HALF) * x)


def gelu_erf(x) -> np.ndarray:
    """oneDNN's eltwise gelu_erf of a float32 array (its AVX-512 kernel)."""
    x = _input(x)
    bits = x.view(_U32)
    magnitude = bits & _MAGNITUDE
    s = magnitude.view(_F32)
    with np.errstate(all="ignore"):
        index = np.clip((magnitude.view(np.int32) + _GELU_IDX_BIAS) >> 21, 1, 24)      # (int32 wraps, as vpaddd)
        index = np.where(_GELU_RBOUND < s, 23, index)
        pol = _GELU_ERF[5][index]
        for degree in range(4, -1, -1):
            pol = fma(pol, s, _GELU_ERF[degree][index])
        pol = (pol.view(_U32) ^ (bits & _SIGN)).view(_F32)
        return _flushed(_flushed(x * (pol + _ONE)) * _HALF)
