"""The collection's page (``collection_report``) on the demo, built offline: every method's section,
one question put to all of them, and in a real browser (Debian's chromium, headless) every
section there, every picture loaded, no console error, no request, no sideways overflow on a phone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from insight_assets.core.page.headlines import load_headlines
from insight_assets.defs import asking
from insight_assets.defs.domain import method_pages
from insight_assets.defs.resources import EmbedderResource
from insight_assets_tests.defs.helpers import metadata

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
METHODS = {page.method for page in method_pages()}


def test_the_page_shows_the_collection_every_method_and_one_question_put_to_all(demo_offline):
    assert demo_offline.result.success
    shown = metadata(demo_offline.result, "collection_report")
    page = Path(shown["page"])
    assert page == (demo_offline.root / "reports" / "demo" / "index.html").resolve()
    assert shown["methods_reported"] == len(METHODS) == 5
    # Offline, Insight-RAG's rule-based reader finds no answer to the demo's question and says so
    # ("Not found in the context."): an answer, not counted among those that answered.
    assert shown["methods_answered"] == 4, shown["preview"]
    assert (
        "| insight-rag | insight_rag_report.md | no: it found no answer in the papers |" in shown["preview"]
    )
    html = page.read_text()
    assert "<b>4 / 5</b>methods answered the question" in html
    for method in METHODS:
        assert f'data-method="{method}"' in html
    # Every method's markdown report is linked, beside the page.
    for page_section in method_pages():
        assert f'href="{page_section.report_file}"' in html
        assert (page.parent / page_section.report_file).is_file()
    assert 'class="standin"' in html and "Offline stand-ins" in html  # offline, and said so first
    question = demo_offline.storage.warehouse.rows(
        "SELECT question FROM generated_answers WHERE collection = 'demo' AND status = 'kept' ORDER BY position"
    )[0]["question"]
    assert question in shown["preview"]


def test_every_report_says_what_is_measured_and_the_page_shows_no_placeholder(demo_offline):
    reports = demo_offline.root / "reports" / "demo"
    for name in ("xsum_report.md", "contregen_report.md", "insight_rag_report.md"):
        text = (reports / name).read_text()
        assert "- measured: " in text and "placeholders until a model runs: " in text, name
    for name in ("method_report.md", "scipip_report.md"):
        assert "Not judged: needs a model" in (reports / name).read_text(), name
    assert "ranked by rougeL)" in (reports / "xsum_report.md").read_text()  # not by the stand-in judge

    headlines = load_headlines(demo_offline.storage.warehouse, "demo")
    shown = {
        name: [(table.columns, table.rows) for table in stored.headline.tables]
        for name, stored in headlines.items()
    }
    judged = {"geval_coverage", "checkeval", "coverage", "relevance", "entailment", "contradiction"}
    for name in ("xsum_report.md", "contregen_report.md"):
        assert all(not judged & set(columns) for columns, _ in shown[name]), name
    [(columns, rows), *_] = shown["insight_rag_report.md"]
    assert "identifier_agreement" not in columns and "exact_match" in columns
    assert rows and all(row["kind"] != "matching" for row in rows)


@pytest.mark.browser
def test_the_page_renders_in_a_real_browser_on_a_laptop_and_a_phone(demo_offline, tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (./run test installs Debian's chromium where apt-get can)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    page_file = demo_offline.root / "reports" / "demo" / "index.html"
    console_errors, requests = [], []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
        )
        try:
            for name, viewport in (("laptop", (1366, 900)), ("phone", (390, 844))):
                page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
                page.on(
                    "console", lambda message: message.type == "error" and console_errors.append(message.text)
                )
                page.on("pageerror", lambda error: console_errors.append(str(error)))
                page.on("request", lambda request: requests.append(request.url))
                page.goto(page_file.resolve().as_uri(), wait_until="load")
                assert page.locator('section[data-section="collection"]').count() == 1
                methods = page.locator('section[data-section="method"]')
                assert {
                    methods.nth(i).get_attribute("data-method") for i in range(methods.count())
                } == METHODS
                assert page.locator("#question article[data-method]").count() == 5
                widths = page.eval_on_selector_all(
                    "img", "images => images.map(i => i.complete && i.naturalWidth)"
                )
                assert len(widths) >= 1 + 5 and all(width and width > 0 for width in widths)
                # The headline numbers come first, and nothing is wider than the screen.
                numbers_top = page.locator(".numbers").bounding_box()["y"]
                assert numbers_top < page.locator("section").first.bounding_box()["y"]
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), name
                page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
                page.close()
        finally:
            browser.close()
    assert console_errors == []
    assert all(url.startswith(("file:", "data:")) for url in requests), requests
    assert (tmp_path / "laptop.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "phone.png").stat().st_size > 10_000


def test_a_method_that_cannot_answer_says_why_and_the_others_still_answer(demo_offline, tmp_path):
    # SciPIP's library taken away from a copy of the built collection: its flow finds no paper.
    built = demo_offline.copy(tmp_path / "copy")
    empty = built.storage.warehouse.query("SELECT * FROM scipip_papers LIMIT 0")
    built.storage.warehouse.replace_partition("demo", {"scipip_papers": empty})
    flows = asking.ask_flows()
    asked = asking.Asked(
        "demo", "How are papers embedded?", built.storage, EmbedderResource(provider="hashing")
    )

    def open_client():
        return built.llm.client(asset="ask", partition="demo", run_id=None)

    answers = [
        asking.ask(method, flows[method].help, flows[method].answer, asked, open_client)
        for method in ("scipip", "insight-rag")
    ]
    failed, answered = answers
    assert failed.answer is None and failed.error.startswith("no summarized paper")
    assert "(insight-assets build --collection demo builds it)" in failed.error
    assert answered.error is None and "Answer (offline (extractive)):" in answered.answer.text
    assert answered.answer.citations and all(c.pages for c in answered.answer.citations)
    text = asking.as_text(asked, answers)
    assert "=== scipip: " in text and f"scipip could not answer: {failed.error}" in text
    assert "=== insight-rag: " in text and answered.answer.text in text
