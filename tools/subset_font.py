"""Cut the Korean font down to exactly the characters the Korean catalogue uses.

    python tools/subset_font.py                 write ui/fonts/VRAMTetrisHangul-Bold.ttf
    python tools/subset_font.py --check         exit 1 if the committed font differs from a fresh cut
    python tools/subset_font.py --source F.ttf  cut from another copy of NanumSquare Bold

The source is NanumSquare Bold from Debian's fonts-nanum (SIL Open Font License 1.1;
`apt-get install fonts-nanum`). "Nanum" is a Reserved Font Name, so the cut-down font is renamed;
its copyright and licence records are kept, and ui/fonts/OFL-Hangul.txt carries the licence.
The output is byte-for-byte reproducible: same catalogue and source, same file.

Exit status: 0 written / up to date, 1 out of date or missing characters, 2 bad usage.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine import cli_args  # noqa: E402  (standard library only)

SOURCE = Path("/usr/share/fonts/truetype/nanum/NanumSquareB.ttf")
FAMILY = "VRAM Tetris Hangul"
POSTSCRIPT = "VRAMTetrisHangul-Bold"
# Name records that carry the family name (1, 3, 4, 6, 16, 17) are replaced; the copyright (0),
# version (5), licence (13, 14) and the rest stay as the source has them.
KEEP_NAME_IDS = (0, 1, 2, 3, 4, 5, 6, 13, 14)
ASCII = "".join(chr(c) for c in range(0x20, 0x7F))  # digits, Latin and punctuation inside Korean text


def characters() -> str:
    """Every character the subset must hold: the Korean catalogue's, plus printable ASCII."""
    from ui import i18n
    from ui.theme import needs_hangul

    used = set(i18n.all_text("ko")) | set(ASCII)
    used |= {ch for ch in i18n.NATIVE_NAMES["ko"]}
    return "".join(sorted(ch for ch in used if ch != "\n" and (ch in ASCII or needs_hangul(ch) or ord(ch) > 0x7F)))


def build(source: Path, text: str) -> bytes:
    """The subset font as bytes (no hinting: the game draws it anti-aliased at 13-40 px)."""
    from fontTools import subset  # type: ignore[import-untyped]
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    font = TTFont(str(source), recalcTimestamp=False)
    options = subset.Options()
    options.hinting = False
    options.desubroutinize = True
    options.layout_features = []  # Hangul syllables are precomposed: no shaping needed
    options.name_IDs = list(KEEP_NAME_IDS)
    options.name_languages = [0x0409]
    options.notdef_outline = True
    options.drop_tables += ["FFTM", "DSIG"]
    sub = subset.Subsetter(options)
    sub.populate(text=text)
    sub.subset(font)
    names = font["name"]
    for record in list(names.names):
        if record.nameID in (1, 16):
            names.setName(FAMILY, record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 2:
            names.setName("Bold", 2, record.platformID, record.platEncID, record.langID)
        elif record.nameID in (3, 4):
            names.setName(f"{FAMILY} Bold", record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID == 6:
            names.setName(POSTSCRIPT, 6, record.platformID, record.platEncID, record.langID)
    names.names = [r for r in names.names if r.nameID in KEEP_NAME_IDS]
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def covered(font_bytes: bytes) -> set[str]:
    """The characters a font file maps to glyphs."""
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(font_bytes))
    return {chr(code) for code in font.getBestCmap()}


def main(argv: list[str] | None = None) -> int:
    from ui.theme import HANGUL_FONT_FILE

    parser = cli_args.parser("subset_font.py", "Cut the Korean font down to the catalogue's characters.")
    parser.add_argument("--source", type=Path, default=SOURCE, help="NanumSquare Bold TTF (fonts-nanum)")
    parser.add_argument("--out", type=Path, default=HANGUL_FONT_FILE, help="subset TTF to write")
    parser.add_argument("--check", action="store_true", help="only check the committed font, write nothing")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        return cli_args.failure("subset_font.py",
                                f"no source font at {args.source} (apt-get install fonts-nanum)")
    text = characters()
    fresh = build(args.source, text)
    missing = sorted(set(text) - covered(fresh))
    if missing:
        return cli_args.failure("subset_font.py", f"the source font lacks {''.join(missing)!r}")
    if args.check:
        current = args.out.read_bytes() if args.out.is_file() else b""
        if current != fresh:
            return cli_args.failure("subset_font.py", f"{args.out} is out of date: run python tools/subset_font.py")
        print(f"{args.out}: up to date ({len(text)} characters, {len(fresh) / 1024:.1f} KB)")
        return 0
    args.out.write_bytes(fresh)
    print(f"wrote {args.out}: {len(text)} characters, {len(fresh) / 1024:.1f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(cli_args.run(main, prog="subset_font.py"))
