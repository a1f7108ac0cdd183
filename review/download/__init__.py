"""Downloading papers' PDFs: politely, verifiably and resumably (`review download`).

`run_download(db, settings, ...)` is the entry point other stages (e.g. `review survey`)
call; `store.PdfStore` resolves the paths stored in `documents.path`.
"""

from review.download.fetch import FetchResult, fetch_pdf
from review.download.runner import DownloadReport, run_download
from review.download.store import PdfStore

__all__ = ["DownloadReport", "FetchResult", "PdfStore", "fetch_pdf", "run_download"]
