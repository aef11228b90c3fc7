"""Insight-RAG's model-calling stages, one module per asset (see ``core/runtime/stage.py``): each
holds what its stage hands on, its result, its work, what it keeps and its declaration; the settings
models are in ``../settings.py``. The insight retriever's training (``insight_retriever``) calls no
priced model and is not a stage. ``for_question`` answers one question (``ask``).

A dry run prices only what calls the configured model: the ``parametric`` mode (the adapter the
build trains) and the base model run here and cost nothing, and loading them would mean loading
(or training) a model, so a dry run leaves them out.
"""

from .accuracy import ACCURACY, ACCURACY_STAGE
from .answers import ANSWERS, ANSWERS_STAGE, RETRIEVER
from .benchmark import BENCHMARK, BENCHMARK_STAGE
from .for_question import answer_for
from .triples import TRIPLES, TRIPLES_STAGE

STAGES = (TRIPLES_STAGE, BENCHMARK_STAGE, ANSWERS_STAGE, ACCURACY_STAGE)

__all__ = [
    "ACCURACY",
    "ACCURACY_STAGE",
    "ANSWERS",
    "ANSWERS_STAGE",
    "BENCHMARK",
    "BENCHMARK_STAGE",
    "RETRIEVER",
    "STAGES",
    "TRIPLES",
    "TRIPLES_STAGE",
    "answer_for",
]
