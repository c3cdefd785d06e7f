"""Game rules as data: board size, timing, arrivals, the GPU's costs, scoring and gravity."""

from __future__ import annotations

import math
from dataclasses import dataclass

# Bumped whenever a rule change makes the same seed and inputs play out differently: a replay
# records the version it was played under, so an old run reports why it no longer verifies.
# tests/test_sharecode.py keeps runs recorded under each version and fails until it is bumped.
RULES_VERSION = 4

WIDTH = 10
VISIBLE = 20
HIDDEN = 2  # spawn rows above the visible board
HEIGHT = VISIBLE + HIDDEN
VISIBLE_CELLS = WIDTH * VISIBLE

NEXT_QUEUE = 3
LOCK_DELAY_MS = 500.0
MAX_LOCK_RESETS = 15

# Score is tokens served: the output tokens of every finished request, times the level it
# finished at. Nothing else scores (no lines: a full row frees nothing).
# No run scores more: every block of VRAM finishing a whole request every frame for 46 hours
# (the longest replay, 10 million frames) at the top level.
MAX_SCORE = 10**15

# ---------------------------------------------------------------- requests (engine.workload)
# Each cell is one KV-cache block of 16 tokens (vLLM's default block size, as in the LAB). A
# request's tetromino is its maximum sequence length: 4 blocks, 64 tokens (the paper's is 2,048).
TOKENS_PER_BLOCK = 16
BLOCKS_PER_REQUEST = 4
MAX_SEQ_TOKENS = TOKENS_PER_BLOCK * BLOCKS_PER_REQUEST
# Lengths are the LAB's ShareGPT model (engine.lab.workload) divided by LENGTH_SCALE and capped
# at MAX_SEQ_TOKENS: a mean request of about 500 tokens becomes about 50 of the game's 64, and
# half of them reach the cap (the maximum length), as long answers do in a real engine.
LENGTH_DATASET = "sharegpt"
LENGTH_SCALE = 6.0

# Arrivals: a Poisson process whose rate rises with game time, RATE_START requests a second
# at the start and RATE_PER_MINUTE more every game minute, up to RATE_CAP (a chapter's plateau;
# free play has none). The level is the game minute (1 in the first), and gravity follows it.
RATE_START = 0.20
RATE_PER_MINUTE = 0.06
# Traffic comes in waves: the rate swings BURST above and below its trend once every
# BURST_PERIOD_MS (a load spike to ride out, then a lull to recover in).
BURST = 0.35
BURST_PERIOD_MS = 150_000.0
LEVEL_MS = 60_000.0
MAX_LEVEL = 20

# The waiting queue (the next-requests panel). A run is overloaded, and ends, when more than
# QUEUE_MAX requests wait, or one has waited DEADLINE_MS since it arrived or was preempted.
QUEUE_MAX = 16
DEADLINE_MS = 30_000.0

# Shared prompt prefixes (engine.prefix_cache: vLLM's automatic prefix caching). Many requests
# of a workload start with the same tokens: an agent's tool list, a repository's context, a
# pipeline's instructions. Per piece kind (I, O, T, S, Z, J, L, as engine.pieces.Kind), how many
# full blocks its shared prefix has and how many different prefixes the workload uses (0: none).
# docs/rules.md says what each stands for.
PREFIX_BLOCKS = (1, 0, 1, 2, 0, 2, 2)
PREFIX_VARIANTS = (1, 0, 1, 2, 0, 3, 2)

# ---------------------------------------------------------------- the GPU (engine.serving)
# Iteration-level batching, as vLLM: every DECODE_STEP_MS of GPU time each running request
# generates one token. Prefill (a new prompt, or a recomputed one) and swapping stall every
# running request while the GPU does them.
DECODE_STEP_MS = 1_800.0
PREFILL_MS_PER_TOKEN = 12.0
SWAP_MS_PER_BLOCK = 80.0  # each way, per block, over PCIe
CPU_BLOCKS = 8  # the CPU swap space (the strip beside VRAM), in blocks
# Chunked prefill (engine.prefill, vLLM V1's default): each step has a token budget; the running
# requests' decode tokens come first, prefill chunks share the rest. A step takes STEP_BASE_MS
# plus STEP_MS_PER_TOKEN a token (40 decode tokens: DECODE_STEP_MS, as without it).
STEP_BASE_MS = 1_200.0
STEP_MS_PER_TOKEN = 15.0
# The default is vLLM's, scaled: `vllm serve` runs 2,048 tokens a step on most GPUs and 8,192
# on the largest, one to four maximum-length sequences of the paper's models (2,048 tokens);
# the game's default is two of its own (MAX_SEQ_TOKENS each).
DEFAULT_BUDGET = 2 * MAX_SEQ_TOKENS
BUDGETS = (32, 64, 128, 256, 512)  # the player's choices, in tokens a step
# Speculative decoding (engine.speculative; features.speculative): each decoding request drafts
# k tokens a step, SPEC_KS the player's choices. The chance that a draft is accepted, per piece
# kind (I, O, T, S, Z, J, L as engine.pieces.Kind): open chat accepts least, retrieval, code and
# long-context work that copies its input most. A linear chain of 4 drafts then gains 2.1 to 3.4
# tokens a step (1 + the accepted), the range of EAGLE's published acceptance lengths (docs/rules.md).
# A verified draft costs a step SPEC_MS_PER_DRAFT, a third of a decode token: the step reads the
# weights and the KV cache once, whatever the tokens per request.
SPEC_ACCEPT = (0.55, 0.55, 0.8, 0.75, 0.5, 0.75, 0.8)
SPEC_KS = (0, 1, 2, 3, 4)
SPEC_MS_PER_DRAFT = 5.0
PREEMPT_MODES = ("recompute", "swap")
DEFAULT_PREEMPT = "recompute"  # vLLM's default for single-sequence requests

# The goal of a non-endless run: serve GOAL_REQUESTS requests (endless runs until overloaded).
GOAL_REQUESTS = 300
GOALS = ("serve", "endless")

THROUGHPUT_WINDOW_MS = 10_000.0
# The waste gauge shows its share once this many requests run: before that one request's
# part-filled last block alone reads as a large share of a nearly empty memory.
WASTE_SHOWN_FROM = 4
VRAM_WARN = 0.80  # utilisation that raises the warning
VRAM_REARM = 0.75  # the warning rearms once utilisation falls below this
VRAM_CAUTION = 0.60  # utilisation the gauge turns amber at (red above VRAM_WARN)


def visible_row(y: int) -> int:
    """A board row as the player counts it: 0 is the top visible row."""
    return y - HIDDEN


def gravity_ms(level: int) -> float:
    """Milliseconds per row at `level` (the guideline curve, capped at level 20)."""
    lv = max(1, min(level, 20))
    return (0.8 - (lv - 1) * 0.007) ** (lv - 1) * 1000.0


def level_for(time_ms: float) -> int:
    """The level at game time `time_ms`: one more every game minute, capped."""
    return min(MAX_LEVEL, 1 + int(time_ms // LEVEL_MS))


@dataclass(frozen=True, slots=True)
class Load:
    """How requests arrive: a rate (requests a second) rising by `per_minute` every game minute
    from `start`, up to `cap`, in waves of +-`burst` of it once every `period_ms`."""

    start: float = RATE_START
    per_minute: float = RATE_PER_MINUTE
    burst: float = BURST
    period_ms: float = BURST_PERIOD_MS
    cap: float = math.inf

    def trend(self, time_ms: float) -> float:
        """The rate at `time_ms` without its waves."""
        return min(self.cap, self.start + self.per_minute * time_ms / 60_000.0)

    def rate(self, time_ms: float) -> float:
        """Requests a second arriving at game time `time_ms`: the rising trend, in waves."""
        wave = 1.0 + self.burst * math.sin(2.0 * math.pi * time_ms / self.period_ms)
        return self.trend(time_ms) * wave

    def bound(self, time_ms: float, horizon_ms: float) -> float:
        """A rate rate() never exceeds from `time_ms` to `time_ms + horizon_ms`."""
        return self.trend(time_ms + horizon_ms) * (1.0 + self.burst)


LOAD = Load()  # free play's


def arrival_rate(time_ms: float) -> float:
    """Requests a second arriving at game time `time_ms` in free play (LOAD.rate)."""
    return LOAD.rate(time_ms)


def blocks_for(tokens: int) -> int:
    """KV blocks that `tokens` tokens fill (at least one)."""
    return max(1, -(-tokens // TOKENS_PER_BLOCK))
