"""The words of each bug scenario and of dependency upgrades (see :mod:`tables` for the format).

Per scenario kind: ``title`` (the user's opening list; names ``hint``), ``once`` (a kind
that can happen only once per project), ``report`` (the user's message), the failure's
``purpose``, ``error_type``, ``change`` and ``diagnosis`` (``near_*`` words the second,
near-miss failure apart), where the agent looks (``related``, ``sibling``, ``grep`` under
``grep_in``), the decision (``topic``, ``choice``, ``alternative``, ``rationale``,
``against``) and the nouns for follow-up tasks (``thing``, ``behaviour``). ``path`` is the
file that gets fixed and ``module`` its dotted name.
"""

from __future__ import annotations

from benchmark.transcript.synthetic.tables import parse

STORIES = parse(
    """
[constant]
title: apply the new limits from the spec
report: {developer} changed the spec for {module}: I've added tests for the new limits at the
  bottom of {test_path}. Can you make the code match? Start with {test}.
purpose: run the new {const} test
error_type: AssertionError
change: {verb} {const} from {old} to {new}
diagnosis: `{const}` in {path} is still {old}; the new test expects {new}.
related: {test_path}
grep: {c1}
topic: how to apply the new {c1}
choice: changing {c1} in {module} itself
alternative: overriding {c1} per environment through Settings
alternative: keeping {a1} and adjusting the new test
rationale: the spec applies to every environment and nothing reads {c1} from the environment today
against: a per-environment override adds a knob nobody asked for and lets staging drift from
  production
thing: the new {c1} value
behaviour: asking for {c1} = {b1}

[key_error]
title: fix the crash when importing the latest {vendor} export
report: `{cmd}` crashes on last night's {vendor} export (about {count} {plural}). Can you figure
  out why? The command I ran is `{command}`.
purpose: dry-run the {cmd} command
error_type: KeyError
change: parse_{entity}_payload now defaults a missing `{field}` to {default}
diagnosis: `parse_{entity}_payload` indexes `payload["{field}"]` directly, and this {vendor}
  export has {plural} without the `{field}` key.
near_diagnosis: `parse_{entity}_payload` indexes `payload["{field}"]` directly, and another record
  in this {vendor} export has {plural} without the `{field}` key.
related: src/{pkg}/cli.py
related: {test_path}
grep: parse_{entity}_payload
topic: missing `{f1}` in {vendor} payloads
choice: defaulting a missing `{f1}` instead of rejecting the record
alternative: failing the whole import
alternative: validating every payload with a strict schema first
rationale: {vendor} omits optional fields from v2 payloads and one incomplete {entity} should
  not abort a batch of {count}
against: failing the import would throw away the other {others} {plural} in the batch
thing: the missing-`{f1}` fallback
behaviour: omitting `{f1}` from {plural}

[type_kwarg]
title: support the options the new nightly job passes
report: The nightly job is going to call `{qual}` with `{k1}`, so I added a test for it in
  {test_path} ({test}). It fails right away. Can you add support?
purpose: run the new {kw} test
error_type: TypeError
change: added a `{kw}` keyword argument to {qual}
diagnosis: `{qual}` has no `{kw}` parameter yet; the new test passes one.
related: {test_path}
related: src/{pkg}/tasks.py
grep: {func}(
topic: how {qual} takes {k1}
choice: adding `{k1}` as a keyword argument with a default of {d1}
alternative: wrapping {func} with functools.partial at the call site
alternative: reading the value from a module-level global
rationale: existing callers keep working unchanged and the nightly job can pass its own value
against: a partial at the call site would hide the option from every other caller of {module}
thing: the `{k1}` option of {qual}
behaviour: needing a custom `{k1}` for nightly runs

[settings_attr]
title: fix the `{hint}` command on staging
report: `{command}` fails on staging since {developer} merged the logging change in cli.py this
  morning. Can you take a look?
purpose: dry-run {cmd}
error_type: AttributeError
change: added `{name}` to Settings
diagnosis: cli.py now reads `settings.{name}`, but Settings in {path} has no such field.
near_diagnosis: The debug line also reads `settings.{name}`, but Settings in {path} has no such
  field.
related: src/{pkg}/cli.py
grep: settings.{n1}
topic: where `{n1}` lives
choice: adding `{n1}` to Settings with a default of {d1}
alternative: reading os.environ directly in cli.py
alternative: a separate config file for the command
rationale: every other knob goes through load_settings() and the tests build Settings objects
  directly
against: reading os.environ in cli.py would bypass the {pkg_upper}_ prefix and the test fixtures
thing: the `{n1}` setting
behaviour: needing `{n1}` on staging

[no_table]
title: get tests/test_repositories.py green again
once: yes
report: {developer} says {test_path} went red after the fixtures switched to a fresh in-memory
  engine per test. Can you get it green again?
purpose: run the repository tests
error_type: OperationalError
change: the engine fixture now creates all tables with Base.metadata.create_all
diagnosis: Every test in {test_path} fails the same way: the in-memory engine from
  tests/conftest.py starts empty and nothing creates the tables.
related: {test_path}
related: src/{pkg}/db.py
sibling: src/{pkg}/db_utils.py
grep: create_engine
grep_in: tests
topic: how test databases get their schema
choice: creating the tables in the `engine` fixture
alternative: running the Alembic migrations before every test
alternative: a shared file-based SQLite database
rationale: an in-memory database per test keeps the suite fast and isolated, and the models are
  the schema source in tests
against: running migrations for every test would add seconds to each one
thing: the table setup in the engine fixture
behaviour: switching fixtures again

[zero_div]
title: fix the weekly report crash for tenants without data
once: yes
report: The weekly report crashed for the new tenant that has no data yet. I added {test} to
  {test_path} to reproduce it.
purpose: run the empty-report test
error_type: ZeroDivisionError
change: {func} returns 0.0 for an empty list instead of dividing by zero
diagnosis: `{func}` divides by `len({items})` without checking for an empty list.
related: {test_path}
related: src/{pkg}/tasks.py
grep: / len(
topic: averages over empty data
choice: returning 0.0 for an empty list
alternative: raising ValueError
alternative: returning NaN
rationale: an empty tenant is a normal state and the dashboard renders 0.0 without special cases
against: raising would make every caller add the same try/except for a normal case
thing: empty-tenant reports
behaviour: creating tenants before their first import

[lint_unused]
title: get `ruff check` clean for CI
once: yes
report: The lint step of CI is red on main. Can you get `ruff check` clean?
purpose: lint the code base
error_type: F401
change: removed the unused `import {mod}`
diagnosis: Only one finding: `{mod}` is imported in cli.py but never used.
related: pyproject.toml
sibling: src/{pkg}/api.py
grep: {mod}.
topic: how to clear the lint failure
choice: deleting the unused import
alternative: adding `# noqa: F401`
alternative: ignoring F401 for cli.py in pyproject.toml
rationale: the import is dead code and a suppression would hide the next real unused import
against: a noqa comment keeps dead code around and teaches people to silence the linter
thing: the lint cleanup
behaviour: running ruff locally before pushing

[json_empty]
title: fix the nightly {first_command} on days without changes
once: yes
report: The nightly `{cmd}` failed on Sunday, when nothing changed upstream. You can reproduce it
  with `{command}`.
purpose: run {cmd} for a quiet day
error_type: JSONDecodeError
change: _request treats an empty response body as an empty page
diagnosis: {vendor} answered 200 with an empty body (nothing changed since that date) and
  `_request` calls `response.json()` unconditionally.
related: src/{pkg}/tasks.py
related: {test_path}
sibling: src/{pkg}/config.py
grep: response.json()
topic: empty {vendor} responses
choice: treating an empty 200 body as an empty page
alternative: retrying the request
alternative: raising UpstreamError
rationale: {vendor} documents an empty 200 response when nothing changed since the cursor
against: retrying would fetch the same empty body three times and slow the job down
thing: empty upstream responses
behaviour: sending empty 200 bodies

[date_format]
title: accept timestamps in CSV date columns
once: yes
report: CSV imports reject rows from the new export: the date columns now carry full timestamps.
  I added {test} and {test2} to {test_path}.
purpose: run the new date parsing test
error_type: ValueError
change: parse_date parses the first ten characters with date.fromisoformat
near_change: parse_date also accepts slash-separated dates
diagnosis: `parse_date` only accepts exactly YYYY-MM-DD
near_diagnosis: Slash-separated dates from the older export still fail after the first fix.
related: {test_path}
grep: parse_date(
topic: date parsing in imports
choice: parsing the first ten characters with date.fromisoformat
alternative: python-dateutil's parser
alternative: trying a list of formats in a loop
rationale: the export mixes plain dates and full timestamps and imports only need the date part
against: dateutil would also accept ambiguous day-first dates like 03/04 without complaint
thing: timestamp support in parse_date
behaviour: changing the export date format

[mypy_union]
title: get mypy clean on the services
once: yes
report: mypy is now part of CI and it complains about {path}. Can you sort it out without
  sprinkling `type: ignore`?
purpose: type-check the services
error_type: return-value
change: get_{entity} checks the repository result with `is None` directly
diagnosis: {cls}Repository.get returns `{cls} | None` and get_{entity} keeps the check in a
  separate `found` flag; mypy does not narrow `{entity}` through it, so it still sees `None` in the
  return.
related: src/{pkg}/repositories/{entity}_repository.py
sibling: src/{pkg}/repositories/{entity}_repository.py
grep: def get(self, {entity}_id
topic: typing of repository lookups
choice: narrowing with `is None` in the service
alternative: changing the repository to raise
alternative: a typing.cast in get
rationale: the repository contract (None for a missing row) is used by the importers too
against: changing the repository would touch every importer that relies on the None return
thing: the mypy cleanup in the services
behaviour: adding mypy to CI

[schema_422]
title: fix the 422 responses from the mobile app
report: POST /{plural} returns 422 for the mobile app since it stopped sending `{f1}`. I added
  {test} to {test_path}.
purpose: run the POST /{plural} test
error_type: AssertionError
change: gave `{field}` a default in {cls}Create
diagnosis: {cls}Create declares `{field}` without a default, so pydantic rejects the request
  with 422.
related: {test_path}
related: src/{pkg}/api.py
sibling: src/{pkg}/models.py
grep: {cls}Create
topic: optional fields in {cls}Create
choice: giving `{f1}` a default in {cls}Create
alternative: requiring the mobile app to send it
alternative: a custom validator that fills it in
rationale: older app versions omit it and we can't force an update before the {milestone} release
against: most users take weeks to update the app, so the 422s would continue meanwhile
thing: the `{f1}` default in {cls}Create
behaviour: omitting `{f1}` in the app

[integrity]
title: make duplicate {vendor} webhook deliveries harmless
once: yes
report: {vendor} retries webhook deliveries, and the second delivery of a {entity} fails with an
  IntegrityError. I added {test} to {test_path}.
purpose: run the duplicate delivery test
error_type: IntegrityError
change: {cls}Repository.add returns the existing row for a duplicate {field}
diagnosis: The second insert with the same `{field}` violates the unique index on {plural}.
related: {test_path}
related: src/{pkg}/db.py
sibling: src/{pkg}/services/{entity}_service.py
grep: {cls}Row.from_model
topic: duplicate {vendor} deliveries
choice: making `add` idempotent on `{field}`
alternative: catching IntegrityError in the webhook handler
alternative: deleting duplicates in a nightly job
rationale: {vendor} retries deliveries by design, so a duplicate is expected rather than
  exceptional
against: catching IntegrityError leaves the session in a failed state and hides real constraint
  bugs
thing: idempotent {entity} inserts
behaviour: retrying webhook deliveries

[upgrade]
topic: the {package} {bad} upgrade
choice: pinning {package} to {good} for now
alternative: porting {used_in}.py to {package} {bad} right away
alternative: patching around the {package} {bad} break locally
rationale: the port deserves its own reviewed change after the {milestone} release
against: porting now would mix a dependency migration into a release that is already busy
"""
)
