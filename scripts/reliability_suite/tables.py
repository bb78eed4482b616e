"""The suite's tables as Markdown, and its section of results/RELIABILITY.md."""

from __future__ import annotations

BEGIN, END = "<!-- scripts/reliability.py: begin -->", "<!-- scripts/reliability.py: end -->"


def markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])


def with_section(document: str, text: str) -> str:
    """``document`` with the part between this script's markers replaced by ``text`` (appended
    with markers when the document has none)."""
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in document and END in document.split(BEGIN, 1)[1]:
        head, rest = document.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return document.rstrip("\n") + "\n\n" + block + "\n"


def stage(title: str, header: list[str], measure) -> tuple[str, list[str], list[list[str]]]:
    """One section; a stage that raises becomes a single row saying what failed."""
    try:
        return title, header, measure()
    except Exception as exc:  # noqa: BLE001 - the suite reports every failure and goes on
        return title, header, [[f"stage failed: {type(exc).__name__}: {str(exc)[:200]}"] + [""] * (len(header) - 1)]
