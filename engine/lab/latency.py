"""Iteration latency model: how long one step of the serving engine takes.

A request rate in requests/s only means something if a step has a duration.
One step of OPT-13B on one A100-40GB is modelled as

    t = fixed + per_token * tokens_computed + per_context * tokens_read

with each term derived from the datasheet (1555 GB/s HBM, 312 TFLOP/s fp16)
and the model's size (12.85e9 parameters, 800 KB of keys and values a token):

* ``fixed``: every step streams all weights once, 25.7 GB;
* ``per_token``: a token costs 2 x 12.85e9 FLOPs;
* ``per_context``: attention reads each cached token's 800 KB.

Two sets of constants:

* ``typical`` (default): 70 % of peak bandwidth and 50 % of peak FLOP/s, the
  fractions decode and prefill kernels typically achieve, plus 5 ms a step of
  scheduling, sampling and kernel launches in a Python engine. 23.6 + 5 ms
  fixed, 0.165 ms a token, 0.75 us a cached token: about 45 ms for a ShareGPT
  decode step of 30 requests.
* ``peak``: datasheet rates and no overhead, a lower bound of any real step
  (16.5 ms, 0.082 ms, 0.53 us). Twice as fast, so at the paper's request rates
  the paged engine is no longer memory-bound: the queue empties and its batch
  follows the arrival rate instead of the memory (see the README).
"""

from __future__ import annotations

from dataclasses import dataclass

HBM_BYTES_PER_S = 1555e9
PEAK_FLOPS = 312e12
PARAMETERS = 12.85e9
KV_BYTES_PER_TOKEN = 2 * 40 * 5120 * 2  # K and V, 40 layers, hidden 5120, fp16


@dataclass(frozen=True)
class LatencyModel:
    """Affine step-time model; times in seconds."""

    name: str
    fixed: float
    per_token: float
    per_context: float

    def step_time(self, tokens_computed: int, tokens_read: int) -> float:
        return self.fixed + self.per_token * tokens_computed + self.per_context * tokens_read

    def decode_span(self, batch: int, context: int, iterations: int) -> float:
        """Total time of ``iterations`` decode steps of ``batch`` requests.

        Step j reads ``context + j * batch`` cached tokens, so the sum is closed-form.
        """
        k = iterations
        first = self.fixed + self.per_token * batch + self.per_context * context
        return k * first + self.per_context * batch * k * (k - 1) / 2


def opt13b_a100(bandwidth_share: float, flops_share: float, overhead: float, name: str) -> LatencyModel:
    """OPT-13B on A100-40GB at the given achieved fractions of peak."""
    bandwidth = HBM_BYTES_PER_S * bandwidth_share
    return LatencyModel(
        name=name,
        fixed=PARAMETERS * 2 / bandwidth + overhead,
        per_token=2 * PARAMETERS / (PEAK_FLOPS * flops_share),
        per_context=KV_BYTES_PER_TOKEN / bandwidth,
    )


LATENCY_MODELS: dict[str, LatencyModel] = {
    "typical": opt13b_a100(0.70, 0.50, 0.005, "OPT-13B on A100-40GB, typical achieved rates"),
    "peak": opt13b_a100(1.0, 1.0, 0.0, "OPT-13B on A100-40GB, datasheet peak"),
}
OPT13B_A100 = LATENCY_MODELS["typical"]
