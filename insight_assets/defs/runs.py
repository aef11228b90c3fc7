"""Materialize a collection's assets in this process: for tests, benchmarks and scripts."""

import dagster as dg
from dagster._core.storage.defs_state.base import set_defs_state_storage

from insight_assets.defs.catalog import ALL_ASSETS, INGESTION_ASSETS
from insight_assets.defs.partitions import collection_partitions
from insight_assets.defs.resources import EmbedderResource, LLMResource, StorageResource

__all__ = [
    "ALL_ASSETS",
    "INGESTION_ASSETS",
    "SMOKE_SETTINGS",
    "materialize_collection",
    "register_collections",
]

_SHORT = {"max_tokens": 200}
# Op config for a smoke run of every asset with a slow model (the local one on a CPU): two themes,
# one question per paper, trees of depth 1, two backgrounds, one benchmark item of each kind, short
# contexts, answers of at most 200 tokens (400 for a compressed paper or a curated answer), and no
# ConTReGen baselines (XSum's stay: its own method writes nothing when every answer abstains). Used
# with ``SMOKE_CONTEXT_TOKENS`` by the local-model test and `python -m bench local --quick`.
SMOKE_CONTEXT_TOKENS = 2048
SMOKE_SETTINGS = {
    "theme_graph": {"max_clusters": 2},
    "compressed_documents": {"max_input_tokens": 1500, "max_tokens": 400},
    "generated_questions": {
        "num_combinations": 1,
        "candidates_per_combination": 2,
        "target_count": 1,
        "min_words": 4,
        **_SHORT,
    },
    "generated_answers": {"max_tokens": 400},
    "insights": {"max_questions": 1, "max_insights": 2, **_SHORT},
    "judge_scores": {"repetitions": 1, **_SHORT},
    "xsum_questions": {"questions_per_paper": 1, **_SHORT},
    "xsum_answers": {"candidates": 10, "top_n": 3, **_SHORT},
    "xsum_summaries": {"plain_rag_k": 3, **_SHORT},
    "xsum_scores": _SHORT,
    "contregen_trees": {"max_questions": 1, "max_depth": 1, "max_sub_questions": 2, **_SHORT},
    "contregen_answers": {"baselines": False, "answer_words": 80, **_SHORT},
    "contregen_scores": _SHORT,
    "knowledge_triples": {"max_chunks_per_paper": 2, "max_tokens": 400},
    "insight_rag_benchmark": {"max_buried": 1, "max_multi": 1, "max_matching": 1, **_SHORT},
    "insight_rag_answers": {"max_items": 2, "rag_ks": [1], **_SHORT},
    "paper_summaries": _SHORT,
    "scipip_retrievals": _SHORT,
    "scipip_ideas": {"max_backgrounds": 2, **_SHORT},
    "scipip_scores": _SHORT,
}


def register_collections(instance: dg.DagsterInstance, collections: list[str]) -> None:
    """Add the collections that are not partitions yet."""
    known = set(instance.get_dynamic_partitions(collection_partitions.name))
    new = [name for name in collections if name not in known]
    if new:
        instance.add_dynamic_partitions(collection_partitions.name, new)


def materialize_collection(
    instance: dg.DagsterInstance,
    storage: StorageResource,
    embedder: EmbedderResource,
    collection: str,
    *,
    llm: LLMResource | None = None,
    assets: list | None = None,
    run_config: dict | None = None,
    raise_on_error: bool = True,
) -> dg.ExecuteInProcessResult:
    """Run a collection's assets (by default the ingestion assets; with ``llm``, every asset),
    registering the collection as a partition if new."""
    register_collections(instance, [collection])
    resources = {"storage": storage, "embedder": embedder}
    if llm is not None:
        resources["llm"] = llm
    # Loading the definitions reads the "current" state storage from a process-wide context variable
    # that entering an instance sets and nothing resets: a garbage-collected earlier instance can
    # leave it pointing at a dead storage (an intermittent "undefined DagsterInstance weakref" in
    # test runs). Load with this instance's own. (Dagster offers no public way to set it.)
    with set_defs_state_storage(instance.defs_state_storage):
        return dg.materialize(
            assets or (ALL_ASSETS if llm is not None else INGESTION_ASSETS),
            partition_key=collection,
            instance=instance,
            resources=resources,
            run_config=run_config,
            raise_on_error=raise_on_error,
        )
