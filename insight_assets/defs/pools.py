"""The Dagster pools of the steps that load a model, and what they become on a Dask cluster.

``embedding`` holds the steps that load the embedding model (or call a hosted embedder), ``llm`` the
model-calling steps (which load the local model when it is the provider). The instance lets one step
of each pool run at a time by default (see ``instance.py``; raise it with ``dagster instance
concurrency set llm 4``), so a backfill over many collections neither loads a model per run nor opens
hundreds of provider connections at once.

Dagster claims a pool's slots in the executors of one machine; dagster-dask's executor submits every
step to the cluster without claiming any. So a step of a pool also asks Dask for one unit of the
worker resource of the same name (dagster-dask's resource-requirements tag), and each worker offers
what it can hold (``dask worker ADDRESS --nthreads 1 --resources "embedding=1 llm=1"``): on a
cluster, a pool's limit is per worker.
"""

import json

EMBEDDING_POOL = "embedding"
LLM_POOL = "llm"
POOLS = (EMBEDDING_POOL, LLM_POOL)

# The op tag dagster-dask reads a step's Dask resources from (its DASK_RESOURCE_REQUIREMENTS_KEY;
# not imported, so that loading the definitions does not load Dask).
DASK_RESOURCES_TAG = "dagster-dask/resource_requirements"


def pooled(pool: str) -> dict:
    """An asset's settings to run in ``pool``: the Dagster pool, and one unit of the Dask worker
    resource of the same name."""
    return {"pool": pool, "op_tags": {DASK_RESOURCES_TAG: json.dumps({pool: 1})}}
