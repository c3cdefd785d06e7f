"""The game's two languages: one catalogue of messages per language, chosen from the reader's.

Code names a message by its key (``cat.t("title.start")``), never by its English text. Every
catalogue holds the same keys with the same ``{placeholders}``; a key missing from Korean falls
back to English, a key missing everywhere shows itself (tests keep both from happening).
Numbers and units are formatted by the catalogue, so each language writes them its own way; a
Korean particle after a placeholder is named in its format spec ("{id:을}", ui.i18n.particles) and
follows the sound of what is substituted.

Which language: a choice the player made (LANGUAGE button, K, kept with the settings), else the
reader's own: ``navigator.language`` in the browser (``ko*`` -> Korean), the locale on the desktop.

English ships with the game, but for the words of the screens that come later in the browser
(the memory LAB, the chapters): those ship with their screens (LATER_ENGLISH, ui.packs) and are
read from there once they are here. The Korean catalogue (ui/i18n/ko.py), like the Korean font,
stays out of the web archive: the browser fetches both only when Korean is chosen, and until they
are there Korean is simply not available yet.
"""
from __future__ import annotations

import importlib
import os
import string
import sys
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping

from ui.i18n import en
from ui.i18n.particles import Spoken

LANGUAGES: tuple[str, ...] = ("en", "ko")
DEFAULT = "en"
# Each language's own name for itself, for the LANGUAGE button.
NATIVE_NAMES: Mapping[str, str] = MappingProxyType({"en": "English", "ko": "한국어"})
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")
# English messages that ship with a later pack (ui.packs), by the prefix of their keys.
LATER_ENGLISH: Mapping[str, str] = MappingProxyType({"lab.": "ui.i18n.en_lab", "chapter.": "ui.i18n.en_chapters"})


def later_english(key: str) -> str | None:
    """The English of a message that ships with a later pack, if that pack is here."""
    for prefix, name in LATER_ENGLISH.items():
        if key.startswith(prefix):
            try:
                module = importlib.import_module(name)
            except ImportError:  # the browser has not fetched it (yet)
                return None
            return module.MESSAGES.get(key)
    return None


def english() -> dict[str, str]:
    """Every English message here: the core catalogue and those of the packs already here."""
    out = dict(en.MESSAGES)
    for name in LATER_ENGLISH.values():
        try:
            out.update(importlib.import_module(name).MESSAGES)
        except ImportError:
            continue
    return out


def normalise(tag: object) -> str | None:
    """The language of a BCP 47 tag or POSIX locale ("ko-KR", "ko_KR.UTF-8", "en") we have, else None."""
    if not isinstance(tag, str) or not tag.strip():
        return None
    head = tag.strip().replace("_", "-").split("-")[0].split(".")[0].split(":")[0].lower()
    return head if head in LANGUAGES else None


def reader_language(tag: object) -> str:
    """The reader's language from their browser or locale: Korean for ko*, otherwise English."""
    return "ko" if normalise(tag) == "ko" else DEFAULT


def locale_tag(environ: Mapping[str, str] | None = None) -> str | None:
    """The desktop's language tag, from the usual locale variables (first one set wins)."""
    env = os.environ if environ is None else environ
    for name in LOCALE_VARIABLES:
        value = env.get(name)
        if value:
            return value
    return None


def query_tag(search: object) -> str | None:
    """The ``lang`` parameter of a page address's query ("?lang=ko"), if any."""
    from urllib.parse import parse_qs

    if not isinstance(search, str):
        return None
    values = parse_qs(search.lstrip("?")).get("lang")
    return values[0] if values else None


def browser_tag() -> str | None:
    """The page's ``?lang=`` (an article linking its own edition), else navigator.language,
    through the JS window pygbag exposes as ``platform.window``."""
    try:
        import platform  # pygbag's browser bridge in the browser

        window = getattr(platform, "window")  # pygbag's module has it; the stdlib's does not
    except Exception:  # no browser bridge: not a browser after all
        return None
    for read in (lambda: query_tag(window.location.search), lambda: window.navigator.language):
        try:
            value = read()
        except Exception:
            continue
        if isinstance(value, str) and normalise(value) is not None:
            return value
    return None


def reader_default() -> str:
    """The language to use when the player has chosen none: the browser's, or the locale's."""
    tag = browser_tag() if sys.platform == "emscripten" else locale_tag()
    return reader_language(tag)


def placeholders(message: str) -> frozenset[str]:
    """The names of the ``{placeholders}`` in a message ("{n:,}" -> "n")."""
    names = set()
    for _, field, _, _ in string.Formatter().parse(message):
        if field is not None:
            names.add(field.split(".")[0].split("[")[0])
    return frozenset(names)


@dataclass(frozen=True)
class Msg:
    """A message to translate later (a log line stays readable after a language switch)."""

    key: str
    params: tuple[tuple[str, object], ...] = ()

    @classmethod
    def of(cls, key: str, **params: object) -> Msg:
        return cls(key, tuple(sorted(params.items())))


@dataclass(frozen=True)
class Catalogue:
    """The messages of one language, and how that language writes numbers and units."""

    code: str

    @property
    def messages(self) -> Mapping[str, str]:
        try:
            return _messages(self.code)
        except LookupError:  # not fetched yet (the browser): English stands in
            return en.MESSAGES

    @property
    def name(self) -> str:
        return NATIVE_NAMES[self.code]

    def has(self, key: str) -> bool:
        return key in self.messages

    def t(self, key: str, /, **params: object) -> str:
        """The message `key` with `params` filled in (English if this language lacks it)."""
        text = self.messages.get(key)
        if text is None:
            text = en.MESSAGES.get(key)
            if text is None:
                text = later_english(key)
                if text is None:
                    return key
        if not params:
            return text
        # A particle in a placeholder's spec ("{id:을}") follows the substituted value's sound.
        values = {k: Spoken(self.arg(v)) for k, v in params.items()}
        try:
            return text.format(**values)
        except (KeyError, IndexError, ValueError):  # a message that does not fit its values must
            english = en.MESSAGES.get(key, later_english(key)) or text  # never stop the game: English
            try:
                return english.format(**values)
            except (KeyError, IndexError, ValueError):
                return text

    def arg(self, value: object) -> object:
        """Messages inside messages are translated too."""
        return self.msg(value) if isinstance(value, Msg) else value

    def msg(self, message: Msg | str) -> str:
        """A deferred message (or plain text, passed through) in this language."""
        if isinstance(message, str):
            return message
        return self.t(message.key, **dict(message.params))

    # --------------------------------------------------------------- numbers and units
    def num(self, n: int) -> str:
        """A whole number with this language's thousands separators."""
        return self.t("fmt.int", n=int(n))

    def pct(self, fraction: float, digits: int = 0) -> str:
        """A fraction as a percentage ("12 %" in English, "12%" in Korean)."""
        return self.t("fmt.percent", value=f"{fraction * 100:.{digits}f}")

    def seconds(self, ms: float, digits: int = 1) -> str:
        return self.t("fmt.seconds", value=f"{ms / 1000:.{digits}f}")

    def blocks(self, n: int) -> str:
        return self.t("fmt.blocks_one" if n == 1 else "fmt.blocks", n=n)

    def tokens(self, n: int) -> str:
        return self.t("fmt.tokens", n=n)

    def per_second(self, tokens_per_s: float) -> str:
        return self.t("fmt.tok_per_s", value=f"{tokens_per_s:.0f}")

    def on_off(self, on: bool) -> str:
        return self.t("common.on" if on else "common.off")


@lru_cache(maxsize=None)
def catalogue(code: str) -> Catalogue:
    """The catalogue of `code`; ValueError for a language the game does not speak."""
    if code not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {code!r}")
    return Catalogue(code)


def following(code: str) -> str:
    """The language after `code`, wrapping round (the K key and the LANGUAGE button)."""
    i = LANGUAGES.index(code) if code in LANGUAGES else -1
    return LANGUAGES[(i + 1) % len(LANGUAGES)]


def _messages(code: str) -> Mapping[str, str]:
    """The messages of `code`, importing its catalogue module on first use; LookupError when the
    module is not here (yet) or is not a catalogue."""
    if code == DEFAULT:
        return en.MESSAGES
    if code not in LANGUAGES:
        raise LookupError(code)
    try:
        module = importlib.import_module(f"ui.i18n.{code}")
    except Exception as exc:  # missing, or a broken download: the language is not available
        raise LookupError(f"{code}: {exc}") from exc
    messages = getattr(module, "MESSAGES", None)
    if not isinstance(messages, dict):
        raise LookupError(f"{code}: no MESSAGES")
    return messages


def available(code: str) -> bool:
    """Whether `code`'s catalogue is here (always for English; for Korean once it is fetched)."""
    try:
        _messages(code)
    except LookupError:
        return False
    return True


def all_text(code: str) -> str:
    """Every character a language's catalogue can put on screen (the font subset's source)."""
    return "".join(_messages(code).values())
