"""The page's question put to every method side by side: the asset and the dry run ask alike."""

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field

from insight_assets.core.curation.records import QAPair
from insight_assets.core.curation.stages import kept_pairs_of
from insight_assets.core.curation.tables import first_question
from insight_assets.core.storage import kept_builds
from insight_assets.core.storage.stores import Warehouse
from insight_assets.defs import asking, reuse
from insight_assets.defs.domain import method_pages

if TYPE_CHECKING:
    from insight_assets.defs.dry_run import DryRun

# The page's side-by-side answers, kept by what they read (``side_by_side_key``) as a step's builds are.
SIDE_BY_SIDE = "collection_report:side_by_side"


class CollectionReportConfig(dg.Config):
    """The page asks each method with that method's own task defaults and the `llm` resource."""

    question: str | None = Field(
        default=None,
        description="The question every method answers on the page; unset: the collection's first "
        "question of its own (questions.jsonl), else its first generated one.",
    )
    answer_question: bool = Field(
        default=True, description="Ask every method the question (off: the page shows the reports only)."
    )


def page_question(
    config: CollectionReportConfig, warehouse: Warehouse, collection: str, kept: Sequence[QAPair] = ()
) -> tuple[str | None, str]:
    """The question the page asks, or ``None`` and why none: the config's, else the collection's
    first of its own or first kept generated one (``kept``: the kept pairs a dry run planned, when
    the warehouse holds none yet)."""
    if not config.answer_question:
        return None, "No question was asked: `answer_question` is off in this run's config."
    question = (
        config.question or first_question(warehouse, collection) or (kept[0].question if kept else None)
    )
    if not question:
        return None, (
            "No question to ask: the collection has no answered question "
            "(add one to its questions.jsonl, or set `question` in this asset's config)."
        )
    return question, ""


def side_by_side_key(inputs: reuse.StepInputs, question: str) -> str:
    """What the page's answers read: the question, the models and the data version of every step
    the methods answer from (``inputs``: the page's step's; not the method reports' or the digest's,
    which they do not read). A paper added and removed again gets the answers asked before it came
    back."""
    return reuse.digest([question, inputs.code_version, inputs.models, _read(inputs)])


def _read(inputs: reuse.StepInputs) -> dict[str, str | None]:
    """The data versions the page's answers read, of those its step reads."""
    not_read = {page.report for page in method_pages()} | {"collection_changes"}
    return {name: version for name, version in inputs.upstream.items() if name not in not_read}


def answer_every_method(
    asked: asking.Asked,
    open_client: Callable,
    starting: Callable[[str], None] = lambda method: None,
    *,
    at_once: bool = False,
) -> list[asking.Answered]:
    """Every method on the page answers ``asked``, each with a client from ``open_client()``, in
    the page's order; ``at_once``: the methods side by side (their calls wait on a server)."""
    from insight_assets.core.llm.batches import side_by_side

    flows = asking.ask_flows()
    chosen = [flows[page.method] for page in method_pages() if page.method in flows]

    def answer(flow: asking.AskFlow) -> asking.Answered:
        starting(flow.method)
        return asking.ask(flow.method, flow.help, flow.answer, asked, open_client)

    return side_by_side([functools.partial(answer, flow) for flow in chosen], at_once=at_once)


def price_page(values: Mapping[str, Any], run: "DryRun") -> None:
    """The dry run's step: the page's question put to every method on the estimate-only client
    (a method whose inputs are not built yet answers nothing and prices nothing); ``values``: the
    page's config."""
    config = CollectionReportConfig(**values)
    kept = kept_pairs_of(run.scope)
    question, _ = page_question(config, run.scope.warehouse, run.collection, kept)
    if question is not None and not _answers_kept(run, question):
        asked = asking.Asked(run.collection, question, run.storage, run.embedder)
        answer_every_method(asked, lambda: run.client)


def _answers_kept(run: "DryRun", question: str) -> bool:
    """Whether the build will put back answers it kept (what they read is foreseen unchanged)."""
    inputs = run.foresight.inputs.get("collection_report")
    if inputs is None or run.foresight.unknown.intersection(_read(inputs)):
        return False
    key = side_by_side_key(inputs, question)
    return (
        kept_builds.kept(run.storage.warehouse, run.collection, SIDE_BY_SIDE, key, contents=False) is not None
    )
