"""Document compression: each paper reduced to its main topics, contributions, key findings and
conclusions (SCOpE-QA, Appendix A step 2), so that several papers fit in one prompt.

The paper does not say how long a document may be; here the body text is cut to
``CompressionSettings.max_input_tokens`` tokens (the opening of a paper carries its abstract,
introduction and method) and every list is cut to ``max_items_per_field`` items.

Offline, compression is extractive: key phrases (``core/keyphrases.py``) for the topics, and for the
other fields the paper's most central sentences that carry the field's cue words ("we propose",
"outperforms", "in conclusion"), falling back to central sentences without cues.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints

from insight_assets.core.runtime.stage_settings import StageSettings
from insight_assets.core.startup.lazy import LazyModel, lazy_regex

from ..extractive import rank_sentences
from ..keyphrases import document_keyphrases
from ..llm.tasks import Task, register_task
from ..text import count_tokens, cut_to_tokens, drop_leading_heading, split_sentences
from .open_problems import SHORT_QUOTE_WORDS, is_open_problem, quotable
from .records import CompressedDocument, ItemFailure, SourceDocument, render_compressed

if TYPE_CHECKING:
    from insight_assets.core.ingestion.documents import ParsedDocument

    from ..llm.client import LLMClient

Item = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class DocumentDigest(LazyModel):
    main_topics: list[Item] = Field(min_length=1, description="The paper's main topics, short noun phrases.")
    contributions: list[Item] = Field(min_length=1, description="What the paper proposes or contributes.")
    key_findings: list[Item] = Field(description="Its essential results and findings.")
    conclusions: list[Item] = Field(description="What it concludes: implications and limitations.")


class CompressionSettings(StageSettings):
    """The compression of each paper (InsightGen §3): what it reads and how much it keeps."""

    max_input_tokens: int = Field(
        default=12000,
        ge=1,
        description="Tokens of each paper's body the compression reads (the rest is cut).",
    )
    max_items_per_field: int = Field(
        default=6, ge=1, description="Most topics / contributions / conclusions / findings kept per paper."
    )


@dataclass(frozen=True)
class CompressionOutcome:
    """``compressed`` in input order without the failures. Documents skipped because the budget
    ran out are in neither list; ``budget_error`` then says why."""

    compressed: list[CompressedDocument]
    failures: list[ItemFailure]
    budget_error: str | None


# -- the task -----------------------------------------------------------------------------------

_CONTRIBUTION_CUES = lazy_regex(
    r"\b(we (propose|introduce|present|develop|design)|our (contribution|approach|method|framework)|"
    r"this (paper|work|study))\b",
    re.IGNORECASE,
)
_FINDING_CUES = lazy_regex(
    r"\b(outperform\w*|improv\w*|achiev\w*|results? (show|indicate|demonstrate|suggest)\w*|"
    r"reduc\w*|increas\w*|we (find|found|observe))\b|%",
    re.IGNORECASE,
)
_CONCLUSION_CUES = lazy_regex(
    r"\b(in conclusion|we conclude|to conclude|we (showed|have shown|demonstrated)|"
    r"future work|limitation\w*|in summary|overall)\b",
    re.IGNORECASE,
)
# Sentences past this share of the text count as the conclusion part of the paper.
_CONCLUSION_SHARE = 0.8
# A usable statement: not a heading, not a paragraph the splitter failed to cut.
_MIN_WORDS, _MAX_WORDS = 6, 60
_FALLBACK_ITEMS = 2
_OPEN_PROBLEM_ITEMS = 2


def compress_offline(title: str, text: str, max_items: int) -> DocumentDigest:
    """Key phrases and cue-matched central sentences of the text, in order of centrality."""
    spans = split_sentences(text)
    sentences = [" ".join(drop_leading_heading(text[start:end]).split()) for start, end in spans]
    usable = [i for i, sentence in enumerate(sentences) if _MIN_WORDS <= len(sentence.split()) <= _MAX_WORDS]
    pool = usable or list(range(len(sentences)))
    ranked = [pool[i] for i in rank_sentences([sentences[i] for i in pool], title, limit=len(pool))]
    used: set[int] = set()

    def pick(wanted: Callable[[int], object], limit: int = max_items, fallback: bool = True) -> list[str]:
        chosen = [i for i in ranked if i not in used and wanted(i)][:limit]
        if not chosen and fallback:  # no cue matched: the most central sentences not used yet stand in
            chosen = [i for i in ranked if i not in used][: min(_FALLBACK_ITEMS, limit)]
        used.update(chosen)
        return [sentences[i] for i in chosen]

    contributions = pick(lambda i: _CONTRIBUTION_CUES.search(sentences[i]))
    key_findings = pick(lambda i: _FINDING_CUES.search(sentences[i]))
    # The open problems a paper states come first among its conclusions, those short enough to quote
    # first: what a paper leaves open is what offline questions ask about.
    open_problems = [i for i in ranked if i not in used and is_open_problem(sentences[i])]
    open_problems.sort(key=lambda i: len(quotable(sentences[i]).split()) > SHORT_QUOTE_WORDS)
    chosen_open = open_problems[: min(_OPEN_PROBLEM_ITEMS, max_items)]
    used.update(chosen_open)
    stated_open = [sentences[i] for i in chosen_open]
    tail = len(text) * _CONCLUSION_SHARE
    conclusions = stated_open + pick(
        lambda i: _CONCLUSION_CUES.search(sentences[i]) or spans[i][0] >= tail,
        max_items - len(stated_open),
        not stated_open,
    )
    topics = document_keyphrases(title, text, max_items) or [title]
    return DocumentDigest(
        main_topics=topics, contributions=contributions, key_findings=key_findings, conclusions=conclusions
    )


def _format_inputs(inputs: Mapping[str, Any]) -> dict[str, str]:
    return {"title": inputs["title"], "text": inputs["text"], "max_items": str(inputs["max_items"])}


COMPRESS_DOCUMENT: Task[DocumentDigest] = register_task(
    Task(
        name="compress_document",
        version=1,
        template="compress_document.v1.txt",
        output_model=DocumentDigest,
        offline=compress_offline,
        inputs=("title", "text", "max_items"),
        trim_input="text",
        format_inputs=_format_inputs,
        max_tokens=2000,
        expected_output_tokens=900,
        description="Compress a paper to its main topics, contributions, key findings and conclusions.",
    )
)


# -- the stage ----------------------------------------------------------------------------------


def papers_to_compress(documents: Sequence[ParsedDocument]) -> list[SourceDocument]:
    """Each parsed paper's body (references and boilerplate cut), titled by its title or file name."""
    return [
        SourceDocument(
            document_id=document.doc_id, title=document.title or document.file, text=document.readable()
        )
        for document in documents
    ]


def document_title(document: SourceDocument) -> str:
    """The title prompts cite; a document without one is named by its id."""
    return " ".join(document.title.split()) or document.document_id


def compression_inputs(document: SourceDocument, settings: CompressionSettings) -> dict[str, Any]:
    """The ``COMPRESS_DOCUMENT`` inputs for one document (also what a dry run needs)."""
    return {
        "title": document_title(document),
        "text": cut_to_tokens(document.text.strip(), settings.max_input_tokens),
        "max_items": settings.max_items_per_field,
    }


def _clean(items: Sequence[str], limit: int) -> list[str]:
    unique: list[str] = []
    for item in items:
        item = " ".join(item.split())
        if item and item not in unique:
            unique.append(item)
    return unique[:limit]


def compress_documents(
    client: LLMClient,
    documents: Sequence[SourceDocument],
    settings: CompressionSettings | None = None,
) -> CompressionOutcome:
    """Compress every document with text (concurrently); one failure does not stop the rest."""
    settings = settings or CompressionSettings()
    ids = [document.document_id for document in documents]
    if len(set(ids)) != len(ids):
        raise ValueError("document ids must be distinct")
    problems: dict[str, str] = {}
    to_run: list[tuple[SourceDocument, dict[str, Any]]] = []
    for document in documents:
        if document.text.strip():
            to_run.append((document, compression_inputs(document, settings)))
        else:
            problems[document.document_id] = "the document has no body text to compress"
    batch = client.run_many(COMPRESS_DOCUMENT, [inputs for _, inputs in to_run])
    done: dict[str, CompressedDocument] = {}
    for (document, inputs), item in zip(to_run, batch.items):
        if item.value is not None:
            done[document.document_id] = _compressed(document, inputs, item.value, settings)
        elif item.status == "failed":
            problems[document.document_id] = item.error or "unknown error"
    return CompressionOutcome(
        compressed=[done[i] for i in ids if i in done],
        failures=[ItemFailure(i, problems[i]) for i in ids if i in problems],
        budget_error=str(batch.budget_error) if batch.budget_error else None,
    )


def _compressed(
    document: SourceDocument, inputs: Mapping[str, Any], digest: DocumentDigest, settings: CompressionSettings
) -> CompressedDocument:
    limit = settings.max_items_per_field
    fields = {
        "main_topics": _clean(digest.main_topics, limit),
        "contributions": _clean(digest.contributions, limit),
        "key_findings": _clean(digest.key_findings, limit),
        "conclusions": _clean(digest.conclusions, limit),
    }
    text = render_compressed(inputs["title"], **fields)
    return CompressedDocument(
        document_id=document.document_id,
        title=inputs["title"],
        text=text,
        tokens=count_tokens(text),
        source_tokens=count_tokens(inputs["text"]),
        **fields,
    )
