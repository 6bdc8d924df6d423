"""What this machine's CPU is, as the system says: the kernels that follow TensorFlow's bits on it ask."""
from __future__ import annotations

import functools


@functools.cache
def cpu() -> tuple[str, str, frozenset]:
    """This machine's CPU maker (``vendor_id``: GenuineIntel, AuthenticAMD), its family and its instruction flags,
    as the system says (empty where it does not)."""
    try:
        with open("/proc/cpuinfo") as info:
            lines = [line.split(":", 1) for line in info if line.startswith(("flags", "vendor_id", "cpu family"))]
    except OSError:
        return "", "", frozenset()
    fields = {key.strip(): value.split() for key, value in lines}
    return (" ".join(fields.get("vendor_id", [])), " ".join(fields.get("cpu family", [])),
            frozenset(fields.get("flags", [])))


@functools.cache
def vector_width() -> int | None:
    """Floats in the vectors oneDNN compiles for on this machine (16 with AVX-512, 8 with AVX2 and FMA), or None
        where TensorFlow's oneDNN kernels are not those tapecli follows (another architecture, an older x86, a system
    that does not say)."""
    flags = cpu()[2]
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return 16
    if {"avx2", "fma"} <= flags:
        return 8
    return None
