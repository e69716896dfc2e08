#!/usr/bin/env python3
"""Generates ``src/sandboxd/models.py`` (the REST API's answers as typed classes, its request bodies as TypedDicts)
from the OpenAPI document the server serves.

    python3 clients/python/scripts/generate_types.py http://127.0.0.1:8080/openapi.json   write the module
    python3 clients/python/scripts/generate_types.py openapi.json --check                exit 1 if it is stale

The source is a URL, a file, or ``-`` for standard input. Only the standard library is used, and the output
depends on the document alone (not on the Python that runs this), so ``tests/test_models_drift.py`` can
regenerate it from the live server's document and fail when the checked-in module differs.

What is generated:
- every object schema that answers use as a class over ``sandboxd._model.Model`` (attribute and key access):
  its fields as class annotations for mypy (a field an answer may leave out is ``Optional``), its required keys
  in ``_required_keys``; an enum as a ``Literal``;
- every object schema only request bodies use as a TypedDict (required keys in a base class, the others with
  ``total=False``: Python 3.9 has no ``NotRequired``), so callers pass plain dicts; a schema used both ways is
  a class and also a TypedDict named ``<Name>Params``;
- an object nested inline in a schema as a class (or TypedDict) of its own, named after its place
  (``SessionUsageVm``);
- for each operation, ``<Method><Path>Request`` and ``<Method><Path>Response`` for its JSON request body and
  its 2xx JSON answer (``PostKillResponse``), and ``OPERATIONS``, every operation with those names (the client
  turns each answer into its operation's ``Response`` type).
"""
from __future__ import annotations

import json
import keyword
import re
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

MODELS_FILE = Path(__file__).resolve().parent.parent / "src" / "sandboxd" / "models.py"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")

HEADER = '''"""Types of the sandboxd REST API, generated from the OpenAPI document the server serves: its answers as
classes over ``Model`` (``answer.field`` and ``answer["field"]``), its request bodies as TypedDicts.

Do not edit: run ``python3 clients/python/scripts/generate_types.py <server>/openapi.json`` after changing a
route (a test regenerates this module from the live server's document and fails while it differs).
Document: {title} {version} (OpenAPI {openapi}).
"""
# fmt: off
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

from ._model import Model

'''
#: Names a model's field cannot have (the methods of ``Model``): such a field is read with ``model["name"]``.
MODEL_MEMBERS = frozenset({"get", "keys", "to_dict", "model_fields", "model_required_keys"})


def pascal(text: str) -> str:
    """``session_id`` → ``SessionId``, ``/v1/sessions/{session_id}`` → ``V1SessionsSessionId``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", text) if part)


def comment_lines(text: str, indent: str) -> List[str]:
    flat = " ".join(text.split())
    return [f"{indent}# {line}" for line in textwrap.wrap(flat, width=100, break_on_hyphens=False)]


def docstring(text: str, indent: str) -> List[str]:
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]
    lines: List[str] = []
    for i, paragraph in enumerate(paragraphs):
        if i:
            lines.append("")
        lines.extend(textwrap.wrap(paragraph.replace("\\", "\\\\").replace('"""', '\\"\\"\\"'), width=100))
    if not lines:
        return []
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{line}" if line else "" for line in lines[1:]] + [f'{indent}"""']


class Generator:
    def __init__(self, document: Dict[str, Any]):
        self.document = document
        self.schemas: Dict[str, Any] = document.get("components", {}).get("schemas", {})
        self.blocks: List[str] = []
        self.names: set = set(self.schemas)
        self.taken: set = set()
        requested = self.reached("requestBody")
        answered = self.reached("responses")
        #: Components only request bodies use: TypedDicts. Those answers use too get a TypedDict twin.
        self.request_only = {name for name in requested if name not in answered}
        self.twins = {name for name in requested if name in answered and self.is_object(self.schemas.get(name))}
        for name in self.twins:
            self.names.add(self.params_name(name))
        #: "model" while writing what answers use, "typeddict" for request bodies.
        self.mode = "model"

    # -- what uses what ------------------------------------------------------------------------------------

    @staticmethod
    def is_object(schema: Any) -> bool:
        return (
            isinstance(schema, dict)
            and (schema.get("type") == "object" or "properties" in schema)
            and bool(schema.get("properties"))
        )

    @staticmethod
    def params_name(name: str) -> str:
        return f"{name}Params"

    def reached(self, part: str) -> set:
        """The components that the operations' ``part`` (request bodies, or 2xx answers) refer to, directly or not."""

        def refs(node: Any, found: set) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("$ref"), str):
                    found.add(node["$ref"].rsplit("/", 1)[-1])
                for value in node.values():
                    refs(value, found)
            elif isinstance(node, list):
                for value in node:
                    refs(value, found)

        start: set = set()
        for item in self.document.get("paths", {}).values():
            for method in METHODS:
                operation = item.get(method) if isinstance(item, dict) else None
                if not isinstance(operation, dict):
                    continue
                if part == "requestBody":
                    refs(operation.get("requestBody") or {}, start)
                else:
                    for status, response in (operation.get("responses") or {}).items():
                        if str(status).startswith("2"):
                            refs(response, start)
        seen: set = set()
        todo = list(start)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            found: set = set()
            refs(self.schemas.get(name, {}), found)
            todo += list(found)
        return seen

    def ref_name(self, name: str) -> str:
        """A component's type name where it is used now (a request body names the TypedDict twin)."""
        return self.params_name(name) if self.mode == "typeddict" and name in self.twins else name

    # -- names ---------------------------------------------------------------------------------------------

    def fresh(self, name: str, component: bool = False) -> str:
        """A name not used yet; a component keeps its own (the others avoid every component's)."""
        candidate, n = name, 2
        while not component and (candidate in self.taken or candidate in self.names):
            candidate, n = f"{name}{n}", n + 1
        self.taken.add(candidate)
        return candidate

    # -- types ---------------------------------------------------------------------------------------------

    def literal(self, values: List[Any]) -> str:
        return "Literal[" + ", ".join(json.dumps(v) if isinstance(v, str) else repr(v) for v in values) + "]"

    def union(self, types: List[str]) -> str:
        unique: List[str] = []
        for t in types:
            if t not in unique:
                unique.append(t)
        nullable = "None" in unique
        rest = [t for t in unique if t != "None"]
        # Literals of one union are merged: Literal["a"] | Literal["b"] → Literal["a", "b"].
        literals = [t for t in rest if t.startswith("Literal[")]
        if len(literals) > 1:
            merged = self.literal([v for t in literals for v in json.loads("[" + t[len("Literal[") : -1] + "]")])
            rest = [merged] + [t for t in rest if not t.startswith("Literal[")]
        if "Any" in rest:
            return "Any"
        inner = rest[0] if len(rest) == 1 else "Union[" + ", ".join(rest) + "]" if rest else "None"
        return f"Optional[{inner}]" if nullable and rest else inner

    def type_of(self, schema: Any, context: str) -> str:
        """The annotation for a schema; an inline object becomes a TypedDict named ``context``."""
        if not isinstance(schema, dict) or schema == {}:
            return "Any"
        if "$ref" in schema:
            return self.ref_name(schema["$ref"].rsplit("/", 1)[-1])
        if "const" in schema:
            return self.literal([schema["const"]])
        if "enum" in schema:
            values = [v for v in schema["enum"] if v is not None]
            literal = self.literal(values)
            return f"Optional[{literal}]" if None in schema["enum"] else literal
        for key in ("anyOf", "oneOf"):
            if key in schema:
                variants = schema[key]
                # "X or null" names its object after its place; several objects are numbered.
                several = len([v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")]) > 1
                return self.union(
                    [
                        self.type_of(v, f"{context}Variant{i + 1}" if several else context)
                        for i, v in enumerate(variants)
                    ]
                )
        if "allOf" in schema:
            parts = schema["allOf"]
            if len(parts) == 1:
                return self.type_of(parts[0], context)
            return self.typed_dict(
                context, schema, bases=[self.ref_name(p["$ref"].rsplit("/", 1)[-1]) for p in parts if "$ref" in p]
            )
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.union([self.type_of({**schema, "type": k}, context) for k in kind])
        if kind == "null":
            return "None"
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            return f"List[{self.type_of(schema.get('items', {}), context + 'Item')}]"
        if kind == "object" or "properties" in schema:
            if schema.get("properties"):
                return self.typed_dict(context, schema)
            extra = schema.get("additionalProperties", True)
            value = "Any" if extra is True or extra is False else self.type_of(extra, context + "Value")
            return f"Dict[str, {value}]"
        return "Any"

    def typed_dict(
        self, name: str, schema: Dict[str, Any], bases: Optional[List[str]] = None, component: bool = False
    ) -> str:
        """Emits a class (answers) or a TypedDict (request bodies) for an object schema (or an allOf of references
        and objects); returns its name."""
        name = self.fresh(name, component)
        properties: Dict[str, Any] = {}
        required: List[str] = []
        descriptions: List[str] = []
        for part in schema.get("allOf", [schema]):
            if "$ref" in part:
                continue
            properties.update(part.get("properties", {}))
            required += part.get("required", [])
            if part.get("description"):
                descriptions.append(part["description"])
        if schema.get("description") and schema.get("description") not in descriptions:
            descriptions.insert(0, schema["description"])
        fields: List[Tuple[str, str, bool, str]] = []
        for key, value in properties.items():
            annotation = self.type_of(value, name + pascal(key))
            fields.append((key, annotation, key in required, (value or {}).get("description", "")))
        if self.mode == "model":
            self.emit_model(name, fields, bases or [], " ".join(descriptions))
        else:
            self.emit(name, fields, bases or [], " ".join(descriptions))
        return name

    def emit_model(
        self, name: str, fields: List[Tuple[str, str, bool, str]], bases: List[str], description: str
    ) -> None:
        """A class over ``Model``: each field an annotation (``Optional`` where an answer may leave it out)."""
        lines = [f"class {name}({', '.join(bases or ['Model'])}):"]
        lines += docstring(description, "    ")
        lines.append("    __slots__ = ()")
        required = sorted(key for key, _, is_required, _ in fields if is_required)
        if required:
            lines.append("    _required_keys = frozenset({" + ", ".join(json.dumps(k) for k in required) + "})")
        for key, annotation, is_required, text in fields:
            if not is_required and annotation != "Any" and not annotation.startswith("Optional["):
                annotation = f"Optional[{annotation}]"
            if text:
                lines += comment_lines(text, "    ")
            if not key.isidentifier() or keyword.iskeyword(key) or key in MODEL_MEMBERS:
                lines.append(
                    f"    # {json.dumps(key)}: {annotation} (not an attribute name: read it as model[{json.dumps(key)}])"
                )
            else:
                lines.append(f"    {key}: {annotation}")
        self.blocks.append("\n".join(lines))

    def emit(self, name: str, fields: List[Tuple[str, str, bool, str]], bases: List[str], description: str) -> None:
        required = [f for f in fields if f[2]]
        optional = [f for f in fields if not f[2]]
        lines: List[str] = []
        if any(not key.isidentifier() or keyword.iskeyword(key) for key, *_ in fields):
            # A key that is not a Python name: the functional syntax (no comments per field there).
            def functional(class_name: str, items: List[Tuple[str, str, bool, str]], total: bool) -> str:
                body = ", ".join(f"{json.dumps(k)}: {a}" for k, a, *_ in items)
                return f"{class_name} = TypedDict({json.dumps(class_name)}, {{{body}}}, total={total})"

            if bases:
                raise ValueError(f"{name}: inheritance with keys that are not Python names is not supported")
            if required and optional:
                lines.append(functional(f"_{name}Required", required, True))
                lines.append(f"class {name}(_{name}Required, total=False):")
                lines += docstring(description, "    ") or ['    """"""']
                lines += [f"    {k}: {a}" for k, a, *_ in optional]
            else:
                lines.append(functional(name, fields, not optional))
            self.blocks.append("\n".join(lines))
            return

        def body(items: List[Tuple[str, str, bool, str]], doc: str) -> List[str]:
            out = docstring(doc, "    ")
            for key, annotation, _, text in items:
                if text:
                    out += comment_lines(text, "    ")
                out.append(f"    {key}: {annotation}")
            return out or ["    pass"]

        parents = bases or ["TypedDict"]
        if required and optional:
            lines.append(f"class _{name}Required({', '.join(parents)}):")
            lines += body(required, "")
            lines += ["", ""]
            lines.append(f"class {name}(_{name}Required, total=False):")
            lines += body(optional, description)
        elif optional:
            lines.append(f"class {name}({', '.join(parents)}, total=False):")
            lines += body(optional, description)
        else:
            lines.append(f"class {name}({', '.join(parents)}):")
            lines += body(required, description)
        self.blocks.append("\n".join(lines))

    # -- the module ----------------------------------------------------------------------------------------

    def component(self, name: str, schema: Dict[str, Any]) -> None:
        self.mode = "typeddict" if name in self.request_only else "model"
        if self.is_object(schema):
            self.typed_dict(name, schema, component=True)
            if name in self.twins:
                self.mode = "typeddict"
                self.typed_dict(self.params_name(name), schema, component=True)
            return
        annotation = self.type_of(schema, name + "Value")
        self.fresh(name, component=True)
        lines = comment_lines(schema.get("description", ""), "") if isinstance(schema, dict) else []
        self.blocks.append("\n".join(lines + [f"{name} = {annotation}"]))

    def operation_alias(self, name: str, annotation: str) -> Optional[str]:
        if annotation in (name, f"Optional[{name}]"):
            return name  # the inline body is a TypedDict of this very name (a body that may be null: still it)
        name = self.fresh(name)
        self.blocks.append(f"{name} = {annotation}")
        return name

    def render(self) -> str:
        for name, schema in self.schemas.items():
            self.component(name, schema)
        operations: List[Tuple[str, Optional[str], Optional[str]]] = []
        for path, item in self.document.get("paths", {}).items():
            for method in METHODS:
                operation = item.get(method)
                if not isinstance(operation, dict):
                    continue
                base = pascal(method) + pascal(path)
                request_name: Optional[str] = None
                body = (operation.get("requestBody") or {}).get("content", {}).get("application/json")
                if body is not None and "schema" in body:
                    self.mode = "typeddict"
                    request_name = self.operation_alias(
                        base + "Request", self.type_of(body["schema"], base + "Request")
                    )
                self.mode = "model"
                answers = []
                for status, response in sorted(operation.get("responses", {}).items()):
                    if not str(status).startswith("2"):
                        continue
                    content = (response or {}).get("content", {}).get("application/json")
                    if content is not None and "schema" in content:
                        answers.append(self.type_of(content["schema"], base + "Response"))
                response_name = self.operation_alias(base + "Response", self.union(answers)) if answers else None
                operations.append((f"{method.upper()} {path}", request_name, response_name))
        info = self.document.get("info", {})
        text = HEADER.format(
            title=info.get("title", "?"), version=info.get("version", "?"), openapi=self.document.get("openapi", "?")
        )
        text += "\n\n\n".join(self.blocks) + "\n\n\n"
        text += "# Every operation of the document: (JSON request body type, JSON answer type), by name.\n"
        text += "OPERATIONS: Dict[str, Tuple[Optional[str], Optional[str]]] = {\n"
        for key, request_name, response_name in operations:
            text += f"    {json.dumps(key)}: ({json.dumps(request_name) if request_name else 'None'}, "
            text += f"{json.dumps(response_name) if response_name else 'None'}),\n"
        text += "}\n"
        return text


def render(document: Dict[str, Any]) -> str:
    """The text of models.py for an OpenAPI document."""
    return Generator(document).render()


def load(source: str) -> Dict[str, Any]:
    if source == "-":
        return json.load(sys.stdin)
    if re.match(r"^https?://", source):
        with urllib.request.urlopen(source, timeout=60) as response:  # noqa: S310 (a URL the caller chose)
            return json.loads(response.read().decode("utf-8"))
    return json.loads(Path(source).read_text(encoding="utf-8"))


def main(argv: List[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    text = render(load(args[0]))
    if "--check" in argv:
        current = MODELS_FILE.read_text(encoding="utf-8") if MODELS_FILE.exists() else ""
        if current != text:
            print(
                f"{MODELS_FILE} is stale: run {Path(__file__).name} against the server's /openapi.json", file=sys.stderr
            )
            return 1
        print("models.py is up to date")
        return 0
    MODELS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {MODELS_FILE} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
