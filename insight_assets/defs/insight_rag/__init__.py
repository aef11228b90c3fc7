"""Insight-RAG: knowledge triples, the insight benchmark, answers and scores."""
