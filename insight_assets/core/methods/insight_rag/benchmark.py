"""The benchmark, built from a collection's own triples and citation graph (§3, Figure 2 step 2).

- *Deeply buried*: a (subject, relation) pair with exactly one object in the collection, read in one
  paper, whose subject and object each appear exactly once in that paper. The paper applies the
  "exactly once" rule to abstracts; we apply it to full texts, a stricter test of burial.
- *Multi-document*: a (subject, relation) pair whose objects come from two or more papers; the gold
  answers are all its objects (exact match is averaged over them).
- *Matching* (citation recommendation): a pair of papers and whether one cites the other, from the
  `citations` graph; positives and negatives balanced 1:1, negatives with no link in either
  direction, sampled with a seed.

Every triple gets one fate: the item it became, or the reason it was dropped. The rules are the
paper's, plus two it applied by hand: a *vague* subject (each of its words is in at least half the
collection's papers: "the model", "table 1") and an object the question would contain (an object
inside its subject or relation) are dropped. Questions are phrased afterwards (``tasks``).

Where there are more candidates than the size limits, the sample is the lowest-ranked by a seeded
hash of each item (``sample_rank``), so a paper added to the collection adds its share of items
and leaves the rest, with the questions and answers hanging on them, as they were.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from insight_assets.core.startup.lazy import lazy_regex

from ...citations import missing_links
from .schemas import BURIED, MATCHING, MULTI

if TYPE_CHECKING:
    from .triples import Triple

_WORD = lazy_regex(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


@dataclass(frozen=True)
class BenchmarkItem:
    """A question to answer (buried, multi) or a pair to match, with its gold."""

    item_id: str
    kind: str
    subject: str = ""
    relation: str = ""
    relation_text: str = ""
    gold_answers: tuple[str, ...] = ()
    gold_doc_ids: tuple[str, ...] = ()
    triple_ids: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()  # the sentences the gold was read in
    paper_a: str = ""  # matching: doc ids
    paper_b: str = ""
    question: str = ""
    status: str = ""
    error: str | None = None

    @property
    def gold_fragment(self) -> str:
        """The gold insight: subject and relation, as §5.4 compares the identifier's against."""
        return f"{self.subject} {self.relation_text}"


@dataclass
class Benchmark:
    items: list[BenchmarkItem] = field(default_factory=list)
    fates: dict[str, tuple[str, str | None, str]] = field(
        default_factory=dict
    )  # triple id -> (kind, item, reason)

    def drop(self, triple: Triple, reason: str) -> None:
        self.fates[triple.triple_id] = ("dropped", None, reason)

    def keep(self, triple: Triple, item: BenchmarkItem) -> None:
        self.fates[triple.triple_id] = (item.kind, item.item_id, "")

    def dropped_reasons(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for kind, _, reason in self.fates.values():
            if kind == "dropped":
                counts[reason.split(":")[0]] += 1
        return dict(sorted(counts.items(), key=lambda pair: -pair[1]))


def _item_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def normalised_text(text: str) -> str:
    """Lower case, words only, single spaces: where phrases are counted."""
    return " ".join(_WORD.findall(text.lower()))


def occurrences(phrase: str, text: str) -> int:
    """How often ``phrase`` occurs in ``text`` (both normalised), on word boundaries."""
    needle = normalised_text(phrase)
    if not needle:
        return 0
    return len(re.findall(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", text))


def contains(haystack: str, needle: str) -> bool:
    return occurrences(needle, normalised_text(haystack)) > 0


def vague_words(bodies: Mapping[str, str], share: float) -> set[str]:
    """Words in at least ``share`` of the papers (and in at least two)."""
    counts: dict[str, int] = defaultdict(int)
    for body in bodies.values():
        for word in set(_WORD.findall(body.lower())):
            counts[word] += 1
    floor = max(2, share * len(bodies))
    return {word for word, count in counts.items() if count >= floor}


def build_questions(
    triples: Sequence[Triple],
    bodies: Mapping[str, str],
    *,
    max_buried: int,
    max_multi: int,
    seed: int,
    vague_share: float,
) -> Benchmark:
    """Buried and multi-document items from ``triples`` (with their papers' full ``bodies``)."""
    benchmark = Benchmark()
    texts = {doc_id: normalised_text(body) for doc_id, body in bodies.items()}
    common = vague_words(bodies, vague_share)
    pairs: dict[tuple[str, str], list[Triple]] = defaultdict(list)
    for triple in triples:
        words = _WORD.findall(triple.subject)
        if not words or all(word in common for word in words):
            benchmark.drop(triple, "vague subject: each of its words is in most papers")
        elif contains(f"{triple.subject} {triple.relation_text}", triple.object):
            benchmark.drop(triple, "the object is inside the subject or relation")
        else:
            pairs[(triple.subject, triple.relation)].append(triple)
    buried: list[tuple[BenchmarkItem, list[Triple]]] = []
    multi: list[tuple[BenchmarkItem, list[Triple]]] = []
    for (subject, relation), group in sorted(pairs.items()):
        objects = sorted({t.object for t in group})
        papers = sorted({t.doc_id for t in group})
        if len(objects) == 1:
            triple = group[0]
            reason = _not_buried(group, texts.get(triple.doc_id, ""))
            if reason:
                for t in group:
                    benchmark.drop(t, reason)
                continue
            buried.append((_question_item(BURIED, [triple]), [triple]))
        elif len(papers) >= 2:
            multi.append((_question_item(MULTI, group), group))
        else:
            for t in group:
                benchmark.drop(
                    t,
                    f"several objects from one paper: {len(objects)} objects, multi-document needs 2+ papers",
                )
    for chosen, limit, name in ((buried, max_buried, BURIED), (multi, max_multi, MULTI)):
        chosen.sort(key=lambda pair: sample_rank(seed, pair[0].item_id))
        for item, group in chosen[:limit]:
            benchmark.items.append(item)
            for t in group:
                benchmark.keep(t, item)
        for _, group in chosen[limit:]:
            for t in group:
                benchmark.drop(t, f"over the size limit: {limit} {name} questions sampled")
    return benchmark


def _not_buried(group: Sequence[Triple], text: str) -> str:
    """Why a single-object pair is not a buried question ('' when it is)."""
    triple = group[0]
    papers = {t.doc_id for t in group}
    if len(papers) > 1:
        return f"the same fact is in {len(papers)} papers"
    for role, phrase in (("subject", triple.subject), ("object", triple.object)):
        count = occurrences(phrase, text)
        if count > 1:
            return f"{role} appears more than once in its paper: {count} times"
        if count == 0:
            return f"{role} not found verbatim in its paper's text (hyphenation or a formula)"
    return ""


def _question_item(kind: str, group: Sequence[Triple]) -> BenchmarkItem:
    first = group[0]
    return BenchmarkItem(
        item_id=_item_id(kind, first.subject, first.relation),
        kind=kind,
        subject=first.subject,
        relation=first.relation,
        relation_text=first.relation_text,
        gold_answers=tuple(sorted({t.object for t in group})),
        gold_doc_ids=tuple(sorted({t.doc_id for t in group})),
        triple_ids=tuple(t.triple_id for t in group),
        evidence=tuple(dict.fromkeys(t.sentence for t in group)),
    )


def matching_pairs(
    doc_ids: Sequence[str], citations: Sequence[tuple[str, str]], *, max_pairs: int, seed: int
) -> list[BenchmarkItem]:
    """Balanced citation-recommendation pairs: papers that cite one another (either way) and as many
    with no link in either direction, in a seeded random order (which paper is A is random too): the
    lowest-ranked pairs (``sample_rank``), so a paper added keeps every pair it does not displace."""
    known = set(doc_ids)
    linked = {frozenset(pair) for pair in citations if pair[0] != pair[1] and set(pair) <= known}
    unlinked = [
        frozenset((a, b))
        for i, a in enumerate(sorted(known))
        for b in sorted(known)[i + 1 :]
        if frozenset((a, b)) not in linked
    ]

    def rank(pair: Sequence[str]) -> str:
        return sample_rank(seed, "\x1f".join(pair))

    positives = sorted((sorted(pair) for pair in linked), key=rank)
    negatives = sorted((sorted(pair) for pair in unlinked), key=rank)
    per_label = min(max_pairs // 2, len(positives), len(negatives))
    items = []
    for label, pairs in (("Yes", positives[:per_label]), ("No", negatives[:per_label])):
        for pair in pairs:
            # Which paper is A: a bit of the pair's own rank, as random as a draw and as stable.
            a, b = pair if int(rank(pair)[-1], 16) % 2 == 0 else pair[::-1]
            items.append(
                BenchmarkItem(
                    item_id=_item_id(MATCHING, a, b),
                    kind=MATCHING,
                    gold_answers=(label,),
                    gold_doc_ids=(a, b),
                    paper_a=a,
                    paper_b=b,
                )
            )
    items.sort(key=lambda item: sample_rank(seed, item.item_id))
    return items


def sample_rank(seed: int, item_id: str) -> str:
    """An item's place in the seeded sample: a hash of the seed and the item. A sample of the
    lowest-ranked items is stable under change: a paper added to the collection brings its own
    candidates, which displace only the kept items that rank above them, never reshuffle the rest."""
    return hashlib.sha256(f"{seed}\x1f{item_id}".encode()).hexdigest()


def why_no_matching(citations: Sequence[tuple[str, str]], max_pairs: int) -> str:
    """Why ``matching_pairs`` made no item."""
    if not max_pairs:
        return "max_matching is 0."
    return missing_links(citations, "A matching item") or (
        "a matching item needs a pair of papers that cite each other and a pair that do not, in equal "
        "numbers; the collection lacks one of the two."
    )
