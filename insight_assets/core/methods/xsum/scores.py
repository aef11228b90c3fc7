"""XSum's evaluation (§4.2) of summaries against a reference: an evaluation target's related-work
section (our SurveySum), or, for a target without one, its papers' abstracts.

- ROUGE-1, ROUGE-2, ROUGE-L recall: Google's ``rouge-score`` package, Porter stemming; citation
  markers are removed from both texts first (ours, and the reference's "(Author et al., 2014)" and
  "[12]"), as neither side's markers are content.
- Ref-F1: the papers a summary cites against the papers the reference cites (the target's papers):
  precision, recall and F1 (the public code computes recall only). A citation that names no paper
  (an alias the writer invented, a chunk that does not exist) counts as a wrong one in precision.
- ``semantic_recall``: BERTScore needs a model we cannot download, so this is its recall rule on
  sentences instead of tokens, with the configured embedder: each reference sentence's best cosine
  with a summary sentence, averaged. Named for what it is.
- G-Eval coverage (1-5): where the judge's provider gives token probabilities (``local``, OpenAI
  and compatible servers), G-Eval's own score: the probability-weighted expectation over the score
  tokens 1-5 of the evaluation form; elsewhere the score the judge writes after its evaluation
  steps (``geval_mode`` says which). CheckEval: a checklist built from the reference, refined
  (CheckEval's refinement step: merged, split, reworded, dropped), then answered for each summary;
  the share of "yes". Offline all are lexical stand-ins (see ``offline.py``), labelled in every
  table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

from ...retrieval.citing import cited_aliases, strip_citations
from ...text import sentence_texts, without_citation_markers
from .schemas import Checklist, CoverageRating, ScoreProbabilities, SummaryRecord, SummaryTarget
from .tasks import (
    CHECKEVAL_ANSWERS,
    CHECKEVAL_CHECKLIST,
    CHECKEVAL_REFINE,
    GEVAL_COVERAGE,
    GEVAL_COVERAGE_PROBABILITIES,
)

if TYPE_CHECKING:
    from ...llm import LLMClient

# The scores a judge model gives (G-Eval, CheckEval); the others are measured against the reference.
JUDGED_COLUMNS = ("geval_coverage", "checkeval")
SCORE_COLUMNS = (
    "rouge1",
    "rouge2",
    "rougeL",
    "ref_precision",
    "ref_recall",
    "ref_f1",
    "semantic_recall",
    "geval_coverage",
    "checkeval",
)


def plain_text(text: str) -> str:
    """``text`` without citation markers: ours ("[chunk ids]") and the reference's."""
    return strip_citations(without_citation_markers(text))


def rouge_recall(reference: str, summary: str) -> dict[str, float]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    scores = scorer.score(plain_text(reference), plain_text(summary))
    return {name: round(score.recall, 4) for name, score in scores.items()}


def reference_f1(
    cited_docs: Sequence[str], reference_docs: Sequence[str], unresolved: int = 0
) -> dict[str, float]:
    """Ref-F1 of the papers cited; ``unresolved`` citations named no paper and count as wrong."""
    cited, gold = set(cited_docs), set(reference_docs)
    hits = len(cited & gold)
    precision = hits / (len(cited) + unresolved) if cited or unresolved else 0.0
    recall = hits / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"ref_precision": round(precision, 4), "ref_recall": round(recall, 4), "ref_f1": round(f1, 4)}


def semantic_recall(reference: str, summary: str, embed: Callable[[list[str]], np.ndarray]) -> float:
    """Each reference sentence's best cosine with a summary sentence, averaged."""
    wanted = sentence_texts(plain_text(reference))
    held = sentence_texts(plain_text(summary))
    if not wanted or not held:
        return 0.0
    vectors = normalize_rows(embed(wanted + held))
    similarity = vectors[: len(wanted)] @ vectors[len(wanted) :].T
    return round(float(similarity.max(axis=1).mean()), 4)


@dataclass(frozen=True)
class ScoredSummary:
    target_id: str
    method: str
    reference_kind: str
    scores: dict[str, float | None]
    errors: tuple[str, ...] = ()


SECTION, ABSTRACTS = "section", "abstracts"


def references(targets: Sequence[SummaryTarget], abstracts: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """What each target's summaries are scored against: an evaluation target's related-work
    section (``SECTION``); for any other target, which has no human reference, its papers'
    abstracts (``ABSTRACTS``: how much of the papers' own account the summary covers)."""
    found = {}
    for target in targets:
        if target.is_evaluation:
            found[target.target_id] = (SECTION, target.reference)
        else:
            text = "\n\n".join(abstracts[doc] for doc in target.doc_ids if abstracts.get(doc))
            if text:
                found[target.target_id] = (ABSTRACTS, text)
    return found


def score_summaries(
    client: LLMClient,
    targets: Sequence[SummaryTarget],
    summaries: Sequence[SummaryRecord],
    chunk_docs: Mapping[str, str],
    embed: Callable[[list[str]], np.ndarray],
    abstracts: Mapping[str, str],
) -> list[ScoredSummary]:
    """Every summary scored against its target's reference (``references``); Ref-F1 compares the
    papers it cites with the target's papers. Judge calls that fail leave their score empty and say
    why; the other scores stand."""
    by_id = {target.target_id: target for target in targets}
    embed = embedded_once(embed)
    reference = references(targets, abstracts)
    scored = [s for s in summaries if s.target_id in reference and s.text]
    checklists = _refined_checklists(client, sorted({s.target_id for s in scored}), reference)
    plain = [plain_text(s.text) for s in scored]
    geval_task = GEVAL_COVERAGE_PROBABILITIES if geval_mode(client) == WEIGHTED else GEVAL_COVERAGE
    geval = client.run_many(
        geval_task,
        [
            {"reference": reference[s.target_id][1], "summary": text}
            for s, text in zip(scored, plain, strict=True)
        ],
    )
    answerable = [i for i, s in enumerate(scored) if checklists[s.target_id].ok]
    answers = client.run_many(
        CHECKEVAL_ANSWERS,
        [
            {"summary": plain[i], "questions": checklists[scored[i].target_id].value.questions}
            for i in answerable
        ],
    )
    checkeval: dict[int, tuple[float | None, str | None]] = {
        i: (round(item.value.answers.count("yes") / len(item.value.answers), 4), None)
        if item.ok and item.value.answers
        else (None, f"checkeval answers: {item.error}")
        for i, item in zip(answerable, answers.items, strict=True)
    }
    results = []
    for index, (summary, judged) in enumerate(zip(scored, geval.items, strict=True)):
        target = by_id[summary.target_id]
        kind, text = reference[summary.target_id]
        cited_docs = [chunk_docs[cid] for cid in summary.cited if cid in chunk_docs]
        unresolved = len(cited_aliases(summary.text)) + sum(cid not in chunk_docs for cid in summary.cited)
        errors = []
        if not judged.ok:
            errors.append(f"geval: {judged.error}")
        check_score, check_error = checkeval.get(
            index, (None, f"checkeval {checklists[summary.target_id].error}")
        )
        if check_error:
            errors.append(check_error)
        results.append(
            ScoredSummary(
                summary.target_id,
                summary.method,
                kind,
                {
                    **rouge_recall(text, summary.text),
                    **reference_f1(cited_docs, target.doc_ids, unresolved),
                    "semantic_recall": semantic_recall(text, summary.text, embed),
                    "geval_coverage": round(_geval_score(judged.value), 3) if judged.ok else None,
                    "checkeval": check_score,
                },
                tuple(errors),
            )
        )
    return results


def embedded_once(embed: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
    """``embed`` that embeds each distinct text once: every method's summary of a target is scored
    against the same reference sentences, which were embedded again for each (profiled: 86% of the
    demo's ``xsum_scores`` was ``semantic_recall``)."""
    known: dict[str, np.ndarray] = {}

    def cached(texts: list[str]) -> np.ndarray:
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            known.update(zip(missing, np.asarray(embed(missing)), strict=True))
        return np.stack([known[text] for text in texts])

    return cached


WEIGHTED, PLAIN = "probability-weighted", "plain score"


def geval_mode(client: LLMClient) -> str:
    """How G-Eval is computed with this client's judge: from the score tokens' probabilities where
    its provider gives them, else the plain score it writes."""
    return WEIGHTED if client.reads_token_probabilities(GEVAL_COVERAGE_PROBABILITIES) else PLAIN


def _geval_score(value: CoverageRating | ScoreProbabilities) -> float:
    return value.expectation if isinstance(value, ScoreProbabilities) else value.score


@dataclass(frozen=True)
class _Checklist:
    """A target's refined checklist, or why there is none (``ok`` / ``value`` / ``error``, like a
    model call's item)."""

    value: Checklist | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


def _refined_checklists(
    client: LLMClient, target_ids: Sequence[str], reference: Mapping[str, tuple[str, str]]
) -> dict[str, _Checklist]:
    """CheckEval's checklist per target: generated from the reference, then refined."""
    drafts = client.run_many(CHECKEVAL_CHECKLIST, [{"reference": reference[t][1]} for t in target_ids]).items
    drafted = [i for i, item in enumerate(drafts) if item.ok]
    refined = client.run_many(
        CHECKEVAL_REFINE,
        [{"reference": reference[target_ids[i]][1], "questions": drafts[i].value.questions} for i in drafted],
    ).items
    found = {
        t: _Checklist(None, f"checklist: {item.error}") for t, item in zip(target_ids, drafts, strict=True)
    }
    for index, item in zip(drafted, refined, strict=True):
        found[target_ids[index]] = (
            _Checklist(item.value) if item.ok else _Checklist(None, f"checklist refinement: {item.error}")
        )
    return found


def mean_scores(
    scored: Sequence[ScoredSummary], methods: Sequence[str], reference_kind: str
) -> list[dict[str, float | str | int | None]]:
    """One row per method: the mean of each score over its summaries scored against
    ``reference_kind`` that have it."""
    rows = []
    for method in methods:
        mine = [s for s in scored if s.method == method and s.reference_kind == reference_kind]
        row: dict[str, float | str | int | None] = {"method": method, "targets": len(mine)}
        for column in SCORE_COLUMNS:
            values = [s.scores[column] for s in mine if s.scores.get(column) is not None]
            row[column] = round(float(np.mean(values)), 3) if values else None
        rows.append(row)
    return rows
