"""The TAPECLI_* environment variables that take a value: what each accepts, read in one place.

A value a variable does not accept is a UsageError naming the variable and what it accepts
(the command line checks them all before it does anything: exit 2). Variables that take any
text (TAPECLI_CACHE_DIR, TAPECLI_SCHEDULER) or are switches (TAPECLI_DEBUG) are not listed.
"""
from __future__ import annotations

import math
import os

from tapecli.errors import UsageError


def _positive_number(text: str) -> float:
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError
    return value


def _bytes(text: str) -> int:
    return int(_positive_number(text))          # 1000000000 or 1e9


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError
    return value


def _choice(*words: str):
    def parse(text: str) -> str:
        if text not in words:
            raise ValueError
        return text
    return parse


# name -> (parser, what it accepts)
VARIABLES = {
    "TAPECLI_MAX_MEMORY": (_bytes, "a positive number of bytes, e.g. 1e9"),
    "TAPECLI_MAX_SECONDS": (_positive_number, "a positive number of seconds, e.g. 30"),
    "TAPECLI_NUMBA_THRESHOLD": (_count, "a whole number of elements, e.g. 1000000"),
    "TAPECLI_FUSION_THRESHOLD": (_count, "a whole number of elements, e.g. 1000000"),
    "TAPECLI_SCHEDULER_TIMEOUT": (_positive_number, "a positive number of seconds, e.g. 10"),
    "TAPECLI_COMPILE_LOCK_TIMEOUT": (_positive_number, "a positive number of seconds, e.g. 10"),
    "TAPECLI_BACKEND": (_choice("auto", "numpy", "numba"), "auto, numpy or numba"),
    "TAPECLI_FUSION": (_choice("0", "1"), "0 or 1"),
    "TAPECLI_PLAN_KERNELS": (_choice("0", "1"), "0 or 1"),
    "TAPECLI_CODE_CACHE": (_choice("0", "1"), "0 or 1"),
    "TAPECLI_ACCEL": (_choice("0", "1"), "0 or 1"),
    "TAPECLI_PARSER": (_choice("compare"), "compare"),
    "TAPECLI_TF_ON_CPYTHON": (_choice("0", "1", "auto"), "0, 1 or auto"),
}


def setting(name: str, default=None):
    """The value of ``name`` (one of VARIABLES), or ``default`` where it is unset or empty."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    parse, accepts = VARIABLES[name]
    try:
        return parse(text)
    except (ValueError, OverflowError):
        raise UsageError(f"{name}={text}: expected {accepts}") from None


def check_all() -> None:
    """Raise the UsageError of the first variable whose value is not accepted."""
    for name in VARIABLES:
        setting(name)
