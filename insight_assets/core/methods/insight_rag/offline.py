"""Insight-RAG's tasks without a model: rules, deterministic, labelled "offline:".

- Questions are templates over (subject, relation): "What does X use?", "What is X based on?",
  "What are all the things that X uses?" for several answers.
- The identifier turns a question back into a fragment by rule (wh-word and auxiliary moved):
  "What does pizza contain?" -> "Pizza contains"; several answers when a noun of the question's
  wh-phrase or copula subject is plural, or it says "all" (the paper's rule: grammar only).
- The *reader* answers from a context by rule: it extracts triples from the context's sentences
  and returns the object of those whose subject and relation best match the question's fragment
  (at least half its content words); it abstains otherwise. The same reader serves every method,
  so offline differences between methods come from what they retrieve, not how they read.
- The ``llm`` retriever's completion: the object of the listed fact whose subject and relation
  match the fragment best, by the same rule.
- Matching says "Yes" when the two papers are more similar than the collection's median pair; it
  cannot use a context, so offline every matching method gets the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from insight_assets.core.startup.lazy import lazy_regex

from ...extractive import terms
from ...text import sentence_texts
from .schemas import (
    Completion,
    ExtractedTriple,
    IdentifiedInsight,
    InsightList,
    MatchDecision,
    PhrasedQuestion,
    ShortAnswer,
    TripleList,
)
from .triples import AUXILIARIES, NOUN_TAGS, VERB_TAGS, Extraction, lemma, sentence_triples, tag

ABSTAIN = "Not found in the context."
# The reader's least share of the fragment's content words that a triple must match.
MATCH_SHARE = 0.5
MAX_ANSWERS = 10
_BE = {"is", "are", "was", "were", "be", "been"}
_DO = {"do", "does", "did"}
_WH = {"what", "which", "where", "who", "whom", "when", "how", "whose", "why"}
_SPACE = lazy_regex(r"\s+")


# -- triples -------------------------------------------------------------------------------------


def triples_offline(sentences: Sequence[str]) -> TripleList:
    """The rule-based extractor's triples of each sentence (``triples.py``), numbered from 1."""
    found = []
    for number, sentence in enumerate(sentences, start=1):
        extraction = Extraction()
        sentence_triples(sentence, "", "", extraction)
        found += [
            ExtractedTriple(subject=t.subject, relation=t.relation_text, object=t.object, sentence=number)
            for t in extraction.triples
        ]
    return TripleList(triples=found)


# -- questions ------------------------------------------------------------------------------------


def _inflect(verb: str, form: str) -> str:
    from lemminflect import getInflection

    found = getInflection(verb, tag=form)
    return found[0] if found else verb


def template_question(subject: str, relation_text: str, multi: bool) -> str:
    """A question about the object of (subject, relation)."""
    words = relation_text.split()
    if multi:
        return f"What are all the things that {subject} {relation_text}?"
    first, rest = words[0], " ".join(words[1:])
    if (
        first
        in _BE
        | {"has", "have", "had", "can", "could", "may", "might", "will", "would", "should", "must"}
        | _DO
    ):
        return _SPACE.sub(" ", f"What {first} {subject} {rest}?").replace(" ?", "?")
    base = lemma(first)
    if first.endswith("ing") or (first != base and first.endswith(("ed", "en")) and len(words) > 1):
        return f"What is {subject} {relation_text}?"  # a reduced relative: "X based on Y"
    aux = "does" if first != base and first.endswith("s") else "did" if first != base else "do"
    return _SPACE.sub(" ", f"What {aux} {subject} {base} {rest}?").replace(" ?", "?")


def phrase_question_offline(
    subject: str, relation_text: str, multi: bool, objects: Sequence[str] = ()
) -> PhrasedQuestion:
    return PhrasedQuestion(question=template_question(subject, relation_text, multi))


# -- the identifier ------------------------------------------------------------------------------


def _cased(word: str, pos: str) -> str:
    """Lower case for a common noun or word written with a capital only because it is capitalised."""
    if pos in ("NNP", "NNPS") or any(c.isupper() for c in word[1:]) or word.isupper():
        return word
    return word.lower()


def identify(question: str) -> IdentifiedInsight:
    """The fragment a question asks to complete, and whether it wants several answers."""
    text = question.strip().rstrip("?").strip()
    tagged = tag(text)
    if not tagged:
        return IdentifiedInsight(insight="", multi_answer=False)
    words = [w for w, _ in tagged]
    lowered = [w.lower() for w in words]
    multi = "all" in lowered
    if lowered[0] not in _WH:
        return IdentifiedInsight(insight=text, multi_answer=multi)
    # The wh-phrase: the wh-word and the nouns right after it ("which components").
    i = 1
    while i < len(tagged) and tagged[i][1] in NOUN_TAGS | {"JJ", "DT"} and lowered[i] not in AUXILIARIES:
        multi = multi or tagged[i][1] in ("NNS", "NNPS")
        i += 1
    if "that" in lowered[i:]:  # "What are all the things that X uses?"
        j = lowered.index("that", i)
        return IdentifiedInsight(insight=_sentence(tagged[j + 1 :]), multi_answer=multi)
    if i >= len(tagged) or lowered[i] not in AUXILIARIES:
        return IdentifiedInsight(insight=_sentence(tagged[1:]), multi_answer=multi)
    aux = lowered[i]
    rest = tagged[i + 1 :]
    verb_at = next((k for k, (_, pos) in enumerate(rest) if pos in VERB_TAGS and k > 0), None)
    if verb_at is None and aux in _DO:  # the tagger missed the verb: the last word before particles
        verb_at = max(
            (k for k, (_, pos) in enumerate(rest) if k > 0 and pos not in ("IN", "RP", "TO")), default=None
        )
    subject = rest if verb_at is None else rest[:verb_at]
    predicate = [] if verb_at is None else rest[verb_at:]
    if verb_at is None and aux in _BE:
        multi = multi or any(pos in ("NNS", "NNPS") for _, pos in subject)
    if aux in _DO and predicate:
        form = {"does": "VBZ", "did": "VBD"}.get(aux, "VBP")
        verb = _inflect(predicate[0][0].lower(), form)
        return IdentifiedInsight(
            insight=_sentence([*subject, (verb, "VB"), *predicate[1:]]), multi_answer=multi
        )
    return IdentifiedInsight(insight=_sentence([*subject, (aux, "VB"), *predicate]), multi_answer=multi)


def _sentence(tagged: Sequence[tuple[str, str]]) -> str:
    text = " ".join(_cased(word, pos) for word, pos in tagged).strip()
    return text[:1].upper() + text[1:]


def identify_offline(task: str) -> InsightList:
    found = identify(task)
    return InsightList([found] if found.insight else [])


# -- the reader ----------------------------------------------------------------------------------


def content(text: str) -> set[str]:
    """Content words of ``text``, plurals folded and verbs lemmatised: what the reader matches."""
    return {lemma(word) for word in terms(text)}


def read(fragment: str, context: Sequence[str], multi: bool = False) -> list[tuple[str, int]]:
    """(object, index of the context text it was read in) for the context's triples whose subject
    and relation best match ``fragment`` (every match when ``multi``), best first; empty when none
    matches enough."""
    candidates = []
    for index, text in enumerate(context):
        found = Extraction()
        for sentence in sentence_texts(text) or [text]:
            sentence_triples(sentence, "", "", found)
        candidates += [(f"{t.subject} {t.relation}", t.object, index) for t in found.triples]
    return _best_objects(fragment, candidates, multi)


def _best_objects(
    fragment: str, candidates: Sequence[tuple[str, str, int]], multi: bool
) -> list[tuple[str, int]]:
    """The objects of the (subject and relation, object, index) candidates that match at least
    ``MATCH_SHARE`` of the fragment's content words, best first: the best one, or every one when
    ``multi``."""
    wanted = content(fragment)
    if not wanted:
        return []
    scored = []
    for head, obj, index in candidates:
        share = len(wanted & content(head)) / len(wanted)
        if share >= MATCH_SHARE:
            scored.append((-share, len(scored), obj, index))
    scored.sort()
    if not multi:
        scored = scored[:1]
    chosen: dict[str, int] = {}
    for _, _, obj, index in scored:
        chosen.setdefault(obj, index)
    return list(chosen.items())[:MAX_ANSWERS]


def answer_offline(question: str, passages: Sequence[Mapping[str, str]] = ()) -> ShortAnswer:
    """The reader's answer to ``question`` from ``passages``, each object cited by its passage."""
    insight = identify(question)
    found = read(insight.insight, [p["text"] for p in passages], insight.multi_answer)
    if not found:
        return ShortAnswer(answer=ABSTAIN)
    return ShortAnswer(answer="; ".join(f"{obj} [{passages[index]['id']}]" for obj, index in found))


def complete_offline(fragment: str, multi: bool, facts: Sequence[str] = ()) -> Completion:
    """The object of the facts ("subject | relation | object (sentence)") whose subject and
    relation best match the fragment."""
    parts = [fact.split(" | ", 2) for fact in facts]
    candidates = [
        (f"{p[0]} {p[1]}", p[2].split(" (\u201c")[0], n) for n, p in enumerate(parts) if len(p) == 3
    ]
    found = _best_objects(fragment, candidates, multi)
    return Completion(text="; ".join(obj for obj, _ in found) if found else ABSTAIN)


def completion(fragment: str, sentence: str) -> str:
    """``fragment`` completed from ``sentence``: the fragment, then the sentence's text from the
    object of the triple that matches the fragment on; the whole sentence when none matches."""
    found = read(fragment, [sentence])
    if found:
        at = sentence.lower().find(found[0][0].split()[0])
        if at >= 0:
            return f"{fragment.strip()} {sentence[at:]}"
    return sentence


def match_offline(
    paper_a: str, paper_b: str, insights: Sequence[str] = (), similarity: float = 0.0, threshold: float = 0.0
) -> MatchDecision:
    verdict = "Yes" if similarity > threshold else "No"
    return MatchDecision(
        explanation=(
            f"offline: the papers' similarity {similarity:.3f} is "
            f"{'above' if verdict == 'Yes' else 'not above'} the collection's median pair's {threshold:.3f}"
        ),
        answer=verdict,
    )
