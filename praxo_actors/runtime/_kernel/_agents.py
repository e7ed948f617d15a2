"""The agents registered with a runtime, and the options each one's runs use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from praxo_actors._errors import PraxoError
from praxo_actors.actors._checks import any_thread, loop_owned
from praxo_actors.agent import AgentOptions
from praxo_actors.codes import RUNTIME_INVALID_CONFIG, RUNTIME_UNKNOWN_AGENT
from praxo_actors.models import Event

__all__ = ["DEFAULT_AGENT", "Agents", "AgentsView", "RegisteredAgent"]

DEFAULT_AGENT = "default"
"""The agent of a session run with no agent named and none remembered."""


def _no_sink(_event: Event) -> None:
    """Mark options whose events the session collects (the session never calls it)."""


@dataclass(frozen=True, slots=True)
class RegisteredAgent:
    """An agent as registered with a runtime (see ``Runtime.register_agent``)."""

    name: str
    options_factory: Callable[[], AgentOptions]
    per_session: bool = False
    durable: bool = False


@dataclass(frozen=True, slots=True)
class AgentsView:
    """The registered agents as published by the loop: never changed, replaced as a whole.

    ``options`` memoises each agent's built options. It is the one part written after
    publication, from whichever thread runs a session, and only with ``setdefault``: two
    threads that race to build an agent's options agree on the first stored (building them
    twice is harmless), and a registration publishes a new view with the agent's entry dropped.
    """

    factories: Mapping[str, Callable[[], AgentOptions]] = field(default_factory=dict)
    per_session: frozenset[str] = frozenset()
    durable: frozenset[str] = frozenset()
    # agent name -> (options that emit events, options that do not)
    options: dict[str, tuple[AgentOptions, AgentOptions]] = field(default_factory=dict)


@loop_owned
class Agents:
    """Agent factories by name; each factory is called once, when its agent first runs.

    Registered on the loop's thread (the runtime posts ``register`` there), which publishes an
    immutable :class:`AgentsView`; every other thread (callers, sessions on scheduler threads)
    reads the view it finds, whole, never a registration half made.
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        # The runtime's providers, for agents whose options name none of their own.
        self._providers = {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
        self._view = AgentsView()

    @any_thread
    def __contains__(self, name: object) -> bool:
        return name in self._view.factories

    @staticmethod
    def check(name: str, factory: Any, per_session: Any, durable: Any) -> None:
        """Refuse a registration before it is posted to the loop.

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` for a bad name, a non-callable factory or a
                non-bool flag.
        """
        if not isinstance(durable, bool):
            raise PraxoError(RUNTIME_INVALID_CONFIG, "durable must be a bool")
        if not isinstance(name, str) or not name:
            raise PraxoError(RUNTIME_INVALID_CONFIG, "agent name must be a non-empty str")
        if not callable(factory):
            raise PraxoError(RUNTIME_INVALID_CONFIG, "options_factory must be callable")
        if not isinstance(per_session, bool):
            raise PraxoError(RUNTIME_INVALID_CONFIG, "per_session must be a bool")

    def register(
        self,
        name: str,
        factory: Callable[[], AgentOptions],
        per_session: bool = False,
        durable: bool = False,
    ) -> None:
        """Register (or replace) an agent; ``per_session`` builds its options per session,
        ``durable`` journals its runs' effects (on the loop's thread).

        Raises:
            PraxoError: ``RUNTIME_INVALID_CONFIG`` (see :meth:`check`).
        """
        self.check(name, factory, per_session, durable)
        old = self._view
        options = dict(old.options)
        options.pop(name, None)
        self._view = AgentsView(
            factories={**old.factories, name: factory},
            per_session=_flagged(old.per_session, name, per_session),
            durable=_flagged(old.durable, name, durable),
            options=options,
        )

    @any_thread
    def view(self) -> AgentsView:
        """Return the registrations published last (from any thread)."""
        return self._view

    @any_thread
    def registered(self) -> dict[str, RegisteredAgent]:
        """Return the agents registered (published last), by name in name order."""
        view = self._view
        return {
            name: RegisteredAgent(
                name, view.factories[name], name in view.per_session, name in view.durable
            )
            for name in sorted(view.factories)
        }

    @any_thread
    def is_durable(self, name: str) -> bool:
        """Whether runs of agent ``name`` are journaled (see the session log)."""
        return name in self._view.durable

    @any_thread
    def output_type(self, name: str) -> Any:
        """Return the type agent ``name``'s structured output is an instance of (None: none).

        For reading kept results back (on the caller's thread): options already built are
        used, else the factory is called once more, and what it builds is not kept.
        """
        view = self._view
        cached = view.options.get(name)
        if cached is not None:
            options = cached[1]
        else:
            factory = view.factories.get(name)
            if factory is None:
                return None
            options = factory()
            if not isinstance(options, AgentOptions):
                return None
        so = options.structured_output
        return None if so is None else so.output_type

    @any_thread
    def options_for(self, name: str, events: bool = True, session: Any = None) -> AgentOptions:
        """Return the options of a registered agent, with or without event collection.

        A run started while nobody subscribes builds no events at all (they would reach no one,
        and building them was a fifth of a run's work in the runtime). A per-session agent's
        options are built once for each ``session`` and kept in its ``own_options()``.

        Raises:
            PraxoError: ``RUNTIME_UNKNOWN_AGENT``; ``RUNTIME_INVALID_CONFIG`` for a factory that
                does not return ``AgentOptions`` or returns options with their own ``sink``.
        """
        view = self._view
        per_session = session is not None and name in view.per_session
        cache = session.own_options() if per_session else view.options
        cached = cache.get(name)
        if cached is None:
            factory = view.factories.get(name)
            if factory is None:
                raise PraxoError(RUNTIME_UNKNOWN_AGENT, f"no agent registered as {name!r}")
            built = factory()
            if not isinstance(built, AgentOptions):
                raise PraxoError(
                    RUNTIME_INVALID_CONFIG, f"agent factory {name!r} must return AgentOptions"
                )
            if built.sink is not None:
                # Events of hosted runs go through the event bus, in order, to subscribers.
                raise PraxoError(
                    RUNTIME_INVALID_CONFIG,
                    f"agent {name!r} has a sink: use runtime.events.subscribe(...) instead",
                )
            built = self._named(built, name)
            cached = cache.setdefault(name, (replace(built, sink=_no_sink), built))
        return cached[0] if events else cached[1]

    def _named(self, options: AgentOptions, name: str) -> AgentOptions:
        """Name the options after their agent and give them the runtime's providers (unless
        they have their own), so that hosted runs are traced under the agent's name."""
        changes: dict[str, Any] = {} if options.name is not None else {"name": name}
        for field_name, provider in self._providers.items():
            if provider is not None and getattr(options, field_name) is None:
                changes[field_name] = provider
        return replace(options, **changes) if changes else options


def _flagged(names: frozenset[str], name: str, flag: bool) -> frozenset[str]:
    return names | {name} if flag else names - {name}
