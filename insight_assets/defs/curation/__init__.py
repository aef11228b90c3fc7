"""Curation (SCOpE-QA): compressed papers, generated questions and their answers."""
