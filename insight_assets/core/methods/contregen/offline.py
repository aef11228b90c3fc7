"""ConTReGen's tasks without a model: deterministic, extractive, and labelled as such.

- planning: from what a model planner sees (the question, the explored questions, the node's
  passages) and nothing else: the facets are key phrases (RAKE) of the passages, named by the most
  passages first, leaving out phrases the question or an explored question already holds; each
  becomes a template sub-question ("What do the papers report about <facet> in relation to
  <topic>?"). No facet left: no further plan.
- verification: a sub-question is needed when its cosine with the original query reaches the
  threshold and it does not repeat an explored question; its search query is its content words.
  A passage is relevant when its cosine with the original query reaches the node's floor (a share
  of the query's own best passage's). The cosines come with the inputs (the runner's embedder).
- synthesis: the passages' and the children's summaries' sentences most central to the question,
  each with its citation, up to the word budget: a digest, not a rewrite.
- the multi-hop baselines: a follow-up question or a chain of queries is the planner's sub-questions
  on what has been retrieved so far; DSP's reasoning says it is extractive; the answers are digests.
- NLI: a sentence is entailed when ENTAILED_SHARE of its content words are in the reference, else
  neutral; a lexical stand-in cannot see a contradiction and never reports one.
- the judge: lexical stand-ins (coverage: the share of the reference answer's content words the
  answer holds; relevance: TF-IDF cosine of the answer's sentences with the question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from insight_assets.core.startup.lazy import lazy_regex

from ...extractive import STOPWORDS, rank_sentences, terms, tfidf, whole_sentences
from ...keyphrases import rake_keyphrases
from ...retrieval.citing import cited_sentences, strip_citations
from ...text import sentence_texts
from .schemas import (
    AnswerJudgement,
    FollowUp,
    PassageVerdict,
    PassageVerdicts,
    Plan,
    QueryChain,
    ReasonedAnswer,
    SentenceVerdicts,
    SubQuestionVerdict,
    SubQuestionVerdicts,
    WrittenText,
)

PHRASES_PER_PASSAGE = 6
SUB_QUESTION = "What do the papers report about {facet} in relation to {topic}?"
# Words of the template itself, left out of the search query made from a sub-question (and of
# the topic a deeper sub-question names).
_FRAMING = frozenset({"papers", "report", "relation"})
_FRAMING_TERMS = frozenset({"paper", "report", "relation"})
# A citation's "Hermann et al" names a paper, not a facet.
_CITATION_PHRASE = lazy_regex(r"\bet al\b")
# A cosine of 0.3 between a sentence and a question counts as fully relevant (core/judge does too).
RELEVANT_COSINE = 0.3
_WORD = lazy_regex(r"[A-Za-z][\w-]*")


def _topic(question: str) -> str:
    phrases = rake_keyphrases(question, limit=2, exclude=_FRAMING_TERMS)
    return " and ".join(phrases) if phrases else question.rstrip("?")


def plan_offline(
    query: str,
    question: str,
    explored: Sequence[str],
    passages: Sequence[Mapping[str, str]],
    max_sub_questions: int,
) -> Plan:
    asked = set(terms(question)) | {t for text in explored for t in terms(text)}
    named: dict[str, int] = {}  # facet -> how many passages name it
    for passage in passages:
        for phrase in rake_keyphrases(passage["text"], limit=PHRASES_PER_PASSAGE, exclude=asked):
            named[phrase] = named.get(phrase, 0) + 1
    facets: list[str] = []
    used: set[str] = set()
    # Named by more passages first (a title block's names and affiliations are named by one), then
    # longer phrases.
    ranked = sorted(named, key=lambda p: (-named[p], -len(p.split())))
    for phrase in ranked:
        words = set(terms(phrase))
        if not words or words & used or any(c.isdigit() for c in phrase) or _CITATION_PHRASE.search(phrase):
            continue
        facets.append(phrase)
        used |= words
        if len(facets) == max_sub_questions:
            break
    if not facets:
        return Plan(further_plan_needed=False, sub_questions=[])
    topic = _topic(question)
    return Plan(
        further_plan_needed=True,
        sub_questions=[SUB_QUESTION.format(facet=facet, topic=topic) for facet in facets],
    )


def search_words(question: str) -> str:
    """A question as a keyword query: its words without stopwords or the template's framing."""
    words = [w for w in _WORD.findall(question) if w.lower() not in STOPWORDS | _FRAMING]
    return " ".join(dict.fromkeys(words)) or question


def verify_sub_questions_offline(
    query: str,
    parent: str,
    sub_questions: Sequence[Mapping[str, Any]],
    need_similarity: float,
    repeat_similarity: float,
) -> SubQuestionVerdicts:
    verdicts = []
    for item in sub_questions:
        similarity, repeat = item["similarity"], item["repeat"]
        if repeat >= repeat_similarity:
            verdict = SubQuestionVerdict(
                index=item["index"],
                needed=False,
                reason=f"offline: repeats an explored question (cosine {repeat:.2f} >= {repeat_similarity})",
            )
        elif similarity < need_similarity:
            verdict = SubQuestionVerdict(
                index=item["index"],
                needed=False,
                reason=f"offline: cosine with the question {similarity:.2f} < {need_similarity}",
            )
        else:
            verdict = SubQuestionVerdict(
                index=item["index"],
                needed=True,
                reason=f"offline: cosine with the question {similarity:.2f} >= {need_similarity}",
                search_query=search_words(item["text"]),
            )
        verdicts.append(verdict)
    return SubQuestionVerdicts(verdicts=verdicts)


def judge_passages_offline(
    query: str, question: str, passages: Sequence[Mapping[str, Any]], floor: float
) -> PassageVerdicts:
    return PassageVerdicts(
        verdicts=[
            PassageVerdict(
                id=p["id"],
                relevant=p["similarity"] >= floor,
                reason=f"offline: cosine with the question {p['similarity']:.2f} "
                f"{'>=' if p['similarity'] >= floor else '<'} {floor:.2f}",
            )
            for p in passages
        ]
    )


def _digest(
    question: str,
    passages: Sequence[Mapping[str, str]],
    findings: Sequence[Mapping[str, str]],
    words: int,
) -> WrittenText:
    """The most central sentences on ``question``, cited, in their order, up to ``words`` words."""
    pool = [(sentence, f"[{alias}]") for alias, sentence in whole_sentences(passages)]
    pool += cited_sentences([finding["summary"] for finding in findings])
    if not pool:
        if not passages:
            return WrittenText(text="Nothing was retrieved for this question.")
        first = passages[0]
        return WrittenText(text=f"{' '.join(first['text'].split()[:40])} ... [{first['id']}]")
    chosen, total = [], 0
    for index in rank_sentences([sentence for sentence, _ in pool], question, limit=len(pool)):
        length = len(pool[index][0].split())
        if chosen and total + length > words:
            continue
        chosen.append(index)
        total += length
    return WrittenText(text=" ".join(f"{pool[i][0]} {pool[i][1]}" for i in sorted(chosen)))


def summarize_offline(
    query: str,
    question: str,
    passages: Sequence[Mapping[str, str]],
    findings: Sequence[Mapping[str, str]],
    sources: Any,
    words: int,
) -> WrittenText:
    return _digest(question, passages, findings, words)


def answer_offline(
    query: str,
    passages: Sequence[Mapping[str, str]],
    findings: Sequence[Mapping[str, str]],
    sources: Any,
    words: int,
) -> WrittenText:
    return _digest(query, passages, findings, words)


def judge_answer_offline(question: str, answer: str, reference: str) -> AnswerJudgement:
    plain = strip_citations(answer)
    sentences = sentence_texts(plain) or [plain]
    vectors, query = tfidf(sentences, [question])
    cosines = vectors @ query[0] if query[0].any() else vectors[:, 0] * 0
    relevance = float(sum(min(1.0, c / RELEVANT_COSINE) for c in cosines) / len(sentences))
    wanted = set(terms(reference or question))
    held = set(terms(plain))
    coverage = len(wanted & held) / len(wanted) if wanted else 0.0
    against = "the reference answer's" if reference else "the question's"
    return AnswerJudgement(
        reasoning=(
            f"offline lexical stand-in: the answer holds {coverage:.0%} of {against} content words; "
            f"its sentences' mean TF-IDF relevance to the question is {relevance:.2f}"
        ),
        coverage=round(1 + 4 * coverage, 2),
        relevance=round(1 + 4 * relevance, 2),
    )


def follow_up_offline(
    question: str, steps: Sequence[Mapping[str, str]], passages: Sequence[Mapping[str, str]]
) -> FollowUp:
    plan = plan_offline(question, question, [step["question"] for step in steps], passages, 1)
    if not plan.sub_questions:
        return FollowUp(follow_up_needed=False)
    return FollowUp(follow_up_needed=True, follow_up=plan.sub_questions[0])


def chain_offline(
    question: str, steps: Sequence[Mapping[str, str]], passages: Sequence[Mapping[str, str]], max_queries: int
) -> QueryChain:
    explored = [step["question"] for step in steps]
    return QueryChain(queries=plan_offline(question, question, explored, passages, max_queries).sub_questions)


def reasoned_answer_offline(
    query: str,
    passages: Sequence[Mapping[str, str]],
    findings: Sequence[Mapping[str, str]],
    sources: Any,
    words: int,
) -> ReasonedAnswer:
    written = _digest(query, passages, findings, words)
    return ReasonedAnswer(
        reasoning="offline: no reasoning, the sentences most central to the question", text=written.text
    )


# A sentence whose content words are in the reference at least this much counts as entailed offline.
ENTAILED_SHARE = 0.6


def nli_offline(reference: str, sentences: Sequence[str]) -> SentenceVerdicts:
    held = set(terms(reference))
    verdicts = []
    for sentence in sentences:
        wanted = set(terms(sentence))
        entailed = bool(wanted) and len(wanted & held) / len(wanted) >= ENTAILED_SHARE
        verdicts.append("entailment" if entailed else "neutral")
    return SentenceVerdicts(verdicts=verdicts)
