"""Inventory management for a small warehouse.

The module keeps stock levels per location, records every movement in an
append-only ledger and produces the reports the operations team reads each
morning. Everything is in memory; persistence is the caller's business.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import enum
import io
import logging
import re
from collections import defaultdict
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

log = logging.getLogger(__name__)

SKU_PATTERN = re.compile(r"^[A-Z]{3}-\d{4,6}$")
LOCATION_PATTERN = re.compile(r"^(?P<aisle>[A-Z])(?P<rack>\d{2})-(?P<shelf>\d)$")
DEFAULT_REORDER_POINT = 10
DEFAULT_REORDER_QUANTITY = 50
MAX_LINE_ITEMS = 200


class InventoryError(Exception):
    """Base class for every error this module raises."""


class UnknownSkuError(InventoryError):
    def __init__(self, sku: str) -> None:
        super().__init__(f"unknown SKU {sku!r}")
        self.sku = sku


class InsufficientStockError(InventoryError):
    def __init__(self, sku: str, location: str, wanted: int, available: int) -> None:
        super().__init__(
            f"cannot take {wanted} of {sku} from {location}: only {available} available"
        )
        self.sku = sku
        self.location = location
        self.wanted = wanted
        self.available = available


class InvalidLocationError(InventoryError):
    def __init__(self, location: str) -> None:
        super().__init__(f"invalid location {location!r}; expected e.g. A01-3")
        self.location = location


class MovementKind(enum.Enum):
    RECEIPT = "receipt"
    SHIPMENT = "shipment"
    TRANSFER_OUT = "transfer_out"
    TRANSFER_IN = "transfer_in"
    ADJUSTMENT = "adjustment"
    RETURN = "return"

    @property
    def sign(self) -> int:
        if self in (MovementKind.SHIPMENT, MovementKind.TRANSFER_OUT):
            return -1
        return 1


@dataclasses.dataclass(frozen=True)
class Item:
    sku: str
    name: str
    unit_cost_cents: int
    reorder_point: int = DEFAULT_REORDER_POINT
    reorder_quantity: int = DEFAULT_REORDER_QUANTITY
    discontinued: bool = False

    def __post_init__(self) -> None:
        if not SKU_PATTERN.match(self.sku):
            raise InventoryError(f"malformed SKU {self.sku!r}")
        if self.unit_cost_cents < 0:
            raise InventoryError(f"negative cost for {self.sku}")
        if self.reorder_point < 0 or self.reorder_quantity <= 0:
            raise InventoryError(f"bad reorder settings for {self.sku}")

    @property
    def unit_cost(self) -> float:
        return self.unit_cost_cents / 100


@dataclasses.dataclass(frozen=True)
class Location:
    code: str

    def __post_init__(self) -> None:
        if not LOCATION_PATTERN.match(self.code):
            raise InvalidLocationError(self.code)

    @property
    def aisle(self) -> str:
        return self._parts()["aisle"]

    @property
    def rack(self) -> int:
        return int(self._parts()["rack"])

    @property
    def shelf(self) -> int:
        return int(self._parts()["shelf"])

    def _parts(self) -> Mapping[str, str]:
        match = LOCATION_PATTERN.match(self.code)
        assert match is not None  # checked in __post_init__
        return match.groupdict()

    def __str__(self) -> str:
        return self.code


@dataclasses.dataclass(frozen=True)
class Movement:
    id: int
    kind: MovementKind
    sku: str
    location: str
    quantity: int
    at: dt.datetime
    reference: str = ""
    note: str = ""

    @property
    def signed_quantity(self) -> int:
        return self.kind.sign * self.quantity


@dataclasses.dataclass
class StockLevel:
    sku: str
    location: str
    on_hand: int = 0
    reserved: int = 0

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved


class Clock:
    """A replaceable source of time, so tests can pin it."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.timezone.utc)


class FixedClock(Clock):
    def __init__(self, at: dt.datetime) -> None:
        self._at = at

    def now(self) -> dt.datetime:
        return self._at

    def advance(self, **kwargs: float) -> None:
        self._at += dt.timedelta(**kwargs)


class Ledger:
    """An append-only list of movements with simple queries."""

    def __init__(self) -> None:
        self._movements: list[Movement] = []
        self._next_id = 1

    def __len__(self) -> int:
        return len(self._movements)

    def __iter__(self) -> Iterator[Movement]:
        return iter(self._movements)

    def record(
        self,
        kind: MovementKind,
        sku: str,
        location: str,
        quantity: int,
        at: dt.datetime,
        reference: str = "",
        note: str = "",
    ) -> Movement:
        if quantity <= 0:
            raise InventoryError(f"movement quantity must be positive, got {quantity}")
        movement = Movement(
            id=self._next_id,
            kind=kind,
            sku=sku,
            location=location,
            quantity=quantity,
            at=at,
            reference=reference,
            note=note,
        )
        self._movements.append(movement)
        self._next_id += 1
        return movement

    def for_sku(self, sku: str) -> list[Movement]:
        return [m for m in self._movements if m.sku == sku]

    def between(self, start: dt.datetime, end: dt.datetime) -> list[Movement]:
        return [m for m in self._movements if start <= m.at < end]

    def by_reference(self, reference: str) -> list[Movement]:
        return [m for m in self._movements if m.reference == reference]

    def balance(self, sku: str, location: Optional[str] = None) -> int:
        total = 0
        for movement in self._movements:
            if movement.sku != sku:
                continue
            if location is not None and movement.location != location:
                continue
            total += movement.signed_quantity
        return total


class Catalog:
    """The items the warehouse knows about."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._items: dict[str, Item] = {}
        for item in items:
            self.add(item)

    def add(self, item: Item) -> None:
        if item.sku in self._items:
            raise InventoryError(f"duplicate SKU {item.sku}")
        self._items[item.sku] = item

    def get(self, sku: str) -> Item:
        try:
            return self._items[sku]
        except KeyError:
            raise UnknownSkuError(sku) from None

    def discontinue(self, sku: str) -> Item:
        item = dataclasses.replace(self.get(sku), discontinued=True)
        self._items[sku] = item
        return item

    def __contains__(self, sku: object) -> bool:
        return sku in self._items

    def __iter__(self) -> Iterator[Item]:
        return iter(sorted(self._items.values(), key=lambda item: item.sku))

    def __len__(self) -> int:
        return len(self._items)


class Warehouse:
    """Stock levels per SKU and location, kept consistent with the ledger."""

    def __init__(self, catalog: Catalog, clock: Optional[Clock] = None) -> None:
        self.catalog = catalog
        self.ledger = Ledger()
        self.clock = clock or Clock()
        self._levels: dict[tuple[str, str], StockLevel] = {}
        self._listeners: list[Callable[[Movement], None]] = []

    # -- queries ---------------------------------------------------------

    def level(self, sku: str, location: str) -> StockLevel:
        self.catalog.get(sku)
        Location(location)
        key = (sku, location)
        if key not in self._levels:
            self._levels[key] = StockLevel(sku=sku, location=location)
        return self._levels[key]

    def on_hand(self, sku: str) -> int:
        return sum(level.on_hand for (s, _), level in self._levels.items() if s == sku)

    def available(self, sku: str) -> int:
        return sum(level.available for (s, _), level in self._levels.items() if s == sku)

    def locations_of(self, sku: str) -> list[str]:
        return sorted(
            loc for (s, loc), level in self._levels.items() if s == sku and level.on_hand > 0
        )

    def levels(self) -> list[StockLevel]:
        return sorted(self._levels.values(), key=lambda level: (level.sku, level.location))

    # -- listeners -------------------------------------------------------

    def subscribe(self, listener: Callable[[Movement], None]) -> None:
        self._listeners.append(listener)

    def _notify(self, movement: Movement) -> None:
        for listener in self._listeners:
            try:
                listener(movement)
            except Exception:  # a broken listener must not break stock keeping
                log.exception("listener failed for movement %d", movement.id)

    # -- commands --------------------------------------------------------

    def receive(self, sku: str, location: str, quantity: int, reference: str = "") -> Movement:
        item = self.catalog.get(sku)
        if item.discontinued:
            raise InventoryError(f"{sku} is discontinued and cannot be received")
        level = self.level(sku, location)
        movement = self.ledger.record(
            MovementKind.RECEIPT, sku, location, quantity, self.clock.now(), reference
        )
        level.on_hand += quantity
        self._notify(movement)
        return movement

    def ship(self, sku: str, location: str, quantity: int, reference: str = "") -> Movement:
        level = self.level(sku, location)
        if level.available < quantity:
            raise InsufficientStockError(sku, location, quantity, level.available)
        movement = self.ledger.record(
            MovementKind.SHIPMENT, sku, location, quantity, self.clock.now(), reference
        )
        level.on_hand -= quantity
        self._notify(movement)
        return movement

    def transfer(self, sku: str, source: str, target: str, quantity: int) -> tuple[Movement, Movement]:
        if source == target:
            raise InventoryError("transfer source and target are the same location")
        source_level = self.level(sku, source)
        target_level = self.level(sku, target)
        if source_level.available < quantity:
            raise InsufficientStockError(sku, source, quantity, source_level.available)
        now = self.clock.now()
        reference = f"TR-{len(self.ledger) + 1}"
        out = self.ledger.record(MovementKind.TRANSFER_OUT, sku, source, quantity, now, reference)
        into = self.ledger.record(MovementKind.TRANSFER_IN, sku, target, quantity, now, reference)
        source_level.on_hand -= quantity
        target_level.on_hand += quantity
        self._notify(out)
        self._notify(into)
        return out, into

    def adjust(self, sku: str, location: str, counted: int, note: str = "") -> Optional[Movement]:
        level = self.level(sku, location)
        difference = counted - level.on_hand
        if difference == 0:
            return None
        kind = MovementKind.ADJUSTMENT
        movement = self.ledger.record(
            kind, sku, location, abs(difference), self.clock.now(), note=note or "stock count"
        )
        # An adjustment's sign comes from the difference, not from its kind.
        level.on_hand = counted
        self._notify(movement)
        return movement

    def accept_return(self, sku: str, location: str, quantity: int, reference: str) -> Movement:
        level = self.level(sku, location)
        movement = self.ledger.record(
            MovementKind.RETURN, sku, location, quantity, self.clock.now(), reference
        )
        level.on_hand += quantity
        self._notify(movement)
        return movement

    def reserve(self, sku: str, location: str, quantity: int) -> None:
        level = self.level(sku, location)
        if level.available < quantity:
            raise InsufficientStockError(sku, location, quantity, level.available)
        level.reserved += quantity

    def release(self, sku: str, location: str, quantity: int) -> None:
        level = self.level(sku, location)
        level.reserved = max(0, level.reserved - quantity)


@dataclasses.dataclass(frozen=True)
class OrderLine:
    sku: str
    quantity: int


@dataclasses.dataclass
class Order:
    reference: str
    lines: list[OrderLine]
    created: dt.datetime
    allocations: dict[str, list[tuple[str, int]]] = dataclasses.field(default_factory=dict)
    shipped: bool = False

    def total_quantity(self) -> int:
        return sum(line.quantity for line in self.lines)


class Allocator:
    """Decides which locations an order's lines are picked from."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse

    def plan(self, order: Order) -> dict[str, list[tuple[str, int]]]:
        if len(order.lines) > MAX_LINE_ITEMS:
            raise InventoryError(
                f"order {order.reference} has {len(order.lines)} lines; the limit is {MAX_LINE_ITEMS}"
            )
        plan: dict[str, list[tuple[str, int]]] = {}
        for line in order.lines:
            plan[line.sku] = self._plan_line(line)
        return plan

    def _plan_line(self, line: OrderLine) -> list[tuple[str, int]]:
        remaining = line.quantity
        picks: list[tuple[str, int]] = []
        for location in self._pick_order(line.sku):
            level = self.warehouse.level(line.sku, location)
            take = min(level.available, remaining)
            if take <= 0:
                continue
            picks.append((location, take))
            remaining -= take
            if remaining == 0:
                break
        if remaining > 0:
            raise InsufficientStockError(
                line.sku, "all locations", line.quantity, line.quantity - remaining
            )
        return picks

    def _pick_order(self, sku: str) -> list[str]:
        # Pick from the fullest location first so that small remainders
        # collect in few places.
        locations = self.warehouse.locations_of(sku)
        return sorted(
            locations,
            key=lambda loc: (-self.warehouse.level(sku, loc).available, loc),
        )

    def allocate(self, order: Order) -> None:
        plan = self.plan(order)
        for sku, picks in plan.items():
            for location, quantity in picks:
                self.warehouse.reserve(sku, location, quantity)
        order.allocations = plan

    def ship(self, order: Order) -> list[Movement]:
        if order.shipped:
            raise InventoryError(f"order {order.reference} was already shipped")
        if not order.allocations:
            self.allocate(order)
        movements = []
        for sku, picks in order.allocations.items():
            for location, quantity in picks:
                self.warehouse.release(sku, location, quantity)
                movements.append(self.warehouse.ship(sku, location, quantity, order.reference))
        order.shipped = True
        return movements


@dataclasses.dataclass(frozen=True)
class ReorderSuggestion:
    sku: str
    name: str
    available: int
    reorder_point: int
    quantity: int

    @property
    def cost_cents(self) -> int:
        return 0


class Replenisher:
    """Suggests purchase orders for items that run low."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse

    def suggestions(self) -> list[ReorderSuggestion]:
        result = []
        for item in self.warehouse.catalog:
            if item.discontinued:
                continue
            available = self.warehouse.available(item.sku)
            if available > item.reorder_point:
                continue
            shortfall = item.reorder_point - available
            quantity = max(item.reorder_quantity, shortfall)
            result.append(
                ReorderSuggestion(
                    sku=item.sku,
                    name=item.name,
                    available=available,
                    reorder_point=item.reorder_point,
                    quantity=quantity,
                )
            )
        return result


class Report:
    """Plain-text and CSV reports for the morning meeting."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse

    def stock_rows(self) -> list[tuple[str, str, str, int, int, int]]:
        rows = []
        for level in self.warehouse.levels():
            item = self.warehouse.catalog.get(level.sku)
            rows.append(
                (item.sku, item.name, level.location, level.on_hand, level.reserved, level.available)
            )
        return rows

    def stock_text(self) -> str:
        rows = self.stock_rows()
        if not rows:
            return "no stock\n"
        header = ("SKU", "Name", "Location", "On hand", "Reserved", "Available")
        widths = [len(h) for h in header]
        for row in rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(str(cell)))
        lines = [_format_row(header, widths)]
        lines.append("  ".join("-" * w for w in widths))
        for row in rows:
            lines.append(_format_row(row, widths))
        return "\n".join(lines) + "\n"

    def stock_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["sku", "name", "location", "on_hand", "reserved", "available"])
        for row in self.stock_rows():
            writer.writerow(row)
        return buffer.getvalue()

    def valuation_cents(self) -> int:
        total = 0
        for level in self.warehouse.levels():
            item = self.warehouse.catalog.get(level.sku)
            total += item.unit_cost_cents * level.on_hand
        return total

    def movements_text(self, start: dt.datetime, end: dt.datetime) -> str:
        movements = self.warehouse.ledger.between(start, end)
        if not movements:
            return f"no movements between {start:%Y-%m-%d} and {end:%Y-%m-%d}\n"
        lines = []
        for m in movements:
            lines.append(
                f"{m.at:%Y-%m-%d %H:%M} {m.kind.value:<12} {m.sku:<10} {m.location:<6} "
                f"{m.signed_quantity:>6} {m.reference}"
            )
        return "\n".join(lines) + "\n"

    def daily_summary(self, day: dt.date) -> dict[str, int]:
        start = dt.datetime.combine(day, dt.time.min, tzinfo=dt.timezone.utc)
        end = start + dt.timedelta(days=1)
        summary: dict[str, int] = defaultdict(int)
        for movement in self.warehouse.ledger.between(start, end):
            summary[movement.kind.value] += movement.quantity
        return dict(summary)


def _format_row(row: Sequence[object], widths: Sequence[int]) -> str:
    cells = []
    for i, cell in enumerate(row):
        text = str(cell)
        if isinstance(cell, int):
            cells.append(text.rjust(widths[i]))
        else:
            cells.append(text.ljust(widths[i]))
    return "  ".join(cells).rstrip()


def load_catalog_csv(text: str) -> Catalog:
    """Reads a catalog from CSV with columns sku,name,unit_cost_cents[,reorder_point,reorder_quantity]."""
    catalog = Catalog()
    reader = csv.DictReader(io.StringIO(text))
    for number, row in enumerate(reader, start=2):
        try:
            item = Item(
                sku=row["sku"].strip(),
                name=row["name"].strip(),
                unit_cost_cents=int(row["unit_cost_cents"]),
                reorder_point=int(row.get("reorder_point") or DEFAULT_REORDER_POINT),
                reorder_quantity=int(row.get("reorder_quantity") or DEFAULT_REORDER_QUANTITY),
            )
        except (KeyError, ValueError) as exc:
            raise InventoryError(f"catalog line {number}: {exc}") from exc
        catalog.add(item)
    return catalog


def load_counts_csv(text: str) -> list[tuple[str, str, int]]:
    """Reads a stock count sheet: sku,location,counted."""
    counts = []
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header != ["sku", "location", "counted"]:
        raise InventoryError(f"unexpected count sheet header {header!r}")
    for number, row in enumerate(reader, start=2):
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != 3:
            raise InventoryError(f"count sheet line {number}: expected 3 cells, got {len(row)}")
        sku, location, counted = (cell.strip() for cell in row)
        try:
            counts.append((sku, location, int(counted)))
        except ValueError:
            raise InventoryError(f"count sheet line {number}: {counted!r} is not a number") from None
    return counts


def apply_counts(warehouse: Warehouse, counts: Iterable[tuple[str, str, int]]) -> list[Movement]:
    movements = []
    for sku, location, counted in counts:
        movement = warehouse.adjust(sku, location, counted)
        if movement is not None:
            movements.append(movement)
    return movements


def parse_order_text(reference: str, text: str, now: dt.datetime) -> Order:
    """Parses lines such as "3 x ABC-1234" into an order."""
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        match = re.match(r"^(\d+)\s*[xX]\s*([A-Z]{3}-\d{4,6})$", raw)
        if match is None:
            raise InventoryError(f"order line {number}: cannot read {raw!r}")
        quantity, sku = int(match.group(1)), match.group(2)
        if quantity <= 0:
            raise InventoryError(f"order line {number}: quantity must be positive")
        lines.append(OrderLine(sku=sku, quantity=quantity))
    if not lines:
        raise InventoryError(f"order {reference} has no lines")
    return Order(reference=reference, lines=lines, created=now)


def merge_order_lines(lines: Iterable[OrderLine]) -> list[OrderLine]:
    totals: dict[str, int] = defaultdict(int)
    for line in lines:
        totals[line.sku] += line.quantity
    return [OrderLine(sku=sku, quantity=quantity) for sku, quantity in sorted(totals.items())]


def slow_movers(warehouse: Warehouse, since: dt.datetime, limit: int = 10) -> list[tuple[str, int]]:
    """Returns the SKUs with stock on hand that shipped least since a date."""
    shipped: dict[str, int] = defaultdict(int)
    for movement in warehouse.ledger:
        if movement.kind is MovementKind.SHIPMENT and movement.at >= since:
            shipped[movement.sku] += movement.quantity
    candidates = [
        (item.sku, shipped.get(item.sku, 0))
        for item in warehouse.catalog
        if warehouse.on_hand(item.sku) > 0
    ]
    candidates.sort(key=lambda pair: (pair[1], pair[0]))
    return candidates[:limit]


def check_consistency(warehouse: Warehouse) -> list[str]:
    """Compares stock levels with the ledger and lists every disagreement."""
    problems = []
    for level in warehouse.levels():
        from_ledger = warehouse.ledger.balance(level.sku, level.location)
        if from_ledger != level.on_hand:
            problems.append(
                f"{level.sku} at {level.location}: level says {level.on_hand}, ledger says {from_ledger}"
            )
        if level.reserved > level.on_hand:
            problems.append(
                f"{level.sku} at {level.location}: {level.reserved} reserved but {level.on_hand} on hand"
            )
    return problems


def build_demo_warehouse(clock: Optional[Clock] = None) -> Warehouse:
    catalog = Catalog(
        [
            Item("BOL-1001", "Hex bolt M8", 12, reorder_point=200, reorder_quantity=1000),
            Item("NUT-1001", "Hex nut M8", 4, reorder_point=200, reorder_quantity=1000),
            Item("WSH-2001", "Washer 8mm", 2, reorder_point=500, reorder_quantity=2000),
            Item("BRK-3100", "Shelf bracket", 245),
            Item("PNL-4400", "Side panel 60cm", 1890, reorder_point=5, reorder_quantity=20),
        ]
    )
    warehouse = Warehouse(catalog, clock)
    warehouse.receive("BOL-1001", "A01-1", 800, "PO-1")
    warehouse.receive("NUT-1001", "A01-2", 750, "PO-1")
    warehouse.receive("WSH-2001", "A02-1", 3000, "PO-1")
    warehouse.receive("BRK-3100", "B10-4", 40, "PO-2")
    warehouse.receive("PNL-4400", "C03-1", 12, "PO-3")
    return warehouse


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="warehouse reports")
    parser.add_argument("report", choices=["stock", "csv", "reorder", "check"])
    args = parser.parse_args(argv)
    warehouse = build_demo_warehouse()
    report = Report(warehouse)
    if args.report == "stock":
        print(report.stock_text(), end="")
    elif args.report == "csv":
        print(report.stock_csv(), end="")
    elif args.report == "reorder":
        for suggestion in Replenisher(warehouse).suggestions():
            print(f"{suggestion.sku}: order {suggestion.quantity}")
    elif args.report == "check":
        problems = check_consistency(warehouse)
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
