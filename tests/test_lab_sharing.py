"""Memory sharing in the serving lab: reference counts, copy-on-write, group scheduling, Figs. 14-16."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.lab import BlockPool, LabConfig, Request, Simulator, generate
from engine.lab.beams import BeamTree
from engine.lab import ALLOCATORS
from engine.lab.cli import count_words, main
from engine.lab.report import compare
from engine.lab.sharing import PREFIXES, Sharing
from tests.labkit import small_trace
from tests.prockit import is_usage_error

ROOT = Path(__file__).resolve().parents[1]

SCENARIOS = [
    Sharing(),
    Sharing("parallel", 2),
    Sharing("parallel", 5),
    Sharing("beam", 2),
    Sharing("beam", 4),
    Sharing(prefix=40),
]


# ------------------------------------------------------------------ block pool
def check_pool(pool: BlockPool) -> None:
    """Reference counts equal pointers; no referenced block is free; every block is accounted for once."""
    pointers = Counter(b for table in pool.tables.values() for b in table)
    for block in range(pool.num_blocks):
        assert pool.refs[block] == pointers.get(block, 0), f"block {block}: refcount is not its pointer count"
    free = set(pool.free)
    assert len(free) == len(pool.free), "a block is free twice"
    assert not free & set(pointers), "a referenced block was freed"
    assert not free & pool.pinned, "a pinned block was freed"
    assert free | set(pointers) | pool.pinned == set(range(pool.num_blocks)), "blocks are not conserved"
    for seq, table in pool.tables.items():
        assert len(table) == -(-pool.lengths[seq] // pool.block_size)


def written_blocks(pool: BlockPool, seq, before: int) -> list[int]:
    """The blocks a write of tokens after position ``before`` went into."""
    return pool.tables[seq][before // pool.block_size:]


@given(st.lists(st.tuples(st.sampled_from("cfar"), st.integers(0, 7), st.integers(0, 7), st.integers(1, 40)),
                max_size=80), st.sampled_from([1, 4, 16]))
@settings(max_examples=200, deadline=None)
@example([("c", 0, 0, 1), ("a", 0, 0, 10), ("f", 0, 1, 1), ("r", 1, 0, 1), ("a", 0, 0, 3)], 4)  # fork, drop one
@example([("c", 0, 0, 1), ("a", 0, 0, 6), ("f", 0, 1, 1), ("a", 1, 0, 1), ("a", 0, 0, 1)], 4)  # write a shared block
@example([("c", 1, 1, 1), ("a", 1, 0, 5), ("r", 1, 0, 1)], 16)  # behind the pinned prefix
def test_block_pool_refcounts_and_copy_on_write(ops, block_size):
    pool = BlockPool(48, block_size)
    prefix = pool.pin(2)
    for op, a, b, tokens in ops:
        if op == "c" and a not in pool.tables:
            if b % 2:
                pool.create(a, prefix, 2 * block_size)
            else:
                pool.create(a)
        elif op == "f" and a in pool.tables and b not in pool.tables:
            pool.fork(a, b)
        elif op == "a" and a in pool.tables:
            before = pool.lengths[a]
            need = -(-(before + tokens) // block_size) - len(pool.tables[a]) + 1
            if need > len(pool.free):
                continue
            pool.append(a, tokens)
            # Copy-on-write: every block this write went into is referenced by this sequence only.
            for block in written_blocks(pool, a, before):
                assert pool.refs[block] == 1, "wrote into a block another sequence points at"
        elif op == "r" and a in pool.tables:
            pool.release(a)
        check_pool(pool)
    for seq in list(pool.tables):
        pool.release(seq)
    check_pool(pool)
    assert len(pool.free) == pool.num_blocks - len(prefix)


def test_copy_on_write_copies_a_shared_partial_block_once_per_extra_sharer():
    pool = BlockPool(16, 16)
    pool.create("a")
    pool.append("a", 20)  # one full block and one with 4 tokens
    for seq in "bcd":
        pool.fork("a", seq)
    assert pool.refs[pool.tables["a"][1]] == 4
    for seq in "abcd":
        pool.append(seq, 1)
    assert pool.cow_copies == 3  # the last writer keeps the original
    assert len({pool.tables[s][1] for s in "abcd"}) == 4
    assert pool.refs[pool.tables["a"][0]] == 4  # the full block stays shared
    check_pool(pool)


def test_a_block_is_freed_only_with_its_last_reference():
    pool = BlockPool(8, 4)
    pool.create("a")
    pool.append("a", 8)
    pool.fork("a", "b")
    shared = list(pool.tables["a"])
    pool.release("a")
    assert not set(shared) & set(pool.free)
    pool.release("b")
    assert set(shared) <= set(pool.free)


@given(st.integers(0, 10_000), st.integers(2, 6), st.integers(1, 60), st.sampled_from([1, 4, 16]))
@settings(max_examples=60, deadline=None)
def test_beam_tree_counts_what_block_tables_hold(seed, width, prompt, block_size):
    """The compact beam count agrees with numbered blocks and reference counts, copies included."""
    rng = random.Random(seed)
    tree = BeamTree(width, prompt, block_size)
    pool = BlockPool(4096, block_size)
    pool.create((0, 0))
    pool.append((0, 0), prompt)
    seqs = [(0, 0)] + [(0, i) for i in range(1, width)]
    for seq in seqs[1:]:
        pool.fork((0, 0), seq)
    fresh = width
    for step in range(rng.randint(1, 80)):
        if step and rng.random() < 0.5:
            dropped = [i for i in range(width) if rng.random() < 0.4]
            survivors = [i for i in range(width) if i not in dropped] or [0]
            dropped = [i for i in dropped if i not in survivors]
            forks = [(i, rng.choice(survivors)) for i in dropped]
            tree.fork(forks)
            gone = []
            for dead, parent in forks:
                child = (0, fresh)
                fresh += 1
                pool.fork(seqs[parent], child)
                gone.append(seqs[dead])
                seqs[dead] = child
            for seq in gone:
                pool.release(seq)
        tree.write()
        for seq in seqs:
            pool.append(seq, 1)
        check_pool(pool)
        assert tree.blocks == pool.used
        assert tree.copies == pool.cow_copies


# ------------------------------------------------------------------ simulator
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 20),
    rate=st.floats(0.5, 200.0),
    block=st.sampled_from([1, 3, 8, 16]),
    sharing=st.sampled_from(SCENARIOS),
)
@settings(max_examples=60, deadline=None)
def test_shared_blocks_stay_consistent_step_by_step(seed, n, rate, block, sharing):
    max_len = 96
    config = LabConfig(slots=8 * max_len, block_size=block, max_seq_len=max_len + sharing.prefix, max_batch=16,
                       sharing=sharing)
    sim = Simulator(small_trace(seed, n, rate, max_len), "paged", config, track_blocks=True)
    pool = sim.pool
    steps = 0
    while not sim.done:
        before = list(sim.order)
        lengths = {seq: pool.lengths[seq] for seq in pool.tables}
        sim.advance(1)
        check_pool(pool)
        assert pool.used == sim.blocks_used <= sim.num_blocks
        for seq, table in pool.tables.items():
            rid = seq[0]
            assert pool.lengths[seq] == sim.length(sim.running[rid])
            if seq in lengths and lengths[seq] < pool.lengths[seq]:
                for block in written_blocks(pool, seq, lengths[seq]):
                    assert pool.refs[block] == 1, "copy-on-write let a sequence write into a shared block"
        # A request's sequences run and leave together: a running request has all of them.
        per_request = Counter(seq[0] for seq in pool.tables)
        assert all(per_request[rid] == sharing.seqs for rid in sim.running)
        assert sim.running_seqs == sharing.seqs * len(sim.running) <= config.max_batch
        preempted = [rid for rid in before if rid not in sim.running and rid in sim.generated]
        if preempted:  # whole requests, newest first
            assert sorted(preempted) == before[-len(preempted):]
        mem = sim.memory()
        assert mem.total() == pytest.approx(config.slots)
        assert min(mem.as_dict().values()) >= -1e-9
        steps += 1
        assert steps < 100_000
    assert sim.finished == n
    assert not pool.tables and len(pool.free) == sim.num_blocks - len(pool.pinned)


@given(seed=st.integers(0, 10_000), sharing=st.sampled_from(SCENARIOS), block=st.sampled_from([4, 16]),
       allocator=st.sampled_from(["oracle", "pow2", "paged"]))
@settings(max_examples=30, deadline=None)
def test_jumping_over_steps_matches_stepping_with_sharing(seed, sharing, block, allocator):
    dataset = "sharegpt" if seed % 2 else "alpaca"
    config = LabConfig(slots=6144, block_size=block, max_seq_len=1024, sharing=sharing)
    trace = generate(dataset, 60, 3.0 if seed % 2 else 40.0, seed, config.max_seq_len - sharing.prefix)
    fast = Simulator(trace, allocator, config).run()
    stepped = Simulator(trace, allocator, config)
    while not stepped.done:
        stepped.advance(1)
    tracked = Simulator(trace, allocator, config, track_blocks=True)
    while not tracked.done:
        tracked.advance(1)
    for slow in (stepped.result(), tracked.result()):
        assert fast.iterations == slow.iterations
        assert fast.preemptions == slow.preemptions
        assert fast.cow_copies == slow.cow_copies
        assert fast.finished == slow.finished == len(trace)
        for key in ("token_share", "mean_running", "throughput", "memory_saving", "sim_time", "window"):
            assert getattr(fast, key) == pytest.approx(getattr(slow, key), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("dataset", ["alpaca", "sharegpt", "translation"])
@pytest.mark.parametrize("rate", [0.001, 0.01, 0.1, 2.0, 300.0])
@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_any_rate_and_seed_runs_to_the_end(dataset, rate, seed):
    """Idle gaps between arrivals (the clock lands on the next arrival exactly) and floods alike."""
    trace = generate(dataset, 12, rate, seed, 2048)
    for allocator in ("oracle", "paged"):
        result = Simulator(trace, allocator).run()
        assert result.finished == len(trace)


def test_short_sequences_at_a_high_rate_run_to_the_end():
    config = LabConfig(max_seq_len=16)
    for seed in (306, 1, 2):
        trace = generate("sharegpt", 200, 2.0, seed, 16)
        assert Simulator(trace, "paged", config).run().finished == 200


@pytest.mark.parametrize("argv", [
    ["--rate", "0.1", "--dataset", "alpaca", "--seed", "29"],
    ["--rate", "0.01", "--dataset", "alpaca", "--seed", "1"],
    ["--max-seq-len", "16", "--rate", "2", "--seed", "306"],
])
def test_idle_gaps_do_not_crash_the_command(argv):
    out = subprocess.run([sys.executable, "-m", "engine.lab", *argv], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr


def test_contiguous_baselines_share_nothing():
    config = LabConfig(sharing=Sharing("parallel", 4))
    trace = generate("alpaca", 300, 30.0, 1)
    sim = Simulator(trace, "oracle", config)
    result = sim.run()
    assert result.memory_saving == 0 and result.cow_copies == 0
    assert result.mean_running_sequences == pytest.approx(4 * result.mean_running)


def test_a_group_is_admitted_whole_or_not_at_all():
    # Room for 3 sequences of 64 slots: a request of 4 samples never starts, one of 2 does.
    trace = [Request(0, 0.0, 32, 32)]
    assert Simulator(trace, "oracle", LabConfig(slots=256, max_seq_len=64, sharing=Sharing("parallel", 4))).run().finished == 1
    with pytest.raises(ValueError):
        LabConfig(slots=192, max_seq_len=64, sharing=Sharing("parallel", 4))
    sim = Simulator(trace * 1, "oracle", LabConfig(slots=256, max_seq_len=64, max_batch=4,
                                                   sharing=Sharing("parallel", 4)))
    sim.advance(1)
    assert sim.running_seqs == 4 and len(sim.ranges.owned) == 4


def test_shared_prefix_is_computed_once_and_held_once():
    sharing = Sharing(prefix=PREFIXES["fiveshot"])
    config = LabConfig(sharing=sharing)
    trace = generate("translation", 200, 40.0, 0, config.max_seq_len - sharing.prefix)
    paged = Simulator(trace, "paged", config, track_blocks=True)
    pinned = paged.pool.pinned
    assert len(pinned) == 341 // 16
    while not paged.done:
        paged.advance(1)
        for table in paged.pool.tables.values():
            assert set(table[: len(pinned)]) == pinned  # every request starts with the same blocks
    assert paged.result().memory_saving > 0.5


# ------------------------------------------------------------------ paper figures
def _run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _json(capsys, *argv: str) -> dict:
    code, out, _ = _run_cli(capsys, *argv, "--json")
    assert code == 0
    return json.loads(out)


FIG15 = {  # the paper's range (n or width 2 to 6), widened x1.5 either way
    ("alpaca", "parallel"): (0.061 / 1.5, 0.098 * 1.5),
    ("alpaca", "beam"): (0.376 / 1.5, 0.552 * 1.5),
    ("sharegpt", "parallel"): (0.162 / 1.5, 0.305 * 1.5),
    ("sharegpt", "beam"): (0.443 / 1.5, 0.663 * 1.5),
}


@pytest.mark.parametrize("dataset,sampling", sorted(FIG15))
def test_fig15_memory_saving_is_the_papers_and_grows_with_n(capsys, dataset, sampling):
    flag = "--n" if sampling == "parallel" else "--width"
    savings = []
    for n in ("2", "4", "6"):
        data = _json(capsys, "--dataset", dataset, "--sampling", sampling, flag, n, "--requests", "1000")
        paged = data["allocators"]["paged"]
        savings.append(paged["memory_saving"])
        assert paged["cow_copies"] > 0
        assert paged["paper_memory_saving"] is not None
    lo, hi = FIG15[(dataset, sampling)]
    assert lo <= savings[1] <= hi
    assert savings[0] < savings[1] < savings[2]


def test_fig14_beam_width_6_beats_basic_sampling(capsys):
    beam = _json(capsys, "--dataset", "alpaca", "--sampling", "beam", "--width", "6", "--requests", "1000")
    basic = _json(capsys, "--dataset", "alpaca", "--requests", "1000")
    ratio = beam["allocators"]["oracle"]["paged_ratio"]
    assert 2.3 / 1.5 <= ratio <= 2.3 * 1.5
    assert ratio > basic["allocators"]["oracle"]["paged_ratio"]
    assert beam["allocators"]["oracle"]["paper_paged_ratio"] == 2.3
    assert basic["allocators"]["paged"]["memory_saving"] == 0 and basic["allocators"]["paged"]["cow_copies"] == 0


def test_fig16_shared_prefix(capsys):
    one = _json(capsys, "--prefix", "oneshot", "--requests", "1000")
    five = _json(capsys, "--prefix", "fiveshot", "--requests", "1000")
    assert one["dataset"] == five["dataset"] == "translation"
    r1, r5 = (d["allocators"]["oracle"]["paged_ratio"] for d in (one, five))
    assert 1.67 / 1.5 <= r1 <= 1.67 * 1.5
    assert 3.58 / 1.5 <= r5 <= 3.58 * 1.5
    assert r5 > r1
    assert one["ratio_measure"] == "throughput"
    assert five["allocators"]["paged"]["memory_saving"] > one["allocators"]["paged"]["memory_saving"] > 0


def test_text_output_sets_the_papers_sharing_figures_beside_ours(capsys):
    code, out, _ = _run_cli(capsys, "--dataset", "alpaca", "--sampling", "beam", "--width", "6", "--requests", "300")
    assert code == 0
    assert "beam search, width 6" in out and "37.6%" in out and "55.2%" in out and "2.30" in out
    assert "copied on write" in out
    code, out, _ = _run_cli(capsys, "--prefix", "oneshot", "--requests", "300")
    assert "1.67" in out and "shared prefix of 80 tokens" in out


@pytest.mark.parametrize("argv", [
    ["--n", "4"],
    ["--sampling", "beam", "--n", "4"],
    ["--sampling", "parallel", "--width", "4"],
    ["--sampling", "beam", "--prefix", "oneshot"],
    ["--sampling", "parallel", "--n", "1"],
    ["--sampling", "parallel", "--n", "17"],
    ["--sampling", "nucleus"],
    ["--prefix", "twoshot"],
    ["--dataset", "alpaca", "--workload", "sharegpt"],
    ["--sampling", "beam", "--width", "8", "--slots", "4096"],
    ["--samp", "beam"],
    ["sweep", "--ns", "2,4", "--widths", "2"],
    ["sweep", "--ns", "2", "--sampling", "beam"],
    ["sweep", "--ns", "1,2"],
    ["bench", "--width", "4"],
])
def test_bad_sharing_options_exit_2(capsys, argv):
    code, _, err = _run_cli(capsys, *argv)
    assert code == 2
    assert is_usage_error(err), err


def test_sweep_over_widths_and_ns(capsys):
    data = _json(capsys, "sweep", "--dataset", "alpaca", "--widths", "2,4", "--requests", "150")
    assert [row["n"] for row in data["rows"]] == [2, 4]
    assert data["rows"][0]["memory_saving"] < data["rows"][1]["memory_saving"]
    code, out, _ = _run_cli(capsys, "sweep", "--dataset", "sharegpt", "--ns", "2,6", "--requests", "100")
    assert code == 0 and "Parallel sampling" in out and "16.2%" in out and "30.5%" in out


def test_bench_times_beam_width_4_too(capsys):
    code, out, _ = _run_cli(capsys, "bench", "--requests", "120")
    assert code == 0
    assert "basic sampling:" in out and "beam search, width 4:" in out and out.count(f"\nall {count_words(ALLOCATORS)}") == 2
    data = _json(capsys, "bench", "--requests", "60")
    assert data["beam_width_4"]["allocators"]["paged"]["finished"] == 60


def test_comparison_is_deterministic_with_sharing():
    config = LabConfig(sharing=Sharing("beam", 3))
    a = compare("alpaca", 30.0, 150, 2, config).as_dict()
    b = compare("alpaca", 30.0, 150, 2, config).as_dict()
    assert a == b


# ------------------------------------------------------------------ what the LAB draws
def test_projection_reads_the_engine_without_changing_it():
    from engine.lab.projection import project, state_fill, state_owner, state_refs

    config = LabConfig(sharing=Sharing("beam", 4))
    trace = generate("alpaca", 300, 30.0, 5)
    looked, unseen = (Simulator(trace, "paged", config, track_blocks=True) for _ in range(2))
    for step in range(400):
        looked.step(1)
        unseen.step(1)
        view = project(looked)
        assert view == project(looked)
        if step % 50 == 0:
            for seq, cells in view.sequences.items():
                assert list(cells) == looked.pool.tables[seq]
            for cell, state in enumerate(view.cells):
                if state >= 0 and cell not in looked.pool.pinned:
                    assert state_refs(state) == min(15, looked.pool.refs[cell])
                    assert state_owner(state) == min(s[0] for s in view.pointing_at(cell))
                    assert 0 < state_fill(state) <= 16
    assert looked.block_tables() == unseen.block_tables()
    assert looked.result() == unseen.result()


def test_projection_of_contiguous_ranges_and_untracked_paging():
    from engine.lab.projection import FREE, project

    trace = generate("sharegpt", 100, 2.0, 1)
    config = LabConfig(sharing=Sharing("parallel", 2))
    sim = Simulator(trace, "oracle", config)
    for _ in range(200):
        sim.step(1)
    view = project(sim)
    for rid, run in sim.running.items():
        assert [seq for seq in view.sequences if seq[0] == rid] == [(rid, 0), (rid, 1)]
    held = sum(1 for state in view.cells if state != FREE)
    assert held <= sim.memory_manager.held() // 16 + 2 * len(sim.running)
    paged = Simulator(trace, "paged", config)
    paged.step(1)
    with pytest.raises(ValueError):
        project(paged)


@pytest.mark.parametrize("sharing", [Sharing("beam", 4), Sharing("parallel", 3), Sharing(prefix=80)])
def test_preempted_groups_are_recomputed_alike_in_every_mode(sharing):
    """Memory tight enough that whole requests are preempted and readmitted: all three modes agree."""
    config = LabConfig(slots=6144, max_seq_len=1024, sharing=sharing)
    trace = generate("sharegpt", 80, 4.0, 7, config.max_seq_len - sharing.prefix)
    fast = Simulator(trace, "paged", config).run()
    results = [fast]
    for tracked in (False, True):
        sim = Simulator(trace, "paged", config, track_blocks=tracked)
        while not sim.done:
            sim.advance(1)
        results.append(sim.result())
    assert fast.preemptions > 0
    for other in results[1:]:
        assert (other.iterations, other.preemptions, other.cow_copies) == (fast.iterations, fast.preemptions,
                                                                           fast.cow_copies)
        assert other.memory_saving == pytest.approx(fast.memory_saving, rel=1e-9)


def test_notes_say_why_a_sharing_figure_is_off_the_papers():
    # Block size 1 shares every prompt token, far more than Fig. 15's 16-token blocks.
    comp = compare("alpaca", 30.0, 300, 0, LabConfig(block_size=1, sharing=Sharing("parallel", 4)))
    (note,) = [n for n in comp.notes() if n.startswith("Memory saved by sharing")]
    assert "Fig. 15 6.1% to 9.8%" in note and "prompt's full blocks" in note
    beam = compare("alpaca", 30.0, 300, 0, LabConfig(max_batch=64, sharing=Sharing("beam", 6)))
    (ratio_note,) = [n for n in beam.notes() if n.startswith("Advantage over Orca (Oracle)")]
    assert "paper 2.30x" in ratio_note and "limit of running sequences" in ratio_note
