"""``python -m pilid.report {tables,figures} --results <dir|records.jsonl> --out <dir>``."""

from __future__ import annotations

import argparse
import sys

from pilid.errors import PilidError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pilid.report",
        description="Build the paper's tables and figures from stored trial records.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    tables = commands.add_parser("tables", help="LaTeX + Markdown tables (one file per table)")
    tables.add_argument("--results", default="results/runs", help="results dir or records.jsonl")
    tables.add_argument("--out", default="results/tables", help="output directory")
    tables.add_argument("--conf-dir", default=None, help="Hydra config dir (default: conf/)")
    tables.add_argument("--no-fidelity", action="store_true", help="skip the shape-fidelity table")
    figures = commands.add_parser("figures", help="PNG + PDF figures (Figures 3-5)")
    figures.add_argument("--results", default="results/runs", help="results dir or records.jsonl")
    figures.add_argument("--out", default="results/figures", help="output directory")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from pilid.report import make_figures, make_tables

    try:
        if args.command == "tables":
            tables, written = make_tables(
                args.results, args.out, conf_dir=args.conf_dir, fidelity=not args.no_fidelity
            )
            print(f"pilid.report: {len(tables)} tables, {len(written)} files in {args.out}")
        else:
            written = make_figures(args.results, args.out)
            print(f"pilid.report: {len(written)} figure files in {args.out}")
    except PilidError as error:
        print(f"pilid.report: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
