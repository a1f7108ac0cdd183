"""`review harvest acl|dblp`: paper records into the database (PRISMA identification)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from review.cli import context
from review.cli.app import app
from review.cli.options import JsonOpt
from review.cli.output import print_json, summary
from review.errors import ItemsFailed
from review.harvest.result import HarvestResult

harvest_app = typer.Typer(help="Harvest paper records from the ACL Anthology and DBLP.", no_args_is_help=True)
app.add_typer(harvest_app, name="harvest")

FromYearOpt = Annotated[Optional[int], typer.Option("--from-year", help="First publication year kept (default: harvest.from_year, 2002).")]
CutoffOpt = Annotated[Optional[str], typer.Option("--cutoff", help="Leave out records published on or after this date, YYYY-MM-DD ('' = none; default: harvest.cutoff).")]
ExcludeOpt = Annotated[Optional[list[str]], typer.Option("--exclude-venue", help="Drop records of this venue id (repeatable).")]


def _finish_output(result: HarvestResult, json_: bool) -> None:
    if json_:
        print_json(result.as_dict())
    summary(result.summary())
    for line in result.detail_lines():
        summary(line)


def _finish(result: HarvestResult, json_: bool) -> None:
    _finish_output(result, json_)
    if result.failed:
        shown = "; ".join(result.failures[:3]) + (" ..." if result.failed > 3 else "")
        raise ItemsFailed(f"{result.failed} item(s) failed: {shown}",
                          hint="fix the input and rerun: finished records are not duplicated")


@harvest_app.command("acl")
def acl(
    ctx: typer.Context,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="Anthology data checkout (default: harvest.acl_data_dir, else <data_dir>/acl-anthology).")] = None,
    update: Annotated[bool, typer.Option("--update", help="Clone the data repository (harvest.acl_repo_url), or pull it, first.")] = False,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Harvest the data repository as it was at its last commit before this date, YYYY-MM-DD (git history needed; default: harvest.acl_as_of).")] = None,
    from_year: FromYearOpt = None,
    cutoff: CutoffOpt = None,
    venue: Annotated[Optional[list[str]], typer.Option("--venue", help="Keep only records of this venue id (repeatable).")] = None,
    exclude_venue: ExcludeOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Harvest every paper of a local ACL Anthology data checkout (data/xml, data/yaml).

    Reruns update changed records and add new ones; nothing is stored twice.

    Example:

    \b
        review harvest acl --update --data-dir db/acl-anthology
        review harvest acl --from-year 2002 --cutoff 2023-01-01 --exclude-venue ws
        review harvest acl --update --as-of 2022-12-29
    """
    from review.harvest.acl import harvest_acl

    app_ctx = context.get(ctx)
    db = app_ctx.database()
    result = harvest_acl(db, app_ctx.settings, data_dir=data_dir, update=update, from_year=from_year, cutoff=cutoff,
                         venues_include=venue or None, venues_exclude=exclude_venue or None, as_of=as_of)
    _finish(result, json_)


@harvest_app.command("dblp")
def dblp(
    ctx: typer.Context,
    mode: Annotated[Optional[str], typer.Option("--mode", help="api (DBLP search API) or dump (dblp.xml.gz); default: harvest.dblp_mode.")] = None,
    dump: Annotated[Optional[Path], typer.Option("--dump", help="dblp.xml.gz for dump mode (default: harvest.dblp_dump).")] = None,
    dtd: Annotated[Optional[Path], typer.Option("--dtd", help="dblp.dtd (default: harvest.dblp_dtd, else next to the dump).")] = None,
    venue: Annotated[Optional[list[str]], typer.Option("--venue", help="Only this venue of the venue table, e.g. neurips (repeatable).")] = None,
    from_year: FromYearOpt = None,
    cutoff: CutoffOpt = None,
    exclude_venue: ExcludeOpt = None,
    strict: Annotated[bool, typer.Option("--strict", help="Fail the run (exit 1) when a venue-year comes back empty while its neighbours have papers, or a TOC query returns nothing.")] = False,
    json_: JsonOpt = False,
) -> None:
    """Harvest the main-conference papers of the DBLP venue table (NeurIPS, ICML, IJCAI, ICLR, CVPR).

    Records also found in the ACL Anthology (same DOI, or same title and year) are
    counted as duplicates and attached to the existing paper. The papers found per
    venue and year are printed after the summary; an empty year is a loud warning.

    Example:

    \b
        review harvest dblp --venue neurips --venue iclr
        review harvest dblp --mode dump --dump ~/dblp/dblp.xml.gz --strict
    """
    from review.harvest.dblp import CoverageIncomplete, harvest_dblp

    app_ctx = context.get(ctx)
    db = app_ctx.database()
    try:
        result = harvest_dblp(db, app_ctx.settings, mode=mode, dump=dump, dtd=dtd, venues=venue or None,
                              from_year=from_year, cutoff=cutoff, venues_exclude=exclude_venue or None,
                              strict=strict)
    except CoverageIncomplete as exc:
        _finish_output(exc.result, json_)
        raise
    _finish(result, json_)
