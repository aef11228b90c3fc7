"""Knowledge triples: (subject, relation, object) from sentences, normalised and deduplicated.

Insight-RAG (§3, Figure 2 step 1) extracts triples with a model and then normalises them by hand and
by rule. The offline extractor here is rule-based: TextBlob's pattern tagger (a Brill tagger whose
lexicon ships in the wheel) tags each sentence, and a triple is a noun phrase, the verb group right
after it and the noun phrase right after that ("Sentence-BERT | uses | siamese networks"), each noun
phrase optionally extended by one "of"-phrase ("an F1 score of 91.2"). Pronoun subjects, phrases
without letters and phrases over ``MAX_PHRASE_WORDS`` words are skipped.

Normalisation: lower case, whitespace collapsed, leading determiners and possessives dropped; the
relation is the lemma of its first main verb (lemminflect) with auxiliaries dropped and the words
after it lemmatised, a negation kept, so "was trained on", "is trained on" and "trains on" all become
"train on"; a verb group that is only an auxiliary keeps it ("is" -> "be"). The surface relation is
kept for phrasing questions. Triples are deduplicated per document on (subject, relation, object).
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from insight_assets.core.startup import imports
from insight_assets.core.startup.lazy import lazy_regex

NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
MODIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "CD", "FW", "VBG"}) | NOUN_TAGS
VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"})
PARTICLE_TAGS = frozenset({"RP", "IN", "TO"})
AUXILIARIES = frozenset(
    [
        "be",
        "am",
        "is",
        "are",
        "was",
        "were",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "can",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "will",
        "would",
    ]
)
NEGATIONS = frozenset({"not", "n't", "never"})
DETERMINERS = frozenset(
    [
        "a",
        "an",
        "the",
        "this",
        "these",
        "that",
        "those",
        "our",
        "their",
        "its",
        "his",
        "her",
        "my",
        "your",
        "each",
        "every",
        "such",
        "some",
        "any",
        "all",
        "both",
    ]
)
PRONOUNS = frozenset(
    [
        "we",
        "i",
        "you",
        "he",
        "she",
        "it",
        "they",
        "this",
        "these",
        "that",
        "those",
        "which",
        "who",
        "whom",
        "what",
        "there",
        "here",
        "one",
        "us",
        "them",
        "itself",
        "themselves",
        "ours",
        "theirs",
    ]
)
MAX_PHRASE_WORDS = 8
EXTRACTOR = "offline: rule-based (TextBlob pattern tagger; noun phrase - verb group - noun phrase)"

_SPACE = lazy_regex(r"\s+")
_LETTER = lazy_regex(r"[a-z]", re.IGNORECASE)
_NAME = lazy_regex(r"^.+[A-Z]|[A-Za-z].*\d|\d.*[A-Za-z]")
_WORD3 = lazy_regex(r"[a-z]{3}", re.IGNORECASE)
_TRIM = " \t\n,;:.()[]{}\"'"


@dataclass(frozen=True)
class Triple:
    """One (subject, relation, object), normalised, with where it was read."""

    subject: str
    relation: str
    object: str
    relation_text: str  # the verb group as written, lower case: "is based on"
    doc_id: str
    chunk_id: str
    sentence: str
    mentions: int = 1  # times the same triple was read in its document

    @property
    def triple_id(self) -> str:
        key = f"{self.doc_id}\x1f{self.subject}\x1f{self.relation}\x1f{self.object}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]

    @property
    def text(self) -> str:
        return f"{self.subject} {self.relation_text} {self.object}"


@dataclass
class Extraction:
    """Triples of a set of sentences, and how many candidates each rule turned away."""

    triples: list[Triple] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


_LOADING = threading.Lock()


@functools.cache
def _tagger():
    """TextBlob's pattern tagger (``textblob.en.tag``), its lexicon and rules loaded. They are lazy:
    the first lookup fills the lexicon one entry at a time, and another thread tagging meanwhile sees
    a partial lexicon and tags the same sentence differently. So they are filled here, once, under a
    lock, before any tagging (lemminflect's tables too), and the extraction is the same whatever the
    thread schedule."""
    with _LOADING:
        from lemminflect import getInflection, getLemma

        english = imports.textblob_english()
        lexicon = english.lexicon
        for table in (lexicon, lexicon.morphology, lexicon.context, lexicon.entities):
            len(table)
        getLemma("trained", upos="VERB")
        getInflection("train", tag="VBZ")
        return english.tag


def tag(sentence: str) -> list[tuple[str, str]]:
    """(word, Penn tag) pairs of ``sentence``. A name the lexicon does not know is often tagged as
    an adjective ("Sentence-BERT/JJ"): a word with a capital after its first letter, or with
    letters and digits, is tagged a proper noun."""
    return [
        (word, "NNP" if pos in ("JJ", "VB", "VBP", "NN") and _NAME.search(word) else pos)
        for word, pos in _tagger()(sentence)
    ]


def lemma(word: str) -> str:
    """The verb lemma of ``word`` ("trained" -> "train"); the word itself when it is no verb form."""
    from lemminflect import getLemma

    found = getLemma(word.lower(), upos="VERB")
    return found[0] if found else word.lower()


def normalise_phrase(phrase: str) -> str:
    """Lower case, whitespace collapsed, edge punctuation and leading determiners dropped."""
    words = _SPACE.sub(" ", phrase.lower()).strip(_TRIM).split(" ")
    while words and words[0] in DETERMINERS:
        words = words[1:]
    return " ".join(words).strip(_TRIM)


def normalise_relation(words: Sequence[str]) -> str:
    """The lemma of the main verb with its particles and negation, auxiliaries dropped unless the
    group is nothing else: "was trained on" -> "train on", "does not use" -> "not use", "is" -> "be";
    empty when the group has no word but negations ("=", "not")."""
    lowered = [word.lower() for word in words]
    content = [i for i, word in enumerate(lowered) if word not in NEGATIONS and _LETTER.search(word)]
    if not content:
        return ""
    main = [i for i in content if lowered[i] not in AUXILIARIES]
    head = main[0] if main else content[-1]
    kept = ["not"] if any(word in NEGATIONS for word in lowered) else []
    kept += [lemma(word) for word in lowered[head:] if word not in AUXILIARIES | NEGATIONS]
    return " ".join(kept or [lemma(lowered[head])])


def _noun_phrase(tagged: Sequence[tuple[str, str]], start: int, step: int) -> tuple[int, int] | None:
    """The noun phrase ending (``step`` = -1) or starting (``step`` = 1) at ``start``: a run of
    modifiers and nouns whose last word is a noun or a number, with one trailing "of"-phrase."""

    def run_from(i: int) -> int:
        j = i
        while j < len(tagged) and (tagged[j][1] in MODIFIER_TAGS or tagged[j][1] in ("DT", "PRP$")):
            j += 1
        return j

    if step == 1:
        i = start
        end = run_from(i)
        while end > i and tagged[end - 1][1] not in NOUN_TAGS | {"CD"}:
            end -= 1
        if end == i:
            return None
        if end + 1 < len(tagged) and tagged[end][0].lower() == "of":
            extended = run_from(end + 1)
            while extended > end + 1 and tagged[extended - 1][1] not in NOUN_TAGS | {"CD"}:
                extended -= 1
            if extended > end + 1:
                end = extended
        return i, end
    end = start + 1
    if tagged[start][1] not in NOUN_TAGS | {"CD"}:
        return None
    i = start
    while i > 0 and (tagged[i - 1][1] in MODIFIER_TAGS or tagged[i - 1][1] in ("DT", "PRP$")):
        i -= 1
    if i >= 2 and tagged[i - 1][0].lower() == "of" and tagged[i - 2][1] in NOUN_TAGS:
        j = i - 2
        while j > 0 and (tagged[j - 1][1] in MODIFIER_TAGS or tagged[j - 1][1] in ("DT", "PRP$")):
            j -= 1
        i = j
    return i, end


def _verb_group(tagged: Sequence[tuple[str, str]], start: int) -> int:
    """The end of the verb group starting at ``start`` (adverbs and negations inside it, particles
    after it); ``start`` when there is none."""
    i = start
    saw_verb = False
    while i < len(tagged):
        word, pos = tagged[i]
        if pos in VERB_TAGS:
            saw_verb = True
        elif pos in ("RB", "RBR") and word.lower() in NEGATIONS | {"also", "only", "further", "then"}:
            pass
        else:
            break
        i += 1
    if not saw_verb:
        return start
    if (
        i < len(tagged)
        and tagged[i][1] in PARTICLE_TAGS
        and tagged[i][0].lower() not in ("that", "whether", "if")
    ):
        i += 1
    return i


def _words(tagged: Sequence[tuple[str, str]], span: tuple[int, int]) -> str:
    return " ".join(word for word, _ in tagged[span[0] : span[1]])


def sentence_triples(sentence: str, doc_id: str, chunk_id: str, found: Extraction) -> None:
    """Add the triples of one sentence to ``found``."""
    tagged = tag(sentence)
    i = 0
    while i < len(tagged):
        if tagged[i][1] not in VERB_TAGS or i == 0:
            i += 1
            continue
        subject = _noun_phrase(tagged, i - 1, -1)
        end = _verb_group(tagged, i)
        if subject is None or end == i:
            i += 1
            continue
        obj = _noun_phrase(tagged, end, 1) if end < len(tagged) else None
        if obj is None:
            i = end
            continue
        subject_text = normalise_phrase(_words(tagged, subject))
        object_text = normalise_phrase(_words(tagged, obj))
        relation_words = [word for word, _ in tagged[i:end]]
        i = obj[1]
        if not subject_text or subject_text.split()[0] in PRONOUNS:
            found.skip("pronoun or empty subject")
            continue
        if not _LETTER.search(subject_text) or not _LETTER.search(object_text):
            found.skip("a phrase without letters")
            continue
        if not all(_WORD3.search(text) for text in (subject_text, object_text)):
            found.skip("a symbol, not a phrase (no word of three letters)")
            continue
        if max(len(subject_text.split()), len(object_text.split())) > MAX_PHRASE_WORDS:
            found.skip(f"a phrase over {MAX_PHRASE_WORDS} words")
            continue
        if object_text in PRONOUNS:
            found.skip("pronoun object")
            continue
        found.triples.append(
            Triple(
                subject=subject_text,
                relation=normalise_relation(relation_words),
                object=object_text,
                relation_text=_SPACE.sub(" ", " ".join(relation_words).lower()),
                doc_id=doc_id,
                chunk_id=chunk_id,
                sentence=sentence,
            )
        )


def deduplicate(triples: Iterable[Triple]) -> list[Triple]:
    """One triple per (document, subject, relation, object): the first read, with its mentions."""
    first: dict[tuple[str, str, str, str], Triple] = {}
    counts: dict[tuple[str, str, str, str], int] = {}
    for triple in triples:
        key = (triple.doc_id, triple.subject, triple.relation, triple.object)
        first.setdefault(key, triple)
        counts[key] = counts.get(key, 0) + 1
    return [Triple(**{**t.__dict__, "mentions": counts[key]}) for key, t in first.items()]


def from_extracted(doc_id: str, chunk_id: str, sentences: Sequence[str], extracted) -> list[Triple]:
    """Triples a task extracted from a chunk's ``sentences`` (``ExtractedTriple``s), normalised;
    those with an empty part (a relation without a word: "=") or a pronoun subject are left out."""
    found = []
    for item in extracted:
        subject, obj = normalise_phrase(item.subject), normalise_phrase(item.object)
        relation = normalise_relation(item.relation.split())
        if not subject or not obj or not relation or subject.split()[0] in PRONOUNS:
            continue
        found.append(
            Triple(
                subject=subject,
                relation=relation,
                object=obj,
                relation_text=_SPACE.sub(" ", item.relation.lower()).strip(),
                doc_id=doc_id,
                chunk_id=chunk_id,
                sentence=sentences[item.sentence - 1],
            )
        )
    return found


def extract(sentences: Iterable[tuple[str, str, str]]) -> Extraction:
    """The deduplicated triples of ``(doc_id, chunk_id, sentence)``; a sentence read twice (chunks
    overlap) counts once."""
    found = Extraction()
    seen: set[tuple[str, str]] = set()
    for doc_id, chunk_id, sentence in sentences:
        if (doc_id, sentence) in seen:
            continue
        seen.add((doc_id, sentence))
        sentence_triples(sentence, doc_id, chunk_id, found)
    found.triples = deduplicate(found.triples)
    return found
