"""PDF URLs from DBLP `ee` links, one case per venue and era, and the reasons when none fits."""

from __future__ import annotations

import pytest

from review.harvest.pdf_urls import resolve, resolve_anthology_url

CASES = [
    # NeurIPS: old papers.nips.cc slugs, the 2019-2021 hash pages, the 2022+ paper_files layout
    ("http://papers.nips.cc/paper/2588-learning-with-local-and-global-consistency",
     "http://papers.nips.cc/paper/2588-learning-with-local-and-global-consistency.pdf"),
    ("https://papers.nips.cc/paper/2019/hash/f1748d6b0fd9d439f71450117eba2725-Abstract.html",
     "https://papers.nips.cc/paper/2019/file/f1748d6b0fd9d439f71450117eba2725-Paper.pdf"),
    ("https://proceedings.neurips.cc/paper/2021/hash/00ac8ed3b4327bdd4ebbebcb2ba10a00-Abstract.html",
     "https://proceedings.neurips.cc/paper/2021/file/00ac8ed3b4327bdd4ebbebcb2ba10a00-Paper.pdf"),
    ("http://papers.nips.cc/paper_files/paper/2022/hash/0008e5a5b4a04f7fdb01f8bd3f2e4ac8-Abstract-Datasets_and_Benchmarks.html",
     "http://papers.nips.cc/paper_files/paper/2022/file/0008e5a5b4a04f7fdb01f8bd3f2e4ac8-Paper-Datasets_and_Benchmarks.pdf"),
    ("https://proceedings.neurips.cc/paper_files/paper/2022/hash/0008e5a5b4a04f7fdb01f8bd3f2e4ac8-Abstract-Conference.html",
     "https://proceedings.neurips.cc/paper_files/paper/2022/file/0008e5a5b4a04f7fdb01f8bd3f2e4ac8-Paper-Conference.pdf"),
    ("http://books.nips.cc/papers/files/nips16/NIPS2003_AA01.pdf",
     "http://books.nips.cc/papers/files/nips16/NIPS2003_AA01.pdf"),
    # ICML: AAAI library (2003), own sites with PDFs (2008-2012), JMLR W&CP (2013-14), PMLR (2015-)
    ("http://www.aaai.org/Library/ICML/2003/icml03-013.php", "https://www.aaai.org/Papers/ICML/2003/ICML03-013.pdf"),
    ("http://icml2008.cs.helsinki.fi/papers/264.pdf", "http://icml2008.cs.helsinki.fi/papers/264.pdf"),
    ("http://jmlr.org/proceedings/papers/v28/sutskever13.html", "http://jmlr.org/proceedings/papers/v28/sutskever13.pdf"),
    ("http://proceedings.mlr.press/v37/ioffe15.html", "http://proceedings.mlr.press/v37/ioffe15/ioffe15.pdf"),
    ("https://proceedings.mlr.press/v202/kirchenbauer23a.html",
     "https://proceedings.mlr.press/v202/kirchenbauer23a/kirchenbauer23a.pdf"),
    # IJCAI: direct PDFs (2003-2013), Abstract pages (2015-2016), DOIs and proceedings pages (2017-)
    ("http://ijcai.org/Proceedings/09/Papers/123.pdf", "http://ijcai.org/Proceedings/09/Papers/123.pdf"),
    ("http://www.aaai.org/ocs/index.php/IJCAI/IJCAI13/paper/view/6789", None),  # AAAI OCS page: no PDF pattern
    ("http://ijcai.org/Abstract/15/298", "https://www.ijcai.org/Proceedings/15/Papers/298.pdf"),
    ("https://doi.org/10.24963/ijcai.2019/517", "https://www.ijcai.org/proceedings/2019/0517.pdf"),
    ("https://www.ijcai.org/proceedings/2020/61", "https://www.ijcai.org/proceedings/2020/0061.pdf"),
    # ICLR: arXiv (2013-2016), OpenReview (2017-)
    ("http://arxiv.org/abs/1301.3781", "https://arxiv.org/pdf/1301.3781"),
    ("https://openreview.net/forum?id=HkAClQgA-", "https://openreview.net/pdf?id=HkAClQgA-"),
    # CVPR: CVF open access, both layouts
    ("http://openaccess.thecvf.com/content_cvpr_2018/html/Hu_Squeeze-and-Excitation_Networks_CVPR_2018_paper.html",
     "http://openaccess.thecvf.com/content_cvpr_2018/papers/Hu_Squeeze-and-Excitation_Networks_CVPR_2018_paper.pdf"),
    ("https://openaccess.thecvf.com/content/CVPR2022/html/Rombach_High-Resolution_Image_Synthesis_CVPR_2022_paper.html",
     "https://openaccess.thecvf.com/content/CVPR2022/papers/Rombach_High-Resolution_Image_Synthesis_CVPR_2022_paper.pdf"),
]


@pytest.mark.parametrize("ee,expected", CASES)
def test_each_venue_and_era(ee, expected):
    res = resolve([ee])
    assert res.pdf_url == expected
    assert (res.reason is None) == (expected is not None)


def test_proceedings_beat_arxiv_and_publisher_links():
    res = resolve(["https://doi.org/10.1109/CVPR.2018.00745", "https://arxiv.org/abs/1709.01507v4",
                   "http://openaccess.thecvf.com/content_cvpr_2018/html/Hu_X_CVPR_2018_paper.html"])
    assert res.pdf_url.endswith("/papers/Hu_X_CVPR_2018_paper.pdf") and res.rule == "cvf"
    assert res.arxiv_id == "1709.01507"


def test_unresolved_reasons():
    assert resolve([]).reason == "no ee link in the DBLP record"
    assert resolve(["https://doi.org/10.1145/1015330.1015332"]).reason.startswith("only publisher DOI links")
    res = resolve(["https://dl.acm.org/doi/10.5555/1"])
    assert res.pdf_url is None and "dl.acm.org" in res.reason and res.landing == "https://dl.acm.org/doi/10.5555/1"


# -- the ACL Anthology's <url> element ------------------------------------------------------------

ANTHOLOGY_CASES = [
    ("W02-0101", "https://aclanthology.org/W02-0101.pdf"),  # the usual case: an anthology id
    ("2021.newsum-1.3", "https://aclanthology.org/2021.newsum-1.3.pdf"),
    ("https://www.aclweb.org/anthology/P19-1001", "https://aclanthology.org/P19-1001.pdf"),  # old site, landing
    ("https://aclanthology.org/2020.acl-main.1/", "https://aclanthology.org/2020.acl-main.1.pdf"),
    ("http://www.mt-archive.info/MTS-2005-Koehn.pdf", "http://www.mt-archive.info/MTS-2005-Koehn.pdf"),
    ("https://arxiv.org/abs/1909.01234", "https://arxiv.org/pdf/1909.01234"),
]


@pytest.mark.parametrize("url,expected", ANTHOLOGY_CASES)
def test_anthology_urls_that_resolve_offline(url, expected):
    res = resolve_anthology_url(url)
    assert (res.pdf_url, res.reason, res.publisher_url) == (expected, None, None)


def test_publisher_landing_pages_keep_the_reason_and_the_doi():
    ranlp = resolve_anthology_url("https://doi.org/10.26615/978-954-452-049-6_104")  # RANLP 2017
    assert ranlp.pdf_url is None and ranlp.doi == "10.26615/978-954-452-049-6_104"
    assert ranlp.reason.startswith("publisher DOI link, not a PDF") and ranlp.reason.endswith("6_104")
    amta = resolve_anthology_url("https://link.springer.com/chapter/10.1007/978-3-540-30194-3_13")  # AMTA 2004
    assert amta.pdf_url is None and amta.doi == "10.1007/978-3-540-30194-3_13" and "paywall" in amta.reason
    other = resolve_anthology_url("http://www.lrec-conf.org/proceedings/lrec2002/sumarios/123.htm")
    assert other.pdf_url is None and other.reason.startswith("publisher landing page, not a PDF")
    assert other.publisher_url == "http://www.lrec-conf.org/proceedings/lrec2002/sumarios/123.htm"
    assert resolve_anthology_url(None).reason == "the anthology XML has no <url> for this paper"
