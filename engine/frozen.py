"""Frozen dataclasses that are quick to build: the engine makes several every frame (events,
block tables, arrivals).

A frozen dataclass's generated __init__ stores each field through object.__setattr__ (its own
__setattr__ refuses), which costs about as much again as the rest of building it. quick_init()
gives such a class an __init__ that stores each field through its slot directly. Nothing else
changes: the same class, fields, signature and defaults, repr, equality, hashing, and assigning a
field still raises FrozenInstanceError.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Replace the generated __init__ of a frozen, slotted dataclass (plain defaults only;
    any other kind of class is returned as it is)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__ \
            or hasattr(cls, "__post_init__"):
        return cls
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING
           for f in fields):
        return cls
    space: dict[str, Any] = {}
    args: list[str] = []
    body: list[str] = []
    for f in fields:
        space[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default is dataclasses.MISSING:
            args.append(f.name)
        else:
            space[f"_default_{f.name}"] = f.default
            args.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(args)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, space)  # noqa: S102 - the source is built above from field names only
    init = space["__init__"]
    old = cls.__dict__["__init__"]
    init.__qualname__ = old.__qualname__
    init.__module__ = old.__module__
    init.__annotations__ = dict(getattr(old, "__annotations__", {}))
    setattr(cls, "__init__", init)
    return cls
