"""A method's section of the collection's page (``collection_report``).

A method's defs folder names it in its ``domain.py`` (``Domain(page=MethodPage(...))``): the asset
that writes its report (and stores its headline, see ``metadata.write_report``), the report's
file, and what to call the method. The page depends on every declared report asset and shows each
method's headline, its answer to the page's question (its ``ask`` flow of the same ``method``
name) and a link to its markdown report.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class MethodPage:
    method: str  # as its ask flow names it
    title: str  # what people call it, e.g. "XSum: cited multi-paper summaries"
    paper: str  # the paper it implements
    report: str  # the asset that writes its report and headline
    report_file: str  # the report's file name under data/reports/<collection>/
    core: bool = False  # the project's core method: first on the page
