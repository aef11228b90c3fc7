"""insight_assets: research PDFs turned into grounded insights, summaries and ideas, as Dagster assets.

Importing the package quiets libraries' routine chatter for every entry point (the CLI, ``dagster
dev``, scripts, tests), each setting left to the user when already set:

- LanceDB's Rust logger warns "No existing dataset at ... it will be created" whenever a table is
  made, which is every first build of a collection;
- Hugging Face draws a progress bar each time the bundled embedder's weights load;
- Dagster marks single-run backfill policies (every collection asset has one) and observable source
  assets (the collections' folders) as beta, once per use.
"""

import os
import warnings

os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
warnings.filterwarnings(
    "ignore", message=r"Parameter `backfill_policy` of function `asset` is currently in beta"
)
warnings.filterwarnings("ignore", message=r"Function `observable_source_asset` is currently in beta")
