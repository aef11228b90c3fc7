"""The reader_note_embeddings asset: the reader's highlights and notes from a library, embedded
into a vector table of their own ("your notes"), searchable beside the papers' chunks."""

import dagster as dg

from insight_assets.core.embedding.models import EmbeddingError
from insight_assets.core.ingestion import ingest
from insight_assets.core.reader_notes import VECTOR_KIND, note_vectors, stored_notes
from insight_assets.core.runtime.stage_output import items_check
from insight_assets.core.storage.stores import VectorStore
from insight_assets.defs.ingestion.assets import parsed_documents
from insight_assets.defs.ingestion.source_files import source_documents
from insight_assets.defs.materialization import CollectionReport, materialize_each
from insight_assets.defs.metadata import check_result, markdown_table, nothing_to_do
from insight_assets.defs.partitions import asset_settings, collection_check
from insight_assets.defs.pools import EMBEDDING_POOL, pooled
from insight_assets.defs.resources import EmbedderResource, StorageResource

_NO_NOTES = (
    "The collection has no reader notes: only a Zotero library's highlights, annotation comments and "
    "notes are read (a folder of PDFs, a BibTeX or CSL-JSON file has none)."
)


@dg.asset(
    kinds={"lancedb"},
    code_version="1",
    **pooled(EMBEDDING_POOL),
    check_specs=[collection_check("reader_notes_found", "reader_note_embeddings")],
    **asset_settings("ingestion", deps=[source_documents, parsed_documents]),
)
def reader_note_embeddings(
    context: dg.AssetExecutionContext, storage: StorageResource, embedder: EmbedderResource
) -> dg.MaterializeResult:
    """A vector for each of the reader's highlights, annotation comments and notes (`reader_notes`,
    from a Zotero library), in a LanceDB table of their own: `insight-assets search --notes` and
    the MCP server's search find them, labelled "your notes" with their paper and page, never
    mixed into the papers' text. A folder collection, or a library without notes, has none, and
    the step says so."""
    return materialize_each(
        context,
        storage,
        lambda collection: _reader_note_embeddings(storage, embedder, collection),
        outputs_present=lambda collection: _notes_in_place(storage, collection),
    )


def _notes_in_place(storage: StorageResource, collection: str) -> bool:
    """The step's output as a rerun finds it: the notes' table, or no notes and so nothing to keep."""
    vectors = VectorStore(storage.vectors_uri, kind=VECTOR_KIND)
    return vectors.exists(collection) or not stored_notes(storage.warehouse, collection)


def _reader_note_embeddings(
    storage: StorageResource, embedder: EmbedderResource, collection: str
) -> CollectionReport:
    notes = stored_notes(storage.warehouse, collection)
    vectors = VectorStore(storage.vectors_uri, kind=VECTOR_KIND)
    model = embedder.get_embedder()
    try:
        table, embedded = note_vectors(collection, notes, model, vectors.read(collection))
    except EmbeddingError as error:
        raise nothing_to_do(collection, f"no reader note could be embedded: {error}") from error
    # No notes and no table of earlier ones: nothing to write, and LanceDB (most of a second to load)
    # stays unloaded until the chunks' vectors need it.
    if notes or vectors.exists(collection):
        vectors.replace(collection, table)
    return CollectionReport(
        metadata={
            "dagster/row_count": table.num_rows,
            "notes_embedded": embedded,
            "notes_reused": table.num_rows - embedded,
            "variant": model.variant,
            "table": vectors.table_name(collection),
            "preview": dg.MetadataValue.md(
                markdown_table(
                    [{**note, "text": note["text"][:120]} for note in notes[:20]],
                    ["title", "kind", "page_label", "text", "comment"],
                    empty="No reader notes.",
                )
            ),
        },
        checks=[check_result(items_check("reader_notes_found", table.num_rows, _NO_NOTES))],
        data_version=ingest.fingerprint(
            [model.variant] + [f"{note['note_id']}:{note['text']}:{note['comment']}" for note in notes]
        ),
    )
