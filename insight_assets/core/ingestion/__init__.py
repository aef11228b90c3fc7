"""Ingestion: from a collection's PDF files to the papers' parsed text and chunks.

``pdf/`` reads a PDF's text layer and layout; ``text_quality`` decides whether that text is worth
reading; ``sections`` and ``boilerplate`` find a paper's sections and what no method should quote;
``chunking`` cuts the body into token-bounded chunks; ``documents`` holds the records that flow
between them; ``ingest`` runs scan, parse and chunk for one collection, reusing what is unchanged,
and ``ingest_store`` reads back what it stored; ``parser_version`` names what a stored parse was
made with without loading the parser.
"""
