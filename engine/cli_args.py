"""Argument types for the command-line tools: a bad value becomes argparse's usage message and
exit status 2, never a traceback."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def whole(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """A whole number within [lo, hi]."""
    def parse(text: str) -> int:
        try:
            if not text.isascii():
                raise ValueError(text)
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {value}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi}, got {value}")
        return value
    return parse


def number(lo: float | None = None, hi: float | None = None, *,
           above: bool = False) -> Callable[[str], float]:
    """A finite number within [lo, hi] (or (lo, hi] with above=True)."""
    def parse(text: str) -> float:
        try:
            if not text.isascii():
                raise ValueError(text)
            value = float(text) + 0.0  # + 0.0 turns -0 into 0
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if lo is not None and (value <= lo if above else value < lo):
            raise argparse.ArgumentTypeError(
                f"must be {'above' if above else 'at least'} {lo:g}, got {value:g}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:g}, got {value:g}")
        return value
    return parse


def listing(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """A comma-separated list of `item` values."""
    def parse(text: str) -> list[T]:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError("expected a comma-separated list, got nothing")
        return [item(p) for p in parts]
    return parse
