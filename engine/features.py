"""Which serving-engine mechanisms a run has: one switch each, for the rules, lessons and tests.

Every mechanism the game models beyond the paper's 2023 engine is a switch here, so that a run,
a lesson or a test can turn one off and see what it is worth: prefix caching (vLLM's automatic
prefix caching, engine.prefix_cache). A run's switches follow from its rules version and its
own settings, so a replay needs nothing more to play out the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Features:
    """The mechanisms of one run. `prefixes`: the workloads' requests start with their shared
    system prompts (engine.workload). `prefix_cache`: requests that start alike map the same
    full blocks (paged mode), and blocks freed with a known content stay cached."""

    prefixes: bool = False
    prefix_cache: bool = False


RULES3 = Features()  # the paper's engine, as rules 3 plays it
RULES4 = Features(prefixes=True, prefix_cache=True)  # vLLM V1, as far as it is built
DEFAULT = RULES3  # what a run gets unless it asks otherwise
