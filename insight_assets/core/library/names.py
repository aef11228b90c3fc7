"""People's names as every library reader gives them: ``Family, Given[, Suffix]``, particles kept
with the family name ("de Brauw, Alan"), an organisation whole ("World Health Organization")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from insight_assets.core.library.latex import latex_to_text


def formatted(family: str, given: str = "", suffix: str = "") -> str:
    """``Family, Given[, Suffix]``; a name with only one part is that part."""
    parts = [part.strip() for part in (family, given, suffix)]
    if not parts[0]:
        return " ".join(part for part in parts if part)
    return ", ".join([parts[0]] + [part for part in parts[1:] if part]) if any(parts[1:]) else parts[0]


def bibtex_name(parts: Any) -> str:
    """A name bibtexparser split into first, von, last and jr parts (BibTeX's "von Last, Jr,
    First" and "First von Last" forms); braces protect an organisation's name."""
    family = latex_to_text(" ".join([*parts.von, *parts.last]))
    given = latex_to_text(" ".join(parts.first))
    return formatted(family, given, latex_to_text(" ".join(parts.jr)))


def csl_name(person: Mapping[str, Any]) -> str:
    """A CSL-JSON name: ``literal``, or family with its particles, given and suffix."""
    if person.get("literal"):
        return str(person["literal"]).strip()
    family = " ".join(
        str(part) for part in (person.get("non-dropping-particle"), person.get("family")) if part
    )
    given = " ".join(str(part) for part in (person.get("given"), person.get("dropping-particle")) if part)
    return formatted(family, given, str(person.get("suffix") or ""))
