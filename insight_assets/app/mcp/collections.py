"""What the MCP server's tools do, as plain Python: each returns a ``ToolOutput`` (text for the
assistant's model, and the same as structured data) or raises ``ToolProblem`` with a sentence the
assistant can act on.

Every tool reads what `insight-assets build` made and goes through the code the command line runs:
``search`` through ``app.passages``, ``ask``/``summarize``/``propose_ideas`` through the methods'
``ask`` flows (``defs.asking``) with the settings each collection was built with. Nothing here
builds: a collection not built yet is a problem naming the build command. What is written is the
model cache and the cost ledger, under the model's ``data_dir`` (``data/`` by default).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from insight_assets.defs import asking

if TYPE_CHECKING:
    from insight_assets.app.mcp.progress import CallProgress

# ``ask``'s method that puts the question to every method.
EVERY_METHOD = "all"
# The ``ask`` flows the other tools use.
SUMMARY_METHOD = "xsum"
IDEAS_METHOD = "scipip"
# The default spending limit of one tool call, in USD (``insight-assets mcp --max-cost``).
DEFAULT_MAX_COST_USD = 0.50
# How long a closing server waits for its background loading to end.
WARM_UP_WAIT_S = 30.0
PAGE_FILE = "index.html"  # defs.overview.assets.PAGE_FILE, without importing the definitions


class ToolProblem(Exception):
    """A tool cannot do what it was asked; the message says why and what to do."""


@dataclass(frozen=True)
class ToolOutput:
    """A tool's result: ``text`` as the assistant's model reads it, ``data`` the same, structured."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)


def build_hint(collection: str) -> str:
    return f"insight-assets build --collection {collection}"


class Collections:
    """The collections of one project (its storage, embedder and model, as the command line has
    them), served to calls that may run at once: reads (``list_collections``, ``search``, ``fetch``,
    the reports) go on while a method answers; the methods' calls (``ask``, ``summarize``,
    ``propose_ideas``) take turns, as a local model serves one at a time. Nothing here writes to
    the warehouse."""

    def __init__(
        self,
        storage: Any,
        embedder: Any,
        make_llm: Callable[[], Any],
        max_cost_usd: float = DEFAULT_MAX_COST_USD,
    ):
        """``storage`` (``core.storage.project.Storage`` or the Dagster resource), ``embedder`` (anything with
        ``get_embedder()``), and ``make_llm`` making the model's ``LLMResource`` when a call first
        needs it (it loads Dagster, which a search does not need)."""
        from insight_assets.app.mcp.opened import OpenedCollections

        self.storage = storage
        self.embedder = embedder
        self.max_cost_usd = max_cost_usd
        self.opened = OpenedCollections(storage, embedder)
        self._asking = threading.Lock()
        self._make_llm = make_llm
        self._llm: Any = None
        self._llm_lock = threading.Lock()
        self._warming: threading.Thread | None = None

    @property
    def llm(self) -> Any:
        """The model the methods' calls answer with (an ``LLMResource``), made on first use."""
        with self._llm_lock:
            if self._llm is None:
                self._llm = self._make_llm()
            return self._llm

    def warm_up(self) -> None:
        """Load in the background what the first calls would wait for: the model and the most
        recently built collections (``opened``), and the definitions' asset groups that
        ``list_collections`` reports (loading Dagster's definitions takes seconds)."""
        searching = self.opened.warm_up()

        def load_definitions() -> None:
            searching.join()  # after what the first search needs: they would compete for the CPU
            _asset_groups()

        self._warming = threading.Thread(target=load_definitions, daemon=True)
        self._warming.start()

    def close(self) -> None:
        """Wait for the background loading to end before the process does: a thread stopped in the
        middle of loading a native library at exit aborts the process ("terminate called")."""
        if self._warming is not None:
            self._warming.join(timeout=WARM_UP_WAIT_S)

    # -- the tools ------------------------------------------------------------------------------

    def list_collections(self) -> ToolOutput:
        """Every collection (folder or library collection): its papers, which method groups are
        built, whether its source changed since, its page."""
        from insight_assets.core.collection_sources import find_sources
        from insight_assets.core.ingestion.ingest import paper_count
        from insight_assets.core.ingestion.ingest_store import built_source_signatures

        root = Path(self.storage.collections_root)
        groups, found = _asset_groups(), []
        sources = find_sources(root).collections
        signatures = built_source_signatures(self.storage.warehouse)
        for name, source in sorted(sources.items()):
            built = set(self.storage.warehouse.builds(name))
            page = Path(self.storage.reports_dir) / name / PAGE_FILE
            found.append(
                {
                    "name": name,
                    "source": source.kind,
                    "stale": name in signatures and signatures[name] != source.signature(),
                    "papers": paper_count(self.storage.warehouse, name) if built else 0,
                    "built": sorted(g for g, assets in groups.items() if assets <= built),
                    "partly_built": sorted(
                        g for g, assets in groups.items() if assets & built and not assets <= built
                    ),
                    "page": str(page.resolve()) if page.is_file() else None,
                }
            )
        if not found:
            return ToolOutput(f"No collections under {root.resolve()}.", {"collections": []})
        lines = [
            f"- {c['name']} ({c['source']}{', STALE: rebuild it' if c['stale'] else ''}): {c['papers']} papers; "
            f"built: {', '.join(c['built']) or 'nothing yet'}"
            + (f"; partly built: {', '.join(c['partly_built'])}" if c["partly_built"] else "")
            + (f"; page: {c['page']}" if c["page"] else "")
            for c in found
        ]
        return ToolOutput("Collections:\n" + "\n".join(lines), {"collections": found})

    def ask(
        self,
        collection: str,
        question: str,
        method: str,
        options: dict | None = None,
        progress: CallProgress | None = None,
    ) -> ToolOutput:
        """``method``'s answer to ``question`` (every method's with ``all``), with citations and
        costs, as ``insight-assets ask --method`` gives them; a method that cannot answer is said
        beside the others' answers. ``progress`` hears of each method and model call, and stops
        the work once its call is cancelled (``CallCancelled``)."""
        flows = _flows(method)
        if not question.strip():
            raise ToolProblem("the question is empty")
        builds = self.check_built(collection)
        with self._asking:
            if progress is not None:
                progress.check()  # cancelled while another call had the model
            asked = asking.Asked(collection, question, self.storage, self.embedder, options or {})
            over_budget = self._over_budget(asked, flows)
            if over_budget is not None:
                return over_budget
            answers = asking.ask_each(asked, flows, self.llm, progress)
        data = asking.as_json(asked, answers)
        for answered in data["methods"]:
            if answered["answer"]:
                _structured_passages(self, collection, builds, answered["answer"])
        if len(answers) == 1 and not answers[0].ok:
            raise ToolProblem(f"{answers[0].method} could not answer: {answers[0].error}")
        return ToolOutput(asking.as_text(asked, answers), data)

    def summarize(self, collection: str, topic: str, progress: CallProgress | None = None) -> ToolOutput:
        """XSum's cited summary of the papers best matching ``topic``."""
        return self.ask(collection, topic, SUMMARY_METHOD, progress=progress)

    def propose_ideas(
        self, collection: str, background: str, progress: CallProgress | None = None
    ) -> ToolOutput:
        """SciPIP's ideas for a research ``background``, with the papers that inspired them."""
        return self.ask(collection, background, IDEAS_METHOD, progress=progress)

    def what_changed(self, collection: str, since: str | None = None) -> ToolOutput:
        """What the collection's last build changed (or every build after ``since``, a build or a
        date), as ``insight-assets changes --json`` gives it, each finding's citations also as
        passage ids that ``fetch`` reads."""
        from insight_assets.app.mcp.citing import passage_id
        from insight_assets.core.changes import store
        from insight_assets.core.changes.digest import as_markdown

        self.check_built(collection)
        try:
            data = store.digest_data(self.storage.warehouse, collection, since)
        except store.NoSuchBuild as error:
            raise ToolProblem(str(error)) from None
        for finding in data["findings"]:
            finding["passages"] = [passage_id(collection, chunk) for chunk in finding["chunk_ids"]]
        return ToolOutput(as_markdown(data, page_link=None), data)

    def collection_report(self, collection: str) -> ToolOutput:
        """Where the collection's page is, and each method report's headline tables."""
        from insight_assets.core.page.headlines import load_headlines
        from insight_assets.core.page.markdown import markdown_table

        self.check_built(collection)
        headlines = load_headlines(self.storage.warehouse, collection)
        page = Path(self.storage.reports_dir) / collection / PAGE_FILE
        if not headlines and not page.is_file():
            raise ToolProblem(
                f"collection {collection!r} has no page or report yet ({build_hint(collection)} writes them)"
            )
        reports, parts = [], [f"Page: {page.resolve()}" if page.is_file() else "Page: not written yet"]
        for name, stored in sorted(headlines.items()):
            headline = stored.headline
            tables = [
                {"caption": t.caption, "columns": list(t.columns), "rows": list(t.rows)}
                for t in headline.tables
            ]
            reports.append(
                {
                    "report": name,
                    "path": str((Path(self.storage.reports_dir) / collection / name).resolve()),
                    "writer": headline.writer,
                    "judge": headline.judge,
                    "notes": list(headline.notes),
                    "tables": tables,
                }
            )
            who = ", ".join(
                part
                for part in (
                    headline.writer and f"written by {headline.writer}",
                    headline.judge and f"judged by {headline.judge}",
                )
                if part
            )
            parts.append(f"## {name}" + (f" ({who})" if who else ""))
            parts += list(headline.notes)
            parts += [
                f"{t.caption}\n\n{markdown_table(list(t.rows), list(t.columns))}" for t in headline.tables
            ]
        data = {
            "collection": collection,
            "page": str(page.resolve()) if page.is_file() else None,
            "reports": reports,
        }
        return ToolOutput("\n\n".join(parts), data)

    # -- resources ------------------------------------------------------------------------------

    def report_files(self) -> list[tuple[str, str]]:
        """(collection, file name) of every markdown report written so far."""
        from insight_assets.core.collection_sources import find_sources

        root = Path(self.storage.reports_dir)
        return [
            (name, report.name)
            for name in sorted(find_sources(self.storage.collections_root).collections)
            for report in sorted((root / name).glob("*.md"))
        ]

    def read_report(self, collection: str, name: str) -> str:
        """A markdown report of ``collection`` by its file name (only the files in its reports folder)."""
        self._known(collection)
        reports = {
            report.name: report for report in (Path(self.storage.reports_dir) / collection).glob("*.md")
        }
        if name not in reports:
            raise ToolProblem(f"collection {collection!r} has no report {name!r}")
        return reports[name].read_text(encoding="utf-8")

    # -- checks ---------------------------------------------------------------------------------

    def _known(self, collection: str) -> None:
        """A name the command line accepts (no path separators, '..' or hidden names) of a folder
        that exists."""
        from insight_assets.app.commands import known_collection

        problem = known_collection(self.storage, collection)
        if problem:
            raise ToolProblem(problem)

    def collection_names(self) -> list[str]:
        """Every collection's name (folders, then libraries' collections), sorted."""
        from insight_assets.core.collection_sources import find_sources

        return sorted(find_sources(self.storage.collections_root).collections)

    def built_collections(self) -> dict[str, dict[str, dict]]:
        """The collections with something built, by name, each with its assets' builds."""
        found = {name: self.storage.warehouse.builds(name) for name in self.collection_names()}
        return {name: builds for name, builds in found.items() if builds}

    def check_built(self, collection: str) -> dict[str, dict]:
        """``collection``'s assets' builds; a ``ToolProblem`` unless it names a collection that has
        been built."""
        self._known(collection)
        builds = self.storage.warehouse.builds(collection)
        if not builds:
            raise ToolProblem(
                f"collection {collection!r} is not built yet; build it first: {build_hint(collection)}"
            )
        return builds

    def _over_budget(self, asked: asking.Asked, flows: list) -> ToolOutput | None:
        """The estimate, when the flows would cost more than ``max_cost_usd`` at most (a dry run of
        the same flows, no model called); ``None`` when they may run. A model that is free (offline,
        local) or has no price is not estimated; the client's budget still stops a priced call that
        would pass the limit."""
        from insight_assets.core.llm import LLMClient
        from insight_assets.core.llm.cache import ResponseCache

        settings = self.llm.settings()
        if not settings.is_hosted:
            return None
        estimates = []
        cache = ResponseCache.in_data_dir(Path(self.llm.data_dir)) if self.llm.use_cache else None
        for flow in flows:
            # A flow that fails in the dry run fails when it runs too, before its calls are paid for.
            with (
                LLMClient(settings, cache=cache, estimate_only=True) as client,
                contextlib.suppress(Exception),
            ):
                flow.answer(asked, client)
            estimates += client.estimates()
        if any(estimate.max_cost_usd is None for estimate in estimates):
            return None
        at_most = sum(estimate.max_cost_usd for estimate in estimates)
        if at_most <= self.max_cost_usd:
            return None
        expected = sum(estimate.cost_usd or 0.0 for estimate in estimates)
        rows = [
            {
                "task": e.task,
                "calls": e.items - e.cached_items,
                "input_tokens": e.input_tokens,
                "cost_usd": round(e.cost_usd or 0.0, 6),
                "max_cost_usd": round(e.max_cost_usd or 0.0, 6),
            }
            for e in estimates
        ]
        text = (
            f"Not run: answering would cost up to ${at_most:.4f} (about ${expected:.4f} expected) with "
            f"{settings.provider}/{settings.model}, more than this server's limit of ${self.max_cost_usd:.4f} "
            "per call (insight-assets mcp --max-cost). Estimate per task:\n"
            + "\n".join(
                f"- {r['task']}: {r['calls']} calls, {r['input_tokens']} tokens in, up to ${r['max_cost_usd']:.4f}"
                for r in rows
            )
        )
        data = {
            "ran": False,
            "max_cost_usd": self.max_cost_usd,
            "estimated_cost_usd": round(expected, 6),
            "estimated_max_cost_usd": round(at_most, 6),
            "tasks": rows,
        }
        return ToolOutput(text, data)


def _flows(method: str) -> list:
    """The ``ask`` flows of ``method``: every method's for ``all``, the default method first."""
    flows = sorted(asking.ask_flows().values(), key=lambda flow: not flow.default)
    if method == EVERY_METHOD:
        return flows
    chosen = [flow for flow in flows if flow.method == method]
    if not chosen:
        raise ToolProblem(f"unknown method {method!r}; choose one of {', '.join(method_names())}")
    return chosen


def method_names() -> list[str]:
    """The methods ``ask`` takes: the default method, the others, then ``all``."""
    return [flow.method for flow in _flows(EVERY_METHOD)] + [EVERY_METHOD]


@functools.cache
def _asset_groups() -> dict[str, set[str]]:
    """Each asset group (ingestion, a method's, the page's) and its assets."""
    from insight_assets.defs.catalog import ALL_ASSETS

    groups: dict[str, set[str]] = {}
    for asset in ALL_ASSETS:
        for key, group in asset.group_names_by_key.items():
            groups.setdefault(group, set()).add(key.to_user_string())
    return groups


def _structured_passages(
    collections: Collections, collection: str, builds: dict[str, dict], answer: dict[str, Any]
) -> None:
    """Give each passage an ``ask`` answer cites its id, citation and link (in place); ``builds``:
    the collection's, as ``check_built`` read them."""
    if not answer.get("passages"):
        return
    from insight_assets.core.retrieval.citing import Source

    papers = collections.opened.papers(collection, builds)
    answer["passages"] = [papers.passage(Source(**passage)) for passage in answer["passages"]]
