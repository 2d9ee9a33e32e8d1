"""Dependency facts: versions that broke real projects, used for version-pin episodes.

Each entry pairs a working version with the release that broke it, the error
that release raises and the snippet of project code that trips over it. The
snippet is part of the module from the start of the session (see
``Project.pins``), so reading the module shows the line the traceback names. The facts
are in ``data/pins.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass

import benchmark.transcript.synthetic.resources as resources


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


_DATA: dict = resources.yaml_data("pins.yaml")
IMPORT_TIME = frozenset(_DATA["import_time"])
PINS: tuple[Pin, ...] = tuple(
    Pin(**{**pin, "imports": tuple(pin["imports"])}) for pin in _DATA["pins"]
)


@dataclass(frozen=True)
class NewDependency:
    package: str  # pip name
    module: str  # import name
    version: str  # what pip installs


NEW_DEPENDENCIES: dict[str, NewDependency] = {
    feature: NewDependency(**dep) for feature, dep in _DATA["new_dependencies"].items()
}
