"""`review search`: find papers by words or phrases in their extracted text."""

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
    query: str = typer.Argument(..., help='Words (all must occur) and "quoted phrases".'),
    limit: int = typer.Option(20, "--limit", min=1, help="Show at most this many papers."),
    json_: JsonOpt = False,
) -> None:
    """Full-text search of the extracted texts; prints papers with a highlighted snippet.

    Uses SQLite FTS5 or PostgreSQL full-text search. Punctuation splits words into
    phrases, so ROUGE-1.5.5 finds "ROUGE-1.5.5"; quote a phrase to keep its words together.

    Example:

    \b
        review search pyrouge
        review search '"-c 95 -r 1000"' --json
    """
    db = context.get(ctx).database()
    hits = run_search(db, query, limit=limit)
    if json_:
        print_json({"query": query, "hits": [h.as_dict() for h in hits]})
    else:
        for h in hits:
            console.print(Text(f"{h.ident} ({h.year or 'n.d.'}) {h.title}", style="bold"))
            console.print(Text("  ").append(_highlight(h.snippet)))
    summary(f"search: {len(hits)} paper(s) match {query!r}")
