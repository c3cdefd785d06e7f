"""Parameter sweeps: block size against fragmentation, request rate against batch size.

numpy is imported inside the functions only, so ``engine.lab`` stays pure
standard library. What numpy computes, for all configurations at once:

* the closed-form fragmentation of every request at every block size (the
  unused tail of its last block, time-averaged over its decode steps) and its
  block-table length: one (block sizes x requests) array expression;
* the traces of all rates: one unit-rate arrival process scaled by 1/rate
  (common random numbers, so rates are compared on the same requests).

Batch sizes, preemptions and throughput need the scheduler, so each
configuration is also served by the event simulator. That part stays one
configuration at a time on purpose: the simulator jumps over runs of identical
decode steps and touches only what changes at an event (about 5 us a step
amortised for 1,000 ShareGPT requests), while a numpy lock-step of many
configurations must touch every request of every configuration at every step
(measured: 44-72 us per configuration and step for 1,000 requests, 8 to 256
configurations), and the contiguous allocators' first-fit search is sequential
within each configuration. ``timings`` reports where the time goes.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from .memory import ALLOCATORS
from .sharing import Sharing
from .simulator import LabConfig, Simulator
from .workload import Request, generate

if TYPE_CHECKING:  # numpy is imported where it is used, never when engine.lab is
    import numpy as np
    from numpy.typing import NDArray


def tail_slack(lengths: NDArray[np.int64], block_sizes: NDArray[np.int64]) -> NDArray[np.int64]:
    """Sum over L = 1..lengths of the unused slots of the last block, (-L) mod S.

    For L = qS + r the full cycles give q S (S - 1) / 2 and the partial one
    r S - r (r + 1) / 2.
    """
    q, r = divmod(lengths, block_sizes)
    slack: NDArray[np.int64] = q * block_sizes * (block_sizes - 1) // 2 + r * block_sizes - r * (r + 1) // 2
    return slack


def _add(timings: dict[str, float] | None, key: str, since: float) -> float:
    now = time.perf_counter()
    if timings is not None:
        timings[key] = timings.get(key, 0.0) + now - since
    return now


def block_size_sweep(
    dataset: str, rate: float, requests: int, seed: int, config: LabConfig, block_sizes: list[int],
    timings: dict[str, float] | None = None,
) -> list[dict[str, float]]:
    """Paged engine at each block size: fragmentation against block-table size, and the simulated result.

    ``timings`` (if given) gains seconds spent in "numpy" and in "simulator" and the "configurations" served.
    """
    import numpy as np

    trace = generate(dataset, requests, rate, seed, config.max_seq_len - config.sharing.prefix)
    t0 = time.perf_counter()
    prompt = np.array([r.prompt for r in trace], dtype=np.int64)
    total = np.array([r.total for r in trace], dtype=np.int64)
    output = total - prompt
    sizes = np.array(block_sizes, dtype=np.int64)[:, None]
    # Time-averaged unused tail of a request over its decode steps (lengths prompt+1 .. total).
    slack = (tail_slack(total[None, :], sizes) - tail_slack(prompt[None, :], sizes)) / output[None, :]
    mean_len = ((total * (total + 1) - prompt * (prompt + 1)) / 2 / output).mean()
    entries = -(-total[None, :] // sizes)  # block-table entries at the request's final length
    table_mean, slack_mean = entries.mean(axis=1).tolist(), slack.mean(axis=1).tolist()
    t0 = _add(timings, "numpy", t0)
    results = [Simulator(trace, "paged", replace(config, block_size=size)).run(drain=False) for size in block_sizes]
    _add(timings, "simulator", t0)
    if timings is not None:
        timings["configurations"] = timings.get("configurations", 0) + len(block_sizes)
    rows = []
    for i, (size, result) in enumerate(zip(block_sizes, results)):
        rows.append(
            {
                "block_size": size,
                "blocks": config.slots // size,
                "table_entries": table_mean[i],
                "tail_slack": slack_mean[i],
                "tail_share": slack_mean[i] / (float(mean_len) + slack_mean[i]),
                "token_share": result.token_share,
                "mean_running": result.mean_running,
                "throughput": result.throughput,
                "preemptions": result.preemptions,
            }
        )
    return rows


def rate_sweep(
    dataset: str, rates: list[float], requests: int, seed: int, config: LabConfig,
    timings: dict[str, float] | None = None,
) -> list[dict[str, float]]:
    """Mean batch and throughput of every allocator at each request rate, on the same requests."""
    import numpy as np

    unit = generate(dataset, requests, 1.0, seed, config.max_seq_len - config.sharing.prefix)
    t0 = time.perf_counter()
    arrivals = (np.array([r.arrival for r in unit])[None, :] / np.array(rates, dtype=float)[:, None]).tolist()
    t0 = _add(timings, "numpy", t0)
    rows = []
    for rate, times in zip(rates, arrivals):
        trace = [Request(r.rid, t, r.prompt, r.output) for r, t in zip(unit, times)]
        row: dict[str, float] = {"rate": rate}
        for name in ALLOCATORS:
            result = Simulator(trace, name, config).run(drain=False)
            row[f"{name}_running"] = result.mean_running
            row[f"{name}_throughput"] = result.throughput
        rows.append(row)
    _add(timings, "simulator", t0)
    if timings is not None:
        timings["configurations"] = timings.get("configurations", 0) + len(rates) * len(ALLOCATORS)
    return rows


def sharing_sweep(
    dataset: str, rate: float, requests: int, seed: int, config: LabConfig, sampling: str, fan_outs: list[int],
    timings: dict[str, float] | None = None,
) -> list[dict[str, float | None]]:
    """Memory saved by sharing and the advantage over Orca (Oracle) for each n (parallel) or width (beam)."""
    trace = generate(dataset, requests, rate, seed, config.max_seq_len)
    t0 = time.perf_counter()
    rows = []
    for n in fan_outs:
        cfg = replace(config, sharing=Sharing(sampling, n))
        oracle = Simulator(trace, "oracle", cfg).run(drain=False)
        paged = Simulator(trace, "paged", cfg).run(drain=False)
        rows.append({
            "n": n,
            "memory_saving": paged.memory_saving,
            "cow_copies": paged.cow_copies,
            "oracle_running": oracle.mean_running,
            "paged_running": paged.mean_running,
            "batch_ratio": paged.mean_running / oracle.mean_running if oracle.mean_running else None,
            "throughput_ratio": paged.throughput / oracle.throughput if oracle.throughput else None,
            "paged_preemptions": paged.preemptions,
        })
    _add(timings, "simulator", t0)
    if timings is not None:
        timings["configurations"] = timings.get("configurations", 0) + 2 * len(fan_outs)
    return rows
