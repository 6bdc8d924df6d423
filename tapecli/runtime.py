"""Per-run settings and diagnostics shared by the interpreter and the ops."""
from __future__ import annotations

import numpy as np


class Settings:
    def __init__(self):
        self.reset()

    def reset(self, float_dtype=np.float32, max_elements: int = 100_000_000):
        self.float_dtype = np.dtype(float_dtype)
        self.max_elements = max_elements
        self.line: int | None = None        # the statement being run, for records and warnings
        self.warnings: list[dict] = []

    def warn(self, message: str, line: int | None = None) -> None:
        entry = {"line": self.line if line is None else line, "message": message}
        if entry not in self.warnings:
            self.warnings.append(entry)


STATE = Settings()
