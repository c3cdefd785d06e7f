"""Request traces: seeded Poisson arrivals with the paper's length statistics.

The PagedAttention paper (Kwon et al., SOSP 2023, Fig. 11) gives only the means
and histograms of its two datasets. We model each length as a rounded
log-normal (right-skewed, long tail, like the histograms), clipped to at least
one token and capped so that prompt + output <= the maximum sequence length.
The log-normal location ``mu`` was solved numerically (4M samples) so that the
mean *after* rounding and capping equals the paper's mean; ``sigma`` is read
off the histograms' spread. tests/test_lab.py re-checks the means.

| dataset  | input mean | sigma | mu      | output mean | sigma | mu      |
|----------|-----------:|------:|--------:|------------:|------:|--------:|
| ShareGPT |     161.31 |  1.0  | 4.58845 |      337.99 |  1.0  | 5.36806 |
| Alpaca   |      19.31 |  0.7  | 2.71502 |       58.45 |  0.9  | 3.66331 |
| WMT16    |      30.00 |  0.5  | 3.27620 |       32.00 |  0.5  | 3.34075 |

The translation workload (the paper's Fig. 16: WMT16 English-to-German behind a
shared few-shot prefix) has no published length distribution. We use WMT16
newstest sentences: about 22 English words on average, German translations a
little longer in tokens; at about 1.3 tokens a word (LLaMA's tokenizer) plus a
few tokens of instruction that gives means of 30 prompt and 32 output tokens.
Sentence lengths spread less than chat turns, so sigma is 0.5 (mu = ln(mean) -
sigma^2 / 2). The prefix comes on top of the prompt (``sharing.PREFIXES``).

The calibration holds for the paper's maximum sequence length of 2048; a
smaller ``max_seq_len`` caps more requests and lowers the means.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import islice
from typing import NamedTuple

from ..datasets import DATASETS as DATASETS, DatasetSpec as DatasetSpec

PAPER_MAX_SEQ_LEN = 2048


class Request(NamedTuple):
    """One inference request of a trace: arrival time in seconds, lengths in tokens.

    A named tuple rather than a dataclass: twice as quick to build (the LAB draws its traces
    while it animates).
    """

    rid: int
    arrival: float
    prompt: int
    output: int

    @property
    def total(self) -> int:
        return self.prompt + self.output


def sample_lengths(spec: DatasetSpec, rng: random.Random, max_seq_len: int) -> tuple[int, int]:
    """One (prompt, output) pair: rounded log-normals, >= 1 token, capped to max_seq_len."""
    prompt = min(max(1, round(rng.lognormvariate(spec.mu_input, spec.sigma_input))), max_seq_len - 1)
    output = max(1, round(rng.lognormvariate(spec.mu_output, spec.sigma_output)))
    return prompt, min(output, max_seq_len - prompt)


def _check(dataset: str, rate: float, max_seq_len: int) -> DatasetSpec:
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose from {', '.join(DATASETS)}")
    if not rate > 0 or rate == float("inf"):
        raise ValueError("request rate must be a finite number > 0")
    if max_seq_len < 2:
        raise ValueError("maximum sequence length must be >= 2")
    return DATASETS[dataset]


def stream(dataset: str, rate: float, seed: int = 0, max_seq_len: int = PAPER_MAX_SEQ_LEN) -> Iterator[Request]:
    """The endless trace that ``generate`` cuts: callers can draw it a few requests at a time."""
    spec = _check(dataset, rate, max_seq_len)

    def requests() -> Iterator[Request]:
        rng = random.Random(seed)
        clock = 0.0
        rid = 0
        while True:
            clock += rng.expovariate(rate)
            prompt, output = sample_lengths(spec, rng, max_seq_len)
            yield Request(rid, clock, prompt, output)
            rid += 1

    return requests()


def generate(
    dataset: str,
    n: int,
    rate: float,
    seed: int = 0,
    max_seq_len: int = PAPER_MAX_SEQ_LEN,
) -> list[Request]:
    """A trace of ``n`` requests arriving as a Poisson process of ``rate`` requests/s."""
    if n < 0:
        raise ValueError("number of requests must be >= 0")
    return list(islice(stream(dataset, rate, seed, max_seq_len), n))
