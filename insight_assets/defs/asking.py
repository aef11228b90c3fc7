"""One question put to one method, or to every method side by side.

A method's ``ask`` flow (``ASK``, an ``AskFlow``, in its defs folder's ``ask.py``) gets an ``Asked`` and a
model client and returns a ``MethodAnswer``: its text as people read it, the papers and pages it
cites, and what led to it. ``ask`` runs one flow and measures it (model calls, tokens, cost,
seconds); a flow that cannot answer raises ``AskFailed`` (or a missing index, or a model error),
and that becomes the method's failure with its reason, so that the other methods still answer.
The CLI (``insight-assets ask``), the MCP server and the collection's page (``collection_report``)
all use this.

No heavy import at module level: ``insight-assets --help`` loads no model library.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class AskFlow:
    """A method's answer to one question (``insight-assets ask --method NAME``, its section of
    ``--method all``, of the collection's page and of the MCP server's ``ask``). ``answer`` gets an
    ``Asked`` and a model client, and returns a ``MethodAnswer`` or raises ``AskFailed``. The core
    method's flow is the ``default``. A flow's own command-line options are its ``app/cli/`` module's
    ``ASK_ARGUMENTS``."""

    method: str
    help: str
    answer: Callable
    default: bool = False


class AskFailed(RuntimeError):
    """A method could not answer the question; the message says why."""


@dataclass(frozen=True)
class Citation:
    """A paper a method cites, with the pages it cites (none: the paper as a whole)."""

    title: str
    pages: tuple[int, ...] = ()
    # The paper's citekey ("@key") or DOI ("doi:..."), where its library gives one.
    cite: str = ""

    @property
    def label(self) -> str:
        head = f"{self.title}, {self.cite}" if self.cite else self.title
        if not self.pages:
            return head
        return f"{head}, {'p.' if len(self.pages) == 1 else 'pp.'} {page_ranges(self.pages)}"


def page_ranges(pages: Iterable[int]) -> str:
    """Pages as people write them: 1, 3–5, 9."""
    ordered = sorted(set(pages))
    spans: list[list[int]] = []
    for page in ordered:
        if spans and page == spans[-1][1] + 1:
            spans[-1][1] = page
        else:
            spans.append([page, page])
    return ", ".join(str(a) if a == b else f"{a}\u2013{b}" for a, b in spans)


def citations(cited: Iterable[tuple]) -> tuple[Citation, ...]:
    """(title, first page, last page[, cite]) of each cited passage, as one citation per paper in
    order of first citation; a page of 0 or less cites the paper as a whole."""
    pages: dict[str, set[int]] = {}
    cites: dict[str, str] = {}
    for title, first, last, *cite in cited:
        pages.setdefault(title, set()).update(range(first, last + 1) if first > 0 else ())
        cites.setdefault(title, cite[0] if cite else "")
    return tuple(Citation(title, tuple(sorted(found)), cites[title]) for title, found in pages.items())


@dataclass(frozen=True)
class Asked:
    """A question to a collection: the collection's storage and embedder resources, and the
    options of ``ask`` (by name; each flow reads its own, such as ``answer`` or ``retriever``)."""

    collection: str
    question: str
    storage: Any
    embedder: Any
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodAnswer:
    """What a method made of a question: ``text`` as people read it (the answer, citations as
    titles and pages), the papers it cites, and ``details``, what led to it (a tree of
    sub-questions, the insights retrieved, the papers an idea draws on)."""

    text: str
    citations: tuple[Citation, ...] = ()
    details: str = ""
    # The passages the answer cites (``core.retrieval.citing.Source``: chunk, paper, pages, text).
    passages: tuple = ()
    # The method said the papers do not answer ("Not found in the context."): an answer, not an error.
    abstained: bool = False


@dataclass(frozen=True)
class Answered:
    """One method's answer, or its failure and why, with what it cost."""

    method: str
    description: str
    answer: MethodAnswer | None
    error: str | None
    model: str
    calls: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    seconds: float
    # Whether asking again might answer: a model call failed, or the method broke. Its other
    # failures (no index yet, nothing to answer from) are final until what it reads changes.
    may_answer_later: bool = False

    @property
    def ok(self) -> bool:
        return self.answer is not None

    def costs(self) -> str:
        return (
            f"{self.calls} model calls ({self.cache_hits} from cache), {self.input_tokens} tokens in, "
            f"{self.output_tokens} out, cost ${self.cost_usd:.4f}, {self.seconds:.1f} s"
        )

    def as_dict(self) -> dict[str, Any]:
        found = asdict(self)
        if self.answer is not None:
            found["answer"]["citations"] = [
                {"title": c.title, "cite": c.cite, "pages": list(c.pages), "label": c.label}
                for c in self.answer.citations
            ]
            found["answer"]["passages"] = [asdict(passage) for passage in self.answer.passages]
        return found


def ask_flows() -> dict[str, AskFlow]:
    """Every defs folder's ``ask`` flow (``ASK`` in its ``ask.py``), by method name, the default first."""
    from insight_assets.defs.folders import domain_modules

    flows = sorted((module.ASK for module in domain_modules("ask")), key=lambda flow: not flow.default)
    return {flow.method: flow for flow in flows}


# A flow's answer function: the question and a model client in, the method's answer out.
AnswerFunction = Callable[[Asked, Any], MethodAnswer]


def ask(method: str, description: str, flow: AnswerFunction, asked: Asked, open_client) -> Answered:
    """Run one method's flow with a client of its own (``open_client()``), timed and counted. Its
    failure, whatever it is, becomes the answer's ``error``: one method failing does not stop the
    others, and nobody reads a traceback."""
    from insight_assets.core.llm import LLMError
    from insight_assets.core.retrieval.index import IndexMissing
    from insight_assets.core.runtime.stage import NothingToDo

    started = time.perf_counter()
    answer, error, may_answer_later = None, None, False
    with open_client() as client:
        try:
            answer = flow(asked, client)
            if not answer.text.strip():
                answer, error = None, "the method returned an empty answer"
            else:
                answer = with_cites(answer, asked)
        except (AskFailed, NothingToDo) as failure:
            error = str(failure)
        except IndexMissing as missing:
            error = f"{missing} (insight-assets build --collection {asked.collection} builds it)"
        except LLMError as failure:
            error, may_answer_later = f"the model call failed: {failure}", True
        except Exception as failure:  # noqa: BLE001 - one method's bug is its failure, not the others'
            error, may_answer_later = f"{type(failure).__name__}: {failure}", True
        summary = client.summary()
        model = client.provider_label
    return Answered(
        method=method,
        description=description,
        answer=answer,
        error=error,
        model=model,
        calls=summary.calls,
        cache_hits=summary.cache_hits,
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        cost_usd=summary.cost_usd,
        seconds=round(time.perf_counter() - started, 2),
        may_answer_later=may_answer_later,
    )


def with_cites(answer: MethodAnswer, asked: Asked) -> MethodAnswer:
    """``answer`` with each cited paper's citekey or DOI, for the papers a library gave one."""
    from insight_assets.core.papers import citation_label, stored_papers

    by_title = {
        paper["title"]: label
        for paper in stored_papers(asked.storage.warehouse, asked.collection).values()
        if (label := citation_label(paper))
    }
    if not by_title:
        return answer
    cited = tuple(
        citation if citation.cite else replace(citation, cite=by_title.get(citation.title, ""))
        for citation in answer.citations
    )
    return replace(answer, citations=cited)


def ask_each(asked: Asked, flows: Iterable[Any], llm: Any, view: Any = None) -> list[Answered]:
    """Put ``asked`` to each flow (``AskFlow``), each with a client of its own from ``llm``
    (an ``LLMResource``): side by side with a hosted model (their calls wait on a server), else in
    turn; the answers in the flows' order. ``view`` (the command line's ``app.progress.StepsView``,
    the MCP server's ``CallProgress``), if given, hears of each method starting, its model calls
    (``CallProgress`` of the client) and its outcome."""
    from insight_assets.core.llm.batches import side_by_side

    def answer(flow: AskFlow) -> Answered:
        def open_client():
            return llm.client(
                asset="ask",
                partition=asked.collection,
                run_id=None,
                progress=None if view is None else (lambda calls: view.progressed(flow.method, calls)),
            )

        if view is not None:
            view.started(flow.method)
        found = ask(flow.method, flow.help, flow.answer, asked, open_client)
        if view is not None:
            view.finished(flow.method, "answered" if found.ok else "could not answer")
        return found

    return side_by_side([functools.partial(answer, flow) for flow in flows], at_once=llm.settings().is_hosted)


def as_text(asked: Asked, answers: list[Answered]) -> str:
    """The question, then each method's answer (under its own heading when there are several),
    with its citations as the method shows them, and its costs; a failed method says why."""
    several = len(answers) > 1
    parts = [f"Question: {asked.question}"]
    for found in answers:
        section = []
        if several:
            section.append(f"=== {found.method}: {found.description} ===")
        if found.answer is None:
            section.append(f"{found.method} could not answer: {found.error}")
        else:
            section.append(found.answer.text)
            if found.answer.details:
                section.append(found.answer.details)
        section.append(found.costs())
        parts.append("\n\n".join(section))
    return "\n\n".join(parts)


def as_json(asked: Asked, answers: list[Answered]) -> dict[str, Any]:
    return {
        "collection": asked.collection,
        "question": asked.question,
        "methods": [found.as_dict() for found in answers],
    }
