"""XSum (Achkar, Gollub and Potthast, SCOLIA 2025): cited multi-paper summaries.

For a *target* (a topic and its papers, ``targets.py``) the pipeline follows the paper:

1. questions (§3.2): k = 5 broad questions per paper from its title and abstract (the first
   ~300 tokens of its body when it has none, recorded as a fallback);
2. answers (§3.4): per question the top 100 ``xsum`` chunks (150 tokens, 20-token overlap) by
   cosine similarity, from the question's own paper (``retrieval_scope="paper"``, what the public
   code does) or from all of the target's papers (``"target"``), reranked to 20 (late interaction
   by default, ``core/retrieval/rerank.py``); the answer reads those 20 only and cites them as
   ``[S3]``, or abstains in an explicit field when they do not answer;
3. the editor (§3.5): one summary from the target's answers, keeping their citations; its
   ``max_tokens`` is sized to the answers, and a summary cut off is asked again once with twice
   the room, then recorded as truncated.

Generation runs at temperature 0.3, top-p 0.95 (§4.3). The public code's second "refine" pass over
the same context is an option, off. Four baselines write summaries for the same targets with the
same writers and word budget: SurveySum's *Pipeline 1* (every chunk of the target's papers ranked
against its title by the late-interaction ranker, top 20 summarised) and *Pipeline 2* (dense
retrieval of 100 chunks on the title, an LLM re-rank down to as many chunks as XSum's editor was
handed for the target, summarised), the paper's Table 1; *plain RAG* (the topic as the only query,
top 20 chunks by cosine, one summary) and *abstracts only* (the editor over the papers' abstracts).
``scores.py`` evaluates them all against evaluation targets.

Each step is a function here (the assets call them one by one); ``summarize`` runs them all for
one target, for the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...chunking import PASSAGE
from ...retrieval.citing import Source, chunk_citations, cited_chunks, render_citations
from ...retrieval.rerank import DEFAULT_RERANKER, RERANKERS, LateInteraction
from ...retrieval.search import RETRIEVAL_MODES
from . import store  # declares the method's warehouse tables
from .runs import (
    abstracts_summaries,
    answer_questions,
    generate_questions,
    paper_input,
    pipeline_1_summaries,
    pipeline_2_summaries,
    plain_rag_summaries,
    summary_citations_valid,
    write_summaries,
)
from .schemas import (
    ABSTAINED,
    ABSTRACT_FALLBACK_TOKENS,
    ABSTRACTS_ONLY,
    ANSWERED,
    CANDIDATES,
    FAILED,
    MAX_TARGET_PAPERS,
    MIN_CITED_FOR_EVALUATION,
    NO_INPUT,
    PIPELINE_1,
    PIPELINE_2,
    PLAIN_RAG,
    QUESTIONS_PER_PAPER,
    RETRIEVAL_SCOPES,
    SUMMARY_METHODS,
    TOP_N,
    TRUNCATED,
    WRITTEN,
    XSUM,
    PaperInput,
    SummaryRecord,
    SummaryTarget,
    XSumAnswerRecord,
    XSumQuestion,
)
from .scores import score_summaries
from .summaries import BaselineSettings, WrittenSummaries, summarize_targets
from .tasks import GENERATION_TASKS, JUDGE_TASKS

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Retriever

PROFILE = PASSAGE
TASKS = GENERATION_TASKS + JUDGE_TASKS


@dataclass(frozen=True)
class XSumSettings:
    """The paper's defaults; ``retrieval_mode`` "dense" is §3.4's cosine first stage."""

    questions_per_paper: int = QUESTIONS_PER_PAPER
    candidates: int = CANDIDATES
    top_n: int = TOP_N
    retrieval_mode: str = "dense"
    retrieval_scope: str = "paper"
    reranker: str = DEFAULT_RERANKER
    refine: bool = False
    max_target_papers: int = MAX_TARGET_PAPERS

    def __post_init__(self) -> None:
        if self.retrieval_scope not in RETRIEVAL_SCOPES:
            raise ValueError(
                f"retrieval_scope must be one of {', '.join(RETRIEVAL_SCOPES)}, not {self.retrieval_scope!r}"
            )
        if self.retrieval_mode not in RETRIEVAL_MODES:
            raise ValueError(
                f"retrieval_mode must be one of {', '.join(RETRIEVAL_MODES)}, not {self.retrieval_mode!r}"
            )
        if self.reranker not in RERANKERS:
            raise ValueError(f"reranker must be one of {', '.join(RERANKERS)}, not {self.reranker!r}")
        for name in ("questions_per_paper", "candidates", "top_n", "max_target_papers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.top_n > self.candidates:
            raise ValueError(f"top_n ({self.top_n}) cannot exceed candidates ({self.candidates})")


@dataclass(frozen=True)
class TargetSummary:
    questions: list[XSumQuestion]
    question_failures: dict[str, str]
    answers: list[XSumAnswerRecord]
    summary: SummaryRecord


def answer_target_questions(
    client: LLMClient,
    retriever: Retriever,
    targets: Sequence[SummaryTarget],
    questions: Sequence[XSumQuestion],
    settings: XSumSettings,
    late_interaction: LateInteraction | None = None,
) -> list[XSumAnswerRecord]:
    """Step 2 for every target, with the settings' retrieval, rerank and refine choices."""
    return answer_questions(
        client,
        retriever,
        targets,
        questions,
        scope=settings.retrieval_scope,
        candidates=settings.candidates,
        top_n=settings.top_n,
        mode=settings.retrieval_mode,
        reranker=settings.reranker,
        refine=settings.refine,
        late_interaction=late_interaction,
    )


def summarize(
    client: LLMClient,
    retriever: Retriever,
    target: SummaryTarget,
    papers: Mapping[str, PaperInput],
    sources: Mapping[str, Source],
    settings: XSumSettings = XSumSettings(),
) -> TargetSummary:
    """All three steps for one target: questions for its papers, their answers, the summary."""
    generated = generate_questions(
        client, [papers[doc] for doc in target.doc_ids], settings.questions_per_paper
    )
    answers = answer_target_questions(client, retriever, [target], generated.questions, settings)
    questions = {q.question_id: q.question for q in generated.questions}
    summary = write_summaries(client, [target], answers, questions, sources)[0]
    return TargetSummary(generated.questions, generated.failures, answers, summary)


__all__ = [
    "ABSTAINED",
    "ABSTRACTS_ONLY",
    "ABSTRACT_FALLBACK_TOKENS",
    "ANSWERED",
    "FAILED",
    "MIN_CITED_FOR_EVALUATION",
    "NO_INPUT",
    "PIPELINE_1",
    "PIPELINE_2",
    "PLAIN_RAG",
    "PROFILE",
    "SUMMARY_METHODS",
    "TASKS",
    "TRUNCATED",
    "WRITTEN",
    "XSUM",
    "BaselineSettings",
    "PaperInput",
    "Source",
    "SummaryRecord",
    "SummaryTarget",
    "TargetSummary",
    "WrittenSummaries",
    "XSumAnswerRecord",
    "XSumQuestion",
    "XSumSettings",
    "abstracts_summaries",
    "answer_target_questions",
    "chunk_citations",
    "cited_chunks",
    "generate_questions",
    "paper_input",
    "pipeline_1_summaries",
    "pipeline_2_summaries",
    "plain_rag_summaries",
    "render_citations",
    "score_summaries",
    "store",
    "summarize",
    "summarize_targets",
    "summary_citations_valid",
    "write_summaries",
]
