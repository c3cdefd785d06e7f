"""The Korean web pages: particles after substituted values as the game's own helper picks them,
words kept whole, no letter-spacing on Hangul, Korean link previews, the glossary's terms."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_i18n_korean import FIXED_PARTICLE, term_faults
from ui.i18n import particles as P

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "web" / "vram-tetris.tmpl"
EMBED_KO = ROOT / "web" / "embed.ko.html"
WORDS = ("CDN", "런타임 CDN", "pygame-web.github.io", "cdn.jsdelivr.net", "localhost:8000", "127.0.0.1", "10",
         "12", "1,000", "10,000", "vram-tetris.tar.gz", "GPU", "URL", "vLLM", "Orca (Max)", "stable_diff_unet",
         "llama_7b_prompt", "game", "table", "gate", "서울", "집", "페이징", "80%", "...")


def template_block(name: str) -> str:
    text = TEMPLATE.read_text(encoding="utf-8")
    m = re.search(rf"// {name}: begin\n(.*?)// {name}: end", text, re.S)
    assert m, name
    return m.group(1)


def korean_words() -> str:
    """The template's Korean messages (the `ko:` block of its WORDS table)."""
    text = TEMPLATE.read_text(encoding="utf-8")
    m = re.search(r"\n    ko: \{\n(.*?)\n    \}\n", text, re.S)
    assert m
    return m.group(1)


def page_text(path: Path) -> str:
    """What a reader sees of a page: its text and its meta contents, without markup."""
    text = path.read_text(encoding="utf-8")
    metas = " ".join(re.findall(r'content="([^"]*)"', text))
    body = re.sub(r"<style>.*?</style>|<script.*?</script>", "", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body) + " " + metas)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pages_particles_match_the_games():
    script = template_block("particles") + (
        "var words = %s, out = {};\n"
        "for (var i = 0; i < words.length; i++) for (var p of ['을', '이', '은', '과', '으로'])"
        " out[words[i] + '|' + p] = particle(words[i], p);\n"
        "console.log(JSON.stringify(out));\n") % json.dumps(WORDS, ensure_ascii=False)
    res = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    want = {f"{w}|{p}": P.attach(w, p) for w in WORDS for p in ("을", "이", "은", "과", "으로")}
    assert got == want


def test_the_pages_korean_takes_particles_from_its_values():
    words = korean_words()
    assert not FIXED_PARTICLE.search(words), FIXED_PARTICLE.search(words)
    assert "{host|을}" in words and "{archive|을}" in words
    assert FIXED_PARTICLE.search('runtimeBody: "<code>{host}</code>를 허용한 뒤"')  # the check has teeth


def test_korean_pages_keep_words_whole_and_hangul_unspaced():
    css = TEMPLATE.read_text(encoding="utf-8")
    assert re.search(r":lang\(ko\)[^{]*#boot[^{]*\{[^}]*word-break: keep-all", css)
    assert re.search(r":lang\(ko\) \.title[^{]*\{[^}]*letter-spacing: 0", css)
    embed = EMBED_KO.read_text(encoding="utf-8")
    assert re.search(r"body \{[^}]*word-break: keep-all", embed)
    assert re.search(r"h1, h2 \{[^}]*letter-spacing: 0", embed)


def test_the_korean_article_page_previews_in_korean():
    embed = EMBED_KO.read_text(encoding="utf-8")
    for tag in ('property="og:title"', 'property="og:description"', 'name="twitter:title"',
                'name="twitter:description"', 'name="description"'):
        m = re.search(rf'<meta {tag} content="([^"]*)">', embed)
        assert m and re.search("[가-힣]", m.group(1)), tag


def test_the_korean_pages_use_the_glossarys_terms():
    assert term_faults({"embed.ko.html": page_text(EMBED_KO), "vram-tetris.tmpl (ko)": korean_words()}) == []
    assert term_faults({"x": "떨어지는 조각"})  # the check has teeth
