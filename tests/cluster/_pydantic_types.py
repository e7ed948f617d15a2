"""A pydantic model at module level (so that it pickles), for tests that need pydantic."""

from __future__ import annotations

import pydantic


class Person(pydantic.BaseModel):
    name: str
