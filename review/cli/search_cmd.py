"""`review search`: find papers by words, identifiers or phrases in their extracted text."""

from __future__ import annotations

import typer
from rich.text import Text

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import console, print_json, summary
from review.search import HIT_END, HIT_START, search as run_search


def _highlight(snippet: str) -> Text:
    out = Text()
    parts = snippet.split(HIT_START)
    out.append(parts[0])
    for part in parts[1:]:
        hit, _, rest = part.partition(HIT_END)
        out.append(hit, style="bold yellow")
        out.append(rest)
    return out


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help='Words, identifiers, "quoted phrases", AND/OR/NOT, ( ), NEAR(a b, N).'),
    limit: int = typer.Option(20, "--limit", min=1, help="Show at most this many papers."),
    json_: JsonOpt = False,
) -> None:
    """Full-text search of the extracted texts; prints papers with a highlighted snippet.

    Words side by side must all occur; OR, NOT and parentheses combine them (operators in
    capitals). A word or "phrase" of letters and digits is looked up in the full-text
    index (SQLite FTS5 or PostgreSQL). A term with any other character is an exact
    identifier: rouge_score finds the package, not "ROUGE score"; ROUGE-1.5.5 and
    "-c 95 -r 1000" must occur as written, whole. NEAR(a b, N): at most N words apart
    (10 by default).

    Example:

    \b
        review search pyrouge
        review search 'rouge_score OR (pyrouge NOT py-rouge)'
        review search 'NEAR(ROUGE "-c 95", 20)' --json
    """
    db = context.get(ctx).database()
    hits = run_search(db, query, limit=limit)
    if json_:
        print_json({"query": query, "hits": [h.as_dict() for h in hits]})
    else:
        for h in hits:
            console().print(Text(f"{h.ident} ({h.year or 'n.d.'}) {h.title}", style="bold"))
            console().print(Text("  ").append(_highlight(h.snippet)))
    summary(f"search: {len(hits)} paper(s) match {query!r}")
