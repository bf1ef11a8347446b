"""Strategies registered by Pulsar's names.

One registry per kind. A strategy is looked up by its short class name (``ThresholdShedder``) or its
fully qualified class name (``org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder``), which is
how ``loadBalancerLoadSheddingStrategy`` names it. Unknown names are usage errors that suggest the
closest registered name. Adding a strategy is one module that registers itself, listed by name
in :mod:`lbctl.strategies.builtin`, plus its test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Generic, TypeVar

from lbctl.config import closest
from lbctl.errors import UsageError
from lbctl.strategies.base import PlacementStrategy, SheddingStrategy

if TYPE_CHECKING:  # the split algorithms' module registers itself here
    from lbctl.strategies.split.base import SplitAlgorithm

T = TypeVar("T")


class Registry(Generic[T]):
    """Strategies of one kind, by Pulsar's short class name, with the settings each reads.

    Each module registers itself when imported. :mod:`lbctl.strategies.builtin` declares the
    built-in ones by name and module (import the registries from there); a declared strategy's
    module is imported the first time that strategy is resolved, created or asked what it reads,
    so a command that runs one shedder and one placement does not import the others (they were a
    tenth of a small ``recommend``'s start-up). Listing the names imports nothing.
    """

    def __init__(self, kind: str, package: str):
        self.kind = kind
        self.package = package  # Java package of the classes, for fully qualified names
        self._factories: dict[str, Callable[[], T]] = {}
        self._packages: dict[str, str] = {}  # names registered from another Java package
        self._reads: dict[str, tuple[str, ...]] = {}
        self._modules: dict[str, str] = {}  # declared, by name: the module that registers it

    def declare(self, modules: Mapping[str, str]) -> None:
        """Strategies by name → the module that registers each, imported when first needed."""
        self._modules.update(modules)

    def register(
        self, name: str, package: str | None = None, *, reads: tuple[str, ...] = ()
    ) -> Callable[[Callable[[], T]], Callable[[], T]]:
        """Register ``name``; ``package`` when its class is not in the registry's package
        (``TransferShedder`` lives in ``…loadbalance.extensions.scheduler``); ``reads``: the
        load-balancer settings the strategy reads (checked by the contract tests)."""

        def deco(factory: Callable[[], T]) -> Callable[[], T]:
            self._factories[name] = factory
            if package is not None:
                self._packages[name] = package
            self._reads[name] = reads
            return factory

        return deco

    def names(self) -> list[str]:
        """The declared names, then any registered without a declaration (no import)."""
        return list(dict.fromkeys([*self._modules, *self._factories]))

    def _load(self, short: str) -> bool:
        """Whether ``short`` is registered, its declared module imported first if need be."""
        if short not in self._factories and short in self._modules:
            import_module(self._modules[short])
            if short not in self._factories:
                raise RuntimeError(f"{self._modules[short]} did not register {self.kind} {short}")
        return short in self._factories

    def qualified_name(self, name: str) -> str:
        """The fully qualified Java class name of a registered strategy."""
        short = self.short_name(name)
        return f"{self._packages.get(short, self.package)}.{short}"

    def reads(self, name: str) -> tuple[str, ...]:
        """The settings a registered strategy declares it reads."""
        return self._reads[self.short_name(name)]

    def short_name(self, name: str) -> str:
        """Resolve a short or fully qualified name to the registered short name."""
        text = name.strip()
        short = text.rsplit(".", 1)[-1]
        if self._load(short) and text in (short, f"{self._packages.get(short, self.package)}.{short}"):
            return short
        names = self.names()
        hint = closest(short, names)
        suffix = f" (did you mean {hint}?)" if hint else ""
        known = ", ".join(names)
        raise UsageError(f"unknown {self.kind} strategy {name!r}{suffix}; known: {known}")

    def create(self, name: str) -> T:
        return self._factories[self.short_name(name)]()


IMPL_PACKAGE = "org.apache.pulsar.broker.loadbalance.impl"

SHEDDING: Registry[SheddingStrategy] = Registry("shedding", IMPL_PACKAGE)
PLACEMENT: Registry[PlacementStrategy] = Registry("placement", IMPL_PACKAGE)
#: bundle split algorithms, by the names ``splitAlgorithmName`` takes (``range_equally_divide``…)
SPLIT: Registry[SplitAlgorithm] = Registry("split", "org.apache.pulsar.common.naming")
