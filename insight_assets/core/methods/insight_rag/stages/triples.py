"""Insight-RAG's triples stage: the (subject, relation, object) triples of each paper's first chunks,
sentence by sentence."""

from __future__ import annotations

from dataclasses import dataclass

from insight_assets.core.embedding.models import kept_embedding, one_torch_thread
from insight_assets.core.methods.insight_rag import retriever, store
from insight_assets.core.methods.insight_rag.collection import ChunkTriples, first_chunks, read_triples
from insight_assets.core.methods.insight_rag.settings import PROFILE, TriplesSettings
from insight_assets.core.methods.insight_rag.tasks import INSIGHT_RAG_TRIPLES, TRIPLE_TASKS
from insight_assets.core.methods.insight_rag.triples import EXTRACTOR
from insight_assets.core.methods.insight_rag.units import Units, planned_units
from insight_assets.core.runtime.stage import Check, CollectionScope, Handoff, NothingToDo, Stage
from insight_assets.core.runtime.stage_output import StageOutput, items_check, preview

TRIPLES = Handoff("knowledge_triples", store.load_triples)
# A dry run's triples and sentences as the answers search them; a build's are read from LanceDB (``units``).
UNITS = Handoff("insight_rag_units")


@dataclass(frozen=True)
class Read:
    found: ChunkTriples
    units: Units | None = None  # a dry run's: the triples it priced, indexed in memory


def triples(scope: CollectionScope, settings: TriplesSettings) -> Read:
    """The triples of the first ``max_chunks_per_paper`` chunks of each paper, sentence by sentence."""
    rows = first_chunks(store.triple_chunks(scope.warehouse, scope.collection), settings.max_chunks_per_paper)
    if not rows:
        raise NothingToDo(f"no {PROFILE} chunks to read triples from.")
    read = read_triples(scope.client, rows)
    if not read.sentences:
        raise NothingToDo("no whole sentence in its chunks to read triples from.")
    if not scope.estimating:
        return Read(read)
    # The answers search the triples: a dry run indexes the ones it priced, so that it prices the
    # answers on them rather than on what an earlier build left, or nothing.
    stored = store.unit_vectors(scope.vectors_uri)
    return Read(
        read,
        planned_units(
            scope.warehouse, stored, scope.collection, scope.embedder, read.triples, read.sentences
        ),
    )


def units(scope: CollectionScope) -> Units | None:
    """The triples and sentences a dry run priced, indexed; ``None`` (those stored) outside one."""
    return scope.handed.get(UNITS.name) if scope.estimating else None


TRIPLES_FOUND = "triples_found"


def output(scope: CollectionScope, settings: TriplesSettings, done: Read) -> StageOutput:
    """The triples and sentences, embedded into their vector table (only those without a vector yet:
    one new paper, its own). No triple (a small model whose every reply failed its checks, say): the
    sentences are still indexed, for the sentences mode and the matching items; the check says why."""
    read = done.found
    found, sentences = read.triples, read.sentences
    writer = scope.client.writer_label(INSIGHT_RAG_TRIPLES)
    extractor = EXTRACTOR if writer.startswith("offline") else writer
    model = scope.embedder
    units = store.unit_vectors(scope.vectors_uri)
    with one_torch_thread():
        vectors, embedded = retriever.index_vectors(
            units.read(scope.collection), model.variant, found, sentences, kept_embedding(model)
        )
    units.replace(
        scope.collection, retriever.index_table(scope.collection, model.variant, found, sentences, vectors)
    )
    units.build_text_index(scope.collection)
    sample = [
        {"subject": t.subject, "relation": t.relation, "object": t.object, "sentence": t.sentence[:160]}
        for t in found[:: max(1, len(found) // 15)][:15]
    ]
    why_none = (
        f"the extractor found no triple in the {len(sentences)} sentences of {read.chunks_read} chunks it "
        "read (see failures); only the sentences are indexed."
    )
    return StageOutput(
        tables=store.triple_tables(scope.collection, found, sentences, extractor),
        metadata={
            "dagster/row_count": len(found),
            "sentences": len(sentences),
            "chunks_read": read.chunks_read,
            "chunks_failed": len(read.failed),
            "texts_embedded": embedded,
            "texts_reused": len(vectors) - embedded,
            "failures": "; ".join(sorted({item.error or item.status for item in read.failed})[:5]) or "none",
            "extractor": extractor,
            "sample": preview(sample, ["subject", "relation", "object", "sentence"]),
        },
        checks=[items_check(TRIPLES_FOUND, len(found), why_none)],
    )


TRIPLES_STAGE = Stage(
    TRIPLES.name,
    "insight_rag",
    "(subject, relation, object) triples of every ``xsum`` chunk, each with its chunk and sentence, "
    "normalised (case, whitespace, lemmatised relation) and deduplicated per paper; offline by a "
    "rule-based extractor. The triples and the collection's sentences are embedded into LanceDB "
    "(their own table) for the insight retriever.",
    TriplesSettings,
    reads=("chunk_embeddings",),
    run=triples,
    hands=(TRIPLES.of(lambda done: done.found.triples), UNITS.of(lambda done: done.units)),
    output=output,
    tasks=TRIPLE_TASKS,
    checks=(
        Check(
            TRIPLES_FOUND,
            "The extractor found some triple; without one only the sentences are indexed.",
        ),
    ),
    kinds=("duckdb", "lancedb"),
    code_version="2",
    embedder=True,
    vectors=store.unit_vectors,
)
