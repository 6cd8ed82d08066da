"""``overdub report OUT``: the statistics of an evaluation run as a table, JSON or one HTML file.

Reading a run writes ``OUT/summary.json`` (README.md, "summary.json"); the bench's oracle and baseline
scores are cached beside it in ``OUT/bench_reference.json``. ``--regrade`` rescores every stored answer
with the installed bench instead (:mod:`.regrade`).

Exit codes: 0 the report was made; 1 (``--regrade`` only) a stored verdict no longer holds; 2 bad input.
"""

from __future__ import annotations

import json
from typing import Any

from ..cliargs import Parser, arg, output_file
from .reader import load_run
from .summary import build_summary, write_summary

EXAMPLE = """examples:
  overdub report runs/my-agent                     the table; writes runs/my-agent/summary.json
  overdub report runs/my-agent --json              summary.json on stdout
  overdub report runs/my-agent --html report.html  one self-contained HTML file with the figures
  overdub report runs/my-agent --regrade           rescore the stored answers with the installed bench"""


def main(argv: list[str]) -> int:
    import argparse

    parser = Parser(prog="overdub report", description="Summarize an evaluation run written by overdub eval.",
                    epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", metavar="OUT", help="the run directory (holds run.json)")
    parser.add_argument("--json", action="store_true", help="print summary.json (with --regrade: the regrade)")
    parser.add_argument("--html", metavar="FILE", type=arg(output_file, what="HTML file", suffixes=(".html", ".htm")),
                        help="write one self-contained HTML report (needs matplotlib: pytest-overdub[report])")
    parser.add_argument("--regrade", action="store_true",
                        help="rescore every stored answer with the installed bench; list changed verdicts")
    parser.add_argument("--no-reference", action="store_true",
                        help="leave out the bench's oracle and baseline scores (scored once, then cached)")
    args = parser.parse_args(argv)
    if args.regrade and (args.html is not None or args.no_reference):
        parser.error("--regrade rescores the stored answers and prints only that; it takes --json, "
                     "not --html or --no-reference")
    run = load_run(args.out)
    if args.regrade:
        from .regrade import regrade, regrade_text

        result = regrade(run)
        print(json.dumps(result, indent=2) if args.json else regrade_text(result))
        return 1 if result["verdicts_changed"] else 0
    if args.html is not None:
        from .html import require_matplotlib

        require_matplotlib()  # before any scoring: a missing extra is said at once
    reference = None
    if not args.no_reference:
        from .reference import bench_reference

        reference = bench_reference(run.root, sorted(run.by_task()))
    summary = build_summary(run, reference=reference)
    if args.html is not None:
        from .html import write_html

        write_html(args.html, summary, run)
    print(json.dumps(summary, indent=2) if args.json else summary_text(summary))
    write_summary(run.root, summary)  # after the report: a run folder that cannot be written is still read
    return 0


def summary_text(s: dict[str, Any]) -> str:
    """The readable table: one row per task, then overall, per family and per split."""
    run = s["run"]
    agent = (run.get("agent") or {}).get("id", "?")
    lines = [f"agent {agent}: {_count(len(s['tasks']), 'task')}, {_count(run['trials_planned'], 'trial')} planned each, "
             f"pass line {_f(run['pass_line'], 2)}, grader {run.get('grader_hash') or '?'}", ""]
    header = (f"{'task':<28} {'family':<8} {'split':<5} {'n':>3} {'c':>3} {'pass@1':>6}  {'wilson 95%':<12}  "
              f"{'pass^n':>6} {'mean':>5} {'std':>5} {'min-max':<9}  {'oracle':>6} {'base':>5}  flags")
    lines += [header, "-" * len(header)]
    for tid, t in s["tasks"].items():
        lines.append(f"{tid:<28} {t['family']:<8} {t['split']:<5} {t['n']:>3} {t['successes']:>3} "
                     f"{_f(t['pass_at_1'], 2):>6}  {_interval(t['wilson_95']):<12}  "
                     f"{_f(t['pass_hat_k'].get(str(t['n'])), 2):>6} {_f(t['mean_score'], 3):>5} "
                     f"{_f(t['spread']['std'], 2):>5} {_minmax(t['spread']):<9}  "
                     f"{_f(t['oracle_score'], 3):>6} {_f(t['baseline_score'], 3):>5}  {_flags(t)}")
    lines += ["", "flags: HV high variance (score std >= 0.25), r retries, f failed, t timeouts, i invalid, "
              "x infra (not counted), OR an oracle run (given more than a blind run; kept out of overall, "
              "families and splits); pass^n: every one of the n trials passed", ""]
    lines += _group_lines("overall (blind runs)" if s.get("oracle_runs") else "overall", s["overall"])
    for kind in ("families", "splits"):
        for name, g in s[kind].items():
            lines += _group_lines(f"{kind[:-1] if kind == 'splits' else 'family'} {name}", g, short=True)
    if s.get("oracle_runs"):
        given = sorted({x for t in s["tasks"].values() for x in t["given"]})
        lines += _group_lines(f"oracle runs (given {', '.join(given)}), apart", s["oracle_runs"], short=True)
    if s["incomplete"]:
        lines.append("incomplete: " + ", ".join(f"{t} ({_count(m, 'trial')} missing)"
                                                for t, m in s["incomplete"].items()))
    if s["reference_grader_differs"]:
        lines.append("oracle/baseline scored with a different grader than the run for: "
                     + ", ".join(s["reference_grader_differs"]))
    return "\n".join(lines)


def _group_lines(name: str, g: dict[str, Any], *, short: bool = False) -> list[str]:
    ks = " ".join(f"{_f(v, 2)}" for v in g["pass_hat_k"].values())
    out = [f"{name}: {_count(g['tasks'], 'task')}, {_count(g['trials'], 'trial')}, "
           f"{_count(g['successes'], 'success', 'successes')}; "
           f"pass@1 {_f(g['pass_at_1'], 3)} {_interval(g['pass_at_1_ci95'])}; "
           f"mean score {_f(g['mean_score'], 3)} {_interval(g['mean_score_ci95'])} (bootstrap 95%)"]
    if short:
        return out
    span = f", k = 1..{len(g['pass_hat_k'])}" if g["pass_hat_k"] else ""
    out.append(f"  pass^k{span}: {ks or '-'}   "
               f"oracle {_f(g['oracle_score'], 3)}, baseline {_f(g['baseline_score'], 3)}")
    out.append(f"  retries {g['retries']}, failed {g['failed']}, timeouts {g['timeouts']}, invalid {g['invalid']}, "
               f"infra {g['infra']} (not counted); high variance: {', '.join(g['high_variance_tasks']) or 'none'}")
    out.append(f"  per trial: {_cost(g, 'per_trial')}; per success: {_cost(g, 'per_success')}")
    return out


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _cost(g: dict[str, Any], per: str) -> str:
    cost = g[f"cost_usd_{per}"]
    return (f"{_f(g[f'seconds_{per}'], 1)} s, {_f(g[f'tokens_{per}'], 0)} tokens, "
            f"{'-' if cost is None else f'${cost:.4f}'} cost")


def _f(v: float | None, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _interval(ci: list[float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _minmax(spread: dict[str, Any]) -> str:
    return "-" if spread["min"] is None else f"{spread['min']:.2f}-{spread['max']:.2f}"


def _flags(t: dict[str, Any]) -> str:
    out = ["OR"] if t.get("given") else []
    out += ["HV"] if t["high_variance"] else []
    out += [f"{n}{letter}" for letter, n in (("r", t["retries"]), ("f", t["failed"]), ("t", t["timeouts"]),
                                             ("i", t["invalid"]), ("x", t["infra"])) if n]
    return " ".join(out)
