"""Building blocks for offline task implementations: choose text, never write it.

Sentences are scored with TF-IDF vectors (numpy only, no model to load): *centrality* is a
sentence's mean cosine similarity to the others, the LexRank idea that what many sentences talk
about is what the text is about; *relevance* is its similarity to a question. The best are picked
greedily, skipping near-duplicates of sentences already picked.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import lazy_regex, np
from insight_assets.core.text import sentence_texts

_WORD = lazy_regex(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

_STOPWORDS_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how however i if in into is it its itself
just may me might more most must my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them themselves
then there these they this those through thus to too under until up upon us very via was we
were what when where which while who whom why will with within without would you your yours
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

# A "sentence" this short is usually a heading or a fragment, a poor summary sentence.
_SHORT_SENTENCE_WORDS = 6

# A sentence opening with one of these leans on the sentence before it, which may not be picked.
_DANGLING_OPENERS = frozenset(
    {"this", "these", "those", "it", "they", "such", "however", "moreover", "furthermore"}
)


def terms(text: str) -> list[str]:
    """Lower-cased content words of ``text``, plurals folded ("tokens" matches "token")."""
    return [
        _singular(word) for word in _WORD.findall(text.lower()) if word not in STOPWORDS and len(word) > 1
    ]


def _singular(word: str) -> str:
    # Crude on purpose: folding plurals is most of what stemming buys for matching a question.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tfidf(documents: Sequence[str], queries: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length TF-IDF rows for ``documents``, and for ``queries`` in the same vocabulary
    (words the documents lack are ignored). Term frequency is sublinear (1 + log count)."""
    counts = [Counter(terms(text)) for text in documents]
    vocabulary = {word: index for index, word in enumerate(sorted(set().union(*counts)))}
    document_frequency = np.zeros(len(vocabulary))
    for count in counts:
        for word in count:
            document_frequency[vocabulary[word]] += 1
    idf = np.log((1 + len(documents)) / (1 + document_frequency)) + 1

    def vectors(all_counts: list[Counter[str]]) -> np.ndarray:
        matrix = np.zeros((len(all_counts), len(vocabulary)))
        for row, count in enumerate(all_counts):
            for word, number in count.items():
                column = vocabulary.get(word)
                if column is not None:
                    matrix[row, column] = 1 + math.log(number)
        matrix *= idf
        return normalize_rows(matrix, dtype=None)

    return vectors(counts), vectors([Counter(terms(text)) for text in queries])


def rank_sentences(
    sentences: Sequence[str],
    query: str = "",
    *,
    limit: int,
    redundancy: float = 0.6,
) -> list[int]:
    """Indices of up to ``limit`` sentences, best first: central to the set and, when ``query``
    shares words with them, relevant to it; a sentence more similar than ``redundancy`` (cosine)
    to one already picked is skipped. Fragments and sentences that open by pointing back ("This",
    "However") count for less. Ties go to the earlier sentence, so the result is
    deterministic."""
    if not sentences or limit < 1:
        return []
    vectors, query_vectors = tfidf(sentences, [query] if query else [])
    similarity = vectors @ vectors.T
    count = len(sentences)
    centrality = (similarity.sum(axis=1) - np.diag(similarity)) / max(count - 1, 1)
    score = _unit_scale(centrality)
    if len(query_vectors) and query_vectors[0].any():
        score = 0.5 * score + 0.5 * _unit_scale(vectors @ query_vectors[0])
    short = np.array([len(sentence.split()) < _SHORT_SENTENCE_WORDS for sentence in sentences])
    dangling = np.array([_opening_word(sentence) in _DANGLING_OPENERS for sentence in sentences])
    score = score * np.where(short, 0.5, 1.0) * np.where(dangling, 0.7, 1.0)
    order = sorted(range(count), key=lambda index: (-score[index], index))
    chosen: list[int] = []
    for index in order:
        if all(similarity[index, other] <= redundancy for other in chosen):
            chosen.append(index)
        if len(chosen) == limit:
            break
    return chosen


def _opening_word(sentence: str) -> str:
    words = sentence.split(maxsplit=1)
    return words[0].strip(",;:").lower() if words else ""


def _unit_scale(values: np.ndarray) -> np.ndarray:
    spread = values.max() - values.min()
    return (values - values.min()) / spread if spread > 0 else np.ones_like(values)


def is_whole_sentence(sentence: str) -> bool:
    """Not a fragment left at a chunk's edge: opens with a capital or a digit, ends a sentence,
    and has at least six words."""
    if len(sentence.split()) < _SHORT_SENTENCE_WORDS or sentence.rstrip()[-1:] not in ".!?":
        return False
    return sentence[:1].isupper() or sentence[:1].isdigit()


def whole_sentences(passages: Sequence[Mapping[str, str]]) -> list[tuple[str, str]]:
    """(passage id, sentence) for the whole sentences of ``passages`` (dicts with "id" and
    "text"), in order."""
    return [(p["id"], s) for p in passages for s in sentence_texts(p["text"]) if is_whole_sentence(s)]
