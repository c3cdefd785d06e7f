"""The Korean reads right: particles follow the substituted value, one word per concept, numbers
grouped in thousands. Every catalogue entry is rendered with sample values (numbers ending in each
digit, big numbers, Latin names); each check is shown to fail on a deliberately wrong string."""
from __future__ import annotations

import itertools
import re
import string

import pytest

from ui import i18n
from ui.i18n import particles as P
from ui.i18n.ko_terms import BANNED

KO = i18n.catalogue("ko")
# Numbers ending in every digit, round numbers (십, 백, 천, 만) and ones that need separators.
NUMBERS = (10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100, 1000, 6144, 10001, 123456)
NAMES = ("CDN", "llama_7b_prompt", "stable_diff_unet", "vLLM", "Orca (Max)", "KV", "ShareGPT", "페이징", "연속")
# Placeholders that take text (names, keys, nested messages, preformatted percentages, identifiers);
# every other placeholder takes a number, and the Korean groups it in thousands ("{n:,}").
TEXT_PLACEHOLDERS = frozenset({"back", "baseline", "cause", "cell", "cells", "clock", "contiguous", "dataset",
    "board", "control", "day", "drop", "engine", "figure", "move", "source", "turn", "exact", "extra", "game", "goal", "gpu", "hard_drop", "head", "hint", "hold",
    "id", "ids", "key", "label", "line", "mechanic", "mode", "model", "modes", "more", "name", "outcome", "paged",
    "paper_concurrency", "paper_contiguous_waste", "paper_paged_waste", "pause", "peak", "percent",
    "preempt_key", "pick_key", "budget_keys", "spec_keys", "ranges", "reason", "reference", "req", "rotate_ccw", "rotate_cw", "scenario", "scores",
    "sharing", "size", "split", "split_key", "state", "status", "summary", "t", "tail", "text", "what", "where"})
# Realistic text for the identifiers, dates, keys, cells ("3,4") and lists among them.
TEXT_VALUES = {"id": ("10", "12", "1234"), "day": ("2025-01-31",), "cell": ("3,4",), "cells": ("0->3,4, 1->5,6",),
               "ranges": ("0-3, 8-11",), "ids": ("#3, #10",), "key": ("Esc", "B"), "pick_key": ("N",), "budget_keys": ("[ ]",), "spec_keys": ("- =",), "split": ("분할(Shift / P)", "분할"), "board": ("보드(B)", "보드"), "drop": ("하드 드롭(Space)", "드롭"),
               "t": ("  12.5",), "clock": ("01:05",), "percent": ("80%", "12.5%"), "peak": ("93%",),
               "paper_concurrency": ("2~4",), "paper_contiguous_waste": ("60~80",), "paper_paged_waste": ("4",),
               "gpu": ("A100-40GB",), "model": ("OPT-13B",), "size": ("61.44 MiB",)}
TEXT_IN = {"report.fact_line": {"value"}}  # a placeholder that takes text in this one message
PARTICLE_FORMS = tuple(sorted(P.FORMS, key=len, reverse=True))
FIXED_PARTICLE = re.compile(r"\}(?:</\w+>)*(" + "|".join(PARTICLE_FORMS) + r")(?![가-힣])")
UNGROUPED = re.compile(r"(?<![\d,.#])\d{4,}(?!\d)")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def fields(message: str) -> list[tuple[str, str]]:
    """(name, format spec) of each placeholder."""
    return [(f, spec or "") for _, f, spec, _ in string.Formatter().parse(message) if f is not None]


def samples(message: str, key: str = "") -> list[dict[str, object]]:
    """Value sets for a message: each number in turn for its numeric placeholders, each name for the rest."""
    names = dict(fields(message))
    if not names:
        return [{}]
    out = []
    for i, (number, name) in enumerate(itertools.zip_longest(NUMBERS, NAMES)):
        values: dict[str, object] = {}
        for field, spec in names.items():
            if field in TEXT_VALUES and "," not in spec:
                options = TEXT_VALUES[field]
                values[field] = options[i % len(options)]
            elif (field in TEXT_PLACEHOLDERS or field in TEXT_IN.get(key, ())) and "," not in spec:
                values[field] = name if name is not None else NAMES[i % len(NAMES)]
            else:
                values[field] = number if number is not None else NUMBERS[i % len(NUMBERS)]
        out.append(values)
    return out


def rendered(messages: dict[str, str]) -> list[tuple[str, dict[str, object], str]]:
    """(key, values, text) for every message of `messages` rendered with every sample set."""
    out = []
    for key, message in messages.items():
        for values in samples(message, key):
            text = message.format(**{k: P.Spoken(v) for k, v in values.items()})
            out.append((key, values, text))
    return out


# ---------------------------------------------------------------------------- the checks
def particle_faults(messages: dict[str, str]) -> list[str]:
    """Messages that write a fixed particle after a placeholder, or render a wrong one."""
    faults = [f"{key}: fixed particle in {message!r}" for key, message in messages.items()
              if FIXED_PARTICLE.search(message)]
    for key, values, text in rendered(messages):
        for value in values.values():
            said = str(value)
            for m in re.finditer(re.escape(said) + "(" + "|".join(PARTICLE_FORMS) + r")(?![가-힣])", text):
                if m.start() > 0 and said[0].isdigit() and text[m.start() - 1].isdigit():
                    continue  # "10" inside "110": not this value
                if m.group(1) != P.choose(said, m.group(1)):
                    faults.append(f"{key}: {text!r} has {said}{m.group(1)}, not {P.attach(said, m.group(1))}")
    return faults


def term_faults(texts: dict[str, str]) -> list[str]:
    """Texts that use a variant the glossary replaced (ui.i18n.ko_terms.BANNED)."""
    return [f"{where}: {m.group(0)!r} -> {preferred}" for where, text in texts.items()
            for pattern, preferred in BANNED for m in re.finditer(pattern, text)]


def number_faults(messages: dict[str, str]) -> list[str]:
    """Rendered messages with a number of four or more digits and no thousands separators."""
    faults = []
    for key, values, text in rendered(messages):
        for m in UNGROUPED.finditer(DATE.sub("", text)):
            faults.append(f"{key}: {text!r} ({m.group(0)})")
    return faults


# ---------------------------------------------------------------------------- the particle helper
@pytest.mark.parametrize("text, particle, expected", [
    ("req#10", "를", "을"), ("req#12", "을", "를"), ("req#11", "은", "은"), ("req#13", "가", "이"),
    ("req#14", "과", "와"), ("req#16", "로", "으로"), ("req#17", "으로", "로"), ("req#18", "을", "을"),
    ("req#19", "이", "가"), ("req#15", "은", "는"), ("req#20", "를", "을"), ("100", "가", "이"),
    ("1,000", "를", "을"), ("10,000", "는", "은"), ("0", "로", "으로"), ("12.5", "가", "가"),
    ("CDN", "를", "을"), ("GPU", "을", "를"), ("OOM", "가", "이"), ("URL", "으로", "로"), ("KV", "은", "는"),
    ("llama_7b_prompt", "이", "가"), ("stable_diff_unet", "가", "이"), ("vLLM", "는", "은"),
    ("Orca (Max)", "은", "는"), ("pygame-web.github.io", "을", "를"), ("game", "를", "을"), ("model", "으로", "로"),
    ("table", "을", "을"), ("gate", "을", "를"), ("서울", "으로", "로"), ("집", "로", "으로"), ("페이징", "를", "을"),
    ("연속", "와", "과"), ("80%", "이", "가"), ("...", "을", "을(를)"),
])
def test_the_particle_follows_the_final_sound(text, particle, expected):
    assert P.choose(text, particle) == expected


def test_a_particle_in_the_spec_is_attached_after_formatting():
    assert KO.t("log.warn.split_refused", mode="연속", id=10).count("req#10을") == 1
    assert "req#12를" in KO.t("log.warn.split_refused", mode="연속", id=12)
    assert format(P.Spoken(6144), ",을") == "6,144를" and format(P.Spoken("10001"), ",이") == "10,001이"
    assert format(P.Spoken("req#3"), "") == "req#3"


# ---------------------------------------------------------------------------- the catalogue
def test_every_particle_after_a_placeholder_follows_its_value():
    assert particle_faults(dict(KO.messages)) == []


def test_a_fixed_particle_after_a_placeholder_is_caught():
    fixed = {"log.warn.split_refused": "[WARN] 분할 거부: req#{id}를 범위 하나에"}
    assert particle_faults(fixed)
    assert not particle_faults({"log.warn.split_refused": "[WARN] 분할 거부: req#{id:를} 범위 하나에"})


def test_a_wrong_particle_is_caught_in_the_rendered_text():
    assert P.choose("req#10", "를") == "을"
    wrong = {"x": "{name:을}"}  # right spec: no fault
    assert not particle_faults(wrong)
    assert particle_faults({"x": "{name}을 "}) and particle_faults({"x": "{n:,}이 "})


def test_every_term_is_the_glossarys_choice():
    assert term_faults(dict(KO.messages)) == []


def test_a_term_outside_the_glossary_is_caught():
    for wrong in ("일일 도전", "논리 페이지", "최고 기록", "멈춤", "실제 게임 아님", "원격 측정", "오른 회전", "떨어지는 조각",
                  "0행이 맨 위", "최대 길이만큼", "통째 범위", "빈 블록 여유"):
        assert term_faults({"x": wrong}), wrong
    for right in ("오늘의 도전", "논리 블록", "최고 점수", "일시정지", "녹화된 게임", "지표", "시계 방향 회전", "조각 모음",
                  "0번 줄이 맨 위", "최대 시퀀스 길이만큼", "실행 중", "라인 클리어"):
        assert not term_faults({"x": right}), right


def test_every_big_number_is_grouped_in_thousands():
    assert number_faults(dict(KO.messages)) == []


def test_an_ungrouped_number_is_caught():
    assert number_faults({"x": "{tokens}토큰"})
    assert not number_faults({"x": "{tokens:,}토큰"}) and not number_faults({"x": "req#{id}"})


def test_numbers_and_units_are_written_together():
    assert KO.tokens(6144) == "6,144토큰" and KO.blocks(4) == "4블록" and KO.per_second(10001) == "10,001토큰/초"
    for key, message in KO.messages.items():
        for m in re.finditer(r"\{(\w+)[^}]*\} (토큰|블록|초|분|개|줄|칸|배)(?![가-힣])", message):
            assert m.group(1) in TEXT_PLACEHOLDERS, (key, m.group(0))
