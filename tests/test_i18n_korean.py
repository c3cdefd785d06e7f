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
from ui.i18n import ko_terms as KT
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
    "preempt_key", "pick_key", "budget_keys", "spec_keys", "budget_down", "budget_up", "spec_down", "spec_up", "how", "ranges", "reason", "reference", "req", "rotate_ccw", "rotate_cw", "scenario", "scores",
    "sharing", "size", "split", "split_key", "state", "status", "summary", "t", "tail", "text", "what", "where"})
# Realistic text for the identifiers, dates, keys, cells ("3,4") and lists among them.
TEXT_VALUES = {"id": ("10", "12", "1234"), "day": ("2025-01-31",), "cell": ("3,4",), "cells": ("0->3,4, 1->5,6",),
               "ranges": ("0-3, 8-11",), "ids": ("#3, #10",), "key": ("Esc", "B"), "pick_key": ("N",), "budget_keys": ("[ ]",), "spec_keys": ("- =",), "budget_down": ("[",), "budget_up": ("]",), "spec_down": ("-",), "spec_up": ("=",), "how": ("] 키로", "자세히 화면의 + 버튼으로"), "split": ("분할(Shift / P)", "분할"), "board": ("보드(B)", "보드"), "drop": ("하드 드롭(Space)", "드롭"),
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
    assert KO.t("log.held", name="stable_diff_unet").count("stable_diff_unet을") == 1
    assert "llama_7b_prompt를" in KO.t("log.held", name="llama_7b_prompt")
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


# ---------------------------------------------------------------------------- one verb per concept
# Each concept's one verb (docs/i18n.md, "One verb per concept"), the variants it replaced, and a
# sentence that shows it.
VERBS = {
    "hold": ("점유", KT.HOLD_VARIANTS, ("블록을 쥐고 있던", "자리를 잡아 둔", "잡혀 있었지만", "혼자 쥔 블록")),
    "grow": ("커[지질짐져]", KT.GROW_VARIANTS, ("요청이 자랄 때마다", "확장: 논리 블록", "KV 캐시가 늘어납니다")),
    "admit": ("실행을 시작", KT.ADMIT_VARIANTS, ("요청을 빨리 받지만", "어떤 요청도 받아들이지 못합니다",
                                            "요청을 한 덩어리로 받을 수")),
}


def all_korean() -> dict[str, str]:
    """Every Korean text: the catalogue rendered with sample values, the web pages' Korean."""
    from tests.test_web_korean import EMBED_KO, korean_words, page_text
    out = {f"{key} {values}": text for key, values, text in rendered(dict(KO.messages))}
    out["web template"] = korean_words()
    out["embed.ko.html"] = page_text(EMBED_KO)
    return out


@pytest.mark.parametrize("concept", sorted(VERBS))
def test_each_of_hold_grow_and_admit_has_one_verb(concept):
    verb, variants, wrong = VERBS[concept]
    texts = all_korean()
    assert [w for w, t in texts.items() if re.search(variants, t)] == []
    assert sum(bool(re.search(verb, t)) for t in KO.messages.values()) >= 3, verb  # said, in its verb
    for sentence in wrong:  # and another verb for it is caught
        assert re.search(variants, sentence), sentence


def test_decoding_fills_a_block_and_a_goal_is_met_only_a_request_reaches():
    pattern = next(p for p, _ in BANNED if "디코딩이" in p)
    assert [w for w, t in all_korean().items() if re.search(pattern, t)] == []
    for wrong in ("디코딩이 닿을 때까지", "연속 모드로는 좀처럼 닿지 못하고 (목표)", "목표에 닿으면"):
        assert re.search(pattern, wrong), wrong
    assert not re.search(pattern, "어떤 요청도 닿을 수 없는 빈 블록")


# ---------------------------------------------------------------------------- what a read flagged
FLAGGED = ("메모리나 대기열이 바닥나기 전에", "VRAM 위에 멈췄", "개로 블록", "연속은 Orca", "서버", "저절로",
           "과부하됩니다", "썼습니다", "둬야 합니다", "전환하세요)", "놓을 수 없음: ", "배치: 한 덩어리로",
           "선점이 자리를 만듭니다", "자리 잡을 때마다", "도착보다 느리게", "그리고 GPU에서의 의미", "좀처럼 닿지",
           "그것이 교훈입니다", "단독 탭", "점유, 토큰 없음", "스왑으로 선점", "VRAM 어디에 있든 물리 블록에",
           "어디에 있든 물리 블록에 매핑", "흰 점이 포인터 수", "번쩍임", "배포된 사본", "보류",
           "요청을 어디에든 들어가는 페이지로")
FLAGGED_PATTERNS = (r"\(req#\d+[을를]\)", r"(?<!광고 )차단기", r"예약 [\d,]+(?![\d,]*(블록|개))",
                    r"req#(\d+) [a-z0-9_]+\W.*req#\1 ")  # a particle in brackets, a unitless count, a request named twice


def test_no_phrase_a_korean_read_flagged_is_left():
    texts = all_korean()
    left = [(p, w) for p in FLAGGED for w, t in texts.items() if p in t]
    left += [(p, w) for p in FLAGGED_PATTERNS for w, t in texts.items() if re.search(p, t)]
    assert KO.t("lab.new") != "새로"
    assert left == []


def test_the_flagged_patterns_catch_what_they_name():
    for pattern, wrong in zip(FLAGGED_PATTERNS, ("stable_diff_unet(req#71을) 할당", "차단기나 네트워크",
                                                "VRAM 93%, 예약 47",
                                                "req#71 stable_diff_unet(...): req#71 stable_diff_unet이")):
        assert re.search(pattern, wrong), (pattern, wrong)
    assert not re.search(FLAGGED_PATTERNS[2], "93%, 예약 47블록")


LOG_SENTENCE = re.compile(r"(니다|세요|어요|해요)(?![가-힣])")


def test_log_lines_are_nouns_and_sentences_are_hamnida():
    """The log speaks in nouns ("한 덩어리로 배치", "대기"); cards, tips, causes and help meanings
    in 합니다체, each sentence ending in 니다."""
    logs = {k: v for k, v in KO.messages.items() if k.startswith("log.")}
    assert [k for k, v in logs.items() if LOG_SENTENCE.search(v)] == []
    prose = {k: v for k, v in KO.messages.items()
             if k.startswith(("tip.", "help.meaning.", "lab.help.", "lab.game.")) and not k.startswith("tip.name.")
             or re.match(r"card\.\w+\.body$|chapter\.\w+\.(intro|meaning\w*)$", k)}
    assert len(prose) > 40
    ends = {k: v for k, v in prose.items() if not re.search(r"(니다|세요)(\([^)]*\))?\.$", v)}
    assert ends == {}
    assert LOG_SENTENCE.search("[WARN] 이 요청은 이미 홀드를 썼습니다")
