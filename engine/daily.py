"""The daily challenge: one seed per UTC date, the same for every player that day."""

from __future__ import annotations

import hashlib
from datetime import date, datetime, timezone

EPOCH = date(1970, 1, 1)
SEED_LIMIT = 2**31  # seeds are 31-bit, like every other seed the game hands out


def utc_day(timestamp: float) -> date:
    """The UTC calendar date of a POSIX timestamp (time comes in as an argument)."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).date()


def daily_seed(day: date) -> int:
    """The run's seed for `day`: a hash of the date, so neighbouring days share nothing."""
    digest = hashlib.sha256(f"vram-tetris daily {day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (SEED_LIMIT - 1) + 1


def day_number(day: date) -> int:
    """Days since 1970-01-01 (how a share code stores the date)."""
    return (day - EPOCH).days


def from_day_number(n: int) -> date:
    return date.fromordinal(EPOCH.toordinal() + n)


def parse_day(text: str) -> date:
    """An ISO date written YYYY-MM-DD (one spelling per day) from EPOCH on (the first day a
    daily can have: a share code counts days from it); ValueError otherwise."""
    if not isinstance(text, str) or len(text) != 10:
        raise ValueError(f"expected a date as YYYY-MM-DD, not {str(text)[:40]!r}")
    day = date.fromisoformat(text)
    if day.isoformat() != text:  # Python also reads "2024-W09-4" and "20240229xx" as 2024-02-29
        raise ValueError(f"expected a date as YYYY-MM-DD, not {text!r}")
    if day < EPOCH:
        raise ValueError(f"a daily challenge is dated {EPOCH.isoformat()} or later, not {text}")
    return day
