"""Extraction schemas: the fields a document pipeline wants, with their types.

The field *type* decides normalisation and correctness rules (see
:mod:`confidence.datasets.matching`) and is the only thing about a field the confidence model sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confidence.errors import DatasetError

FIELD_TYPES: tuple[str, ...] = (
    "text",
    "id",
    "date",
    "amount",
    "address",
    "currency",
    "percent",
    "email",
    "iban",
)
"""Known field types. Unknown types are refused at load time with this list in the message."""


@dataclass(frozen=True)
class Field:
    """One schema field.

    Parameters
    ----------
    name : str
    type : str, default="text"
        One of :data:`FIELD_TYPES`.
    description : str, default=""
        What the field holds, in words: the candidate ranker compares printed labels with the
        name and this description, and the LLM calls show it.
    required : bool, default=False
        The documents always carry this field. The layout reading
        (:meth:`confidence.calls.ranker.CandidateRanker.rank`) then never reports it absent
        while the page offers a candidate of its type, and the LLM calls are told so. Leave it
        False when a document may lack the field: the ranker decides absence from the page.

    Examples
    --------
    >>> Field("total", "amount", "Total amount paid").type
    'amount'
    >>> Field.from_dict({"name": "total", "type": "amount", "required": True}).to_dict()
    {'name': 'total', 'type': 'amount', 'description': '', 'required': True}
    """

    name: str
    type: str = "text"
    description: str = ""
    required: bool = False

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise DatasetError(f"schema field name must be a non-empty string, got {self.name!r}")
        if self.type not in FIELD_TYPES:
            raise DatasetError(
                f"field {self.name!r} has unknown type {self.type!r}; "
                f"use one of: {', '.join(FIELD_TYPES)}"
            )
        if not isinstance(self.required, bool):
            raise DatasetError(
                f"field {self.name!r}: 'required' must be true or false, got {self.required!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.type, "description": self.description}
        if self.required:  # written only when set: schemas without it stay byte-identical
            d["required"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Field:
        return cls(
            str(d["name"]),
            str(d.get("type", "text")),
            str(d.get("description", "")),
            d.get("required", False),
        )


@dataclass(frozen=True)
class Schema:
    """A named, ordered set of fields.

    Examples
    --------
    >>> s = Schema("receipt", (Field("date", "date"), Field("total", "amount")))
    >>> s["total"].type, s.names
    ('amount', ('date', 'total'))
    >>> Schema.from_dict(s.to_dict()) == s
    True
    """

    name: str
    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for f in self.fields:
            if f.name in seen:
                raise DatasetError(f"schema {self.name!r} lists field {f.name!r} twice")
            seen.add(f.name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def __getitem__(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(
            f"schema {self.name!r} has no field {name!r}; fields: {', '.join(self.names)}"
        )

    def __contains__(self, name: object) -> bool:
        return any(f.name == name for f in self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "fields": [f.to_dict() for f in self.fields]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Schema:
        if not isinstance(d, dict) or not isinstance(d.get("fields"), list):
            raise DatasetError("schema must be an object with a 'fields' list")
        if not d["fields"]:
            raise DatasetError("schema lists no fields: there is nothing to score")
        for i, f in enumerate(d["fields"], start=1):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or not f["name"]:
                raise DatasetError(
                    f"field {i} of 'fields' must be an object with a 'name' string, got {f!r:.60}"
                )
        return cls(str(d.get("name", "schema")), tuple(Field.from_dict(f) for f in d["fields"]))

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        """Read a ``schema.json`` file."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DatasetError(f"{path}: schema file not found") from None
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}: not valid JSON ({e})") from None
        try:
            return cls.from_dict(data)
        except DatasetError as e:
            raise DatasetError(f"{path}: {e}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
