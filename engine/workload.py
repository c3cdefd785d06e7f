"""The requests of a run: which tetromino, when it arrives, its prompt and its (hidden) output.

A run's requests depend on its seed only, never on how it is played: the same seed gives every
player the same workload (the daily run relies on it). Three seeded streams keep that so:
shapes come from the 7-bag (engine.bag), lengths from the LAB's ShareGPT model
(engine.lab.workload) scaled to the board, arrival gaps from a Poisson process whose rate rises
with game time, in waves (rules.Load: free play's, or a chapter's).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable, Iterable
from typing import NamedTuple

from . import rules as R
from .bag import PieceBag
from .datasets import DATASETS, DatasetSpec
from .pieces import Kind


class Arrival(NamedTuple):
    """One request as it arrives: `output` is what it will generate, which nobody sees.
    `prefix` names the shared prompt prefix it starts with (prefix_id(); 0: none)."""

    id: int
    kind: Kind
    time_ms: float
    prompt: int
    output: int
    prefix: int = 0


MAX_VARIANTS = 32  # different shared prefixes one workload may have (rules.PREFIX_VARIANTS)


def prefix_id(kind: Kind, variant: int) -> int:
    """The id of a workload's shared prefix: one per (kind, variant), never 0."""
    if not 0 <= variant < MAX_VARIANTS:
        raise ValueError(f"a workload has at most {MAX_VARIANTS} shared prefixes")
    return int(kind) * MAX_VARIANTS + variant + 1


def prefix_kind(prefix: int) -> Kind:
    """The workload whose shared prefix `prefix` is."""
    return Kind((prefix - 1) // MAX_VARIANTS)


def prefix_blocks(prefix: int) -> int:
    """Full blocks of the shared prefix `prefix` (0 for none)."""
    return R.PREFIX_BLOCKS[prefix_kind(prefix)] if prefix else 0


def with_prefix(kind: Kind, prompt: int, output: int, rng: random.Random) -> tuple[int, int, int]:
    """(prefix id, prompt, output) of a request of `kind` that may start with its workload's
    shared prefix: a variant is drawn, and the prompt holds the prefix and at least one token
    of its own (as long as it was, if longer), output capped to the maximum length."""
    variants = R.PREFIX_VARIANTS[kind]
    if not variants:
        return 0, prompt, output
    variant = rng.randrange(variants)
    shared = R.PREFIX_BLOCKS[kind] * R.TOKENS_PER_BLOCK
    prompt = min(max(prompt, shared + 1), R.MAX_SEQ_TOKENS - 1)
    return prefix_id(kind, variant), prompt, min(output, R.MAX_SEQ_TOKENS - prompt)


_NV_MAGICCONST = 4 * math.exp(-0.5) / math.sqrt(2.0)  # as random.py has it
_exp, _log = math.exp, math.log


def _lognormal(uniform: Callable[[], float], mu: float, sigma: float) -> float:
    """random.Random.lognormvariate(mu, sigma) of the generator whose random() is `uniform`,
    written out (Kinderman and Monahan, as the standard library draws it): a request's lengths
    are drawn with every arrival."""
    while True:
        u1 = uniform()
        u2 = 1.0 - uniform()
        z = _NV_MAGICCONST * (u1 - 0.5) / u2
        if z * z / 4.0 <= -_log(u2):
            return _exp(mu + z * sigma)


def _same_draws() -> bool:
    """Whether _lognormal() draws exactly what this Python's random module draws."""
    ours, theirs = random.Random(20240), random.Random(20240)
    return all(_lognormal(ours.random, 1.5, 0.9) == theirs.lognormvariate(1.5, 0.9)
               for _ in range(64)) and ours.random() == theirs.random()


_WRITTEN_OUT = _same_draws()


def scaled_lengths(spec: DatasetSpec, rng: random.Random, scale: float = R.LENGTH_SCALE,
                   max_tokens: int = R.MAX_SEQ_TOKENS) -> tuple[int, int]:
    """(prompt, output) in game tokens: the dataset's log-normals divided by `scale`, rounded,
    at least one token each, prompt + output capped at `max_tokens`."""
    if _WRITTEN_OUT and type(rng) is random.Random:
        prompt = _lognormal(rng.random, spec.mu_input, spec.sigma_input) / scale
        output = _lognormal(rng.random, spec.mu_output, spec.sigma_output) / scale
    else:
        prompt = rng.lognormvariate(spec.mu_input, spec.sigma_input) / scale
        output = rng.lognormvariate(spec.mu_output, spec.sigma_output) / scale
    # min(max(1, round(x)), cap), written out: two of these are drawn with every arrival.
    p = round(prompt)
    if p < 1:
        p = 1
    if p > max_tokens - 1:
        p = max_tokens - 1
    o = round(output)
    if o < 1:
        o = 1
    if o > max_tokens - p:
        o = max_tokens - p
    return p, o


HORIZON_MS = 10_000.0  # how far ahead one bound on the rate is taken (thinning)


def next_arrival_ms(now_ms: float, rng: random.Random, load: R.Load = R.LOAD) -> float:
    """The next arrival after `now_ms` of the Poisson process of rate load.rate(t), drawn by
    thinning: candidates at a bounding rate, each kept with probability rate / bound."""
    t = now_ms
    rate = load.rate
    while True:
        bound = load.bound(t, HORIZON_MS) / 1000.0  # per ms
        step = -math.log(1.0 - rng.random()) / bound
        if step > HORIZON_MS:
            t += HORIZON_MS  # no candidate in this window: the process is memoryless
            continue
        t += step
        if rng.random() * bound <= rate(t) / 1000.0:
            return t


class Workload:
    """The endless, seeded stream of a run's requests, drawn as game time reaches them."""

    __slots__ = ("_bag", "_lengths", "_gaps", "_prefixes", "_spec", "_load", "_next_id", "_upcoming",
                 "next_at")

    def __init__(self, seed: int, prefixes: bool = False, load: R.Load = R.LOAD) -> None:
        self._bag = PieceBag(random.Random(seed))
        self._lengths = random.Random(f"{seed}:lengths")
        self._gaps = random.Random(f"{seed}:arrivals")
        # Shared prefixes come from a stream of their own: the other draws stay the same.
        self._prefixes = random.Random(f"{seed}:prefixes") if prefixes else None
        self._spec = DATASETS[R.LENGTH_DATASET]
        self._load = load
        self._next_id = 1
        self._upcoming: deque[Arrival] = deque()
        self._upcoming.append(self._draw(0.0))
        self.next_at = 0.0  # when the next request arrives (read by the game every tick)

    def _draw(self, after_ms: float) -> Arrival:
        kind = self._bag.pop()
        prompt, output = scaled_lengths(self._spec, self._lengths)
        prefix = 0
        if self._prefixes is not None:
            prefix, prompt, output = with_prefix(kind, prompt, output, self._prefixes)
        t = after_ms if self._next_id == 1 else next_arrival_ms(after_ms, self._gaps, self._load)
        a = Arrival(self._next_id, kind, t, prompt, output, prefix)
        self._next_id += 1
        return a

    def arrivals_until(self, time_ms: float) -> list[Arrival]:
        """Every request that arrives by `time_ms`, in order (the first arrives at time 0)."""
        out: list[Arrival] = []
        up = self._upcoming
        while up[0].time_ms <= time_ms:
            a = up.popleft()
            out.append(a)
            up.append(self._draw(a.time_ms))
        self.next_at = up[0].time_ms
        return out


class Scripted(Workload):
    """A given list of requests instead of the seeded stream (puzzles, lessons, tests): each
    arrives at its own time_ms; after the last, none. Install it with Game.set_workload."""

    __slots__ = ("_script",)

    def __init__(self, arrivals: Iterable[Arrival] = ()) -> None:  # the seeded streams stay unused
        self._script: deque[Arrival] = deque(sorted(arrivals, key=lambda a: a.time_ms))
        self.next_at = self._script[0].time_ms if self._script else math.inf

    def arrivals_until(self, time_ms: float) -> list[Arrival]:
        out: list[Arrival] = []
        script = self._script
        while script and script[0].time_ms <= time_ms:
            out.append(script.popleft())
        self.next_at = script[0].time_ms if script else math.inf
        return out

