"""MkDocs hook: docstrings' reST roles (``:func:`x```) as cross-references in the API reference.

The docstrings name other objects as Sphinx does (``:class:`praxo_actors.runtime.Runtime```);
mkdocstrings renders Markdown, where the role would show as text before the code. Each role
becomes an optional cross-reference: a link when the name is one the reference documents,
the code alone otherwise (a relative name, a private one), never a warning.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(
    r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):"
    r"<code>~?(?P<name>[\w.]+)(?P<call>\(\))?</code>"
)


def _reference(match: re.Match[str]) -> str:
    name, call = match["name"], match["call"] or ""
    return f'<autoref identifier="{name}" optional><code>{name}{call}</code></autoref>'


def on_page_content(html: str, **kwargs: Any) -> str:
    """Turn the roles on a page into optional cross-references, resolved by autorefs."""
    return _ROLE.sub(_reference, html)
