#!/usr/bin/env bash
# The device check (issue 63): on a lent GPU machine, in under 8 minutes, so that its 15 minutes
# allow a rerun. Run from the repository's root after `make install`:
#
#     OUT=benchmarks/results bash benchmarks/gpu_check.sh      # or any folder: $OUT (default /tmp)
#
# 1. bench_scale.py's synthetic table at N = 100,000 and 1,000,000, PiLiD's defaults on CUDA
#    (`--device cuda`; 16 CPU threads for the data), each fit capped at 240 s: compare its fit
#    seconds with the committed 2-core CPU run (benchmarks/results/bench_scale_cpu.log; the goal:
#    1,000,000 rows at least 10x faster on the GPU);
# 2. the suite's largest table (hotel_rates, split 0, as bench_since.py hands it to PiLiD),
#    PiLiD's defaults on CUDA: its fit seconds and test MSE (the CPU's: bench_since_cpu.log).
#
# Each step has its own time limit (`timeout`), so a slow step cannot eat the rerun's time.
set -u
OUT=${OUT:-/tmp}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/gpu_check.log"

timeout 330 python benchmarks/bench_scale.py --models pilid --rows 100000 1000000 \
    --device cuda --threads 16 --cap 240 --out "$OUT/gpu_check_scale.csv" \
    2>&1 | tee -a "$OUT/gpu_check.log"

timeout 150 python - <<'EOF' 2>&1 | tee -a "$OUT/gpu_check.log"
import time, warnings

import numpy as np

from pilid import PiLiDRegressor
from pilid.data import make_split
from pilid.data.suite import load_suite_table

warnings.simplefilter("ignore")
dataset = load_suite_table("hotel_rates")  # the table as bench_since.py hands it to PiLiD
split = make_split(dataset, 0)
X_train = dataset.X.iloc[split.train_index].reset_index(drop=True)
X_test = dataset.X.iloc[split.test_index].reset_index(drop=True)
model = PiLiDRegressor(random_state=0, device="cuda")
start = time.perf_counter()
model.fit(X_train, split.y_train)
seconds = time.perf_counter() - start
mse = float(np.mean((model.predict(X_test) - split.y_test) ** 2))
print(
    f"hotel_rates split 0 ({X_train.shape[0]:,} rows x {X_train.shape[1]} columns): PiLiD's "
    f"defaults on {model.device_}: fit {seconds:.1f} s, {model.n_epochs_} epochs, test MSE {mse:.5f}"
)
EOF
