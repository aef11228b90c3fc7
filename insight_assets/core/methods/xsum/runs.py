"""XSum's steps over a collection, batched: questions per paper, answers per target and question,
one summary per target (the editor), and the two baselines' summaries.

Each step records what it could not do (a failed call, an abstention, a target left without
answers) with its reason, and goes on with the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...llm.results import TRUNCATED as CUT_OFF
from ...retrieval import Hit, Retriever, rerank
from ...retrieval.citing import (
    Source,
    alias,
    aliased,
    chunk_citations,
    citation_problems,
    cited_chunks,
    passage,
    render_citations,
)
from ...retrieval.rerank import LateInteraction
from ...text import cut_to_tokens
from .schemas import (
    ABSTAINED,
    ABSTRACTS_ONLY,
    ANSWERED,
    FAILED,
    NO_INPUT,
    PIPELINE_1,
    PIPELINE_2,
    PLAIN_RAG,
    SKIPPED,
    TRUNCATED,
    WRITTEN,
    XSUM,
    PaperInput,
    SummaryRecord,
    SummaryTarget,
    XSumAnswerRecord,
    XSumQuestion,
)
from .tasks import (
    XSUM_ANSWER,
    XSUM_EDITOR,
    XSUM_QUESTIONS,
    XSUM_REFINE,
    XSUM_TOPIC_SUMMARY,
)

if TYPE_CHECKING:
    from ...llm import LLMClient


def paper_input(doc_id: str, title: str, abstract: str, body: str, fallback_tokens: int) -> PaperInput:
    """What question generation reads of a paper: its abstract, or the start of its body."""
    if abstract.strip():
        return PaperInput(doc_id, title, " ".join(abstract.split()))
    return PaperInput(doc_id, title, " ".join(cut_to_tokens(body, fallback_tokens).split()), "body_start")


# -- questions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionsOutcome:
    questions: list[XSumQuestion]
    failures: dict[str, str]  # doc id -> why it has no questions


def question_id(doc_id: str, position: int) -> str:
    return f"{doc_id[:16]}-q{position}"


def generate_questions(client: LLMClient, papers: Sequence[PaperInput], k: int) -> QuestionsOutcome:
    batch = client.run_many(
        XSUM_QUESTIONS, [{"title": p.title, "abstract": p.abstract, "k": k} for p in papers]
    )
    questions, failures = [], {}
    for paper, item in zip(papers, batch.items, strict=True):
        if not item.ok:
            failures[paper.doc_id] = item.error or item.status
            continue
        for position, text in enumerate(item.value.questions):
            questions.append(
                XSumQuestion(question_id(paper.doc_id, position), paper.doc_id, position, text.strip())
            )
    return QuestionsOutcome(questions, failures)


# -- answers ----------------------------------------------------------------------------------


def _scope(target: SummaryTarget, doc_id: str, scope: str) -> tuple[str, ...]:
    return (doc_id,) if scope == "paper" else target.doc_ids


def answer_questions(
    client: LLMClient,
    retriever: Retriever,
    targets: Sequence[SummaryTarget],
    questions: Sequence[XSumQuestion],
    *,
    scope: str,
    candidates: int,
    top_n: int,
    mode: str,
    reranker: str,
    refine: bool,
    late_interaction: LateInteraction | None = None,
) -> list[XSumAnswerRecord]:
    """Every target's questions answered: retrieve ``candidates`` chunks from the scope (the
    question's paper, or the target's papers), rerank to ``top_n``, answer from those only. With
    scope ``paper`` a question is retrieved and answered once, whatever the number of targets."""
    by_doc: dict[str, list[XSumQuestion]] = {}
    for question in questions:
        by_doc.setdefault(question.doc_id, []).append(question)
    jobs: dict[tuple[str, tuple[str, ...]], XSumQuestion] = {}
    for target in targets:
        for doc_id in target.doc_ids:
            for question in by_doc.get(doc_id, []):
                jobs.setdefault((question.question_id, _scope(target, doc_id, scope)), question)
    keys = list(jobs)
    texts = [jobs[key].question for key in keys]
    if late_interaction is None and reranker == "late-interaction":
        # One for all the questions: they rerank the same papers' chunks, whose token vectors it keeps.
        late_interaction = LateInteraction.for_collection(retriever.store.uri, retriever.collection)
    vectors = retriever.embed(texts) if keys and mode != "lexical" else [None] * len(keys)
    passages: list[list[Hit]] = []
    for key, text, vector in zip(keys, texts, vectors, strict=True):
        hits = retriever.search(text, candidates, mode, documents=key[1], query_vector=vector)
        passages.append(rerank(text, hits, top_n, reranker, late_interaction=late_interaction, llm=client))
    batch = client.run_many(
        XSUM_ANSWER,
        [
            {"question": text, "passages": [passage(i, h) for i, h in enumerate(hits)]}
            for text, hits in zip(texts, passages, strict=True)
        ],
    )
    results = list(batch.items)
    if refine:
        drafts = [i for i, item in enumerate(results) if item.ok and not item.value.abstain]
        refined = client.run_many(
            XSUM_REFINE,
            [
                {
                    "question": texts[i],
                    "passages": [passage(n, h) for n, h in enumerate(passages[i])],
                    "draft": results[i].value.answer,
                }
                for i in drafts
            ],
        )
        for index, item in zip(drafts, refined.items, strict=True):
            if item.ok:
                results[index] = item
    answered: dict[tuple[str, tuple[str, ...]], XSumAnswerRecord] = {}
    for key, hits, item in zip(keys, passages, results, strict=True):
        question = jobs[key]
        chunk_ids = tuple(hit.chunk_id for hit in hits)
        common = {
            "question_id": question.question_id,
            "doc_id": question.doc_id,
            "passages": chunk_ids,
            "scope_doc_ids": key[1],
        }
        if not item.ok:
            status = SKIPPED if item.status == "skipped" else FAILED
            answered[key] = XSumAnswerRecord(target_id="", status=status, error=item.error, **common)
        elif item.value.abstain:
            answered[key] = XSumAnswerRecord(target_id="", status=ABSTAINED, **common)
        else:
            ids = {alias(i): chunk_id for i, chunk_id in enumerate(chunk_ids)}
            text = chunk_citations(item.value.answer.strip(), ids)
            answered[key] = XSumAnswerRecord(
                target_id="", status=ANSWERED, text=text, cited=tuple(cited_chunks(text)), **common
            )
    records = []
    for target in targets:
        for doc_id in target.doc_ids:
            for question in by_doc.get(doc_id, []):
                record = answered[(question.question_id, _scope(target, doc_id, scope))]
                records.append(XSumAnswerRecord(**{**record.__dict__, "target_id": target.target_id}))
    return records


# -- summaries --------------------------------------------------------------------------------


def _sources(ids: Mapping[str, str], sources: Mapping[str, Source]) -> list[dict[str, str]]:
    return [
        {"id": name, "source": sources[cid].label if cid in sources else cid} for name, cid in ids.items()
    ]


def _summary_record(
    target_id: str, method: str, item, ids: Mapping[str, str], sources, expected: Sequence[str], used: int
) -> SummaryRecord:
    if not item.ok:
        status = SKIPPED if item.status == "skipped" else FAILED
        return SummaryRecord(
            target_id, method, status, error=item.error, answers_used=used, given=tuple(ids.values())
        )
    text = chunk_citations(item.value.text, ids)
    cited = tuple(cited_chunks(text))
    truncated = item.finish_reason == CUT_OFF
    return SummaryRecord(
        target_id,
        method,
        TRUNCATED if truncated else WRITTEN,
        text=text,
        rendered=render_citations(text, sources),
        cited=cited,
        dropped=tuple(cid for cid in expected if cid not in cited),
        finish_reason=item.finish_reason,
        answers_used=used,
        error="cut off at max_tokens twice (the second time with twice the room)" if truncated else None,
        given=tuple(ids.values()),
    )


def write_summaries(
    client: LLMClient,
    targets: Sequence[SummaryTarget],
    answers: Sequence[XSumAnswerRecord],
    questions: Mapping[str, str],
    sources: Mapping[str, Source],
) -> list[SummaryRecord]:
    """The editor's summary of each target from its answered questions (§3.5); a target whose
    questions all abstained or failed gets a ``no_input`` record saying so."""
    by_target: dict[str, list[XSumAnswerRecord]] = {}
    for record in answers:
        if record.status == ANSWERED:
            by_target.setdefault(record.target_id, []).append(record)
    runnable, records, inputs, aliases = [], {}, [], []
    for target in targets:
        usable = by_target.get(target.target_id, [])
        if not usable:
            records[target.target_id] = SummaryRecord(
                target.target_id,
                XSUM,
                NO_INPUT,
                error="no question of the target was answered (all abstained or failed)",
            )
            continue
        texts, ids = aliased([record.text for record in usable])
        runnable.append((target, usable))
        aliases.append(ids)
        inputs.append(
            {
                "topic": target.topic,
                "questions_and_answers": [
                    {"question": questions[r.question_id], "answer": text}
                    for r, text in zip(usable, texts, strict=True)
                ],
                "sources": _sources(ids, sources),
            }
        )
    batch = client.run_many(XSUM_EDITOR, inputs)
    for (target, usable), ids, item in zip(runnable, aliases, batch.items, strict=True):
        expected = list(ids.values())
        records[target.target_id] = _summary_record(
            target.target_id, XSUM, item, ids, sources, expected, len(usable)
        )
    return [records[target.target_id] for target in targets]


def plain_rag_summaries(
    client: LLMClient,
    retriever: Retriever,
    targets: Sequence[SummaryTarget],
    k: int,
    sources: Mapping[str, Source],
) -> list[SummaryRecord]:
    """The plain-RAG baseline: the topic as the only query, the top ``k`` chunks of the target's
    papers by cosine, one summary."""
    hits = [retriever.search(t.topic, k, "dense", documents=t.doc_ids) for t in targets]
    return _topic_summaries(
        client, targets, PLAIN_RAG, [[Source.of(h) for h in found] for found in hits], sources
    )


def _topic_summaries(
    client: LLMClient,
    targets: Sequence[SummaryTarget],
    method: str,
    chosen: Sequence[Sequence[Source]],
    sources,
) -> list[SummaryRecord]:
    """One summary per target from its ``chosen`` chunks, by the plain-RAG writer."""
    batch = client.run_many(
        XSUM_TOPIC_SUMMARY,
        [
            {"topic": t.topic, "passages": [passage(i, s) for i, s in enumerate(found)]}
            for t, found in zip(targets, chosen, strict=True)
        ],
    )
    return [
        _summary_record(
            t.target_id, method, item, {alias(i): s.chunk_id for i, s in enumerate(found)}, sources, [], 1
        )
        for t, found, item in zip(targets, chosen, batch.items, strict=True)
    ]


def pipeline_1_summaries(
    client: LLMClient,
    targets: Sequence[SummaryTarget],
    top_n: int,
    sources: Mapping[str, Source],
    late_interaction: LateInteraction,
) -> list[SummaryRecord]:
    """SurveySum's Pipeline 1: every chunk of the target's papers ranked against the target's title
    by a neural ranker (monoT5-3B in the paper; here late interaction, MaxSim over the bundled
    model's token vectors, the strongest ranker that runs offline), the top ``top_n`` summarised."""
    chosen = []
    for target in targets:
        papers = set(target.doc_ids)
        candidates = [source for source in sources.values() if source.doc_id in papers]
        scores = late_interaction.score(target.topic, [source.text for source in candidates])
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[:top_n]
        chosen.append([candidates[i] for i in order])
    return _topic_summaries(client, targets, PIPELINE_1, chosen, sources)


def pipeline_2_summaries(
    client: LLMClient,
    retriever: Retriever,
    targets: Sequence[SummaryTarget],
    candidates: int,
    keep: Mapping[str, int],
    sources: Mapping[str, Source],
) -> list[SummaryRecord]:
    """SurveySum's Pipeline 2: dense retrieval of ``candidates`` chunks of the target's papers on
    its title, an LLM re-rank (``rate_passages``) down to ``keep[target_id]`` chunks, summarised."""
    chosen = []
    for target in targets:
        hits = retriever.search(target.topic, candidates, "dense", documents=target.doc_ids)
        ranked = rerank(target.topic, hits, keep[target.target_id], "llm", llm=client)
        chosen.append([sources.get(hit.chunk_id) or Source.of(hit) for hit in ranked])
    return _topic_summaries(client, targets, PIPELINE_2, chosen, sources)


def abstracts_summaries(
    client: LLMClient,
    targets: Sequence[SummaryTarget],
    papers: Mapping[str, PaperInput],
    first_chunks: Mapping[str, str],
    sources: Mapping[str, Source],
) -> list[SummaryRecord]:
    """The abstracts-only baseline: the editor over the papers' abstracts, each cited as its
    paper's first chunk."""
    inputs, aliases = [], []
    for target in targets:
        docs = [doc for doc in target.doc_ids if doc in papers and doc in first_chunks]
        ids = {alias(i): first_chunks[doc] for i, doc in enumerate(docs)}
        aliases.append(ids)
        inputs.append(
            {
                "topic": target.topic,
                "questions_and_answers": [
                    {
                        "question": f"What is '{papers[doc].title}' about?",
                        "answer": f"{papers[doc].abstract} [{alias(i)}]",
                    }
                    for i, doc in enumerate(docs)
                ],
                "sources": _sources(ids, sources),
            }
        )
    batch = client.run_many(XSUM_EDITOR, inputs)
    return [
        _summary_record(t.target_id, ABSTRACTS_ONLY, item, ids, sources, list(ids.values()), len(ids))
        for t, ids, item in zip(targets, aliases, batch.items, strict=True)
    ]


def summary_citations_valid(
    records: Sequence[SummaryRecord], targets: Mapping[str, SummaryTarget], chunk_docs: Mapping[str, str]
) -> list[str]:
    """Problems with summaries' citations: an alias or chunk its writer was not given, a writer
    whose output was rejected for citing sources it was not given, a cited chunk that does not
    exist, or one of a paper outside the target."""
    problems = []
    for record in records:
        about = f"{record.method} summary of {record.target_id}"
        problems += [
            f"{about} {problem}" for problem in citation_problems(record.text, record.given, record.error)
        ]
        allowed = set(targets[record.target_id].doc_ids)
        for cid in record.cited:
            if cid not in chunk_docs:
                problems.append(f"{about} cites unknown chunk {cid[:12]}")
            elif chunk_docs[cid] not in allowed:
                problems.append(f"{about} cites chunk {cid[:12]} of a paper outside the target")
    return problems
