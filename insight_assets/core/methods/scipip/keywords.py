"""The paper-keyword graph (§3.1, Figure 1) and its keyword-neighbourhood expansion (§3.2,
Appendix C).

A paper links to each of its keywords; two keywords co-occur in the papers that have both. A
keyword set grows by the keywords that co-occur with its members, filtered as Appendix C says
without values: a neighbour must co-occur with the member in at least ``min_papers`` papers (a
single co-occurrence may be one paper's quirk), and of the candidates only the ``keep`` rarest
are kept (a keyword in many papers, "large language models", characterises none of them).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


def normalise_keyword(keyword: str) -> str:
    return " ".join(keyword.lower().split()).strip(" .,;:")


@dataclass(frozen=True)
class KeywordGraph:
    """Each paper's keywords (normalised), and what follows from them."""

    papers: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(cls, papers: Mapping[str, Iterable[str]]) -> KeywordGraph:
        return cls(
            {
                doc: tuple(dict.fromkeys(k for k in map(normalise_keyword, keywords) if k))
                for doc, keywords in papers.items()
            }
        )

    @functools.cached_property
    def holders(self) -> dict[str, frozenset[str]]:
        """Each keyword's papers."""
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

    def idf(self, keyword: str) -> float:
        held = len(self.holders.get(keyword, ()))
        return math.log((1 + len(self.papers)) / (1 + held)) + 1.0

    def expand(self, keywords: Iterable[str], min_papers: int, keep: int) -> list[str]:
        """The keywords co-occurring with ``keywords`` in at least ``min_papers`` papers, the
        ``keep`` rarest (fewest papers; ties alphabetical), not already in ``keywords``."""
        start = {normalise_keyword(k) for k in keywords}
        candidates: set[str] = set()
        for keyword in start:
            docs = self.holders.get(keyword, frozenset())
            neighbours: dict[str, int] = {}
            for doc in docs:
                for other in self.papers[doc]:
                    if other not in start:
                        neighbours[other] = neighbours.get(other, 0) + 1
            candidates |= {other for other, shared in neighbours.items() if shared >= min_papers}
        return sorted(candidates, key=lambda k: (len(self.holders[k]), k))[:keep]

    def without(self, doc_id: str) -> KeywordGraph:
        return KeywordGraph({doc: keywords for doc, keywords in self.papers.items() if doc != doc_id})
