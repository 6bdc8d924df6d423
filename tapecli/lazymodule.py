"""A module imported on first use (docs/performance.md, "Start-up"): the families of ops, kernels and builtins a
small run never calls stay out of its start-up. tests/project/test_architecture.py reads ``LazyModule("...")`` as an
import of that module, so the rooms' order holds for these too."""
from __future__ import annotations

import importlib


class LazyModule:
    """A module imported on the first read of one of its attributes. Given the namespace that binds it (a module's
    ``globals()``), the module then takes its place there under its last name: later reads are a plain global's."""

    __slots__ = ("name", "module", "namespace")

    def __init__(self, name: str, namespace: dict | None = None):
        self.name = name
        self.module = None
        self.namespace = namespace

    def __getattr__(self, attr):
        if self.module is None:
            self.module = importlib.import_module(self.name)
            if self.namespace is not None:
                self.namespace[self.name.rpartition(".")[2]] = self.module
        return getattr(self.module, attr)
