"""Korean particles that follow the sound of a substituted value: 을/를, 이/가, 은/는, 과/와, 으로/로.

A Korean message names the particle in its placeholder's format spec, in either form:
``"req#{id:을} 범위 하나에"`` renders "req#10을" and "req#12를"; ``"{n:,을}"`` formats the number
with separators first. `attach` picks the form from the final sound of the text as a Korean reader
says it aloud:

- Hangul: whether the last syllable has a final consonant (batchim); ㄹ takes 로, not 으로.
- Numbers, read in Sino-Korean: the last digit (1 일, 3 삼, 6 육, 7 칠, 8 팔 end in a consonant),
  or, after trailing zeros, the last unit spoken (10 십, 100 백, 1,000 천, 10,000 만, 10^8 억).
- Latin: an acronym (CDN, GPU, KV) is read letter by letter (L 엘, M 엠, N 엔, R 알 end in a
  consonant); a word by its last letters (net 넷, prompt 프롬프트, gate 게이트, line 라인).

When the sound cannot be told (nothing but symbols), both forms are written: "을(를)".
"""
from __future__ import annotations

import re

NONE, RIEUL, OTHER = "none", "rieul", "other"  # no final consonant / ㄹ / any other final consonant

# Each particle by its two forms: (after a final consonant, after a vowel). Either form names it.
PAIRS: tuple[tuple[str, str], ...] = (
    ("을", "를"), ("이", "가"), ("은", "는"), ("과", "와"), ("으로", "로"), ("이라", "라"),
    ("이나", "나"), ("이며", "며"), ("이고", "고"), ("으로서", "로서"), ("으로써", "로써"),
)
FORMS: dict[str, tuple[str, str]] = {form: pair for pair in PAIRS for form in pair}
# Longest first, so "으로" is not read as "로" after a stray "으" in a format spec.
_SUFFIX = re.compile("(" + "|".join(sorted(FORMS, key=len, reverse=True)) + ")$")

SYLLABLE_START, SYLLABLE_END = 0xAC00, 0xD7A3
RIEUL_INDEX = 8  # ㄹ among the 28 final-consonant slots (0 = none)

# Sino-Korean digits as read: 0 영, 1 일, 2 이, 3 삼, 4 사, 5 오, 6 육, 7 칠, 8 팔, 9 구.
DIGIT_ENDS: dict[str, str] = {"0": OTHER, "1": RIEUL, "2": NONE, "3": OTHER, "4": NONE, "5": NONE,
                              "6": OTHER, "7": RIEUL, "8": RIEUL, "9": NONE}
# The last unit read after n trailing zeros: 십, 백, 천, then 만 (10^4), 억 (10^8), 조 (10^12),
# 경 (10^16), each covering four places.
UNIT_ENDS: tuple[str, ...] = (OTHER, OTHER, OTHER)  # 십 ㅂ, 백 ㄱ, 천 ㄴ
MYRIAD_ENDS: tuple[str, ...] = (OTHER, OTHER, NONE, OTHER)  # 만 ㄴ, 억 ㄱ, 조, 경 ㅇ

# English letter names as Korean reads them: A 에이, B 비, ... L 엘, M 엠, N 엔, R 알, X 엑스.
LETTER_ENDS: dict[str, str] = {ch: NONE for ch in "ABCDEFGHIJKOPQSTUVWXYZ"}
LETTER_ENDS.update({"L": RIEUL, "M": OTHER, "N": OTHER, "R": RIEUL})
VOWELS = "aeiouy"
SYMBOL_WORDS: dict[str, str] = {"%": NONE}  # 퍼센트
SILENT_TAIL = ")]}'\"”’.,:;!?»>"  # read past closing marks: "(OOM)" ends in M


def hangul_end(ch: str) -> str:
    """The final consonant of one Hangul syllable."""
    final = (ord(ch) - SYLLABLE_START) % 28
    return NONE if final == 0 else RIEUL if final == RIEUL_INDEX else OTHER


def number_end(digits: str) -> str:
    """How a whole number read in Sino-Korean ends ("10" 십, "1,000" 천, "12" 이)."""
    digits = digits.replace(",", "")
    stripped = digits.rstrip("0")
    if not stripped:
        return DIGIT_ENDS["0"]  # 영
    zeros = len(digits) - len(stripped)
    if zeros == 0:
        return DIGIT_ENDS[stripped[-1]]
    if zeros < 4:
        return UNIT_ENDS[zeros - 1]
    return MYRIAD_ENDS[min(zeros // 4, len(MYRIAD_ENDS)) - 1]


def word_end(word: str) -> str:
    """How a Latin word or acronym ends as Korean reads it."""
    if len(word) > 1 and word.isupper() or len(word) == 1:
        return LETTER_ENDS[word[-1].upper()]
    w = word.lower()
    if w.endswith("ng"):
        return OTHER  # 링, 싱
    if len(w) > 2 and w[-1] == "e" and w[-2] not in VOWELS:
        if w[-2] in "mn":
            return OTHER  # game 게임, line 라인
        return RIEUL if w[-2] == "l" else NONE  # table 테이블; gate 게이트, make 메이크
    last = w[-1]
    if last in "mn":
        return OTHER
    if last in "lr":
        return RIEUL if last == "l" else NONE  # model 모델; server 서버
    if last in "kptbc" and len(w) > 1 and w[-2] in VOWELS:
        return OTHER  # book 북, top 톱, net 넷, web 웹, mac 맥
    return NONE  # prompt 프롬프트, ref 레프, gz 지지, a, o, ...


def final_sound(text: str) -> str | None:
    """NONE, RIEUL or OTHER for how `text` ends when read aloud; None when that cannot be told."""
    text = text.rstrip().rstrip(SILENT_TAIL).rstrip()
    if not text:
        return None
    last = text[-1]
    if SYLLABLE_START <= ord(last) <= SYLLABLE_END:
        return hangul_end(last)
    if last in SYMBOL_WORDS:
        return SYMBOL_WORDS[last]
    m = re.search(r"\d[\d,]*(?:\.\d+)?$", text)
    if m:
        number = m.group(0)
        return DIGIT_ENDS[number[-1]] if "." in number else number_end(number)
    m = re.search(r"[A-Za-z]+$", text)
    if m:
        word = m.group(0)
        # camelCase or snake_case: the last part is what is read last.
        parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", word)
        return word_end(parts[-1] if parts else word)
    return None


def choose(text: str, particle: str) -> str:
    """The form of `particle` (either form names it) that follows `text`."""
    after_consonant, after_vowel = FORMS[particle]
    sound = final_sound(text)
    if sound is None:
        return f"{after_consonant}({after_vowel})"
    if sound == RIEUL and after_consonant.startswith("으"):
        return after_vowel  # ㄹ + 으로 -> 로
    return after_vowel if sound == NONE else after_consonant


def attach(text: str, particle: str) -> str:
    """`text` followed by the right form of `particle`: attach("CDN", "를") == "CDN을"."""
    return text + choose(text, particle)


def split_spec(spec: str) -> tuple[str, str | None]:
    """A format spec and the particle that ends it (",을" -> (",", "을"); ".1f" -> (".1f", None))."""
    m = _SUFFIX.search(spec)
    if not m:
        return spec, None
    return spec[:m.start()], m.group(1)


_NUMBER = re.compile(r"(-?)(\d[\d,]*)(\.\d+)?")


def grouped(value: object) -> object:
    """A number handed over as text ("6144", "6,144", "12.50") with its whole part grouped in
    thousands ("6,144", "12.50"), for a "," in the placeholder's spec; any other text unchanged
    ("0 / 300"), so that asking for separators never costs a message its language."""
    if isinstance(value, str):
        m = _NUMBER.fullmatch(value.strip())
        if m:
            return f"{m.group(1)}{int(m.group(2).replace(',', '')):,}{m.group(3) or ''}"
    return value


class Spoken:
    """A value to be formatted into a message; a particle at the end of its format spec is
    attached in the form its final sound asks for ("{id:을}")."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __format__(self, spec: str) -> str:
        spec, particle = split_spec(spec)
        value = self.value
        if "," in spec and isinstance(value, str):  # text: its number grouped, anything else as it is
            value, spec = grouped(value), spec.replace(",", "")  # ("0 / 300" stays whole)
        text = format(value, spec)
        return text if particle is None else attach(text, particle)

    def __str__(self) -> str:
        return str(self.value)
