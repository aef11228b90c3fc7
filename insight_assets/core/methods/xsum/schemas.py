"""XSum's vocabulary: its defaults (from the paper), the models its tasks answer with, and the
records its steps pass on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from insight_assets.core.startup.lazy import LazyModel

# §3.2: k = 5 broad questions per paper, from its title and abstract.
QUESTIONS_PER_PAPER = 5
# §3.4: the top 100 chunks by cosine similarity, reranked to the 20 the answer reads.
CANDIDATES = 100
TOP_N = 20
# §4.3: generation (and evaluation) at temperature 0.3, top-p 0.95.
TEMPERATURE = 0.3
TOP_P = 0.95
# A paper without an abstract is asked about the first ~300 tokens of its body instead.
ABSTRACT_FALLBACK_TOKENS = 300
# The cap on a target's papers (SurveySum's sections cite 7.38 papers on average, §4.1).
MAX_TARGET_PAPERS = 10
# An evaluation target needs a related-work (or introduction) section citing this many collection papers.
MIN_CITED_FOR_EVALUATION = 3

RETRIEVAL_SCOPES = ("paper", "target")
XSUM, PLAIN_RAG, ABSTRACTS_ONLY = "xsum", "plain_rag", "abstracts_only"
# SurveySum's two pipelines, XSum's Table 1 baselines: chunks ranked against the title by a neural
# ranker (monoT5-3B there; the strongest local ranker here), and dense retrieval on the title with
# an LLM re-rank.
PIPELINE_1, PIPELINE_2 = "pipeline_1", "pipeline_2"
SUMMARY_METHODS = (XSUM, PIPELINE_1, PIPELINE_2, PLAIN_RAG, ABSTRACTS_ONLY)
TARGET_KINDS = ("cluster", "collection", "user", "evaluation")

# Answer and summary outcomes, as the tables record them.
ANSWERED, ABSTAINED, FAILED, SKIPPED = "answered", "abstained", "failed", "skipped"
WRITTEN, TRUNCATED, NO_INPUT = "written", "truncated", "no_input"


# -- task outputs -----------------------------------------------------------------------------


class PaperQuestions(LazyModel):
    questions: list[str] = Field(
        min_length=1, description="Broad questions about the paper's main themes and contributions."
    )


class XSumAnswer(LazyModel):
    abstain: bool = Field(
        description="true when the passages do not answer the question; then answer is empty."
    )
    answer: str = Field(default="", description="The answer, citing passages as [S1], [S2]...")


class WrittenText(LazyModel):
    """A summary: plain prose whose citations are ``[S1]``-style aliases."""

    text: str


class CoverageRating(LazyModel):
    reasoning: str = Field(description="The evaluation steps applied, briefly.")
    score: float = Field(ge=1, le=5, description="1-5: how well the summary covers the reference.")


class ScoreProbabilities(LazyModel):
    """G-Eval's score as the model's probabilities of each score token (§4.2, G-Eval's
    probability-weighted score)."""

    probabilities: dict[str, float] = Field(description="score -> probability of its token")

    @property
    def expectation(self) -> float:
        """The probability-weighted score."""
        return sum(int(score) * p for score, p in self.probabilities.items())


class Checklist(LazyModel):
    questions: list[str] = Field(
        min_length=1, description="Yes/no questions, one per key point of the reference."
    )


class ChecklistAnswers(LazyModel):
    answers: list[Literal["yes", "no"]] = Field(description="One answer per question, in order.")


# -- records ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryTarget:
    """What a summary is written for: a topic and a set of papers. An *evaluation* target also
    carries its reference: the related-work (or introduction) section of the collection paper
    ``reference_doc_id`` that cites all of ``doc_ids``."""

    target_id: str
    kind: str
    topic: str
    doc_ids: tuple[str, ...]
    reference: str = ""
    reference_doc_id: str | None = None
    reference_section: str = ""

    @property
    def is_evaluation(self) -> bool:
        return self.kind == "evaluation"


@dataclass(frozen=True)
class PaperInput:
    """What question generation reads of a paper. ``abstract_source`` is "abstract", or
    "body_start" when the paper had none and its first ~300 tokens stand in."""

    doc_id: str
    title: str
    abstract: str
    abstract_source: str = "abstract"


@dataclass(frozen=True)
class XSumQuestion:
    question_id: str
    doc_id: str
    position: int
    question: str


@dataclass(frozen=True)
class XSumAnswerRecord:
    """One question's answer for one target (scope ``paper``: the same for every target holding
    the paper). ``text`` cites chunk ids as ``[chunk_id]``; ``passages`` are the 20 it read."""

    target_id: str
    question_id: str
    doc_id: str
    status: str
    text: str = ""
    cited: tuple[str, ...] = ()
    passages: tuple[str, ...] = ()
    scope_doc_ids: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class SummaryRecord:
    """One method's summary of one target. ``text`` cites chunk ids as ``[chunk_id]``; ``rendered``
    cites them as "(Title, pp. a–b)"."""

    target_id: str
    method: str
    status: str
    text: str = ""
    rendered: str = ""
    cited: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()  # chunks the answers cited that the summary left out
    finish_reason: str | None = None
    answers_used: int = 0
    error: str | None = None
    given: tuple[str, ...] = ()  # the chunks its writer was shown under aliases (not stored)
