"""Key phrases without a model, in the three forms the project needs.

They answer different questions, so they score differently; each is deterministic.

- ``document_keyphrases(title, text, limit)``: a paper's topics (the offline "main topics" of a
  compressed paper). Candidates are runs of one to three content words; a word weighs its TF-IDF
  over the paper's sentences; phrases that recur, are longer, or appear in the title or opening
  score higher; a phrase sharing half its words with one already picked is skipped.
- ``rake_keyphrases(text, limit, exclude)``: the phrases of a short text (a question, a sentence),
  by RAKE: runs of content words between stopwords, common verbs, punctuation and numbers, scored by
  degree/frequency. Used for an offline intent's goals and an insight's hook.
- ``cluster_labels(...)``: what sets each cluster of a theme graph apart: content words and word
  pairs scored by their share of the cluster's chunks times an IDF over clusters (c-TF-IDF).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Collection, Sequence

from insight_assets.core.startup.lazy import lazy_regex, np

from .extractive import STOPWORDS, terms
from .text import split_sentences, without_citations

# -- a paper's topics ---------------------------------------------------------------------------

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

_PUNCTUATION = lazy_regex(r"[^\w\s-]+|_")
_WORD = lazy_regex(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
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


def document_keyphrases(title: str, text: str, limit: int) -> list[str]:
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


# -- a short text's phrases (RAKE) --------------------------------------------------------------

_RAKE_TOKEN = lazy_regex(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|[^\sA-Za-z]+")
_RAKE_MAX_WORDS = 3
# Frequent verbs of research prose: without a tagger, breaking phrases at them keeps most
# phrases nominal ("four-bit quantization", not "quantization degrades accuracy").
_VERBS = frozenset((
    "achieve", "achieves", "affect", "affects", "allow", "allows", "apply", "applies", "become",
    "becomes", "cause", "causes", "compare", "compares", "degrade", "degrades", "depend", "depends",
    "fail", "fails", "give", "gives", "handle", "handles", "help", "helps", "improve", "improves",
    "keep", "keeps", "lead", "leads", "learn", "learns", "make", "makes", "need", "needs", "offer",
    "offers", "outperform", "outperforms", "perform", "performs", "provide", "provides", "recover",
    "recovers", "reduce", "reduces", "reflect", "reflects", "remain", "remains", "require",
    "requires", "show", "shows", "suggest", "suggests", "trade", "trades", "use", "used", "uses",
    "using",
))  # fmt: skip


def rake_keyphrases(text: str, *, limit: int, exclude: Collection[str] = ()) -> list[str]:
    """Up to ``limit`` phrases of ``text``, best first, lower-cased.

    Candidates are runs of content words between stopwords, common verbs, punctuation and numbers
    (RAKE); a run longer than three words keeps its last three, where English puts the head noun.
    A phrase scores the sum of its words' degree/frequency (RAKE), so longer, repeated phrases
    win; ties go to the earlier phrase. Phrases all of whose terms (``extractive.terms``) are in
    ``exclude`` are left out.
    """
    runs: list[list[str]] = [[]]
    for token in _RAKE_TOKEN.findall(without_citations(text)):
        word = token.lower()
        if token[0].isalpha() and len(word) > 1 and word not in STOPWORDS and word not in _VERBS:
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    phrases = [tuple(run[-_RAKE_MAX_WORDS:]) for run in runs if run]
    frequency: dict[str, int] = {}
    degree: dict[str, int] = {}
    for phrase in phrases:
        for word in phrase:
            frequency[word] = frequency.get(word, 0) + 1
            degree[word] = degree.get(word, 0) + len(phrase)
    scored: dict[tuple[str, ...], float] = {}
    for phrase in phrases:
        if phrase not in scored and not set(terms(" ".join(phrase))) <= set(exclude):
            scored[phrase] = sum(degree[word] / frequency[word] for word in phrase)
    order = sorted(scored, key=lambda phrase: -scored[phrase])  # stable: ties keep text order
    return [" ".join(phrase) for phrase in order[:limit]]


# -- a theme cluster's label --------------------------------------------------------------------


def cluster_labels(
    texts: Sequence[str], assignments: np.ndarray, distances: np.ndarray, k: int, count: int, per_cluster: int
) -> tuple[str, ...]:
    """Per cluster, its ``count`` best keyphrases joined by ", ".

    A phrase is a content word or a pair of consecutive content words (``extractive.terms``, so
    stopwords are skipped). Its score in a cluster is the share of the cluster's chunks that
    contain it times a smoothed IDF over clusters, log((1 + k) / (1 + clusters containing it)) + 1,
    so phrases common to every theme rank low. Only the ``per_cluster`` chunks nearest the centroid
    are read. A phrase sharing a word with one already picked is skipped, so a label does not say
    "language model, language, model". A cluster without content words is called "theme <i>".
    """
    order = np.lexsort((distances, assignments))  # by cluster, then nearest the centroid first
    bounds = np.searchsorted(assignments[order], np.arange(k + 1))
    counts: list[Counter[str]] = []
    sampled: list[int] = []
    for cluster in range(k):
        start = bounds[cluster]
        chosen = order[start : min(bounds[cluster + 1], start + per_cluster)]
        phrases: Counter[str] = Counter()
        for row in chosen:
            words = terms(texts[row])
            phrases.update(set(words) | {f"{a} {b}" for a, b in itertools.pairwise(words)})
        counts.append(phrases)
        sampled.append(len(chosen))
    clusters_with = Counter(phrase for phrases in counts for phrase in phrases)
    labels = []
    for cluster, phrases in enumerate(counts):
        scored = sorted(
            phrases,
            key=lambda p: (
                -phrases[p] / sampled[cluster] * (math.log((1 + k) / (1 + clusters_with[p])) + 1),
                p,
            ),
        )
        picked: list[str] = []
        used: set[str] = set()
        for phrase in scored:
            words = set(phrase.split())
            if not words & used:
                picked.append(phrase)
                used |= words
            if len(picked) == count:
                break
        labels.append(", ".join(picked) or f"theme {cluster}")
    return tuple(labels)
