"""Every method's summary of every target: XSum's editor from the targets' answers, then, with the
baselines, SurveySum's Pipeline 1 and Pipeline 2 (the paper's Table 1), plain RAG and abstracts
only. A build and its dry run both write them here, so that the dry run prices what the build does."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...llm.spending import Spent, spending
from ...retrieval.rerank import LateInteraction
from .load import first_chunks
from .runs import (
    abstracts_summaries,
    pipeline_1_summaries,
    pipeline_2_summaries,
    plain_rag_summaries,
    write_summaries,
)
from .schemas import (
    ABSTRACTS_ONLY,
    PIPELINE_1,
    PIPELINE_2,
    PLAIN_RAG,
    TOP_N,
    XSUM,
    PaperInput,
    SummaryRecord,
    SummaryTarget,
    XSumAnswerRecord,
)

if TYPE_CHECKING:
    from ...llm import LLMClient
    from ...retrieval import Retriever
    from ...retrieval.citing import Source
    from .settings import SummariesSettings


@dataclass(frozen=True)
class WrittenSummaries:
    """The summaries, and what each method's writing cost (calls, tokens, seconds)."""

    records: list[SummaryRecord]
    costs: dict[str, Spent] = field(default_factory=dict)


def summarize_targets(
    client: LLMClient,
    targets: Sequence[SummaryTarget],
    answers: Sequence[XSumAnswerRecord],
    questions: Mapping[str, str],
    sources: Mapping[str, Source],
    *,
    baselines: SummariesSettings | None = None,
    retriever: Retriever | None = None,
    papers: Mapping[str, PaperInput] | None = None,
) -> WrittenSummaries:
    """XSum's summary of each target (``questions``: question id -> question), and with
    ``baselines`` the four baselines' (they need the passage ``retriever`` and the ``papers``)."""
    costs: dict[str, Spent] = {}

    def run(method: str, write: Callable[[], list[SummaryRecord]]) -> Callable[[], list[SummaryRecord]]:
        def charged() -> list[SummaryRecord]:
            with spending() as costs[method]:
                return write()

        return charged

    records = run(XSUM, lambda: write_summaries(client, targets, answers, questions, sources))()
    if baselines is None:
        return WrittenSummaries(records, costs)
    if retriever is None or papers is None:
        raise ValueError("the baselines need the passage retriever and the papers")
    ranker = LateInteraction.for_collection(retriever.store.uri, retriever.collection)
    # Pipeline 2 keeps as many chunks as XSum's editor was handed for the target.
    handed = {r.target_id: len(r.given) or TOP_N for r in records if r.method == XSUM}
    # The baselines do not read each other: they are written side by side, each charged its own calls.
    written = client.side_by_side(
        [
            run(
                PIPELINE_1,
                lambda: pipeline_1_summaries(client, targets, baselines.pipeline_1_top_n, sources, ranker),
            ),
            run(
                PIPELINE_2,
                lambda: pipeline_2_summaries(
                    client, retriever, targets, baselines.pipeline_2_candidates, handed, sources
                ),
            ),
            run(
                PLAIN_RAG,
                lambda: plain_rag_summaries(client, retriever, targets, baselines.plain_rag_k, sources),
            ),
            run(
                ABSTRACTS_ONLY,
                lambda: abstracts_summaries(client, targets, papers, first_chunks(sources), sources),
            ),
        ]
    )
    return WrittenSummaries([*records, *(record for method in written for record in method)], costs)
