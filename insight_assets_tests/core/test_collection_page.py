"""The collection's page: self-contained, headline numbers first, offline stand-ins said, text escaped."""

from __future__ import annotations

import re

from insight_assets.core.page.collection_page import CollectionFacts, MethodSection, SideBySide, render_page
from insight_assets.core.page.headlines import Headline, StoredHeadline, headline_table
from insight_assets.defs.asking import Citation, citations, page_ranges

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
FACTS = CollectionFacts(
    papers=[{"title": "SPECTER <b>embeddings</b>", "file": "specter.pdf", "pages": 12}],
    problems=[{"file": "broken.pdf", "kind": "corrupted", "severity": "error", "message": "no PDF header"}],
    chunks={"section": 40, "passage": 90},
    citation_links=3,
    citation_graph_png=PNG,
)


def section(method: str, writer: str = "offline (extractive)", judge: str = "") -> MethodSection:
    table = headline_table("Scores", [{"method": method, "score": 0.123456}], ["method", "score"])
    stored = StoredHeadline(f"{method}.md", Headline((table,), ("a note",), writer, judge), PNG, "chart")
    return MethodSection(method, f"{method} title", "a paper", f"{method}.md", stored)


ANSWERED = {
    "method": "xsum",
    "answer": {
        "text": "An answer <script>alert(1)</script>",
        "citations": [{"label": "SPECTER, p. 2"}],
        "details": "",
    },
    "error": None,
    "model": "offline (extractive)",
    "calls": 3,
    "cache_hits": 1,
    "input_tokens": 100,
    "output_tokens": 20,
    "cost_usd": 0.0,
    "seconds": 1.5,
}
FAILED = {**ANSWERED, "method": "scipip", "answer": None, "error": "no ideas index (build it)"}


def test_the_page_is_self_contained_with_the_numbers_first_and_every_section():
    page = render_page(
        "demo", FACTS, [section("xsum"), section("scipip")], SideBySide("Why?", [ANSWERED, FAILED])
    )
    assert page.startswith("<!doctype html>")
    # Nothing is fetched: every picture is a data URI, no script, no stylesheet link.
    assert re.findall(r'src="([^"]+)"', page) and all(
        src.startswith("data:image/png;base64,") for src in re.findall(r'src="([^"]+)"', page)
    )
    assert "<script" not in page and "<link" not in page and "http" not in page
    assert page.index('class="numbers"') < page.index("<section")
    assert "<b>1</b>papers" in page and "<b>1</b>files not usable" in page and "<b>130</b>chunks" in page
    assert "<b>1 / 2</b>methods answered the question" in page
    assert len(re.findall(r'data-section="method"', page)) == 2 and 'data-section="collection"' in page
    assert "Could not answer: no ideas index (build it)" in page
    assert "SPECTER &lt;b&gt;embeddings&lt;/b&gt;" in page and "&lt;script&gt;" in page
    assert '<a href="xsum.md">' in page and "0.123" in page
    # Tables scroll inside their own box instead of widening the page.
    assert page.count('<div class="scroll"><table>') == page.count("<table>")


def test_offline_stand_ins_are_said_at_the_top_and_only_then():
    offline = render_page("demo", FACTS, [section("xsum")], SideBySide(None, why_not="off"))
    assert offline.index('class="standin"') < offline.index("<section")
    assert "xsum wrote" in offline
    hosted = render_page(
        "demo",
        FACTS,
        [section("xsum", writer="openai/gpt-4o-mini", judge="openai/gpt-4o")],
        SideBySide(None, why_not="off"),
    )
    assert 'class="standin"' not in hosted and "openai/gpt-4o-mini" in hosted


def test_a_method_whose_report_is_missing_says_so():
    missing = MethodSection("contregen", "ConTReGen", "a paper", "contregen_report.md", None)
    page = render_page("demo", FACTS, [missing], SideBySide(None, why_not="No question was asked."))
    assert "has not been built for this collection" in page and "No question was asked." in page
    assert "<b>0 / 1</b>method reports" in page


def test_citations_merge_a_papers_pages_in_order_of_first_citation():
    found = citations([("B", 3, 4), ("A", 1, 1), ("B", 2, 2), ("B", 9, 9), ("C", 0, 0)])
    assert found == (Citation("B", (2, 3, 4, 9)), Citation("A", (1,)), Citation("C", ()))
    assert [c.label for c in found] == ["B, pp. 2\u20134, 9", "A, p. 1", "C"]
    assert page_ranges([7, 1, 2, 3, 5]) == "1\u20133, 5, 7"


def test_an_answer_that_found_nothing_in_the_papers_is_not_counted_as_answering():
    abstained = {
        **ANSWERED,
        "method": "insight-rag",
        "answer": {**ANSWERED["answer"], "text": "Not found in the context.", "abstained": True},
    }
    page = render_page("demo", FACTS, [section("xsum")], SideBySide("Why?", [ANSWERED, abstained, FAILED]))
    assert "<b>1 / 3</b>methods answered the question" in page
    assert "It found no answer in the papers: not counted as answered." in page
