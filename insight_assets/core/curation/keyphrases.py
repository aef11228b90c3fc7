"""Key phrases of a paper without a model: the offline stand-in for "main topics".

Candidates are runs of one to three content words (no stopword, number or punctuation inside, the
idea behind RAKE), so they tend to be noun phrases such as "post-training quantization". A word
weighs its TF-IDF over the paper's sentences: frequent in the paper, but not in every sentence. A
phrase scores the mean weight of its words, more when it recurs, when it is longer, and when it
appears in the title or the opening (the abstract). A phrase that shares half its words with one
already picked is skipped, so the picks name different things.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from ..extractive import STOPWORDS, terms
from ..text import split_sentences

# Words that are everywhere in papers and name no topic.
_GENERIC_TEXT = """
paper propose proposed proposes present presents presented show shows shown showed use used uses
using based new novel result results et al fig figure table section well first second third one
two three significant significantly achieve achieves achieved improve improves improved outperform
outperforms outperformed demonstrate demonstrates demonstrated introduce introduces introduced
existing different various several many much often given make makes made find finds found conclude
concludes study studies across able allow allows provide provides like compared respectively
whether including include includes yet even still overall since per among less without further
recent recently prior previous previously work works describe reduce reduces reduced describes describing consider
considers considered need needs require requires required percent
"""
_GENERIC = frozenset(_GENERIC_TEXT.split())

# Words that make a phrase but are too vague to be a topic alone.
_VAGUE_ALONE_TEXT = """
approach method model framework task data performance system problem technique setting analysis
large small high low full single key main better best accurate efficient effective simple general
"""
_VAGUE_ALONE = frozenset(_VAGUE_ALONE_TEXT.split())

_PUNCTUATION = re.compile(r"[^\w\s-]+|_")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_MAX_PHRASE_WORDS = 3
# The opening share of the text, where the abstract and introduction state the topics.
_OPENING_SHARE = 0.15


def _is_content(token: str) -> bool:
    lower = token.lower()
    return (
        _WORD.fullmatch(token) is not None
        and len(token) > 2
        and lower not in STOPWORDS
        and lower not in _GENERIC
        and not lower.endswith("ly")
    )


def _runs(sentence: str) -> list[list[str]]:
    """Maximal runs of content words, broken at punctuation and at every other token."""
    runs: list[list[str]] = []
    for segment in _PUNCTUATION.split(sentence):
        run: list[str] = []
        for token in segment.split():
            if _is_content(token):
                run.append(token)
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
    return runs


def _is_name(word: str) -> bool:
    """Written with capitals inside ("BERT", "LoRA"), not just title case ("Post-Training")."""
    return any(char.isupper() for part in word.split("-") for char in part[1:])


def _surface(words: list[str]) -> str:
    return " ".join(word if _is_name(word) else word.lower() for word in words)


def keyphrases(title: str, text: str, limit: int) -> list[str]:
    """Up to ``limit`` key phrases of a paper, best first; deterministic."""
    spans = split_sentences(text)
    sentences = [text[start:end] for start, end in spans]
    opening_end = len(text) * _OPENING_SHARE
    sentence_terms = [set(terms(sentence)) for sentence in sentences]
    term_count = Counter(term for sentence in sentences for term in terms(sentence))
    document_frequency = Counter(term for found in sentence_terms for term in found)
    total = len(sentences)

    def weight(term: str) -> float:
        count = term_count.get(term, 0)
        if not count:
            return 0.0
        idf = math.log((1 + total) / (1 + document_frequency[term])) + 1
        return (1 + math.log(count)) * idf

    occurrences: Counter[tuple[str, ...]] = Counter()
    surfaces: dict[tuple[str, ...], str] = {}
    in_opening: set[tuple[str, ...]] = set()
    title_keys: set[tuple[str, ...]] = set()
    # The title comes last so that phrases are written as the body writes them, not in title case.
    sources = [(sentence, False, start < opening_end) for sentence, (start, _) in zip(sentences, spans)]
    sources.append((title, True, True))
    for sentence, is_title, opening in sources:
        for run in _runs(sentence):
            for size in range(1, _MAX_PHRASE_WORDS + 1):
                for first in range(len(run) - size + 1):
                    words = run[first : first + size]
                    key = tuple(terms(" ".join(words)))
                    if len(key) != size or (size == 1 and key[0] in _VAGUE_ALONE):
                        continue
                    surfaces.setdefault(key, _surface(words))
                    if is_title:
                        title_keys.add(key)
                        continue
                    occurrences[key] += 1
                    if opening:
                        in_opening.add(key)

    scores: dict[tuple[str, ...], float] = {}
    for key in set(occurrences) | title_keys:
        count = occurrences.get(key, 0)
        if count < 2 and key not in title_keys:
            continue  # said once in passing: not a topic
        score = sum(weight(term) for term in key) / len(key)
        score *= (1 + math.log(max(count, 1))) * (1 + 0.5 * (len(key) - 1))
        if key in title_keys:
            score *= 2.0
        if key in in_opening:
            score *= 1.3
        scores[key] = score

    chosen: list[tuple[str, ...]] = []
    for key in sorted(scores, key=lambda key: (-scores[key], key)):
        if len(chosen) == limit:
            break
        # Sharing half its words with a pick ("large language" after "language models") is
        # naming the same thing again.
        if any(2 * len(set(key) & set(other)) >= len(key) for other in chosen):
            continue
        chosen.append(key)
    return [surfaces[key] for key in chosen]
