"""The agents registered with a runtime, and the options each one's runs use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from praxo_actors._errors import PraxoError
from praxo_actors.agent import AgentOptions
from praxo_actors.models import Event

__all__ = ["Agents"]


def _no_sink(_event: Event) -> None:
    """Mark options whose events the session collects (the session never calls it)."""


class Agents:
    """Agent factories by name; each factory is called once, when its agent first runs.

    ``register`` may be called from any thread (a dict store is atomic); options are built on
    the thread that runs the session, and rebuilding them twice in a race is harmless.
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        # The runtime's providers, for agents whose options name none of their own.
        self._providers = {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
        self._factories: dict[str, Callable[[], AgentOptions]] = {}
        self._per_session: set[str] = set()
        self._durable: set[str] = set()
        # agent name -> (options that emit events, options that do not)
        self._options: dict[str, tuple[AgentOptions, AgentOptions]] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def register(
        self,
        name: str,
        factory: Callable[[], AgentOptions],
        per_session: bool = False,
        durable: bool = False,
    ) -> None:
        """Register (or replace) an agent; ``per_session`` builds its options per session,
        ``durable`` journals its runs' effects.

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for a bad name, a non-callable factory or a
                non-bool flag.
        """
        if not isinstance(durable, bool):
            raise PraxoError("RUNTIME_INVALID_CONFIG", "durable must be a bool")
        if not isinstance(name, str) or not name:
            raise PraxoError("RUNTIME_INVALID_CONFIG", "agent name must be a non-empty str")
        if not callable(factory):
            raise PraxoError("RUNTIME_INVALID_CONFIG", "options_factory must be callable")
        if not isinstance(per_session, bool):
            raise PraxoError("RUNTIME_INVALID_CONFIG", "per_session must be a bool")
        self._factories[name] = factory
        self._options.pop(name, None)
        for flag, names in ((per_session, self._per_session), (durable, self._durable)):
            if flag:
                names.add(name)
            else:
                names.discard(name)

    def is_durable(self, name: str) -> bool:
        """Whether runs of agent ``name`` are journaled (see the session log)."""
        return name in self._durable

    def output_type(self, name: str) -> Any:
        """Return the type agent ``name``'s structured output is an instance of (None: none).

        For reading kept results back (on the caller's thread): options already built are
        used, else the factory is called once more, and what it builds is not kept.
        """
        cached = self._options.get(name)
        if cached is not None:
            options = cached[1]
        else:
            factory = self._factories.get(name)
            if factory is None:
                return None
            options = factory()
            if not isinstance(options, AgentOptions):
                return None
        so = options.structured_output
        return None if so is None else so.output_type

    def options_for(self, name: str, events: bool = True, session: Any = None) -> AgentOptions:
        """Return the options of a registered agent, with or without event collection.

        A run started while nobody subscribes builds no events at all (they would reach no one,
        and building them was a fifth of a run's work in the runtime). A per-session agent's
        options are built once for each ``session`` and kept in its ``own_options()``.

        Raises:
            PraxoError: ``RUNTIME_UNKNOWN_AGENT``; ``RUNTIME_INVALID_CONFIG`` for a factory that
                does not return ``AgentOptions`` or returns options with their own ``sink``.
        """
        per_session = session is not None and name in self._per_session
        cache = session.own_options() if per_session else self._options
        cached = cache.get(name)
        if cached is None:
            factory = self._factories.get(name)
            if factory is None:
                raise PraxoError("RUNTIME_UNKNOWN_AGENT", f"no agent registered as {name!r}")
            built = factory()
            if not isinstance(built, AgentOptions):
                raise PraxoError(
                    "RUNTIME_INVALID_CONFIG", f"agent factory {name!r} must return AgentOptions"
                )
            if built.sink is not None:
                # Events of hosted runs go through the event bus, in order, to subscribers.
                raise PraxoError(
                    "RUNTIME_INVALID_CONFIG",
                    f"agent {name!r} has a sink: use runtime.events.subscribe(...) instead",
                )
            built = self._named(built, name)
            cached = (replace(built, sink=_no_sink), built)
            cache[name] = cached
        return cached[0] if events else cached[1]

    def _named(self, options: AgentOptions, name: str) -> AgentOptions:
        """Name the options after their agent and give them the runtime's providers (unless
        they have their own), so that hosted runs are traced under the agent's name."""
        changes: dict[str, Any] = {} if options.name is not None else {"name": name}
        for field_name, provider in self._providers.items():
            if provider is not None and getattr(options, field_name) is None:
                changes[field_name] = provider
        return replace(options, **changes) if changes else options
