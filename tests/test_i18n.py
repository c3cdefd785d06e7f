"""Two languages: complete catalogues, the Korean font's coverage, line breaking, choosing and keeping."""
from __future__ import annotations

import json
import subprocess
import sys
import types
import unicodedata
from pathlib import Path

import pygame
import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from tests.uikit import canvas, click, key, make_app, pump
from ui import i18n, packs, theme
from ui.storage import Settings, Storage
from ui.text import break_allowed, fit, is_syllable, same_font, wrap

pytestmark = pytest.mark.usefixtures("clean_event_queue")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import subset_font  # noqa: E402


# ---------------------------------------------------------------------------- catalogues
def test_every_key_exists_in_both_languages():
    en, ko = set(i18n.english()), set(i18n.catalogue("ko").messages)
    assert en - ko == set(), f"missing in Korean: {sorted(en - ko)}"
    assert ko - en == set(), f"missing in English: {sorted(ko - en)}"


@pytest.mark.parametrize("key", sorted(i18n.english()))
def test_both_languages_fill_the_same_placeholders(key):
    en, ko = i18n.english()[key], i18n.catalogue("ko").messages[key]
    assert i18n.placeholders(en) == i18n.placeholders(ko), key


def test_korean_text_is_whole_syllables():
    """Precomposed (NFC) syllables only: no conjoining jamo a line break could split."""
    for key, text in i18n.catalogue("ko").messages.items():
        assert text.strip(), key
        assert unicodedata.normalize("NFC", text) == text, key
        assert not any("\u1100" <= ch <= "\u11ff" for ch in text), key


def test_korean_catalogue_is_korean():
    """Not an English copy: every message with words has Hangul, except names kept as they are."""
    kept = {k for k, v in i18n.english().items() if v == i18n.catalogue("ko").messages[k]}
    wordy = {k for k, v in i18n.english().items() if sum(ch.isalpha() for ch in v) > 12}
    as_in_the_article = {"game.title_prefix", "report.oom"}  # PagedAttention:, CUDA OUT OF MEMORY
    assert wordy & kept <= as_in_the_article, sorted(wordy & kept - as_in_the_article)


def test_missing_key_falls_back_to_english_then_to_the_key():
    ko = i18n.catalogue("ko")
    assert ko.t("no.such.key") == "no.such.key"
    assert ko.msg("plain text") == "plain text"
    assert i18n.catalogue("en").t("toast.level", level=3) == "LEVEL 3"


def test_numbers_and_units_are_written_per_language():
    en, ko = i18n.catalogue("en"), i18n.catalogue("ko")
    assert en.pct(0.125, 1) == "12.5 %" and ko.pct(0.125, 1) == "12.5%"
    assert en.num(12345) == ko.num(12345) == "12,345"
    assert en.seconds(61500) == "61.5 s" and ko.seconds(61500) == "61.5초"
    assert en.blocks(1) == "1 block" and en.blocks(3) == "3 blocks" and ko.blocks(3) == "3블록"
    assert ko.per_second(320.4) == "320토큰/초" and ko.tokens(6144) == "6,144토큰"


def test_deferred_messages_translate_when_shown():
    m = i18n.Msg.of("log.level", level=4)
    assert i18n.catalogue("en").msg(m) == "[LOAD] request rate up: level 4"
    assert "레벨 4" in i18n.catalogue("ko").msg(m)
    inner = i18n.Msg.of("toast.level", level=2)
    assert i18n.catalogue("ko").t("log.ui", text=inner) == "[UI] 레벨 2"


def test_a_message_that_does_not_fit_its_values_never_raises(monkeypatch):
    from ui.i18n import ko
    monkeypatch.setitem(ko.MESSAGES, "toast.level", "레벨 {level:d}")  # a number format given text
    assert i18n.catalogue("ko").t("toast.level", level="x") == "LEVEL x"
    monkeypatch.setitem(ko.MESSAGES, "toast.level", "레벨 {level:,}")  # separators asked of text: text as it is
    assert i18n.catalogue("ko").t("toast.level", level="0 / 300") == "레벨 0 / 300"
    assert i18n.catalogue("en").t("toast.level") == "LEVEL {level}"  # no values: the text as written
    assert i18n.catalogue("en").t("toast.level", other=1) == "LEVEL {level}"


def test_unknown_language_is_refused():
    with pytest.raises(ValueError):
        i18n.catalogue("xx")


# ---------------------------------------------------------------------------- the reader's language
@pytest.mark.parametrize("tag, expected", [
    ("ko", "ko"), ("ko-KR", "ko"), ("KO-kr", "ko"), ("ko_KR.UTF-8", "ko"), ("en-US", "en"),
    ("de-DE", "en"), ("kok", "en"), ("", "en"), (None, "en"), ("C.UTF-8", "en"), (42, "en"),
])
def test_reader_language_from_a_tag(tag, expected):
    assert i18n.reader_language(tag) == expected


def test_locale_variables_in_order():
    assert i18n.locale_tag({"LANG": "ko_KR.UTF-8"}) == "ko_KR.UTF-8"
    assert i18n.locale_tag({"LC_ALL": "en_GB.UTF-8", "LANG": "ko_KR.UTF-8"}) == "en_GB.UTF-8"
    assert i18n.locale_tag({}) is None


@pytest.mark.parametrize("tag, expected", [("ko-KR", "ko"), ("en-US", "en"), (None, "en")])
def test_browser_follows_navigator_language(monkeypatch, tag, expected):
    nav = types.SimpleNamespace(language=tag)
    monkeypatch.setitem(sys.modules, "platform", types.SimpleNamespace(window=types.SimpleNamespace(navigator=nav)))
    monkeypatch.setattr(sys, "platform", "emscripten")
    assert i18n.reader_default() == expected


@pytest.mark.parametrize("search, nav, expected", [("?lang=ko", "en-US", "ko"), ("?lang=en", "ko-KR", "en"),
                                                  ("?x=1&lang=ko-KR", None, "ko"), ("?lang=xx", "ko", "ko"),
                                                  ("", "ko", "ko")])
def test_a_lang_parameter_in_the_address_comes_first(monkeypatch, search, nav, expected):
    window = types.SimpleNamespace(navigator=types.SimpleNamespace(language=nav),
                                   location=types.SimpleNamespace(search=search))
    monkeypatch.setitem(sys.modules, "platform", types.SimpleNamespace(window=window))
    monkeypatch.setattr(sys, "platform", "emscripten")
    assert i18n.reader_default() == expected


def test_desktop_follows_the_locale(monkeypatch):
    for name in i18n.LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    assert i18n.reader_default() == "ko"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert i18n.reader_default() == "en"


# ---------------------------------------------------------------------------- keeping the choice
def test_language_round_trips_through_the_settings(tmp_path):
    store = Storage(directory=tmp_path)
    store.save(Settings(language="ko"))
    assert Storage(directory=tmp_path).load().language == "ko"


@pytest.mark.parametrize("bad", ["xx", "", 7, None, ["ko"], {"ko": 1}, "KO"])
def test_a_corrupt_language_falls_back_to_the_readers(tmp_path, bad):
    data = Settings(muted=True).to_dict()
    data["language"] = bad
    (tmp_path / "settings.json").write_text(json.dumps(data))
    settings = Storage(directory=tmp_path).load()
    assert settings.language is None and settings.muted is True  # the rest of the save survives
    from ui.app import GameApp
    for reader in ("ko", "en"):
        app = GameApp(canvas(), storage=Storage(directory=tmp_path), audio=False, reader_language=reader)
        assert app.language == reader


def test_choice_beats_the_readers_language_and_flag_beats_both(tmp_path):
    from ui.app import GameApp
    Storage(directory=tmp_path).save(Settings(language="en"))
    assert GameApp(canvas(), storage=Storage(directory=tmp_path), audio=False, reader_language="ko").language == "en"
    assert GameApp(canvas(), storage=Storage(directory=tmp_path), audio=False, reader_language="en",
                   language="ko").language == "ko"


def test_k_switches_the_title_live_and_the_choice_persists(tmp_path):
    app = make_app(tmp_path)
    from ui.title_scene import TitleScene
    app.reset(TitleScene(app, seed=1))
    pump(app, 2)
    before = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(before)
    key(app, pygame.K_k, 2)
    assert app.language != "en" or app.wanted_language is not None
    after = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(after)
    assert pygame.image.tobytes(before, "RGB") != pygame.image.tobytes(after, "RGB")
    assert Storage(directory=tmp_path).load().language == app.language == "ko"
    key(app, pygame.K_k, 2)
    assert app.language == "en" and Storage(directory=tmp_path).load().language == "en"


def test_language_button_on_the_title_and_in_pause(tmp_path):
    from ui.play_scene import PlayScene
    from ui.title_scene import TitleScene
    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    app.reset(title)
    button = next(b for b in title.side_buttons if b.name == "language")
    click(app, pygame.Rect(button.rect).center)
    assert app.language == "ko"
    play = PlayScene(app, seed=2)
    app.reset(play)
    play.pause()
    pause = app.top
    button = next(b for b in pause.buttons if b.name == "language")
    click(app, pygame.Rect(button.rect).center)
    assert app.language == "en" and app.top is pause
    app.draw()
    english = pygame.image.tobytes(app.surface, "RGB")
    key(app, pygame.K_k)
    assert app.language == "ko" and Storage(directory=tmp_path).load().language == "ko"
    app.draw()  # the console under the pause dialog is redrawn in Korean too
    korean = pygame.image.tobytes(app.surface, "RGB")
    assert english != korean
    assert app.view.tr.code == "ko" and play.session.log.entries[0].text.startswith("[BOOT]")


def test_without_its_font_korean_waits_and_the_game_stays_english(tmp_path, monkeypatch):
    """The browser before the download: English on screen, Korean once the pack is in place."""
    monkeypatch.setattr(packs, "missing", lambda name, root=None: ["ui/i18n/ko.py"])
    app = make_app(tmp_path)
    app.set_language("ko")
    assert app.language == "en" and app.wanted_language == "ko" and app.wanted_packs == ["ko"]
    monkeypatch.setattr(packs, "missing", lambda name, root=None: [])
    app.pack_arrived("ko", None)
    assert app.language == "ko" and app.wanted_language is None and app.wanted_packs == []


def test_a_failed_font_download_is_logged_and_play_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(packs, "missing", lambda name, root=None: ["ui/i18n/ko.py"])
    app = make_app(tmp_path)
    app.set_language("ko")
    app.pack_arrived("ko", "later/ui/i18n/ko.py: 404")
    assert app.language == "en" and app.wanted_language is None
    assert any("404" in text for _, text in app.notices)
    from ui.title_scene import TitleScene
    title = TitleScene(app, seed=1)
    app.reset(title)
    drawn: list[str] = []
    blit = app.text.blit
    monkeypatch.setattr(app.text, "blit", lambda s, text, *a, **k: drawn.append(text) or blit(s, text, *a, **k))
    title._draw_left(canvas())
    assert any(text.startswith("Korean font unavailable") for text in drawn)  # the title says so


def test_korean_is_unavailable_until_its_catalogue_is_here(monkeypatch):
    """The web archive has no ui/i18n/ko.py: Korean then waits and English stands in."""
    monkeypatch.delitem(sys.modules, "ui.i18n.ko", raising=False)
    monkeypatch.setattr(i18n.importlib, "import_module", lambda name: (_ for _ in ()).throw(ModuleNotFoundError(name)))
    assert not i18n.available("ko")
    assert i18n.catalogue("ko").t("pause.title") == "PAUSED"
    assert i18n.available("en")


# ---------------------------------------------------------------------------- the Korean font
def test_korean_font_covers_every_character_of_the_catalogue():
    have = subset_font.covered(theme.HANGUL_FONT_FILE.read_bytes())
    need = set(subset_font.characters())
    missing = sorted(need - have)
    assert not missing, f"the Hangul font lacks {''.join(missing)!r}: run python tools/subset_font.py"
    assert have == need, f"the subset carries unused characters {''.join(sorted(have - need))!r}"


def test_korean_font_is_regenerated_byte_for_byte():
    if not subset_font.SOURCE.is_file():
        pytest.skip(f"{subset_font.SOURCE} missing: apt-get install fonts-nanum (./build.sh test does)")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "subset_font.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr


def test_the_subset_is_renamed_and_licensed():
    from fontTools.ttLib import TTFont
    font = TTFont(str(theme.HANGUL_FONT_FILE))
    names = " ".join(str(r) for r in font["name"].names if r.nameID in (1, 4, 6, 16))
    assert "Nanum" not in names and "VRAM Tetris Hangul" in names
    assert "Open Font License" in (ROOT / "ui" / "fonts" / "OFL-Hangul.txt").read_text()


def test_a_missing_glyph_would_be_caught(monkeypatch):
    """The coverage check has teeth: a new character in the catalogue is reported."""
    from ui.i18n import ko
    monkeypatch.setitem(ko.MESSAGES, "test.new", "뷁")  # a syllable the game never uses
    assert "뷁" in subset_font.characters()
    assert "뷁" not in subset_font.covered(theme.HANGUL_FONT_FILE.read_bytes())


def test_hangul_is_drawn_with_the_hangul_font():
    assert theme.font_for("언어", 15) is theme.font(15, theme.HANGUL_FONT_FILE)
    assert theme.font_for("LANGUAGE", 15) is theme.font(15)
    assert theme.font_for("언어", 15).size("언어")[0] > 0


# ---------------------------------------------------------------------------- line breaking
def test_korean_breaks_between_words_first():
    text = i18n.catalogue("ko").t("card.gc_row.body")
    lines = wrap(text, theme.SMALL, 254)
    assert " ".join(lines) == text
    assert all(theme.font_for(line, theme.SMALL).size(line)[0] <= 254 for line in lines)


def test_a_long_korean_word_breaks_at_a_syllable_not_inside_latin():
    word = "외부파편화(fragmentation)로인해요청을배치할수없음"
    lines = wrap(word, theme.SMALL, 120)
    assert "".join(lines) == word and len(lines) > 1
    for a, b in zip(lines, lines[1:]):
        assert break_allowed(a[-1], b[0]), (a, b)
        assert not (a[-1].isascii() and a[-1].isalpha() and b[0].isascii() and b[0].isalpha())


def test_break_places():
    assert break_allowed("가", "나") and break_allowed("화", "(") and break_allowed("/", "x")
    assert break_allowed("=", "e")  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    assert not break_allowed("a", "b") and not break_allowed("(", "f") and not break_allowed("가", ")")
    assert not break_allowed("가", ".")


korean_words = st.lists(st.text(alphabet=st.characters(min_codepoint=0xAC00, max_codepoint=0xAC00 + 400),
                                min_size=1, max_size=14), min_size=1, max_size=12)


@hyp_settings(max_examples=60, deadline=None)
@given(words=korean_words, width=st.integers(min_value=40, max_value=300))
def test_wrapped_korean_fits_and_loses_nothing(words, width):
    canvas()
    text = " ".join(words)
    lines = wrap(text, theme.SMALL, width)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    for line in lines:
        assert all(is_syllable(ch) or ch == " " for ch in line)
        assert theme.font_for(line, theme.SMALL).size(line)[0] <= width or len(line) == 1


def test_web_build_page_and_game_agree_on_the_korean_pack():
    """build_web serves what ui.packs fetches, where the page's bootstrap fetches it too."""
    import build_web
    template = (ROOT / "web" / "vram-tetris.tmpl").read_text(encoding="utf-8")
    for rel in packs.PACKS["ko"]:
        assert build_web.LATER[rel] == packs.archive_url("ko") == "later/ko.tar.gz"
        assert f'"{rel}"' in template and '"later/ko.tar.gz"' in template
    assert theme.HANGUL_FONT_FILE == packs.ROOT / packs.PACKS["ko"][0]


def test_every_key_the_code_names_is_in_the_catalogue():
    """A literal key in a tr.t("...") or Msg.of("...") call that no catalogue holds would show itself."""
    import re
    pattern = re.compile(r"""(?:\.t|Msg\.of)\(\s*["']([a-z_]+\.[a-z_.]+)["']""")
    keys = set(i18n.english())
    for path in sorted((ROOT / "ui").rglob("*.py")):
        for key in pattern.findall(path.read_text(encoding="utf-8")):
            assert key in keys, f"{path.relative_to(ROOT)} names {key!r}, which no catalogue holds"


@pytest.mark.parametrize("language", ["en", "ko"])
def test_no_catalogue_key_is_written_twice(language):
    """A dict literal keeps the last of two equal keys silently: one entry would shadow another."""
    import ast
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "ui" / "i18n" / f"{language}.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})


def test_a_wrapped_korean_message_keeps_one_font():
    """A continuation line without Hangul ("(req#12 llama_7b_prompt)") is still drawn in the Hangul
    font, as the rest of its message; the same words on their own are drawn in the Latin one."""
    from ui.text import TextCache
    message = "요청을 배치할 수 없습니다 llama_7b_prompt req#12 stable_diff_unet 0->3,4 1->5,6"
    lines = wrap(message, theme.SMALL, 150)
    latin = [line for line in lines if not theme.needs_hangul(line)]
    assert latin, lines  # the case in question: a line of the message with no Hangul in it
    hangul_font = theme.font(theme.SMALL, theme.HANGUL_FONT_FILE)
    assert all(theme.font_for(line, theme.SMALL) is hangul_font for line in lines)
    assert theme.font_for(str(latin[0]), theme.SMALL) is theme.font(theme.SMALL)  # plain text: the Latin font
    cache = TextCache()
    drawn, alone = cache.render(latin[0], theme.SMALL, theme.TEXT), cache.render(str(latin[0]), theme.SMALL, theme.TEXT)
    assert drawn.get_size() == hangul_font.size(latin[0])
    assert pygame.image.tobytes(drawn, "RGBA") != pygame.image.tobytes(alone, "RGBA")  # two fonts, two cache entries
    assert theme.uses_hangul(fit(same_font(latin[0] + " and a much longer tail to cut", latin[0]), theme.SMALL, 60))


def test_every_character_the_hangul_font_is_asked_for_has_a_glyph():
    """Text with any character from U+1100 on is drawn in the Hangul font (theme.needs_hangul), so
    a dash or arrow written in the code must be in its subset too, or it is drawn as a box."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    hangul = theme.font(theme.SMALL, theme.HANGUL_FONT_FILE)
    wanted = {ch for folder in ("ui", "engine") for path in (root / folder).rglob("*.py")
              for ch in path.read_text(encoding="utf-8") if theme.needs_hangul(ch)}
    assert wanted and not [ch for ch in sorted(wanted) if hangul.metrics(ch)[0] is None]
