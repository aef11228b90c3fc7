"""The tree: top-down planning and retrieval with two-step verification (§2.1), then bottom-up
synthesis (§2.2).

Both stages go level by level over all the questions at once, so each level's calls of one kind
are one batch (``run_many`` runs them concurrently against a provider). A call that fails is
recorded on its node, with its reason, and the rest of the tree goes on: a failed plan leaves its
node a leaf, a failed verification prunes the sub-questions it was about, a failed synthesis
leaves its node's summary out of its parent's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from insight_assets.core.embedding.vectors import normalize_rows
from insight_assets.core.startup.lazy import np

from ...llm.results import TRUNCATED as CUT_OFF
from ...retrieval.citing import Source, aliased, chunk_citations, passage, without_unknown_chunks
from ...text import count_tokens, cut_to_tokens, sentence_texts
from .schemas import (
    DEPTH_LIMIT,
    EXPANDED,
    FAILED,
    KEPT,
    NO_FURTHER_PLAN,
    NO_INPUT,
    PLAN_FAILED,
    PRUNED_NO_PASSAGE,
    PRUNED_NOT_NEEDED,
    ROOT,
    TRUNCATED,
    WRITTEN,
    Tree,
    TreeNode,
    TreePassage,
    TreeQuestion,
    Usage,
)
from .tasks import (
    CONTREGEN_ANSWER,
    CONTREGEN_JUDGE_PASSAGES,
    CONTREGEN_PLAN,
    CONTREGEN_SUMMARIZE,
    CONTREGEN_VERIFY_SUB_QUESTIONS,
)

if TYPE_CHECKING:
    from ...llm import LLMClient, Task
    from ...retrieval import Hit, Retriever

# What a synthesis prompt's template and source list take beside its passages and findings.
TEMPLATE_TOKENS = 700
NODE_SUMMARY_WORDS = 200


def spend(usage: Usage, task: Task[Any], inputs: Mapping[str, Any], item) -> None:
    """Count one call: the rendered prompt's tokens and the reply's (a skipped item cost nothing)."""
    if item.status == "skipped":
        return
    prompt = task.render(task.complete_inputs(inputs))
    reply = ""
    if item.ok:
        value = item.value
        reply = getattr(value, task.text_field) if task.text_field else value.model_dump_json()
    usage.add(1, count_tokens(prompt), count_tokens(reply))


def _cosines(vectors: np.ndarray, against: np.ndarray) -> np.ndarray:
    return normalize_rows(vectors) @ normalize_rows(against).T


# -- top-down planning and retrieval -------------------------------------------------------------


def _path(tree: Tree, node: TreeNode) -> list[TreeNode]:
    """The node's ancestors from the root, and the node."""
    path = [node]
    while path[-1].parent_id is not None:
        path.append(tree.nodes[path[-1].parent_id])
    return path[::-1]


def _explored(tree: Tree, node: TreeNode) -> list[str]:
    """The questions a plan for ``node`` must not repeat: its path, and its kept siblings."""
    asked = [n.question for n in _path(tree, node)]
    if node.parent_id is not None:
        siblings = tree.nodes[node.parent_id].children
        asked += [tree.nodes[s].question for s in siblings if s != node.node_id and tree.nodes[s].kept]
    return list(dict.fromkeys(asked))


def _node_passages(node: TreeNode, sources: Mapping[str, Source]) -> list[dict[str, str]]:
    return [passage(i, sources[p.chunk_id]) for i, p in enumerate(node.relevant_passages)]


def search_each(
    retriever: Retriever,
    texts: Sequence[str],
    ks: Sequence[int],
    mode: str,
    sources: dict[str, Source],
    vectors: Sequence[np.ndarray] | None = None,
) -> list[list[Hit]]:
    """The ``ks[i]`` best chunks for each ``texts[i]`` (embedded in one batch unless ``vectors``
    are given); every hit is added to ``sources``."""
    if vectors is None:
        vectors = retriever.embed(list(texts)) if texts and mode != "lexical" else [None] * len(texts)
    found = []
    for text, k, vector in zip(texts, ks, vectors, strict=True):
        hits = retriever.search(text, k, mode, query_vector=vector)
        sources.update((hit.chunk_id, Source.of(hit)) for hit in hits)
        found.append(hits)
    return found


def explore(
    client: LLMClient,
    retriever: Retriever,
    questions: Sequence[TreeQuestion],
    settings,
) -> tuple[list[Tree], dict[str, Source]]:
    """Each question's tree, to ``settings.max_depth``; and every retrieved chunk as a source."""
    trees = [
        Tree(q, {"0": TreeNode(q.question_id, "0", None, 0, q.question, q.question, ROOT)}) for q in questions
    ]
    if not trees:
        return [], {}
    query_vectors = retriever.embed([q.question for q in questions])
    sources: dict[str, Source] = {}

    def retrieve(texts: list[str], vectors: Sequence[np.ndarray] | None = None) -> list[list[TreePassage]]:
        found = search_each(
            retriever, texts, [settings.top_k] * len(texts), settings.retrieval_mode, sources, vectors
        )
        return [[TreePassage(h.chunk_id, h.doc_id, h.score) for h in hits] for hits in found]

    roots = retrieve([q.question for q in questions], list(query_vectors))
    floors = {}
    for tree, passages, vector in zip(trees, roots, query_vectors, strict=True):
        tree.root.passages = passages
        best = max(retriever.similarities(vector, [p.chunk_id for p in passages]), default=0.0)
        floors[tree.question.question_id] = settings.relevance_ratio * best
    vector_of = {t.question.question_id: v for t, v in zip(trees, query_vectors, strict=True)}

    frontier = [(tree, tree.root) for tree in trees]
    for depth in range(settings.max_depth):
        planned = _plan(client, frontier, sources, settings)
        children = _verify_sub_questions(client, retriever, planned, vector_of, settings)
        found = retrieve([child.search_query for _, child in children])
        frontier = _judge_passages(client, retriever, children, found, vector_of, floors, sources)
    for _, node in frontier:
        node.expansion = DEPTH_LIMIT
        node.expansion_reason = f"depth {node.depth} is the limit"
    return trees, sources


def _plan(client, frontier, sources, settings) -> list[tuple[Tree, TreeNode, list[str]]]:
    inputs = [
        {
            "query": tree.question.question,
            "question": node.question,
            "explored": _explored(tree, node),
            "passages": _node_passages(node, sources),
            "max_sub_questions": settings.max_sub_questions,
        }
        for tree, node in frontier
    ]
    batch = client.run_many(CONTREGEN_PLAN, inputs)
    planned = []
    for (tree, node), item, given in zip(frontier, batch.items, inputs, strict=True):
        spend(tree.usage, CONTREGEN_PLAN, given, item)
        if not item.ok:
            node.expansion, node.expansion_reason, node.error = (
                PLAN_FAILED,
                "the plan call failed",
                item.error,
            )
            continue
        sub_questions = [q.strip() for q in item.value.sub_questions if q.strip()]
        if not item.value.further_plan_needed or not sub_questions:
            node.expansion = NO_FURTHER_PLAN
            node.expansion_reason = "the planner found no further plan needed"
            continue
        node.expansion = EXPANDED
        planned.append((tree, node, sub_questions[: settings.max_sub_questions]))
    return planned


def _verify_sub_questions(client, retriever, planned, vector_of, settings) -> list[tuple[Tree, TreeNode]]:
    """Step i: one call per plan says which sub-questions are needed and rewrites those."""
    if not planned:
        return []
    texts = [q for _, _, subs in planned for q in subs]
    vectors = iter(retriever.embed(texts))
    inputs = []
    for tree, node, subs in planned:
        mine = np.stack([next(vectors) for _ in subs])
        explored = retriever.embed(_explored(tree, node))
        to_query = _cosines(mine, vector_of[tree.question.question_id][None, :])[:, 0]
        to_explored = _cosines(mine, explored).max(axis=1)
        among = _cosines(mine, mine)
        items = []
        for i, text in enumerate(subs):
            repeat = max([float(to_explored[i]), *(float(among[i, j]) for j in range(i))])
            items.append({"index": i + 1, "text": text, "similarity": float(to_query[i]), "repeat": repeat})
        inputs.append(
            {
                "query": tree.question.question,
                "parent": node.question,
                "sub_questions": items,
                "need_similarity": settings.need_similarity,
                "repeat_similarity": settings.repeat_similarity,
            }
        )
    batch = client.run_many(CONTREGEN_VERIFY_SUB_QUESTIONS, inputs)
    kept = []
    for (tree, node, subs), item, given in zip(planned, batch.items, inputs, strict=True):
        spend(tree.usage, CONTREGEN_VERIFY_SUB_QUESTIONS, given, item)
        verdicts = {v.index: v for v in item.value.verdicts} if item.ok else {}
        for i, text in enumerate(subs, 1):
            child = TreeNode(
                tree.question.question_id, f"{node.node_id}.{i}", node.node_id, node.depth + 1, text, "", KEPT
            )
            if not item.ok:
                child.status, child.reason, child.error = FAILED, "the verification call failed", item.error
            elif not verdicts[i].needed:
                child.status, child.reason = PRUNED_NOT_NEEDED, verdicts[i].reason
            else:
                child.search_query, child.reason = verdicts[i].search_query.strip(), verdicts[i].reason
                kept.append((tree, child))
            tree.nodes[child.node_id] = child
            node.children.append(child.node_id)
    return kept


def _judge_passages(
    client, retriever, children, found, vector_of, floors, sources
) -> list[tuple[Tree, TreeNode]]:
    """Step ii: one call per sub-question judges its passages against the original query."""
    inputs, judged = [], []
    for (tree, child), passages in zip(children, found, strict=True):
        child.passages = passages
        if not passages:
            child.status, child.reason = PRUNED_NO_PASSAGE, "its search query retrieved nothing"
            continue
        qid = tree.question.question_id
        similarity = retriever.similarities(vector_of[qid], [p.chunk_id for p in passages])
        inputs.append(
            {
                "query": tree.question.question,
                "question": child.question,
                "passages": [
                    {**passage(i, sources[p.chunk_id]), "similarity": s}
                    for i, (p, s) in enumerate(zip(passages, similarity, strict=True))
                ],
                "floor": floors[qid],
            }
        )
        judged.append((tree, child))
    batch = client.run_many(CONTREGEN_JUDGE_PASSAGES, inputs)
    frontier = []
    for (tree, child), item, given in zip(judged, batch.items, inputs, strict=True):
        spend(tree.usage, CONTREGEN_JUDGE_PASSAGES, given, item)
        if not item.ok:
            child.status, child.reason, child.error = (
                FAILED,
                "the passage verification call failed",
                item.error,
            )
            continue
        verdicts = {v.id: v for v in item.value.verdicts}
        for i, p in enumerate(child.passages):
            verdict = verdicts[f"S{i + 1}"]
            p.relevant, p.reason = verdict.relevant, verdict.reason
        if not child.relevant_passages:
            child.status = PRUNED_NO_PASSAGE
            child.reason = f"none of its {len(child.passages)} passages is relevant to the original query"
            continue
        frontier.append((tree, child))
    return frontier


# -- bottom-up synthesis ---------------------------------------------------------------------------


def fit_sentences(texts: Sequence[str], budget: int) -> list[str]:
    """``texts`` as they are when they fit ``budget`` tokens together; otherwise each cut to whole
    sentences within an equal share of it."""
    if sum(count_tokens(text) for text in texts) <= budget:
        return list(texts)
    share = max(budget // max(len(texts), 1), 1)
    fitted = []
    for text in texts:
        kept, used = [], 0
        for sentence in sentence_texts(text):
            size = count_tokens(sentence)
            if used + size > share:
                break
            kept.append(sentence)
            used += size
        fitted.append(" ".join(kept) if kept else cut_to_tokens(text, share))
    return fitted


def passages_within(chunk_ids: Sequence[str], sources: Mapping[str, Source], budget: int) -> list[str]:
    """The leading chunks whose texts fit ``budget`` tokens together (at least one)."""
    kept, used = [], 0
    for chunk_id in chunk_ids:
        size = count_tokens(sources[chunk_id].text) + 20  # its id and source label
        if kept and used + size > budget:
            break
        kept.append(chunk_id)
        used += size
    return kept


def synthesis_inputs(
    question: str | None,
    query: str,
    chunk_ids: Sequence[str],
    findings: Sequence[tuple[str, str]],
    sources: Mapping[str, Source],
    words: int,
    context_tokens: int,
) -> tuple[dict[str, Any], dict[str, str]]:
    """A synthesis prompt's inputs within ``context_tokens``: its passages (as many as fit), its
    findings ((question, summary citing chunk ids), cut to whole sentences to fit the rest), and
    the sources the findings cite; and the aliases' chunk ids. ``question`` is a node's
    sub-question (``None`` for an answer to ``query`` itself)."""
    budget = context_tokens - TEMPLATE_TOKENS
    own = passages_within(chunk_ids, sources, budget) if chunk_ids else []
    budget -= sum(count_tokens(sources[c].text) + 20 for c in own)
    # A finding that cites a chunk no source holds (its writer made it up) passes on without it.
    texts, ids = aliased([without_unknown_chunks(summary, sources) for _, summary in findings], first=own)
    cited = [name for name, cid in ids.items() if cid not in own]
    budget -= 20 * len(cited)
    texts = fit_sentences(texts, max(budget, 0))
    inputs = {
        "query": query,
        "passages": [passage(i, sources[cid]) for i, cid in enumerate(own)],
        "findings": [{"question": q, "summary": text} for (q, _), text in zip(findings, texts, strict=True)],
        "sources": [{"id": name, "source": sources[ids[name]].label} for name in cited],
        "words": words,
    }
    if question is not None:
        inputs["question"] = question
    return inputs, ids


def synthesize(client: LLMClient, trees: Sequence[Tree], sources: Mapping[str, Source], settings) -> None:
    """Every kept node's summary, deepest level first; the root's is the answer (``root.summary``)."""
    deepest = max((n.depth for tree in trees for n in tree.nodes.values()), default=0)
    for depth in range(deepest, -1, -1):
        level = [(t, n) for t in trees for n in t.nodes.values() if n.depth == depth and n.kept]
        jobs: dict[Task[Any], list[tuple[Tree, TreeNode, dict[str, Any], dict[str, str]]]] = {}
        for tree, node in level:
            findings = [
                (tree.nodes[c].question, tree.nodes[c].summary)
                for c in node.children
                if tree.nodes[c].kept and tree.nodes[c].summary
            ]
            chunk_ids = [p.chunk_id for p in node.relevant_passages if p.chunk_id in sources]
            if not chunk_ids and not findings:
                node.summary_status = NO_INPUT
                node.error = node.error or "no relevant passage and no child summary to synthesize"
                continue
            is_root = node.parent_id is None
            inputs, ids = synthesis_inputs(
                None if is_root else node.question,
                tree.question.question,
                chunk_ids,
                findings,
                sources,
                settings.answer_words if is_root else NODE_SUMMARY_WORDS,
                settings.context_tokens,
            )
            task = CONTREGEN_ANSWER if is_root else CONTREGEN_SUMMARIZE
            jobs.setdefault(task, []).append((tree, node, inputs, ids))
        for task, items in jobs.items():
            batch = client.run_many(task, [inputs for _, _, inputs, _ in items])
            for (tree, node, inputs, ids), item in zip(items, batch.items, strict=True):
                spend(tree.usage, task, inputs, item)
                if not item.ok:
                    node.summary_status = FAILED
                    node.error = f"synthesis failed: {item.error or item.status}"
                    continue
                node.summary = chunk_citations(item.value.text.strip(), ids)
                node.summary_status = TRUNCATED if item.finish_reason == CUT_OFF else WRITTEN
