"""Split a document's body into token-bounded chunks of whole sentences.

Two profiles, named by what they are, with the sizes of the papers we implement: ``section``
packs sentences into chunks of about 2,000 tokens, a context unit for a model; ``passage`` makes
150-token chunks that overlap by 20 *tokens* (not 20 sentences, as one paper's public code has it),
so the overlap may begin in the middle of a sentence: a unit for retrieval and citation. A method
names the profile it reads (its ``PROFILE``).

How a chunk is built (token positions refer to one tokenization of the whole text):

1. Starting at the first token not yet covered (or ``overlap_tokens`` before it), take the
   longest run of whole sentences that fits ``target_tokens``.
2. A sentence that could never fit a chunk whole is cut at a token boundary, preferably between
   words; the chunk before it is filled up with its beginning rather than left short.
3. The assembled span is counted again on its own, because BPE tokens merge differently at the
   edges of a span than inside the whole text, and shrunk until its real count fits. This makes
   ``target_tokens`` a hard bound.

A chunk's id hashes the document id, the profile name, the span and the text (``chunk_id``), so
it is stable across runs and changes only when the chunk does.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from insight_assets.core.ingestion.documents import Chunk, ParsedDocument, sha256_text
from insight_assets.core.text import count_tokens, split_sentences, token_starts

# One code point encodes to at most 4 byte tokens, so with a target of at least 4 a chunk can
# always take in new text and chunking always terminates.
MIN_TARGET_TOKENS = 4
# How many tokens an overlap may move to begin at a word rather than inside one: two missed words
# of 3-5 tokens (rare words, names: "disadvantages" opened a passage as "tages").
WORD_START_REACH = 5


@dataclass(frozen=True)
class ChunkProfile:
    """How to chunk: at most ``target_tokens`` per chunk, each chunk after the first repeating
    about the last ``overlap_tokens`` tokens of the one before."""

    name: str
    target_tokens: int
    overlap_tokens: int = 0

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a chunk profile needs a non-empty name")
        for field_name in ("target_tokens", "overlap_tokens"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"profile {self.name!r}: {field_name} must be an integer, got {value!r}")
        if self.target_tokens < MIN_TARGET_TOKENS:
            raise ValueError(
                f"profile {self.name!r}: target_tokens must be at least {MIN_TARGET_TOKENS}, "
                f"got {self.target_tokens}"
            )
        if self.overlap_tokens < 0:
            raise ValueError(
                f"profile {self.name!r}: overlap_tokens must not be negative, got {self.overlap_tokens}"
            )
        if 2 * self.overlap_tokens >= self.target_tokens:
            raise ValueError(
                f"profile {self.name!r}: overlap_tokens ({self.overlap_tokens}) must be less than "
                f"half of target_tokens ({self.target_tokens})"
            )


SECTION, PASSAGE = "section", "passage"
PROFILES: dict[str, ChunkProfile] = {
    SECTION: ChunkProfile(SECTION, 2000, 0),
    PASSAGE: ChunkProfile(PASSAGE, 150, 20),
}


class _Chunker:
    """The state of chunking one text; token indices ``i`` stand for character ``starts[i]``."""

    def __init__(self, text: str, profile: ChunkProfile) -> None:
        self.text = text
        self.target = profile.target_tokens
        self.overlap = profile.overlap_tokens
        self.starts: list[int] = token_starts(text).tolist()
        # The token index just past each sentence: the first token that starts at or after the
        # sentence's end (a token such as ".\n\n" that runs on into whitespace stays with it).
        boundaries = {bisect.bisect_left(self.starts, end) for _, end in split_sentences(text)}
        self.boundaries = sorted(boundaries)
        self.boundary_set = boundaries

    def chunks(self) -> list[tuple[int, int, int]]:
        if not self.boundaries:
            return []
        content_end = self.boundaries[-1]  # tokens past it are trailing whitespace
        result: list[tuple[int, int, int]] = []
        start = covered = 0
        while covered < content_end:
            end = self._first_guess(start, covered, content_end)
            start, end, span, count = self._fit(start, covered, end)
            # Whitespace-only new text (possible after a cut inside a long run of spaces) would
            # make a chunk that is empty or only repeats the previous one.
            if self.text[self.starts[covered] : self.starts[end]].strip():
                result.append((span[0], span[1], count))
            covered = end
            start = self._overlap_start(end, result[-1][0] if result else -1)
        return result

    def _first_guess(self, start: int, covered: int, content_end: int) -> int:
        """Where the chunk starting at token ``start`` would end if its real token count were
        the difference of token indices."""
        limit = start + self.target
        if limit >= content_end:
            return content_end
        last = self._last_boundary(covered, limit + 1)
        if last is None:  # the sentence at ``covered`` is longer than the room left
            return self._word_cut(covered, limit, fallback=self._aligned(limit, covered))
        following = self.boundaries[bisect.bisect_right(self.boundaries, last)]
        if following - last > self.target - self.overlap:
            # The next sentence will be cut anyway: fill this chunk with its beginning.
            return self._word_cut(last, limit, fallback=last)
        return last

    def _fit(self, start: int, covered: int, end: int) -> tuple[int, int, tuple[int, int], int]:
        """Shrink ``[start, end)`` until its real token count is within the target."""
        span = self._stripped_span(start, end)
        count = count_tokens(self.text[span[0] : span[1]])
        while count > self.target:
            excess = count - self.target
            previous = self._last_boundary(covered, end)
            floor = covered if previous is None else previous
            if end in self.boundary_set and previous is not None:
                shorter = previous  # drop the last whole sentence
            elif end - excess > floor:
                fallback = self._aligned(end - excess, covered) if previous is None else floor
                shorter = self._word_cut(floor, end - excess, fallback)
            else:
                shorter = floor
            if covered < shorter < end:
                end = shorter
            elif start < covered:
                start = min(covered, start + excess)  # no room for new text: give up some overlap
            else:  # unreachable with target_tokens >= MIN_TARGET_TOKENS
                raise RuntimeError(f"cannot fit the text at token {covered} into {self.target} tokens")
            span = self._stripped_span(start, end)
            count = count_tokens(self.text[span[0] : span[1]])
        return start, end, span, count

    def _overlap_start(self, end: int, previous_char_start: int) -> int:
        """Where the chunk after one ending at token ``end`` starts: ``overlap_tokens`` earlier,
        moved to the nearest start of a word (up to ``WORD_START_REACH`` tokens either way) so it
        does not open with half a word, and always after the previous chunk's start so chunks
        advance."""
        if not self.overlap:
            return end
        exact = end - self.overlap
        nearest_first = [exact + step * sign for step in range(WORD_START_REACH + 1) for sign in (1, -1)]
        for index in nearest_first:
            if (
                0 <= index < end
                and self.starts[index] > previous_char_start
                and self._starts_word(index)
                and not self.text[self.starts[index] : self.starts[index + 1]].isspace()
            ):
                return index
        return min(end, max(exact, bisect.bisect_right(self.starts, previous_char_start)))

    def _last_boundary(self, low: int, high: int) -> int | None:
        """The last sentence boundary ``b`` with ``low < b < high``, if any."""
        position = bisect.bisect_left(self.boundaries, high) - 1
        if position >= 0 and self.boundaries[position] > low:
            return self.boundaries[position]
        return None

    def _word_cut(self, low: int, high: int, fallback: int) -> int:
        """Where to cut a sentence: the last token index in the upper half of ``(low, high]``
        where a word starts, else ``fallback``; cutting between words keeps words whole."""
        for index in range(high, max(low, high - (high - low) // 2 - 1), -1):
            if self._starts_word(index) and self.starts[index - 1] < self.starts[index]:
                return index
        return fallback

    def _aligned(self, index: int, low: int) -> int:
        """``index`` moved back to the first of the tokens that start at the same character (a
        rare character is several byte tokens), or if that is not above ``low``, the first token
        of the next character after ``low``: a cut must keep token indices and characters in
        step."""
        first = bisect.bisect_left(self.starts, self.starts[index])
        return first if first > low else bisect.bisect_right(self.starts, self.starts[low])

    def _starts_word(self, index: int) -> bool:
        """Whether token ``index`` starts where whitespace meets non-whitespace."""
        offset = self.starts[index]
        return 0 < offset < len(self.text) and self.text[offset - 1].isspace() != self.text[offset].isspace()

    def _stripped_span(self, start: int, end: int) -> tuple[int, int]:
        text = self.text
        char_start, char_end = self.starts[start], self.starts[end]
        while char_start < char_end and text[char_start].isspace():
            char_start += 1
        while char_end > char_start and text[char_end - 1].isspace():
            char_end -= 1
        return char_start, char_end


def chunk_text(text: str, profile: ChunkProfile) -> list[tuple[int, int, int]]:
    """Chunks of ``text`` as ``(char_start, char_end, token_count)``, in order.

    Every chunk's ``text[char_start:char_end]`` is non-empty, has no leading or trailing
    whitespace and counts ``token_count <= profile.target_tokens`` tokens; together the chunks
    cover every non-whitespace character of ``text``.
    """
    return _Chunker(text, profile).chunks()


def chunk_id(doc_id: str, profile_name: str, char_start: int, char_end: int, text: str) -> str:
    """A stable id: a hash of the document, the profile, the span and the chunk's text."""
    return sha256_text(f"{doc_id}|{profile_name}|{char_start}|{char_end}|{text}")[:32]


def chunk_document(
    document: ParsedDocument, profile: ChunkProfile, *, within: Sequence[tuple[int, int]] | None = None
) -> list[Chunk]:
    """Chunk ``document.body`` without its boilerplate; offsets are into ``document.text``, which
    starts with the body.

    Each span between boilerplate spans is chunked on its own, so no chunk holds boilerplate; with
    ``within`` (character spans of the body, e.g. a coarser profile's chunks), only inside them.
    """
    body = document.body
    content = _word_bounded(body, document.content_spans)
    spans = _overlaps(content, within) if within is not None else content
    chunks = []
    for span_start, span_end in spans:
        for relative_start, relative_end, token_count in chunk_text(body[span_start:span_end], profile):
            char_start, char_end = span_start + relative_start, span_start + relative_end
            text = body[char_start:char_end]
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(document.doc_id, profile.name, char_start, char_end, text),
                    doc_id=document.doc_id,
                    profile=profile.name,
                    index=len(chunks),
                    text=text,
                    char_start=char_start,
                    char_end=char_end,
                    page_start=document.page_at(char_start),
                    page_end=document.page_at(char_end - 1),
                    token_count=token_count,
                )
            )
    return chunks


def _word_bounded(body: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` without the halves of a word hyphenated across the boilerplate between two of them
    ("disadvan-" before a page's footer, "tages." after the next page's header): a passage starts
    and ends at word boundaries. The word itself is lost to the passages; the page break parted it."""
    bounded = [list(span) for span in spans]
    for before, after in itertools.pairwise(bounded):
        head = body[before[0] : before[1]].rstrip()
        tail_start = after[0] + len(body[after[0] : after[1]]) - len(body[after[0] : after[1]].lstrip())
        if not (
            len(head) > 1
            and head[-1] == "-"
            and head[-2].isalpha()
            and body[tail_start : tail_start + 1].islower()
        ):
            continue
        fragment_start = re.search(r"\S+$", head).start()
        before[1] = before[0] + fragment_start
        word_end = re.search(r"\s", body[tail_start : after[1]])
        after[0] = tail_start + word_end.end() if word_end else after[1]
    return [(start, end) for start, end in bounded if body[start:end].strip()]


def _overlaps(first: Sequence[tuple[int, int]], second: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The non-empty intersections of two sorted lists of disjoint spans."""
    result, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        start, end = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        if start < end:
            result.append((start, end))
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return result
