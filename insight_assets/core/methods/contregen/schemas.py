"""ConTReGen's vocabulary: its defaults (the paper's, and the issue's where the paper is silent),
the models its tasks answer with, and the tree its steps build."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from insight_assets.core.startup.lazy import LazyModel

# §4.3: top-k = 5 passages per retrieval (3 for ODSUM-Story), tree depth at most 2;
# Appendix A.1: 5 sub-questions per plan.
TOP_K = 5
MAX_DEPTH = 2
MAX_SUB_QUESTIONS = 5
# §4.3: the iterative baselines run 5 iterations (10 in Table 10).
ITERATIONS = 5
# The paper gives no temperatures; the issue's: 0 for planning and verification, 0.3 to write.
PLAN_TEMPERATURE = 0.0
WRITE_TEMPERATURE = 0.3
# The root's answer is about 300 words; a node's summary is capped so that a parent's prompt fits.
ANSWER_WORDS = 300
ANSWER_MAX_TOKENS = 900
NODE_SUMMARY_MAX_TOKENS = 400
# The prompt budget every synthesis input is cut to (passages and children's summaries, in tokens);
# 8,000 leaves room for the template and the answer in an 8k-context model such as Llama-3-8B.
CONTEXT_TOKENS = 8000

# The offline verifier (no model): a sub-question is needed when its cosine with the original
# query reaches NEED_SIMILARITY and it does not repeat an explored question (cosine below
# REPEAT_SIMILARITY); a passage is relevant when its cosine with the original query reaches
# RELEVANCE_RATIO times that of the query's own best passage.
NEED_SIMILARITY = 0.3
REPEAT_SIMILARITY = 0.9
RELEVANCE_RATIO = 0.7

# Methods whose answers and retrieval are compared (§4.2, and the budget-matched RetGen).
CONTREGEN, RETGEN, RETGEN_BUDGET, ITERATIVE = "contregen", "retgen", "retgen_budget", "iterretgen"
# The multi-hop baselines of Table 2 (Self-RAG needs its fine-tuned reflection-token model: not
# built), and the ablations of Tables 5 and 8.
SELF_ASK, SEARCHAIN, DSP = "self_ask", "searchain", "dsp"
CONTRE_NO_SYNTHESIS, DSP_WITH_CONTRE = "contre_no_synthesis", "dsp_with_contre"
METHODS = (
    CONTREGEN,
    RETGEN,
    RETGEN_BUDGET,
    ITERATIVE,
    SELF_ASK,
    SEARCHAIN,
    DSP,
    CONTRE_NO_SYNTHESIS,
    DSP_WITH_CONTRE,
)
# Words of an intermediate answer (Self-Ask's, SearChain's): one or two sentences.
HOP_ANSWER_WORDS = 60

# A node's status: the root; a sub-question kept; pruned as not needed, or for want of a relevant
# passage; or left out because its verification call failed.
ROOT, KEPT = "root", "kept"
PRUNED_NOT_NEEDED, PRUNED_NO_PASSAGE, FAILED = "pruned_not_needed", "pruned_no_relevant_passage", "failed"
# Why a kept node has no children.
EXPANDED, NO_FURTHER_PLAN, DEPTH_LIMIT, PLAN_FAILED = (
    "expanded",
    "no_further_plan",
    "depth_limit",
    "plan_failed",
)
# An answer's status.
WRITTEN, TRUNCATED, NO_INPUT = "written", "truncated", "no_input"


# -- what the tasks answer with ----------------------------------------------------------------


class Plan(LazyModel):
    further_plan_needed: bool = Field(
        description="false when the passages already cover the question and no sub-question would add to them"
    )
    sub_questions: list[str] = Field(default_factory=list, max_length=10)


class SubQuestionVerdict(LazyModel):
    index: int = Field(description="the sub-question's number in the list, from 1")
    needed: bool
    reason: str = Field(description="one short sentence")
    search_query: str = Field(
        default="", description="when needed: the sub-question rewritten as a self-contained search query"
    )


class SubQuestionVerdicts(LazyModel):
    verdicts: list[SubQuestionVerdict]


class PassageVerdict(LazyModel):
    id: str = Field(description="the passage's id, e.g. S2")
    relevant: bool
    reason: str = Field(default="", description="one short sentence")


class PassageVerdicts(LazyModel):
    verdicts: list[PassageVerdict]


class WrittenText(LazyModel):
    text: str = Field(min_length=1)


class FollowUp(LazyModel):
    """Self-Ask's step: another follow-up question, or none when the answers so far suffice."""

    follow_up_needed: bool
    follow_up: str = Field(default="", description="when needed: the next follow-up question")


class QueryChain(LazyModel):
    """SearChain's chain of queries still to answer (refined each round), and DSP's hops."""

    queries: list[str] = Field(default_factory=list, max_length=10)


class ReasonedAnswer(LazyModel):
    """DSP's chain-of-thought answer: the reasoning first, then the cited answer."""

    reasoning: str = Field(description="the step-by-step reasoning from the passages to the answer")
    text: str = Field(min_length=1, description="the answer, citing its passages")


class SentenceVerdicts(LazyModel):
    """NLI by the judge model: each answer sentence against the reference."""

    verdicts: list[Literal["entailment", "neutral", "contradiction"]] = Field(
        description="one verdict per sentence, in order"
    )


class AnswerJudgement(LazyModel):
    reasoning: str
    coverage: float = Field(ge=1, le=5, description="how many facets of the question the answer covers")
    relevance: float = Field(ge=1, le=5, description="how much of the answer bears on the question")


# -- the tree -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeQuestion:
    """A question to answer, with the documents that answer it when they are known (``gold``)."""

    question_id: str
    question: str
    gold: tuple[str, ...] = ()
    source: str = "generated"


@dataclass
class TreePassage:
    """A passage a node's retrieval returned, and the verdict on its relevance to the original
    query (``None`` at the root, whose passages the query itself retrieved)."""

    chunk_id: str
    doc_id: str
    score: float
    relevant: bool | None = None
    reason: str = ""


@dataclass
class TreeNode:
    """One node: the root (the query) or a sub-question, with every decision made about it.

    ``node_id`` spells the path: "0" is the root, "0.2" its second sub-question, "0.2.1" that
    one's first. ``status`` says whether the node was kept or pruned (and ``reason`` why);
    ``expansion`` why a kept node has the children it has. ``summary`` is its synthesis, citing
    chunk ids.
    """

    question_id: str
    node_id: str
    parent_id: str | None
    depth: int
    question: str
    search_query: str
    status: str
    reason: str = ""
    expansion: str = ""
    expansion_reason: str = ""
    passages: list[TreePassage] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    summary: str = ""
    summary_status: str = ""
    error: str | None = None

    @property
    def kept(self) -> bool:
        return self.status in (ROOT, KEPT)

    @property
    def relevant_passages(self) -> list[TreePassage]:
        return [p for p in self.passages if p.relevant is not False]


@dataclass
class Usage:
    """Model calls and tokens spent on one question (tokens counted with our tokenizer on the
    rendered prompt and the reply)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, calls: int, input_tokens: int, output_tokens: int) -> None:
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens


@dataclass
class Tree:
    question: TreeQuestion
    nodes: dict[str, TreeNode]
    usage: Usage = field(default_factory=Usage)

    @property
    def root(self) -> TreeNode:
        return self.nodes["0"]

    def kept_nodes(self) -> list[TreeNode]:
        return [node for node in self.nodes.values() if node.kept]

    def retrieved(self) -> list[str]:
        """Every chunk any node's retrieval returned (kept or not), in order, without repeats."""
        return list(dict.fromkeys(p.chunk_id for n in self.nodes.values() for p in n.passages))

    def used(self) -> list[str]:
        """The chunks that reach synthesis: the relevant passages of kept nodes."""
        return list(dict.fromkeys(p.chunk_id for n in self.kept_nodes() for p in n.relevant_passages))


@dataclass(frozen=True)
class Answer:
    """A method's long-form answer to one question, and the passages it retrieved."""

    question_id: str
    method: str
    status: str
    text: str = ""
    cited: tuple[str, ...] = ()
    retrieved: tuple[str, ...] = ()
    used: tuple[str, ...] = ()
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    finish_reason: str | None = None
    # Wall seconds of the method's run over all questions, per question (its calls run together).
    seconds: float | None = None
