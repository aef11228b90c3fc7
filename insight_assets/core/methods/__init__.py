"""The published methods, one package each: InsightGen (``insightgen/``), XSum (``xsum/``), ConTReGen
(``contregen/``), Insight-RAG (``insight_rag/``) and SciPIP (``scipip/``). A method package holds its
schemas, its tasks with their offline implementations, its stage settings (``settings.py``) and its
stages (``stages/``, one module each): the work the method's assets, the dry run and ``insight-assets ask`` run.
Methods build on the shared layer (``core/retrieval/``, ``core/curation/``, ``core/text.py``,
``core/keyphrases.py``), which never imports a method. See ``README.md`` here.
"""
