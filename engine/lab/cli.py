"""Command line: ``python -m engine.lab [run|sweep|bench] ...``."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from .. import cli_args
from ..cli_args import listing, number, whole
from . import paper
from .memory import ALLOCATORS
from .latency import LATENCY_MODELS
from .report import compare, format_text
from .sharing import FAN_OUT, PREFIXES, SAMPLINGS, Sharing
from .simulator import DEFAULT_SLOTS, LabConfig, Result, Simulator
from .workload import DATASETS, Request, generate

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


def count_words(items: tuple[str, ...]) -> str:
    """How many, in words up to ten ("four")."""
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[len(items)] if len(items) < len(words) else str(len(items))


_positive_int = whole(1)
_requests = whole(1, MAX_REQUESTS)
_seed = whole(0)
_slots = whole(1, MAX_SLOTS)
_rate = number(MIN_RATE, MAX_RATE)
_fan_out = whole(2, 16)
DEFAULT_FAN_OUT = FAN_OUT  # samples (parallel) or beam width (beam) when --n / --width is not given


def _common(parser: argparse.ArgumentParser, requests: int) -> None:
    parser.add_argument("--dataset", choices=sorted(DATASETS), default=None,
                        help="length distribution (default sharegpt, or translation with --prefix)")
    parser.add_argument("--workload", choices=sorted(DATASETS), default=None,
                        help="the same as --dataset (default: --dataset's)")
    parser.add_argument("--requests", type=_requests, default=requests, help="trace length (default: %(default)s)")
    parser.add_argument("--seed", type=_seed, default=0, help="trace seed (default: %(default)s)")
    parser.add_argument("--slots", type=_slots, default=DEFAULT_SLOTS,
                        help=f"KV cache size in token slots (default: %(default)s, at most {MAX_SLOTS:,})")
    parser.add_argument("--max-seq-len", type=whole(2, MAX_SLOTS), default=2048,
                        help="maximum prompt + output (default: %(default)s)")
    parser.add_argument("--max-batch", type=_slots, default=256,
                        help="most running sequences (default: %(default)s)")
    parser.add_argument("--latency", choices=sorted(LATENCY_MODELS), default="typical",
                        help="step-time model (default: %(default)s)")
    parser.add_argument("--sampling", choices=SAMPLINGS, default="basic",
                        help="sequences a request runs: one (basic), n samples (parallel), a beam search "
                        "(beam) (default: %(default)s)")
    parser.add_argument("--n", type=_fan_out, default=None,
                        help=f"parallel samples a request, 2 to 16 (default: {DEFAULT_FAN_OUT} with --sampling parallel)")
    parser.add_argument("--width", type=_fan_out, default=None,
                        help=f"beam width, 2 to 16 (default: {DEFAULT_FAN_OUT} with --sampling beam)")
    parser.add_argument("--prefix", choices=tuple(PREFIXES), default="none",
                        help="system prefix shared by every prompt: none, oneshot (80 tokens) or fiveshot "
                        "(341 tokens) (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _dataset(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    if args.dataset and args.workload and args.dataset != args.workload:
        parser.error(f"--dataset {args.dataset} and --workload {args.workload} disagree")
    return args.dataset or args.workload or ("translation" if args.prefix != "none" else "sharegpt")


def _sharing(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Sharing:
    if args.n is not None and args.sampling != "parallel":
        parser.error("--n needs --sampling parallel")
    if args.width is not None and args.sampling != "beam":
        parser.error("--width needs --sampling beam")
    if args.prefix != "none" and args.sampling != "basic":
        parser.error("--prefix works with --sampling basic only")
    if args.sampling == "parallel":
        return Sharing("parallel", args.n or DEFAULT_FAN_OUT)
    if args.sampling == "beam":
        return Sharing("beam", args.width or DEFAULT_FAN_OUT)
    return Sharing(prefix=PREFIXES[args.prefix])


def build_parsers() -> dict[str, argparse.ArgumentParser]:
    run = cli_args.parser(
        "python -m engine.lab",
        description=f"Run one request trace through the {', '.join(ALLOCATORS[:-1])} and {ALLOCATORS[-1]} "
        "KV-cache allocators and compare with the PagedAttention paper. Other commands: sweep, bench (each has --help).",
    )
    _common(run, 2000)
    run.add_argument("--rate", type=_rate, help="requests/s, 0.001 to 10,000 (default: the paper's Fig. 13 rate; "
                     "40 for translation)")
    run.add_argument("--block-size", type=_positive_int, default=16, help="paged block size in tokens (default: %(default)s)")

    sweep = cli_args.parser(
        "python -m engine.lab sweep",
        description="Block-size and request-rate sweeps: fragmentation against block count, batch against rate.",
    )
    _common(sweep, 1000)
    sweep.add_argument("--rate", type=_rate, help="requests/s of the block-size sweep (default: the paper's)")
    sweep.add_argument("--block-size", type=_positive_int, default=16, help="block size of the rate sweep (default: %(default)s)")
    sweep.add_argument("--block-sizes", type=listing(_positive_int, MAX_SWEEP_VALUES), default=[1, 2, 4, 8, 16, 32, 64, 128],
                       help=f"block sizes to sweep, at most {MAX_SWEEP_VALUES} (default: 1,2,4,8,16,32,64,128)")
    sweep.add_argument("--rates", type=listing(_rate, MAX_SWEEP_VALUES),
                       help=f"requests/s list, at most {MAX_SWEEP_VALUES} (default: 0.25x to 2x the paper's rate)")
    sweep.add_argument("--ns", type=listing(_fan_out, MAX_SWEEP_VALUES), default=None,
                       help="sweep parallel sampling over these n instead (e.g. 2,4,6) beside Fig. 15")
    sweep.add_argument("--widths", type=listing(_fan_out, MAX_SWEEP_VALUES), default=None,
                       help="sweep beam search over these widths instead (e.g. 2,4,6) beside Figs. 14 and 15")

    bench = cli_args.parser(
        "python -m engine.lab bench",
        description=f"Time a trace served to the end through all {count_words(ALLOCATORS)} allocators.",
    )
    _common(bench, 10_000)
    bench.add_argument("--rate", type=_rate, help="requests/s, 0.001 to 10,000 (default: the paper's)")
    bench.add_argument("--block-size", type=_positive_int, default=16, help="paged block size in tokens (default: %(default)s)")
    return {"run": run, "sweep": sweep, "bench": bench}


def _config(parser: argparse.ArgumentParser, args: argparse.Namespace, sharing: Sharing | None = None) -> LabConfig:
    if args.block_size > args.max_seq_len:
        parser.error(f"--max-seq-len {args.max_seq_len} is shorter than --block-size {args.block_size}: "
                     "give a longer --max-seq-len or a smaller --block-size")
    if args.slots < args.max_seq_len:
        parser.error(f"--slots {args.slots} is too small: at least --max-seq-len ({args.max_seq_len}), "
                     "one maximum-length sequence")
    args.dataset = _dataset(parser, args)
    try:
        return LabConfig(
            slots=args.slots,
            block_size=args.block_size,
            max_seq_len=args.max_seq_len,
            max_batch=args.max_batch,
            latency=LATENCY_MODELS[args.latency],
            sharing=_sharing(parser, args) if sharing is None else sharing,
        )
    except ValueError as err:
        parser.error(str(err))
        raise  # unreachable: parser.error exits


def cmd_run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    config = _config(parser, args)
    rate = paper.DEFAULT_RATE[args.dataset] if args.rate is None else args.rate
    comp = compare(args.dataset, rate, args.requests, args.seed, config)
    print(json.dumps(comp.as_dict(), indent=2) if args.json else format_text(comp))
    return 0


def cmd_sweep(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .sweep import block_size_sweep, rate_sweep

    if args.ns is not None or args.widths is not None:
        return _sharing_sweep(parser, args)
    config = _config(parser, args)
    for size in args.block_sizes:
        if size > args.max_seq_len or args.slots // size * size < args.max_seq_len:
            parser.error(f"block size {size} does not fit --max-seq-len {args.max_seq_len} in --slots {args.slots}")
    paper_rate = paper.DEFAULT_RATE[args.dataset]
    rate = paper_rate if args.rate is None else args.rate
    rates = args.rates or [paper_rate * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)]
    work = args.requests * (len(args.block_sizes) + len(rates) * len(ALLOCATORS))
    if work > MAX_SWEEP_WORK:
        parser.error(f"--requests {args.requests} over {len(args.block_sizes)} block sizes and {len(rates)} rates "
                     f"is {work:,} simulated requests, more than {MAX_SWEEP_WORK:,}; ask for fewer")
    start = time.perf_counter()
    if not _import_numpy():
        # The browser build has no numpy; run and bench need none.
        return cli_args.failure(parser.prog, "needs numpy, which is not installed in this Python "
                                "(pip install numpy; `run` and `bench` work without it)")

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


def _import_numpy() -> bool:
    """Import numpy (the sweep's); False when it is not installed. A stop signal arriving
    meanwhile is held until the import is over and then acts as ever: numpy turns an exception
    raised inside its import into an ImportError of its own, which would read as not installed."""
    held = (signal.SIGINT, signal.SIGTERM)
    masking = hasattr(signal, "pthread_sigmask")
    if masking:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        import numpy  # noqa: F401  (imported by the sweep; timed apart)
    except ImportError as exc:
        cause: BaseException | None = exc  # where signals cannot be held: look down the chain
        while cause is not None:
            if isinstance(cause, (cli_args.Stopped, KeyboardInterrupt)):
                raise cause from None
            cause = cause.__cause__ or cause.__context__
        return False
    finally:
        if masking:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    return True


def _sharing_sweep(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .sweep import sharing_sweep

    if args.ns is not None and args.widths is not None:
        parser.error("sweep either --ns or --widths, not both")
    if args.sampling != "basic" or args.n is not None or args.width is not None or args.prefix != "none":
        parser.error("--ns and --widths choose the sampling themselves: leave out --sampling, --n, --width, --prefix")
    sampling, values = ("parallel", args.ns) if args.ns is not None else ("beam", args.widths)
    config = _config(parser, args)
    if args.dataset == "translation":
        parser.error("the n and width sweeps reproduce Fig. 15 on sharegpt or alpaca")
    for n in values:
        try:
            LabConfig(slots=config.slots, block_size=config.block_size, max_seq_len=config.max_seq_len,
                      max_batch=config.max_batch, sharing=Sharing(sampling, n))
        except ValueError as err:
            parser.error(f"{sampling} with {n} sequences: {err}")
    work = args.requests * len(values) * len(ALLOCATORS)
    if work > MAX_SWEEP_WORK:
        parser.error(f"--requests {args.requests} over {len(values)} values is {work:,} simulated requests, "
                     f"more than {MAX_SWEEP_WORK:,}; ask for fewer")
    rate = paper.DEFAULT_RATE[args.dataset] if args.rate is None else args.rate
    start = time.perf_counter()
    timings: dict[str, float] = {}
    rows = sharing_sweep(args.dataset, rate, args.requests, args.seed, config, sampling, values, timings)
    timings["total"] = time.perf_counter() - start
    saving = paper.paper_saving(args.dataset, sampling)
    if args.json:
        print(json.dumps({"dataset": args.dataset, "rate": rate, "sampling": sampling, "rows": rows,
                          "paper_memory_saving": list(saving) if saving else None, "timings_s": timings}, indent=2))
        return 0
    what = "n" if sampling == "parallel" else "width"
    title = DATASETS[args.dataset].title
    print(f"{'Parallel sampling' if sampling == 'parallel' else 'Beam search'}: {title} at {rate:g} req/s, "
          f"{args.requests} requests, seed {args.seed}; paged against Orca (Oracle)")
    print(f"{what:>6} {'memory saved':>13} {'CoW copies':>11} {'Oracle batch':>13} {'paged batch':>12} "
          f"{'batch x':>8} {'tokens/s x':>11} {'preempt':>8}")
    for row in rows:
        batch = f"{row['batch_ratio']:8.2f}" if row["batch_ratio"] else f"{'-':>8}"
        thr = f"{row['throughput_ratio']:11.2f}" if row["throughput_ratio"] else f"{'-':>11}"
        print(f"{row['n']:6d} {row['memory_saving']:13.1%} {row['cow_copies']:11d} {row['oracle_running']:13.2f} "
              f"{row['paged_running']:12.2f} {batch} {thr} {row['paged_preemptions']:8d}")
    if saving:
        print(f"\nFig. 15 (OPT-13B, {title}): {saving[0]:.1%} saved with {what} 2 to {saving[1]:.1%} with {what} 6.")
    if sampling == "beam" and args.dataset == "alpaca":
        print("Fig. 14 (Alpaca): vLLM's advantage over Orca (Oracle) grows from 1.3x (basic sampling) to 2.3x "
              "(width 6).")
    print(f"\n{timings['configurations']:.0f} configurations in {timings['total']:.2f} s.")
    return 0


def _time_allocators(trace: list[Request], config: LabConfig) -> tuple[list[tuple[str, float, Result]], float]:
    rows = []
    cpu0 = time.process_time()
    for name in ALLOCATORS:
        t0 = time.perf_counter()
        sim = Simulator(trace, name, config)
        result = sim.run(drain=True)
        rows.append((name, time.perf_counter() - t0, result))
    return rows, time.process_time() - cpu0  # beside wall time: a busy machine stretches only the latter


def cmd_bench(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The chosen scenario (basic sampling by default), then the same trace with beam search of width 4."""
    config = _config(parser, args)
    rate = paper.DEFAULT_RATE[args.dataset] if args.rate is None else args.rate
    start = time.perf_counter()
    trace = generate(args.dataset, args.requests, rate, args.seed, config.max_seq_len - config.sharing.prefix)
    gen_time = time.perf_counter() - start
    scenarios = [config]
    beam = Sharing("beam", DEFAULT_FAN_OUT)
    if config.sharing != beam:
        try:
            scenarios.append(LabConfig(slots=config.slots, block_size=config.block_size,
                                       max_seq_len=config.max_seq_len, max_batch=config.max_batch,
                                       latency=config.latency, sharing=beam))
        except ValueError:
            pass  # memory too small for a beam group: time the chosen scenario only
    timed = []
    for cfg in scenarios:
        if cfg.sharing.prefix != config.sharing.prefix:
            continue
        rows, cpu = _time_allocators(trace, cfg)
        timed.append((cfg.sharing, rows, cpu))
    if args.json:
        out = {"requests": args.requests, "dataset": args.dataset, "rate": rate, "trace_s": gen_time}
        for k, (sharing, rows, cpu) in enumerate(timed):
            entry = {
                "scenario": sharing.label,
                "allocators": {n: {"seconds": t, "iterations": r.iterations, "finished": r.finished}
                               for n, t, r in rows},
                "total_s": sum(t for _, t, _ in rows), "total_cpu_s": cpu,
            }
            if k == 0:
                out.update(entry)
            else:
                out["beam_width_4"] = entry
        print(json.dumps(out, indent=2))
        return 0
    print(f"Benchmark: {args.requests} {DATASETS[args.dataset].title} requests at {rate:g} req/s, "
          f"each served to the end, through all {count_words(ALLOCATORS)} allocators")
    print(f"{'trace generation':18} {gen_time:7.3f} s")
    for sharing, rows, cpu in timed:
        total = sum(t for _, t, _ in rows)
        print(f"\n{sharing.label}:")
        for name, seconds, result in rows:
            print(f"{paper.LABELS[name]:18} {seconds:7.3f} s  {result.iterations:8d} engine steps, "
                  f"{result.iterations / seconds / 1e6:5.2f} M steps/s")
        print(f"{'all ' + count_words(ALLOCATORS):18} {total:7.3f} s  ({args.requests * len(rows) / total:,.0f} requests/s simulated; "
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
