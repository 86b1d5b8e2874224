"""MkDocs hook: the reference pages, generated from the code at build time.

A page that holds one of these markers gets it replaced by Markdown made
from the code it describes, so the reference cannot drift from it:

    <!-- nadird:commands -->  every command and option of the argparse parser
                              (build_parser in nadird.cli.main, or nadird.cli)
    <!-- nadird:config -->    every configuration key, with its type and default,
                              from the config dataclasses (nadird.config.Config)
    <!-- nadird:api -->       every route of the master's API, from its
                              openapi.yaml (found under the nadird package)

A line ending in `<!-- github-only -->` is dropped from the built page: it
tells readers of the Markdown source that the text is generated.

The hook only reads: it imports nadird, reads source files and the OpenAPI
file; it opens no socket, starts no process and writes nothing. When a part
cannot be generated (a module moved, a file not found) the page says so and a
warning is logged, which fails `mkdocs build --strict`.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import io
import json
import logging
import sys
import textwrap
import tokenize
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("mkdocs.hooks.reference")

MARKERS = {
    "commands": "<!-- nadird:commands -->",
    "config": "<!-- nadird:config -->",
    "api": "<!-- nadird:api -->",
}
GITHUB_ONLY = "<!-- github-only -->"
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# Defaults computed when the process starts: their value at build time would
# describe the machine that built the site.
COMPUTED_DEFAULTS = {"node": "host name and process id (`host-pid`)"}
# Keys the loader reads with a parser of their own, not field by field from
# their dataclass: the dataclass would describe the parsed value, not the file.
OWN_READER = {
    "seeds": "each a URL, or a request as a mapping: read by the seeds reader, in the "
    "shape described in [Requests](../jobs/requests.md)",
}

_cache: dict[str, str] = {}


# ---------------------------------------------------------------- MkDocs events


def on_config(config: Any, **kwargs: Any) -> Any:
    """Make the checkout's nadird importable (the one the docs describe)."""
    sys.dont_write_bytecode = True  # importing nadird must not write into the checkout
    root = str(Path(config.config_file_path).resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    _cache.clear()
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    # Lines meant for readers of the Markdown source (on GitHub), where the
    # markers below stay empty: the built site has the generated text instead.
    markdown = "\n".join(
        line for line in markdown.split("\n") if not line.rstrip().endswith(GITHUB_ONLY)
    )
    makers: dict[str, Callable[[], str]] = {
        "commands": commands_markdown,
        "config": config_markdown,
        "api": api_markdown,
    }
    for name, marker in MARKERS.items():
        if marker not in markdown:
            continue
        if name not in _cache:
            try:
                _cache[name] = makers[name]()
            except Exception as exc:  # a moved module must not break the whole build
                log.warning("%s: could not generate the %s reference: %r", page.file.src_path, name, exc)
                _cache[name] = (
                    f'!!! failure "Not generated"\n\n    The {name} reference could not be '
                    f"generated from the code at build time: `{_cell(repr(exc))}`.\n"
                )
        markdown = markdown.replace(marker, _cache[name])
    return markdown


# ---------------------------------------------------------------- helpers


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- commands


def _cli_module() -> types.ModuleType:
    """nadird.cli.main (the cli package), else the older nadird.cli module."""
    errors = []
    for name in ("nadird.cli.main", "nadird.cli"):
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            errors.append(f"{name}: {exc}")
            continue
        if callable(getattr(module, "build_parser", None)):
            return module
        errors.append(f"{name}: no build_parser")
    raise ImportError("; ".join(errors))


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=96, max_help_position=40)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _help_text(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if text == argparse.SUPPRESS:
        return ""
    if "%" in text:
        values = dict(vars(action), prog=prog)
        for key, value in list(values.items()):
            if isinstance(value, list):
                values[key] = ", ".join(map(str, value))
        try:
            text = text % values
        except (KeyError, TypeError, ValueError):
            pass
    return text


def _argument(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None and action.metavar is None:
        return " \\| ".join(_code(choice) for choice in action.choices)
    metavar = action.metavar or (action.dest if not action.option_strings else action.dest.upper())
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    if action.nargs in ("+", "*"):
        metavar = f"{metavar}..."
    return _code(metavar)


def _default(action: argparse.Action) -> str:
    default = action.default
    if default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return _code(default)


def _action_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        names = action.option_strings or [action.metavar or action.dest]
        name = ", ".join(_code(n) for n in names)
        what = _cell(_help_text(action, parser.prog))
        notes = []
        if action.required and action.option_strings:
            notes.append("required")
        if isinstance(action, argparse._AppendAction):
            notes.append("repeatable")
        if notes:
            what = f"{what} ({', '.join(notes)})" if what else f"({', '.join(notes)})"
        rows.append([name, _argument(action), _default(action), what])
    return rows


def commands_markdown() -> str:
    module = _cli_module()
    parser: argparse.ArgumentParser = module.build_parser()
    out = [
        f"Generated from `{module.__name__}.build_parser()` when this site was built.\n",
        "### `nadird` (the daemon roles, and what every command takes)\n",
        f"```\n{_usage(parser)}\n```\n",
        _table(["option", "argument", "default", "what"], _action_rows(parser)),
    ]
    sub = next(
        (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None
    )
    if sub is None:
        return "\n".join(out)
    helps = {choice.dest: choice.help or "" for choice in sub._choices_actions}
    summary = []
    seen: set[int] = set()
    commands = []
    for name, command in sub.choices.items():
        if id(command) in seen:
            continue
        seen.add(id(command))
        commands.append((name, command))
        summary.append([f"[`{name}`](#nadird-{name})", _cell(helps.get(name, ""))])
    out.insert(1, _table(["command", "what it does"], summary))
    for name, command in commands:
        out.append(f"### `nadird {name}`\n")
        text = (command.description or helps.get(name) or "").strip()
        if text:
            out.append(f"{text}\n")
        out.append(f"```\n{_usage(command)}\n```\n")
        rows = _action_rows(command)
        if rows:
            out.append(_table(["argument", "value", "default", "what"], rows))
    return "\n".join(out)


# ---------------------------------------------------------------- configuration


def _type_name(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return "null"
    if tp is Any:
        return "any"
    if origin is typing.Literal:
        return " \\| ".join(_yaml(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(arg) for arg in args)
    if origin in (list, tuple, set, frozenset):
        inner = " \\| ".join(_type_name(arg) for arg in args if arg is not Ellipsis) or "any"
        return f"list of ({inner})" if "\\|" in inner else f"list of {inner}"
    if origin is dict:
        key, value = (args + (Any, Any))[:2]
        return f"mapping of {_type_name(key)} to {_type_name(value)}"
    if dataclasses.is_dataclass(tp):
        return "mapping"
    names = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
    name = getattr(tp, "__name__", None) or str(tp)
    return names.get(name, name)


def _yaml(value: Any, key: str = "") -> str:
    """A default as it would be written in the YAML file."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = f"{value:,}" if abs(value) >= 10_000 else str(value)
        if key.endswith("_bytes") and value >= 1024 and value % 1024 == 0:
            for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
                if value % size == 0:
                    return f"{value} ({value // size} {unit})"
        return text
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        plain = value and value.strip() == value and not any(c in value for c in ":#{}[],&*!|>'\"%@`")
        return value if plain else json.dumps(value, ensure_ascii=False)
    if dataclasses.is_dataclass(value):
        return "{...}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return str(value)


def _field_comments(cls: type) -> dict[str, str]:
    """The comments written above a field and on its line, by field name."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                text = token.string.lstrip("#").strip()
                if text.startswith("---") and text.endswith("---"):
                    text = ""  # a banner over a group of fields, not about one
                comments[token.start[0]] = text
        classdef = ast.parse(source).body[0]
    except (SyntaxError, tokenize.TokenError, IndexError):
        return {}
    found = {}
    for node in getattr(classdef, "body", []):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above = []
        line = node.lineno - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            above.insert(0, comments.get(line, ""))
            line -= 1
        inline = [
            comments[n]
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)
            if n in comments and not lines[n - 1].strip().startswith("#")
        ]
        text = " ".join(part for part in above + inline if part)
        if text:
            found[node.target.id] = text
    return found


def _dataclasses_in(tp: Any) -> list[tuple[str, type]]:
    """Sections nested in a field's type: ("", C), (".NAME", C) for a mapping
    of them, ("[]", C) for a list of them."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return [("", tp)]
    if origin in (typing.Union, types.UnionType):
        return [found for arg in args for found in _dataclasses_in(arg)]
    if origin is dict and len(args) == 2:
        return [(".NAME" + suffix, cls) for suffix, cls in _dataclasses_in(args[1])]
    if origin in (list, tuple, set, frozenset):
        return [
            ("[]" + suffix, cls)
            for arg in args
            if arg is not Ellipsis
            for suffix, cls in _dataclasses_in(arg)
        ]
    return []


def _default_of(field: dataclasses.Field[Any], key: str) -> str:
    if key in COMPUTED_DEFAULTS:
        return COMPUTED_DEFAULTS[key]
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "*required*"
    if dataclasses.is_dataclass(value):
        return "*section*"
    return _code(_yaml(value, key))


def _config_rows(cls: type, prefix: str, rows: list[list[str]], depth: int = 0) -> None:
    if depth > 8:
        return
    hints = typing.get_type_hints(cls)
    comments = _field_comments(cls)
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        key = f"{prefix}{field.name}"
        tp = hints.get(field.name, field.type)
        nested = _dataclasses_in(tp)
        rows.append([_code(key), _type_name(tp), _default_of(field, key), _cell(comments.get(field.name, ""))])
        for suffix, inner in nested:
            _config_rows(inner, f"{key}{suffix}.", rows, depth + 1)


def config_markdown() -> str:
    config_module = importlib.import_module("nadird.config")
    root = config_module.Config
    hints = typing.get_type_hints(root)
    header = ["key", "type", "default", "what the code says"]
    top: list[list[str]] = []
    sections = []
    comments = _field_comments(root)
    for field in dataclasses.fields(root):
        tp = hints.get(field.name, field.type)
        nested = [] if field.name in OWN_READER else _dataclasses_in(tp)
        if not nested:
            what = OWN_READER.get(field.name, _cell(comments.get(field.name, "")))
            top.append([_code(field.name), _type_name(tp), _default_of(field, field.name), what])
            continue
        rows: list[list[str]] = []
        if typing.get_origin(tp) is not None or not dataclasses.is_dataclass(tp):
            # a mapping or list of sections: its own row says what it holds
            rows.append([_code(field.name), _type_name(tp), _default_of(field, field.name), _cell(comments.get(field.name, ""))])
        for suffix, inner in nested:
            _config_rows(inner, f"{field.name}{suffix}.", rows)
        doc = ""
        for _, inner in nested:
            own = inspect.getdoc(inner)
            if own and own != inspect.getdoc(object) and not own.startswith(f"{inner.__name__}("):
                doc = own.split("\n\n")[0].replace("\n", " ")
                break
        sections.append((field.name, doc, rows))
    out = [
        f"Generated from `{config_module.__name__}.{root.__name__}` and the dataclasses of its "
        "sections when this site was built: every key a config file may hold, nested "
        "sections as dotted keys. `NAME` stands for a name you choose (a job, a channel), "
        "`[]` for each item of a list. *required*: the key has no default and must be given "
        "when its section is. The last column is the comment next to the field in the code.\n",
        "### Top-level keys\n",
        _table(header, top),
    ]
    for name, doc, rows in sections:
        out.append(f"### `{name}`\n")
        if doc:
            out.append(f"{doc}\n")
        out.append(_table(header, rows))
    return "\n".join(out)


# ---------------------------------------------------------------- API


def _openapi_file() -> Path:
    """openapi.yaml inside the nadird package, wherever it was moved to."""
    from importlib import resources

    package = resources.files("nadird")
    base = Path(str(package))
    found = sorted(
        path for path in base.rglob("openapi.yaml") if "testing" not in path.relative_to(base).parts
    )
    if not found:
        raise FileNotFoundError(f"no openapi.yaml under {base}")
    if len(found) > 1:
        log.info("several openapi.yaml under %s, using %s", base, found[0])
    return found[0]


def _resolve(spec: dict[str, Any], node: Any) -> Any:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 10:
        target: Any = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node, seen = target, seen + 1
    return node


def _schema_type(spec: dict[str, Any], schema: Any) -> str:
    if isinstance(schema, dict) and "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    schema = _resolve(spec, schema)
    if not isinstance(schema, dict):
        return ""
    if "oneOf" in schema or "anyOf" in schema:
        return " or ".join(_schema_type(spec, s) for s in schema.get("oneOf", schema.get("anyOf")))
    kind = schema.get("type", "object" if "properties" in schema else "")
    if kind == "array":
        return f"array of {_schema_type(spec, schema.get('items', {}))}"
    if "enum" in schema:
        return f"{kind} (" + ", ".join(map(str, schema["enum"])) + ")"
    return str(kind)


def _properties(spec: dict[str, Any], schema: Any) -> list[list[str]]:
    schema = _resolve(spec, schema)
    if not isinstance(schema, dict):
        return []
    required = set(schema.get("required", []))
    rows = []
    for name, prop in (schema.get("properties") or {}).items():
        description = _resolve(spec, prop).get("description", "") if isinstance(_resolve(spec, prop), dict) else ""
        rows.append(
            [
                _code(name) + (" (required)" if name in required else ""),
                _cell(_schema_type(spec, prop)),
                _cell(description),
            ]
        )
    return rows


def _auth(spec: dict[str, Any], operation: dict[str, Any]) -> str:
    security = operation.get("security", spec.get("security", []))
    names = [name for requirement in security for name in requirement]
    return " or ".join(f"`{name}`" for name in names) if names else "none"


def api_markdown() -> str:
    path = _openapi_file()
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    info = spec.get("info", {})
    package_root = Path(str(importlib.import_module("nadird").__file__)).parent.parent
    try:
        shown = path.relative_to(package_root)
    except ValueError:
        shown = path.name
    out = [
        f"Generated from `{shown}` (OpenAPI {spec.get('openapi', '?')}, "
        f"\"{info.get('title', '')}\", version {info.get('version', '?')}) when this site was "
        "built. The running master serves the same file at `GET /api/openapi.yaml`.\n",
    ]
    if info.get("description"):
        out.append(" ".join(info["description"].split()) + "\n")
    schemes = (spec.get("components") or {}).get("securitySchemes") or {}
    if schemes:
        rows = [
            [_code(name), _cell(s.get("type", "") + (f" ({s['scheme']})" if "scheme" in s else "")
                                + (f", {s['in']} `{s['name']}`" if "in" in s else "")),
             _cell(s.get("description", ""))]
            for name, s in schemes.items()
        ]
        out += ["### Authentication\n", _table(["scheme", "kind", "what"], rows)]
    operations = []
    for route, item in (spec.get("paths") or {}).items():
        for method in HTTP_METHODS:
            if method in (item or {}):
                operations.append((route, method, item[method] or {}))
    groups = [
        ("API", [op for op in operations if "console" not in op[2].get("tags", [])]),
        ("Web console", [op for op in operations if "console" in op[2].get("tags", [])]),
    ]
    for title, ops in groups:
        if not ops:
            continue
        out.append(f"### {title} routes\n")
        out.append(
            _table(
                ["route", "summary", "auth", "answers"],
                [
                    [
                        f"`{method.upper()} {_cell(route)}`",
                        _cell(op.get("summary", "")),
                        _auth(spec, op),
                        ", ".join(f"`{code}`" for code in op.get("responses", {})),
                    ]
                    for route, method, op in ops
                ],
            )
        )
    out.append("### Routes in detail\n")
    for route, method, op in operations:
        out.append(f"#### `{method.upper()} {route}`\n")
        if op.get("summary"):
            out.append(f"{op['summary']}.\n" if not op["summary"].endswith(".") else f"{op['summary']}\n")
        if op.get("description"):
            out.append(" ".join(op["description"].split()) + "\n")
        out.append(f"Authentication: {_auth(spec, op)}.\n")
        params = [_resolve(spec, p) for p in op.get("parameters", [])]
        if params:
            out.append(
                _table(
                    ["parameter", "in", "type", "what"],
                    [
                        [_code(p.get("name", "")), p.get("in", ""), _cell(_schema_type(spec, p.get("schema", {}))),
                         _cell(p.get("description", ""))]
                        for p in params
                    ],
                )
            )
        body = _resolve(spec, op.get("requestBody"))
        if isinstance(body, dict) and body:
            for media, content in (body.get("content") or {}).items():
                rows = _properties(spec, (content or {}).get("schema", {}))
                line = f"Request body: `{media}`" + (" (required)" if body.get("required") else "")
                if body.get("description"):
                    line += ": " + " ".join(body["description"].split())
                out.append(line + "\n")
                if rows:
                    out.append(_table(["field", "type", "what"], rows))
        answers = []
        fields: list[list[str]] = []
        for code, response in (op.get("responses") or {}).items():
            response = _resolve(spec, response) or {}
            answers.append([f"`{code}`", _cell(response.get("description", ""))])
            if str(code).startswith("2") and not fields:
                content = (response.get("content") or {}).get("application/json") or {}
                fields = _properties(spec, content.get("schema", {}))
        if answers:
            out.append(_table(["status", "meaning"], answers))
        if fields:
            out.append("Answer (JSON):\n")
            out.append(_table(["field", "type", "what"], fields))
    return "\n".join(out)
