"""The paper-keyword graph (§3.1, Figure 1), its keyword-neighbourhood expansion (§3.2, Appendix C)
and how a keyword matches another.

Keywords are written many ways: "Word-Embeddings", "word embedding", "word vectors". Two keywords
are the same when their *normal forms* are equal (lower case, hyphens and punctuation as spaces,
each word's noun lemma: ``normalise_keyword``) or, given an embedder, when their embeddings reach
the keyword threshold (``KeywordSpace``; calibrated to the embedder, see ``calibration``).

A paper links to each of its keywords; a keyword is *held* by the papers with a matching keyword.
A keyword set grows by the keywords of the papers holding its members, filtered as Appendix C
says without values: a neighbour must be held together with the member by at least ``min_papers``
papers (a single co-occurrence may be one paper's quirk), and of the candidates only the ``keep``
rarest are kept (a keyword in many papers, "large language models", characterises none of them).
``filter_values`` derives both from the collection's keyword statistics.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import lazy_regex, np

_WORD = lazy_regex(r"[a-z0-9]+")


@functools.lru_cache(maxsize=65536)
def _noun_lemma(word: str) -> str:
    from lemminflect import getLemma  # its word tables load on import: only keyword work needs them

    lemmas = getLemma(word, upos="NOUN") if word.isalpha() else ()
    return lemmas[0] if lemmas else word


def normalise_keyword(keyword: str) -> str:
    """Lower case, hyphens and punctuation as spaces, every word as its noun lemma: "Word-Embeddings"
    and "word embedding" are one keyword."""
    return " ".join(_noun_lemma(word) for word in _WORD.findall(keyword.lower()))


def normal_keywords(keywords: Iterable[str]) -> list[str]:
    """``keywords`` normalised, empty ones dropped, each once in first-seen order."""
    return [k for k in dict.fromkeys(map(normalise_keyword, keywords)) if k]


@dataclass
class KeywordSpace:
    """Keyword embeddings (unit vectors, embedded on first use and kept) and the cosine at which
    two keywords are the same. Without an embedder only equal normal forms match."""

    embed: Callable[[list[str]], np.ndarray] | None = None
    threshold: float = 1.0
    _vectors: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def vectors(self, keywords: Sequence[str]) -> np.ndarray | None:
        """Unit vectors of ``keywords`` (normalised), or ``None`` without an embedder."""
        if self.embed is None:
            return None
        missing = [k for k in dict.fromkeys(keywords) if k not in self._vectors]
        if missing:
            vectors = normalize_rows(self.embed(missing))
            self._vectors.update(zip(missing, vectors, strict=True))
        return np.stack([self._vectors[k] for k in keywords]) if keywords else np.zeros((0, 0))

    def similarity(self, wanted: Sequence[str], known: Sequence[str]) -> np.ndarray:
        """Cosines of every (normalised) ``wanted`` keyword to every ``known`` one; equal normal
        forms are 1."""
        equal = np.array([[float(a == b) for b in known] for a in wanted]).reshape(len(wanted), len(known))
        if self.embed is None or not len(wanted) or not len(known):
            return equal
        return np.maximum(self.vectors(list(wanted)) @ self.vectors(list(known)).T, equal)


@dataclass(frozen=True)
class FilterValues:
    """Appendix C's two keyword filters, with how they were chosen."""

    min_papers: int
    keep: int
    reason: str


def filter_values(papers: Mapping[str, Sequence[str]]) -> FilterValues:
    """m and n from the collection's keyword statistics. m: 2 when at least a tenth of the keywords
    are held by two or more papers (a pair seen in two papers is then common enough to ask for),
    else 1 (a sparse collection has few shared keywords; asking for two would expand nothing).
    n: the median number of keywords per paper, so the expansion adds about one paper's worth."""
    holders: dict[str, int] = {}
    for keywords in papers.values():
        for keyword in set(keywords):
            holders[keyword] = holders.get(keyword, 0) + 1
    shared = sum(count >= 2 for count in holders.values()) / len(holders) if holders else 0.0
    keep = max(1, round(statistics.median(len(k) for k in papers.values()))) if papers else 1
    min_papers = 2 if shared >= 0.1 else 1
    return FilterValues(
        min_papers,
        keep,
        f"{shared:.0%} of {len(holders)} keywords are in two or more papers (m = 2 from 10%); "
        f"a median paper has {keep} keywords (n)",
    )


@dataclass(frozen=True)
class KeywordGraph:
    """Each paper's keywords (normalised), and what follows from them."""

    papers: Mapping[str, tuple[str, ...]]
    space: KeywordSpace = field(default_factory=KeywordSpace, compare=False)

    @classmethod
    def build(cls, papers: Mapping[str, Iterable[str]], space: KeywordSpace | None = None) -> KeywordGraph:
        return cls(
            {doc: tuple(normal_keywords(keywords)) for doc, keywords in papers.items()},
            space or KeywordSpace(),
        )

    @functools.cached_property
    def holders(self) -> dict[str, frozenset[str]]:
        """Each keyword's papers (those with this very keyword)."""
        found: dict[str, set[str]] = {}
        for doc, keywords in self.papers.items():
            for keyword in keywords:
                found.setdefault(keyword, set()).add(doc)
        return {keyword: frozenset(docs) for keyword, docs in found.items()}

    def co_occurrences(self) -> dict[tuple[str, str], int]:
        """Papers holding both keywords of each co-occurring pair (a < b)."""
        counts: dict[tuple[str, str], int] = {}
        for keywords in self.papers.values():
            ordered = sorted(keywords)
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    counts[(a, b)] = counts.get((a, b), 0) + 1
        return counts

    def held_by(self, keywords: Sequence[str]) -> dict[str, dict[str, float]]:
        """For each (normalised) keyword, the papers with a matching keyword and how close the
        closest is (1 for an equal normal form)."""
        known = list(self.holders)
        cosine = self.space.similarity(list(keywords), known)
        found: dict[str, dict[str, float]] = {}
        for row, keyword in enumerate(keywords):
            papers: dict[str, float] = {}
            for column in np.flatnonzero(cosine[row] >= self.space.threshold):
                for doc in self.holders[known[column]]:
                    papers[doc] = max(papers.get(doc, 0.0), float(cosine[row, column]))
            found[keyword] = papers
        return found

    def idf(self, held: int) -> float:
        """The rarity of a keyword held by ``held`` papers."""
        return math.log((1 + len(self.papers)) / (1 + held)) + 1.0

    def expand(self, keywords: Iterable[str], min_papers: int, keep: int) -> list[str]:
        """The keywords of the papers holding ``keywords``, held together with one of them by at
        least ``min_papers`` papers, the ``keep`` rarest (fewest papers; ties alphabetical), none
        matching a keyword already in ``keywords``."""
        start = normal_keywords(keywords)
        held = self.held_by(start)
        candidates: set[str] = set()
        for keyword in start:
            neighbours: dict[str, int] = {}
            for doc in held[keyword]:
                for other in self.papers[doc]:
                    neighbours[other] = neighbours.get(other, 0) + 1
            candidates |= {other for other, shared in neighbours.items() if shared >= min_papers}
        if candidates and start:
            close = self.space.similarity(sorted(candidates), start).max(axis=1)
            candidates = {
                k for k, c in zip(sorted(candidates), close, strict=True) if c < self.space.threshold
            }
        return sorted(candidates, key=lambda k: (len(self.holders[k]), k))[:keep]

    def without(self, doc_id: str) -> KeywordGraph:
        return KeywordGraph({doc: kw for doc, kw in self.papers.items() if doc != doc_id}, self.space)
