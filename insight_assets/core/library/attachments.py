"""An export's item with its PDF: the first file its entry names that exists here, else the PDF a
folder given with ``--pdfs`` holds for it, else a problem that says why and what to do."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from insight_assets.core.library.file_fields import LinkedFile, candidate_paths, describe_missing
from insight_assets.core.library.model import LibraryCollection, LibraryItem, LibraryProblem, item_label
from insight_assets.core.library.pdf_folder import FILE_FIELD, PdfFolder


def attach_pdf(
    collection: LibraryCollection,
    item: LibraryItem,
    files: Sequence[LinkedFile],
    folders: Sequence[Path],
    pdf_folder: PdfFolder | None,
) -> None:
    """Add ``item`` with its PDF (``matched_by`` says how it was found), or record why it has none.
    ``folders``: where a relative path is looked for, in order."""
    label = item_label(item.key, item.title)
    pdfs = [file for file in files if file.is_pdf and not file.is_url]
    for file in pdfs:
        found = next((path for path in candidate_paths(file, folders) if path.is_file()), None)
        if found is not None:
            collection.items.append(dataclasses.replace(item, pdf=found, matched_by=FILE_FIELD))
            return
    if pdf_folder is not None:
        matched = pdf_folder.match(item)
        if matched is not None:
            collection.items.append(dataclasses.replace(item, pdf=matched[0], matched_by=matched[1]))
            return
    collection.unattached.append(item)
    collection.problems.append(_why_none(label, files, pdfs, pdf_folder))


def _why_none(
    label: str, files: Sequence[LinkedFile], pdfs: Sequence[LinkedFile], pdf_folder: PdfFolder | None
) -> LibraryProblem:
    searched = (
        f"; no PDF in {pdf_folder.folder} matches it by citekey, DOI or title"
        if pdf_folder is not None
        else ""
    )
    if pdfs:
        return LibraryProblem(label, "attachment-missing", f"{label}: {describe_missing(pdfs[0])}{searched}.")
    links = [file.path for file in files if file.is_url]
    if links:
        return LibraryProblem(
            label,
            "pdf-is-a-link",
            f"{label}: its file is a web address ({links[0]}), not a PDF on this computer: download it"
            + (searched or " and attach it, or give the folder that holds it with --pdfs DIR")
            + ".",
        )
    if pdf_folder is not None:
        return LibraryProblem(label, "no-matching-pdf", f"{label} names no PDF file{searched}.")
    return LibraryProblem(
        label,
        "no-pdf",
        f"{label} names no PDF file: attach the paper's PDF and export again, or give the folder of the "
        "library's PDFs with --pdfs DIR (matched by citekey, DOI or title).",
    )


def report_unclaimed(collection: LibraryCollection, pdf_folder: PdfFolder | None) -> None:
    """A warning for each PDF of the ``--pdfs`` folder that no item claimed."""
    if pdf_folder is None:
        return
    for path in pdf_folder.unclaimed():
        collection.problems.append(
            LibraryProblem(
                str(path),
                "unmatched-pdf",
                f"{path} matched no item of the library by citekey, DOI or title: add the paper to the "
                "library, or name the file by its citekey.",
                severity="warning",
            )
        )
