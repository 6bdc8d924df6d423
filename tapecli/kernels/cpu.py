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
