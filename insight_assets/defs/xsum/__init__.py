"""XSum: cited multi-paper summaries, their targets, questions, answers and scores."""
