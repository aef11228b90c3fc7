"""The research field the idea prompts name. SciPIP's prompts say "a researcher in the field of
AI": right for its NLP and CV test sets, wrong for a collection of medical papers. The field is
the configured one, or inferred from the collection: the field whose description is nearest (by
the collection's embedder) to the centroid of the papers' summaries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

# The paper's wording, for a library with nothing to infer from.
DEFAULT_FIELD = "artificial intelligence"

# Broad fields with the words their papers use; a collection gets the nearest.
FIELDS = {
    "natural language processing": "language models, text, words, sentences, parsing, translation, "
    "question answering, embeddings of words and sentences, corpora",
    "computer vision": "images, video, object detection, segmentation, visual recognition, pixels, cameras",
    "machine learning": "learning algorithms, neural network training, optimisation, generalisation, "
    "deep learning, reinforcement learning",
    "information retrieval and digital libraries": "search engines, ranking documents, scholarly papers, "
    "citations, PDF parsing, bibliographic metadata, recommendation",
    "robotics": "robots, manipulation, motion planning, control, sensors, autonomous navigation",
    "medicine and health": "patients, clinical trials, diseases, treatment, diagnosis, hospitals, public health",
    "biology and genetics": "genes, proteins, cells, genomes, sequencing, evolution, organisms",
    "neuroscience": "brain, neurons, cognition, neural recordings, memory, perception",
    "chemistry": "molecules, reactions, synthesis, catalysts, compounds, spectroscopy",
    "materials science": "materials, crystals, alloys, polymers, semiconductors, solar cells, batteries",
    "physics": "particles, quantum mechanics, fields, energy, experiments, relativity",
    "astronomy": "stars, galaxies, telescopes, planets, cosmology, observations of the sky",
    "earth and climate science": "climate, weather, oceans, emissions, ecosystems, geology, rainfall",
    "economics": "markets, prices, wages, employment, monetary policy, firms, trade",
    "social science": "society, surveys, social media, politics, behaviour, communities",
    "psychology": "behaviour, emotions, experiments with participants, personality, mental health",
    "education": "students, teaching, learning outcomes, schools, curricula",
    "software engineering": "source code, programs, bugs, testing, software development, compilers",
    "mathematics": "theorems, proofs, algebra, geometry, probability, equations",
}


@dataclass(frozen=True)
class ResearchField:
    name: str
    source: str  # "configured", "inferred" or "default"
    similarity: float | None = None  # of the collection's centroid to the inferred field
    runner_up: str | None = None

    def describe(self) -> str:
        if self.source == "inferred":
            return (
                f"{self.name} (inferred from the papers' summaries: cosine {self.similarity:.3f}; "
                f"next {self.runner_up})"
            )
        return f"{self.name} ({self.source})"


def research_field(
    configured: str | None, summary_vectors: np.ndarray, embed: Callable[[list[str]], np.ndarray] | None
) -> ResearchField:
    """The configured field, else the one nearest the centroid of ``summary_vectors``."""
    if configured and configured.strip():
        return ResearchField(configured.strip(), "configured")
    if embed is None or not len(summary_vectors):
        return ResearchField(DEFAULT_FIELD, "default")
    names = list(FIELDS)
    vectors = normalize_rows(embed([f"Research in {name}: {FIELDS[name]}." for name in names]))
    centroid = normalize_rows(summary_vectors.mean(axis=0))
    cosine = vectors @ centroid
    first, second = np.argsort(-cosine)[:2]
    return ResearchField(names[first], "inferred", round(float(cosine[first]), 3), names[second])
