"""The words of each feature request (see :mod:`tables` for the format).

Per feature: ``title`` (the user's opening list), ``request`` (the user's message), the
first version's bug (``bug_test`` fails with ``bug_error``; ``bug_change`` fixes what
``bug_diagnosis`` finds), the ``wiring`` edit, the decision (``topic``, ``choice``,
``alternative``, ``rationale``, ``against``), the noun for follow-ups (``thing``) and the
files read first (``read``).
"""

from __future__ import annotations

from benchmark.transcript.synthetic.tables import parse

FEATURE_TEXT = parse(
    """
[cache]
title: add a response cache in front of the {vendor} client
request: {vendor} started rate-limiting us and most `fetch_{entity}` calls ask for the same few
  {plural}. Can you put a cache in front of the client? Entries can live for {ttl} seconds.
bug_test: test_entry_expires_exactly_at_ttl
bug_error: assert 1 == 2
bug_change: entries now expire at exactly the TTL (>= instead of >)
bug_diagnosis: The expiry check uses `>`, so an entry exactly `ttl` seconds old is still served.
wiring: fetch_{entity} now goes through the read-through cache
topic: cache backend
choice: a Redis-backed cache
alternative: an in-process LRU
alternative: memcached
rationale: the API runs on {workers} workers and they must share invalidations
against: an in-process LRU gives each of the {workers} workers its own copy, so an invalidation on
  one worker leaves stale {plural} on the others
thing: the response cache
read: src/{pkg}/client.py
read: src/{pkg}/config.py

[retry]
title: retry {vendor} calls on 429 and 5xx responses
request: Last night's sync died on a single 503 from {vendor}. Can you add retries with backoff
  for throttling and server errors?
bug_test: test_backoff_starts_at_base_delay
bug_error: assert {doubled} == {base}
bug_change: backoff_seconds counts attempts from 1, so the first retry waits the base delay
bug_diagnosis: `backoff_seconds` treats `attempt` as 0-based, so the first retry already waits
  twice the base delay.
wiring: _request is wrapped with the retry_upstream policy
topic: retry strategy
choice: exponential backoff with jitter via tenacity
alternative: a fixed 2-second sleep between attempts
alternative: retrying inside httpx's transport
rationale: {vendor} rate-limits bursts, and fixed retries from every worker would hit the limit
  again at the same moment
against: httpx transport retries only cover connection errors, not 429 or 503 responses
thing: the retry policy
read: src/{pkg}/client.py
read: src/{pkg}/exceptions.py

[export]
title: add a CSV export of {plural}
request: Finance wants a CSV export of all {plural} they can open in a spreadsheet. Can you add
  an `export-csv` command? A JSON-lines variant for the data team would be nice too.
bug_test: test_export_returns_row_count
bug_error: assert 3 == 2
bug_change: export_csv no longer counts the header row
bug_diagnosis: `written` starts at 1, so the header row is counted as data.
wiring: added the export-csv command
topic: export memory use
choice: streaming rows straight to the CSV writer
alternative: building a pandas DataFrame first
alternative: loading every row into a list
rationale: the largest tenant has about {largest}k {plural} and the export worker has 512 MB
against: pandas would add a large dependency for a single export and hold everything in memory
thing: the CSV export
read: src/{pkg}/models.py
read: src/{pkg}/cli.py

[ratelimit]
title: rate-limit the public API per client
request: One integration partner is hammering the API and slowing it for everyone. Can you add
  per-client rate limiting, around {rate} requests per second?
bug_test: test_bucket_never_exceeds_capacity
bug_error: assert {burst} <= {rate}
bug_change: refill is capped at the bucket capacity
bug_diagnosis: `_refill` adds tokens without capping at `capacity`, so an idle client banks an
  unlimited burst.
wiring: added the per-client rate-limit middleware
topic: rate limiting algorithm
choice: a token bucket per API client
alternative: a fixed one-minute window counter
alternative: nginx limit_req in front of the app
rationale: it allows short bursts from the mobile app while capping the sustained rate
against: a fixed window lets a client send twice the limit across a window boundary
thing: per-client rate limiting
read: src/{pkg}/api.py
read: src/{pkg}/config.py

[audit]
title: keep an audit trail of {entity} changes
request: Support keeps asking who changed a {entity} and when. Can you add an audit trail?
  Field-level changes are enough.
bug_test: test_diff_only_lists_changed_fields
bug_error: assert {both} == ['{f2}']
bug_change: diff compares values instead of listing every shared key
bug_diagnosis: `diff` lists every key present on both sides without comparing the values.
wiring: create_{entity} records an audit event
topic: where audit events live
choice: an append-only audit_events table
alternative: JSON lines files on disk
alternative: log lines on stdout only
rationale: support needs to query who changed a {entity} from the admin screen, and the database
  is already backed up
against: files on disk disappear whenever the container is replaced
thing: the audit trail
read: src/{pkg}/services/{entity}_service.py
read: src/{pkg}/db.py

[pagination]
title: switch GET /{plural} to cursor pagination
request: Clients paging through /{plural} see duplicates while imports run. Can you move the list
  endpoint to cursor-based pagination?
bug_test: test_cursor_round_trips
bug_error: ValueError: invalid literal for int() with base 10: '2024-05-01T10:00:00+00:00'
bug_change: decode_cursor returns (created_at, id) in the right order
bug_diagnosis: `decode_cursor` swaps the two parts: it calls int() on the timestamp.
wiring: added the cursor-paginated GET /{plural}
topic: pagination style
choice: cursor-based pagination on (created_at, id)
alternative: offset/limit pagination
alternative: page numbers with a snapshot table
rationale: offsets skip or repeat rows when new {plural} arrive while a client is paging
against: offset pages shift under concurrent inserts and get slow on deep pages
thing: cursor pagination
read: src/{pkg}/api.py
read: src/{pkg}/services/{entity}_service.py

[health]
title: add a /health endpoint for the load balancer
request: Ops is moving us behind a new load balancer and needs a health endpoint that fails when
  an instance can't reach its database.
bug_test: test_health_reports_database_down
bug_error: KeyError: 'status'
bug_change: the failure branch reports status=down like the success branch
bug_diagnosis: The failure branch returns an `ok` key instead of `status`, so callers get a
  KeyError.
wiring: added GET /health
topic: what the health check covers
choice: a /health endpoint that checks only the database
alternative: checking the {vendor} API too
alternative: a static 200 response
rationale: the load balancer should only drain instances that lost their own database
against: checking {vendor} would take every instance out of rotation during their outages
thing: the health endpoint
read: src/{pkg}/api.py
read: src/{pkg}/db.py
"""
)
