"""The error a contiguous OOM is in PyTorch: its out-of-memory message, filled with the run's final
numbers scaled from the board to the GPU the board stands for.

The scale (data, kept here): the board's 200 visible blocks are the KV cache of the PagedAttention
paper's OPT-13B setup (Kwon et al., SOSP 2023, Table 1; the LAB's default memory too): one A100-40GB,
12 GiB left for keys and values after the weights, 800 KiB of them a token (key and value, 5,120
wide, 40 layers, 2 bytes each), 15,728 token slots. One block is 12 GiB / 200 = 61.44 MiB, about 79
tokens' keys and values. The GPU's total is what PyTorch reports for an A100-40GB: 39.39 GiB.

The mapping follows what PyTorch's caching allocator counts when it gives up (c10/cuda/
CUDACachingAllocator.cpp):

* "Tried to allocate": the refused request's range for its maximum length, `need` blocks;
* "of which ... is free": the free blocks in the request's reach, the memory it could be given;
* "reserved by PyTorch but unallocated": the free blocks it cannot be given (sealed off under held
  blocks, or in gaps too small for it): memory held in pieces no allocation of this size fits,
  which PyTorch's own hint calls fragmentation;
* "allocated by PyTorch": everything else on the GPU, weights and activations and every held KV
  block, reserved-but-empty ones included (a range reserved for a maximum length is one allocated
  tensor: the allocator cannot see that its tail holds no tokens);
* "this process has ... in use": the total less the free memory (no other process shares the GPU).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import modes
from .reports import RunReport
from .rules import VISIBLE_CELLS

# ---------------------------------------------------------------- the scale
KV_BYTES_PER_TOKEN = 2 * 5120 * 40 * 2  # OPT-13B in fp16: 800 KiB a token
KV_POOL_BYTES = 12 * 1024**3  # the paper's Table 1: KV cache of OPT-13B on one A100-40GB
WEIGHT_BYTES = 2 * 12_850_000_000  # OPT-13B's 12.85e9 parameters in fp16 (Table 1 rounds to 26 GB)
GPU_TOTAL_BYTES = 40_336 * 1024**2  # an A100-40GB's total capacity as PyTorch reports it: 39.39 GiB
GPU_NAME = "A100-40GB"
MODEL_NAME = "OPT-13B"
DEVICE = 0  # the GPU's index in the message

# ---------------------------------------------------------------- PyTorch's words
EXCEPTION = "torch.OutOfMemoryError"
# The message in its parts, in PyTorch's order (no memory fraction set, no private pools: the parts
# those add are left out). Joined by a space they read as PyTorch prints them, its two spaces
# before the documentation included.
PARTS: tuple[tuple[str, str], ...] = (
    ("head", "CUDA out of memory. Tried to allocate {tried}."),
    ("capacity", "GPU {device} has a total capacity of {total}"),
    ("free", "of which {free} is free."),
    ("process", "Including non-PyTorch memory, this process has {in_use} memory in use."),
    ("allocated", "Of the allocated memory {allocated} is allocated by PyTorch,"),
    ("unallocated", "and {unallocated} is reserved by PyTorch but unallocated."),
    ("hint", "If reserved but unallocated memory is large try setting "
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
    ("avoid", "to avoid fragmentation."),
    ("docs", " See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/"
             "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"),
)
PART_NAMES: tuple[str, ...] = tuple(name for name, _ in PARTS)
GAP = "..."  # marks the parts an abridged message leaves out (ASCII: the game font draws it)


def format_size(size: int) -> str:
    """A byte count as PyTorch's allocator writes it: bytes up to 1 KiB, then KiB, MiB and GiB with
    two decimals, each unit up to and including 1024 of the one below."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1024**2:
        return f"{size / 1024:.2f} KiB"
    if size <= 1024**3:
        return f"{size / 1024**2:.2f} MiB"
    return f"{size / 1024**3:.2f} GiB"


def block_bytes(blocks: int) -> int:
    """The bytes `blocks` of the board stand for (whole bytes, rounded down)."""
    return blocks * KV_POOL_BYTES // VISIBLE_CELLS


@dataclass(frozen=True, slots=True)
class TorchOom:
    """The figures of PyTorch's message, in bytes."""

    tried: int
    total: int
    free: int
    in_use: int
    allocated: int
    unallocated: int
    device: int = DEVICE

    def sizes(self) -> dict[str, str]:
        """Every figure as the message writes it, by the name its parts give it."""
        return {"tried": format_size(self.tried), "total": format_size(self.total),
                "free": format_size(self.free), "in_use": format_size(self.in_use),
                "allocated": format_size(self.allocated), "unallocated": format_size(self.unallocated),
                "device": str(self.device)}

    def part(self, name: str) -> str:
        """One part of the message, filled in."""
        return dict(PARTS)[name].format(**self.sizes())

    def text(self, names: Sequence[str] = PART_NAMES, exception: bool = True) -> str:
        """The message of the parts `names` (in PyTorch's order whatever theirs), GAP where parts
        are left out between or after them; after the exception's name, as a traceback ends, if
        `exception`."""
        chosen = [i for i, name in enumerate(PART_NAMES) if name in names]
        words: list[str] = []
        for n, i in enumerate(chosen):
            if (n == 0 and i > 0) or (n > 0 and i > chosen[n - 1] + 1):
                words.append(GAP)
            words.append(self.part(PART_NAMES[i]))
        if chosen and chosen[-1] < len(PARTS) - 1:
            words.append(GAP)
        message = " ".join(words)
        return f"{EXCEPTION}: {message}" if exception else message


def scaled(need: int, usable: int, sealed: int, open_unusable: int) -> TorchOom:
    """PyTorch's figures for a contiguous request of `need` blocks refused with `usable` free blocks
    in its reach, `sealed` sealed off and `open_unusable` in gaps too small for it."""
    free = block_bytes(usable)
    unallocated = block_bytes(sealed + open_unusable)
    in_use = GPU_TOTAL_BYTES - free
    return TorchOom(tried=block_bytes(need), total=GPU_TOTAL_BYTES, free=free, in_use=in_use,
                    allocated=in_use - unallocated, unallocated=unallocated)


def for_report(report: RunReport) -> TorchOom | None:
    """The message of a run that ended in a CUDA OOM under an allocator that fragments (contiguous);
    None for any other end (a paged run's memory was really full: no range was ever needed)."""
    if report.outcome != "oom" or not modes.get(report.mode).allocator.external_fragmentation:
        return None
    return scaled(report.need, report.usable_blocks, report.sealed_holes, report.open_unusable)
