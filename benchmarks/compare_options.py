"""Each precision option of patterns/rouge/rouge.toml against the faithful rules, per fixture PDF.

Prints, for every named option (and for rouge-precise.toml, all of them), which labels of
which fixture papers change compared with the faithful file. Text comes from the
extraction stage (pypdfium2, the one normalization).

    .venv/bin/python benchmarks/compare_options.py [PDF_FOLDER]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from review.extract import extract_file  # noqa: E402
from review.rules import Engine, label_scan, load_ruleset  # noqa: E402

FIELDS = ("prelim", "computes", "packages", "params", "protocol", "variants")


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "fixtures" / "pdfs"
    texts = {}
    for pdf in sorted(folder.glob("*.pdf")):
        ex = extract_file(pdf, isolate=False)
        if ex.outcome == "ok":
            texts[pdf.stem[:40]] = ex.text or ""
    faithful = load_ruleset(ROOT / "patterns" / "rouge" / "rouge.toml")
    variants = {name: load_ruleset(ROOT / "patterns" / "rouge" / "rouge.toml", [name]) for name in faithful.available_options}
    variants["rouge-precise.toml (all)"] = load_ruleset(ROOT / "patterns" / "rouge" / "rouge-precise.toml")

    def run(rs):  # type: ignore[no-untyped-def]
        eng = Engine(rs)
        return {name: label_scan(eng.scan(t), rs).labels for name, t in texts.items()}

    base = run(faithful)
    print(f"{len(texts)} fixture texts; faithful: "
          f"{sum(l.computes for l in base.values())} compute ROUGE, "
          f"{sum(len(l.packages) for l in base.values())} package labels, "
          f"{sum(len(l.params) for l in base.values())} parameter strings")
    for opt, rs in variants.items():
        got = run(rs)
        changes = []
        for name in texts:
            for f in FIELDS:
                a, b = getattr(base[name], f), getattr(got[name], f)
                if a != b:
                    if isinstance(a, tuple):
                        removed, added = sorted(set(a) - set(b)), sorted(set(b) - set(a))
                        desc = " ".join([f"-{x!r}" for x in removed] + [f"+{x!r}" for x in added])
                    else:
                        desc = f"{a} -> {b}"
                    changes.append(f"    {name}: {f} {desc}")
        print(f"\n[{opt}] {rs.available_options.get(opt, '')}")
        print(f"  papers changed: {len({c.split(':')[0] for c in changes})}; "
              f"package labels {sum(len(l.packages) for l in got.values())}, "
              f"parameter strings {sum(len(l.params) for l in got.values())}, "
              f"compute ROUGE {sum(l.computes for l in got.values())}")
        print("\n".join(changes) if changes else "    (no change on the fixtures)")


if __name__ == "__main__":
    main()
