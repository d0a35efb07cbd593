"""One run at a time on a study's results CSV (`studies.dev_suite.sole_writer`).

Each study run rewrites its CSV whole from its own copy after every fit, so two runs on one file
drop each other's rows. A second run stops in one line that names the file and the fix, before
it reads or writes anything, and the file is left as it was; once the first run ends, the lock
is free again.
"""

from __future__ import annotations

import pytest
from filelock import FileLock

from studies import dev_suite, hybrid_screen, lever_study

RUNS = {
    "dev_suite": lambda out: dev_suite.main(
        ["--tables", "wage", "--models", "lightgbm", "--splits", "0", "--out", str(out)]
    ),
    "hybrid_screen": lambda out: hybrid_screen.main(
        ["--variants", "defaults", "--tables", "wage", "--splits", "0", "--out", str(out)]
    ),
    "lever_study": lambda out: lever_study.main(
        ["--variants", "defaults", "--tables", "wage", "--splits", "0", "--out", str(out)]
    ),
}


@pytest.mark.parametrize("script", sorted(RUNS))
def test_a_second_run_on_the_same_csv_stops_in_one_line_and_leaves_it(script, tmp_path):
    out = tmp_path / "rows.csv"
    out.write_text("table,split\nwage,0\n")
    before = out.read_bytes()
    held = FileLock(tmp_path / ".locks" / "rows.csv.lock", thread_local=False)
    held.acquire(timeout=0)  # the first run, as another process holds it
    try:
        with pytest.raises(SystemExit) as stopped:
            RUNS[script](out)
    finally:
        held.release()
    message = str(stopped.value)
    assert "\n" not in message and str(out) in message and "another --out" in message
    assert message.startswith(script)
    assert out.read_bytes() == before


def test_the_lock_is_free_again_once_the_run_ends(tmp_path):
    out = tmp_path / "rows.csv"
    with dev_suite.sole_writer(out, "dev_suite"):
        with pytest.raises(SystemExit):
            with dev_suite.sole_writer(out, "dev_suite"):
                pass
    with dev_suite.sole_writer(out, "dev_suite"):  # released: taken again
        assert (tmp_path / ".locks" / "rows.csv.lock").exists()
