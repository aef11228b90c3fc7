"""PDFs made for the tests with PyMuPDF: good text, text through a broken font map, OCR-like noise over
scanned pages, a damaged content stream, pages that are images with a stamp.

The body text comes from the demo paper in the repository (SPECTER, CC BY 4.0), so tests run
without the shared corpus.
"""

from __future__ import annotations

import functools
import random
import textwrap
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parents[1]
DEMO_PAPER = REPO / "data" / "collections" / "scholarly-docs" / "2020.acl-main.207_specter.pdf"

LINES_PER_PAGE = 58
LINE_CHARS = 100

FRENCH = (
    "Les représentations de documents scientifiques sont au cœur des systèmes de recommandation et de "
    "recherche d'articles. Dans ce travail, nous proposons une méthode qui apprend ces représentations à "
    "partir du graphe des citations : deux articles qui se citent doivent avoir des représentations proches, "
    "tandis qu'un article sans lien doit en être éloigné. Contrairement aux méthodes existantes, notre "
    "approche ne demande aucun ajustement propre à chaque tâche, et les représentations obtenues peuvent "
    "être utilisées directement pour la classification, la prédiction de citations ou la recommandation. "
    "Nous évaluons la méthode sur un nouvel ensemble de sept tâches et montrons qu'elle dépasse nettement "
    "les modèles de référence, en particulier lorsque les données annotées sont rares. Nous analysons enfin "
    "l'effet de la taille du corpus, du choix des exemples négatifs et de la longueur des résumés sur la "
    "qualité des représentations, et nous discutons des limites de l'approche pour les domaines où les "
    "citations sont peu nombreuses ou tardives."
)

# Characters OCR engines confuse, as misread from a poor scan.
_OCR_CONFUSIONS = {"m": "rn", "h": "b", "l": "1", "o": "0", "e": "c", "i": "l", "a": "o", "n": "u", "s": "5"}


@functools.cache
def english_text() -> str:
    """About 40,000 characters of real English prose: the demo paper's body."""
    with pymupdf.open(DEMO_PAPER) as pdf:
        return " ".join(" ".join(page.get_text().split()) for page in pdf)


def english_pages(count: int, chars: int = 3000) -> list[str]:
    """``count`` pages of ``chars`` characters of English, cut at word boundaries."""
    text = english_text()
    pages, start = [], 0
    for _ in range(count):
        end = text.rfind(" ", start, start + chars)
        pages.append(text[start:end])
        start = end + 1 if end + chars < len(text) else 0
    return pages


def ocr_noise(text: str, word_rate: float, seed: int = 7) -> str:
    """``text`` as a poor OCR pass reads it: ``word_rate`` of the words with misread characters,
    some with stray punctuation."""
    rng = random.Random(seed)
    words = []
    for word in text.split(" "):
        if rng.random() < word_rate:
            word = "".join(_OCR_CONFUSIONS.get(ch, ch) if rng.random() < 0.6 else ch for ch in word)
            if rng.random() < 0.3:
                word += rng.choice(",.;'~^")
        words.append(word)
    return " ".join(words)


def random_characters(text: str, seed: int = 11) -> str:
    """``text`` with every visible character replaced by a random letter or sign: OCR of noise."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.;:'~^*|"
    return "".join(ch if ch.isspace() else rng.choice(alphabet) for ch in text)


def _lines(text: str) -> list[str]:
    return textwrap.wrap(text, LINE_CHARS)[:LINES_PER_PAGE]


# Pages whose font map is broken get a font of their own: PyMuPDF shares one font object between
# all pages that use the same built-in font, so breaking it on one page would break it on all.
GOOD_FONT, BROKEN_FONT = "helv", "tiro"


def _write_text(page: pymupdf.Page, text: str, *, render_mode: int = 0, font: str = GOOD_FONT) -> None:
    page.insert_text((40, 50), "\n".join(_lines(text)), fontsize=9, fontname=font, render_mode=render_mode)


def _scan_background(page: pymupdf.Page) -> None:
    """A grey 'scanned' image covering the page."""
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 200, 260), False)
    pixmap.set_rect(pixmap.irect, (225,))
    page.insert_image(page.rect, pixmap=pixmap)


def write_pdf(
    path: Path,
    pages: Sequence[str],
    *,
    scanned: bool = False,
    remap: Callable[[str], str] | None = None,
    remap_pages: Sequence[int] | None = None,
) -> Path:
    """A PDF with one page per text.

    ``scanned``: each page is an image with the text as an invisible OCR layer over it.
    ``remap``: the pages (1-based ``remap_pages``, default all) are drawn in a font whose ToUnicode
    map sends each character to ``remap(character)``: they look right but extract as garbage, as
    fonts without a proper Unicode map do.
    """
    broken = set(remap_pages or range(1, len(pages) + 1)) if remap is not None else set()
    pdf = pymupdf.open()
    for number, text in enumerate(pages, start=1):
        page = pdf.new_page(width=612, height=792)
        if scanned:
            _scan_background(page)
        font = BROKEN_FONT if number in broken else GOOD_FONT
        _write_text(page, text, render_mode=3 if scanned else 0, font=font)
    for number in sorted(broken):
        _break_font_map(pdf, pdf[number - 1], remap)
    pdf.save(path)
    pdf.close()
    return path


def append_pages(
    source: Path, path: Path, pages: Sequence[str], *, remap: Callable[[str], str] | None = None
) -> Path:
    """``source`` with ``pages`` of text added at the end (drawn through ``remap``, as in ``write_pdf``)."""
    pdf = pymupdf.open(source)
    first_new = pdf.page_count
    for text in pages:
        _write_text(pdf.new_page(width=612, height=792), text, font=BROKEN_FONT if remap else GOOD_FONT)
    if remap is not None:
        for index in range(first_new, pdf.page_count):
            _break_font_map(pdf, pdf[index], remap)
    pdf.save(path)
    pdf.close()
    return path


def _break_font_map(pdf: pymupdf.Document, page: pymupdf.Page, remap: Callable[[str], str]) -> None:
    """Give the page's fonts a ToUnicode CMap that maps every byte to ``remap`` of its character."""
    entries = []
    for code in range(0x20, 0x7F):
        target = remap(chr(code))
        entries.append(f"<{code:02X}> <{''.join(f'{ord(ch):04X}' for ch in target)}>")
    blocks = []
    for start in range(0, len(entries), 100):  # a bfchar block holds at most 100 entries
        chunk = entries[start : start + 100]
        blocks.append(f"{len(chunk)} beginbfchar\n" + "\n".join(chunk) + "\nendbfchar")
    cmap = (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Broken-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<00> <FF>\nendcodespacerange\n"
        + "\n".join(blocks)
        + "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    )
    for font in page.get_fonts():
        cmap_xref = pdf.get_new_xref()
        pdf.update_object(cmap_xref, "<<>>")
        pdf.update_stream(cmap_xref, cmap.encode("ascii"))
        pdf.xref_set_key(font[0], "ToUnicode", f"{cmap_xref} 0 R")


def caesar(ch: str) -> str:
    """Letters shifted by three: a font map that turns words into letter salad."""
    if "a" <= ch <= "z":
        return chr((ord(ch) - 97 + 3) % 26 + 97)
    if "A" <= ch <= "Z":
        return chr((ord(ch) - 65 + 3) % 26 + 65)
    return ch


def symbols(ch: str) -> str:
    """Letters and digits to control characters, unmapped (private-use) glyphs and pictographs."""
    if ch.isalnum():
        code = ord(ch)
        return (chr(0x01 + code % 8), chr(0xE000 + code), chr(0x2700 + code % 64))[code % 3]
    return ch


def write_stamped_scan(path: Path, pages: int, stamp: str) -> Path:
    """Scanned pages whose only text is a visible stamp (a download notice) at the foot."""
    pdf = pymupdf.open()
    for number in range(1, pages + 1):
        page = pdf.new_page(width=612, height=792)
        _scan_background(page)
        page.insert_text((40, 770), f"{stamp} - page {number}", fontsize=7)
    pdf.save(path)
    pdf.close()
    return path


def write_damaged_stream(path: Path, readable: str, lost: str) -> Path:
    """A one-page PDF whose Flate content stream breaks after drawing ``readable``: the data that
    draws ``lost`` is replaced by garbage, so a reader recovers only ``readable``."""
    compressor = zlib.compressobj()
    head = compressor.compress(f"BT /F1 9 Tf 11 TL 40 742 Td ({readable}) Tj T*\n".encode("latin-1"))
    # MuPDF keeps what it decoded before the chunk in which the error comes: pad with no-op
    # operators so that the readable text lies in an earlier chunk.
    head += compressor.compress(b"q Q\n" * 4096)
    # A sync flush ends the deflate block here, so what comes before it decodes on its own.
    head += compressor.flush(zlib.Z_SYNC_FLUSH)
    tail = (
        compressor.compress(
            "".join(f"({line}) Tj T*\n" for line in _lines(lost)).encode("latin-1", "replace") + b"ET"
        )
        + compressor.flush()
    )
    damaged = head + bytes(random.Random(3).randrange(256) for _ in range(len(tail)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(damaged) + damaged + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    body, offsets = bytearray(b"%PDF-1.7\n"), []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(body))
        body += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(body))
    return path
