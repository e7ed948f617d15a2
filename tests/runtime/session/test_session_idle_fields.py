"""What an idle session's actor sets of its own: the rarely used fields stay the class's."""

from __future__ import annotations

from collections.abc import Callable

from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors.runtime import Runtime
from supervisors import _pykka_compat as compat

Start = Callable[..., Runtime]
# Each name an instance sets costs every instance of the class 8 bytes of attribute values.
RARE = ("stash", "_deadlines", "_own_options", "_resumed", "_inbox")


def test_an_idle_session_sets_none_of_its_rarely_used_fields(runtime: Start) -> None:
    """A session that ran once (no deadline, no durable run, no own options) holds its stash,
    deadlines, options, resumed and inbox marks as the class's None, not as its own."""
    rt = runtime(agents={"default": echo_agent})
    rt.session("s").run("hi").get(timeout=TIMEOUT)
    ref = rt.registry.lookup("s")
    actor = compat.actor_of(ref) if ref is not None else None
    assert actor is not None
    assert not set(RARE) & set(vars(actor))
    assert all(getattr(actor, name) is None for name in RARE)
