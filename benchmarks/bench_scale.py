"""Scale benchmark (issue 52): PiLiD, EBM and LightGBM with their defaults as the rows grow.

    python benchmarks/bench_scale.py                          # N = 10k, 100k, 1M; cap 900 s
    python benchmarks/bench_scale.py --quick                  # N = 2,000, 20,000; cap 120 s
    python benchmarks/bench_scale.py --categorical --out scale.csv --device cuda --threads 16
    python benchmarks/bench_scale.py --categorical-only --rows 10000 100000   # the text table
    python benchmarks/bench_scale.py --rows 2000 5000 --cap 120 --threads 1 --models pilid

Each (table, N, model) is fitted in its own process: this script again, in its hidden ``--one``
mode, which imports the model's library, draws the data (`make_data`, seeded, float32, so the
parent never holds any), fits on the first 75% of the rows, predicts the other 25% and prints
one JSON line: fit and predict seconds, its peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``; worker processes a library starts are not
counted), on CUDA also ``torch.cuda.max_memory_allocated()``, and the test MSE. The parent
measures each child's wall time and kills its whole process group at ``--cap`` seconds: such a
fit is printed as "> cap" and its time stands for the cap in the ratios (a bound).

The models: ``PiLiDRegressor(random_state=0, device=--device)`` (the library defaults,
`pilid.estimators.pilid.LIBRARY_DEFAULTS`), InterpretML's ``ExplainableBoostingRegressor()`` and
``LGBMRegressor(verbose=-1)`` (their defaults). ``--threads`` sets each child's torch/BLAS
threads (``OMP_NUM_THREADS``, ``torch.set_num_threads``) and EBM's and LightGBM's ``n_jobs``,
which changes the time, not the model. A library that is not installed is printed as
"not installed" and the run goes on; pilid is found on the path or in the repository this
script lies in.

The data (`make_data`): m features uniform on [-1, 1], the target a sum of smooth main effects
(sine, parabola, tanh and exponential shapes in turn), two pair terms (x0 * x1 and
sin(pi x2) * x3) and Gaussian noise of standard deviation `NOISE` (0.5: the best test MSE is
0.25). ``--categorical`` adds a second table of the same m features of which the last
`TEXT_COLUMNS` are text columns (pandas categories of `TEXT_LEVELS` levels) with additive
effects.

The table printed at the end gives, per table, N and model, fit and predict seconds, peak MB and
the test MSE; the ratios PiLiD/EBM and PiLiD/LightGBM of the fit and predict seconds per N; and
PiLiD's growth exponent between consecutive N, log(t2 / t1) / log(N2 / N1) (`growth_exponent`).
All timings of one table come from one run on one machine: compare them with each other, not
across runs. ``--out`` appends one CSV row per fit.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("pilid") is None and (REPO / "pilid").is_dir():
    sys.path.insert(0, str(REPO))  # run from a checkout without `pip install -e .`

MODELS = ("pilid", "ebm", "lightgbm")
#: The module each model needs (for "not installed").
LIBRARY = {"pilid": "pilid", "ebm": "interpret", "lightgbm": "lightgbm"}
LABEL = {"pilid": "PiLiD", "ebm": "EBM", "lightgbm": "LightGBM"}
NOISE = 0.5
TRAIN_FRACTION = 0.75
#: Levels of the text columns of the categorical table (the last ``len(TEXT_LEVELS)`` features).
TEXT_LEVELS = (3, 7, 12, 20, 30)
TEXT_COLUMNS = len(TEXT_LEVELS)
#: The seed of the data's function (shapes, amplitudes, level effects): the same at every N.
STRUCTURE_SEED = 52
FULL = {"rows": [10_000, 100_000, 1_000_000], "cap": 900.0}
QUICK = {"rows": [2_000, 20_000], "cap": 120.0}
CSV_COLUMNS = [
    "model",
    "rows",
    "features",
    "categorical",
    "status",
    "fit_s",
    "predict_s",
    "peak_rss_mb",
    "cuda_peak_mb",
    "test_mse",
    "capped",
    "wall_s",
    "device",
    "threads",
    "machine",
]


# --------------------------------------------------------------------------- pure pieces
def growth_exponent(n1: float, t1: float, n2: float, t2: float) -> float:
    """The exponent k of t = c * N**k through two points: log(t2 / t1) / log(n2 / n1)."""
    if n1 <= 0 or n2 <= 0 or n1 == n2 or t1 <= 0 or t2 <= 0:
        raise ValueError(
            f"growth_exponent needs two distinct positive row counts and positive times, "
            f"got N {n1}, {n2} and t {t1}, {t2}"
        )
    return math.log(t2 / t1) / math.log(n2 / n1)


def make_data(n: int, m: int = 20, categorical: bool = False, seed: int = 0):
    """Draw the benchmark's regression table of ``n`` rows and ``m`` features.

    Parameters
    ----------
    n : int
        Rows.
    m : int, default=20
        Features (at least 4 numeric ones: the two pair terms use features 0-3).
    categorical : bool, default=False
        Make the last `TEXT_COLUMNS` features text columns (pandas categories with
        `TEXT_LEVELS` levels and additive effects); ``X`` is then a pandas DataFrame.
    seed : int, default=0
        Seed of the rows and the noise (the function itself is fixed by `STRUCTURE_SEED`).

    Returns
    -------
    X : ndarray of shape (n, m), float32, or DataFrame
        The features (numeric ones uniform on [-1, 1]).
    y : ndarray of shape (n,), float32
        ``signal + NOISE * standard normal``.
    signal : ndarray of shape (n,), float64
        The noiseless target (main effects + two pair terms + level effects).
    """
    n_text = TEXT_COLUMNS if categorical else 0
    n_num = m - n_text
    if n_num < 4:
        raise ValueError(f"make_data needs at least {4 + n_text} features, got m={m}")
    structure = np.random.default_rng(STRUCTURE_SEED)
    amplitude = structure.uniform(0.5, 1.5, n_num)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, n_num)).astype(np.float32)
    x = X.astype(np.float64)
    shapes = (
        lambda v: np.sin(np.pi * v),
        lambda v: 3.0 * v**2 - 1.0,
        lambda v: np.tanh(3.0 * v),
        lambda v: np.exp(v) - np.sinh(1.0),
    )
    kind = np.arange(n_num) % len(shapes)
    signal = np.zeros(n)
    for k, shape in enumerate(shapes):  # four column groups, every row at once
        cols = kind == k
        signal += shape(x[:, cols]) @ amplitude[cols]
    signal += x[:, 0] * x[:, 1] + np.sin(np.pi * x[:, 2]) * x[:, 3]
    if n_text:
        import pandas as pd

        columns = {f"x{j}": X[:, j] for j in range(n_num)}
        for j, levels in enumerate(TEXT_LEVELS):
            effects = structure.normal(0.0, 1.0, levels)
            codes = rng.integers(0, levels, n)
            signal += effects[codes]
            names = [f"c{j}_{level:02d}" for level in range(levels)]
            columns[f"text{j}"] = pd.Categorical.from_codes(codes, categories=names)
        X = pd.DataFrame(columns)
    y = (signal + NOISE * rng.standard_normal(n)).astype(np.float32)
    return X, y, signal


def machine(device: str = "cpu") -> str:
    """The processor's name and cores, and the CUDA device's name when ``device`` may use one."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    gpu = cuda_name(device)
    return f"{cpu} ({os.cpu_count()} cores)" + (f", {gpu}" if gpu else "")


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found on the path, not blocked)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module blocked in sys.modules
        return False


def cuda_name(device: str = "auto") -> str | None:
    """The name of the CUDA device ``device`` ("auto", "cuda", "cuda:1") would use, else None."""
    if device == "cpu" or not installed("torch"):
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    index = int(device.split(":")[1]) if device.startswith("cuda:") else 0
    return torch.cuda.get_device_name(index)


def run_child(command: list[str], cap: float, env: dict | None = None) -> dict:
    """Run ``command`` in its own process group, killed (the whole group) after ``cap`` seconds.

    Returns the JSON object of the child's last stdout line (``status`` "ok" unless it says
    otherwise) with ``wall_s``; a killed child gives ``status`` "capped", one that exits
    non-zero or prints no JSON "failed" with the tail of its stderr in ``error``.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: the kill reaches its workers too
    )
    try:
        out, err = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return {"status": "capped", "wall_s": time.perf_counter() - start}
    wall = time.perf_counter() - start
    lines = out.strip().splitlines()
    result = None
    if lines:
        try:
            result = json.loads(lines[-1])
        except json.JSONDecodeError:
            result = None
    if proc.returncode != 0 or not isinstance(result, dict):
        tail = " | ".join(err.strip().splitlines()[-3:])
        return {"status": "failed", "wall_s": wall, "error": f"rc {proc.returncode}: {tail}"}
    return {"status": "ok", **result, "wall_s": wall}


# --------------------------------------------------------------------------- the child
def _model(name: str, device: str, threads: int):
    """The estimator ``name`` with its defaults (threads and device: not model settings)."""
    if name == "pilid":
        from pilid import PiLiDRegressor

        return PiLiDRegressor(random_state=0, device=device)
    if name == "ebm":
        from interpret.glassbox import ExplainableBoostingRegressor

        return ExplainableBoostingRegressor(n_jobs=threads)
    if name == "lightgbm":
        from lightgbm import LGBMRegressor

        return LGBMRegressor(verbose=-1, n_jobs=threads)
    raise ValueError(f"unknown model {name!r}; valid: {', '.join(MODELS)}")


def one_fit(name: str, n: int, m: int, categorical: bool, device: str, threads: int, seed: int):
    """Fit and score one model on one table in this process; the JSON-ready result."""
    if threads:
        try:
            import torch

            torch.set_num_threads(threads)
        except ImportError:
            pass
    try:
        model = _model(name, device, threads)
    except ImportError as error:
        return {"status": "not installed", "error": str(error)}
    X, y, _ = make_data(n, m, categorical, seed)
    n_fit = int(round(TRAIN_FRACTION * n))
    X_fit, X_test = (X.iloc[:n_fit], X.iloc[n_fit:]) if categorical else (X[:n_fit], X[n_fit:])
    start = time.perf_counter()
    model.fit(X_fit, y[:n_fit])
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    prediction = np.asarray(model.predict(X_test), dtype=np.float64)
    predict_s = time.perf_counter() - start
    used = str(getattr(model, "device_", "cpu"))
    cuda_peak = None
    torch = sys.modules.get("torch")
    if torch is not None and used.startswith("cuda"):
        cuda_peak = torch.cuda.max_memory_allocated() / 2**20
    return {
        "status": "ok",
        "fit_s": fit_s,
        "predict_s": predict_s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cuda_peak_mb": cuda_peak,
        "test_mse": float(np.mean((y[n_fit:].astype(np.float64) - prediction) ** 2)),
        "device": used,
        "machine": machine(used),
    }


# --------------------------------------------------------------------------- the parent
def _child_env(threads: int) -> dict:
    """This process's environment with the child's thread count and pilid's path."""
    env = dict(os.environ)
    if threads:
        for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[key] = str(threads)
    if str(REPO) in sys.path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _seconds(row: dict, key: str, cap: float) -> str:
    """A table cell: the seconds, "> cap" for a capped fit ("-" for its unknown predict)."""
    if row["status"] == "capped":
        return f"> {cap:g}" if key == "fit_s" else "-"
    if row["status"] != "ok":
        return row["status"]
    return f"{row[key]:.2f}"


def _time(row: dict | None, key: str, cap: float) -> tuple[float, int] | None:
    """(seconds, bound): for a capped fit (cap, 1), the cap standing for its fit seconds as a
    lower bound (near one: the cap also counts the child's start and data), its predict seconds
    unknown; else (seconds, 0)."""
    if row is None:
        return None
    if row["status"] == "capped":
        return (cap, 1) if key == "fit_s" else None
    if row["status"] == "ok":
        return row[key], 0
    return None


def _ratio(a: tuple | None, b: tuple | None) -> str:
    """a / b with its bound: a capped numerator gives "> x", a capped denominator "< x"."""
    if a is None or b is None or (a[1] and b[1]):
        return "n/a"
    value = a[0] / b[0]
    return (">" if a[1] else "<" if b[1] else "") + (" " if a[1] or b[1] else "") + f"{value:.3g}"


def report(rows: list[dict], cap: float) -> str:
    """The closing table: per table, N and model; the ratios; PiLiD's growth exponents."""
    lines = []
    tables = sorted({(r["features"], r["categorical"]) for r in rows}, key=lambda t: t[1])
    for m, categorical in tables:
        part = [r for r in rows if r["features"] == m and r["categorical"] == categorical]
        title = f"{TEXT_COLUMNS} of them text columns" if categorical else "all numeric"
        lines += ["", f"table: m={m} features, {title} (test MSE floor {NOISE**2:g})"]
        lines.append(
            f"{'N':>10}  {'model':<9}{'fit s':>10}{'predict s':>11}{'peak MB':>9}"
            f"{'cuda MB':>9}  test MSE"
        )
        for r in part:
            ok = r["status"] == "ok"
            peak = f"{r['peak_rss_mb']:.0f}" if ok else "-"
            cuda = f"{r['cuda_peak_mb']:.0f}" if ok and r.get("cuda_peak_mb") is not None else "-"
            mse = f"{r['test_mse']:.4f}" if ok else "-"
            lines.append(
                f"{r['rows']:>10,}  {LABEL[r['model']]:<9}{_seconds(r, 'fit_s', cap):>10}"
                f"{_seconds(r, 'predict_s', cap):>11}{peak:>9}{cuda:>9}  {mse}"
            )
        by = {(r["rows"], r["model"]): r for r in part}
        ns = sorted({r["rows"] for r in part})
        if any(model in {r["model"] for r in part} for model in ("ebm", "lightgbm")):
            lines.append("ratios of PiLiD's seconds to the peer's (fit, predict)")
            for n in ns:
                cells = []
                for peer in ("ebm", "lightgbm"):
                    if (n, peer) not in by:
                        continue
                    fit = _ratio(
                        _time(by.get((n, "pilid")), "fit_s", cap),
                        _time(by[(n, peer)], "fit_s", cap),
                    )
                    predict = _ratio(
                        _time(by.get((n, "pilid")), "predict_s", cap),
                        _time(by[(n, peer)], "predict_s", cap),
                    )
                    cells.append(f"PiLiD/{LABEL[peer]} {fit}, {predict}")
                lines.append(f"{n:>10,}  " + "; ".join(cells))
        pilid = [(n, by[(n, "pilid")]) for n in ns if (n, "pilid") in by]
        if len(pilid) > 1:
            lines.append("PiLiD's growth exponent log(t2/t1) / log(N2/N1) of the fit seconds")
            for (n1, r1), (n2, r2) in zip(pilid, pilid[1:]):
                t1, t2 = _time(r1, "fit_s", cap), _time(r2, "fit_s", cap)
                if t1 is None or t2 is None or t1[1]:
                    text = "n/a"
                else:
                    text = (">= " if t2[1] else "") + f"{growth_exponent(n1, t1[0], n2, t2[0]):.2f}"
                lines.append(f"{n1:>10,} -> {n2:,}: {text}")
    return "\n".join(lines)


def _append_csv(path: Path, row: dict) -> None:
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow({key: row.get(key) for key in CSV_COLUMNS})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", help="N (default 10000 100000 1000000)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--cap", type=float, help="seconds per fit's process (default 900)")
    parser.add_argument("--features", type=int, default=20, help="m (default 20)")
    parser.add_argument(
        "--categorical", action="store_true", help="also the table with 5 text columns"
    )
    parser.add_argument(
        "--categorical-only", action="store_true", help="only the table with 5 text columns"
    )
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument(
        "--threads", type=int, help="torch/BLAS threads and n_jobs per fit (default: all cores)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the data (default 0)")
    parser.add_argument("--quick", action="store_true", help="N = 2000 20000, cap 120 s")
    parser.add_argument("--out", type=Path, help="CSV to append one row per fit to")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child: model name
    parser.add_argument("--one-rows", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--one-categorical", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with the hidden ``--one``, one fit of it)."""
    parser = _parser()
    args = parser.parse_args(argv)
    threads = args.threads if args.threads is not None else len(os.sched_getaffinity(0))
    if threads < 1:
        parser.error(f"--threads {args.threads}: give a positive number, e.g. --threads 1")
    minimum = 4 + (TEXT_COLUMNS if args.categorical or args.one_categorical else 0)
    if args.features < minimum:
        parser.error(f"--features {args.features}: this benchmark needs --features {minimum}+")
    if args.one:
        result = one_fit(
            args.one,
            args.one_rows,
            args.features,
            args.one_categorical,
            args.device,
            threads,
            args.seed,
        )
        print(json.dumps(result), flush=True)
        return 0
    defaults = QUICK if args.quick else FULL
    ns = args.rows or defaults["rows"]
    cap = args.cap if args.cap is not None else defaults["cap"]
    if min(ns) < 20 or cap <= 0:
        parser.error("--rows: give at least 20 rows per N and a positive --cap, e.g. --cap 120")
    here = machine(args.device)
    resolved = args.device
    if args.device == "auto":
        resolved = "cuda" if cuda_name(args.device) else "cpu"
    print(
        f"bench_scale on {here}; PiLiD device={args.device} ({resolved}), "
        f"{threads} thread(s) per fit, cap {cap:g} s per fit, seed {args.seed}",
        flush=True,
    )
    env = _child_env(threads)
    rows = []
    tables = (False, True) if args.categorical else (False,)
    for categorical in (True,) if args.categorical_only else tables:
        for n in ns:
            for name in args.models:
                row = {
                    "model": name,
                    "rows": n,
                    "features": args.features,
                    "categorical": categorical,
                    "threads": threads,
                    "device": resolved if name == "pilid" else "cpu",
                    "machine": here,
                }
                if not installed(LIBRARY[name]):
                    result = {"status": "not installed", "wall_s": 0.0}
                else:
                    command = [sys.executable, str(Path(__file__).resolve()), "--one", name]
                    command += ["--one-rows", str(n), "--features", str(args.features)]
                    command += ["--device", args.device, "--threads", str(threads)]
                    command += ["--seed", str(args.seed)]
                    command += ["--one-categorical"] if categorical else []
                    result = run_child(command, cap, env)
                row.update(result)
                row["capped"] = row["status"] == "capped"
                rows.append(row)
                note = row.get("error", "")
                print(
                    f"{'categorical' if categorical else 'numeric'} N={n:,} {LABEL[name]}: "
                    f"{row['status']}, fit {_seconds(row, 'fit_s', cap)} s, "
                    f"wall {row['wall_s']:.1f} s" + (f" ({note})" if note else ""),
                    flush=True,
                )
                if args.out is not None:
                    _append_csv(args.out, row)
    print(report(rows, cap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
