"""Deferred imports: scipy.special alone takes ~0.3 s to import, more than numpy."""

import functools
import importlib


@functools.cache
def special():
    """scipy.special, imported on first use."""
    return importlib.import_module("scipy.special")
