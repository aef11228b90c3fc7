"""The published methods, one package each (``insightgen/`` so far; XSum, ConTReGen, Insight-RAG and
SciPIP to come). A method package holds its schemas, its tasks with their offline implementations,
how it selects context, and one entry function that the method's assets, the dry-run estimate and
``insight-assets ask`` call. Methods build on the shared layer (``core/index.py``, ``core/curation``,
``core/text.py``, ``core/keyphrases.py``), which never imports a method. See ``README.md`` here.
"""
