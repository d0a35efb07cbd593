"""One ONNX graph per fitted PiLiD or PiLiB: the user's columns in, ``predict`` /
``predict_proba`` / ``decision_function`` out (the ``onnx`` extra: ``pip install -e ".[onnx]"``).

`to_onnx` builds the graph in three parts, joined into one:

1. **The columns.** One graph input per column of ``fit`` (named as in ``feature_names_in_``;
   ``x0``, ``x1``, ... for an array; a name the graph cannot take, an output's name, an empty
   one or one of the graph's own ``pilid/`` / ``numeric/`` names, as ``column<j>``: the
   metadata ``pilid.columns`` maps each column to its input, with a text column's levels),
   N rows: a numeric column as ``double`` (NaN: a missing value), a text or category column
   as ``string``. A string column's levels become the
   estimator's codes in the graph, with ``ai.onnx.ml``'s ``LabelEncoder``, as
   `pilid.models.inputs` codes them at prediction: a level of ``categories_`` its position, a
   level of ``infrequent_categories_`` the ``"(infrequent)"`` code, the empty string
   (`MISSING_TEXT`) a missing value, any other string an unseen level.
2. **The numeric path** (`numeric_path`, exported with ``torch.onnx``): the fitted model's one
   description, `pilid.nn.fitted.FittedEnsemble`, whose forward ``predict`` runs: its input
   encoding (the deep part's input: standardised values, one-hot levels, missing indicators;
   Phi in compact form, the characteristic points compared instead of searched, which ONNX
   lacks) and its heads: a bag's one forward (`pilid.nn.bag`) where fit built one, else every
   member's `pilid.nn.ensemble.PiLiDEnsemble`, averaged; K classes stacked; the additive part frozen
   (`pilid.nn.additive.FrozenAdditive`: its running sum of the slopes, which depends on the
   parameters alone, computed by torch first, as ONNX's ``CumSum`` rounds differently); put
   back in the target's units.
3. **The outputs.** A regressor: ``predict`` (N,). A classifier: ``label`` (N,; `predict`),
   ``probabilities`` (N, K; `predict_proba`: the logistic function of the logit, or the
   softmax of K logits) and ``decision_function`` (N,; or N, K).

Everything is in the graph: onnxruntime alone scores it, from the columns as they came to
``fit``. `onnx_inputs` turns a DataFrame into its inputs (a text column's value as the key of
the level it equals, as ``predict`` matches them: ``1.0`` is the level ``1``; a missing value
as the empty string, any other value as unseen; numbers as float64).
"""

from __future__ import annotations

import copy
import io
import json
import warnings

import numpy as np
import pandas as pd
import torch

from pilid.errors import PilidError
from pilid.export.table import fitted_model
from pilid.nn.additive import FrozenAdditive
from pilid.nn.fitted import FittedEnsemble

__all__ = ["MISSING_TEXT", "TOLERANCE", "numeric_path", "onnx_inputs", "parity", "to_onnx"]

#: The string a text column's missing value is given as (NaN or None in pandas).
MISSING_TEXT = ""
#: The largest difference from the estimator's own outputs that `to_onnx`'s check accepts,
#: relative to the outputs' size (at least 1): float32 networks round at about 1e-7.
TOLERANCE = 1e-5
#: The ONNX operator sets of the graph: the standard one and ``ai.onnx.ml`` (``LabelEncoder``).
OPSET, ML_OPSET = 18, 3


def _extra(runtime: bool = False):
    """``onnx`` (with ``runtime``: ``onnxruntime``), or a one-line error naming the extra."""
    try:
        import onnx

        if runtime:
            import onnxruntime  # noqa: F401
    except ImportError:
        raise PilidError(
            'pilid.export.to_onnx needs the onnx extra: pip install -e ".[onnx]" (onnx, '
            "onnxruntime, onnxscript)"
        ) from None
    return onnx


def numeric_path(fitted: FittedEnsemble) -> FittedEnsemble:
    """The numeric path: a copy of the fitted model's description
    (`pilid.nn.fitted.FittedEnsemble`, whose forward `predict` runs) in evaluation mode, the
    additive part of each member a head runs one by one frozen (`FrozenAdditive`; a bag's
    one forward holds its own), and its encoding's piece counts as a comparison, which
    traces (`InputEncoding.traced`)."""
    path = copy.deepcopy(fitted).eval()
    path.encoding.traced = True  # Phi's piece counts as a comparison, which traces
    for head in path.heads:
        if head.bag is None:
            for module in head.members:
                module.additive = FrozenAdditive.of(module.additive)
    return path


def _export_numeric(path: FittedEnsemble, example: np.ndarray, dynamo: bool):
    """The numeric path as an ONNX model (input ``X`` (N, m), output ``raw``)."""
    onnx = _extra()
    x = torch.as_tensor(np.require(example, requirements="W"))  # a read-only array: copied
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporters' deprecation and tracer notes
        if dynamo:
            program = torch.onnx.export(
                path,
                (x,),
                input_names=["X"],
                output_names=["raw"],
                dynamic_shapes=({0: torch.export.Dim("N")},),
                opset_version=OPSET,
                dynamo=True,
                verbose=False,
            )
            return program.model_proto
        buffer = io.BytesIO()
        torch.onnx.export(
            path,
            (x,),
            buffer,
            input_names=["X"],
            output_names=["raw"],
            dynamic_axes={"X": {0: "N"}, "raw": {0: "N"}},
            opset_version=OPSET,
            dynamo=False,
        )
    return onnx.load_model_from_string(buffer.getvalue())


#: The graph's output names, and the prefixes of its own names: no input may take them.
OUTPUT_NAMES = ("predict", "label", "probabilities", "decision_function")
OWN_PREFIXES = ("pilid/", "numeric/")
#: The string `onnx_inputs` sends for a value that is none of a column's levels (an unseen one).
UNSEEN_TEXT = "\x00unseen"


def input_names(names: list[str]) -> list[str]:
    """The graph input of each column of fit: its name, or ``column<j>`` (with ``_`` appended
    until it is free) where the name is empty, an output's or one of the graph's own."""
    taken = {str(n) for n in names}
    out = []
    for j, name in enumerate(map(str, names)):
        if not name or name in OUTPUT_NAMES or name.startswith(OWN_PREFIXES):
            name = f"column{j}"
            while name in taken:
                name += "_"
            taken.add(name)
        out.append(name)
    return out


def _columns(fitted: FittedEnsemble) -> list[tuple[str, int, list | None]]:
    """(input name, position, levels or None) per column of fit; a level that is the empty
    string (`MISSING_TEXT`, a missing value in the graph) raises a one-line error."""
    names = list(fitted.columns.names)
    categories = fitted.columns.levels
    out = []
    for j, name in zip(range(len(names)), input_names(names)):
        levels = categories.get(j)
        if levels is not None and any(str(v) == MISSING_TEXT for v in levels):
            raise PilidError(
                f"column {name!r} has the empty string as a level, which the ONNX graph reads "
                "as a missing value; rename that level (e.g. to 'none') and refit"
            )
        out.append((name, j, levels))
    return out


def _front(fitted: FittedEnsemble, onnx) -> tuple[list, list]:
    """The graph inputs (one per column) and the nodes that make ``numeric/X`` of them."""
    from onnx import TensorProto, helper

    infrequent = fitted.columns.infrequent
    inputs, nodes, parts = [], [], []
    axis = helper.make_tensor("pilid/axis1", TensorProto.INT64, [1], [1])
    nodes.append(helper.make_node("Constant", [], ["pilid/axis1"], value=axis))
    for name, j, levels in _columns(fitted):
        column = name
        if levels is None:
            inputs.append(helper.make_tensor_value_info(name, TensorProto.DOUBLE, ["N"]))
        else:
            inputs.append(helper.make_tensor_value_info(name, TensorProto.STRING, ["N"]))
            keys = [str(v) for v in levels] + [str(v) for v in infrequent.get(j, ())]
            codes = list(range(len(levels))) + [len(levels) - 1] * len(infrequent.get(j, ()))
            nodes.append(
                helper.make_node(
                    "LabelEncoder",
                    [name],
                    [f"pilid/code{j}"],
                    domain="ai.onnx.ml",
                    keys_strings=[*keys, MISSING_TEXT],
                    values_floats=[float(c) for c in codes] + [float("nan")],
                    default_float=float("inf"),  # an unseen level (`UNSEEN_CODE`)
                )
            )
            column = f"pilid/column{j}"
            nodes.append(
                helper.make_node("Cast", [f"pilid/code{j}"], [column], to=TensorProto.DOUBLE)
            )
        nodes.append(helper.make_node("Unsqueeze", [column, "pilid/axis1"], [f"pilid/x{j}"]))
        parts.append(f"pilid/x{j}")
    nodes.append(helper.make_node("Concat", parts, ["numeric/X"], axis=1))
    return inputs, nodes


def _classes_tensor(classes: np.ndarray, onnx):
    values = np.asarray(classes)
    if values.dtype.kind in "OUS":
        values = np.array([str(c) for c in values], dtype=object)
    elif values.dtype.kind in "iu":
        values = values.astype(np.int64)
    elif values.dtype.kind == "f":
        values = values.astype(np.float64)
    return onnx.numpy_helper.from_array(values, "pilid/classes")


def _back(fitted: FittedEnsemble, onnx) -> tuple[list, list, list]:
    """The nodes from ``numeric/raw`` to the outputs, their constants, the graph outputs."""
    from onnx import TensorProto, helper

    const = [
        helper.make_tensor("pilid/flat", TensorProto.INT64, [1], [-1]),
        helper.make_tensor("pilid/axis1b", TensorProto.INT64, [1], [1]),
    ]
    double = TensorProto.DOUBLE
    if fitted.task == "regression":
        nodes = [helper.make_node("Reshape", ["numeric/raw", "pilid/flat"], ["predict"])]
        return nodes, const, [helper.make_tensor_value_info("predict", double, ["N"])]
    classes = _classes_tensor(fitted.classes, onnx)
    const.append(classes)
    K = len(fitted.classes)
    if K == 2:  # [1 - p, p], p = sigmoid(logit); classes_[1] where the logit > 0
        nodes = [
            helper.make_node("Reshape", ["numeric/raw", "pilid/flat"], ["decision_function"]),
            helper.make_node("Sigmoid", ["decision_function"], ["pilid/p1"]),
            helper.make_node("Sub", ["pilid/one", "pilid/p1"], ["pilid/p0"]),
            helper.make_node("Unsqueeze", ["pilid/p0", "pilid/axis1b"], ["pilid/c0"]),
            helper.make_node("Unsqueeze", ["pilid/p1", "pilid/axis1b"], ["pilid/c1"]),
            helper.make_node("Concat", ["pilid/c0", "pilid/c1"], ["probabilities"], axis=1),
            helper.make_node("Greater", ["decision_function", "pilid/zero"], ["pilid/positive"]),
            helper.make_node("Cast", ["pilid/positive"], ["pilid/index"], to=TensorProto.INT64),
            helper.make_node("Gather", ["pilid/classes", "pilid/index"], ["label"], axis=0),
        ]
        const.append(helper.make_tensor("pilid/one", double, [], [1.0]))
        const.append(helper.make_tensor("pilid/zero", double, [], [0.0]))
        shape = ["N"]
    else:
        nodes = [
            helper.make_node("Identity", ["numeric/raw"], ["decision_function"]),
            helper.make_node("Softmax", ["numeric/raw"], ["probabilities"], axis=1),
            helper.make_node("ArgMax", ["numeric/raw"], ["pilid/index"], axis=1, keepdims=0),
            helper.make_node("Gather", ["pilid/classes", "pilid/index"], ["label"], axis=0),
        ]
        shape = ["N", K]
    outputs = [
        helper.make_tensor_value_info("label", classes.data_type, ["N"]),
        helper.make_tensor_value_info("probabilities", double, ["N", K]),
        helper.make_tensor_value_info("decision_function", double, shape),
    ]
    return nodes, const, outputs


def _expected(est, X) -> dict[str, np.ndarray]:
    """The estimator's own outputs of `X`, by the graph's output names."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unseen levels, NaN in features without any in fit
        if est.fitted_.task == "regression":
            return {"predict": est.predict(X)}
        z = est.decision_function(X)
        return {
            "label": est.predict(X),
            "probabilities": est.predict_proba(X),
            "decision_function": z,
        }


def parity(model, estimator, X) -> dict[str, float]:
    """The largest absolute difference, per output, between onnxruntime's outputs of the graph
    `model` and `estimator`'s own on rows `X` (``label``: the number of rows that differ).

    Parameters
    ----------
    model : onnx.ModelProto, bytes or str
        The graph of `to_onnx` (or its file).
    estimator : fitted PiLiD or PiLiB estimator
        The estimator it was exported from.
    X : DataFrame or array-like
        The rows, as ``predict`` takes them.

    Returns
    -------
    dict of str to float
        Per output of the graph, the largest absolute difference (``label``: a count).
    """
    return _differences(model, fitted_model(estimator, "parity"), X)[0]


def _differences(model, est, X) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """`parity` of the fitted `est`, and the estimator's own outputs."""
    onnx = _extra(runtime=True)
    import onnxruntime

    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    got = dict(zip(names, session.run(None, onnx_inputs(session, X))))
    expected = _expected(est, X)
    found = {}
    for name, want in expected.items():
        if name == "label":
            differ = np.asarray(got[name]).astype(object) != want.astype(object)
            found[name] = float(np.sum(differ))
        else:
            found[name] = float(np.max(np.abs(got[name] - want), initial=0.0))
    return found, expected


def to_onnx(estimator, X_sample, path=None, *, check: bool = True, dynamo: bool = False):
    """One ONNX graph of a fitted PiLiD or PiLiB whose outputs equal its own (module docstring).

    Parameters
    ----------
    estimator : fitted PiLiD or PiLiB estimator
        A regressor or classifier (K classes, bags and CV searches included); anything else
        (a baseline, an unfitted model) raises a one-line `pilid.errors.PilidError`.
    X_sample : DataFrame or array-like
        A few rows as ``predict`` takes them: the example the numeric path is traced with and,
        with `check`, the rows the graph is checked on.
    path : str, Path or None, default=None
        Where to save the graph (``.onnx``); None: not saved.
    check : bool, default=True
        Score `X_sample` with onnxruntime and compare with the estimator's own outputs: a
        difference over `TOLERANCE` times the outputs' size (at least 1), or a label that
        differs, raises a `pilid.errors.PilidError`. The differences found are kept in the
        graph's metadata (``pilid.parity``).
    dynamo : bool, default=False
        Trace with ``torch.onnx``'s torch.export-based exporter (needs onnxscript; several
        times slower on a bag) instead of its TorchScript one.

    Returns
    -------
    onnx.ModelProto
        The graph: inputs one per column of fit (``double``, or ``string`` for a text or
        category column), outputs ``predict`` (a regressor) or ``label``, ``probabilities``
        and ``decision_function`` (a classifier).
    """
    onnx = _extra()
    from onnx import compose, helper

    import pilid

    est = fitted_model(estimator, "to_onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coded = est._check_fitted_X(X_sample)
    if coded.shape[0] < 2:  # two rows at least: a batch of one could be traced as fixed
        coded = np.repeat(coded, 2, axis=0)
    fitted = est.fitted_  # the one description of the fitted model (`pilid.nn.fitted`)
    numeric = _export_numeric(numeric_path(fitted), coded, dynamo)
    numeric = compose.add_prefix(numeric, "numeric/")
    inputs, front = _front(fitted, onnx)
    back, constants, outputs = _back(fitted, onnx)
    used = {name for node in back for name in node.input}
    constants = [c for c in constants if c.name in used]
    graph = helper.make_graph(
        [*front, *numeric.graph.node, *back],
        f"pilid_{type(est).__name__}",
        inputs,
        outputs,
        initializer=[*numeric.graph.initializer, *constants],
        value_info=list(numeric.graph.value_info),
    )
    opsets = {o.domain: o.version for o in numeric.opset_import}
    opsets[""], opsets["ai.onnx.ml"] = max(opsets.get("", OPSET), OPSET), ML_OPSET
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
        producer_name="pilid",
        producer_version=pilid.__version__,
        doc_string=f"{type(est).__name__} exported by pilid.export.to_onnx",
    )
    model.ir_version = numeric.ir_version
    infrequent = fitted.columns.infrequent
    columns = [
        {"name": str(column), "input": name, "type": "double" if levels is None else "string"}
        | ({} if levels is None else {"levels": _json_levels([*levels, *infrequent.get(j, ())])})
        for column, (name, j, levels) in zip(fitted.columns.names, _columns(fitted))
    ]
    meta = {
        "pilid.estimator": type(est).__name__,
        "pilid.columns": json.dumps(columns),
        "pilid.missing_text": MISSING_TEXT,
    }
    onnx.checker.check_model(model)
    helper.set_model_props(model, meta)  # onnx_inputs reads the columns' inputs and levels
    if check:
        found, expected = _differences(model, est, X_sample)
        sizes = [np.max(np.abs(v), initial=0.0) for k, v in expected.items() if k != "label"]
        limit = TOLERANCE * max(1.0, *map(float, sizes))
        bad = {k: v for k, v in found.items() if not v <= (0.0 if k == "label" else limit)}
        if bad:
            raise PilidError(
                f"the ONNX graph's outputs differ from {type(est).__name__}'s on X_sample "
                f"({bad}); please report it with the estimator's parameters"
            )
        meta["pilid.parity"] = json.dumps(found)
    helper.set_model_props(model, meta)
    if path is not None:
        onnx.save(model, str(path))
    return model


def onnx_inputs(model, X) -> dict[str, np.ndarray]:
    """The inputs of a `to_onnx` graph for rows `X`: one array per column, text as ``str``
    (a missing value as `MISSING_TEXT`), numbers as float64 (NaN: missing).

    Parameters
    ----------
    model : onnxruntime.InferenceSession, onnx.ModelProto or str
        The graph (a session, the model, or its file) whose inputs are filled.
    X : DataFrame or array-like of shape (n_samples, n_features)
        The rows, as the estimator's ``predict`` takes them: a DataFrame by column name, an
        array by position.

    Returns
    -------
    dict of str to ndarray
        ``session.run(None, onnx_inputs(session, X))`` scores them.
    """
    if hasattr(model, "get_inputs"):  # an onnxruntime session
        kinds = [(i.name, i.type == "tensor(string)") for i in model.get_inputs()]
        meta = model.get_modelmeta().custom_metadata_map
    else:
        onnx = _extra()
        if not isinstance(model, onnx.ModelProto):
            model = onnx.load(str(model))
        string = onnx.TensorProto.STRING
        kinds = [(i.name, i.type.tensor_type.elem_type == string) for i in model.graph.input]
        meta = {p.key: p.value for p in model.metadata_props}
    described = {c.get("input", c["name"]): c for c in json.loads(meta.get("pilid.columns", "[]"))}
    columns = [described.get(name, {}).get("name", name) for name, _ in kinds]
    if not isinstance(X, pd.DataFrame):
        X = pd.DataFrame(np.asarray(X, dtype=object), columns=columns)
    elif not set(columns) <= set(X.columns) and X.shape[1] == len(columns):
        if not all(isinstance(c, str) for c in X.columns):  # no names to go by: by position
            X = X.set_axis(columns, axis=1)
    lacking = [column for column in columns if column not in X.columns]
    if lacking:
        shown = ", ".join(repr(n) for n in lacking[:5])
        raise PilidError(f"X lacks the graph's column(s) {shown}; pass the columns of fit")
    feeds = {}
    for (name, text), column in zip(kinds, columns):
        values = X[column]
        if text:
            feeds[name] = _level_texts(values, described.get(name, {}).get("levels"))
            continue
        try:
            numbers = pd.to_numeric(values.astype(object))
        except (ValueError, TypeError):
            bad = values[pd.to_numeric(values.astype(object), errors="coerce").isna()]
            bad = bad[bad.notna()]
            raise PilidError(
                f"column {column!r} of X holds {bad.iloc[0]!r} (row {bad.index[0]!r}), not a "
                f"number, where the graph takes numbers; pass numbers there (e.g. "
                f"X[{column!r}] = pd.to_numeric(X[{column!r}], errors='coerce') for missing)"
            ) from None
        feeds[name] = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    return feeds


def _json_levels(levels) -> list:
    """A column's levels as JSON keeps them: numbers and strings as they are (NumPy scalars
    as Python's), anything else as its text (the graph's key)."""
    out = []
    for level in levels:
        level = level.item() if isinstance(level, np.generic) else level
        finite = isinstance(level, float) and np.isfinite(level)
        out.append(level if isinstance(level, str | bool | int) or finite else str(level))
    return out


def _level_texts(values: pd.Series, levels: list | None) -> np.ndarray:
    """A text column's graph input: each value as the key of the level it equals, matched as
    `pilid.models.inputs` matches levels at prediction (``1.0`` is the level ``1``), a missing
    value as `MISSING_TEXT`, any other value as `UNSEEN_TEXT`. A graph without its levels in
    the metadata gets the values' text."""
    missing = values.isna().to_numpy()
    if levels is None:
        texts = values.astype(object).to_numpy()
        return np.array([MISSING_TEXT if m else str(v) for v, m in zip(texts, missing)], object)
    keys = np.array([str(v) for v in levels] + [UNSEEN_TEXT, MISSING_TEXT], dtype=object)
    position = pd.Index(levels, dtype=object).get_indexer(values.astype(object))
    position = np.where(position >= 0, position, np.where(missing, len(levels) + 1, len(levels)))
    return keys[position]
