"""QR codes for the idle screen, drawn on the box (segno) as SVG: one to join the Wi-Fi,
one to open the host page."""

from __future__ import annotations

import io

import segno


def _escape(value: str) -> str:
    # The WIFI: URI scheme escapes these with a backslash.
    for ch in "\\;,\":":
        value = value.replace(ch, "\\" + ch)
    return value


def wifi_payload(ssid: str, password: str, security: str = "WPA") -> str:
    sec = security if password else "nopass"
    pwd = f"P:{_escape(password)};" if password else ""
    return f"WIFI:T:{sec};S:{_escape(ssid)};{pwd};"


def svg(payload: str, scale: int = 8) -> bytes:
    out = io.BytesIO()
    segno.make(payload, error="m", micro=False).save(
        out, kind="svg", scale=scale, border=2, dark="#000000", light="#ffffff",
        xmldecl=False, svgns=True)
    return out.getvalue()

