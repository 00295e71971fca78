"""Imports every module that registers fusion methods (imported by :func:`.registry.get_method`)."""

from __future__ import annotations

from . import flagr, ranks, scores, trained

__all__ = ["flagr", "ranks", "scores", "trained"]
