"""Answers as typed objects: ``Model``, the base of the classes ``models.py`` generates, and ``convert``, which
turns the JSON of an answer into them.

A model keeps the answer's JSON object as it came and reads it two ways: by attribute (``session.id``, checked
by mypy against the class's annotations) and by key (``session["id"]``, as when answers were plain dicts).
Nested objects and lists of objects come back as models too (``result.results[0].png``), made on first read and
kept. ``to_dict()`` answers the JSON object itself (for ``json.dumps``).

Not a ``dict`` subclass on purpose: answers have fields named ``items`` (a page's records), which would clash
with ``dict.items``; and a dict subclass would copy the data. So a model has the read side of a mapping (``[]``,
``get``, ``keys``, ``in``, ``len``, iteration over keys, ``==`` with the same dict) and no ``items()`` or
``values()``: ``x.to_dict().items()`` gives those.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, ClassVar, Dict, FrozenSet, Iterator, List, Mapping, Optional, Tuple, Type

__all__ = ["Model", "convert", "to_json"]

_MISSING: Any = object()


class Model:
    """An object of the API's answers (see the module's docstring). Subclasses declare their fields as class
    annotations; a field the answer does not have reads as None, a key the server added is still readable."""

    __slots__ = ("_data", "_made")
    _data: Dict[str, Any]
    #: Converted values of the fields read so far.
    _made: Dict[str, Any]

    #: The keys every answer of this class has (the schema's ``required``), for checks of answers.
    _required_keys: ClassVar[FrozenSet[str]] = frozenset()
    #: Field name → annotation, resolved once per class (``typing.get_type_hints``).
    _field_types: ClassVar[Optional[Dict[str, Any]]] = None

    def __init__(self, data: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", data if isinstance(data, dict) else dict(data))
        object.__setattr__(self, "_made", {})

    # -- reading ------------------------------------------------------------------------------------------

    @classmethod
    def model_fields(cls) -> Dict[str, Any]:
        """The declared fields and their annotations (of this class and its bases)."""
        found = cls.__dict__.get("_field_types")
        if found is None:
            # Each class's annotations are resolved in its own module (the generated ones in ``models``).
            hints = typing.get_type_hints(cls)
            found = {name: hint for name, hint in hints.items() if not name.startswith("_")}
            cls._field_types = found
        return found

    @classmethod
    def model_required_keys(cls) -> FrozenSet[str]:
        """The keys the schema requires (of this class and its bases)."""
        keys: FrozenSet[str] = frozenset()
        for klass in cls.__mro__:
            keys |= klass.__dict__.get("_required_keys", frozenset())
        return keys

    def _read(self, key: str) -> Any:
        made = self._made
        if key in made:
            return made[key]
        value = self._data[key]
        annotation = type(self).model_fields().get(key, Any)
        converted = convert(value, annotation)
        made[key] = converted
        return converted

    if not TYPE_CHECKING:
        # Only at run time: mypy must see the declared fields alone, so that a misspelt one is an error.
        def __getattr__(self, name: str) -> Any:
            if name.startswith("_"):
                raise AttributeError(name)
            if name in self._data:
                return self._read(name)
            if name in type(self).model_fields():
                return None  # declared but not in this answer (an optional field)
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only (to_dict() gives a dict to change)")

    def __getitem__(self, key: str) -> Any:
        if key not in self._data:
            raise KeyError(key)
        return self._read(key)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when the answer does not have it (as ``dict.get``)."""
        return self._read(key) if key in self._data else default

    def keys(self) -> typing.KeysView[str]:
        """The answer's keys (as ``dict.keys``; ``dict(model)`` and ``{**model}`` work)."""
        return self._data.keys()

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def to_dict(self) -> Dict[str, Any]:
        """The answer's JSON object, as the server sent it (plain dicts and lists all the way down)."""
        return self._data

    # -- comparing and showing ----------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Model):
            return bool(self._data == other._data)
        if isinstance(other, Mapping):
            return bool(self._data == to_json(dict(other)))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable data underneath, like a dict

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def __reduce__(self) -> Tuple[Any, Tuple[Dict[str, Any]]]:
        return (type(self), (self._data,))


def _fits(value: Dict[str, Any], model: Type[Model]) -> Tuple[int, int]:
    """How well a JSON object fits a model: (its required keys all there, keys it declares); higher is better."""
    required = model.model_required_keys()
    declared = model.model_fields()
    return (1 if required <= value.keys() else 0, sum(1 for key in value if key in declared))


def convert(value: Any, annotation: Any) -> Any:
    """``value`` (JSON) as ``annotation`` says: objects become models, lists and maps of them are converted item
    by item, everything else is left as it is. Of a union of models, the one the object fits best is taken."""
    if value is None or annotation is Any:
        return value
    if isinstance(annotation, type):
        if issubclass(annotation, Model) and isinstance(value, dict):
            return annotation(value)
        return value
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, List) and isinstance(value, list) and args:
        return [convert(item, args[0]) for item in value]
    if origin in (dict, Dict) and isinstance(value, dict) and len(args) == 2:
        return {key: convert(item, args[1]) for key, item in value.items()}
    if origin is typing.Union:
        if isinstance(value, dict):
            models = [a for a in args if isinstance(a, type) and issubclass(a, Model)]
            if models:
                best = max(models, key=lambda model: _fits(value, model))  # the first of equals
                return best(value)
        elif isinstance(value, list):
            for option in args:
                if typing.get_origin(option) in (list, List):
                    return convert(value, option)
    return value


def to_json(value: Any) -> Any:
    """``value`` with every model in it turned back into its JSON (for request bodies and comparisons)."""
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value
