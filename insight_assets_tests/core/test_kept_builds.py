"""A step's earlier builds kept by their inputs (core/storage/kept_builds.py), in a real warehouse."""

import dataclasses

import pyarrow as pa

from insight_assets.core.storage import kept_builds
from insight_assets.core.storage.kept_builds import KeptBuild
from insight_assets.core.storage.stores import VectorStore, Warehouse


def rows(*values: float) -> pa.Table:
    return pa.table({"collection": ["demo"] * len(values), "score": list(values)})


def build(run: str, *values: float) -> KeptBuild:
    return KeptBuild(
        f'{{"run": "{run}"}}', f"report of {run}", f"version-{run}", run, {"scores": rows(*values)}
    )


def test_a_kept_build_comes_back_exactly_by_its_inputs(tmp_path):
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    kept_builds.keep(warehouse, "demo", "step", build("run-1", 0.1, 2 / 3), "inputs-1")
    kept_builds.keep(warehouse, "demo", "step", build("run-2", 5.0), "inputs-2")
    back = kept_builds.kept(warehouse, "demo", "step", "inputs-1")
    assert back is not None and (back.report, back.data_version, back.run_id) == (
        "report of run-1",
        "version-run-1",
        "run-1",
    )
    assert back.tables["scores"].equals(rows(0.1, 2 / 3))
    assert kept_builds.kept(warehouse, "demo", "other step", "inputs-1") is None
    assert kept_builds.kept(warehouse, "other", "step", "inputs-1") is None


def test_only_the_last_builds_are_kept_and_the_same_inputs_replace_their_build(tmp_path):
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    for n in range(kept_builds.KEEP_BUILDS + 2):
        kept_builds.keep(warehouse, "demo", "step", build(f"run-{n}", n), f"inputs-{n}")
    kept = {row["inputs_key"] for row in warehouse.rows("SELECT inputs_key FROM kept_builds")}
    assert kept == {f"inputs-{n}" for n in range(2, kept_builds.KEEP_BUILDS + 2)}
    assert {row["inputs_key"] for row in warehouse.rows("SELECT inputs_key FROM kept_build_tables")} == kept
    kept_builds.keep(warehouse, "demo", "step", build("run-again", 9.0), "inputs-3")
    again = kept_builds.kept(warehouse, "demo", "step", "inputs-3")
    assert again.run_id == "run-again" and again.tables["scores"].equals(rows(9.0))
    assert len(warehouse.rows("SELECT 1 FROM kept_builds WHERE inputs_key = 'inputs-3'")) == 1


def test_the_content_version_follows_the_rows_not_their_chunking():
    whole = rows(1.0, 2.0)
    chunked = pa.concat_tables([rows(1.0), rows(2.0)])
    assert chunked.column("score").num_chunks == 2
    assert kept_builds.content_version({"scores": whole}) == kept_builds.content_version({"scores": chunked})
    assert kept_builds.content_version({"scores": whole}) != kept_builds.content_version(
        {"scores": rows(1.0, 2.5)}
    )
    assert kept_builds.content_version({"scores": whole}) != kept_builds.content_version({"other": whole})


def test_a_kept_vector_table_comes_back_with_its_full_text_index(tmp_path):
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    units = VectorStore(str(tmp_path / "lancedb"), kind="units")
    vectors = pa.table(
        {
            "chunk_id": ["a", "b"],
            "text": ["graph neural networks for citation", "a survey of table extraction"],
            "vector": pa.array([[1.0, 0.0], [0.0, 1.0]], pa.list_(pa.float32(), 2)),
        }
    )
    units.replace("demo", vectors)
    units.build_text_index("demo")
    kept = KeptBuild("{}", "report", "v1", "run-1", {"scores": rows(1.0)})
    kept_builds.keep(
        warehouse,
        "demo",
        "step",
        dataclasses.replace(kept, vectors={"units": kept_builds.vectors_to_keep(units, "demo")}),
        "inputs-1",
    )
    # A later build wrote other vectors, without the index.
    units.replace("demo", vectors.slice(1))
    assert not units.has_text_index("demo")

    back = kept_builds.kept(warehouse, "demo", "step", "inputs-1")
    assert set(back.tables) == {"scores"} and set(back.vectors) == {"units"}
    kept_builds.put_back_vectors(units, "demo", back.vectors["units"])
    assert units.read("demo").select(["chunk_id", "text", "vector"]).equals(vectors)
    assert units.has_text_index("demo")
    assert units.text_search("demo", "citation graphs", "TRUE", 2)[0][0] == "a"
