"""Two snapshots of a collection compared (core/changes/): papers, themes matched by membership,
findings and why they changed; the history kept in a real warehouse file and read back."""

from __future__ import annotations

import dataclasses

import pytest

from insight_assets.core.changes import store
from insight_assets.core.changes.compare import carry_theme_ids, compare
from insight_assets.core.changes.digest import as_data, as_markdown, headline
from insight_assets.core.changes.snapshot import Finding, Paper, Snapshot, Theme
from insight_assets.core.storage.stores import Warehouse


def _paper(doc: str, chunks: int = 4, title: str | None = None, file: str | None = None) -> Paper:
    return Paper(
        doc,
        file or f"{doc}.pdf",
        title or f"Paper {doc}",
        ("A. Author",),
        2024,
        None,
        tuple(f"{doc}c{n}" for n in range(chunks)),
    )


def _theme(theme_id: int, label: str, chunks: list[str]) -> Theme:
    return Theme(theme_id, label, tuple(chunks), tuple(sorted({chunk.split("c")[0] for chunk in chunks})))


def _finding(key: str, text: str, cites: list[str], writer: str = "model-a") -> Finding:
    return Finding(
        "insight",
        key,
        "insightgen",
        "insightgen",
        "How?",
        text,
        tuple(cites),
        tuple(f"{doc}c0" for doc in cites),
        writer,
        "insights",
    )


def _snapshot(build: str, papers, themes, findings, steps=None, at="2026-12-01T10:00:00+00:00") -> Snapshot:
    return Snapshot(
        "c",
        build,
        at,
        {p.doc_id: p for p in papers},
        themes,
        findings,
        steps or {"insights": {"settings": "1|config|models", "upstream": "themes-1"}},
    )


BEFORE = _snapshot(
    "run-1",
    [_paper("a"), _paper("b")],
    [_theme(0, "graphs", ["ac0", "ac1", "bc0"]), _theme(1, "text", ["ac2", "ac3", "bc1", "bc2", "bc3"])],
    [_finding("q1/insightgen/0", "A graph of themes.", ["a"]), _finding("q1/insightgen/1", "Text.", ["b"])],
)


def test_an_added_paper_is_listed_with_the_themes_it_joined_and_the_findings_that_cite_it():
    after = _snapshot(
        "run-2",
        [_paper("a"), _paper("b"), _paper("n", 2)],
        # Renumbered by a refit: the theme holding the old "text" chunks keeps id 1 and gains "n".
        [
            _theme(0, "text", ["ac2", "ac3", "bc1", "bc2", "bc3", "nc0"]),
            _theme(1, "graphs", ["ac0", "ac1", "bc0"]),
            _theme(2, "new things", ["nc1"]),
        ],
        [
            _finding("q1/insightgen/0", "A graph of themes.", ["a"]),
            _finding("q1/insightgen/1", "Text and N.", ["b", "n"]),
            _finding("q2/insightgen/0", "What N says.", ["n"]),
        ],
        at="2026-12-02T10:00:00+00:00",
    )
    change_set, kept = compare(BEFORE, after)
    assert [(c.change, c.key) for c in change_set.of("paper")] == [("added", "n")]
    assert {t.label: t.theme_id for t in kept.themes} == {"text": 1, "graphs": 0, "new things": 2}
    themes = {c.key: c for c in change_set.of("theme")}
    assert set(themes) == {"1", "2"} and themes["1"].detail["papers_gained"] == ["n"]
    assert themes["2"].change == "new"
    findings = {c.key: c for c in change_set.changes if c.kind == "insight"}
    assert findings["q1/insightgen/1"].change == "changed" and findings["q1/insightgen/1"].cause == "papers"
    assert findings["q1/insightgen/1"].before == "Text." and findings["q2/insightgen/0"].change == "new"
    assert "q1/insightgen/0" not in findings and change_set.unchanged["insight"] == 1

    data = as_data(change_set)
    (paper,) = data["papers"]
    assert paper["chunks_added"] == 2 and [t["theme_id"] for t in paper["themes_joined"]] == [1, 2]
    assert [f["cites"] for f in data["findings"] if f["change"] == "new"] == [
        [{"doc_id": "n", "title": "Paper n"}]
    ]
    markdown = as_markdown(data)
    assert "added: **Paper n**" in markdown and "(index.html#method-insightgen)" in markdown
    assert headline(change_set).endswith(": 1 paper added; 1 theme changed, 1 new; 1 finding changed, 1 new")


def test_a_finding_made_from_the_added_paper_is_put_down_to_it_though_it_does_not_cite_it():
    # A question over papers a, b and n (a combination the added paper made) whose insight cites
    # only a; an older question's insight changed with nothing of n behind it.
    made_from_n = dataclasses.replace(
        _finding("q2/insightgen/0", "What a says.", ["a"]), drawn_from=("a", "b", "n")
    )
    after = _snapshot(
        "run-2",
        [_paper("a"), _paper("b"), _paper("n", 2)],
        BEFORE.themes,
        [BEFORE.findings[0], dataclasses.replace(BEFORE.findings[1], text="Text, again."), made_from_n],
        at="2026-12-02T10:00:00+00:00",
    )
    change_set, _ = compare(BEFORE, after)
    findings = {c.key: c for c in change_set.changes if c.kind == "insight"}
    assert (findings["q2/insightgen/0"].change, findings["q2/insightgen/0"].cause) == ("new", "papers")
    assert findings["q1/insightgen/1"].cause == "collection"
    data = as_data(change_set)
    new = next(f for f in data["findings"] if f["key"] == "q2/insightgen/0")
    assert new["cites"] == [{"doc_id": "a", "title": "Paper a"}]
    assert [p["doc_id"] for p in new["drawn_from"]] == ["b", "n"]
    assert data["findings"][0]["key"] == "q2/insightgen/0"  # what the change brought comes first
    assert "Cites: Paper a. Made from: Paper b; Paper n." in as_markdown(data)
    # The older question's insight is listed apart, with how InsightGen reads every paper.
    assert data["headline"].endswith("1 finding new; 1 other finding moved through collection-wide steps")
    markdown = as_markdown(data)
    moved = markdown[markdown.index("### Moved through the collection (1: InsightGen 1)") :]
    assert "### Changed findings" not in markdown and "- InsightGen: a question's context" in moved
    assert "Text, again." in moved and list(data["through_collection"]) == ["insightgen"]


def test_a_removed_paper_takes_its_findings_and_a_theme_keeps_its_id_while_most_chunks_stay():
    after = _snapshot(
        "run-2",
        [_paper("a")],
        [_theme(0, "graphs", ["ac0", "ac1"]), _theme(1, "text", ["ac2", "ac3"])],
        [_finding("q1/insightgen/0", "A graph of themes.", ["a"])],
    )
    change_set, kept = compare(BEFORE, after)
    assert [(c.change, c.key, c.detail["chunks_removed"]) for c in change_set.of("paper")] == [
        ("removed", "b", 4)
    ]
    assert [t.theme_id for t in kept.themes] == [0, 1]
    assert {c.key: c.detail["papers_lost"] for c in change_set.of("theme")} == {"0": ["b"], "1": ["b"]}
    (gone,) = change_set.of("insight", "gone")
    assert gone.key == "q1/insightgen/1" and gone.doc_ids == ("b",) and gone.before == "Text."
    assert as_data(change_set)["findings"][0]["cites"] == [{"doc_id": "b", "title": "Paper b"}]


def _summary(theme: int, text: str, cites: list[str]) -> Finding:
    return Finding(
        "summary",
        f"theme-{theme}/xsum",
        "xsum",
        "xsum",
        "a label",
        text,
        tuple(cites),
        (),
        "m",
        "xsum_summaries",
        tuple(cites),
        theme=theme,
    )


def test_a_themes_summary_is_changed_when_the_theme_gains_a_paper_though_the_graph_renumbered_it():
    before = dataclasses.replace(BEFORE, findings=[_summary(1, "On text.", ["a", "b"])])
    after = _snapshot(
        "run-2",
        [_paper("a"), _paper("b"), _paper("n", 2)],
        # The "text" theme is number 0 in the new graph, relabelled by the chunks it gained.
        [
            _theme(0, "text and n", ["ac2", "ac3", "bc1", "bc2", "bc3", "nc0", "nc1"]),
            _theme(1, "graphs", ["ac0", "ac1", "bc0"]),
        ],
        [_summary(0, "On text and n.", ["a", "b", "n"])],
    )
    change_set, kept = compare(before, after)
    (summary,) = change_set.of("summary")
    assert (summary.key, summary.change, summary.cause) == ("theme-1/xsum", "changed", "papers")
    assert summary.before == "On text." and summary.after == "On text and n."
    # The snapshot kept for the next build keys it by the id the theme keeps.
    assert [(f.key, f.theme) for f in kept.findings] == [("theme-1/xsum", 1)]


def test_a_theme_that_keeps_less_than_its_share_gets_a_new_id():
    before = [_theme(0, "t", ["x1", "x2", "x3", "x4"])]
    kept = carry_theme_ids(before, [_theme(0, "t", ["x1", "y1"]), _theme(1, "u", ["x2", "x3", "x4"])], 0.5)
    assert [t.theme_id for t in kept] == [1, 0]
    split = [_theme(5, "t", ["x1", "x2"]), _theme(6, "u", ["x3", "x4", "y1"])]
    assert [t.theme_id for t in carry_theme_ids(before, split, 0.75)] == [1, 2]
    # Chunks that left the collection do not count against a theme.
    assert [t.theme_id for t in carry_theme_ids(before, split[:1], 0.75)] == [0]


def test_a_changed_text_a_changed_title_and_the_cause_of_each_changed_finding():
    replaced = dataclasses.replace(_paper("a2", file="a.pdf"))
    retitled = _paper("b", title="Paper b, second edition")
    after = _snapshot(
        "run-2",
        [replaced, retitled],
        BEFORE.themes,
        [_finding("q1/insightgen/0", "Another graph.", ["a2"]), _finding("q1/insightgen/1", "Text.", ["b"])],
    )
    change_set, _ = compare(BEFORE, after)
    changes = {c.key: c for c in change_set.of("paper")}
    assert changes["a2"].change == "text changed" and changes["a2"].doc_ids == ("a", "a2")
    assert changes["b"].detail["fields"] == {
        "title": {"before": "Paper b", "after": "Paper b, second edition"}
    }
    assert change_set.of("insight")[0].cause == "papers"

    same_papers = _snapshot(
        "run-2",
        [_paper("a"), _paper("b")],
        BEFORE.themes,
        [_finding("q1/insightgen/0", "Worded anew.", ["a"]), BEFORE.findings[1]],
    )
    (by_model,) = compare(BEFORE, same_papers)[0].changes
    assert by_model.cause == "model"
    resettled = dataclasses.replace(
        same_papers, steps={"insights": {"settings": "1|other config|models", "upstream": "themes-1"}}
    )
    (by_settings,) = compare(BEFORE, resettled)[0].changes
    assert by_settings.cause == "settings"
    refitted = dataclasses.replace(
        same_papers, steps={"insights": {"settings": "1|config|models", "upstream": "themes-2"}}
    )
    (by_upstream,) = compare(BEFORE, refitted)[0].changes
    assert by_upstream.cause == "upstream"
    # Another step's settings are not this finding's cause.
    xsum_before = dataclasses.replace(BEFORE, steps={**BEFORE.steps, "xsum_summaries": {"settings": "1"}})
    xsum_after = dataclasses.replace(
        same_papers, steps={**same_papers.steps, "xsum_summaries": {"settings": "2"}}
    )
    (by_model_still,) = compare(xsum_before, xsum_after)[0].changes
    assert by_model_still.cause == "model"
    other_paper = _snapshot("run-2", [_paper("a"), _paper("b", 5)], BEFORE.themes, same_papers.findings)
    assert {c.key: c.cause for c in compare(BEFORE, other_paper)[0].changes}[
        "q1/insightgen/0"
    ] == "collection"


def test_the_first_build_and_an_unchanged_one_say_so_in_one_line():
    first, _ = compare(None, BEFORE)
    assert first.first and headline(first).endswith("nothing to compare with")
    same, _ = compare(
        BEFORE, dataclasses.replace(BEFORE, build_id="run-2", built_at="2026-12-02T10:00:00+00:00")
    )
    assert not same.changed and headline(same) == "nothing changed since the build of 2026-12-01 10:00 UTC"
    assert (
        as_markdown(as_data(same))
        == "## What changed in `c`\n\nNothing changed since the build of 2026-12-01 10:00 UTC.\n"
    )


def test_the_history_is_kept_and_read_back_from_the_warehouse(tmp_path):
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    with pytest.raises(store.NoSuchBuild):
        store.digest_data(warehouse, "c")
    first, kept = compare(None, BEFORE)
    store.record(warehouse, first, kept)
    after = _snapshot(
        "run-2", [_paper("a")], BEFORE.themes[:1], BEFORE.findings[:1], at="2026-12-02T10:00:00+00:00"
    )
    assert store.previous_snapshot(warehouse, "c", "run-2") == BEFORE
    change_set, kept = compare(store.previous_snapshot(warehouse, "c", "run-2"), after)
    store.record(warehouse, change_set, kept)
    assert store.change_set_of(warehouse, "c", "run-2") == change_set
    assert [c.build_id for c in store.change_sets(warehouse, "c")] == ["run-2", "run-1"]
    assert store.digest_data(warehouse, "c") == as_data(change_set)
    # --since a build, or a date: compared with the build it names or the last one before it.
    assert store.digest_data(warehouse, "c", "run-1")["findings"] == as_data(change_set)["findings"]
    assert store.digest_data(warehouse, "c", "2026-12-02")["previous_build"] == "run-1"
    with pytest.raises(store.NoSuchBuild, match="neither a date"):
        store.digest_data(warehouse, "c", "yesterday")


def test_a_graph_that_comes_back_is_no_change_since_the_build_that_had_it(tmp_path):
    """A paper added splits a theme (the halves take ids of their own) and, removed again, gives the
    first graph back: build to build the ids moved, but since the first build no theme changed."""
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    first, kept = compare(None, BEFORE)
    store.record(warehouse, first, kept)
    split = [  # theme 0 in three, none with half of its chunks: three new ids
        _theme(0, "graphs", ["ac0", "cc0", "cc1"]),
        _theme(1, "more graphs", ["ac1", "cc2"]),
        _theme(2, "other graphs", ["bc0", "cc3"]),
        _theme(3, "text", ["ac2", "ac3", "bc1", "bc2", "bc3"]),
    ]
    grown = _snapshot(
        "run-2",
        [_paper("a"), _paper("b"), _paper("c")],
        split,
        BEFORE.findings,
        at="2026-12-02T10:00:00+00:00",
    )
    again = dataclasses.replace(BEFORE, build_id="run-3", built_at="2026-12-03T10:00:00+00:00")
    for snapshot in (grown, again):
        change_set, kept = compare(store.previous_snapshot(warehouse, "c", snapshot.build_id), snapshot)
        store.record(warehouse, change_set, kept)
    back = store.change_set_of(warehouse, "c", "run-3")
    assert {c.key for c in back.changes if c.kind == "theme"} - {"0"}  # build to build, the ids moved
    since_first = store.digest_data(warehouse, "c", "run-1")
    assert since_first["papers"] == since_first["themes"] == since_first["findings"] == []


def test_an_insight_is_made_from_the_papers_its_context_held_and_a_judge_score_from_every_context(tmp_path):
    import insight_assets.core.methods.insightgen.store  # noqa: F401 - declares InsightGen's tables
    from insight_assets.core.changes.snapshot import take_snapshot
    from insight_assets.core.startup.lazy import pa

    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    rows = {
        "parsed_documents": [{"collection": "c", "doc_id": doc, "file": f"{doc}.pdf"} for doc in "abn"],
        "chunks": [
            {"collection": "c", "profile": "p", "chunk_id": f"{doc}c0", "doc_id": doc, "chunk_index": 0}
            for doc in "abn"
        ],
        # A question over papers a and b; InsightGen's context took in a chunk of paper n, CoT's did not.
        "generated_questions": [
            {"collection": "c", "question_id": "q", "question": "How?", "doc_ids": ["a", "b"]}
        ],
        "insight_runs": [
            {"collection": "c", "question_id": "q", "method": "insightgen", "chunk_ids": ["ac0", "nc0"]},
            {"collection": "c", "question_id": "q", "method": "cot", "chunk_ids": ["bc0"]},
        ],
        "insights": [
            {
                "collection": "c",
                "question_id": "q",
                "method": method,
                "insight_index": 0,
                "hook": "H",
                "body": "B",
                "chunk_ids": ["ac0"],
                "writer": "m",
            }
            for method in ("insightgen", "cot")
        ],
        "judge_scores": [
            {
                "collection": "c",
                "judge": "m",
                "level": "set",
                "question_id": "q",
                "method": "cot",
                "repetition": 0,
                "label": "A",
                "insight_index": -1,
                "overall": 3.0,
            }
        ],
    }
    warehouse.replace_partition("c", {name: pa.Table.from_pylist(found) for name, found in rows.items()})

    snapshot = take_snapshot(warehouse, "c", "run-1", "2026-12-04T10:00:00+00:00")

    drawn = {(f.kind, f.method): f.drawn_from for f in snapshot.findings}
    assert drawn[("insight", "insightgen")] == ("a", "b", "n")
    assert drawn[("insight", "cot")] == ("a", "b")
    # The judges compare every method's insights of the question at once.
    assert drawn[("judge score", "cot")] == ("a", "b", "n")
