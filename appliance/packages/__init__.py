"""Question packages: the model, the project's own JSON form, importers and the library."""

from appliance.packages.model import (
    Cat,
    CatPrice,
    Item,
    ItemType,
    Kind,
    Package,
    Question,
    Round,
    Theme,
)

__all__ = ["Cat", "CatPrice", "Item", "ItemType", "Kind", "Package", "Question", "Round", "Theme"]
