"""The product's modules import one way, ``app`` -> ``defs`` -> ``core``, with no loop; and a stage
is declared once: ``defs/`` holds no stage's work, no dry-run step by hand, and no hand-written
write of a stage's rows. Read from the source (module-level imports, as Python runs them), so a
module added tomorrow is held to it too."""

from __future__ import annotations

import ast
from pathlib import Path

import insight_assets

PACKAGE = Path(insight_assets.__file__).parent
# Each layer may import those below it: core nothing above, defs (and the code location) core.
LAYERS = {"core": 0, "defs": 1, "definitions": 1, "app": 2, "cli": 3}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["insight_assets", *path.relative_to(PACKAGE).with_suffix("").parts]
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imported(name: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The product's modules an import statement of module ``name`` loads (``from . import x``:
    the submodule x, not its package)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in MODULES}
    package = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
    base = ".".join(package[: len(package) - node.level + 1] if node.level else [])
    module = ".".join(part for part in (base, node.module or "") if part)
    found = set()
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        found.add(submodule if submodule in MODULES else module)
    return {found_name for found_name in found if found_name in MODULES}


def _is_type_checking(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
    )


def module_level_imports(name: str, *, for_type_checkers: bool = False) -> set[str]:
    """What importing ``name`` imports of the product (not inside functions; with
    ``for_type_checkers``, the imports under ``TYPE_CHECKING`` too)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if _is_type_checking(node) and not for_type_checkers:
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= _imported(name, node)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            pending += [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
    return found - {name}


def every_import(name: str) -> set[str]:
    """Every product module ``name`` imports when it runs, inside functions too (not for type
    checkers)."""
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(MODULES[name].read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        if _is_type_checking(node):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= _imported(name, node)
        pending += list(ast.iter_child_nodes(node))
    return found - {name}


def _layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_modules_import_one_way_without_a_loop():
    graph = {name: module_level_imports(name) for name in MODULES}
    upward = sorted(
        f"{name} -> {other}"
        for name, imported in graph.items()
        for other in imported
        if _layer(name) is not None and _layer(other) is not None and _layer(other) > _layer(name)
    )
    assert upward == []
    assert loops(graph) == []


def test_no_loop_even_through_the_imports_for_type_checkers():
    """Two modules that name each other's types, even only for a type checker, are one thing cut in
    two (a stage's work and what it keeps were): each loop is listed."""
    graph = {name: module_level_imports(name, for_type_checkers=True) for name in MODULES}
    assert loops(graph) == []


def test_no_loop_even_through_the_imports_inside_functions():
    assert loops({name: every_import(name) for name in MODULES}) == []


def test_neither_defs_nor_core_imports_the_command_line_even_when_it_runs():
    reaching_up = sorted(
        f"{name} -> {other}"
        for name in MODULES
        if _layer(name) in (0, 1)
        for other in every_import(name)
        if _layer(other) is not None and _layer(other) >= LAYERS["app"]
    )
    assert reaching_up == []


def test_the_checker_sees_a_loop_and_an_upward_import():
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert (
        _layer("insight_assets.core.runtime.stage")
        < _layer("insight_assets.defs.stage_assets")
        < _layer("insight_assets.app.commands")
    )
    assert "insight_assets.core.runtime.stage" in module_level_imports("insight_assets.defs.stage_assets")
    assert "insight_assets.defs.materialization" in every_import("insight_assets.defs.scipip.ask")
    assert "insight_assets.defs.materialization" not in module_level_imports("insight_assets.defs.scipip.ask")


def test_defs_declares_no_stage_by_hand():
    """A stage's work, dry run, settings and writes are its declaration's: none is written by hand
    in ``defs/`` (the factory, ``stage_assets.py``, writes every stage's rows)."""
    by_hand = [
        f"{path.relative_to(PACKAGE)}: {marker}"
        for path in (PACKAGE / "defs").rglob("*.py")
        for marker in ("def stage(self", "EstimateStep(", "config_settings(", "ModelCallConfig")
        if marker in path.read_text(encoding="utf-8")
    ]
    assert by_hand == []


def test_defs_helpers_say_what_they_take():
    """At most five helpers of ``defs/`` take three or more parameters without a type."""
    untyped = []
    for path in (PACKAGE / "defs").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = [a.arg for a in node.args.args + node.args.kwonlyargs if a.annotation is None]
                if len([name for name in names if name not in ("self", "cls")]) >= 3:
                    untyped.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert len(untyped) <= 5, untyped


def test_core_shows_its_parts():
    """``core/`` is a few packages, each saying what it does, and at most ten modules beside them:
    a newcomer reads one short list, not fifty names."""
    core = PACKAGE / "core"
    top = sorted(path.stem for path in core.glob("*.py") if path.name != "__init__.py")
    packages = sorted(path for path in core.iterdir() if (path / "__init__.py").is_file())
    undescribed = [
        package.name
        for package in packages
        if not ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
    ]
    assert len(top) <= 10, top
    assert undescribed == []
