"""The request-length models of the paper's datasets, shared by the game and the LAB.

The calibration (log-normal parameters solved so that the rounded, capped means equal the
paper's Fig. 11 means) is described in engine.lab.workload, which draws the LAB's traces from
these; engine.workload scales them to the game's board. This module is part of the game, so the
game never needs the LAB to start.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetSpec:
    """Length model of one dataset: log-normal parameters and the paper's means."""

    name: str
    title: str
    mean_input: float
    mean_output: float
    mu_input: float
    sigma_input: float
    mu_output: float
    sigma_output: float
    paper_rate: float  # request rate of the paper's Fig. 13 for this dataset


DATASETS: dict[str, DatasetSpec] = {
    "sharegpt": DatasetSpec("sharegpt", "ShareGPT", 161.31, 337.99, 4.58845, 1.0, 5.36806, 1.0, 2.0),
    "alpaca": DatasetSpec("alpaca", "Alpaca", 19.31, 58.45, 2.71502, 0.7, 3.66331, 0.9, 30.0),
    "translation": DatasetSpec("translation", "WMT16 En-De", 30.0, 32.0, 3.27620, 0.5, 3.34075, 0.5, 40.0),
}
