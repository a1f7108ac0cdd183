"""BLEU's adapters: the reference (SacreBLEU) and each candidate package, the smallest call of each API.

Each function takes the options (dict) and returns `score(reference_sentences,
hypothesis_sentences) -> {"bleu": {"score": value on 0-1}}`; they run inside the package's
own venv under review/packages/adapter_main.py (standard library plus the package).
"""


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


def torchmetrics_bleu(opts):
    """torchmetrics' BLEUScore with its defaults (4-grams, no smoothing) on its own whitespace
    tokenization; the lowercase variant lowercases first (BLEUScore has no option for it). One
    metric object, reset after every pair so its state never grows."""
    from torchmetrics.text import BLEUScore

    bleu = BLEUScore()
    lower = opts.get("variant") == "lowercase"

    def score(ref, hyp):
        h, r = " ".join(hyp), " ".join(ref)
        if lower:
            h, r = h.lower(), r.lower()
        out = float(bleu([h], [[r]]))
        bleu.reset()
        return {"bleu": {"score": out}}
    return score
