"""A contiguous OOM in PyTorch's words (engine.torch_oom): its scale, its arithmetic, its wording."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import rules as R
from engine import torch_oom as T
from tests.reportkit import reports

GiB, MiB, KiB = 1024**3, 1024**2, 1024


@pytest.mark.parametrize("size, text", [
    (0, "0 bytes"), (1024, "1024 bytes"), (1025, "1.00 KiB"), (KiB * KiB, "1024.00 KiB"),
    (KiB * KiB + 1, "1.00 MiB"), (GiB, "1024.00 MiB"), (GiB + 1, "1.00 GiB"), (12 * GiB, "12.00 GiB"),
    (257_698_037, "245.76 MiB"), (3 * GiB // 2, "1.50 GiB"),
])
def test_sizes_are_written_as_pytorchs_allocator_writes_them(size, text):
    assert T.format_size(size) == text


def test_the_board_is_the_papers_kv_cache_of_opt_13b_on_an_a100():
    assert T.KV_BYTES_PER_TOKEN == 800 * KiB  # 2 (key, value) x 5,120 x 40 layers x 2 bytes
    assert T.block_bytes(R.VISIBLE_CELLS) == T.KV_POOL_BYTES == 12 * GiB
    assert T.format_size(T.block_bytes(1)) == "61.44 MiB"
    assert T.format_size(T.GPU_TOTAL_BYTES) == "39.39 GiB"
    assert T.KV_POOL_BYTES + T.WEIGHT_BYTES <= T.GPU_TOTAL_BYTES  # weights and KV cache fit the GPU
    from engine.lab.simulator import DEFAULT_SLOTS

    assert T.KV_POOL_BYTES // T.KV_BYTES_PER_TOKEN == DEFAULT_SLOTS == 15_728  # the LAB's memory, Table 1


def test_a_crash_with_memory_sealed_off_reads_as_pytorchs_fragmentation():
    # 4 blocks refused; 88 free: 5 in its reach, 83 sealed off, none in small gaps.
    oom = T.scaled(need=4, usable=5, sealed=83, open_unusable=0)
    assert oom.sizes() == {"tried": "245.76 MiB", "total": "39.39 GiB", "free": "307.20 MiB",
                           "in_use": "39.09 GiB", "allocated": "34.11 GiB", "unallocated": "4.98 GiB",
                           "device": "0"}
    assert oom.text() == (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 245.76 MiB. GPU 0 has a total capacity "
        "of 39.39 GiB of which 307.20 MiB is free. Including non-PyTorch memory, this process has 39.09 GiB "
        "memory in use. Of the allocated memory 34.11 GiB is allocated by PyTorch, and 4.98 GiB is reserved "
        "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
        "Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html"
        "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)")


def test_gaps_too_small_count_as_reserved_but_unallocated_too():
    sealed = T.scaled(need=4, usable=2, sealed=10, open_unusable=0)
    gaps = T.scaled(need=4, usable=2, sealed=0, open_unusable=10)
    assert sealed == gaps and sealed.unallocated == T.block_bytes(10)
    assert T.scaled(need=4, usable=3, sealed=0, open_unusable=0).unallocated == 0  # memory really full


@given(usable=st.integers(0, R.VISIBLE_CELLS), sealed=st.integers(0, R.VISIBLE_CELLS),
       gaps=st.integers(0, R.VISIBLE_CELLS), need=st.integers(1, R.BLOCKS_PER_REQUEST))
def test_the_figures_add_up_to_the_gpu(usable, sealed, gaps, need):
    free = usable + sealed + gaps
    if free > R.VISIBLE_CELLS:
        return
    oom = T.scaled(need, usable, sealed, gaps)
    assert oom.total == T.GPU_TOTAL_BYTES
    assert oom.free + oom.in_use == oom.total  # one process on the GPU
    assert oom.allocated + oom.unallocated == oom.in_use  # no memory outside PyTorch's
    assert oom.tried == T.block_bytes(need)
    # The board's free blocks are PyTorch's free and reserved-but-unallocated memory, to a byte per block.
    assert 0 <= T.block_bytes(free) - (oom.free + oom.unallocated) <= 1
    # Everything held (weights, activations and every held block) is allocated.
    assert oom.allocated >= T.GPU_TOTAL_BYTES - T.KV_POOL_BYTES


def test_an_abridged_message_keeps_pytorchs_order_and_marks_what_it_leaves_out():
    oom = T.scaled(need=4, usable=5, sealed=83, open_unusable=0)
    assert oom.text(("avoid", "free", "head", "unallocated"), exception=False) == (
        "CUDA out of memory. Tried to allocate 245.76 MiB. ... of which 307.20 MiB is free. ... and 4.98 GiB is "
        "reserved by PyTorch but unallocated. ... to avoid fragmentation. ...")
    whole = oom.text(T.PART_NAMES[:-1])
    assert whole.startswith("torch.OutOfMemoryError: CUDA out of memory.") and whole.endswith("fragmentation. ...")
    assert "..." not in whole[:-4]
    assert oom.text(T.PART_NAMES[1:], exception=False).startswith("... GPU 0 has")


def test_a_contiguous_oom_has_the_message_and_no_other_end_does():
    for name, r in reports().items():
        oom = T.for_report(r)
        if r.outcome == "oom" and r.mode == "contiguous":
            assert oom == T.scaled(r.need, r.usable_blocks, r.sealed_holes, r.open_unusable), name
            assert oom.tried == T.block_bytes(r.need)
            assert abs(oom.free + oom.unallocated - T.block_bytes(r.free_cells)) <= 1
        else:
            assert oom is None, name
    paged = reports()["paged_full"]
    assert paged.outcome == "oom" and T.for_report(paged) is None  # a paged OOM: memory really full
    assert isinstance(T.for_report(dataclasses.replace(paged, mode="contiguous")), T.TorchOom)
