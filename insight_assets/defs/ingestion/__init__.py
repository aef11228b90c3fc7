"""Ingestion: source PDFs, parsed documents, chunks and their vectors (shared by every method)."""
