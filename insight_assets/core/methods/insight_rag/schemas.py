"""Insight-RAG's constants and the outputs its tasks answer with."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, ConfigDict, Field, RootModel

from insight_assets.core.startup.lazy import LazyModel

# Question kinds (§3): deeply buried, multi-document, and the non-QA matching task.
BURIED = "buried"
MULTI = "multi"
MATCHING = "matching"
KINDS = (BURIED, MULTI, MATCHING)
# The sizes per collection (the paper's Table 1 has 318-403 / 90-173 / 500 of 5,000 papers).
MAX_BURIED = 200
MAX_MULTI = 100
MAX_MATCHING = 100
SEED = 13

# Methods answered on the same benchmark (§5): no context, conventional RAG with k chunks, and
# Insight-RAG with each insight-retriever mode.
VANILLA = "vanilla"
RAG_KS = (1, 3, 5, 10)
INDEX = "index"
SENTENCES = "sentences"
LLM = "llm"
# The paper's insight retriever: a causal LM continually pre-trained with LoRA on the collection.
PARAMETRIC = "parametric"
RETRIEVER_MODES = (INDEX, SENTENCES, LLM, PARAMETRIC)
DEFAULT_RETRIEVER_MODES = (INDEX, SENTENCES, PARAMETRIC)
# Table 3 (§5.4) scores each retriever alone, and the parametric retriever's base model without its
# adapter: what continual pre-training added.
BASE_MODEL = "base model"
ACCURACY_MODES = (PARAMETRIC, BASE_MODEL, INDEX, SENTENCES, LLM)
# §5.1: "even with only one generated insight"; §5.4 scores the multi-document retriever at
# recall@10, so a multi-answer insight retrieves 10.
INSIGHTS_SINGLE = 1
INSIGHTS_MULTI = 10
# §4: the insight retriever's generation is capped at 100 tokens.
INSIGHT_MAX_TOKENS = 100
# §5.4, Table 4: retrievers are scored on their top 50.
RANK_DEPTH = 50
# The paper runs every model at temperature 0 (the public code's identifier).
TEMPERATURE = 0.0
# A subject whose every word is in at least this share of the collection's papers is too vague to
# ask about ("the model", "table 1"): the paper filters such questions by hand.
VAGUE_DOCUMENT_SHARE = 0.5

# Statuses of an identification or an answer.
OK = "ok"
NO_INSIGHT = "no_insight"  # the identifier answered, with an empty list: nothing to look up
FAILED = "failed"


def rag_method(k: int) -> str:
    return f"rag@{k}"


def insight_method(mode: str) -> str:
    return f"insight-rag:{mode}"


class IdentifiedInsight(LazyModel):
    """One insight: a sentence fragment for the retriever to complete. The public code's keys
    ("Insight", "Multi-answer") are read as well as ours."""

    model_config = ConfigDict(populate_by_name=True)

    insight: str = Field(
        default="",
        validation_alias=AliasChoices("insight", "Insight"),
        description="A sentence fragment to be completed, e.g. 'Person X was born in'.",
    )
    multi_answer: bool = Field(
        default=False,
        validation_alias=AliasChoices("multi_answer", "Multi-answer", "multi-answer", "Multi_answer"),
        description="Whether the question asks for several answers (from its nouns' number).",
    )


class InsightList(RootModel[list[IdentifiedInsight]]):
    """The identifier's reply: a JSON list of insights; ``[{}]`` means none."""


class ExtractedTriple(LazyModel):
    subject: str
    relation: str = Field(description="The verb phrase as written, e.g. 'is based on'.")
    object: str
    sentence: int = Field(description="The number of the sentence the triple comes from.")


class TripleList(LazyModel):
    triples: list[ExtractedTriple] = Field(default_factory=list)


class PhrasedQuestion(LazyModel):
    question: str = Field(description="The question, asking about the object; ends with '?'.")


class Completion(LazyModel):
    text: str = Field(description="The text that completes the fragment, from the context.")


class ShortAnswer(LazyModel):
    answer: str = Field(description="The answer, with no extra explanation.")


class MatchDecision(LazyModel):
    explanation: str = Field(default="", description="The reasoning.")
    answer: Literal["Yes", "No"] = Field(
        description="Whether one paper is relevant enough to cite the other."
    )
