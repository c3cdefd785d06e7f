"""Iteration latency model: how long one step of the serving engine takes.

A request rate in requests/s only means something if an iteration has a
duration. We use a three-term model of one forward pass of OPT-13B on one
A100-40GB, each term from the hardware's datasheet rates:

    t = weights_time + per_token * tokens_computed + per_context * tokens_read

* ``weights_time`` 16.5 ms: every iteration streams all weights from HBM once,
  12.85e9 parameters x 2 bytes = 25.7 GB at 1555 GB/s.
* ``per_token`` 0.082 ms: a token costs 2 x 12.85e9 FLOPs, at the 312 TFLOP/s
  fp16 tensor-core peak.
* ``per_context`` 0.53 us: attention reads every cached token's keys and values,
  800 KB a token (2 x 40 layers x 5120 x 2 bytes), at 1555 GB/s.

Peak rates make this a lower bound of a real engine's step time (no kernel
launch, scheduling or sampling overhead), so our engine serves a little more
than the paper's before its queue grows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LatencyModel:
    """Affine step-time model; times in seconds."""

    name: str
    weights_time: float
    per_token: float
    per_context: float

    def step_time(self, tokens_computed: int, tokens_read: int) -> float:
        return self.weights_time + self.per_token * tokens_computed + self.per_context * tokens_read

    def decode_span(self, batch: int, context: int, iterations: int) -> float:
        """Total time of ``iterations`` decode steps of ``batch`` requests.

        Step j reads ``context + j * batch`` cached tokens, so the sum is closed-form.
        """
        k = iterations
        first = self.weights_time + self.per_token * batch + self.per_context * context
        return k * first + self.per_context * batch * k * (k - 1) / 2


OPT13B_A100 = LatencyModel(
    name="OPT-13B on A100-40GB",
    weights_time=12.85e9 * 2 / 1555e9,
    per_token=2 * 12.85e9 / 312e12,
    per_context=819_200 / 1555e9,
)
