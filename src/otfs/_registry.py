"""Name -> implementation tables that users extend with a decorator."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping


def registrar(table: MutableMapping, kind: str) -> Callable[[str], Callable]:
    """A ``register(name)`` decorator factory adding the decorated object to ``table``.

    Registering the same object twice is harmless; another object under a
    taken name is an error naming the ``kind``.
    """

    def register(name: str):
        def decorator(obj):
            if name in table and table[name] is not obj:
                raise ValueError(f"a {kind} named {name!r} is already registered")
            table[name] = obj
            return obj

        return decorator

    return register
