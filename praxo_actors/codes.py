"""Every code a failure carries, as a constant, with the exception class that carries it.

One code, one class: a code is raised as :attr:`Code.error` (or as a subclass of it that adds
fields, such as :class:`~praxo_actors.runtime.RunTimeoutError` for ``RUNTIME_TIMEOUT``), so
``except`` on that class catches every occurrence of the code. A code whose ``error`` is None
is never raised: it is a result the model sees (a ``ToolError``) or the code of an HTTP answer.
A model's ``ModelError`` codes (``MODEL_*``) fail the run as an :class:`~praxo_actors.AgentError`.

The ``supervisors`` package keeps its own table, :data:`supervisors.CODES` (it never imports
this package, and the pure layers do not import it): every one of its codes is carried by
:class:`~supervisors.SupervisorError`.

    >>> from praxo_actors import codes
    >>> codes.CODES[codes.RUNTIME_STOPPED].error.__name__
    'AgentError'
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

from praxo_actors._errors import (
    AgentError,
    CheckpointError,
    CompactionError,
    JSONError,
    MemoryStoreError,
    PathPolicyError,
    PraxoError,
    ProtocolError,
    RuntimeLimitError,
    SchedulerClosedError,
    SessionBusyError,
    SessionOverloadedError,
    ToolCallError,
)

__all__ = [
    "AGENT_CALLBACK_EXCEPTION",
    "AGENT_CANCELLED",
    "AGENT_CYCLE",
    "AGENT_DEADLINE",
    "AGENT_DEPTH",
    "AGENT_INVALID_OPTION",
    "AGENT_INVALID_RESUME",
    "AGENT_MAX_STEPS",
    "AGENT_MODEL_CALL_LIMIT",
    "AGENT_STRUCTURED_OUTPUT",
    "AGENT_TOOL_CALL_LIMIT",
    "AGENT_TOOL_CONTEXT",
    "AGENT_TOOL_NOT_SELECTED",
    "AGENT_TOOL_RETRIES",
    "AGENT_UNKNOWN_EFFECT",
    "APPROVAL_DENIED",
    "CHECKPOINT_INVALID",
    "CHECKPOINT_SIGNATURE",
    "CHECKPOINT_STALE",
    "CHECKPOINT_TYPE_NOT_ALLOWED",
    "CHECKPOINT_VERSION",
    "CODES",
    "COMPACTION_SUMMARY_INVALID",
    "EVENTS_INVALID_SUBSCRIPTION",
    "JSON_INVALID",
    "JSON_NOT_FOUND",
    "MCP_UNAVAILABLE",
    "MEMORY_INVALID_ARGUMENTS",
    "MEMORY_INVALID_KEY",
    "MEMORY_INVALID_NAMESPACE",
    "MEMORY_INVALID_VALUE",
    "MEMORY_NOT_FOUND",
    "MEMORY_SCHEMA_VERSION",
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_BAD_RESPONSE",
    "MODEL_RATE_LIMITED",
    "MODEL_TIMEOUT",
    "MODEL_UNAVAILABLE",
    "OBSERVER_HOST_REFUSED",
    "OBSERVER_HTTP_ERROR",
    "OBSERVER_METHOD_NOT_ALLOWED",
    "OBSERVER_NOT_FOUND",
    "OBSERVER_ORIGIN_REFUSED",
    "OBSERVER_TOKEN_REFUSED",
    "OBSERVER_UNKNOWN_RUN",
    "PATH_DENIED",
    "PATH_INVALID",
    "PATH_OUTSIDE_ROOTS",
    "PROTOCOL_BAD_JSON",
    "PROTOCOL_HOST_REFUSED",
    "PROTOCOL_INVALID_INPUT",
    "PROTOCOL_INVALID_MESSAGE",
    "PROTOCOL_NOT_ON_CLUSTER",
    "PROTOCOL_RUN_INTERRUPTED",
    "PROTOCOL_RUN_LOST",
    "PROTOCOL_TASK_NOT_CANCELABLE",
    "PROTOCOL_TASK_NOT_FOUND",
    "PROTOCOL_TOO_LARGE",
    "PROTOCOL_TOO_MANY_TOOL_SETS",
    "PROTOCOL_UNSUPPORTED",
    "PROTOCOL_VERSION_NOT_SUPPORTED",
    "RUNTIME_BLOCKING_CALL",
    "RUNTIME_INVALID_CONFIG",
    "RUNTIME_INVALID_INPUT",
    "RUNTIME_SCHEDULER_CLOSED",
    "RUNTIME_SESSION_LIMIT",
    "RUNTIME_STOPPED",
    "RUNTIME_TIMEOUT",
    "RUNTIME_UNKNOWN_AGENT",
    "RUNTIME_UNKNOWN_RUN",
    "SCHEDULE_INVALID",
    "SCHEDULE_NOT_FOUND",
    "SERVE_FAILED",
    "SESSION_BUSY",
    "SESSION_CONFLICT",
    "SESSION_CRASHED",
    "SESSION_INTERRUPTED",
    "SESSION_NOT_INTERRUPTED",
    "SESSION_OVERLOADED",
    "SESSION_START_FAILED",
    "STORE_CORRUPT",
    "STORE_FAILED",
    "STORE_LOCKED",
    "TOOL_CALL_INVALID_ARGUMENTS",
    "TOOL_CALL_INVALID_JSON",
    "TOOL_CALL_INVALID_NAME",
    "TOOL_CALL_MALFORMED",
    "TOOL_CALL_NOT_FOUND",
    "TOOL_CALL_UNKNOWN_FORMAT",
    "TOOL_FAILED",
    "TOOL_INTERRUPTED",
    "TOOL_NOT_FOUND",
    "TOOL_RETRY",
    "Code",
]


class Code(NamedTuple):
    """One code: its name, the class that carries it (None: never raised), what it means."""

    name: str
    error: type[Exception] | None
    meaning: str


# The agent loop.
AGENT_CALLBACK_EXCEPTION: Final = "AGENT_CALLBACK_EXCEPTION"
AGENT_CANCELLED: Final = "AGENT_CANCELLED"
AGENT_CYCLE: Final = "AGENT_CYCLE"
AGENT_DEADLINE: Final = "AGENT_DEADLINE"
AGENT_DEPTH: Final = "AGENT_DEPTH"
AGENT_INVALID_OPTION: Final = "AGENT_INVALID_OPTION"
AGENT_INVALID_RESUME: Final = "AGENT_INVALID_RESUME"
AGENT_MAX_STEPS: Final = "AGENT_MAX_STEPS"
AGENT_MODEL_CALL_LIMIT: Final = "AGENT_MODEL_CALL_LIMIT"
AGENT_STRUCTURED_OUTPUT: Final = "AGENT_STRUCTURED_OUTPUT"
AGENT_TOOL_CALL_LIMIT: Final = "AGENT_TOOL_CALL_LIMIT"
AGENT_TOOL_CONTEXT: Final = "AGENT_TOOL_CONTEXT"
AGENT_TOOL_NOT_SELECTED: Final = "AGENT_TOOL_NOT_SELECTED"
AGENT_TOOL_RETRIES: Final = "AGENT_TOOL_RETRIES"
AGENT_UNKNOWN_EFFECT: Final = "AGENT_UNKNOWN_EFFECT"
APPROVAL_DENIED: Final = "APPROVAL_DENIED"
COMPACTION_SUMMARY_INVALID: Final = "COMPACTION_SUMMARY_INVALID"
# Checkpoints.
CHECKPOINT_INVALID: Final = "CHECKPOINT_INVALID"
CHECKPOINT_SIGNATURE: Final = "CHECKPOINT_SIGNATURE"
CHECKPOINT_STALE: Final = "CHECKPOINT_STALE"
CHECKPOINT_TYPE_NOT_ALLOWED: Final = "CHECKPOINT_TYPE_NOT_ALLOWED"
CHECKPOINT_VERSION: Final = "CHECKPOINT_VERSION"
# The pure core: JSON, paths, tool calls.
JSON_INVALID: Final = "JSON_INVALID"
JSON_NOT_FOUND: Final = "JSON_NOT_FOUND"
PATH_DENIED: Final = "PATH_DENIED"
PATH_INVALID: Final = "PATH_INVALID"
PATH_OUTSIDE_ROOTS: Final = "PATH_OUTSIDE_ROOTS"
TOOL_CALL_INVALID_ARGUMENTS: Final = "TOOL_CALL_INVALID_ARGUMENTS"
TOOL_CALL_INVALID_JSON: Final = "TOOL_CALL_INVALID_JSON"
TOOL_CALL_INVALID_NAME: Final = "TOOL_CALL_INVALID_NAME"
TOOL_CALL_MALFORMED: Final = "TOOL_CALL_MALFORMED"
TOOL_CALL_NOT_FOUND: Final = "TOOL_CALL_NOT_FOUND"
TOOL_CALL_UNKNOWN_FORMAT: Final = "TOOL_CALL_UNKNOWN_FORMAT"
# Tools' results.
TOOL_FAILED: Final = "TOOL_FAILED"
TOOL_INTERRUPTED: Final = "TOOL_INTERRUPTED"
TOOL_NOT_FOUND: Final = "TOOL_NOT_FOUND"
TOOL_RETRY: Final = "TOOL_RETRY"
MCP_UNAVAILABLE: Final = "MCP_UNAVAILABLE"
# Memory stores and their tools.
MEMORY_INVALID_ARGUMENTS: Final = "MEMORY_INVALID_ARGUMENTS"
MEMORY_INVALID_KEY: Final = "MEMORY_INVALID_KEY"
MEMORY_INVALID_NAMESPACE: Final = "MEMORY_INVALID_NAMESPACE"
MEMORY_INVALID_VALUE: Final = "MEMORY_INVALID_VALUE"
MEMORY_NOT_FOUND: Final = "MEMORY_NOT_FOUND"
MEMORY_SCHEMA_VERSION: Final = "MEMORY_SCHEMA_VERSION"
# Models.
MODEL_AUTH: Final = "MODEL_AUTH"
MODEL_BAD_REQUEST: Final = "MODEL_BAD_REQUEST"
MODEL_BAD_RESPONSE: Final = "MODEL_BAD_RESPONSE"
MODEL_RATE_LIMITED: Final = "MODEL_RATE_LIMITED"
MODEL_TIMEOUT: Final = "MODEL_TIMEOUT"
MODEL_UNAVAILABLE: Final = "MODEL_UNAVAILABLE"
# The runtime.
EVENTS_INVALID_SUBSCRIPTION: Final = "EVENTS_INVALID_SUBSCRIPTION"
RUNTIME_BLOCKING_CALL: Final = "RUNTIME_BLOCKING_CALL"
RUNTIME_INVALID_CONFIG: Final = "RUNTIME_INVALID_CONFIG"
RUNTIME_INVALID_INPUT: Final = "RUNTIME_INVALID_INPUT"
RUNTIME_SCHEDULER_CLOSED: Final = "RUNTIME_SCHEDULER_CLOSED"
RUNTIME_SESSION_LIMIT: Final = "RUNTIME_SESSION_LIMIT"
RUNTIME_STOPPED: Final = "RUNTIME_STOPPED"
RUNTIME_TIMEOUT: Final = "RUNTIME_TIMEOUT"
RUNTIME_UNKNOWN_AGENT: Final = "RUNTIME_UNKNOWN_AGENT"
RUNTIME_UNKNOWN_RUN: Final = "RUNTIME_UNKNOWN_RUN"
SCHEDULE_INVALID: Final = "SCHEDULE_INVALID"
SCHEDULE_NOT_FOUND: Final = "SCHEDULE_NOT_FOUND"
SESSION_BUSY: Final = "SESSION_BUSY"
SESSION_CONFLICT: Final = "SESSION_CONFLICT"
SESSION_CRASHED: Final = "SESSION_CRASHED"
SESSION_INTERRUPTED: Final = "SESSION_INTERRUPTED"
SESSION_NOT_INTERRUPTED: Final = "SESSION_NOT_INTERRUPTED"
SESSION_OVERLOADED: Final = "SESSION_OVERLOADED"
SESSION_START_FAILED: Final = "SESSION_START_FAILED"
STORE_CORRUPT: Final = "STORE_CORRUPT"
STORE_FAILED: Final = "STORE_FAILED"
STORE_LOCKED: Final = "STORE_LOCKED"
# Serving, the protocols and the observer.
SERVE_FAILED: Final = "SERVE_FAILED"
PROTOCOL_BAD_JSON: Final = "PROTOCOL_BAD_JSON"
PROTOCOL_HOST_REFUSED: Final = "PROTOCOL_HOST_REFUSED"
PROTOCOL_INVALID_INPUT: Final = "PROTOCOL_INVALID_INPUT"
PROTOCOL_INVALID_MESSAGE: Final = "PROTOCOL_INVALID_MESSAGE"
PROTOCOL_NOT_ON_CLUSTER: Final = "PROTOCOL_NOT_ON_CLUSTER"
PROTOCOL_RUN_INTERRUPTED: Final = "PROTOCOL_RUN_INTERRUPTED"
PROTOCOL_RUN_LOST: Final = "PROTOCOL_RUN_LOST"
PROTOCOL_TASK_NOT_CANCELABLE: Final = "PROTOCOL_TASK_NOT_CANCELABLE"
PROTOCOL_TASK_NOT_FOUND: Final = "PROTOCOL_TASK_NOT_FOUND"
PROTOCOL_TOO_LARGE: Final = "PROTOCOL_TOO_LARGE"
PROTOCOL_TOO_MANY_TOOL_SETS: Final = "PROTOCOL_TOO_MANY_TOOL_SETS"
PROTOCOL_UNSUPPORTED: Final = "PROTOCOL_UNSUPPORTED"
PROTOCOL_VERSION_NOT_SUPPORTED: Final = "PROTOCOL_VERSION_NOT_SUPPORTED"
OBSERVER_HOST_REFUSED: Final = "OBSERVER_HOST_REFUSED"
OBSERVER_HTTP_ERROR: Final = "OBSERVER_HTTP_ERROR"
OBSERVER_METHOD_NOT_ALLOWED: Final = "OBSERVER_METHOD_NOT_ALLOWED"
OBSERVER_NOT_FOUND: Final = "OBSERVER_NOT_FOUND"
OBSERVER_ORIGIN_REFUSED: Final = "OBSERVER_ORIGIN_REFUSED"
OBSERVER_TOKEN_REFUSED: Final = "OBSERVER_TOKEN_REFUSED"
OBSERVER_UNKNOWN_RUN: Final = "OBSERVER_UNKNOWN_RUN"

_TABLE: tuple[tuple[str, type[Exception] | None, str], ...] = (
    (AGENT_CALLBACK_EXCEPTION, AgentError, "a model, tool or hook raised (a hosted run fails so)"),
    (AGENT_CANCELLED, AgentError, "the run was cancelled, or its session stopped with it pending"),
    (AGENT_CYCLE, None, "an agent tool would wait on its own session (a ToolError)"),
    (AGENT_DEADLINE, AgentError, "the run's deadline passed"),
    (AGENT_DEPTH, None, "agent tools nested deeper than max_depth (a ToolError)"),
    (AGENT_INVALID_OPTION, AgentError, "an agent option out of its range"),
    (AGENT_INVALID_RESUME, AgentError, "a resume value the interrupted run cannot take"),
    (AGENT_MAX_STEPS, AgentError, "no final answer within max_steps"),
    (AGENT_MODEL_CALL_LIMIT, AgentError, "the run's model call budget is spent"),
    (AGENT_STRUCTURED_OUTPUT, AgentError, "no valid structured output after the repairs allowed"),
    (AGENT_TOOL_CALL_LIMIT, AgentError, "the run's tool call budget is spent"),
    (AGENT_TOOL_CONTEXT, None, "an agent tool called outside a runtime (a ToolError)"),
    (AGENT_TOOL_NOT_SELECTED, AgentError, "a call of a tool the step did not offer"),
    (AGENT_TOOL_RETRIES, AgentError, "more ToolRetry results than max_tool_retries"),
    (AGENT_UNKNOWN_EFFECT, AgentError, "a driver was given what is not an effect"),
    (APPROVAL_DENIED, None, "a person refused the tool call (the call's result)"),
    (COMPACTION_SUMMARY_INVALID, CompactionError, "a summariser returned no text"),
    (CHECKPOINT_INVALID, CheckpointError, "a checkpoint or journal of the wrong shape"),
    (CHECKPOINT_SIGNATURE, CheckpointError, "a checkpoint whose signature does not verify"),
    (CHECKPOINT_STALE, CheckpointError, "a checkpoint older than the log it belongs to"),
    (CHECKPOINT_TYPE_NOT_ALLOWED, CheckpointError, "a checkpoint holding a type not allowed"),
    (CHECKPOINT_VERSION, CheckpointError, "a checkpoint of a version this code does not read"),
    (JSON_INVALID, JSONError, "text that is not JSON, or a value JSON cannot hold"),
    (JSON_NOT_FOUND, JSONError, "no JSON in a model's output"),
    (PATH_DENIED, PathPolicyError, "a path the policy denies"),
    (PATH_INVALID, PathPolicyError, "a path that is not a valid path"),
    (PATH_OUTSIDE_ROOTS, PathPolicyError, "a path outside the policy's roots"),
    (TOOL_CALL_INVALID_ARGUMENTS, ToolCallError, "a tool call whose arguments fail the schema"),
    (TOOL_CALL_INVALID_JSON, ToolCallError, "a tool call whose arguments are not JSON"),
    (TOOL_CALL_INVALID_NAME, ToolCallError, "a tool call whose name is not a valid name"),
    (TOOL_CALL_MALFORMED, ToolCallError, "tool-call markup that cannot be parsed"),
    (TOOL_CALL_NOT_FOUND, ToolCallError, "no tool call in the text"),
    (TOOL_CALL_UNKNOWN_FORMAT, ToolCallError, "a tool-call format that does not exist"),
    (TOOL_FAILED, None, "an MCP tool reported failure (a ToolError)"),
    (TOOL_INTERRUPTED, None, "the run was cut off while the call was in flight (a ToolError)"),
    (TOOL_NOT_FOUND, AgentError, "a call of a tool that does not exist"),
    (TOOL_RETRY, None, "a tool asked the model to call again (a ToolError)"),
    (MCP_UNAVAILABLE, PraxoError, "an MCP server that is gone or did not answer in time"),
    (MEMORY_INVALID_ARGUMENTS, None, "a memory tool called with bad arguments (a ToolError)"),
    (MEMORY_INVALID_KEY, MemoryStoreError, "a memory key that is not a non-empty str"),
    (MEMORY_INVALID_NAMESPACE, MemoryStoreError, "a bad memory namespace or search prefix"),
    (MEMORY_INVALID_VALUE, MemoryStoreError, "a memory value that is not a JSON object"),
    (MEMORY_NOT_FOUND, None, "nothing remembered under the key (a ToolError)"),
    (MEMORY_SCHEMA_VERSION, MemoryStoreError, "a store written by an unknown schema version"),
    (MODEL_AUTH, AgentError, "the provider refused the key (HTTP 401/403), or there is none"),
    (MODEL_BAD_REQUEST, AgentError, "the provider refused the request (HTTP 4xx)"),
    (MODEL_BAD_RESPONSE, AgentError, "a model's answer that holds no reply"),
    (MODEL_RATE_LIMITED, AgentError, "the provider's rate limit (HTTP 429)"),
    (MODEL_TIMEOUT, AgentError, "no whole answer from the model in time"),
    (MODEL_UNAVAILABLE, AgentError, "the provider is down or the connection failed"),
    (EVENTS_INVALID_SUBSCRIPTION, PraxoError, "a bad subscriber, pattern, session id or buffer"),
    (RUNTIME_BLOCKING_CALL, PraxoError, "a blocking wait on the runtime's own loop thread"),
    (RUNTIME_INVALID_CONFIG, PraxoError, "a bad runtime setting, agent name or factory"),
    (RUNTIME_INVALID_INPUT, PraxoError, "a bad session id, input, deadline or timeout"),
    (RUNTIME_SCHEDULER_CLOSED, SchedulerClosedError, "an actor started on a closed scheduler"),
    (RUNTIME_SESSION_LIMIT, RuntimeLimitError, "max_live_sessions live and none idle"),
    (RUNTIME_STOPPED, AgentError, "the runtime stopped, or is stopping"),
    (RUNTIME_TIMEOUT, PraxoError, "no answer within the timeout"),
    (RUNTIME_UNKNOWN_AGENT, PraxoError, "no agent registered under that name"),
    (RUNTIME_UNKNOWN_RUN, PraxoError, "no session knows that run"),
    (SCHEDULE_INVALID, PraxoError, "a schedule with bad timing, input or key"),
    (SCHEDULE_NOT_FOUND, PraxoError, "no schedule with that id"),
    (SESSION_BUSY, SessionBusyError, 'a run is in progress and on_busy="reject"'),
    (SESSION_CONFLICT, AgentError, "another writer committed to the session first"),
    (SESSION_CRASHED, AgentError, "the session actor crashed while holding the run"),
    (SESSION_INTERRUPTED, AgentError, "the session's last run is interrupted: resume it first"),
    (SESSION_NOT_INTERRUPTED, AgentError, "a resume of a session with no interrupted run"),
    (SESSION_OVERLOADED, SessionOverloadedError, "more than max_queue runs pending"),
    (SESSION_START_FAILED, PraxoError, "the session actor could not be started (in time)"),
    (STORE_CORRUPT, PraxoError, "the store's file is not a sound store database"),
    (STORE_FAILED, PraxoError, "the store failed to read or write"),
    (STORE_LOCKED, PraxoError, "another runtime holds the store"),
    (SERVE_FAILED, PraxoError, "the server could not start"),
    (PROTOCOL_BAD_JSON, PraxoError, "a request body that is not JSON"),
    (PROTOCOL_HOST_REFUSED, None, "a request for a Host the app is not served on (HTTP 421)"),
    (PROTOCOL_INVALID_INPUT, PraxoError, "a request that is not the protocol's shape"),
    (PROTOCOL_INVALID_MESSAGE, ProtocolError, "a message that is not an encoded runtime message"),
    (PROTOCOL_NOT_ON_CLUSTER, PraxoError, "a protocol call a cluster runtime does not serve"),
    (PROTOCOL_RUN_INTERRUPTED, PraxoError, "the run waits for a person"),
    (PROTOCOL_RUN_LOST, None, "a stream whose run's last event was lost"),
    (PROTOCOL_TASK_NOT_CANCELABLE, PraxoError, "an A2A task that can no longer be cancelled"),
    (PROTOCOL_TASK_NOT_FOUND, PraxoError, "no A2A task with that id"),
    (PROTOCOL_TOO_LARGE, PraxoError, "a request body over the limit"),
    (PROTOCOL_TOO_MANY_TOOL_SETS, PraxoError, "more client tool sets than a runtime keeps"),
    (PROTOCOL_UNSUPPORTED, PraxoError, "an A2A operation this server does not support"),
    (PROTOCOL_VERSION_NOT_SUPPORTED, PraxoError, "an A2A protocol version not spoken"),
    (OBSERVER_HOST_REFUSED, None, "an observer request for a foreign Host (HTTP 421)"),
    (OBSERVER_HTTP_ERROR, None, "an observer request refused by HTTP"),
    (OBSERVER_METHOD_NOT_ALLOWED, None, "an observer request with the wrong method (HTTP 405)"),
    (OBSERVER_NOT_FOUND, None, "no observer page or route there (HTTP 404)"),
    (OBSERVER_ORIGIN_REFUSED, None, "an observer action not from its page (HTTP 403)"),
    (OBSERVER_TOKEN_REFUSED, None, "an observer action without its token (HTTP 403)"),
    (OBSERVER_UNKNOWN_RUN, PraxoError, "the observer holds no such run"),
)

CODES: Final[Mapping[str, Code]] = MappingProxyType(
    {name: Code(name, error, meaning) for name, error, meaning in sorted(_TABLE)}
)
"""Every code by name, in alphabetical order."""
