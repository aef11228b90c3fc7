"""The PDF paths in a BibTeX ``file`` field, as each reference manager writes them.

The field is verbatim (BibLaTeX's ``verbatim`` type): it is never LaTeX-decoded, only unescaped
the way its producer escaped it.

- Better BibTeX: ``a.pdf;b.pdf``, with ``\\;``, ``\\:`` and ``\\\\`` escaping those characters, and
  ``~/`` for the home folder (on Windows ``~\\\\folder\\\\a.pdf``).
- Zotero's own export and JabRef: ``description:path:type`` triples separated by ``;``; Zotero's
  type is a MIME type (``application/pdf``), JabRef's a file type (``PDF``); both escape ``:``,
  ``;`` and ``\\`` with a backslash (``C\\:\\\\Users\\\\me\\\\a.pdf``); older Zotero exports leave a
  Windows path unescaped (``E:\\some\\a.pdf``). JabRef 2 names the field ``File``.
- Mendeley: ``:Users/me/a.pdf:pdf`` (an absolute path without its leading ``/``: an empty
  description and the type ``pdf`` in lower case tell it apart), Windows paths as
  ``:C$\\backslash$:/Users/me/a.pdf:pdf``, LaTeX specials escaped (``\\_``, ``\\&``, ``\\~{}``).

A path that is relative is looked for in JabRef's file directories (the library's
``@Comment{jabref-meta: fileDirectory...}``), then beside the ``.bib`` file. A relative path
written on Windows (``JabRef\\a.pdf``) is read with ``/`` between its folders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

# Mendeley escapes LaTeX's specials in paths: the character after the backslash is meant.
_MENDELEY_SPECIALS = {r"\~{}": "~", r"\^{}": "^", r"$\backslash$": "\\"}
_ESCAPED_SPECIAL = re.compile(r"\\([_&%#${}])")
# Mendeley's file type; JabRef writes "PDF", Zotero a MIME type.
_MENDELEY_TYPE = "pdf"
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_JABREF_DIRECTORY = re.compile(r"@Comment\{jabref-meta:\s*fileDirectory[^:]*:(.*?);?\}", re.IGNORECASE)


@dataclass(frozen=True)
class LinkedFile:
    """One file the field names: ``path`` as the producer meant it (unescaped), and whether it is
    a web address rather than a file."""

    path: str

    @property
    def is_url(self) -> bool:
        return bool(_URL.match(self.path))

    @property
    def is_windows(self) -> bool:
        return bool(_DRIVE.match(self.path)) or self.path.startswith("\\\\")

    @property
    def is_pdf(self) -> bool:
        return self.path.lower().endswith(".pdf")


def linked_files(value: str) -> list[LinkedFile]:
    """Every file a ``file`` field names, in its order."""
    for escaped, meant in _MENDELEY_SPECIALS.items():
        value = value.replace(escaped, meant)
    files = []
    for element in _split(value, ";"):
        path = _path_of(element)
        if path:
            files.append(LinkedFile(path))
    return files


def _split(value: str, separator: str) -> list[str]:
    """``value`` split at each ``separator`` no backslash escapes; the escapes are kept (a later
    step removes them), and a Windows path's backslashes never escape."""
    parts, current, escaped = [], "", False
    for char in value:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            current += char
            escaped = True
        elif char == separator:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _path_of(element: str) -> str:
    """The path of one element: a bare path (Better BibTeX) or a ``description:path:type``."""
    element = element.strip()
    if not element:
        return ""
    pieces = _split(element, ":")
    if (
        len(pieces) == 3
        and pieces[0] == ""
        and pieces[2] == _MENDELEY_TYPE
        and _is_posix_without_root(pieces[1])
    ):
        return "/" + _unescape(pieces[1])  # Mendeley drops an absolute path's leading "/"
    if len(pieces) >= 3 and _is_type(pieces[-1]):
        path_pieces = pieces[1:-1]
    elif len(pieces) == 2 and _is_type(pieces[-1]) and pieces[0]:
        path_pieces = pieces[:1]  # "path:type" without a description
    else:
        path_pieces = pieces
    # An unescaped drive colon ("C:\Users\...") split the path: join it back, backslashes literal.
    if len(path_pieces) >= 2 and len(path_pieces[0]) == 1 and path_pieces[0].isalpha():
        drive, rest = path_pieces[0], ":".join(path_pieces[1:])
        if rest.startswith(("\\", "/")) and not rest.startswith("\\\\"):
            return f"{drive}:{rest}"
        return f"{drive}:{_unescape(rest)}"
    return _unescape(":".join(path_pieces))


def _is_posix_without_root(path: str) -> bool:
    return bool(path) and not path.startswith(("/", "~", ".")) and not re.match(r"^[A-Za-z](\\?:|$)", path)


def _is_type(piece: str) -> bool:
    """A triple's last part: a MIME type (Zotero), a file type (JabRef's ``PDF``), or empty."""
    return piece == "" or bool(re.fullmatch(r"[\w.+-]+/[\w.+-]+|[A-Za-z][\w-]{0,15}", piece.strip()))


def _unescape(path: str) -> str:
    """Backslash escapes removed: ``\\:`` ``\\;`` ``\\\\`` (Better BibTeX, JabRef, Zotero) and
    Mendeley's ``\\_`` ``\\&``...; a lone backslash before anything else is kept (a path's)."""
    path = _ESCAPED_SPECIAL.sub(r"\1", path)
    return re.sub(r"\\([\\:;])", r"\1", path)


def jabref_file_directories(text: str, bib_folder: Path) -> list[Path]:
    """The file directories a JabRef library declares (general and per-user), relative ones taken
    from the ``.bib`` file's folder."""
    folders = []
    for found in _JABREF_DIRECTORY.finditer(text):
        declared = _unescape(found.group(1).strip())
        if declared:
            folder = Path(declared).expanduser()
            folders.append(folder if folder.is_absolute() else bib_folder / folder)
    return folders


def candidate_paths(file: LinkedFile, folders: Sequence[Path]) -> list[Path]:
    """Where ``file`` may be on this computer, most likely first."""
    if file.is_windows:
        return [Path(file.path)]
    # A relative path written on Windows ("JabRef\\a.pdf", "~\\papers\\a.pdf"): its backslashes separate folders.
    written = file.path if "/" in file.path else file.path.replace("\\", "/")
    path = Path(written).expanduser()
    if path.is_absolute():
        return [path]
    return [folder / path for folder in folders]


def describe_missing(file: LinkedFile) -> str:
    """Why a named file is not here, for the message that names it."""
    if file.is_windows:
        name = PureWindowsPath(file.path).name
        return (
            f"its PDF {file.path} is a Windows path, not a file on this computer: export the library on "
            f"this computer, or give a folder holding {name} with --pdfs DIR"
        )
    return f"its PDF {file.path} does not exist: relink the file in your reference manager and export again"
