"""TensorFlow's hashes of strings, bit for bit, in NumPy (uint64 arithmetic wraps as C's does):

* :func:`fingerprint64`: FarmHash's ``Fingerprint64`` (``farmhashna::Hash64``), TensorFlow's ``Fingerprint64``
  (tf.fingerprint, tf.strings.to_hash_bucket_fast, Keras's Hashing);
* :func:`siphash`: SipHash-2-4 under a key of two 64-bit words (highwayhash's, TensorFlow's ``StrongKeyedHash``:
  tf.strings.to_hash_bucket_strong, a salted Hashing);
* :func:`legacy_hash64`: ``tensorflow::Hash64``, a MurmurHash64A with the seed 0xDECAFCAFFE
  (tf.strings.to_hash_bucket);
* :func:`fingerprint_cat64`: ``FingerprintCat64``, which tf.sparse.cross_hashed folds each feature into.

Each takes a sequence of bytes and works on all of them at once: their bytes in one buffer, words read at each
string's offsets. A loop over a string's 64- or 8-byte blocks runs over the strings sorted by their count of
blocks, longest first, so that each round updates a prefix of them (the strings that have that many blocks).
A round costs NumPy's calls, whatever the strings' count: many short strings are fast, and one long string is
slow (a megabyte takes about a second of FarmHash's 64-byte rounds, several of SipHash's 8-byte ones).
"""
from __future__ import annotations

import numpy as np

_K0, _K1, _K2 = np.uint64(0xC3A5C85C97CB3127), np.uint64(0xB492B66FBE98F273), np.uint64(0x9AE16A3B2F90404F)
_MURMUR = np.uint64(0xC6A4A7935BD1E995)     # MurmurHash64A's multiplier (also FingerprintCat64's)
_LEGACY_SEED = 0xDECAFCAFFE
_U64 = 0xFFFF_FFFF_FFFF_FFFF


class _Strings:
    """The strings' bytes in one buffer (8 zero bytes after the last, so a word read at any string's end stays
    inside), each string's start in it and its length."""

    def __init__(self, strings):
        self.lengths = np.fromiter(map(len, strings), np.int64, len(strings))
        self.starts = np.cumsum(self.lengths) - self.lengths
        self.buffer = np.frombuffer(b"".join(strings) + bytes(8), np.uint8)

    def word(self, at: np.ndarray, width: int = 8) -> np.ndarray:
        """The little-endian words of ``width`` bytes at the buffer's offsets ``at``, as uint64."""
        return self.buffer[at[:, None] + np.arange(width)].view(f"<u{width}").reshape(-1).astype(np.uint64)

    def words(self, at: np.ndarray, count: int) -> np.ndarray:
        """The ``count`` consecutive 8-byte words from each offset of ``at``: one row of them per word."""
        return self.buffer[at[:, None] + np.arange(8 * count)].view("<u8").T.astype(np.uint64)

    def tail(self, at: np.ndarray, count: np.ndarray) -> np.ndarray:
        """The ``count`` (< 8) bytes at ``at`` as a little-endian word, the bytes after them zero."""
        keep = (np.uint64(1) << (count.astype(np.uint64) * np.uint64(8))) - np.uint64(1)
        return self.word(at) & keep


_SHIFTS = [np.uint64(s) for s in range(65)]       # (made once: a scalar made per operation doubled its cost)


def _rotate(v, shift: int):
    return (v >> _SHIFTS[shift]) | (v << _SHIFTS[64 - shift])


def _shift_mix(v):
    return v ^ (v >> _SHIFTS[47])


def _rounds(counts: np.ndarray):
    """For rows sorted by ``counts`` descending: each round and how many rows take part in it."""
    ascending = counts[::-1]
    for k in range(int(counts[0]) if counts.size else 0):
        yield k, counts.size - int(np.searchsorted(ascending, k, side="right"))


def _by_count(starts: np.ndarray, lengths: np.ndarray, counts: np.ndarray, hash_sorted) -> np.ndarray:
    """``hash_sorted(starts, lengths, counts)`` of the strings sorted by their ``counts`` of blocks, descending,
    given back in the strings' order."""
    order = np.argsort(-counts, kind="stable")
    out = np.empty(order.size, np.uint64)
    out[order] = hash_sorted(starts[order], lengths[order], counts[order])
    return out


# ------------------------------------------------------------------ FarmHash's Fingerprint64

def _hash_len16(u, v, mul):
    a = _shift_mix((u ^ v) * mul)
    return _shift_mix((v ^ a) * mul) * mul


def _len0(data: _Strings, s, n):
    return np.full(s.size, _K2)


def _len1to3(data: _Strings, s, n):
    a, b, c = (data.buffer[at].astype(np.uint64) for at in (s, s + (n >> 1), s + n - 1))
    y = a + (b << np.uint64(8))
    z = n.astype(np.uint64) + (c << np.uint64(2))
    return _shift_mix(y * _K2 ^ z * _K0) * _K2


def _len4to7(data: _Strings, s, n):
    mul = _K2 + n.astype(np.uint64) * np.uint64(2)
    a = data.word(s, 4)
    return _hash_len16(n.astype(np.uint64) + (a << np.uint64(3)), data.word(s + n - 4, 4), mul)


def _len8to16(data: _Strings, s, n):
    mul = _K2 + n.astype(np.uint64) * np.uint64(2)
    a = data.word(s) + _K2
    b = data.word(s + n - 8)
    c = _rotate(b, 37) * mul + a
    d = (_rotate(a, 25) + b) * mul
    return _hash_len16(c, d, mul)


def _len17to32(data: _Strings, s, n):
    mul = _K2 + n.astype(np.uint64) * np.uint64(2)
    a = data.word(s) * _K1
    b = data.word(s + 8)
    c = data.word(s + n - 8) * mul
    d = data.word(s + n - 16) * _K2
    return _hash_len16(_rotate(a + b, 43) + _rotate(c, 30) + d, a + _rotate(b + _K2, 18) + c, mul)


def _len33to64(data: _Strings, s, n):
    mul = _K2 + n.astype(np.uint64) * np.uint64(2)
    a = data.word(s) * _K2
    b = data.word(s + 8)
    c = data.word(s + n - 8) * mul
    d = data.word(s + n - 16) * _K2
    y = _rotate(a + b, 43) + _rotate(c, 30) + d
    z = _hash_len16(y, a + _rotate(b + _K2, 18) + c, mul)
    e = data.word(s + 16) * mul
    f = data.word(s + 24)
    g = (y + data.word(s + n - 32)) * mul
    h = (z + data.word(s + n - 24)) * mul
    return _hash_len16(_rotate(e + f, 43) + _rotate(g, 30) + h, e + _rotate(f + a, 18) + g, mul)


def _weak_hash_len32(words, a, b):
    """WeakHashLen32WithSeeds of 32 bytes (``words``, their four words): a pair of words."""
    w, x, y, z = words
    a = a + w
    b = _rotate(b + a + z, 21)
    c = a
    a = a + x + y
    b = b + _rotate(a, 44)
    return a + z, b + c


# the state a string over 64 bytes starts from (its seed 81)
_LONG_X = np.uint64(81 * int(_K2) & _U64)
_LONG_Y = np.uint64((81 * int(_K1) + 113) & _U64)
_LONG_Z = np.uint64((lambda h: (h ^ h >> 47) * int(_K2) & _U64)((int(_LONG_Y) * int(_K2) + 113) & _U64))


def _longer(data: _Strings, s, n):
    """Over 64 bytes: a state of five words folded over each 64-byte block, then over the last 64 bytes."""
    def hashed(s, n, blocks):
        x = _LONG_X + data.word(s)
        y, z = np.full(s.size, _LONG_Y), np.full(s.size, _LONG_Z)
        v0, v1, w0, w1 = (np.zeros(s.size, np.uint64) for _ in range(4))
        for k, count in _rounds(blocks):
            p = slice(0, count)
            words = data.words(s[p] + 64 * k, 8)
            xp = _rotate(x[p] + y[p] + v0[p] + words[1], 37) * _K1
            yp = _rotate(y[p] + v1[p] + words[6], 42) * _K1
            xp ^= w1[p]
            yp += v0[p] + words[5]
            zp = _rotate(z[p] + w0[p], 33) * _K1
            v0[p], v1[p] = _weak_hash_len32(words[:4], v1[p] * _K1, xp + w0[p])
            w0[p], w1[p] = _weak_hash_len32(words[4:], zp + w1[p], yp + words[2])
            x[p], y[p], z[p] = zp, yp, xp
        mul = _K1 + ((z & np.uint64(0xFF)) << np.uint64(1))
        words = data.words(s + n - 64, 8)
        w0 = w0 + ((n - 1) & 63).astype(np.uint64)
        v0 = v0 + w0
        w0 = w0 + v0
        x = _rotate(x + y + v0 + words[1], 37) * mul
        y = _rotate(y + v1 + words[6], 42) * mul
        x ^= w1 * np.uint64(9)
        y += v0 * np.uint64(9) + words[5]
        z = _rotate(z + w0, 33) * mul
        v0, v1 = _weak_hash_len32(words[:4], v1 * mul, x + w0)
        w0, w1 = _weak_hash_len32(words[4:], z + w1, y + words[2])
        x, z = z, x
        return _hash_len16(_hash_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z, _hash_len16(v1, w1, mul) + x, mul)
    return _by_count(s, n, (n - 1) // 64, hashed)


_FARMHASH_BRANCHES = ((0, 0, _len0), (1, 3, _len1to3), (4, 7, _len4to7), (8, 16, _len8to16), (17, 32, _len17to32),
                      (33, 64, _len33to64), (65, np.iinfo(np.int64).max, _longer))


def fingerprint64(strings) -> np.ndarray:
    """FarmHash's Fingerprint64 of each of ``strings`` (bytes), as uint64."""
    data = _Strings(strings)
    out = np.empty(len(strings), np.uint64)
    for low, high, branch in _FARMHASH_BRANCHES:
        rows = np.flatnonzero((data.lengths >= low) & (data.lengths <= high))
        if rows.size:
            out[rows] = branch(data, data.starts[rows], data.lengths[rows])
    return out


def fingerprint_cat64(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """FingerprintCat64 of two arrays of fingerprints (uint64), element by element."""
    result = fp1 ^ _MURMUR
    result ^= _shift_mix(fp2 * _MURMUR) * _MURMUR
    result *= _MURMUR
    return _shift_mix(_shift_mix(result) * _MURMUR)


# ------------------------------------------------------------------ SipHash-2-4

def _sip_round(v0, v1, v2, v3):
    v0 = v0 + v1
    v1 = _rotate(v1, 64 - 13) ^ v0
    v0 = _rotate(v0, 32)
    v2 = v2 + v3
    v3 = _rotate(v3, 64 - 16) ^ v2
    v0 = v0 + v3
    v3 = _rotate(v3, 64 - 21) ^ v0
    v2 = v2 + v1
    v1 = _rotate(v1, 64 - 17) ^ v2
    v2 = _rotate(v2, 32)
    return v0, v1, v2, v3


def _sip_absorb(state, m, rounds: int = 2):
    v0, v1, v2, v3 = state
    v3 = v3 ^ m
    for _ in range(rounds):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ m, v1, v2, v3


def siphash(strings, key: tuple[int, int]) -> np.ndarray:
    """SipHash-2-4 of each of ``strings`` (bytes) under ``key``'s two words, as uint64."""
    data = _Strings(strings)
    k0, k1 = (np.uint64(k & _U64) for k in key)
    start = (k0 ^ np.uint64(0x736F6D6570736575), k1 ^ np.uint64(0x646F72616E646F6D),
             k0 ^ np.uint64(0x6C7967656E657261), k1 ^ np.uint64(0x7465646279746573))

    def hashed(s, n, blocks):
        state = [np.full(s.size, v) for v in start]
        for k, count in _rounds(blocks):
            p = slice(0, count)
            for v, new in zip(state, _sip_absorb([v[p] for v in state], data.word(s[p] + 8 * k))):
                v[p] = new
        last = data.tail(s + 8 * blocks, n & 7) | ((n & 0xFF).astype(np.uint64) << np.uint64(56))
        v0, v1, v2, v3 = _sip_absorb(state, last)
        v2 = v2 ^ np.uint64(0xFF)
        for _ in range(4):
            v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
        return v0 ^ v1 ^ v2 ^ v3
    return _by_count(data.starts, data.lengths, data.lengths // 8, hashed)


# ------------------------------------------------------------------ tensorflow::Hash64 (MurmurHash64A)

def _murmur_mix(k):
    return _shift_mix(k * _MURMUR) * _MURMUR


def legacy_hash64(strings) -> np.ndarray:
    """TensorFlow's Hash64 (seed 0xDECAFCAFFE) of each of ``strings`` (bytes), as uint64."""
    data = _Strings(strings)

    def hashed(s, n, blocks):
        h = np.uint64(_LEGACY_SEED) ^ (n.astype(np.uint64) * _MURMUR)
        for k, count in _rounds(blocks):
            p = slice(0, count)
            h[p] = (h[p] ^ _murmur_mix(data.word(s[p] + 8 * k))) * _MURMUR
        rest = n & 7
        tail = np.flatnonzero(rest)
        h[tail] = (h[tail] ^ data.tail(s[tail] + 8 * blocks[tail], rest[tail])) * _MURMUR
        return _shift_mix(_shift_mix(h) * _MURMUR)
    return _by_count(data.starts, data.lengths, data.lengths // 8, hashed)
