"""Which serving-engine mechanisms a run has: one switch each, for the rules, lessons and tests.

Every mechanism the game models beyond the paper's 2023 engine is a switch here, so that a run,
a lesson or a test can turn one off and see what it is worth: prefix caching (vLLM's automatic
prefix caching, engine.prefix_cache). A run's switches follow from its rules version and its
own settings, so a replay needs nothing more to play out the same. Chunked prefill is
engine.prefill.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Features:
    """The mechanisms of one run. `prefixes`: the workloads' requests start with their shared
    system prompts (engine.workload). `prefix_cache`: requests that start alike map the same
    full blocks (paged mode), and blocks freed with a known content stay cached.
    `chunked_prefill`: prompts are prefilled in chunks within each step's token budget
    (engine.prefill) instead of stalling every running request. `pick`: the player picks which
    of the first waiting requests runs next (SGLang's cache-aware scheduling is the bot's).
    `speculative`: decoding requests draft tokens ahead and the target model verifies them
    (engine.speculative; the player sets how many, 0 at first)."""

    prefixes: bool = False
    prefix_cache: bool = False
    chunked_prefill: bool = False
    pick: bool = False
    speculative: bool = False


RULES3 = Features()  # the paper's engine, as rules 3 played it
RULES4 = Features(prefixes=True, prefix_cache=True, chunked_prefill=True, pick=True)  # vLLM V1
SPECULATIVE = Features(prefixes=True, prefix_cache=True, chunked_prefill=True, pick=True, speculative=True)
DEFAULT = RULES4  # what a run gets unless it asks otherwise: rules 4
