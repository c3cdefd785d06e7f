"""State that must stay bounded and figures that must read true, whatever the caller does."""

from __future__ import annotations

from engine.lab.report import waste
from engine.rules import THROUGHPUT_WINDOW_MS
from engine.telemetry import ThroughputWindow


def test_throughput_history_stays_bounded_when_never_read() -> None:
    window = ThroughputWindow()
    for i in range(100_000):
        window.add(i * 100.0, 200)  # a line every 100 ms of game time, rate never asked for
    assert len(window) <= THROUGHPUT_WINDOW_MS / 100.0 + 1
    assert window.rate(100_000 * 100.0 - 100.0) == len(window) * 200 * 1000.0 / THROUGHPUT_WINDOW_MS


def test_waste_never_prints_as_negative_zero() -> None:
    share_a_hair_above_one = 1.0 + 2.0**-52
    assert f"{waste(share_a_hair_above_one):.1%}" == "0.0%"
    assert waste(0.75) == 0.25
