"""The reader's own evidence: highlights, annotation comments and notes from a library (Zotero),
kept apart from the papers' text. Each note is embedded into a vector table of its own (LanceDB,
kind ``reader_notes``), never into the chunks, and every hit says it is "your notes" with its paper
and page, so that it cannot pass for something a paper says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.ingestion.documents import sha256_text
from insight_assets.core.papers import YOUR_NOTES
from insight_assets.core.retrieval.search import Hit
from insight_assets.core.startup.lazy import np, pa
from insight_assets.core.storage.stores import VectorStore, Warehouse

VECTOR_KIND = "reader_notes"


def note_text(row: dict) -> str:
    """What a note says, as searched: the highlighted text and the reader's comment on it."""
    return "\n".join(part for part in (row["text"], row["comment"]) if part)


def stored_notes(warehouse: Warehouse, collection: str) -> list[dict]:
    """The collection's reader notes with the paper each is on (title, citekey or DOI)."""
    return warehouse.rows(
        """SELECT n.note_id, n.doc_id, n.file, n.item_key, n.kind, n.text, n.comment, n.page_label, n.page,
                  coalesce(nullif(d.title, ''), n.file) AS title,
                  coalesce('@' || p.citekey, 'doi:' || p.doi, '') AS cite
           FROM reader_notes n
           LEFT JOIN parsed_documents d ON d.collection = n.collection AND d.doc_id = n.doc_id
           LEFT JOIN papers p ON p.collection = n.collection AND p.doc_id = n.doc_id
           WHERE n.collection = ? ORDER BY n.file, n.page, n.note_id""",
        [collection],
    )


def note_vectors(
    collection: str, notes: Sequence[dict], embedder, existing: pa.Table | None
) -> tuple[pa.Table, int]:
    """Every note's vector (a note whose text was embedded before by the same model is reused), and
    how many texts the model read."""
    texts = [note_text(note) for note in notes]
    shas = [sha256_text(text) for text in texts]
    known = {}
    if existing is not None and existing.num_rows:
        for sha, variant, vector in zip(
            existing.column("text_sha").to_pylist(),
            existing.column("variant").to_pylist(),
            existing.column("vector").to_numpy(zero_copy_only=False),
            strict=True,
        ):
            if variant == embedder.variant:
                known[sha] = vector
    missing = sorted({sha: text for sha, text in zip(shas, texts, strict=True) if sha not in known}.items())
    if missing:
        made = embedder.embed([text for _, text in missing])
        known.update({sha: vector for (sha, _), vector in zip(missing, made, strict=True)})
    matrix = (
        np.stack([np.asarray(known[sha], dtype=np.float32) for sha in shas])
        if shas
        else np.zeros((0, embedder.dimension), np.float32)
    )
    count = len(notes)
    table = pa.table(
        {
            "collection": pa.array([collection] * count, pa.string()),
            "chunk_id": pa.array([note["note_id"] for note in notes], pa.string()),
            "doc_id": pa.array([note["doc_id"] for note in notes], pa.string()),
            "text_sha": pa.array(shas, pa.string()),
            "variant": pa.array([embedder.variant] * count, pa.string()),
            "text": pa.array(texts, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(matrix.reshape(-1), pa.float32()), max(matrix.shape[1], 1)
            ),
        }
    )
    return table, len(missing)


@dataclass(frozen=True)
class NoteHit:
    """A reader note that matches a query: always labelled as the reader's, with its paper and page."""

    note_id: str
    doc_id: str
    title: str
    cite: str
    kind: str
    text: str
    comment: str
    page: int | None
    page_label: str
    score: float

    @property
    def label(self) -> str:
        """'your notes: <kind> on <title>, <cite>, p. <label>'."""
        where = f"p. {self.page_label or self.page}" if (self.page_label or self.page) else "no page"
        cite = f", {self.cite}" if self.cite else ""
        return f"{YOUR_NOTES}: {self.kind} on {self.title}{cite}, {where}"


def embedded_notes(
    warehouse: Warehouse, vectors_uri: str, collection: str, variant: str
) -> tuple[list[dict], np.ndarray]:
    """The collection's notes (``stored_notes``) that have a vector of the embedder ``variant``, and
    those vectors as unit rows, in the same order."""
    notes = {note["note_id"]: note for note in stored_notes(warehouse, collection)}
    table = VectorStore(vectors_uri, kind=VECTOR_KIND).read(collection, ["chunk_id", "variant", "vector"])
    rows = [] if table is None else table.to_pylist()
    kept = [row for row in rows if row["chunk_id"] in notes and row["variant"] == variant]
    if not kept:
        return [], np.zeros((0, 0), np.float32)
    vectors = normalize_rows(np.stack([np.asarray(row["vector"], np.float32) for row in kept]))
    return [notes[row["chunk_id"]] for row in kept], vectors


def search_notes(
    warehouse: Warehouse, vectors_uri: str, embedder, collection: str, query: str, k: int = 5
) -> list[NoteHit]:
    """The ``k`` reader notes closest to ``query`` (cosine of the embedder's vectors); empty when
    the collection has none."""
    notes, vectors = embedded_notes(warehouse, vectors_uri, collection, embedder.variant)
    if not notes:
        return []
    scores = vectors @ normalize_rows(embedder.embed([query])[0])
    best = np.argsort(-scores)[:k]
    return [
        NoteHit(
            note_id=notes[row]["note_id"],
            doc_id=notes[row]["doc_id"],
            title=notes[row]["title"],
            cite=notes[row]["cite"],
            kind=notes[row]["kind"],
            text=notes[row]["text"],
            comment=notes[row]["comment"],
            page=notes[row]["page"],
            page_label=notes[row]["page_label"],
            score=float(scores[row]),
        )
        for row in best
    ]


# How many of the reader's notes a search adds beside the papers' passages, when a method is told to
# use them.
NOTES_PER_SEARCH = 2


def passage_id(note_id: str) -> str:
    """A note's id among passages: hex like a chunk's, so that a text cites it as it cites a chunk."""
    return sha256_text(f"reader-note:{note_id}")[:32]


class WithReaderNotes:
    """A retriever that also returns the reader's notes closest to each query (at most
    ``per_search``), after the papers' passages and labelled as the reader's: their title says
    "your notes: <kind> on <paper>", so a text that cites one says whose words they are. Only notes
    on a page (highlights, annotation comments) are used, so that each is cited by its page. It
    offers what ConTReGen's tree asks of a retriever: ``embed``, ``search`` and ``similarities``."""

    def __init__(
        self,
        retriever,
        warehouse: Warehouse,
        vectors_uri: str,
        collection: str,
        per_search: int = NOTES_PER_SEARCH,
    ):
        self.retriever = retriever
        self.embed = retriever.embed
        self.per_search = per_search
        notes, vectors = embedded_notes(warehouse, vectors_uri, collection, retriever.variant)
        # Notes on a page only (highlights, annotation comments): a method cites what it uses by page.
        on_a_page = [row for row, note in enumerate(notes) if note["page"]]
        self.notes = [notes[row] for row in on_a_page]
        self.vectors = vectors[on_a_page] if on_a_page else None
        self.ids = [passage_id(note["note_id"]) for note in self.notes]
        self._row = {note_id: row for row, note_id in enumerate(self.ids)}

    def search(self, query: str, k: int = 20, mode: str = "hybrid", **options) -> list[Hit]:
        hits = self.retriever.search(query, k, mode, **options)
        if self.vectors is None or k <= 0:
            return hits
        vector = options.get("query_vector")
        if vector is None:
            vector = self.embed([query])[0]
        scores = self.vectors @ normalize_rows(vector)
        best = np.argsort(-scores)[: self.per_search]
        return hits + [self._hit(int(row), float(scores[row]), mode) for row in best]

    def similarities(self, query_vector: np.ndarray, chunk_ids: Sequence[str]) -> list[float]:
        unit = normalize_rows(query_vector)
        return [
            float(self.vectors[self._row[chunk_id]] @ unit)
            if chunk_id in self._row
            else self.retriever.similarities(query_vector, [chunk_id])[0]
            for chunk_id in chunk_ids
        ]

    def _hit(self, row: int, score: float, mode: str) -> Hit:
        note = self.notes[row]
        page = note["page"]
        return Hit(
            chunk_id=self.ids[row],
            doc_id=note["doc_id"],
            title=f"{YOUR_NOTES}: {note['kind']} on {note['title']}",
            page_start=page,
            page_end=page,
            text=note_text(note),
            score=score,
            mode=mode,
            found_by=(YOUR_NOTES,),
            cite=note["cite"],
        )
