"""Issue 20 (items 1 and 4): URLs broken after "_", and text that is no text.

Sentences are short quotes of the real papers' shapes; the PDF cases are small PDFs
written by review.pdfgen.write_hidden_text_pdf and read by both real backends.
"""

from __future__ import annotations

import pytest

from review.extract import extract_file, normalize
from review.extract.normalize import normalize_document
from review.pdfgen import HiddenTextCase, write_hidden_text_pdf

BACKENDS = ["pypdfium2", "pdfplumber"]


# --- URLs broken after "_" at a line end -----------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [
    # the 580-PDF run's cut repositories, as the backends give them (line end after "_")
    ("is available at https://github.com/GuyAllard/markov_\r\nclustering. We",
     "is available at https://github.com/GuyAllard/markov_clustering. We"),
    ("github.com/Wendy-Xiao/Extsumm_local_\nglobal_context.", "github.com/Wendy-Xiao/Extsumm_local_global_context."),
    ("https://bitbucket.org/dascim/acl2018_\nabssumm/src/master/data/meeting/ami",
     "https://bitbucket.org/dascim/acl2018_abssumm/src/master/data/meeting/ami"),
    ("github.com/raphael-sch/HC_\nSentence_Summarization", "github.com/raphael-sch/HC_Sentence_Summarization"),
    # broken twice
    ("github.com/darsh10/split_\nencoder_\npointer_summarizer", "github.com/darsh10/split_encoder_pointer_summarizer"),
    ("www.example.org/data_\nset.zip", "www.example.org/data_set.zip"),
    # the scheme cut off as well (D19-1298)
    ("available at https:\r\n//github.com/Wendy-Xiao/Extsumm_local_\r\nglobal_context.\r\nsuccess of",
     "available at https://github.com/Wendy-Xiao/Extsumm_local_global_context. success of"),
])
def test_url_broken_after_underscore_is_rejoined(raw, expected):
    assert normalize(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    # "_" inside a line is a space the paper typed: no line end, no join
    ("see github.com/a/b_ and more", "see github.com/a/b_ and more"),
    # a page break is not a line break inside a URL (a running head follows)
    ("github.com/owner/tool_\fProceedings of ACL", "github.com/owner/tool_\nProceedings of ACL"),
    # not a URL: a variable with a trailing underscore, a Python name
    ("the weight w_\nis shared", "the weight w_ is shared"),
    ("calls __init__\nfirst", "calls __init__ first"),
    # the next line starts with punctuation, not a URL part
    ("github.com/owner/tool_\n(2019)", "github.com/owner/tool_ (2019)"),
    # after "." the next line may start a sentence: the old rule still keeps them apart
    ("code at https://github.com/ZNLP/ATSum.\nThe model", "code at https://github.com/ZNLP/ATSum. The model"),
    # a word ending in "https:" that is not a scheme, and "http:" without "//"
    ("see xhttps:\n//x and http:\nfoo", "see xhttps: //x and http: foo"),
])
def test_url_rejoin_keeps_other_line_ends(raw, expected):
    assert normalize(raw) == expected


def test_labels_code_urls_follow_the_rejoined_url():
    from tests.rules_support import labels  # the faithful rule file's own code-URL pattern

    text = normalize("Our code is at github.com/GuyAllard/markov_\nclustering and uses ROUGE.")
    assert labels(text).code_urls == ("github.com/GuyAllard/markov_clustering",)
    cut = "Our code is at github.com/GuyAllard/markov_ clustering and uses ROUGE."  # what version 1 stored
    assert labels(cut).code_urls == ("github.com/GuyAllard/markov_",)


# --- placeholders and hidden text ------------------------------------------------------------

def test_cid_placeholders_are_dropped_and_counted():
    got = normalize_document(["We use (cid:3)(cid:3)ROUGE-1.5.5 (cid:16) with -c 95", "page (cid:0) two"])
    assert got.text == "We use ROUGE-1.5.5 with -c 95\npage two"
    assert got.dropped == {"cid": 4}
    assert normalize_document(["cid: 3 and (cid:x) stay"]).dropped == {}


BLOB = '<latexit sha1_base64="hP+6LrUf2d3tZaldqaQQvEKMXyw=">AAAB7nicbVBNS8NAEJ3Ur1q/qh69LBbBU0lE0GPRi8cK</latexit>'


def test_latexit_blob_is_dropped_and_counted_but_words_around_it_stay():
    got = normalize_document([f"the loss {BLOB} is minimised", "Next page starts here."])
    assert got.text == "the loss is minimised\nNext page starts here."
    assert got.dropped == {"latexit": 1}
    cut = normalize_document(['<latexit sha1_base64="abc=">AAAB7nicb\nWe evaluate with ROUGE.'])
    assert cut.text == "We evaluate with ROUGE." and cut.dropped == {"latexit": 1}


CASE = HiddenTextCase(
    visible=("We report ROUGE-1.5.5 scores; our code is at", "https://github.com/GuyAllard/markov_",
             "clustering. Results follow."),
    outside=("Abu Bakr Soliman et al. / Procedia Computer Science 00 (2017) 000-000",),
    unmapped_glyphs=7,
    latexit=BLOB[:60] + "</latexit>",
)


@pytest.fixture(scope="module")
def hidden_pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("hidden") / "hidden.pdf"
    write_hidden_text_pdf(path, CASE)
    return path


@pytest.mark.parametrize("backend", BACKENDS)
def test_hidden_text_pdf_keeps_what_a_reader_sees_and_counts_the_rest(backend, hidden_pdf):
    ex = extract_file(hidden_pdf, backend, isolate=False)
    visible = "We report ROUGE-1.5.5 scores; our code is at https://github.com/GuyAllard/markov_clustering. " \
              "Results follow."
    assert ex.ok and ex.pages == 2
    assert ex.text == visible + "\n" + visible
    outside = sum(1 for c in CASE.outside[0] if not c.isspace())
    assert ex.dropped["outside_crop"] == 2 * outside  # off page 1, and in page 2's cut margin
    assert ex.dropped.get("latexit") == 1
    if backend == "pdfplumber":  # pdfminer writes "(cid:NN)"; PDFium gives control characters
        assert ex.dropped["cid"] == CASE.unmapped_glyphs
    assert ex.detail == ex.dropped_note and ex.detail.startswith("dropped: ")


def test_pages_without_hidden_text_report_nothing(hidden_pdf, tmp_path):
    plain = HiddenTextCase(visible=("Only visible text on this page, nothing else.",), outside=(),
                           unmapped_glyphs=0, latexit="")
    write_hidden_text_pdf(tmp_path / "plain.pdf", plain)
    for backend in BACKENDS:
        ex = extract_file(tmp_path / "plain.pdf", backend, isolate=False)
        assert ex.ok and ex.dropped == {} and ex.detail is None, backend


def test_the_stage_stores_and_reports_what_was_dropped(db, tmp_path, hidden_pdf):
    """`review extract` keeps the counts with the text (detail), in the run and in its summary."""
    from sqlalchemy import select

    from review.db.models import PaperText, Run
    from review.extract import run_extract
    from review.runs import record_run
    from review.settings import load_settings
    from tests.extract_support import PDFS, add_paper_with_pdf, write_config

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    hidden = add_paper_with_pdf(db, data_dir, hidden_pdf, "hidden")
    plain = add_paper_with_pdf(db, data_dir, PDFS / "plain-paper.pdf", "plain")
    settings = load_settings(write_config(tmp_path, db.url.render_as_string(hide_password=False), data_dir,
                                          timeout=60.0))
    with record_run(db, "extract") as run:
        report = run_extract(db, settings, run=run, workers=1, backend="pdfplumber")
    assert report.ok == 2
    outside = 2 * sum(1 for c in CASE.outside[0] if not c.isspace())
    assert report.dropped == {"cid": 7, "latexit": 1, "outside_crop": outside}
    assert f"dropped 7 (cid:NN) placeholders, 1 latexit blobs, {outside} characters outside crop boxes" \
        in report.summary
    assert report.as_dict()["dropped"] == report.dropped
    with db.session() as s:
        details = dict(s.execute(select(PaperText.paper_id, PaperText.detail)).all())
        counts = s.get(Run, run.id).counts
    assert details == {hidden: f"dropped: cid 7, latexit 1, outside_crop {outside}", plain: None}
    assert (counts["dropped_cid"], counts["dropped_latexit"], counts["dropped_outside_crop"]) == (7, 1, outside)
