"""Recompute every number of the summary table at the top of docs/results.md from the committed ledgers.

Each row of that table is recomputed here (n, the gap to DPA and to EA with its 95% interval) and compared with the
table's text; any difference is printed and the script exits 1. Gaps are Grassmann over the Transformer, minus 1
(negative: the Grassmann model is better). Paired by seed; the relative interval is the interval of the paired PPL
difference over the Transformer's mean (as `study report` and paired.py have it), except the dropout control, whose
comparisons are means of log ratios (as interaction.py has it). 95% intervals use the exact t quantile.

    python3 docs/results/check_numbers.py            # exit 0: every cell matches
    python3 docs/results/check_numbers.py --print    # the recomputed cells
"""
import json
import math
import re
import statistics as st
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
E2 = ROOT / "docs/results/evidence-2"
T975 = {1: 12.706205, 2: 4.302653}  # t quantile 0.975 for 1 and 2 degrees of freedom (n ≤ 3 here)


def ledger(*paths):
    runs = []
    for p in paths:
        runs += [json.loads(line) for line in (E2 / p / "ledger.jsonl").read_text().splitlines() if line.strip()]
    return runs


def pick(runs, kind, lr=None, tokens=None, norm=None, dropout_at=None):
    """seed -> test PPL of the runs that match."""
    out = {}
    for r in runs:
        t = r["config"]["training"]
        if r["flags"]["model"] != kind or (lr is not None and not math.isclose(t["lr"], lr)):
            continue
        if tokens is not None and r["flags"]["tokens"] != tokens:
            continue
        if norm is not None and r["config"]["model"]["norm"] != norm:
            continue
        if dropout_at is not None and r["flags"].get("dropout-at", "stream" if kind == "grassmann" else "branch") != dropout_at:
            continue
        assert t["seed"] not in out, (kind, lr, tokens, norm, t["seed"])
        out[t["seed"]] = r["heldOut"]["test"]["ppl"]
    return out


def gap(g, o):
    """Paired gap as a relative cell: '+1.4% (−2.8% … +5.6%)', or '−0.7%' with one pair."""
    seeds = sorted(set(g) & set(o))
    d = [g[s] - o[s] for s in seeds]
    base = st.mean(o[s] for s in seeds)
    m = st.mean(d)
    cell = pct(m / base)
    if len(d) > 1:
        h = T975[len(d) - 1] * st.stdev(d) / math.sqrt(len(d))
        cell += f" ({pct((m - h) / base)} … {pct((m + h) / base)})"
    return len(seeds), cell


def log_gap(g, o):
    seeds = sorted(set(g) & set(o))
    x = [math.log(g[s] / o[s]) for s in seeds]
    m, h = st.mean(x), T975[len(x) - 1] * st.stdev(x) / math.sqrt(len(x))
    return len(seeds), f"{pct(math.expm1(m))} ({pct(math.expm1(m - h))} … {pct(math.expm1(m + h))})"


def pct(x):
    return f"{x * 100:+.1f}%".replace("-", "−")


def main_job():
    """The main job's one-seed gaps on validation PPL, from its report's table."""
    text = (ROOT / "docs/results/main-job/report.md").read_text()
    val = {m: float(v) for m, v in re.findall(r"^\| (grassmann|transformer-dpa|transformer-ea) \|(?:[^|]*\|){3}\s*([\d.]+) \|",
                                                  text, re.M)}
    return "1", pct(val["grassmann"] / val["transformer-dpa"] - 1), pct(val["grassmann"] / val["transformer-ea"] - 1)


def rows():
    lad = ledger("ladder")
    s32 = ledger("ladder", "lr-check", "lr-check-2")
    size_m, paper, drop = ledger("size-m"), ledger("paper-size"), ledger("dropout-control")
    out = {}
    for label, tokens in (("S, 0.8M tokens", 800000), ("S, 3.2M tokens", 3200000), ("S, 12.8M tokens", 12800000)):
        g = pick(lad, "grassmann", 0.004, tokens)
        n, d = gap(g, pick(lad, "transformer-dpa", 0.002, tokens))
        _, e = gap(g, pick(lad, "transformer-ea", 0.004, tokens))
        out[label] = (str(n), d, e)
    g = pick(s32, "grassmann", 0.004, 3200000)
    n, d = gap(g, pick(s32, "transformer-dpa", 0.004, 3200000))
    out["S, 3.2M, DPA at 4e-3"] = (str(n), d, "–")
    n, d = gap(g, pick(s32, "transformer-dpa", 0.008, 3200000))
    _, e = gap(g, pick(s32, "transformer-ea", 0.008, 3200000))
    out["S, 3.2M, DPA and EA at 8e-3"] = (str(n), d, e)
    n, d = gap(pick(size_m, "grassmann"), pick(size_m, "transformer-dpa"))
    _, e = gap(pick(size_m, "grassmann"), pick(size_m, "transformer-ea"))
    out["M, 0.8M tokens"] = (str(n), d, e)
    for at in ("branch", "stream"):
        n, d = log_gap(pick(drop, "grassmann", dropout_at=at), pick(drop, "transformer-dpa", dropout_at=at))
        out[f"dropout, both on the {at}"] = (str(n), d, "–")
    n, d = log_gap(pick(drop, "grassmann", dropout_at="stream"), pick(drop, "transformer-dpa", dropout_at="branch"))
    out["dropout, each kind's own"] = (str(n), d, "–")
    for norm in ("post", "pre"):
        g = pick(paper, "grassmann", norm=norm)
        n, d = gap(g, pick(paper, "transformer-dpa", norm=norm))
        _, e = gap(g, pick(paper, "transformer-ea", norm=norm))
        out[f"paper-6l {norm}-LN"] = (str(n), d, e)
    out["main job"] = main_job()
    return out


def table_rows():
    """First cell -> (n, vs DPA, vs EA) of the summary table in docs/results.md."""
    text = (ROOT / "docs/results.md").read_text()
    block = text.split("<!-- summary table -->", 2)
    if len(block) < 3:
        sys.exit("docs/results.md: no summary table between two '<!-- summary table -->' markers")
    cells = {}
    for line in block[1].splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) >= 5 and not set(c[0]) <= set("-: ") and c[0] != "setting":
            cells[c[0].replace("*", "")] = (c[1], c[2].replace("*", ""), c[3].replace("*", ""))
    return cells


def main(argv):
    want = rows()
    if "--print" in argv:
        for k, v in want.items():
            print(f"| {k} | {' | '.join(v)} |")
        return 0
    have = table_rows()
    bad = 0
    for k, v in want.items():
        if k not in have:
            print(f"missing row: {k}")
            bad += 1
        elif have[k] != v:
            print(f"{k}: the table says {have[k]}, the ledgers give {v}")
            bad += 1
    for k in set(have) - set(want):
        print(f"row not checked: {k}")
        bad += 1
    print(f"{len(want) - bad if bad <= len(want) else 0} of {len(want)} rows match" if bad else f"all {len(want)} rows match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
