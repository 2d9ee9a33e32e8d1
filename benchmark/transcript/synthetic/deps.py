"""Dependency facts: versions that broke real projects, used for version-pin episodes.

Each entry pairs a working version with the release that broke it, the error
that release raises and the snippet of project code that trips over it. The
snippet is part of the module from the start of the session (see
``Project.pins``), so reading the module shows the line the traceback names.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pin:
    package: str  # pip name
    good: str  # version we pin to
    bad: str  # version that broke us (the distractor)
    reason: str  # clause after "because"
    error: str  # exact last line the bad version raises; ``{site}`` is site-packages
    used_in: str  # module (relative to the package) that hits the break
    imports: tuple[str, ...]  # import lines the snippet needs
    snippet: str  # a function of ours; ``{pkg}`` is the package name
    usage: str  # the line of the snippet that fails

    @property
    def import_time(self) -> bool:
        """The break shows while importing our module, not when a function runs."""
        return self.package in IMPORT_TIME


IMPORT_TIME = frozenset(
    {"jinja2", "markupsafe", "urllib3", "protobuf", "tenacity", "marshmallow", "werkzeug"}
)


def _pin(package, good, bad, reason, error, used_in, imports, snippet, usage) -> Pin:
    return Pin(package, good, bad, reason, error, used_in, tuple(imports), snippet, usage)


PINS: tuple[Pin, ...] = (
    _pin(
        "httpx",
        "0.27.2",
        "0.28.0",
        "0.28.0 removed the `proxies` argument that our legacy export client still passes",
        "TypeError: Client.__init__() got an unexpected keyword argument 'proxies'",
        "client",
        [],
        "def make_export_client(settings: Settings) -> httpx.Client:\n"
        '    """Client for the legacy export endpoint, which still goes through the office '
        'proxy."""\n'
        '    return httpx.Client(proxies=settings.api_base_url.replace("/v2", "/proxy"), '
        "timeout=60.0)\n",
        'return httpx.Client(proxies=settings.api_base_url.replace("/v2", "/proxy"), timeout=60.0)',
    ),
    _pin(
        "numpy",
        "1.26.4",
        "2.0.0",
        "2.0.0 removed the `np.float_` alias that the report code still uses",
        "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` "
        "instead.",
        "reports",
        ["import numpy as np"],
        "def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:\n"
        '    """Weighted mean for the trend tile; numpy keeps it fast for large tenants."""\n'
        "    w = np.asarray(weights, dtype=np.float_)\n"
        "    return float(np.average(np.asarray(values), weights=w))\n",
        "w = np.asarray(weights, dtype=np.float_)",
    ),
    _pin(
        "jinja2",
        "3.0.3",
        "3.1.0",
        "3.1.0 removed `jinja2.Markup`, which the e-mail templates import",
        "ImportError: cannot import name 'Markup' from 'jinja2' ({site}/jinja2/__init__.py)",
        "notifications",
        ["from jinja2 import Environment, Markup"],
        "def render_html(template: str, **values: str) -> str:\n"
        '    """HTML variant of the reminder; values are escaped unless wrapped in Markup."""\n'
        "    return Environment(autoescape=True).from_string(template).render(**values)\n",
        "from jinja2 import Environment, Markup",
    ),
    _pin(
        "markupsafe",
        "2.0.1",
        "2.1.0",
        "2.1.0 dropped `soft_unicode`, which the Jinja2 3.0 we pin still imports",
        "ImportError: cannot import name 'soft_unicode' from 'markupsafe' "
        "({site}/markupsafe/__init__.py)",
        "notifications",
        ["from jinja2 import Environment"],
        "def render_text(template: str, **values: str) -> str:\n"
        '    """Plain-text reminder rendered with the same engine as the HTML one."""\n'
        "    return Environment().from_string(template).render(**values)\n",
        "from jinja2 import Environment",
    ),
    _pin(
        "pyyaml",
        "5.4.1",
        "6.0.1",
        "6.0 made the `Loader` argument of `yaml.load()` mandatory and the settings loader "
        "still calls it without one",
        "TypeError: load() missing 1 required positional argument: 'Loader'",
        "config",
        ["import yaml"],
        "def load_yaml_defaults(path: str) -> dict[str, object]:\n"
        '    """Defaults from config/settings.yaml for local runs."""\n'
        '    with open(path, encoding="utf-8") as handle:\n'
        "        return yaml.load(handle) or {}\n",
        "return yaml.load(handle) or {}",
    ),
    _pin(
        "urllib3",
        "1.26.19",
        "2.0.7",
        "urllib3 2.x needs OpenSSL 1.1.1+ and the CI base image still ships OpenSSL 1.0.2",
        "ImportError: urllib3 v2.0 only supports OpenSSL 1.1.1+, currently the 'ssl' module is "
        "compiled with 'OpenSSL 1.0.2k-fips  26 Jan 2017'",
        "client",
        ["import requests"],
        "def download_export(url: str, target: str) -> int:\n"
        '    """Large export files come from a signed URL; requests streams them to disk."""\n'
        '    with requests.get(url, stream=True, timeout=120) as response, open(target, "wb") as '
        "out:\n"
        "        return sum(out.write(chunk) for chunk in response.iter_content(1 << 16))\n",
        "import requests",
    ),
    _pin(
        "protobuf",
        "3.20.3",
        "4.21.0",
        "4.21.0 refuses the generated `_pb2` modules vendored from the upstream SDK",
        "TypeError: Descriptors cannot be created directly.",
        "client",
        ["from {pkg}.vendor import events_pb2"],
        "def decode_event(blob: bytes) -> dict[str, object]:\n"
        '    """Webhook bodies arrive as protobuf; we only need a dict."""\n'
        "    event = events_pb2.Event()\n    event.ParseFromString(blob)\n"
        "    return {field.name: value for field, value in event.ListFields()}\n",
        "from {pkg}.vendor import events_pb2",
    ),
    _pin(
        "tenacity",
        "8.3.0",
        "8.4.0",
        "8.4.0 was published without the `tenacity.asyncio` subpackage",
        "ModuleNotFoundError: No module named 'tenacity.asyncio'",
        "tasks",
        ["from tenacity import retry, stop_after_attempt"],
        "@retry(stop=stop_after_attempt(3), reraise=True)\n"
        "def ping_scheduler(url: str) -> int:\n"
        '    """Heartbeat to the scheduler; retried because it restarts during deploys."""\n'
        "    return len(url)\n",
        "from tenacity import retry, stop_after_attempt",
    ),
    _pin(
        "importlib-metadata",
        "4.13.0",
        "5.0.0",
        "5.0.0 removed the dict-style `entry_points().get()` our plugin loader uses",
        "AttributeError: 'EntryPoints' object has no attribute 'get'",
        "tasks",
        ["from importlib_metadata import entry_points"],
        "def load_exporters() -> list[object]:\n"
        '    """Exporter plugins registered by other packages."""\n'
        '    plugins = entry_points().get("{pkg}.exporters", [])\n'
        "    return [plugin.load() for plugin in plugins]\n",
        'plugins = entry_points().get("{pkg}.exporters", [])',
    ),
    _pin(
        "marshmallow",
        "3.21.3",
        "4.0.0",
        "4.0.0 removed the `missing=` argument that the legacy export schema passes to fields",
        "TypeError: Field.__init__() got an unexpected keyword argument 'missing'",
        "schemas",
        ["from marshmallow import Schema, fields"],
        "class LegacyExportSchema(Schema):\n"
        '    """Shape of the v1 export, still used by the finance spreadsheet."""\n\n'
        "    id = fields.Integer(required=True)\n"
        '    status = fields.String(missing="pending")\n',
        'status = fields.String(missing="pending")',
    ),
    _pin(
        "werkzeug",
        "2.3.8",
        "3.0.0",
        "3.0.0 removed `werkzeug.urls.url_quote`, which the webhook signer imports",
        "ImportError: cannot import name 'url_quote' from 'werkzeug.urls' "
        "({site}/werkzeug/urls.py)",
        "notifications",
        ["from werkzeug.urls import url_quote"],
        "def unsubscribe_link(base_url: str, email: str) -> str:\n"
        '    """Link in every reminder footer."""\n'
        '    return f"{base_url}/unsubscribe?email={url_quote(email)}"\n',
        "from werkzeug.urls import url_quote",
    ),
    _pin(
        "pillow",
        "9.5.0",
        "10.0.0",
        "10.0.0 removed `Image.ANTIALIAS`, which the report thumbnails use",
        "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
        "reports",
        ["from PIL import Image"],
        "def thumbnail(path: str, target: str) -> str:\n"
        '    """Small chart preview for the weekly e-mail."""\n'
        "    image = Image.open(path)\n"
        "    image.resize((320, 200), Image.ANTIALIAS).save(target)\n"
        "    return target\n",
        "image.resize((320, 200), Image.ANTIALIAS).save(target)",
    ),
    _pin(
        "pyjwt",
        "1.7.1",
        "2.0.0",
        "2.0.0 made `jwt.encode()` return str instead of bytes and the token helper still "
        "calls `.decode()` on it",
        "AttributeError: 'str' object has no attribute 'decode'",
        "api",
        ["import jwt"],
        "def issue_token(subject: str, signing_key: str) -> str:\n"
        '    """Short-lived token for the admin screen."""\n'
        '    return jwt.encode({"sub": subject}, signing_key, algorithm="HS256").decode()\n',
        'return jwt.encode({"sub": subject}, signing_key, algorithm="HS256").decode()',
    ),
    _pin(
        "matplotlib",
        "3.5.3",
        "3.6.0",
        "3.6.0 renamed the seaborn styles and the weekly chart still asks for `seaborn-darkgrid`",
        "OSError: 'seaborn-darkgrid' is not a valid package style, path of style file, URL of "
        "style file, or library style name (library styles are listed in `style.available`)",
        "reports",
        ["import matplotlib.pyplot as plt"],
        "def weekly_chart(values: Sequence[float], target: str) -> str:\n"
        '    """Bar chart attached to the weekly report."""\n'
        '    plt.style.use("seaborn-darkgrid")\n'
        "    plt.bar(range(len(values)), values)\n    plt.savefig(target)\n    return target\n",
        'plt.style.use("seaborn-darkgrid")',
    ),
)


@dataclass(frozen=True)
class NewDependency:
    package: str  # pip name
    module: str  # import name
    version: str  # what pip installs


NEW_DEPENDENCIES: dict[str, NewDependency] = {
    "cache": NewDependency("cachetools", "cachetools", "5.5.0"),
    "retry": NewDependency("tenacity", "tenacity", "8.5.0"),
    "export": NewDependency("orjson", "orjson", "3.10.7"),
}
