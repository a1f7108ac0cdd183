"""The named precision options of patterns/rouge.toml, each against the faithful rules."""

from __future__ import annotations

from tests.rules_support import labels, rules

BODY = "We evaluate with ROUGE-L F1. " + "The model is trained for long. " * 80


def opt(name: str):  # type: ignore[no-untyped-def]
    return rules("rouge.toml", name)


def test_ignore_bibliography() -> None:
    text = BODY + "Acknowledgments. We thank all. References Kavita Ganesan. 2018. ROUGE 2.0: Updated measures. " \
                  "Chin-Yew Lin. 2004. ROUGE: a package."
    assert "KG/rouge2" in labels(text).packages
    assert "KG/rouge2" not in labels(text, opt("ignore-bibliography")).packages
    # the region ends at an appendix: a citation there counts again
    appendix = text + " A Appendix We used files2rouge for scoring."
    assert "PT/files2rouge" in labels(appendix, opt("ignore-bibliography")).packages
    # a "References" early in the text (a table header) opens no region
    early = "References 1 5 10. ROUGE 2.0 (Ganesan, 2018). " + BODY
    assert "KG/rouge2" in labels(early, opt("ignore-bibliography")).packages


def test_params_near_rouge() -> None:
    far = BODY + "x " * 400 + "extract with tar -x -z -f data.tgz"
    assert labels(far).params == (" -x -z -f data",)
    assert labels(far, opt("params-near-rouge")).params == ()
    near = BODY + "we ran ROUGE-1.5.5 -c 95 -r 1000 -n 2 -m, as usual"
    assert labels(near, opt("params-near-rouge")).params == (" -c 95 -r 1000 -n 2 -m",)


def test_no_hrouge() -> None:
    text = "HROUGE with stemming is our new metric"
    faithful = labels(text)
    assert faithful.prelim and faithful.protocol == ("stemming",)
    assert labels(text, opt("no-hrouge")) == labels("", opt("no-hrouge"))  # gated out: no ROUGE at all
    assert labels("ROUGE and HROUGE", opt("no-hrouge")).prelim


def test_table_headers() -> None:
    assert labels("we run the rouge baseline").computes  # "run" reads as R-N under the faithful abbrev
    assert not labels("we run the rouge baseline", opt("table-headers")).computes
    assert labels("ROUGE table: RG-1 RG-2 RG-L", opt("table-headers")).computes
    assert not labels("ROUGE table: RG-1 RG-2 RG-L").computes
    assert labels("rouge: R-1 R-2", opt("table-headers")).computes


def test_rouge_score_package() -> None:
    assert "GL/rougescore" in labels(BODY + "pip install rouge-score", opt("rouge-score-package")).packages
    assert "GL/rougescore" in labels(BODY + "the rouge_score package", opt("rouge-score-package")).packages
    assert "GL/rougescore" not in labels(BODY + "higher ROUGE-scores", opt("rouge-score-package")).packages


def test_specific_wins_resolves_overlaps_as_declared() -> None:
    text = BODY + "https://github.com/pltrdy/pyrouge and, much later in the text, https://github.com/someone/rouge-tools"
    assert set(labels(text).packages) == {"PT/pyrouge", "unknown pyrouge", "github rouge"}
    # span scope: the second URL's 'github rouge' is not explained by a specific label, so it stays
    assert set(labels(text, opt("specific-wins")).packages) == {"PT/pyrouge", "github rouge"}
    only = BODY + "https://github.com/pltrdy/pyrouge"
    assert set(labels(only, opt("specific-wins")).packages) == {"PT/pyrouge"}
    # paper scope: 'pyrouge' anywhere gives way to a specific pyrouge label anywhere
    apart = BODY + "we use pyrouge. " + "z " * 300 + "bheinzerling"
    assert set(labels(apart, opt("specific-wins")).packages) == {"BZ/pyrouge"}


def test_precise_file_is_all_options_together() -> None:
    precise = rules("rouge-precise.toml")
    base = rules("rouge.toml")
    together = rules("rouge.toml", *(o for o in precise.options if o in base.available_options))
    text = BODY + "https://github.com/pltrdy/pyrouge -2 and -L F1 higher ROUGE-scores"
    # the precise file's own options attach measures and protocol terms (P2, P3), capture parameter strings
    # whole (P1), also far from ROUGE when they are the script's own options, add a computed-flag input, and make
    # package and code-link labels precise; the rest is the base's options
    own = {"p2-attached", "p3-attached", "params-whole", "params-distinctive", "table-headers-measured",
           "versions-not-numbers", "rouge-script-names", "pypi-package-names", "github-rouge-repository", "own-code-urls"}
    assert set(precise.options) - set(base.available_options) == own
    a, b = labels(text, precise), labels(text, together)
    own_fields = ("variants", "protocol", "params", "flags", "code_urls")
    assert {k: v for k, v in vars(a).items() if k not in own_fields} == \
        {k: v for k, v in vars(b).items() if k not in own_fields}
    assert a.code_urls == () and b.code_urls == ("https://github.com/pltrdy/pyrouge",)  # a package, not own code
