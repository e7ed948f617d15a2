"""OTP-style supervision for Pykka actors."""

from __future__ import annotations

__all__: list[str] = []
