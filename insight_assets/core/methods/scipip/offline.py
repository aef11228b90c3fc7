"""SciPIP's summary tasks without a model: extractive, deterministic, labelled "offline".

- The digest's summary fills the paper's template with a key phrase of the sentence that states
  the problem and the paper's title as the approach: "The problem of X can be addressed by <title>."
- Motivations are the two most central sentences of the abstract and introduction that state a
  need, a problem or a limitation; details the three that state what the paper does ("we propose").
- Entities are the text's topic phrases of 2 to 5 words (``document_keyphrases``), filled up with
  its RAKE phrases, none sharing half its words with one already kept.
- The concise method is the method section's most central sentences, in reading order.
"""

from __future__ import annotations

import re

from ...extractive import rank_sentences
from ...keyphrases import document_keyphrases, rake_keyphrases
from ...text import sentence_texts
from .schemas import (
    DETAILS,
    KEYWORD_MAX_WORDS,
    KEYWORD_MIN_WORDS,
    MAX_KEYWORDS,
    MOTIVATIONS,
    ConciseMethod,
    Entities,
    PaperDigest,
)

_PROBLEM = re.compile(
    r"\b(challeng\w*|problem\w*|limitation\w*|difficult\w*|lack\w*|need\w*|however|costly|expensive|"
    r"bottleneck\w*|fail\w*|suffer\w*|struggle\w*|remain\w*)\b",
    re.IGNORECASE,
)
_CONTRIBUTION = re.compile(
    r"\b(we (propose|present|introduce|develop|design|show|find|release|build)|this (paper|work)|"
    r"our (method|model|approach|framework|results?))\b",
    re.IGNORECASE,
)
METHOD_SENTENCES = 6


def _pick(preferred: list[str], rest: list[str], limit: int, query: str) -> list[str]:
    """``limit`` sentences: the best of ``preferred``, then of ``rest`` to fill up."""
    chosen = [preferred[i] for i in rank_sentences(preferred, query, limit=limit, redundancy=1.0)]
    others = [s for s in rest if s not in chosen]
    return chosen + [
        others[i] for i in rank_sentences(others, query, limit=limit - len(chosen), redundancy=1.0)
    ]


def digest_offline(title: str, abstract: str, introduction: str = "") -> PaperDigest:
    sentences = list(dict.fromkeys(sentence_texts(f"{abstract}\n{introduction}")))
    problems = [s for s in sentences if _PROBLEM.search(s)]
    motivations = _pick(problems, sentences, MOTIVATIONS, title)
    rest = [s for s in sentences if s not in motivations]
    details = _pick([s for s in rest if _CONTRIBUTION.search(s)], rest, DETAILS, title)
    phrases = rake_keyphrases(motivations[0] if motivations else abstract or title, limit=1)
    problem = phrases[0] if phrases else "the paper's topic"
    return PaperDigest(
        summary=f"The problem of {problem} can be addressed by {title.strip() or 'the paper'}.",
        motivations=motivations,
        details=details,
    )


def entities_offline(content: str) -> Entities:
    """The text's topic phrases of 2 to 5 words, then its RAKE phrases to fill up to 5."""
    topics = document_keyphrases("", content, 4 * MAX_KEYWORDS)
    phrases = topics + rake_keyphrases(content, limit=4 * MAX_KEYWORDS)
    kept: list[str] = []
    for phrase in phrases:
        words = set(phrase.split())
        sized = KEYWORD_MIN_WORDS <= len(words) <= KEYWORD_MAX_WORDS
        if sized and not any(len(words & set(k.split())) * 2 >= len(words) for k in kept):
            kept.append(phrase)
    return Entities(entities=kept[:MAX_KEYWORDS])


def method_offline(methodology: str) -> ConciseMethod:
    sentences = sentence_texts(methodology)
    chosen = set(rank_sentences(sentences, limit=METHOD_SENTENCES))
    return ConciseMethod(method=" ".join(s for n, s in enumerate(sentences) if n in chosen))
