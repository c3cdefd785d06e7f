"""Small builders for serving-lab tests."""

from __future__ import annotations

import random

from engine.lab import Request


def small_trace(seed: int, n: int, rate: float, max_len: int) -> list[Request]:
    """`n` requests arriving as a Poisson process at `rate`, each with a random prompt and
    output whose total stays within `max_len` tokens; the same seed gives the same trace."""
    rng = random.Random(seed)
    clock, trace = 0.0, []
    for rid in range(n):
        clock += rng.expovariate(rate)
        prompt = rng.randint(1, max_len - 1)
        trace.append(Request(rid, clock, prompt, rng.randint(1, max_len - prompt)))
    return trace
