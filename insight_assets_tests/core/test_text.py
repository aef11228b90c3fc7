import subprocess
import sys

import bpe_openai
from hypothesis import given, settings
from hypothesis import strategies as st

from insight_assets.core.text import (
    TOKEN_ENCODING,
    count_tokens,
    encode,
    split_sentences,
    token_starts,
)

# bpe_openai's own tiktoken-like API: what our direct use of its tokenizer must agree with.
REFERENCE = bpe_openai.get_encoding(TOKEN_ENCODING)


def sentences_of(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


# --- tokens -------------------------------------------------------------------------------------


def test_count_tokens_known_values():
    assert TOKEN_ENCODING == "cl100k_base"
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    text = "Hello world.\n\nThe end."
    assert count_tokens(text) == len(REFERENCE.encode_ordinary(text))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_tokens_are_those_of_bpe_openais_own_api(text):
    # Lone surrogates included: both replace them.
    assert encode(text) == REFERENCE.encode_ordinary(text)


def test_counting_loads_the_tokenizer_alone_and_the_package_still_imports_after():
    script = (
        "import sys\n"
        "from insight_assets.core.text import count_tokens, token_starts\n"
        "print(count_tokens('Tokens, counted.'), len(token_starts('Tokens, counted.')) - 1)\n"
        "print('bpe_openai' in sys.modules)\n"
        "import bpe_openai\n"
        "print(len(bpe_openai.get_encoding('cl100k_base').encode_ordinary('Tokens, counted.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "4", "False", "4"]


def test_special_token_text_counts_as_plain_text():
    # A paper may quote "<|endoftext|>"; it must not raise or become one special token.
    assert count_tokens("see <|endoftext|> here") > 3


def test_long_text_is_encoded_in_pieces_without_loss():
    text = "The quick brown fox jumps over the lazy dog. " * 5000  # 225k characters
    tokens = encode(text)
    assert REFERENCE.decode(tokens) == text
    assert abs(len(tokens) - 10 * 5000) <= 10


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_token_starts_match_decode_with_offsets(text):
    tokens = REFERENCE.encode_ordinary(text)
    starts = token_starts(text).tolist()
    expected = REFERENCE.decode_with_offsets(tokens)[1] if tokens else []
    assert starts == [*expected, len(text)]
    assert starts == sorted(starts)


# --- sentences ----------------------------------------------------------------------------------


def test_splits_at_sentence_ends():
    text = "First sentence here. Second one? Third one! Fourth."
    assert sentences_of(text) == ["First sentence here.", "Second one?", "Third one!", "Fourth."]


def test_no_split_after_abbreviations():
    text = (
        "Models, e.g. BERT, work well. We follow Smith et al. Their results, i.e. Table 2, hold. "
        "See Fig. 3 and Eq. 4 in Sec. 5 for details. This vs. That etc. Done."
    )
    assert sentences_of(text) == [
        "Models, e.g. BERT, work well.",
        "We follow Smith et al. Their results, i.e. Table 2, hold.",
        "See Fig. 3 and Eq. 4 in Sec. 5 for details.",
        "This vs. That etc. Done.",
    ]


def test_no_split_in_decimals_initials_or_list_markers():
    text = (
        "Accuracy rose to 3.14 points. Work by A. Smith and J. R. R. Tolkien. U.S. Army data.\n"
        "1. Introduction\nii. Scope of work. Next. They went as others\ndid. Then."
    )
    assert sentences_of(text) == [
        "Accuracy rose to 3.14 points.",
        "Work by A. Smith and J. R. R. Tolkien.",
        "U.S. Army data.",
        "1. Introduction\nii. Scope of work.",
        "Next.",
        "They went as others\ndid.",
        "Then.",
    ]


def test_needs_capital_digit_quote_or_bracket_after_the_stop():
    text = 'It works. lower case continues. 42 starts one. "Quoted" too. (Bracketed) too. [1] also.'
    assert sentences_of(text) == [
        "It works. lower case continues.",
        "42 starts one.",
        '"Quoted" too.',
        "(Bracketed) too.",
        "[1] also.",
    ]


def test_closing_quotes_and_brackets_stay_with_their_sentence():
    text = 'He said "stop." Then left. (As shown.) Next?'
    assert sentences_of(text) == ['He said "stop."', "Then left.", "(As shown.)", "Next?"]


def test_blank_lines_end_sentences_and_line_wraps_do_not():
    text = "A heading without a stop\n\nBody text that wraps\nacross lines. Another.\n \n\tLast paragraph"
    assert sentences_of(text) == [
        "A heading without a stop",
        "Body text that wraps\nacross lines.",
        "Another.",
        "Last paragraph",
    ]


def test_whitespace_only_text_has_no_sentences():
    assert split_sentences("") == []
    assert split_sentences(" \n\n\t ") == []


@st.composite
def sentence_text(draw) -> str:
    """Words, abbreviations, numbers and stops, joined by spaces, line breaks and blank lines."""
    words = draw(
        st.lists(
            st.one_of(
                st.sampled_from(
                    ["Word", "word", "e.g.", "et al.", "Fig.", "3.14", "A.", "1.", "end.", "why?", '"q."']
                ),
                st.text(max_size=8),
            ),
            max_size=40,
        )
    )
    gaps = draw(
        st.lists(st.sampled_from([" ", "\n", "\n\n", "  ", ""]), min_size=len(words), max_size=len(words))
    )
    return "".join(word + gap for word, gap in zip(words, gaps, strict=True))


@settings(max_examples=100, deadline=None)
@given(sentence_text())
def test_spans_are_ordered_stripped_and_cover_all_text(text):
    spans = split_sentences(text)
    position = 0
    for start, end in spans:
        assert position <= start < end
        assert not text[position:start].strip()  # only whitespace between sentences
        sentence = text[start:end]
        assert sentence == sentence.strip()
        position = end
    assert not text[position:].strip()


def test_headings_glued_to_a_sentence_are_dropped_and_wrapped_sentences_kept():
    from insight_assets.core.text import drop_leading_heading, sentence_texts

    assert (
        drop_leading_heading("8\nConclusions and Future Work\nWe present SPECTER.") == "We present SPECTER."
    )
    assert drop_leading_heading("7\nRelated work\nThe ACL Anthology Network.") == "The ACL Anthology Network."
    assert drop_leading_heading("2.2 Background: Pretrained Transformers\nModels grew.") == "Models grew."
    # A sentence wrapped after a short line is not a heading.
    assert drop_leading_heading("We propose\nSPECTER, a new method.") == "We propose\nSPECTER, a new method."
    assert drop_leading_heading("In this\npaper we do X.") == "In this\npaper we do X."
    assert sentence_texts("Abstract\nWe study  things. It works.") == ["We study things.", "It works."]
