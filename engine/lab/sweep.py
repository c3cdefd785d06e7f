"""Parameter sweeps: block size against fragmentation, request rate against batch size.

numpy is imported inside the functions only, so ``engine.lab`` stays pure
standard library. The closed-form fragmentation of every request at every
block size is one array expression; traces for all rates share their lengths
and one unit-rate arrival process scaled by 1/rate (common random numbers, so
rates are compared on the same requests).
"""

from __future__ import annotations

from dataclasses import replace

from .allocators import ALLOCATORS
from .simulator import LabConfig, Simulator
from .workload import Request, generate


def tail_slack(lengths, block_sizes):  # numpy arrays -> array
    """Sum over L = 1..lengths of the unused slots of the last block, (-L) mod S.

    For L = qS + r the full cycles give q S (S - 1) / 2 and the partial one
    r S - r (r + 1) / 2.
    """
    q, r = divmod(lengths, block_sizes)
    return q * block_sizes * (block_sizes - 1) // 2 + r * block_sizes - r * (r + 1) // 2


def block_size_sweep(
    dataset: str, rate: float, requests: int, seed: int, config: LabConfig, block_sizes: list[int]
) -> list[dict[str, float]]:
    """Paged engine at each block size: fragmentation against block-table size, and the simulated result."""
    import numpy as np

    trace = generate(dataset, requests, rate, seed, config.max_seq_len)
    prompt = np.array([r.prompt for r in trace], dtype=np.int64)
    total = np.array([r.total for r in trace], dtype=np.int64)
    output = total - prompt
    sizes = np.array(block_sizes, dtype=np.int64)[:, None]
    # Time-averaged unused tail of a request over its decode steps (lengths prompt+1 .. total).
    slack = (tail_slack(total[None, :], sizes) - tail_slack(prompt[None, :], sizes)) / output[None, :]
    mean_len = ((total * (total + 1) - prompt * (prompt + 1)) / 2 / output).mean()
    entries = -(-total[None, :] // sizes)  # block-table entries at the request's final length
    rows = []
    for i, size in enumerate(block_sizes):
        result = Simulator(trace, "paged", replace(config, block_size=size)).run(drain=False)
        rows.append(
            {
                "block_size": size,
                "blocks": config.slots // size,
                "table_entries": float(entries[i].mean()),
                "tail_slack": float(slack[i].mean()),
                "tail_share": float(slack[i].mean() / (mean_len + slack[i].mean())),
                "token_share": result.token_share,
                "mean_running": result.mean_running,
                "throughput": result.throughput,
                "preemptions": result.preemptions,
            }
        )
    return rows


def rate_sweep(
    dataset: str, rates: list[float], requests: int, seed: int, config: LabConfig
) -> list[dict[str, float]]:
    """Mean batch and throughput of every allocator at each request rate, on the same requests."""
    import numpy as np

    unit = generate(dataset, requests, 1.0, seed, config.max_seq_len)
    arrivals = np.array([r.arrival for r in unit])[None, :] / np.array(rates, dtype=float)[:, None]
    rows = []
    for i, rate in enumerate(rates):
        trace = [Request(r.rid, float(t), r.prompt, r.output) for r, t in zip(unit, arrivals[i].tolist())]
        row: dict[str, float] = {"rate": rate}
        for name in ALLOCATORS:
            result = Simulator(trace, name, config).run(drain=False)
            row[f"{name}_running"] = result.mean_running
            row[f"{name}_throughput"] = result.throughput
        rows.append(row)
    return rows
