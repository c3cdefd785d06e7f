"""Sharing scenarios: how many sequences a request runs and what they have in common.

* basic: one sequence a request (the paper's Figs. 2 and 13).
* parallel: ``n`` samples of one prompt. The prompt's full blocks are shared;
  the last, partly filled prompt block is copied when each sample writes its
  first token into it (copy-on-write), and every sample's output is its own.
* beam: ``width`` beams. Every step each beam survives with probability
  ``BEAM_SURVIVAL``; a dropped beam is replaced by a fork of a surviving one (the
  paper's Fig. 9): the fork shares every block of its parent, the dropped beam
  frees the blocks only it held, and a write into a shared last block copies it.
* prefix: every prompt starts with the same system prefix (the paper's Fig. 10
  and Fig. 16: 80 tokens one-shot, 341 tokens five-shot). Its full blocks are
  computed once and shared by all requests; its last ``prefix % block`` tokens
  are copied into each request's first block, as vLLM shares only full blocks.

The contiguous baselines (Orca) share nothing: every sequence reserves its own
range and holds its own copy of the prompt, and every request computes the
whole prefix again.
"""

from __future__ import annotations

from dataclasses import dataclass

SAMPLINGS = ("basic", "parallel", "beam")
PREFIXES: dict[str, int] = {"none": 0, "oneshot": 80, "fiveshot": 341}
SCENARIOS = ("basic", "parallel", "beam", "prefix")
FAN_OUT = 4  # samples (parallel) or beam width (beam) unless one is asked for: the LAB's and the CLI's
SCENARIO_PREFIX = "oneshot"  # the LAB's prefix scenario: the paper's one-shot prompt

# Chance that a beam is among the next step's best ``width`` candidates. The paper does not
# publish how often its beams fork; 0.8 puts the beams' last common ancestor a few blocks back,
# which gives the memory savings of its Fig. 15 on both datasets (see README).
BEAM_SURVIVAL = 0.8


@dataclass(frozen=True)
class Sharing:
    """What the sequences of a request share: sampling method, fan-out, system prefix in tokens."""

    sampling: str = "basic"
    n: int = 1  # samples (parallel) or beam width (beam); 1 with basic sampling
    prefix: int = 0

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"unknown sampling {self.sampling!r}; choose from {', '.join(SAMPLINGS)}")
        if self.sampling == "basic" and self.n != 1:
            raise ValueError("basic sampling runs one sequence a request")
        if self.sampling != "basic" and not 2 <= self.n <= 16:
            raise ValueError(f"{self.sampling} needs 2 to 16 sequences a request")
        if self.prefix < 0:
            raise ValueError("prefix length must be >= 0")
        if self.prefix and self.sampling != "basic":
            raise ValueError("a shared prefix is modelled with basic sampling only")

    @property
    def seqs(self) -> int:
        """Sequences a request runs (admitted and preempted together)."""
        return self.n

    @property
    def beam(self) -> bool:
        return self.sampling == "beam"

    @property
    def shares(self) -> bool:
        return self.n > 1 or self.prefix > 0

    @property
    def label(self) -> str:
        if self.sampling == "parallel":
            return f"parallel sampling, n = {self.n}"
        if self.sampling == "beam":
            return f"beam search, width {self.n}"
        if self.prefix:
            name = next((k for k, v in PREFIXES.items() if v == self.prefix), "")
            return f"shared prefix of {self.prefix} tokens" + (f" ({name})" if name else "")
        return "basic sampling"


BASIC = Sharing()


def scenario(name: str, n: int = FAN_OUT) -> Sharing:
    """The LAB's named scenarios: basic, parallel (n samples), beam (width n), prefix (one-shot)."""
    if name == "basic":
        return BASIC
    if name == "parallel":
        return Sharing("parallel", n)
    if name == "beam":
        return Sharing("beam", n)
    if name == "prefix":
        return Sharing(prefix=PREFIXES[SCENARIO_PREFIX])
    raise ValueError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
