"""What a Wi-Fi name and password may be: one rule for the admin page and the box's
root-side set-up tool.

The admin page (webui/admin.py) only asks for a change; the set-up tool
(provisioning/roles/hotspot/files/svoyak_box_setup.py, running as root) applies it, and
refuses what NetworkManager and WPA2 cannot take. When the two rules differed, the page
said «Сохранено» for a password the tool then refused (a Cyrillic one, say). So both call
this module: the hotspot role installs this very file beside the tool
(/usr/local/lib/svoyak/svoyak_wifi_rules.py). Standard library only: the tool runs with
the system's python3, outside the app's virtualenv.
"""

from __future__ import annotations


class WifiRefused(ValueError):
    """A name or password the box cannot use; the same words for the page and the tool."""

    def __init__(self, code: str, ru: str, en: str) -> None:
        super().__init__(en)
        self.code, self.ru, self.en = code, ru, en

    def text(self, lang: str) -> str:
        return self.ru if lang == "ru" else self.en


def check_ssid(ssid: object, *, venue: bool = False) -> None:
    """1 to 32 bytes (UTF-8) on one line: what an SSID holds."""
    if not isinstance(ssid, str) or not 1 <= len(ssid.encode()) <= 32 or "\n" in ssid:
        if venue:
            raise WifiRefused("venue_ssid",
                              "Имя Wi-Fi площадки — от 1 до 32 байт в одну строку.",
                              "The venue's Wi-Fi name must be 1 to 32 bytes on one line.")
        raise WifiRefused("ssid", "Имя сети Wi-Fi — от 1 до 32 байт в одну строку.",
                          "The Wi-Fi name must be 1 to 32 bytes on one line.")


def check_password(password: object, *, venue: bool = False) -> None:
    """8 to 63 printable ASCII characters (a WPA2 passphrase); a venue's may be empty (an
    open network)."""
    if isinstance(password, str) and (
            8 <= len(password) <= 63 and all(32 <= ord(c) < 127 for c in password)
            or venue and password == ""):
        return
    if venue:
        raise WifiRefused(
            "venue_password",
            "Пароль Wi-Fi площадки — пустой (открытая сеть) или от 8 до 63 символов, только "
            "печатные ASCII (латинские буквы, цифры, знаки, пробел; без кириллицы).",
            "The venue's Wi-Fi password must be empty (an open network) or 8 to 63 "
            "printable ASCII characters (Latin letters, digits, signs, spaces).")
    raise WifiRefused(
        "password",
        "Пароль Wi-Fi — от 8 до 63 символов, только печатные ASCII (латинские буквы, цифры, "
        "знаки, пробел; без кириллицы).",
        "The Wi-Fi password must be 8 to 63 printable ASCII characters (Latin letters, "
        "digits, signs, spaces).")


def check(ssid: object, password: object, *, venue: bool = False) -> None:
    """The box's own access point (or, with `venue`, the venue's network to join)."""
    check_ssid(ssid, venue=venue)
    check_password(password, venue=venue)
