"""``overdub eval``: run an agent (or stored answers) on the tasks, K trials each, into a run folder.

Exit codes as every ``overdub`` command: 0 when every trial finished (whatever the agent scored: the
scores are the output, read them with ``overdub report``), 2 on bad input, 130 when interrupted (run the
same command again to resume).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from ..cliargs import Parser, arg, float_in, int_in, output_dir
from ..errors import UsageError
from .executors import EXECUTORS
from .runner import SPLITS, EvalOptions, families, finished, run_eval, select_tasks, trial_order
from .workspace import RESERVED

EPILOG = """examples:
  overdub eval --agent-cmd 'python my_agent.py' --agent-id mine --trials 3 --out runs/mine
  overdub eval --agent replay:answers --agent-id oracle --tasks mix --parallel 2
the agent runs in OUT/<task>/<trial>/workspace (start.json, instruction.md; the instruction also on stdin)
and answers with workspace/answer.json or through its MCP session ($OVERDUB_MCP); exit 75 = retry.
an audio or transcription task's workspace holds its input files and instruction.md instead; the answer is
the folder workspace/answer/ holding the files the instruction names."""


def _label(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", text):
        raise UsageError(f"{text!r}: want a label of letters, digits, '.', '_' or '-' (at most 64)")
    return text


def _env_name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise UsageError(f"{text!r}: want an environment variable name")
    if text in RESERVED:
        raise UsageError(f"{text}: the eval sets it for the agent ({', '.join(RESERVED)}); it cannot be passed")
    if text not in os.environ:
        raise UsageError(f"{text}: not set in this environment; want a variable to hand to the agent")
    return text


def _agent(text: str) -> str:
    if not text.startswith("replay:") or not text[len("replay:"):]:
        raise UsageError(f"{text!r}: want replay:DIR (stored answers DIR/<task>.json or DIR/<task>/<trial>.json); "
                         "run a command with --agent-cmd")
    folder = Path(text[len("replay:"):])
    if not folder.is_dir():
        raise UsageError(f"{text}: no folder {folder}")
    return str(folder.resolve())


def parser() -> Parser:
    p = Parser(prog="overdub eval", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
               description="Run an agent on the tasks, K trials each, scoring every answer into a run folder\n"
                           "(OUT/run.json, OUT/<task>/<trial>/result.json). Running the same command again\n"
                           "resumes it: finished trials are kept.")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent-cmd", metavar="CMD", help="the agent: a shell command run in each trial's workspace")
    who.add_argument("--agent", metavar="replay:DIR", type=arg(_agent),
                     help="score stored answers instead: DIR/<task>.json, DIR/<task>/<trial>.json or an earlier "
                          "run's DIR/<task>/<trial>/answer.json; an audio or transcription task: the folder "
                          "DIR/<task>/<trial>/answer/, DIR/<task>/<trial>/ or DIR/<task>/")
    p.add_argument("--agent-id", metavar="LABEL", type=arg(_label),
                   help="the agent's name in the results (required with --agent-cmd; default with --agent: replay)")
    p.add_argument("--tasks", metavar="ID,ID,...|FAMILY|all", default="all",
                   help=f"task ids, a family ({', '.join(families())}) or all (default); an id may be a variant's "
                        "(write-bassline@17) or a range of seeds (write-bassline@1000-1009)")
    p.add_argument("--variants", metavar="N|all", default=None,
                   help="also run the fixed sample of N train variants (or all 99) of each selected task "
                        "(default: 10 with --tasks all or a family, none when --tasks names ids or with "
                        "--split test)")
    p.add_argument("--trials", metavar="K", type=arg(int_in, lo=1, hi=1000, what="a number of trials"),
                   default=1, help="trials per task (default 1)")
    p.add_argument("--parallel", metavar="N", type=arg(int_in, lo=1, hi=256, what="a number of trials at once"),
                   default=1, help="trials at once: local worker processes, or the trials in flight on Dask "
                                   "(default 1)")
    p.add_argument("--seed", metavar="S", type=arg(int_in, lo=0, what="a seed"), default=0,
                   help="shuffles the run order (default 0)")
    p.add_argument("--timeout", metavar="SEC", dest="timeout_s",
                   type=arg(float_in, lo=0.1, hi=7 * 86400.0, what="seconds"), default=600.0,
                   help="seconds an agent may run per trial before it is killed (default 600)")
    p.add_argument("--out", metavar="DIR", type=arg(output_dir, what="run folder"),
                   help="the run folder (default runs/LABEL)")
    p.add_argument("--split", choices=SPLITS, default="train", help="the tasks' split to run (default train)")
    p.add_argument("--infra-retries", metavar="N", type=arg(int_in, lo=0, hi=100, what="a number of retries"),
                   default=2, help="runs again of an agent that exits 75, an infrastructure failure (default 2)")
    p.add_argument("--env-pass", metavar="NAME", nargs="+", action="extend", type=arg(_env_name), default=[],
                   help="hand this host variable to the agent (the agent's environment is otherwise scrubbed)")
    p.add_argument("--executor", choices=EXECUTORS, default="local", help="local (default) or dask")
    p.add_argument("--scheduler", metavar="ADDR", help="the Dask scheduler's address, with --executor dask")
    p.add_argument("--pass", metavar="SCORE", dest="pass_line", type=arg(float_in, lo=0.0, hi=1.0, what="a task score"),
                   default=0.9, help="the score a trial must reach to succeed, 0..1 (default 0.9)")
    return p


def options(argv: list[str]) -> EvalOptions:
    from ..bench.tasks import bundled_bench

    args = parser().parse_args(argv)
    if args.agent_cmd is not None and not args.agent_id:
        raise UsageError("--agent-cmd needs --agent-id LABEL, the agent's name in the results")
    if args.agent_cmd is not None and not args.agent_cmd.strip():
        raise UsageError("--agent-cmd is empty; want a shell command")
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler is for --executor dask")
    agent_id = args.agent_id or "replay"
    env_pass = tuple(dict.fromkeys(args.env_pass))
    out = args.out or output_dir(str(Path("runs") / agent_id), what="run folder (--out, default runs/LABEL)")
    return EvalOptions(agent_id=agent_id, out=out,
                       tasks=select_tasks(bundled_bench(), args.tasks, split=args.split,
                                          variants=_variants(args)),
                       agent_cmd=args.agent_cmd, replay_dir=args.agent, trials=args.trials, parallel=args.parallel,
                       seed=args.seed, timeout_s=args.timeout_s, split=args.split, infra_retries=args.infra_retries,
                       env_pass=env_pass, executor=args.executor, scheduler=args.scheduler, pass_line=args.pass_line,
                       env_values={n: os.environ[n] for n in env_pass})


def _variants(args: argparse.Namespace) -> int | None:
    """``--variants``, or the sample the selection takes by default (:func:`.variant_sample.eval_default_count`)."""
    from ..bench.variant_sample import eval_default_count, variant_count

    if args.variants is None:
        return eval_default_count(args.tasks, split=args.split, families=families())
    return variant_count(args.variants, what="--variants")


def main(argv: list[str]) -> int:
    from ..bench.tasks import bundled_bench

    opts = options(argv)
    statuses = run_eval(opts, bench=bundled_bench())
    records = [finished(opts.out, t, k) for t, k in trial_order(opts.tasks, opts.trials, opts.seed)]
    counted = [r for r in records if r and r["status"] != "infra"]
    passed = sum(bool(r["passed"]) for r in counted)
    mean = sum(r["score"] for r in counted) / len(counted) if counted else 0.0
    figures = ", ".join(f"{statuses[s]} {s}" for s in ("scored", "failed", "timeout", "invalid", "infra"))
    print(f"{opts.out}: {sum(statuses.values())} trials of {len(opts.tasks)} task(s) ({figures}); "
          f"{passed} of {len(counted)} at or over {opts.pass_line:g}, mean score {mean:.3f}")
    print(f"next: overdub report {opts.out}")
    return 0
