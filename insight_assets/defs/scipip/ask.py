"""SciPIP's ``ask`` flow: research ideas with the question as their background, the same as
``insight-assets ideas`` gives for it (``stages.ideas_for``: the build's settings)."""

from __future__ import annotations

from insight_assets.defs.asking import Asked, AskFailed, AskFlow, MethodAnswer, citations


def ideas_text(run, papers, writer: str) -> str:
    """The papers a background retrieved, with the routes that found them, and the ideas."""
    from insight_assets.core.methods.scipip.schemas import DUAL

    lines = ["Retrieved papers (SKC, then the filter):"]
    lines += [
        f"- {papers[doc].title if doc in papers else doc}  [{', '.join(run.retrieval.routes[doc])}]"
        for doc in run.retrieval.selected
    ]
    lines.append(f"\nIdeas ({writer}):")
    for number, idea in enumerate(run.integrated, start=1):
        detail = run.expansion(DUAL, number - 1)
        lines.append(f"\n{number}. {idea.title}\n   {idea.idea}")
        if detail is not None and detail.method != f"{idea.title}: {idea.idea}":  # offline repeats it
            lines.append(f"   Problem: {detail.problem}\n   Method: {detail.method}")
            lines.append(f"   Expected outcome: {detail.expected_outcome}")
        if idea.inspired_by:
            lines.append(f"   Inspired by: {'; '.join(idea.inspired_by)}")
    return "\n".join(lines)


def answer(asked: Asked, client) -> MethodAnswer:
    """SciPIP's ideas with the question as the research background (``ideas_for``: the settings the
    collection was built with); citations are the retrieved papers (their summaries, so no pages)."""
    from insight_assets.core.methods import scipip
    from insight_assets.core.methods.scipip.stages import ideas_for
    from insight_assets.defs.materialization import scope_of

    background = scipip.Background(scipip.backgrounds.background_id(asked.question), asked.question)
    found = ideas_for(scope_of(asked.storage, asked.embedder, client, asked.collection), [background])
    (run,) = found.runs
    if not run.integrated:
        raise AskFailed(
            "no idea was proposed: " + ("; ".join(map(str, run.errors)) or "every path came back empty")
        )
    papers = found.papers
    return MethodAnswer(
        text=ideas_text(run, papers, client.provider_label),
        citations=citations(
            (papers[doc].title if doc in papers else doc, 0, 0) for doc in run.retrieval.selected
        ),
    )


ASK = AskFlow("scipip", "research ideas with the question as their background (SciPIP)", answer)
