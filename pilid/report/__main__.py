"""``python -m pilid.report {tables,figures} --results <dir|records.jsonl> --out <dir>`` and
``python -m pilid.report reproduction --results <dir|records.jsonl> --out REPRODUCTION.md``;
``python -m pilid.report artifacts --results <dir>`` lists the artefact files to commit.

Bad input (no records, an output path that is a file or not writable, a missing ``--conf-dir``)
stops with one line ``pilid: error: <problem>; <fix>`` on stderr and exit code 2, before anything
is written. Ctrl-C, SIGTERM or SIGHUP stop it with one line ``pilid: interrupted by ...`` and exit
code 130 / 143 / 129; the tables' and figures' folders keep their old files or get all of the
new ones (``pilid.atomic.staged_folder``). Unreadable record lines are skipped: one
``pilid: warning:`` line each (the first ``MAX_WARNINGS``), then one line with their number.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
import warnings
from pathlib import Path

from pilid.errors import PilidError

#: At most this many skipped-line warnings are printed one by one (the count line follows).
MAX_WARNINGS = 10
#: Where the committed records live (``make tables``/``figures``/``reproduction`` read them).
DEFAULT_RESULTS = "results/records"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pilid.report",
        description="Build the paper's tables and figures from stored trial records.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    results_help = "results dir or records.jsonl"
    tables = commands.add_parser("tables", help="LaTeX + Markdown tables (one file per table)")
    tables.add_argument("--results", default=DEFAULT_RESULTS, help=results_help)
    tables.add_argument("--out", default="results/tables", help="output directory")
    tables.add_argument("--conf-dir", default=None, help="Hydra config dir (default: conf/)")
    tables.add_argument("--no-fidelity", action="store_true", help="skip the shape-fidelity table")
    figures = commands.add_parser(
        "figures", help="PNG + PDF figures (Figures 3-5 and the paper-vs-ours figure)"
    )
    figures.add_argument("--results", default=DEFAULT_RESULTS, help=results_help)
    figures.add_argument("--out", default="results/figures", help="output directory")
    figures.add_argument("--conf-dir", default=None, help="Hydra config dir (default: conf/)")
    reproduction = commands.add_parser(
        "reproduction", help="REPRODUCTION.md: ours beside the paper, verdicts, compute, commands"
    )
    reproduction.add_argument("--results", default=DEFAULT_RESULTS, help=results_help)
    reproduction.add_argument("--out", default="REPRODUCTION.md", help="the Markdown file")
    reproduction.add_argument(
        "--figures", default="results/figures", help="where the paper-vs-ours figure goes"
    )
    reproduction.add_argument(
        "--tables",
        default="results/tables",
        help="the tables directory the file points to (and reads generators_linear.csv from)",
    )
    reproduction.add_argument("--conf-dir", default=None, help="Hydra config dir (default: conf/)")
    artifacts = commands.add_parser(
        "artifacts",
        help="list the artefact files to commit (those the figures read, the fidelity cache)",
    )
    artifacts.add_argument("--results", default=DEFAULT_RESULTS, help=results_help)
    artifacts.add_argument("--conf-dir", default=None, help="Hydra config dir (default: conf/)")
    return parser


def _say(kind: str, message: str) -> None:
    text = " ".join(str(message).split())  # always one line
    print(f"pilid: {kind}: {text}", file=sys.stderr, flush=True)


def check_out_dir(out: str) -> Path:
    """The output directory ``out``, checked (not created) before anything is read or written.

    It must be a directory we can write to, or not exist yet below a writable directory.
    """
    path = Path(out).expanduser()
    fix = "pass --out a writable directory (it is created if missing)"
    if path.exists() and not path.is_dir():
        raise PilidError(f"--out {out} is an existing file, not a directory; {fix}")
    existing = path
    while not existing.exists():  # the nearest existing ancestor is where mkdir will start
        existing = existing.parent
    if not existing.is_dir():
        raise PilidError(f"--out {out} cannot be created: {existing} is a file; {fix}")
    try:  # the only test that works for every user (root included) and file system
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".pilid-report-", suffix=".probe")
    except OSError as error:
        reason = error.strerror or type(error).__name__
        where = "is not writable" if existing == path else f"cannot be created in {existing}"
        raise PilidError(f"--out {out} {where} ({reason}); {fix}") from error
    os.close(fd)
    os.unlink(probe)
    return path


def check_out_file(out: str) -> Path:
    """The output file ``out``, checked (not written) before anything is read: not a directory,
    in a directory that exists or can be created, and writable."""
    path = Path(out).expanduser()
    fix = "pass --out a writable file path, e.g. REPRODUCTION.md"
    if path.is_dir():
        raise PilidError(f"--out {out} is a directory, not a file; {fix}")
    existing = path.parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise PilidError(f"--out {out} cannot be created: {existing} is a file; {fix}")
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".pilid-report-", suffix=".probe")
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise PilidError(
            f"--out {out} cannot be written in {existing} ({reason}); {fix}"
        ) from error
    os.close(fd)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK):
        raise PilidError(f"--out {out} is not writable; {fix}")
    return path


def check_conf_dir(conf_dir: str | None) -> None:
    """``--conf-dir`` must hold the Hydra configs (an ``experiment/`` folder)."""
    if conf_dir is None:
        return
    path = Path(conf_dir).expanduser()
    if not (path / "experiment").is_dir():
        what = "does not exist" if not path.exists() else "has no experiment/ folder"
        raise PilidError(
            f"--conf-dir {conf_dir} {what}; pass the repository's conf/ directory, or leave "
            "--conf-dir out to use the default"
        )


def read_records(results: str):
    """The records under ``results``; each skipped line -> one warning line, then their count."""
    from pilid.experiments.store import StoreWarning, records_path
    from pilid.report.records import load_records

    file = records_path(results)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            records = load_records(results)
        except PilidError as raised:
            error = raised
    skipped = [w for w in caught if issubclass(w.category, StoreWarning)]
    if error is not None:
        if skipped:  # nothing readable at all: one line, not one per line of the file
            raise PilidError(
                f"{file} holds no readable trial records ({len(skipped)} unreadable line(s) "
                "skipped); pass --results a results directory or the records.jsonl that "
                "python -m pilid.run writes"
            ) from error
        raise error
    for warning in caught:
        if issubclass(warning.category, StoreWarning):
            if skipped.index(warning) < MAX_WARNINGS:
                _say("warning", warning.message)
        else:
            _say("warning", f"{warning.category.__name__}: {warning.message}")
    if skipped:
        shown = f" (first {MAX_WARNINGS} shown above)" if len(skipped) > MAX_WARNINGS else ""
        print(
            f"pilid: skipped {len(skipped)} unreadable record line(s) in {file}{shown}",
            file=sys.stderr,
            flush=True,
        )
    return records


def main(argv: list[str] | None = None) -> int:
    """Run ``python -m pilid.report`` with ``argv``; return the exit code (0, 2 on bad input,
    128 + the signal number when SIGINT, SIGTERM or SIGHUP stopped it: 130 for Ctrl-C)."""
    args = _parser().parse_args(argv)
    try:  # a Ctrl-C while the modules load is one line too
        from pilid.experiments.interrupts import Terminated, signals_as_exceptions
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            print(interrupted_line(args, signal.SIGINT), file=sys.stderr, flush=True)
        return 128 + signal.SIGINT

    try:
        with signals_as_exceptions():  # SIGTERM, SIGHUP -> Terminated; SIGINT: KeyboardInterrupt
            return _run(args)
    except (KeyboardInterrupt, Terminated) as stop:
        signum = int(getattr(stop, "signum", signal.SIGINT))
        with contextlib.suppress(OSError):  # stderr on a terminal that hung up
            print(interrupted_line(args, signum), file=sys.stderr, flush=True)
        return 128 + signum


def interrupted_line(args: argparse.Namespace, signum: int) -> str:
    """The one line of a report stopped by the signal ``signum``: what it left and the fix. The
    tables' and figures' folders are moved in whole (`pilid.atomic.staged_folder`), every other
    file is replaced atomically: an interrupt leaves the old files or the new ones."""
    name = signal.Signals(signum).name
    why = "Ctrl-C (SIGINT)" if signum == signal.SIGINT else name
    if args.command in ("tables", "figures"):
        left = f"{args.out} keeps its previous files (or all of the new ones, never a mix)"
    elif args.command == "reproduction":
        left = f"{args.out} and the figures in {args.figures} are whole (old or new)"
    else:
        left = "nothing was written"
    return f"pilid: interrupted by {why}: {left}; run the same command to build it again"


def _run(args: argparse.Namespace) -> int:
    """``main`` after the arguments are parsed: the command, with one line on bad input."""
    from pilid.report import committed_artifacts, make_figures, make_reproduction, make_tables

    try:
        check_conf_dir(args.conf_dir)
        if args.command == "reproduction":
            check_out_file(args.out)
            check_out_dir(args.figures)
        elif args.command != "artifacts":
            check_out_dir(args.out)
        records = read_records(args.results)
        if args.command == "tables":
            tables, written = make_tables(
                args.results,
                args.out,
                conf_dir=args.conf_dir,
                fidelity=not args.no_fidelity,
                records=records,
                update_fidelity_cache=not args.no_fidelity,
            )
            print(f"pilid.report: {len(tables)} tables, {len(written)} files in {args.out}")
        elif args.command == "figures":
            written = make_figures(args.results, args.out, records=records, conf_dir=args.conf_dir)
            print(f"pilid.report: {len(written)} figure files in {args.out}")
        elif args.command == "artifacts":
            paths = committed_artifacts(args.results, records=records, conf_dir=args.conf_dir)
            for path in paths:  # one per line, for git add -f --pathspec-from-file=-
                print(path.as_posix())
            size = sum(path.stat().st_size for path in paths)
            print(
                f"pilid.report: {len(paths)} files, {size / 1e6:.1f} MB to commit besides "
                "records.jsonl",
                file=sys.stderr,
            )
        else:
            written = make_reproduction(
                args.results,
                args.out,
                figures_dir=args.figures,
                conf_dir=args.conf_dir,
                records=records,
                tables_dir=args.tables,
            )
            figures = len(written) - 1
            print(f"pilid.report: wrote {args.out} and {figures} figure files in {args.figures}")
    except PilidError as error:
        _say("error", error)
        return 2
    except OSError as error:  # e.g. an unreadable records file, a full disk
        where = error.filename or getattr(args, "out", args.results)
        _say(
            "error",
            f"cannot access {where} ({error.strerror or error}); --results must be readable and "
            "--out a writable directory with free space",
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
