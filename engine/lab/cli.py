"""Command line: ``python -m engine.lab [run|sweep|bench] ...``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from .. import cli_args
from ..cli_args import listing, number, whole
from . import paper
from .allocators import ALLOCATORS
from .latency import LATENCY_MODELS
from .report import compare, format_text
from .simulator import DEFAULT_SLOTS, LabConfig, Simulator
from .workload import DATASETS, generate

MAX_REQUESTS = 1_000_000
# 1M token slots is 800 GB of OPT-13B keys and values, more than any one GPU holds.
MAX_SLOTS = 1_000_000
# Below one request in 1000 s the trace is idle; above 10,000 req/s a whole trace arrives
# within one engine step (at least 17 ms).
MIN_RATE, MAX_RATE = 0.001, 10_000.0
COMMANDS = ("run", "sweep", "bench")
MAX_SWEEP_VALUES = 16  # block sizes or rates in one sweep
# Requests x configurations a sweep simulates at most (each configuration runs the whole trace).
MAX_SWEEP_WORK = 2_000_000


_positive_int = whole(1)
_requests = whole(1, MAX_REQUESTS)
_seed = whole(0)
_slots = whole(1, MAX_SLOTS)
_rate = number(MIN_RATE, MAX_RATE)


def _common(parser: argparse.ArgumentParser, requests: int) -> None:
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="sharegpt", help="length distribution")
    parser.add_argument("--requests", type=_requests, default=requests, help=f"trace length (default {requests})")
    parser.add_argument("--seed", type=_seed, default=0, help="trace seed (default 0)")
    parser.add_argument("--slots", type=_slots, default=DEFAULT_SLOTS,
                        help=f"KV cache size in token slots (default {DEFAULT_SLOTS}, at most {MAX_SLOTS:,})")
    parser.add_argument("--max-seq-len", type=whole(2, MAX_SLOTS), default=2048, help="maximum prompt + output (default 2048)")
    parser.add_argument("--max-batch", type=_slots, default=256, help="most running requests (default 256)")
    parser.add_argument("--latency", choices=sorted(LATENCY_MODELS), default="typical", help="step-time model")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def build_parsers() -> dict[str, argparse.ArgumentParser]:
    run = cli_args.parser(
        "python -m engine.lab",
        description="Run one request trace through the max, pow2, oracle and paged KV-cache allocators "
        "and compare with the PagedAttention paper. Other commands: sweep, bench (each has --help).",
    )
    _common(run, 2000)
    run.add_argument("--rate", type=_rate, help="requests/s, 0.001 to 10,000 (default: the paper's Fig. 13 rate)")
    run.add_argument("--block-size", type=_positive_int, default=16, help="paged block size in tokens")

    sweep = cli_args.parser(
        "python -m engine.lab sweep",
        description="Block-size and request-rate sweeps: fragmentation against block count, batch against rate.",
    )
    _common(sweep, 1000)
    sweep.add_argument("--rate", type=_rate, help="requests/s of the block-size sweep (default: the paper's)")
    sweep.add_argument("--block-size", type=_positive_int, default=16, help="block size of the rate sweep")
    sweep.add_argument("--block-sizes", type=listing(_positive_int, MAX_SWEEP_VALUES), default=[1, 2, 4, 8, 16, 32, 64, 128],
                       help=f"comma-separated block sizes, at most {MAX_SWEEP_VALUES}")
    sweep.add_argument("--rates", type=listing(_rate, MAX_SWEEP_VALUES),
                       help=f"requests/s list, at most {MAX_SWEEP_VALUES} (default: 0.25x to 2x the paper's rate)")

    bench = cli_args.parser(
        "python -m engine.lab bench",
        description="Time a trace served to the end through all four allocators.",
    )
    _common(bench, 10_000)
    bench.add_argument("--rate", type=_rate, help="requests/s, 0.001 to 10,000 (default: the paper's)")
    bench.add_argument("--block-size", type=_positive_int, default=16, help="paged block size in tokens")
    return {"run": run, "sweep": sweep, "bench": bench}


def _config(parser: argparse.ArgumentParser, args: argparse.Namespace) -> LabConfig:
    if args.block_size > args.max_seq_len:
        parser.error(f"--max-seq-len {args.max_seq_len} is shorter than --block-size {args.block_size}: "
                     "give a longer --max-seq-len or a smaller --block-size")
    if args.slots < args.max_seq_len:
        parser.error(f"--slots {args.slots} is too small: at least --max-seq-len ({args.max_seq_len}), "
                     "one maximum-length sequence")
    try:
        return LabConfig(
            slots=args.slots,
            block_size=args.block_size,
            max_seq_len=args.max_seq_len,
            max_batch=args.max_batch,
            latency=LATENCY_MODELS[args.latency],
        )
    except ValueError as err:
        parser.error(str(err))
        raise  # unreachable: parser.error exits


def cmd_run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    config = _config(parser, args)
    rate = paper.FIG13_RATE[args.dataset] if args.rate is None else args.rate
    comp = compare(args.dataset, rate, args.requests, args.seed, config)
    print(json.dumps(comp.as_dict(), indent=2) if args.json else format_text(comp))
    return 0


def cmd_sweep(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .sweep import block_size_sweep, rate_sweep

    config = _config(parser, args)
    for size in args.block_sizes:
        if size > args.max_seq_len or args.slots // size * size < args.max_seq_len:
            parser.error(f"block size {size} does not fit --max-seq-len {args.max_seq_len} in --slots {args.slots}")
    paper_rate = paper.FIG13_RATE[args.dataset]
    rate = paper_rate if args.rate is None else args.rate
    rates = args.rates or [paper_rate * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)]
    work = args.requests * (len(args.block_sizes) + len(rates) * len(ALLOCATORS))
    if work > MAX_SWEEP_WORK:
        parser.error(f"--requests {args.requests} over {len(args.block_sizes)} block sizes and {len(rates)} rates "
                     f"is {work:,} simulated requests, more than {MAX_SWEEP_WORK:,}; ask for fewer")
    start = time.perf_counter()
    import numpy  # noqa: F401  (imported by the sweep; timed apart)

    timings: dict[str, float] = {"numpy_import": time.perf_counter() - start}
    blocks = block_size_sweep(args.dataset, rate, args.requests, args.seed, config, args.block_sizes, timings)
    by_rate = rate_sweep(args.dataset, rates, args.requests, args.seed, config, timings)
    timings["total"] = time.perf_counter() - start
    if args.json:
        print(json.dumps({"dataset": args.dataset, "block_sizes": blocks, "rates": by_rate, "timings_s": timings},
                         indent=2))
        return 0
    title = DATASETS[args.dataset].title
    print(f"Block size: paged engine, {title} at {rate:g} req/s, {args.requests} requests, seed {args.seed}")
    print("Smaller blocks waste less of each request's last block but need longer block tables")
    print("(and, on a GPU, less efficient kernels, which this model does not charge).")
    print(f"{'block':>6} {'blocks':>7} {'table/req':>10} {'tail slack':>11} {'tail share':>11} "
          f"{'token share':>12} {'batch':>7} {'tokens/s':>9} {'preempt':>8}")
    for row in blocks:
        print(f"{row['block_size']:6d} {row['blocks']:7d} {row['table_entries']:10.1f} {row['tail_slack']:11.1f} "
              f"{row['tail_share']:11.1%} {row['token_share']:12.1%} {row['mean_running']:7.1f} "
              f"{row['throughput']:9.0f} {row['preemptions']:8d}")
    print()
    print(f"Request rate: mean batch (and tokens/s) per allocator, {title}, block {args.block_size}")
    print(f"{'req/s':>7} " + " ".join(f"{paper.LABELS[n]:>20}" for n in ALLOCATORS) + f" {'paged/oracle':>13}")
    for row in by_rate:
        cells = " ".join(f"{row[n + '_running']:8.1f} ({row[n + '_throughput']:6.0f}/s)" for n in ALLOCATORS)
        ratio = row["paged_running"] / row["oracle_running"] if row["oracle_running"] else float("nan")
        print(f"{row['rate']:7g} {cells} {ratio:13.2f}")
    print("\nAt low rates every allocator keeps up and batches are equal; once memory is the limit the")
    print("batch stops growing with the rate, and the paged engine's limit is the highest.")
    print(f"\n{timings['configurations']:.0f} configurations of {args.requests} requests in {timings['total']:.2f} s: "
          f"event simulator {timings['simulator']:.2f} s, numpy (closed forms, traces) "
          f"{timings['numpy'] * 1000:.1f} ms, importing numpy {timings['numpy_import']:.2f} s, drawing the "
          f"traces {timings['total'] - timings['simulator'] - timings['numpy'] - timings['numpy_import']:.2f} s.")
    return 0


def cmd_bench(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    config = _config(parser, args)
    rate = paper.FIG13_RATE[args.dataset] if args.rate is None else args.rate
    start = time.perf_counter()
    trace = generate(args.dataset, args.requests, rate, args.seed, config.max_seq_len)
    gen_time = time.perf_counter() - start
    rows = []
    cpu0 = time.process_time()
    for name in ALLOCATORS:
        t0 = time.perf_counter()
        sim = Simulator(trace, name, config)
        result = sim.run(drain=True)
        rows.append((name, time.perf_counter() - t0, result))
    cpu = time.process_time() - cpu0  # beside wall time: a busy machine stretches only the latter
    total = sum(t for _, t, _ in rows)
    if args.json:
        print(json.dumps({
            "requests": args.requests, "dataset": args.dataset, "rate": rate, "trace_s": gen_time,
            "allocators": {n: {"seconds": t, "iterations": r.iterations, "finished": r.finished} for n, t, r in rows},
            "total_s": total, "total_cpu_s": cpu,
        }, indent=2))
        return 0
    print(f"Benchmark: {args.requests} {DATASETS[args.dataset].title} requests at {rate:g} req/s, "
          f"each served to the end, through all four allocators")
    print(f"{'trace generation':18} {gen_time:7.3f} s")
    for name, seconds, result in rows:
        print(f"{paper.LABELS[name]:18} {seconds:7.3f} s  {result.iterations:8d} engine steps, "
              f"{result.iterations / seconds / 1e6:5.2f} M steps/s")
    print(f"{'all four':18} {total:7.3f} s  ({args.requests * 4 / total:,.0f} requests/s simulated; "
          f"CPU time {cpu:.3f} s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in COMMANDS else "run"
    if argv and argv[0] in COMMANDS:
        argv = argv[1:]
    parser = build_parsers()[command]
    args = parser.parse_args(argv)
    handler = {"run": cmd_run, "sweep": cmd_sweep, "bench": cmd_bench}[command]
    return handler(parser, args)
