"""Imports every module that registers fusion methods (imported by :func:`.registry.get_method`)."""

from __future__ import annotations

from . import ranks, scores
from . import flagr  # noqa: F401  # FLAGR's methods

__all__ = ["ranks", "scores"]
