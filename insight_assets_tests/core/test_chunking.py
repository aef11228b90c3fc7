import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from insight_assets.core.ingestion.boilerplate import BoilerplateSpan
from insight_assets.core.ingestion.chunking import (
    MIN_TARGET_TOKENS,
    PROFILES,
    WORD_START_REACH,
    ChunkProfile,
    chunk_document,
    chunk_text,
)
from insight_assets.core.ingestion.documents import ParsedDocument
from insight_assets.core.text import count_tokens, split_sentences

# How far the repeated text may drift from ``overlap_tokens``: the start snaps to a word (up to
# ``WORD_START_REACH`` tokens) and tokens merge differently at the edges of a span (up to 3).
OVERLAP_TOLERANCE = WORD_START_REACH + 3

WORDS = [
    "the", "model", "Results", "we", "show", "that", "BERT", "accuracy", "3.14", "42", "2019",
    "e.g.", "i.e.", "et al.", "Fig.", "Eq.", "Sec.", "vs.", "etc.", "A.", "(see", "[12]", "naïve",
    "中文", "𝔸", "x²", "résumé",
]  # fmt: skip


@st.composite
def paper_like_text(draw) -> str:
    """Sentences of words, numbers and abbreviations; sometimes a long unbroken word, a line break
    or a blank line."""
    parts = []
    for _ in range(draw(st.integers(0, 25))):
        words = draw(
            st.lists(
                st.one_of(
                    st.sampled_from(WORDS),
                    st.text(alphabet="abcdefgh", min_size=30, max_size=300),  # long unbroken word
                    st.text(max_size=6),
                ),
                min_size=1,
                max_size=30,
            )
        )
        parts.append(" ".join(words).capitalize() + draw(st.sampled_from([".", "?", "!", "", "."])))
        parts.append(draw(st.sampled_from([" ", " ", "\n", "\n\n", "  \n \n"])))
    return "".join(parts)


@st.composite
def profiles(draw) -> ChunkProfile:
    target = draw(st.integers(MIN_TARGET_TOKENS, 60))
    overlap = draw(st.integers(0, (target - 1) // 2))
    return ChunkProfile("test", target, overlap)


def overlap_tokens(text: str, earlier: tuple[int, int, int], later: tuple[int, int, int]) -> int:
    return count_tokens(text[later[0] : earlier[1]]) if later[0] < earlier[1] else 0


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(paper_like_text(), profiles())
def test_no_text_is_lost(text, profile):
    covered = bytearray(len(text))
    for start, end, _ in chunk_text(text, profile):
        covered[start:end] = b"\1" * (end - start)
    lost = [i for i, char in enumerate(text) if not char.isspace() and not covered[i]]
    assert lost == []


@settings(max_examples=120, deadline=None)
@given(paper_like_text(), profiles())
def test_chunks_are_within_the_target_and_counted_exactly(text, profile):
    for start, end, tokens in chunk_text(text, profile):
        chunk = text[start:end]
        assert chunk.strip() == chunk != ""
        assert 0 < tokens <= profile.target_tokens
        assert tokens == count_tokens(chunk)


@settings(max_examples=120, deadline=None)
@given(paper_like_text(), profiles())
def test_chunks_are_in_order_and_overlap_as_configured(text, profile):
    chunks = chunk_text(text, profile)
    for earlier, later in itertools.pairwise(chunks):
        assert earlier[0] < later[0] and earlier[1] < later[1]
        if profile.overlap_tokens == 0:
            assert later[0] >= earlier[1]
        elif earlier[2] >= profile.overlap_tokens + OVERLAP_TOLERANCE:
            repeated = overlap_tokens(text, earlier, later)
            assert abs(repeated - profile.overlap_tokens) <= OVERLAP_TOLERANCE


@settings(max_examples=40, deadline=None)
@given(paper_like_text(), profiles())
def test_chunking_is_deterministic(text, profile):
    assert chunk_text(text, profile) == chunk_text(text, profile)


# --- examples -----------------------------------------------------------------------------------


def numbered_sentences(count: int) -> str:
    return " ".join(f"Sentence number {i} says something short about the method." for i in range(count))


def test_empty_and_whitespace_text_has_no_chunks():
    assert chunk_text("", PROFILES["passage"]) == []
    assert chunk_text(" \n\n\t", PROFILES["passage"]) == []


def test_boundaries_fall_on_sentence_ends_and_packing_is_greedy():
    text = numbered_sentences(60)
    profile = ChunkProfile("small", 50)
    sentence_starts = {start for start, _ in split_sentences(text)}
    sentence_ends = sorted(end for _, end in split_sentences(text))
    chunks = chunk_text(text, profile)
    assert len(chunks) > 5
    for start, end, _ in chunks:
        assert start in sentence_starts and end in sentence_ends
    for start, end, _ in chunks[:-1]:
        next_end = sentence_ends[sentence_ends.index(end) + 1]
        assert count_tokens(text[start:next_end]) > profile.target_tokens


def test_a_giant_sentence_is_split_between_words_under_the_limit():
    text = "Start " + " ".join(f"word{i}" for i in range(3000)) + " end."
    chunks = chunk_text(text, ChunkProfile("small", 100))
    assert len(chunks) > 20
    words = set(text.split())
    for start, end, tokens in chunks:
        assert tokens <= 100
        assert set(text[start:end].split()) <= words  # no word was cut in two


def test_an_unbroken_run_of_characters_is_split_under_the_limit():
    text = "x" * 20_000
    chunks = chunk_text(text, ChunkProfile("small", 64))
    assert "".join(text[start:end] for start, end, _ in chunks) == text
    assert all(tokens <= 64 for _, _, tokens in chunks)


def test_xsum_overlap_is_twenty_tokens_not_twenty_sentences():
    text = numbered_sentences(200)
    profile = PROFILES["passage"]
    chunks = chunk_text(text, profile)
    sentence_starts = {start for start, _ in split_sentences(text)}
    assert all(tokens <= 150 for _, _, tokens in chunks)
    for earlier, later in itertools.pairwise(chunks):
        assert abs(overlap_tokens(text, earlier, later) - 20) <= 2
    # Sentences here are 11 tokens long, so a 20-token overlap starts inside a sentence.
    assert any(start not in sentence_starts for start, _, _ in chunks[1:])


def test_a_sentence_longer_than_the_room_after_the_overlap_fills_the_chunk():
    sentence = " ".join(["word"] * 140) + "."
    text = f"{sentence} {sentence} {sentence}"
    chunks = chunk_text(text, PROFILES["passage"])
    assert all(tokens <= 150 for _, _, tokens in chunks)
    assert all(tokens > 100 for _, _, tokens in chunks[:-1])


def three_page_document(**kwargs) -> ParsedDocument:
    pages = [numbered_sentences(12), numbered_sentences(12), numbered_sentences(12)]
    return ParsedDocument(doc_id="doc-1", file="paper.pdf", page_texts=pages, **kwargs)


def test_chunk_document_spans_pages():
    document = three_page_document()
    chunks = chunk_document(document, ChunkProfile("small", 60, 10))
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text == document.text[chunk.char_start : chunk.char_end]
        assert chunk.doc_id == "doc-1" and chunk.profile == "small"
        assert chunk.page_start == document.page_at(chunk.char_start)
        assert chunk.page_end == document.page_at(chunk.char_end - 1)
        assert chunk.token_count == count_tokens(chunk.text) <= 60
    assert chunks[0].page_start == 1 and chunks[-1].page_end == 3
    assert any(chunk.page_start < chunk.page_end for chunk in chunks)  # a chunk crosses a page break


def test_chunk_document_reads_only_the_body():
    document = three_page_document(body_end=100)
    chunks = chunk_document(document, ChunkProfile("small", 60))
    assert chunks and chunks[-1].char_end <= 100


def test_chunk_ids_are_stable_and_distinct():
    profile = ChunkProfile("small", 60, 10)
    first = [chunk.chunk_id for chunk in chunk_document(three_page_document(), profile)]
    again = [chunk.chunk_id for chunk in chunk_document(three_page_document(), profile)]
    other = three_page_document()
    other.doc_id = "doc-2"
    other_ids = [chunk.chunk_id for chunk in chunk_document(other, profile)]
    assert first == again
    assert len(set(first)) == len(first)
    assert all(len(chunk_id) == 32 for chunk_id in first)
    assert not set(first) & set(other_ids)


def test_default_profiles():
    assert PROFILES["section"] == ChunkProfile("section", 2000, 0)
    assert PROFILES["passage"] == ChunkProfile("passage", 150, 20)


@pytest.mark.parametrize(
    ("target", "overlap", "message"),
    [
        (0, 0, "target_tokens must be at least"),
        (100, -1, "must not be negative"),
        (100, 50, "less than half"),
    ],
)
def test_invalid_profiles_are_rejected(target, overlap, message):
    with pytest.raises(ValueError, match=message):
        ChunkProfile("bad", target, overlap)


def test_profile_sizes_must_be_integers():
    with pytest.raises(TypeError, match="must be an integer"):
        ChunkProfile("bad", 150.0, 20)


def test_a_profile_needs_a_name():
    with pytest.raises(ValueError, match="name"):
        ChunkProfile("", 100)


def test_an_overlap_opens_at_a_word_even_among_identifiers_of_many_tokens():
    rare = ["Xq7Zr9Vt", "kP2wQ8zN", "Jv4Hs6Lc", "mB3yT5gR"]  # identifiers: several tokens each
    sentences = [
        f"The {rare[i % 4]} {rare[(i + 1) % 4]} measurements of run {i} were {rare[(i + 2) % 4]} overall"
        for i in range(40)
    ]
    text = ", ".join(sentences) + "."  # one long sentence: every chunk after the first is an overlap
    chunks = chunk_text(text, PROFILES["passage"])
    assert len(chunks) > 5
    assert all(text[start - 1].isspace() for start, _, _ in chunks[1:])


def test_a_word_hyphenated_across_a_page_footer_opens_and_ends_no_passage():
    first = numbered_sentences(6) + " However, the bag of words has many disadvan-"
    footer = "Proceedings of a Conference, pages 1-10, 2016."
    second = "tages. The word order is lost. " + numbered_sentences(6)
    pages = [f"{first}\n{footer}", second]
    start = pages[0].index(footer)
    document = ParsedDocument(
        doc_id="doc-1",
        file="paper.pdf",
        page_texts=pages,
        boilerplate=[BoilerplateSpan("footer", start, start + len(footer))],
    )
    assert document.body[document.page_offsets[1] :].startswith("tages.")
    chunks = chunk_document(document, ChunkProfile("small", 40, 8))
    assert chunks and not any(chunk.text.startswith("tages") for chunk in chunks)
    assert not any(chunk.text.endswith("-") for chunk in chunks)
    assert any(chunk.text.startswith("The word order is lost") for chunk in chunks)
    assert any(chunk.text.endswith("has many") for chunk in chunks)
