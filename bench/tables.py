"""Figures measured in rounds, as Markdown rows: medians over rounds, ratios within one."""

from __future__ import annotations

import statistics


def median_row(labels: list[str], row: dict[str, list[float]], columns: list[str],
               digits: int) -> str:
    """The labels, how many rounds (``row["all"]``), the median of each column, and the
    median of ``row["ratio"]`` (this figure over the reference's, within each round; ``-``
    where there was no reference)."""
    ratio = f"{statistics.median(row['ratio']):.2f}x" if row["ratio"] else "-"
    cells = [
        *labels, str(len(row["all"])),
        *(f"{statistics.median(row[column]):.{digits}f}" for column in columns), ratio,
    ]
    return "| " + " | ".join(cells) + " |"
