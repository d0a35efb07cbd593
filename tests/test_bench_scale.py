"""benchmarks/bench_scale.py (issue 52's scale benchmark): its pure pieces, against independent
computations; no fit of PiLiD and no timed assertion."""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _scripts import load_script  # tests/_scripts.py

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_scale.py"


@pytest.fixture(scope="module")
def bench():
    return load_script("benchmarks/bench_scale.py")


@pytest.mark.parametrize("k", [0.5, 1.0, 1.37, 2.0])
def test_growth_exponent_recovers_the_power_of_a_power_law(bench, k):
    c = 3e-4
    n1, n2 = 10_000, 1_000_000
    assert bench.growth_exponent(n1, c * n1**k, n2, c * n2**k) == pytest.approx(k, rel=1e-12)


def test_growth_exponent_of_a_tenfold_time_over_a_hundredfold_rows_is_one_half(bench):
    assert bench.growth_exponent(1e4, 2.0, 1e6, 20.0) == pytest.approx(0.5)
    assert bench.growth_exponent(1e4, 20.0, 1e5, 2.0) == pytest.approx(-1.0)


def test_growth_exponent_refuses_equal_rows_in_one_line(bench):
    with pytest.raises(ValueError, match="two distinct positive row counts") as info:
        bench.growth_exponent(100, 1.0, 100, 2.0)
    assert "\n" not in str(info.value)


def test_numeric_table_shapes_dtypes_and_noise_variance(bench):
    n = 200_000
    X, y, signal = bench.make_data(n, 20, seed=3)
    assert isinstance(X, np.ndarray) and X.shape == (n, 20) and X.dtype == np.float32
    assert y.shape == (n,) and y.dtype == np.float32
    assert X.min() >= -1.0 and X.max() <= 1.0
    # y - signal is the noise alone: variance NOISE**2 = 0.25 within its sampling error
    # (sd of a sample variance of n normals: sigma^2 * sqrt(2 / n) = 8e-4; 5 sd allowed)
    noise = y.astype(np.float64) - signal
    assert bench.NOISE == 0.5
    assert np.var(noise) == pytest.approx(0.25, abs=5 * 0.25 * math.sqrt(2 / n))
    assert abs(noise.mean()) < 5 * 0.5 / math.sqrt(n)
    # and the noise is independent of the features (no signal left in it)
    assert np.abs(np.corrcoef(X[:20_000].T, noise[:20_000])[-1, :-1]).max() < 0.05


def _expected_signal(x: np.ndarray, structure_seed: int) -> np.ndarray:
    """An independent reading of the docstring's function of the numeric columns: main effects
    in turn sin(pi x), 3x^2 - 1, tanh(3x), exp(x) - sinh(1) with the structure seed's amplitudes
    (uniform on [0.5, 1.5]), plus x0 * x1 and sin(pi x2) * x3."""
    amp = np.random.default_rng(structure_seed).uniform(0.5, 1.5, x.shape[1])
    total = x[:, 0] * x[:, 1] + np.sin(np.pi * x[:, 2]) * x[:, 3]
    for j, a in enumerate(amp):
        v = x[:, j]
        shape = (np.sin(np.pi * v), 3 * v**2 - 1, np.tanh(3 * v), np.exp(v) - np.sinh(1))[j % 4]
        total = total + a * shape
    return total


def test_signal_is_the_documented_function(bench):
    X, _, signal = bench.make_data(500, 8, seed=1)
    expected = _expected_signal(X.astype(np.float64), bench.STRUCTURE_SEED)
    np.testing.assert_allclose(signal, expected, rtol=1e-12, atol=1e-12)


def test_data_is_seeded_and_the_function_does_not_depend_on_the_seed(bench):
    X1, y1, _ = bench.make_data(1000, 20, seed=7)
    X2, y2, _ = bench.make_data(1000, 20, seed=7)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X3, _, s3 = bench.make_data(1000, 20, seed=8)
    assert not np.array_equal(X1, X3)
    expected = _expected_signal(X3.astype(np.float64), bench.STRUCTURE_SEED)
    np.testing.assert_allclose(s3, expected, rtol=1e-12, atol=1e-12)


def test_categorical_table_has_text_columns_with_additive_level_effects(bench):
    n = 20_000
    X, y, signal = bench.make_data(n, 20, categorical=True, seed=2)
    assert isinstance(X, pd.DataFrame) and X.shape == (n, 20)
    text = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    assert len(text) == bench.TEXT_COLUMNS == 5
    assert list(X.columns[-5:]) == text  # the last five features
    assert [len(X[c].cat.categories) for c in text] == list(bench.TEXT_LEVELS)
    assert all(3 <= len(X[c].cat.categories) <= 30 for c in text)
    assert all(X[c].dtype == np.float32 for c in X.columns if c not in text)
    assert all(isinstance(v, str) for v in X[text[0]].cat.categories)
    assert y.dtype == np.float32
    noise = y.astype(np.float64) - signal
    assert np.var(noise) == pytest.approx(0.25, abs=5 * 0.25 * math.sqrt(2 / n))
    # additive: what the numeric part leaves is one effect per (column, level), summed, so
    # least squares on the one-hot levels fits it exactly
    numeric = X.drop(columns=text).to_numpy(np.float64)
    rest = signal - _expected_signal(numeric, bench.STRUCTURE_SEED)
    onehot = pd.get_dummies(X[text]).to_numpy(np.float64)
    coef, *_ = np.linalg.lstsq(onehot, rest, rcond=None)
    np.testing.assert_allclose(onehot @ coef, rest, atol=1e-8)
    assert np.std(rest) > 0.5  # the levels matter


def test_too_few_features_is_one_line(bench):
    with pytest.raises(ValueError, match="at least 9 features") as info:
        bench.make_data(10, 8, categorical=True)
    assert "\n" not in str(info.value)


def test_a_child_past_its_cap_is_killed_and_reported_capped(bench):
    result = bench.run_child([sys.executable, "-c", "import time; time.sleep(60)"], cap=1.0)
    assert result["status"] == "capped"


def test_the_cap_kills_the_childs_own_workers_too(bench, tmp_path):
    # a worker (grandchild) that outlives its parent and holds none of its pipes: only a kill
    # of the child's whole process group ends it
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(30)"
    )
    result = bench.run_child([sys.executable, "-c", code], cap=1.0)
    pid = int(pid_file.read_text())
    try:
        assert result["status"] == "capped"
        for _ in range(100):  # the orphan is reaped by init: wait for it (no timing asserted)
            if not _alive(pid):
                break
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except OSError:
        return False


def test_a_child_in_time_gives_its_last_json_line(bench):
    payload = {"fit_s": 1.5, "test_mse": 0.26}
    code = f"print('chatter'); import json; print(json.dumps({payload!r}))"
    result = bench.run_child([sys.executable, "-c", code], cap=30.0)
    assert result["status"] == "ok"
    assert {k: result[k] for k in payload} == payload
    assert result["wall_s"] >= 0


def test_a_failing_child_is_reported_failed_with_its_error(bench):
    code = "raise SystemExit('boom: out of memory')"
    result = bench.run_child([sys.executable, "-c", code], cap=30.0)
    assert result["status"] == "failed"
    assert "boom: out of memory" in result["error"]


def test_report_prints_cap_ratios_and_growth(bench):
    rows = [
        _row("pilid", 1000, fit_s=2.0, predict_s=0.1),
        _row("ebm", 1000, fit_s=8.0, predict_s=0.2),
        _row("lightgbm", 1000, fit_s=0.5, predict_s=0.05),
        {**_row("pilid", 10_000, fit_s=20.0, predict_s=1.0), "cuda_peak_mb": 337.4},
        _row("ebm", 10_000, status="capped"),
        _row("lightgbm", 10_000, status="not installed"),
    ]
    text = bench.report(rows, cap=100.0)
    lines = text.splitlines()
    cells = {tuple(line.split()[:2]): line for line in lines if len(line.split()) > 2}
    assert "> 100" in cells[("10,000", "EBM")]
    assert "not installed" in cells[("10,000", "LightGBM")]
    assert cells[("1,000", "PiLiD")].split()[2:] == ["2.00", "0.10", "100", "-", "0.3000"]
    ratio_small = next(line for line in lines if line.strip().startswith("1,000  PiLiD/"))
    assert "PiLiD/EBM 0.25, 0.5" in ratio_small and "PiLiD/LightGBM 4, 2" in ratio_small
    ratio_big = next(line for line in lines if line.strip().startswith("10,000  PiLiD/"))
    # 20 s against a capped (> 100 s) EBM; its predict seconds are unknown
    assert "PiLiD/EBM < 0.2, n/a" in ratio_big
    assert cells[("10,000", "EBM")].split()[2:] == [">", "100", "-", "-", "-", "-"]
    assert cells[("10,000", "PiLiD")].split()[2:] == ["20.00", "1.00", "100", "337", "0.3000"]
    growth = next(line for line in lines if "->" in line)
    assert growth.strip() == "1,000 -> 10,000: 1.00"  # log(20/2) / log(10000/1000)


def _row(model, n, status="ok", fit_s=None, predict_s=None):
    return {
        "model": model,
        "rows": n,
        "features": 20,
        "categorical": False,
        "status": status,
        "fit_s": fit_s,
        "predict_s": predict_s,
        "peak_rss_mb": 100.0,
        "cuda_peak_mb": None,
        "test_mse": 0.3,
    }


def test_csv_rows_are_appended_under_one_header(bench, tmp_path):
    out = tmp_path / "scale.csv"
    bench._append_csv(out, {**_row("pilid", 100, fit_s=1.0, predict_s=0.1), "capped": False})
    bench._append_csv(out, {**_row("ebm", 100, status="capped"), "capped": True})
    table = pd.read_csv(out)
    assert list(table.columns) == bench.CSV_COLUMNS
    assert table["model"].tolist() == ["pilid", "ebm"]
    assert table["capped"].tolist() == [False, True]


def test_a_missing_library_is_not_installed(bench):
    # the child (--one) of a model whose library is absent: "not installed", no data, no fit
    saved = sys.modules.get("lightgbm")
    sys.modules["lightgbm"] = None  # import lightgbm raises ImportError
    try:
        result = bench.one_fit("lightgbm", 100, 20, False, "cpu", 0, 0)
    finally:
        if saved is None:
            sys.modules.pop("lightgbm", None)
        else:
            sys.modules["lightgbm"] = saved
    assert result["status"] == "not installed"
    json.dumps(result)


def test_a_missing_library_is_printed_not_installed_and_the_run_goes_on(bench, tmp_path, capsys):
    out = tmp_path / "scale.csv"
    saved = {name: sys.modules.get(name) for name in ("lightgbm", "interpret")}
    sys.modules.update({"lightgbm": None, "interpret": None})  # neither importable
    try:
        argv = ["--rows", "100", "200", "--models", "lightgbm", "ebm", "--device", "cpu"]
        assert bench.main([*argv, "--threads", "1", "--out", str(out)]) == 0
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    printed = capsys.readouterr().out
    assert printed.count("not installed") >= 4
    table = pd.read_csv(out)
    assert table["status"].tolist() == ["not installed"] * 4
    assert table["rows"].tolist() == [100, 100, 200, 200]
    assert table["model"].tolist() == ["lightgbm", "ebm"] * 2


@pytest.fixture(scope="module")
def busy():
    return load_script("benchmarks/bench_busy_core.py")


def test_busy_core_ratio_is_busy_over_alone_and_a_bound_when_capped(busy):
    alone = {"status": "ok", "fit_s": 20.0}
    assert busy.ratio(alone, {"status": "ok", "fit_s": 30.0}, cap=100) == "1.50"
    assert busy.ratio(alone, {"status": "capped", "fit_s": None}, cap=100) == "> 5.00"
    assert busy.ratio({"status": "failed", "fit_s": None}, alone, cap=100) == "-"


@pytest.mark.slow
def test_busy_core_fit_runs_beside_a_spinning_process_and_stops_it(busy):
    """A LightGBM fit of 400 rows beside the spinner: the spinner lives during the fit only."""
    psutil = pytest.importorskip("psutil")

    before = {p.pid for p in psutil.process_iter()}
    row = busy.fit("lightgbm", 400, threads=1, cap=120, busy=True)
    assert row["status"] == "ok" and row["beside"] == "busy core" and row["fit_s"] > 0
    spinners = [
        p
        for p in psutil.process_iter(["pid", "cmdline"])
        if p.info["pid"] not in before and "while True" in " ".join(p.info["cmdline"] or [])
    ]
    assert not spinners
