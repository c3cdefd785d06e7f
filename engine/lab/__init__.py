"""Serving lab: a KV-cache simulator reproducing the PagedAttention paper's memory result.

Pure standard library at import time, so it also runs in the browser build;
numpy is imported only by the sweep.
"""

from .allocators import ContiguousAllocator
from ..kvpool import BlockPool
from .memory import ALLOCATORS, BASELINES, CONTIGUOUS, REFERENCE, REGISTRY, ContiguousMemory, LabAllocator, PagedMemory
from .sharing import PREFIXES, SAMPLINGS, SCENARIOS, Sharing
from .latency import LATENCY_MODELS, OPT13B_A100, LatencyModel
from .simulator import DEFAULT_SLOTS, Breakdown, LabConfig, Result, Simulator, StepReport
from .workload import DATASETS, DatasetSpec, Request, generate

__all__ = [
    "ALLOCATORS",
    "BASELINES",
    "CONTIGUOUS",
    "LabAllocator",
    "REFERENCE",
    "REGISTRY",
    "DATASETS",
    "DEFAULT_SLOTS",
    "OPT13B_A100",
    "Breakdown",
    "ContiguousAllocator",
    "DatasetSpec",
    "LATENCY_MODELS",
    "LabConfig",
    "LatencyModel",
    "PagedMemory",
    "ContiguousMemory",
    "BlockPool",
    "Sharing",
    "SAMPLINGS",
    "PREFIXES",
    "SCENARIOS",
    "Request",
    "Result",
    "Simulator",
    "StepReport",
    "generate",
]
