"""``overdub compare A B``: two runs on the same tasks and trials, paired, and which one is better.

Trials are paired on (task, trial) when both runs hold a counted (not ``infra``) result for it; the rest
are listed as unpaired. Per task: the difference A − B of pass rate and of mean score over the pairs.
Overall: the difference of the mean over tasks of the mean score, its paired bootstrap 95% interval
(tasks, then trial pairs within a task; :func:`~.stats.paired_bootstrap_diff_ci`), and the exact sign
test over tasks on the per-task mean-score differences (ties dropped).

The verdict is ``A better`` when the interval lies above 0, more tasks favour A than B, and the sign test
gives p < 0.05; ``B better`` the mirror; otherwise ``no clear winner``. Both must agree because the
bootstrap alone can be carried by one task with a large difference, and the sign test alone ignores how
large the differences are. With fewer than 6 tasks that differ no sign test reaches p < 0.05 (5 of 5
gives 0.0625), so such a comparison is never a win.

Exit codes: 0 the comparison was made (whatever the verdict); 2 bad input.
"""

from __future__ import annotations

import json
from typing import Any

from ..cliargs import Parser
from ..errors import UsageError
from .reader import Run, Trial, load_run
from .stats import paired_bootstrap_diff_ci, seed_from, sign_test
from .summary import rounded

ALPHA = 0.05
TIE = 1e-9
VERDICTS = ("A better", "B better", "no clear winner")

EXAMPLE = """example:
  overdub compare runs/agent-v2 runs/agent-v1          is v2 better than v1 on the same tasks and trials?"""


def main(argv: list[str]) -> int:
    import argparse

    parser = Parser(prog="overdub compare", description="Compare two evaluation runs, paired on task and trial.",
                    epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="A", help="a run directory (holds run.json)")
    parser.add_argument("b", metavar="B", help="another run directory")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = parser.parse_args(argv)
    result = compare(load_run(args.a), load_run(args.b))
    print(json.dumps(result, indent=2) if args.json else compare_text(result))
    return 0


def compare(a: Run, b: Run) -> dict[str, Any]:
    """The paired comparison of ``a`` and ``b`` (see the module docstring)."""
    ta = {t.key: t for t in a.trials}
    tb = {t.key: t for t in b.trials}
    keys = sorted(k for k in ta.keys() & tb.keys() if ta[k].counted and tb[k].counted)
    if not keys:
        raise UsageError(f"{a.root} and {b.root}: no (task, trial) has a counted result in both runs; "
                         "nothing to pair")
    pairs: dict[str, list[tuple[Trial, Trial]]] = {}
    for k in keys:
        pairs.setdefault(k[0], []).append((ta[k], tb[k]))
    tasks = {tid: _task(p) for tid, p in pairs.items()}
    ids = list(tasks)
    # Task scores have 3 decimals: a difference under TIE is float rounding (the same scores summed in
    # another order), a tie, not a win.
    diffs = [0.0 if abs(d) < TIE else d for d in (tasks[t]["mean_score_diff"] for t in ids)]
    ci = paired_bootstrap_diff_ci([([x.score for x, _ in pairs[t]], [y.score for _, y in pairs[t]]) for t in ids],
                                  seed=seed_from("compare", *ids))
    p, pos, neg, ties = sign_test(diffs)
    ha, hb = a.meta.get("grader_hashes", {}), b.meta.get("grader_hashes", {})
    overall = {
        "tasks": len(ids), "pairs": len(keys),
        "mean_score_a": _mean(tasks[t]["mean_score_a"] for t in ids),
        "mean_score_b": _mean(tasks[t]["mean_score_b"] for t in ids),
        "mean_score_diff": _mean(diffs), "mean_score_diff_ci95": list(ci),
        "pass_rate_diff": _mean(tasks[t]["pass_rate_diff"] for t in ids),
        "sign_test": {"p": p, "a_higher": pos, "b_higher": neg, "ties": ties},
    }
    return rounded({
        "a": {"dir": str(a.root), "agent": (a.meta.get("agent") or {}).get("id")},
        "b": {"dir": str(b.root), "agent": (b.meta.get("agent") or {}).get("id")},
        "unpaired": _unpaired(ta, tb),
        "grader_differs": sorted(t for t in ids if ha.get(t) != hb.get(t)),
        "tasks": tasks, "overall": overall, "verdict": verdict(ci, pos, neg, p),
    })


def verdict(ci: tuple[float, float], a_higher: int, b_higher: int, p: float) -> str:
    """``A better``, ``B better`` or ``no clear winner`` (the rule of the module docstring)."""
    if p < ALPHA and ci[0] > 0 and a_higher > b_higher:
        return "A better"
    if p < ALPHA and ci[1] < 0 and b_higher > a_higher:
        return "B better"
    return "no clear winner"


def _task(pairs: list[tuple[Trial, Trial]]) -> dict[str, Any]:
    n = len(pairs)
    pa = sum(bool(x.passed) for x, _ in pairs) / n
    pb = sum(bool(y.passed) for _, y in pairs) / n
    ma = sum(x.score for x, _ in pairs) / n
    mb = sum(y.score for _, y in pairs) / n
    return {"pairs": n, "pass_rate_a": pa, "pass_rate_b": pb, "pass_rate_diff": pa - pb,
            "mean_score_a": ma, "mean_score_b": mb, "mean_score_diff": ma - mb}


def _unpaired(ta: dict[tuple[str, int], Trial], tb: dict[tuple[str, int], Trial]) -> dict[str, list[str]]:
    def name(k: tuple[str, int]) -> str:
        return f"{k[0]}/{k[1]}"

    both = ta.keys() & tb.keys()
    return {"only_in_a": [name(k) for k in sorted(ta.keys() - tb.keys())],
            "only_in_b": [name(k) for k in sorted(tb.keys() - ta.keys())],
            "infra_in_a": [name(k) for k in sorted(both) if not ta[k].counted],
            "infra_in_b": [name(k) for k in sorted(both) if not tb[k].counted]}


def _mean(values: Any) -> float:
    v = list(values)
    return sum(v) / len(v)


def compare_text(r: dict[str, Any]) -> str:
    o = r["overall"]
    lines = [f"A = {r['a']['dir']} (agent {r['a']['agent']})", f"B = {r['b']['dir']} (agent {r['b']['agent']})",
             f"paired: {o['pairs']} trials on {o['tasks']} tasks"]
    for key, what in (("only_in_a", "only in A"), ("only_in_b", "only in B"), ("infra_in_a", "infra in A"),
                      ("infra_in_b", "infra in B")):
        if r["unpaired"][key]:
            shown = r["unpaired"][key]
            more = f" and {len(shown) - 8} more" if len(shown) > 8 else ""
            lines.append(f"unpaired, {what}: {len(shown)} ({', '.join(shown[:8])}{more})")
    if r["grader_differs"]:
        lines.append(f"grader hash differs between the runs for: {', '.join(r['grader_differs'])} "
                     "(their scores may not be comparable)")
    header = f"{'task':<28} {'pairs':>5}  {'pass A':>6} {'pass B':>6} {'diff':>6}  {'mean A':>6} {'mean B':>6} {'diff':>6}"
    lines += ["", header, "-" * len(header)]
    for tid, t in r["tasks"].items():
        lines.append(f"{tid:<28} {t['pairs']:>5}  {t['pass_rate_a']:>6.2f} {t['pass_rate_b']:>6.2f} "
                     f"{t['pass_rate_diff']:>+6.2f}  {t['mean_score_a']:>6.3f} {t['mean_score_b']:>6.3f} "
                     f"{t['mean_score_diff']:>+6.3f}")
    s = o["sign_test"]
    lo, hi = o["mean_score_diff_ci95"]
    lines += ["",
              f"mean score: A {o['mean_score_a']:.3f}, B {o['mean_score_b']:.3f}; A - B = {o['mean_score_diff']:+.3f}, "
              f"95% CI [{lo:+.3f}, {hi:+.3f}] (paired bootstrap, tasks then trials); "
              f"pass rate A - B = {o['pass_rate_diff']:+.3f}",
              f"sign test over tasks: A higher on {s['a_higher']}, B higher on {s['b_higher']}, "
              f"{s['ties']} tied; p = {s['p']:.4g}",
              f"verdict: {r['verdict']}"]
    return "\n".join(lines)
