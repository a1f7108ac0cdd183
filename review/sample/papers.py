"""The sample corpus, as data: twelve papers whose ROUGE reporting is known.

Each entry says what the paper's PDF says about ROUGE (package, parameters, protocol),
whether it has code (and what that code uses), and how its PDF fails if it does. The
`truth` fields are what a careful human reviewer would answer; the survey's automated
labels are proposals and may differ (that is why the human pass exists).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SampleRepo:
    owner: str
    name: str
    files: dict[str, str]


@dataclass(frozen=True)
class SamplePaper:
    number: int
    year: int
    title: str
    method: list[str]  # paragraphs of the experimental-setup section (where ROUGE is reported)
    rouge_table: bool = True
    pdf: str = "ok"  # ok | broken | missing
    repo: SampleRepo | None = None
    truth: dict[str, object] = field(default_factory=dict)

    @property
    def ident(self) -> str:
        return f"{self.year}.sample-1.{self.number}"


_EVAL_ROUGE155 = SampleRepo("sample-org", "ext-summ", {
    "README.md": "# ext-summ\n\nExtractive summarization. Evaluation uses the official ROUGE-1.5.5 via pyrouge "
                 "(pltrdy/pyrouge); see `evaluate.sh`.\n",
    "requirements.txt": "torch==1.4.0\ngit+https://github.com/pltrdy/pyrouge\n",
    "evaluate.sh": "#!/bin/sh\nperl ROUGE-1.5.5.pl -e data -c 95 -r 1000 -n 2 -m -a system.xml\n",
})
_EVAL_ROUGE_SCORE = SampleRepo("sample-org", "abs-summ", {
    "README.md": "# abs-summ\n\nAbstractive summarization with pointer networks.\n",
    "requirements.txt": "torch==1.7.1\nrouge-score==0.0.4\n",
    "evaluate.py": "from rouge_score import rouge_scorer\n\n\ndef score(refs, hyps):\n"
                   "    scorer = rouge_scorer.RougeScorer(['rouge1', 'rouge2', 'rougeLsum'], use_stemmer=True)\n"
                   "    return [scorer.score(r, h) for r, h in zip(refs, hyps)]\n",
})
_EVAL_FILES2ROUGE = SampleRepo("sample-org", "dialog-summ", {
    "README.md": "# dialog-summ\n\nWe evaluate with files2rouge (https://github.com/pltrdy/files2rouge).\n",
    "scripts/eval.sh": "#!/bin/sh\nfiles2rouge refs.txt hyps.txt --ignore_empty_summary\n",
})
_MT_CODE = SampleRepo("sample-org", "nmt-lite", {
    "README.md": "# nmt-lite\n\nA small translation system. BLEU with sacrebleu.\n",
    "requirements.txt": "sacrebleu==2.0.0\n",
    "score.py": "import sacrebleu\n\n\ndef bleu(refs, hyps):\n    return sacrebleu.corpus_bleu(hyps, [refs]).score\n",
})

SAMPLE_PAPERS: list[SamplePaper] = [
    SamplePaper(1, 2018, "Extractive Summarization with Sentence Graphs", [
        "We evaluate with ROUGE-1.5.5 and report ROUGE-1, ROUGE-2 and ROUGE-L F1 scores. All scores are computed "
        "with the options -c 95 -r 1000 -n 2 -m so that they can be compared with earlier systems.",
    ], repo=_EVAL_ROUGE155, truth={"rouge": True, "packages": ["ROUGE-1.5.5"], "params": True, "reproducible": True}),
    SamplePaper(2, 2019, "Pointer Networks for News Headlines", [
        "Summaries are scored with ROUGE using the pyrouge wrapper by bheinzerling, reporting ROUGE-1, ROUGE-2 and "
        "ROUGE-L recall.",
    ], truth={"rouge": True, "packages": ["BZ/pyrouge"], "params": False, "reproducible": False}),
    SamplePaper(3, 2019, "Abstractive Summarization of Scientific Articles", [
        "We report ROUGE scores computed with the rouge-score Python package released by Google Research, with "
        "stemming enabled.",
    ], repo=_EVAL_ROUGE_SCORE, truth={"rouge": True, "packages": ["GL/rougescore"], "params": False}),
    SamplePaper(4, 2020, "Question Generation from Paragraphs", [
        "Following prior work on question generation, we report BLEU-4, METEOR and ROUGE-L computed with the "
        "nlg-eval toolkit.",
    ], truth={"rouge": True, "packages": ["MS/rouge"], "reproducible": True}),
    SamplePaper(5, 2020, "Dialogue Summarization with Speaker Graphs", [
        "We report ROUGE-1, ROUGE-2 and ROUGE-L F1 scores on the test set, and we use bootstrap resampling to "
        "compute a 95% confidence interval for every ROUGE score.",
    ], repo=_EVAL_FILES2ROUGE, truth={"rouge": True, "code_packages": ["PT/files2rouge"]}),
    SamplePaper(6, 2021, "Low-resource Machine Translation with Pivot Languages", [
        "We evaluate translation quality with BLEU computed by sacrebleu and with chrF on detokenized output.",
    ], rouge_table=False, repo=_MT_CODE, truth={"rouge": False}),
    SamplePaper(7, 2021, "Sentiment Classification with Label Noise", [
        "We report accuracy and macro-averaged F1 on the test set, averaged over five random seeds.",
    ], rouge_table=False, truth={"rouge": False}),
    SamplePaper(8, 2021, "A Survey of Evaluation in Text Generation", [
        "Earlier summarization work relied on the rouge family of overlap measures; in this survey we do not "
        "compute any metric ourselves and only discuss published results.",
    ], rouge_table=False, truth={"rouge": False}),
    SamplePaper(9, 2022, "Long Document Summarization with Sparse Attention", [
        "We report ROUGE-1, ROUGE-2 and ROUGE-L scores computed with ROUGE-1.5.5.",
    ], pdf="broken", truth={"rouge": True, "error_extract": True}),
    SamplePaper(10, 2022, "Controllable Summarization with Length Tokens", [
        "ROUGE scores are computed with the py-rouge package with the settings -n 2 -l 100 -m applied to all "
        "systems, and we report ROUGE-1, ROUGE-2 and ROUGE-L F1.",
    ], truth={"rouge": True, "packages": ["DI/pyrouge"], "params": True, "reproducible": True}),
    SamplePaper(11, 2022, "Faithfulness in Meeting Summarization", [
        "We compute ROUGE-1, ROUGE-2 and ROUGE-L scores with the SacreROUGE library and report F1.",
    ], truth={"rouge": True, "packages": ["DD/sacrerouge"], "reproducible": False}),
    SamplePaper(12, 2022, "Multi-news Summarization with Graph Transformers", [
        "We report ROUGE-1, ROUGE-2 and ROUGE-L F1 scores.",
    ], pdf="missing", truth={"rouge": True, "error_download": True}),
]
