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

Each step is a function here (the assets call them one by one); each stage's settings are one model
in ``settings.py``, which these functions read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from insight_assets.core.ingestion.chunking import PASSAGE

from ...retrieval.citing import Source, chunk_citations, cited_chunks, render_citations
from ...retrieval.rerank import LateInteraction
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
from .settings import AnswersSettings, QuestionsSettings, SummariesSettings
from .summaries import WrittenSummaries, summarize_targets
from .tasks import GENERATION_TASKS, JUDGE_TASKS

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Retriever

PROFILE = PASSAGE
TASKS = GENERATION_TASKS + JUDGE_TASKS


def answer_target_questions(
    client: LLMClient,
    retriever: Retriever,
    targets: Sequence[SummaryTarget],
    questions: Sequence[XSumQuestion],
    settings: AnswersSettings,
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


__all__ = [
    "ABSTAINED",
    "ABSTRACTS_ONLY",
    "ABSTRACT_FALLBACK_TOKENS",
    "ANSWERED",
    "CANDIDATES",
    "FAILED",
    "MAX_TARGET_PAPERS",
    "MIN_CITED_FOR_EVALUATION",
    "NO_INPUT",
    "PIPELINE_1",
    "PIPELINE_2",
    "PLAIN_RAG",
    "PROFILE",
    "QUESTIONS_PER_PAPER",
    "RETRIEVAL_SCOPES",
    "SUMMARY_METHODS",
    "TASKS",
    "TOP_N",
    "TRUNCATED",
    "WRITTEN",
    "XSUM",
    "AnswersSettings",
    "PaperInput",
    "QuestionsSettings",
    "Source",
    "SummariesSettings",
    "SummaryRecord",
    "SummaryTarget",
    "WrittenSummaries",
    "XSumAnswerRecord",
    "XSumQuestion",
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
    "summarize_targets",
    "summary_citations_valid",
    "write_summaries",
]
