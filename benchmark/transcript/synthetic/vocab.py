"""Project themes: the fictional codebases a generated session works on.

Each theme gives a domain (entities with typed fields), candidate package
names, an external vendor API and CLI verbs, so that different seeds yield
sessions about visibly different projects rather than renamed copies.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # one of: str, int, float, bool, datetime, date


@dataclass(frozen=True)
class Entity:
    name: str  # snake_case singular
    plural: str
    fields: tuple[Field, ...]

    @property
    def cls(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True)
class Theme:
    key: str
    summary: str  # "a service that ..." used in prose
    packages: tuple[str, ...]
    vendor: str  # external API the client talks to
    entities: tuple[Entity, ...]
    commands: tuple[str, ...]  # CLI sub-commands
    milestone: str  # what the release is about


def _entity(spec: str) -> Entity:
    """Parse ``"invoice/invoices: number:str, amount_cents:int"``."""
    head, _, body = spec.partition(":")
    name, _, plural = head.partition("/")
    fields = []
    for item in body.split(","):
        fname, _, ftype = item.strip().partition(":")
        fields.append(Field(fname, ftype))
    return Entity(name.strip(), plural.strip(), tuple(fields))


def _theme(key, summary, packages, vendor, entities, commands, milestone) -> Theme:
    return Theme(
        key,
        summary,
        tuple(packages),
        vendor,
        tuple(_entity(e) for e in entities),
        tuple(commands),
        milestone,
    )


THEMES: tuple[Theme, ...] = (
    _theme(
        "billing",
        "an invoicing and billing service for small agencies",
        ["ledgerline", "invoicely", "paytrail", "billforge"],
        "PayWave",
        [
            "invoice/invoices: number:str, customer_id:int, amount_cents:int, currency:str, "
            "due_date:date, status:str",
            "customer/customers: email:str, company:str, country:str, credit_limit_cents:int, "
            "created_at:datetime",
            "payment/payments: invoice_id:int, amount_cents:int, method:str, received_at:datetime, "
            "reference:str",
            "refund/refunds: payment_id:int, amount_cents:int, reason:str, approved:bool",
        ],
        ["sync", "reconcile", "export", "remind"],
        "quarterly close",
    ),
    _theme(
        "inventory",
        "a stock tracker for a chain of warehouses",
        ["stockpile", "binwise", "palletron", "shelfsync"],
        "FreightHub",
        [
            "item/items: sku:str, title:str, unit_price:float, reorder_level:int, active:bool",
            "warehouse/warehouses: code:str, city:str, capacity:int, opened_on:date",
            "shipment/shipments: tracking_number:str, warehouse_id:int, carrier:str, "
            "shipped_at:datetime, weight_kg:float",
            "supplier/suppliers: name:str, contact_email:str, lead_time_days:int, rating:float",
        ],
        ["restock", "import", "audit", "forecast"],
        "peak-season",
    ),
    _theme(
        "weather",
        "an ingestion pipeline for weather-station readings",
        ["tidewatch", "skylog", "barometrix", "windvane"],
        "MeteoGrid",
        [
            "station/stations: code:str, latitude:float, longitude:float, elevation_m:int, "
            "commissioned_on:date",
            "reading/readings: station_id:int, temperature_c:float, humidity_pct:float, "
            "pressure_hpa:float, observed_at:datetime",
            "alert/alerts: station_id:int, level:str, message:str, raised_at:datetime, "
            "acknowledged:bool",
            "forecast/forecasts: station_id:int, horizon_hours:int, temperature_c:float, "
            "issued_at:datetime",
        ],
        ["ingest", "backfill", "alerts", "export"],
        "winter storm",
    ),
    _theme(
        "links",
        "a URL shortener with click analytics",
        ["snipurl", "linkroll", "hopjar", "tinyhop"],
        "GeoLookup",
        [
            "link/links: slug:str, target_url:str, owner_id:int, created_at:datetime, active:bool",
            "click/clicks: link_id:int, referrer:str, country:str, clicked_at:datetime",
            "domain/domains: hostname:str, verified:bool, owner_id:int, added_on:date",
            "campaign/campaigns: title:str, budget_cents:int, starts_on:date, ends_on:date",
        ],
        ["shorten", "stats", "purge", "export"],
        "marketing launch",
    ),
    _theme(
        "clinic",
        "an appointment scheduler for physiotherapy clinics",
        ["caresched", "clinicflow", "rebook", "slotwise"],
        "MedNotify",
        [
            "patient/patients: full_name:str, birth_date:date, phone:str, insurer:str",
            "appointment/appointments: patient_id:int, practitioner_id:int, starts_at:datetime, "
            "duration_min:int, status:str",
            "practitioner/practitioners: full_name:str, speciality:str, room_code:str, active:bool",
            "room/rooms: code:str, floor:int, capacity:int, accessible:bool",
        ],
        ["schedule", "remind", "import", "report"],
        "new-clinic opening",
    ),
    _theme(
        "feeds",
        "an RSS and Atom feed aggregator that sends daily digests",
        ["feedmill", "digestive", "rivulet", "newsloom"],
        "MailRelay",
        [
            "feed/feeds: url:str, title:str, etag:str, last_fetched_at:datetime, active:bool",
            "entry/entries: feed_id:int, guid:str, title:str, published_at:datetime, "
            "word_count:int",
            "subscriber/subscribers: email:str, timezone:str, digest_hour:int, confirmed:bool",
            "digest/digests: subscriber_id:int, sent_at:datetime, entry_count:int, opened:bool",
        ],
        ["fetch", "digest", "prune", "import"],
        "digest redesign",
    ),
    _theme(
        "fleet",
        "a telemetry backend for a delivery-van fleet",
        ["vanguard", "fleetpulse", "odometer", "routewise"],
        "TelemaxCloud",
        [
            "vehicle/vehicles: plate:str, model:str, battery_kwh:float, depot_id:int, active:bool",
            "trip/trips: vehicle_id:int, driver_id:int, started_at:datetime, distance_km:float, "
            "stops:int",
            "driver/drivers: full_name:str, licence_class:str, hired_on:date, rating:float",
            "sensor/sensors: vehicle_id:int, kind:str, last_value:float, reported_at:datetime",
        ],
        ["ingest", "replay", "report", "purge"],
        "depot expansion",
    ),
    _theme(
        "library",
        "a catalog and lending system for a public library network",
        ["bookworm", "shelfmark", "lendly", "catalogue"],
        "OpenShelfData",
        [
            "book/books: isbn:str, title:str, author:str, published_year:int, copies:int",
            "member/members: card_number:str, full_name:str, email:str, joined_on:date, "
            "blocked:bool",
            "loan/loans: book_id:int, member_id:int, borrowed_at:datetime, due_on:date, "
            "renewals:int",
            "branch/branches: code:str, city:str, opening_hour:int, closing_hour:int",
        ],
        ["import", "overdue", "renew", "report"],
        "summer reading",
    ),
    _theme(
        "tickets",
        "a ticketing platform for small concert venues",
        ["gigstub", "encoreapi", "boxoffice", "turnstile"],
        "PayPort",
        [
            "event/events: title:str, venue_id:int, starts_at:datetime, capacity:int, "
            "price_cents:int",
            "ticket/tickets: event_id:int, order_id:int, seat:str, scanned:bool",
            "venue/venues: title:str, city:str, capacity:int, timezone:str",
            "order/orders: buyer_email:str, total_cents:int, placed_at:datetime, status:str",
        ],
        ["onsale", "scan", "refund", "export"],
        "festival season",
    ),
    _theme(
        "recipes",
        "a meal-planning API that builds weekly shopping lists",
        ["forkcast", "mealmap", "pantrypal", "souschef"],
        "GroceryLink",
        [
            "recipe/recipes: title:str, servings:int, prep_minutes:int, calories:int, "
            "published:bool",
            "ingredient/ingredients: title:str, unit:str, grams_per_unit:float, perishable:bool",
            "pantry/pantries: owner_id:int, label:str, updated_at:datetime, item_count:int",
            "plan/plans: owner_id:int, week_start:date, meals:int, budget_cents:int",
        ],
        ["plan", "import", "shop", "export"],
        "mobile app beta",
    ),
    _theme(
        "helpdesk",
        "a helpdesk backend that routes customer inquiries to queues",
        ["deskmate", "triagely", "supportive", "caseflow"],
        "ChatBridge",
        [
            "inquiry/inquiries: subject:str, requester_email:str, priority:int, "
            "opened_at:datetime, "
            "status:str",
            "queue/queues: title:str, sla_hours:int, team:str, active:bool",
            "operator/operators: full_name:str, email:str, max_open:int, on_shift:bool",
            "reply/replies: inquiry_id:int, author_id:int, body:str, sent_at:datetime",
        ],
        ["route", "escalate", "import", "report"],
        "24/7 coverage",
    ),
    _theme(
        "energy",
        "a smart-meter ingestion and tariff billing service",
        ["wattson", "gridledger", "meterly", "kilowise"],
        "GridSense",
        [
            "meter/meters: serial:str, site_id:int, installed_on:date, phase_count:int, "
            "active:bool",
            "reading/readings: meter_id:int, kwh:float, recorded_at:datetime, estimated:bool",
            "tariff/tariffs: code:str, rate_per_kwh:float, standing_charge:float, valid_from:date",
            "statement/statements: site_id:int, period_start:date, total_kwh:float, "
            "amount_cents:int",
        ],
        ["ingest", "bill", "validate", "export"],
        "tariff change",
    ),
    _theme(
        "payroll",
        "a payroll service that produces monthly payslips",
        ["paydayly", "wagewise", "slipstream", "salaria"],
        "TaxGate",
        [
            "employee/employees: staff_number:str, full_name:str, grade:str, hired_on:date, "
            "part_time:bool",
            "payslip/payslips: employee_id:int, period:str, gross_cents:int, net_cents:int, "
            "issued_at:datetime",
            "timesheet/timesheets: employee_id:int, week_start:date, hours:float, approved:bool",
            "deduction/deductions: employee_id:int, code:str, amount_cents:int, recurring:bool",
        ],
        ["run", "export", "approve", "audit"],
        "year-end",
    ),
    _theme(
        "observability",
        "a log analytics pipeline that turns app logs into dashboards",
        ["logpipe", "tracehound", "metricly", "signalbox"],
        "StreamStash",
        [
            "source/sources: title:str, host:str, retention_days:int, active:bool",
            "event/events: source_id:int, level:str, message:str, emitted_at:datetime, "
            "latency_ms:float",
            "dashboard/dashboards: title:str, owner_id:int, refresh_seconds:int, public:bool",
            "monitor/monitors: dashboard_id:int, query:str, threshold:float, triggered_at:datetime",
        ],
        ["ingest", "compact", "replay", "report"],
        "multi-tenant rollout",
    ),
)

AGENT_NAMES = ("Forge", "Patchwork", "Tessellate", "Keel", "Lathe", "Quill")
PYTHON_VERSIONS = ("3.11.9", "3.12.4", "3.11.7", "3.12.2")
DEVELOPERS = ("Priya", "Marcus", "Elena", "Tomasz", "Aiko", "Dmitri", "Fatima", "Jonas")
