"""SciPIP's summary tasks without a model: extractive, deterministic, labelled "offline".

- The digest's summary fills the paper's template with a key phrase of the sentence that states
  the problem and the paper's title as the approach: "The problem of X can be addressed by <title>."
- Motivations are the two most central sentences of the abstract and introduction that state a
  need, a problem or a limitation; details the three that state what the paper does ("we propose").
- Entities are the text's topic phrases of 2 to 5 words (``document_keyphrases``), filled up with
  its RAKE phrases, none sharing half its words with one already kept.
- The concise method is the method section's most central sentences, in reading order.
- Idea generation recombines: the brainstorm and direct paths pair the background's key phrases
  against its first need; an inspiration is a retrieved method's sentence most relevant to the
  background; an idea applies one inspiring paper's method to the need; integration keeps the ideas
  most relevant to the background. Every idea text starts with "[offline template]": none is
  presented as a model's idea. The offline judge is TF-IDF (its rationale says so).
"""

from __future__ import annotations

import re

from insight_assets.core.startup.lazy import lazy_regex

from ...extractive import rank_sentences, terms, tfidf
from ...keyphrases import document_keyphrases, rake_keyphrases
from ...text import sentence_texts
from .schemas import (
    DETAILS,
    KEYWORD_MAX_WORDS,
    KEYWORD_MIN_WORDS,
    MAX_KEYWORDS,
    MOTIVATIONS,
    OFFLINE_TEMPLATE,
    RATINGS,
    ConciseMethod,
    DetailedIdea,
    Entities,
    Idea,
    IdeaList,
    IdeaRating,
    IdeaRatings,
    Inspiration,
    NoveltyDecision,
    PairVerdict,
    PaperDigest,
    ScientistDraft,
    ScientistIdea,
    Selection,
    TransformedBackground,
)

_PROBLEM = lazy_regex(
    r"\b(challeng\w*|problem\w*|limitation\w*|difficult\w*|lack\w*|need\w*|however|costly|expensive|"
    r"bottleneck\w*|fail\w*|suffer\w*|struggle\w*|remain\w*)\b",
    re.IGNORECASE,
)
_CONTRIBUTION = lazy_regex(
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


# -- idea generation: recombination with templates, every text marked as such ------------------------


def _need(background: str) -> str:
    """The background's first stated need, without its number."""
    first = (sentence_texts(background) or [background])[0]
    return re.sub(r"^\s*\d+\.\s*", "", first).strip().rstrip(".")


# The offline stand-ins take the field the prompts name, and need not use it: a template names no field.


def transform_offline(background: str, keywords: list[str] = (), field: str = "") -> TransformedBackground:
    listed = ", ".join(keywords)
    terms_line = f"\n{OFFLINE_TEMPLATE} Technical terms, not explained offline: {listed}." if listed else ""
    return TransformedBackground(background=f"{background.strip()}{terms_line}")


def recombine_offline(background: str, count: int, field: str = "") -> IdeaList:
    """Ideas made by pairing the background's key phrases against its first need: a template,
    not knowledge (the brainstorm and direct paths offline)."""
    phrases = entities_offline(background).entities or [_need(background)]
    pairs = [(a, b) for i, a in enumerate(phrases) for b in phrases[i + 1 :]] or [(phrases[0], phrases[0])]
    need = _need(background)
    return IdeaList(
        ideas=[
            Idea(
                title=f"{OFFLINE_TEMPLATE} {a} with {b}",
                idea=f"{OFFLINE_TEMPLATE} Address \u201c{need}\u201d by combining {a} with {b}.",
            )
            for a, b in pairs[:count]
        ]
    )


def inspiration_offline(background: str, title: str, method: str, field: str = "") -> Inspiration:
    """The method's sentence most relevant to the background; useful when they share two content
    words."""
    sentences = sentence_texts(method)
    best = rank_sentences(sentences, background, limit=1)
    if not best:
        return Inspiration(useful=False)
    sentence = sentences[best[0]]
    shared = set(terms(sentence)) & set(terms(background))
    return Inspiration(useful=len(shared) >= 2, inspiration=sentence)


def ideas_offline(background: str, inspirations: list[dict], count: int, field: str = "") -> IdeaList:
    need = _need(background)
    return IdeaList(
        ideas=[
            Idea(
                title=f"{OFFLINE_TEMPLATE} {item['title']} applied",
                idea=f"{OFFLINE_TEMPLATE} Apply what \u201c{item['title']}\u201d does ({item['text']}) to: {need}.",
                inspired_by=[item["title"]],
            )
            for item in inspirations[:count]
        ]
    )


def integrate_offline(background: str, ideas: list[dict], count: int, field: str = "") -> Selection:
    """The ideas most relevant to the background, not repeating one another."""
    chosen = rank_sentences([i["idea"] for i in ideas], background, limit=count, redundancy=0.9)
    return Selection(selected=[ideas[n]["number"] for n in sorted(chosen)])


def expand_offline(background: str, idea: str, field: str = "", **example: str) -> DetailedIdea:
    return DetailedIdea(
        problem=_need(background),
        method=idea,
        expected_outcome=f"{OFFLINE_TEMPLATE} no outcome is estimated without a model.",
    )


def judge_ideas_offline(background: str, ideas: list[dict], context: list[str] = ()) -> IdeaRatings:
    """TF-IDF stand-ins for Table 1: relevance = similarity to the background; novelty = distance
    from the retrieved papers; feasibility = nearness to a known method; clarity = content words;
    helpful = relevant and feasible. Labelled in every rationale."""
    texts = [i["text"] for i in ideas]
    vectors, _ = tfidf(texts + [background] + list(context))
    own, query, known = vectors[: len(texts)], vectors[len(texts)], vectors[len(texts) + 1 :]
    ratings = []
    for n, idea in enumerate(ideas):
        relevance = float(own[n] @ query)
        nearest = float((known @ own[n]).max()) if len(known) else 0.0
        words = len(set(terms(idea["text"])))
        scores = {
            "novelty": round(5 * (1 - nearest)),
            "clarity": round(5 * min(1.0, words / 25)),
            "feasibility": round(5 * min(1.0, nearest / 0.3)),
            "relevance": round(5 * min(1.0, relevance / 0.3)),
        }
        ratings.append(
            IdeaRating(
                idea=idea["number"],
                **{k: max(0, min(5, v)) for k, v in scores.items()},
                helpful=scores["relevance"] >= 3 and scores["feasibility"] >= 2,
                rationale=(
                    f"offline TF-IDF: cosine {relevance:.2f} to the background, {nearest:.2f} to the nearest "
                    f"retrieved paper, {words} content words"
                ),
            )
        )
    return IdeaRatings(ratings=ratings)


# -- the AI Scientist's idea stage and the pairwise judge, offline ------------------------------------


def scientist_idea_offline(background: str, previous: list[str], field: str = "") -> ScientistDraft:
    """The next of the background's key-phrase pairings not yet among ``previous``: a template."""
    ideas = recombine_offline(background, len(previous) + 1).ideas
    idea = ideas[min(len(previous), len(ideas) - 1)]
    return ScientistDraft(
        thought=f"{OFFLINE_TEMPLATE} no reasoning without a model.",
        idea=ScientistIdea(
            name=re.sub(r"[^a-z0-9]+", "_", idea.title.lower()).strip("_")[:60] or "idea",
            title=idea.title,
            experiment=idea.idea,
            interestingness=5,
            feasibility=5,
            novelty=5,
        ),
    )


def scientist_reflect_offline(
    background: str, idea: dict, round: int, rounds: int, field: str = ""
) -> ScientistDraft:
    """Nothing to improve without a model: the idea as it was, done."""
    return ScientistDraft(
        thought=f"{OFFLINE_TEMPLATE} no reflection without a model.", idea=ScientistIdea(**idea), done=True
    )


# An idea whose TF-IDF cosine to a related paper reaches this overlaps it (offline stand-in).
OFFLINE_OVERLAP = 0.5


def novelty_offline(idea: str, papers: list[str], field: str = "") -> NoveltyDecision:
    if not papers:
        return NoveltyDecision(novel=True, reason="offline TF-IDF: no related paper to compare with")
    vectors, _ = tfidf([idea, *papers])
    nearest = float((vectors[1:] @ vectors[0]).max())
    return NoveltyDecision(
        novel=nearest < OFFLINE_OVERLAP,
        reason=f"offline TF-IDF: cosine {nearest:.2f} to the nearest related paper (overlap at {OFFLINE_OVERLAP})",
    )


def judge_pair_offline(background: str, idea_a: str, idea_b: str, context: list[str] = ()) -> PairVerdict:
    """The offline ratings of both ideas compared criterion by criterion (equal: a tie); helpfulness
    compares relevance plus feasibility. Position plays no part, so both orders agree."""
    rated = judge_ideas_offline(
        background, [{"number": 1, "text": idea_a}, {"number": 2, "text": idea_b}], context
    ).ratings

    def prefer(a: float, b: float) -> str:
        return "A" if a > b else "B" if b > a else "tie"

    a, b = rated
    return PairVerdict(
        **{name: prefer(getattr(a, name), getattr(b, name)) for name in RATINGS},
        helpfulness=prefer(a.relevance + a.feasibility, b.relevance + b.feasibility),
        rationale="offline TF-IDF: the stand-in ratings compared, not a judgement",
    )
