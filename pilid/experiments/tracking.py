"""Experiment tracking: a setting's summary sent to a tracker (``logger=mlflow``), off by default.

The results store (``records.jsonl``) stays the record of what ran; a tracker receives a copy of
one setting at a time, after its trials are in the store, so a failing tracker never changes
what the store holds, and the ``logger`` key is no part of the setting id
(``pilid.experiments.setting.BOOKKEEPING_KEYS``).

``MLflowTracker`` logs one MLflow run per setting to MLflow's own tracking URI, as MLflow resolves
it (``MLFLOW_TRACKING_URI``, else MLflow's default: ``sqlite:///mlflow.db`` in the working
directory for MLflow 3, ``./mlruns`` for 2.x), unless ``logger.tracking_uri=...`` names another,
into the experiment named by the config's ``experiment_name``: the setting's config as
parameters (``data.*``, ``model.*``, ``train.*``, ``seed``, ``trials``, and the ``estimator``
class), each trial's metric and ``fit_seconds`` (step = trial), ``<metric>_mean`` and
``<metric>_std``, and the setting's artefact files (its shapes). Tags ``pilid.setting_id`` and
``pilid.records`` (a digest of the logged records) tie the run to the store: a setting whose
records a finished run already holds is not logged again, so a resumed sweep logs only the
settings it trained (or that were never logged), and a setting with new trials (more ``trials``,
``force=true``) gets a new run.

A tracking write that fails ends the run with one line (exit 2) after the trials are stored, and
leaves the MLflow run marked ``FAILED``; the same command then logs the setting again without
training anything. A tracker that cannot work at all (MLflow not installed) is refused before any
trial trains (`check_logger`, run by ``pilid.experiments.config.check_config`` on every job of a
sweep), and so is a tracking server that does not answer (`MLflowTracker.check_reachable`, a
connection with a timeout of ``SERVER_TIMEOUT`` seconds when the setting starts, rather than
MLflow's retries for minutes after its trials have trained).

This module knows nothing of Hydra: it receives the resolved config as plain dicts. A tracker is
named by the ``_target_`` of its ``conf/logger/<name>.yaml`` and built with the file's other keys
(minus ``name``); it has ``check_available()``, ``log_setting(config, summary, artefacts,
label)`` and may have ``check_reachable()`` (`tracker_from_config` calls it).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import os
import re
import socket
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pilid.errors import PilidError

#: Keys of a ``logger`` config that are not the tracker's constructor arguments.
NOT_ARGUMENTS = ("_target_", "name")
#: A tag of every run that `MLflowTracker` logs: the setting's id in the results store.
SETTING_TAG = "pilid.setting_id"
#: A tag of every run: the digest of the records it holds (`records_digest`).
RECORDS_TAG = "pilid.records"
#: The folder of a run's artefact files.
ARTEFACT_PATH = "artefacts"
#: The trial of an artefact file (``shapes-trial3.csv``, ``interaction-grid-trial3-a__b.csv``).
_ARTEFACT_TRIAL = re.compile(r"^.*?-trial(\d+)(?:-.*)?\.csv$")
_INSTALL = 'pip install -e ".[mlflow]"'
#: Seconds `MLflowTracker.check_reachable` waits for a tracking server to accept a connection.
SERVER_TIMEOUT = 5.0


def tracker_class(logger: Mapping[str, Any]) -> type:
    """The class named by a ``logger`` config's ``_target_`` (one line when it cannot be
    imported)."""
    target = logger.get("_target_")
    if not target:
        raise PilidError(
            "logger has no _target_ (the tracker's class); choose a tracker with logger=mlflow "
            "(conf/logger/), or give logger._target_=<module>.<Class>"
        )
    module, _, name = str(target).rpartition(".")
    if not module:
        raise PilidError(
            f"logger._target_={target!r} is not a class path; give <module>.<Class>, e.g. "
            "pilid.experiments.tracking.MLflowTracker"
        )
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise PilidError(
            f"logger._target_={target} cannot be imported ({error}); correct the class path"
        ) from error
    if not inspect.isclass(cls):
        raise PilidError(f"logger._target_={target} is not a class; give <module>.<Class>")
    return cls


def tracker_arguments(logger: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor arguments of a ``logger`` config: its keys minus ``NOT_ARGUMENTS``."""
    return {k: v for k, v in logger.items() if k not in NOT_ARGUMENTS}


def check_logger(logger: Any) -> None:
    """One line for a ``logger`` config that cannot track: not a mapping, a ``_target_`` that
    cannot be imported, a key its class does not take, or a tracker whose package is missing
    (``logger=mlflow`` without MLflow). None (the default) is no tracking."""
    if logger is None:
        return
    if not isinstance(logger, Mapping):
        raise PilidError(
            f"logger={logger!r} is invalid; use logger=mlflow (conf/logger/) or logger=null"
        )
    cls = tracker_class(logger)
    accepted = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    unknown = sorted(k for k in tracker_arguments(logger) if k not in accepted)
    if unknown and not takes_any:
        raise PilidError(
            f"unknown key logger.{unknown[0]} for logger {logger.get('name')!r}; valid keys: "
            f"{', '.join(k for k in accepted if k != 'self')}"
        )
    check = getattr(cls, "check_available", None)
    if callable(check):
        check()


def tracker_from_config(logger: Mapping[str, Any] | None) -> Any:
    """The tracker of a resolved ``logger`` config (`check_logger` first), or None when it is
    None (tracking off); a tracker with ``check_reachable`` is checked before it is returned
    (before anything of the setting trains)."""
    if logger is None:
        return None
    check_logger(logger)
    tracker = tracker_class(logger)(**tracker_arguments(logger))
    reachable = getattr(tracker, "check_reachable", None)
    if callable(reachable):
        reachable()
    return tracker


# -- what a setting's run holds ----------------------------------------------------------------
def setting_params(config: Mapping[str, Any], records: list[Mapping[str, Any]]) -> dict[str, str]:
    """The setting's config as MLflow parameters: ``seed``, ``trials``, ``data.<key>``,
    ``model.<key>`` (minus its class keys), ``train.<key>`` and the ``estimator`` class the
    records name; each value as the command line writes it (JSON: ``true``, ``null``,
    ``[64, 64]``; strings as they are)."""
    from pilid.experiments.model_config import MODEL_CLASS_KEYS

    params: dict[str, Any] = {"seed": config.get("seed"), "trials": config.get("trials")}
    for section in ("data", "model", "train"):
        node = config.get(section)
        for key, value in node.items() if isinstance(node, Mapping) else ():
            if section != "model" or key not in MODEL_CLASS_KEYS:
                params[f"{section}.{key}"] = value
    if records and records[0].get("estimator"):
        params["estimator"] = records[0]["estimator"]
    return {key: _param_value(value) for key, value in params.items()}


#: MLflow's longest parameter value (mlflow.utils.validation.MAX_PARAM_VAL_LENGTH, 2.x and 3.x).
MAX_PARAM_LENGTH = 6000


def _param_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= MAX_PARAM_LENGTH else text[: MAX_PARAM_LENGTH - 3] + "..."


def records_digest(records: list[Mapping[str, Any]]) -> str:
    """16 hex digits of the records a run holds (trial, value, fit seconds, finish time): equal
    for the same records, so a setting already logged is found (`MLflowTracker`)."""
    rows = sorted(
        (int(r["trial"]), r.get("value"), r.get("fit_seconds"), r.get("finished_at"))
        for r in records
    )
    text = json.dumps(rows, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def artefact_files(directory: Path | None, trials: set[int]) -> list[Path]:
    """The artefact files of ``trials`` in a setting's artefact ``directory``, sorted."""
    if directory is None or not Path(directory).is_dir():
        return []
    found = []
    for path in sorted(Path(directory).iterdir()):
        match = _ARTEFACT_TRIAL.match(path.name)
        if path.is_file() and match and int(match[1]) in trials:
            found.append(path)
    return found


def _millis(stamp: Any) -> int:
    """A record's ``finished_at`` (ISO 8601) in milliseconds; now when it has none."""
    try:
        return int(datetime.fromisoformat(str(stamp)).timestamp() * 1000)
    except (TypeError, ValueError):
        return int(time.time() * 1000)


# -- MLflow ------------------------------------------------------------------------------------
class MLflowTracker:
    """One MLflow run per setting (``logger=mlflow``, ``conf/logger/mlflow.yaml``).

    Parameters
    ----------
    tracking_uri : str or None
        Where the runs go. None (``conf/logger/mlflow.yaml``'s default): where MLflow sends them
        by its own rules, ``mlflow.get_tracking_uri()`` in the working directory when the setting
        starts: ``MLFLOW_TRACKING_URI`` when it is set, else MLflow's default
        (``sqlite:///mlflow.db`` in MLflow 3, which ``mlflow ui`` there reads too). Else the URI
        itself, which wins over ``MLFLOW_TRACKING_URI``: a database (``sqlite:///runs.db``), a
        server (``http://host:5000``, checked once when the setting starts:
        `check_reachable`) or a local file store (``file:./mlruns``; MLflow 3 refuses it unless
        ``MLFLOW_ALLOW_FILE_STORE=true``, which this tracker sets while it writes to one).
    experiment_name : str
        The MLflow experiment (created when missing): the config's ``experiment_name``.
    artifacts : bool
        Log the setting's artefact files (its shapes) too.
    """

    def __init__(
        self,
        tracking_uri: str | None = None,
        experiment_name: str = "adhoc",
        artifacts: bool = True,
    ) -> None:
        self.tracking_uri = None if tracking_uri is None else str(tracking_uri)
        self.experiment_name = str(experiment_name)
        self.artifacts = bool(artifacts)
        self._resolved: str | None = None

    @property
    def uri(self) -> str:
        """The tracking URI the runs go to: ``tracking_uri``, else MLflow's
        (``mlflow.get_tracking_uri()``, resolved once, in the working directory of the first
        call)."""
        if self.tracking_uri is not None:
            return self.tracking_uri
        if self._resolved is None:
            import mlflow

            self._resolved = str(mlflow.get_tracking_uri())
            old_default = _is_file_store(self._resolved) and not mlflow.__version__.startswith("2.")
            if old_default and not os.environ.get("MLFLOW_TRACKING_URI"):
                print(
                    f"pilid: note: logger=mlflow logs to {self._resolved}, MLflow's default "
                    "here because ./mlruns holds runs of MLflow's old file store; move them to "
                    "a database (mlflow migrate-filestore) or give "
                    "logger.tracking_uri=sqlite:///mlflow.db",
                    file=sys.stderr,
                )
        return self._resolved

    def _source(self) -> str:
        """Where ``uri`` comes from, in the words of a message."""
        if self.tracking_uri is not None:
            return "logger.tracking_uri"
        if os.environ.get("MLFLOW_TRACKING_URI"):
            return "MLFLOW_TRACKING_URI; logger.tracking_uri=... overrides it"
        return "MLflow's default"

    def check_reachable(self, timeout: float = SERVER_TIMEOUT) -> None:
        """One line when ``uri`` is a tracking server (``http(s)://``) that does not accept a
        connection within ``timeout`` seconds: what MLflow would otherwise find only after its
        retries, minutes after the setting's trials trained. A server reached through a proxy
        (``HTTP(S)_PROXY``) is left to MLflow; other URIs need no server."""
        uri = self.uri
        parts = urllib.parse.urlsplit(uri)
        if parts.scheme not in ("http", "https"):
            return
        try:
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as error:
            raise PilidError(
                f"logger=mlflow: the tracking URI {uri} ({self._source()}) is not a valid URI "
                f"({error}); give logger.tracking_uri=http://<host>:<port>"
            ) from error
        if not host:
            raise PilidError(
                f"logger=mlflow: the tracking URI {uri} ({self._source()}) names no host; give "
                "logger.tracking_uri=http://<host>:<port>"
            )
        if parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
            return
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError as error:
            reason = (
                f"no answer within {timeout:g} s"
                if isinstance(error, TimeoutError)
                else f"{type(error).__name__}: {error}"
            )
            raise PilidError(
                f"logger=mlflow: the tracking server at {uri} ({self._source()}) does not answer "
                f"({reason}); start it (mlflow "
                f"server --host {host} --port {port}), or give logger.tracking_uri=<a server "
                "that answers, or sqlite:///mlflow.db>, or run without logger=mlflow"
            ) from error

    @staticmethod
    def check_available() -> None:
        """One line when MLflow is not installed (before anything trains)."""
        import importlib.util

        if importlib.util.find_spec("mlflow") is None:
            raise PilidError(
                f"logger=mlflow needs MLflow, which is not installed; {_INSTALL} (or pip install "
                "mlflow), or run without logger=mlflow"
            )

    def log_setting(
        self,
        config: Mapping[str, Any],
        summary: Any,
        artefacts: Path | None = None,
        label: str | None = None,
    ) -> str | None:
        """Log one setting's run: ``summary`` (`pilid.experiments.scoring.Summary`: its
        ``records``, ``mean``, ``std``, ``setting_id``, ``line``) of the resolved ``config``, and
        the files of ``artefacts`` (the setting's artefact folder) for its trials; the run is
        named ``label`` (the setting's, `pilid.experiments.setting.setting_label`; default: its
        id).

        Returns the new run's id, or None when a finished run of the experiment already holds
        these records (`records_digest`). A failed write raises `PilidError` (one line) and
        leaves the run marked ``FAILED``.
        """
        label = str(label or summary.setting_id)
        try:
            with _file_store_allowed(self.uri):
                return self._log(config, summary, artefacts, label)
        except PilidError:
            raise
        except Exception as error:  # noqa: BLE001 - MLflow's, the disk's, the network's
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise PilidError(
                f"logger=mlflow could not log {label} (setting {summary.setting_id}) to "
                f"{self.uri}: {type(error).__name__}: {first}; its {summary.n} trial(s) "
                f"are recorded in {config.get('results_dir')}: fix that and run the same command "
                "again to log it (nothing is retrained), or run without logger=mlflow"
            ) from error

    def _log(self, config, summary, artefacts, label) -> str | None:
        from mlflow import MlflowClient
        from mlflow.entities import Metric, Param, RunTag

        records = sorted(summary.records, key=lambda r: int(r["trial"]))
        sid = str(summary.setting_id)
        digest = records_digest(records)
        client = MlflowClient(tracking_uri=self.uri)
        experiment = self._experiment(client)
        logged = client.search_runs(
            [experiment],
            filter_string=(
                f"tags.`{SETTING_TAG}` = '{sid}' and tags.`{RECORDS_TAG}` = '{digest}' "
                "and attributes.status = 'FINISHED'"
            ),
            max_results=1,
        )
        if logged:
            return None
        metric = str(records[0].get("metric", "value")) if records else "value"
        tags = {
            SETTING_TAG: sid,
            RECORDS_TAG: digest,
            "pilid.summary": summary.line,
            "pilid.results_dir": str(config.get("results_dir")),
            "pilid.devices": ",".join(sorted({str(r.get("device")) for r in records})),
        }
        run = client.create_run(experiment, run_name=label)
        run_id = run.info.run_id
        try:
            metrics = []
            for record in records:
                stamp, step = _millis(record.get("finished_at")), int(record["trial"])
                metrics.append(Metric(metric, float(record["value"]), stamp, step))
                if record.get("fit_seconds") is not None:
                    seconds = float(record["fit_seconds"])
                    metrics.append(Metric("fit_seconds", seconds, stamp, step))
            now = int(time.time() * 1000)
            metrics.append(Metric(f"{metric}_mean", float(summary.mean), now, 0))
            metrics.append(Metric(f"{metric}_std", float(summary.std), now, 0))
            params = [Param(k, v) for k, v in setting_params(config, records).items()]
            client.log_batch(
                run_id,
                metrics=metrics,
                params=params,
                tags=[RunTag(k, v) for k, v in tags.items()],
            )
            if self.artifacts:
                trials = {int(r["trial"]) for r in records}
                for path in artefact_files(artefacts, trials):
                    client.log_artifact(run_id, str(path), ARTEFACT_PATH)
        except BaseException:
            with contextlib.suppress(Exception):
                client.set_terminated(run_id, "FAILED")
            raise
        client.set_terminated(run_id, "FINISHED")
        return run_id

    def _experiment(self, client) -> str:
        """The id of the experiment ``experiment_name``, created when missing (another process
        may create it at the same moment)."""
        from mlflow.exceptions import MlflowException

        found = client.get_experiment_by_name(self.experiment_name)
        if found is None:
            try:
                return client.create_experiment(self.experiment_name)
            except MlflowException:
                found = client.get_experiment_by_name(self.experiment_name)
                if found is None:
                    raise
        if found.lifecycle_stage != "active":
            raise PilidError(
                f"the MLflow experiment {self.experiment_name!r} at {self.uri} is "
                f"deleted; restore it (mlflow experiments restore --experiment-id "
                f"{found.experiment_id}) or set logger.experiment_name=<another name>"
            )
        return found.experiment_id


def _is_file_store(uri: str) -> bool:
    """Whether a tracking URI is MLflow's local file store (``file:...`` or a plain path)."""
    scheme = uri.split(":", 1)[0] if ":" in uri else ""
    return scheme == "file" or scheme == "" or (len(scheme) == 1 and scheme.isalpha())


@contextlib.contextmanager
def _file_store_allowed(uri: str) -> Iterator[None]:
    """``MLFLOW_ALLOW_FILE_STORE=true`` while logging to a file store the config names (MLflow
    3 refuses the file store without it; 2.x ignores it); the user's own value is kept."""
    key = "MLFLOW_ALLOW_FILE_STORE"
    if not _is_file_store(uri) or key in os.environ:
        yield
        return
    os.environ[key] = "true"
    try:
        yield
    finally:
        os.environ.pop(key, None)
