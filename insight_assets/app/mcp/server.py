"""``insight-assets mcp``: the collections behind the Model Context Protocol, for any MCP client (a
desktop assistant, an IDE, an agent), over stdio or streamable HTTP, with the official ``mcp`` SDK.

Tools (``collections.Collections`` and ``reading`` do their work): ``list_collections``,
``search``, ``fetch``, ``ask``, ``summarize``, ``propose_ideas`` and ``collection_report``; resources: each collection's markdown
reports; a prompt: a literature review of a topic. Over HTTP the server binds 127.0.0.1 unless told
otherwise; any other address needs a bearer token (``INSIGHT_ASSETS_MCP_TOKEN``), and once that
variable is set every request must carry it.
"""

import argparse
import hmac
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from insight_assets.app.commands import Command
from insight_assets.app.mcp import reading
from insight_assets.app.mcp.collections import (
    DEFAULT_MAX_COST_USD,
    EVERY_METHOD,
    Collections,
    ToolOutput,
    ToolProblem,
)
from insight_assets.app.mcp.progress import HEARTBEAT_S, CallCancelled, CallProgress
from insight_assets.app.mcp.reading import MAX_K

TOKEN_ENV = "INSIGHT_ASSETS_MCP_TOKEN"
DEFAULT_PORT = 8765
HTTP_PATH = "/mcp"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
REPORT_URI = "insight-assets://{collection}/reports/{name}"
COLLECTION_NAME = "A collection's name, as list_collections gives it."

INSTRUCTIONS = (
    "Research paper collections built by insight_assets. Start with list_collections; search finds "
    "passages (in one collection or all) with their papers, pages and ids; fetch reads a passage "
    "whole with its neighbours; ask answers with a method's citations (insightgen, insight-rag, "
    "xsum, contregen, scipip, or all); summarize writes a cited summary; propose_ideas proposes "
    "research ideas. Cite papers with the citation the tools give (title, citekey or DOI, p. 4)."
)


def build_server(collections: Collections, methods: list[str]) -> Any:
    """An ``MCPServer`` whose tools, resources and prompt serve ``collections``; ``ask`` takes one of
    ``methods``."""
    from importlib.metadata import version

    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "insight-assets", instructions=INSTRUCTIONS, version=version("insight_assets"), log_level="WARNING"
    )
    _add_collection_tools(server, collections)
    _add_method_tools(server, collections, methods)
    _add_reports(server, collections)
    _add_prompts(server)
    _add_completions(server, collections)
    _add_log_level(server)
    return server


def _tool_result(run, *args) -> Any:
    """A tool's output as text for the model and structured content; a problem as a tool error."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent

    try:
        output: ToolOutput = run(*args)
    except ToolProblem as problem:
        raise ToolError(str(problem)) from None
    return CallToolResult(
        content=[TextContent(type="text", text=output.text)], structured_content=output.data
    )


async def _reading(run, *args) -> Any:
    """A read tool's result, worked out in a thread of its own: reads run side by side, and beside
    a method's answer."""
    import anyio

    return await anyio.to_thread.run_sync(lambda: _tool_result(run, *args))


async def _reporting(ctx: Any, methods: int, run, *args) -> Any:
    """A long tool's result, worked out in a thread while the client hears how far it has come
    (progress notifications and log messages, ``progress.CallProgress``); a cancelled call stops
    at its next step."""
    import anyio

    progress = CallProgress(methods)
    last_sent = [-HEARTBEAT_S]

    async def send_due() -> None:
        due = progress.due(anyio.current_time() - last_sent[0])
        if due is None:
            return
        value, message, logs = due
        last_sent[0] = anyio.current_time()
        await ctx.report_progress(value, progress.total, message)
        for line in logs:
            await _log(ctx, line)

    async def report() -> None:
        while True:
            await anyio.sleep(1)
            await send_due()

    def work() -> ToolOutput | ToolProblem | None:
        # Returned, not raised: an error raised in the task group would reach the SDK wrapped in
        # an exception group, and the client would read "Error executing tool" instead of it.
        try:
            return run(*args, progress)
        except ToolProblem as problem:
            return problem
        except CallCancelled:
            return None  # nobody reads the answer of a cancelled call

    try:
        async with anyio.create_task_group() as reporting:
            reporting.start_soon(report)
            outcome = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
            reporting.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        progress.cancelled.set()
        # For whoever runs the server: why the model calls stopped mid-answer.
        print(
            f"insight-assets mcp: the client cancelled {run.__name__}; it stops after the model call under way",
            file=sys.stderr,
            flush=True,
        )
        raise
    # What the work said since the last tick: a call that ends within a second (its answers cached,
    # its failures on record) would otherwise end without its log lines ("insightgen: started").
    await send_due()
    return _tool_result(_given, outcome)


def _given(outcome: ToolOutput | ToolProblem) -> ToolOutput:
    if isinstance(outcome, ToolProblem):
        raise outcome
    return outcome


# The lowest level of log message asked for (``logging/setLevel``); messages go out at "info". One for
# the process: over HTTP, the last client's choice holds for every client.
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_log_level = {"level": "info"}


async def _log(ctx: Any, message: str) -> None:
    """A log message to the client, unless it asked for warnings and above only. MCP logging is
    deprecated by the 2026-07-28 revision, where a client asks per request; clients of the earlier
    revisions show these messages, and the SDK sends them only where the revision allows."""
    import warnings

    if _LOG_LEVELS.index(_log_level["level"]) > _LOG_LEVELS.index("info"):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await ctx.log("info", message, logger_name="insight-assets")


def _add_log_level(server: Any) -> None:
    """``logging/setLevel``, for clients of the revisions before 2026-07-28 (the SDK's low-level
    API is its documented way to serve a method that revision removed)."""
    from mcp_types import EmptyResult, SetLevelRequestParams

    async def set_level(_context: Any, params: SetLevelRequestParams) -> EmptyResult:
        _log_level["level"] = params.level
        return EmptyResult()

    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


def _add_completions(server: Any, collections: Collections) -> None:
    """Completion of a collection's name (the prompt's and the reports' ``collection``) and of a
    report's file name; nothing for other arguments."""
    from mcp_types import Completion

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        typed = argument.value
        if argument.name == "collection":
            names = collections.collection_names()
        elif argument.name == "name":
            chosen = (context.arguments or {}).get("collection") if context else None
            names = [name for collection, name in collections.report_files() if collection == chosen]
        else:
            names = []
        matching = [name for name in names if name.startswith(typed)]
        return Completion(values=matching[:100], total=len(matching), has_more=len(matching) > 100)


def _add_collection_tools(server: Any, collections: Collections) -> None:
    """What a collection holds: the collections, passages for a query and each passage whole, the
    page's headlines."""
    from mcp_types import CallToolResult, ToolAnnotations
    from pydantic import Field

    CollectionName = Annotated[str, Field(description=COLLECTION_NAME)]
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=reads)
    async def list_collections() -> CallToolResult:
        """The collections: how many papers, which method groups are built, and the page's path."""
        return await _reading(collections.list_collections)

    @server.tool(annotations=reads)
    async def search(
        query: Annotated[str, Field(description="What to look for, in words.")],
        collection: Annotated[
            str | None, Field(description=COLLECTION_NAME + " Leave it out to search every built collection.")
        ] = None,
        k: Annotated[int, Field(ge=1, le=MAX_K, description="How many passages.")] = 10,
        mode: Annotated[str, Field(description="dense, lexical or hybrid (both, fused).")] = "hybrid",
        notes: Annotated[
            bool,
            Field(
                description="Also search the reader's own highlights and notes (Zotero), labelled 'your notes'."
            ),
        ] = False,
    ) -> CallToolResult:
        """The passages of the papers that best match a query, reranked: each with a passage id
        (read it whole with fetch), its paper's title, citekey or DOI, pages, the quoted text, a
        link and its score; with ``notes``, the reader's matching notes too, apart and labelled."""
        return await _reading(reading.search, collections, query, collection, k, mode, notes)

    @server.tool(annotations=reads)
    async def fetch(
        id: Annotated[
            str, Field(description="A passage id, as search and ask give it: '<collection>/<chunk id>'.")
        ],
    ) -> CallToolResult:
        """A passage whole, with the passages before and after it in its paper, its citation
        (title, citekey or DOI, pages), a link, and the paper's metadata."""
        return await _reading(reading.fetch, collections, id)

    @server.tool(annotations=reads)
    async def what_changed(
        collection: CollectionName,
        since: Annotated[
            str | None,
            Field(
                description="Leave it out for the last build; else a build (its run id) or a date "
                "(YYYY-MM-DD): what every build after it changed."
            ),
        ] = None,
    ) -> CallToolResult:
        """What the collection's last build changed: papers in and out, themes that gained or lost
        papers, and the findings (insights, summaries, answers, ideas, judge scores) that are new,
        changed (with the old text and why) or gone, each with the papers and passage ids it cites and
        the papers it was made from."""
        return await _reading(collections.what_changed, collection, since)

    @server.tool(annotations=reads)
    async def collection_report(collection: CollectionName) -> CallToolResult:
        """The path of the collection's page and each method report's headline numbers."""
        return await _reading(collections.collection_report, collection)


def _add_method_tools(server: Any, collections: Collections, methods: list[str]) -> None:
    """What the methods make for a question: an answer, a summary, research ideas. These calls are
    long: they report progress and stop when cancelled."""
    from mcp.server.mcpserver import Context
    from mcp_types import CallToolResult, ToolAnnotations
    from pydantic import Field

    CollectionName = Annotated[str, Field(description=COLLECTION_NAME)]
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    every = len(methods) - 1  # the methods, without "all"

    @server.tool(annotations=reads)
    async def ask(
        collection: CollectionName,
        question: Annotated[str, Field(description="The question.")],
        ctx: Context,
        method: Annotated[str, Field(description=f"One of: {', '.join(methods)} (every method).")] = methods[
            0
        ],
    ) -> CallToolResult:
        """A method's answer to a question with the papers, pages and passages (ids, quotes) it
        cites and what it cost, as `insight-assets ask --method` gives it; with `all`, every
        method's side by side (a method that cannot answer says why, the others still answer)."""
        count = every if method == EVERY_METHOD else 1
        return await _reporting(ctx, count, collections.ask, collection, question, method, None)

    @server.tool(annotations=reads)
    async def summarize(
        collection: CollectionName,
        topic: Annotated[str, Field(description="What the summary is about.")],
        ctx: Context,
    ) -> CallToolResult:
        """XSum's cited multi-paper summary of the papers best matching a topic, with its sources."""
        return await _reporting(ctx, 1, collections.summarize, collection, topic)

    @server.tool(annotations=reads)
    async def propose_ideas(
        collection: CollectionName,
        background: Annotated[str, Field(description="The research background: problem and motivation.")],
        ctx: Context,
    ) -> CallToolResult:
        """SciPIP's research ideas for a background, with the papers that inspired them."""
        return await _reporting(ctx, 1, collections.propose_ideas, collection, background)


def _add_reports(server: Any, collections: Collections) -> None:
    """Each collection's markdown reports as resources: a template, and the reports there are now."""
    from mcp.server.mcpserver.exceptions import ResourceError

    def read_report(collection: str, name: str) -> str:
        try:
            return collections.read_report(collection, name)
        except ToolProblem as problem:
            raise ResourceError(str(problem)) from None

    server.resource(REPORT_URI, name="report", mime_type="text/markdown", description="A method's report.")(
        read_report
    )

    def reader(collection: str, name: str):
        return lambda: read_report(collection, name)

    # The reports there are now are listed; the template also reads those written later.
    for collection, name in collections.report_files():
        uri = REPORT_URI.format(collection=collection, name=name)
        server.resource(uri, name=f"{collection}/{name}", mime_type="text/markdown")(reader(collection, name))


def _add_prompts(server: Any) -> None:
    @server.prompt()
    def literature_review(collection: str, topic: str) -> str:
        """A short literature review of a topic from a collection, every claim cited to a page."""
        return (
            f"Write a short literature review of {topic!r} from the papers of the collection "
            f"{collection!r}. Use the insight_assets tools: search for passages on the topic and its "
            "sub-topics, summarize for a cited overview, and ask with method 'all' for related "
            "insights. Cite every statement with the paper's title and the pages the tools give "
            "(p. 4 / pp. 4-5); say where the papers disagree and what they leave open."
        )


class BearerToken:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``; others get 401."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _unauthorised(send)
                return
        await self.app(scope, receive, send)


async def _unauthorised(send) -> None:
    body = f'{{"error": "a bearer token is required ({TOKEN_ENV})"}}'.encode()
    headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_token_problem(host: str, token: str | None) -> str | None:
    """Why the server may not listen on ``host`` (another address than loopback, without a token)."""
    if host not in LOOPBACK_HOSTS and not token:
        return (
            f"listening on {host} lets other machines reach your collections: set {TOKEN_ENV} to a "
            "secret that clients send as 'Authorization: Bearer <token>', or leave --host at 127.0.0.1"
        )
    return None


def serve(args: argparse.Namespace) -> int:
    """Start the server (stdio, or HTTP with ``--http``) until the client or a signal stops it."""
    if args.project:
        os.chdir(args.project)
    token = os.environ.get(TOKEN_ENV) or None
    if args.http:
        problem = http_token_problem(args.host, token)
        if problem:
            print(f"insight-assets mcp: {problem}.", file=sys.stderr)
            return 2
    from insight_assets.app.mcp.collections import method_names
    from insight_assets.core.deployment import Deployment
    from insight_assets.core.embedding.models import EmbedderChoice
    from insight_assets.core.storage.project import Storage

    def make_llm():
        from insight_assets.defs.resources import LLMResource

        return LLMResource(budget_usd=args.max_cost)

    # Plain paths and the bundled embedder, as the command line's resources have them: no Dagster
    # until a method's call needs it.
    Deployment.from_environment().check_stores()
    collections = Collections(Storage(), EmbedderChoice(), make_llm, args.max_cost)
    collections.warm_up()  # the model, the collections and the definitions load while the client says hello
    server = build_server(collections, method_names())
    try:
        if not args.http:
            server.run("stdio")
            return 0
        import uvicorn

        app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=args.host)
        if token:
            app = BearerToken(app, token)
        print(f"MCP server on http://{args.host}:{args.port}{HTTP_PATH}", file=sys.stderr, flush=True)
        uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")).run()
        return 0
    finally:
        collections.close()


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help=f"HTTP address (default: %(default)s; another needs {TOKEN_ENV})",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port (default: %(default)s)")
    parser.add_argument(
        "--max-cost",
        type=float,
        default=DEFAULT_MAX_COST_USD,
        help="USD one tool call may spend on a priced model; a call estimated above it returns the "
        "estimate instead (default: %(default)s)",
    )
    parser.add_argument(
        "--project",
        type=Path,
        help="the project folder (its data/ and collections); default: the current folder",
    )


def _misuse(args: argparse.Namespace) -> str | None:
    if not args.http and (args.host != "127.0.0.1" or args.port != DEFAULT_PORT):
        return "--host and --port need --http"
    return "--max-cost must be 0 or more" if args.max_cost < 0 else None


COMMAND = Command(
    "mcp",
    "serve the collections to MCP clients (assistants, IDEs, agents): stdio, or HTTP with --http",
    serve,
    _arguments,
    _misuse,
)
