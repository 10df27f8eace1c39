#!/usr/bin/env python3
"""Writes the package's models and route methods from crossbook's OpenAPI document.

    python3 scripts/generate.py OPENAPI_JSON           # rewrites src/crossbook/models.py and _routes.py
    python3 scripts/generate.py OPENAPI_JSON --check   # exits 1 when either differs from what it would write

OPENAPI_JSON is a file holding `/openapi.json` of a running service (`-` reads standard input). Standard library
only, and the output depends on the document alone, so the check is exact: the service's tests run it against
the document the code generates, and a route or a field added without regenerating fails them.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent / "src" / "crossbook"
HEADER = '"""{what}\n\nGenerated from crossbook\'s /openapi.json by scripts/generate.py: do not edit.\n"""\n'

# Method names, where the operation's own id would not say what the route is once every route is on one client.
NAMES = {
    "docs": "docs_page",
    "openapi_json": "openapi",
    "current": "arbitrage_current",
    "difference": "arbitrage_difference",
    "history": "arbitrage_history",
    "pairs": "arbitrage_pairs",
    "replay_route": "replay_messages",
    "list_deliveries": "webhook_deliveries",
    "public_events": "whale_public_events",
    "public_feed": "whale_public_feed",
    "event_trades": "whale_event_trades",
    "event_stats": "whale_event_stats",
    "list_events": "whale_watched_events",
    "add_event": "watch_event",
    "add_event_by_url": "watch_event_by_url",
    "delete_event": "unwatch_event",
    "delete_event_by_ticker": "unwatch_event_by_ticker",
    "patch_event": "update_watched_event",
    "user_feed": "whale_feed",
    "user_stats": "whale_stats",
    "user_markets": "whale_markets",
    "market_stats": "whale_market_stats",
    "market_trades": "whale_market_trades",
}
# The WebSocket: `crossbook.Stream` follows it, with resumption.
SKIP = {"stream"}


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[1]


def first_paragraph(text: Optional[str]) -> str:
    if not text:
        return ""
    return " ".join(text.strip().split("\n\n")[0].split())


def wrap(text: str, indent: str, width: int = 110) -> List[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(indent) + len(line) + 1 + len(w) > width:
            lines.append(indent + line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        lines.append(indent + line)
    return lines


class Types:
    """Python type expressions for schemas, for answers (`answer`) or for arguments (what a caller may pass)."""

    def __init__(self, schemas: Dict[str, Any]) -> None:
        self.schemas = schemas

    def expr(self, s: Dict[str, Any], argument: bool = False) -> str:
        if "$ref" in s:
            name = ref_name(s["$ref"])
            target = self.schemas.get(name, {})
            if argument and "enum" not in target and target.get("type") == "string":
                return "str"
            return name
        if "allOf" in s and len(s["allOf"]) == 1:
            return self.expr(s["allOf"][0], argument)
        for union in ("oneOf", "anyOf"):
            if union in s:
                return self.union([self.expr(x, argument) for x in s[union]])
        if "enum" in s:
            return "Literal[" + ", ".join(json.dumps(v) for v in s["enum"] if v is not None) + "]"
        t = s.get("type")
        if isinstance(t, list):
            inner = [x for x in t if x != "null"]
            base = self.expr({**s, "type": inner[0]} if len(inner) == 1 else {**s, "type": None}, argument)
            return f"Optional[{base}]" if "null" in t else base
        if t == "array":
            return f"List[{self.expr(s.get('items', {}), argument)}]"
        if t == "object":
            extra = s.get("additionalProperties")
            if isinstance(extra, dict):
                return f"Dict[str, {self.expr(extra, argument)}]"
            return "Dict[str, Any]"
        if t == "string":
            fmt = s.get("format")
            if argument and fmt == "date-time":
                return "TimeArg"
            if argument and fmt == "date":
                return "DateArg"
            return "bytes" if fmt == "binary" else "str"
        if t == "integer":
            if argument and s.get("minimum") == 978307200000:
                return "TimeArg"
            return "int"
        if t == "number":
            return "NumberArg" if argument else "float"
        if t == "boolean":
            return "bool"
        if t == "null":
            return "None"
        return "Any"

    @staticmethod
    def union(parts: List[str]) -> str:
        seen: List[str] = []
        for p in parts:
            if p not in seen:
                seen.append(p)
        if "TimeArg" in seen:
            seen = [p for p in seen if p not in ("DateArg", "str", "int")]
        nullable = "None" in seen
        seen = [p for p in seen if p != "None"]
        one = seen[0] if len(seen) == 1 else "Union[" + ", ".join(seen) + "]"
        return f"Optional[{one}]" if nullable else one


def models(doc: Dict[str, Any]) -> str:
    schemas = doc["components"]["schemas"]
    types = Types(schemas)
    out = [HEADER.format(what="The API's objects, as typed dictionaries: what each route answers and each body takes.")]
    out.append("from __future__ import annotations\n")
    out.append("from typing import Any, Dict, List, Literal, Optional, TypedDict, Union\n")
    aliases: List[str] = []
    late: List[str] = []
    classes: Dict[str, Tuple[List[str], List[str]]] = {}

    def fields(obj: Dict[str, Any]) -> Tuple[List[Tuple[str, str, str]], List[Tuple[str, str, str]]]:
        required = set(obj.get("required", []))
        req, opt = [], []
        for name, prop in sorted(obj.get("properties", {}).items()):
            row = (name, types.expr(prop), first_paragraph(prop.get("description")))
            (req if name in required else opt).append(row)
        return req, opt

    def body(req: List[Tuple[str, str, str]], indent: str = "    ") -> List[str]:
        lines = []
        for name, t, doc_ in req:
            if doc_:
                lines += wrap(doc_, indent + "#: ")
            lines.append(f"{indent}{name}: {t}")
        return lines

    for name in sorted(schemas):
        s = schemas[name]
        desc = first_paragraph(s.get("description"))
        if "allOf" in s:
            bases = [ref_name(x["$ref"]) for x in s["allOf"] if "$ref" in x]
            req: List[Tuple[str, str, str]] = []
            opt: List[Tuple[str, str, str]] = []
            for part in s["allOf"]:
                if "$ref" not in part:
                    r, o = fields(part)
                    req += r
                    opt += o
            classes[name] = (bases, class_text(name, bases, desc, body(req), body(opt)))
        elif s.get("type") == "object" and "properties" in s:
            req, opt = fields(s)
            if any(not n.isidentifier() or keyword.iskeyword(n) for n, _, _ in req + opt):
                # A field named like a Python keyword (`from`) needs the functional form.
                classes[name] = ([], functional_text(name, desc, req, opt))
            else:
                classes[name] = ([], class_text(name, [], desc, body(req), body(opt)))
        else:
            expr = types.expr(s)
            line = f"{name} = {expr}"
            if len(line) > 110 and expr.startswith("Literal["):
                items = expr[len("Literal[") : -1].split(", ")
                line = f"{name} = Literal[\n" + "".join(f"    {i},\n" for i in items) + "]"
            text = (wrap(desc, "#: ") if desc else []) + [line]
            # An alias of classes (a oneOf) comes after them; the rest are enums and scalars the classes name.
            (late if any(r in classes_of(schemas) for r in re.findall(r"\w+", expr)) else aliases).extend(text)
    out.append("\n".join(aliases) + "\n")
    # Bases first: a class statement needs its bases defined.
    done: List[str] = []

    def emit(n: str) -> None:
        if n in done or n not in classes:
            return
        for b in classes[n][0]:
            emit(b)
        done.append(n)
        out.append("\n" + "\n".join(classes[n][1]) + "\n")

    for n in sorted(classes):
        emit(n)
    if late:
        out.append("\n" + "\n".join(late) + "\n")
    out.append("\n__all__ = " + list_literal(sorted(schemas)) + "\n")
    return "\n".join(out)


def classes_of(schemas: Dict[str, Any]) -> set:
    return {n for n, s in schemas.items() if "allOf" in s or (s.get("type") == "object" and "properties" in s)}


def docstring(desc: str, indent: str = "    ") -> List[str]:
    one = f'{indent}"""{desc}"""'
    if len(one) <= 110:
        return [one]
    return [f'{indent}"""'] + wrap(desc, indent) + [f'{indent}"""']


def class_text(name: str, bases: List[str], desc: str, req: List[str], opt: List[str]) -> List[str]:
    lines: List[str] = []
    parents = ", ".join(bases) if bases else "TypedDict"
    doc_lines = docstring(desc) if desc else []
    if opt:
        # Fields that may be left out live in a total=False part, so the required ones stay required.
        lines += [f"class _{name}Optional({parents}, total=False):"] + (opt or ["    pass"]) + ["", ""]
        parents = f"_{name}Optional"
    lines.append(f"class {name}({parents}):")
    lines += doc_lines
    lines += req
    if not doc_lines and not req:
        lines.append("    pass")
    return lines


def functional_text(
    name: str, desc: str, req: List[Tuple[str, str, str]], opt: List[Tuple[str, str, str]]
) -> List[str]:
    lines: List[str] = []
    parts = []
    for suffix, rows, total in (("Required", req, True), ("Optional", opt, False)):
        if not rows:
            continue
        part = f"_{name}{suffix}"
        parts.append(part)
        lines.append(f"{part} = TypedDict(")
        lines.append(f'    "{part}",')
        lines.append("    {")
        lines += [f'        "{n}": "{t}",' for n, t, _ in rows]
        lines.append("    },")
        if not total:
            lines.append("    total=False,")
        lines += [")", "", ""]
    lines.append(f"class {name}({', '.join(parts)}):")
    lines += docstring(desc) if desc else ["    pass"]
    return lines


def list_literal(names: List[str]) -> str:
    rows, line = [], "["
    for n in names:
        item = json.dumps(n) + ", "
        if len(line) + len(item) > 110:
            rows.append(line.rstrip())
            line = "    "
        line += item
    rows.append(line.rstrip().rstrip(",") + "]")
    return "\n".join(rows)


def py_name(name: str) -> str:
    n = re.sub(r"\W", "_", name)
    return n + "_" if keyword.iskeyword(n) else n


def kind_of(types: Types, op: Dict[str, Any]) -> Tuple[str, str]:
    """How the answer is read (json, ndjson, text, bytes, none) and its Python type."""
    for status in sorted(op["responses"]):
        if not status.startswith("2"):
            continue
        content = op["responses"][status].get("content", {})
        if not content:
            return "none", "None"
        if "application/json" in content:
            schema = content["application/json"].get("schema")
            return "json", "Any" if schema is None else types.expr(schema)
        if "application/x-ndjson" in content:
            return "ndjson", "Dict[str, Any]"
        if any(c.startswith("text/") for c in content):
            return "text", "str"
        return "bytes", "bytes"
    return "none", "None"


def routes(doc: Dict[str, Any]) -> str:
    types = Types(doc["components"]["schemas"])
    ops = []
    for path, items in doc["paths"].items():
        for method, op in items.items():
            if method not in ("get", "post", "put", "patch", "delete") or op["operationId"] in SKIP:
                continue
            ops.append((NAMES.get(op["operationId"], op["operationId"]), method.upper(), path, op))
    ops.sort()
    out = [HEADER.format(what="One method per route of the API, for the synchronous and the asynchronous client.")]
    out.append("from __future__ import annotations\n")
    out.append("from typing import Any, AsyncIterator, Dict, Iterator, List, Literal, Optional, Union\n")
    out.append("from ._http import path_value")
    out.append("from ._types import DateArg, NumberArg, TimeArg")
    imports_at = len(out)
    paged = []
    for sync in (True, False):
        cls = "SyncRoutes" if sync else "AsyncRoutes"
        out.append(f"\nclass {cls}:")
        out.append(f'    """Every route of the API as a method{"" if sync else " to await"}."""\n')
        out.append("    _transport: Any")
        for name, method, path, op in ops:
            out += method_text(types, name, method, path, op, sync)
            if sync:
                p = paging(doc, op)
                if p:
                    paged.append(f"    {json.dumps(name)}: {p},")
    used = sorted(n for n in doc["components"]["schemas"] if re.search(rf"\b{n}\b", "\n".join(out[imports_at:])))
    out.insert(imports_at, "from .models import (\n" + "".join(f"    {n},\n" for n in used) + ")\n")
    out.append(
        "\n#: Paged routes: how each pages (`key`: pagination_key, `offset`: limit and offset) and the answer's list."
    )
    out.append("PAGING: Dict[str, Any] = {")
    out += paged
    out.append("}\n")
    return "\n".join(out)


def paging(doc: Dict[str, Any], op: Dict[str, Any]) -> Optional[str]:
    names = {p["name"] for p in op.get("parameters", [])}
    style = "key" if "pagination_key" in names else "offset" if "offset" in names else None
    if style is None:
        return None
    schema = op["responses"].get("200", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if schema.get("type") == "array":
        return f'("{style}", None)'
    target = doc["components"]["schemas"][ref_name(schema["$ref"])] if "$ref" in schema else schema
    props: Dict[str, Any] = {}
    for part in target.get("allOf", [target]):
        part = doc["components"]["schemas"][ref_name(part["$ref"])] if "$ref" in part else part
        props.update(part.get("properties", {}))
    arrays = sorted(k for k, v in props.items() if v.get("type") == "array")
    return f'("{style}", {json.dumps(arrays[0]) if len(arrays) == 1 else None})'


def method_text(types: Types, name: str, method: str, path: str, op: Dict[str, Any], sync: bool) -> List[str]:
    params = op.get("parameters", [])
    positional, keywords, query, path_args = [], [], [], []
    for p in params:
        arg = py_name(p["name"])
        t = types.expr(p.get("schema", {}), argument=True)
        if p["in"] == "path":
            positional.append(f"{arg}: {t}")
            path_args.append((p["name"], arg))
        elif p["in"] == "query":
            if t.startswith("List["):
                inner = t[5:-1]
                t = f"Union[{inner}, List[{inner}]]"
            if p.get("required"):
                keywords.insert(sum(1 for k in keywords if "=" not in k), f"{arg}: {t}")
            else:
                keywords.append(f"{arg}: Optional[{t}] = None")
            query.append((p["name"], arg))
    body = op.get("requestBody")
    if body:
        schema = body["content"]["application/json"]["schema"]
        bt = types.expr(schema)
        keywords.insert(0, f"body: {bt}" if body.get("required") else f"body: Optional[{bt}] = None")
    kind, ret = kind_of(types, op)
    if kind == "ndjson":
        ret = f"Iterator[{ret}]" if sync else f"AsyncIterator[{ret}]"
    args = ["self"] + positional + (["*"] + keywords if keywords else [])
    url = path
    for raw, arg in path_args:
        url = url.replace("{" + raw + "}", "{path_value(" + arg + ")}")
    url_expr = f'f"{url}"' if path_args else json.dumps(url)
    q = "{" + ", ".join(f"{json.dumps(raw)}: {arg}" for raw, arg in query) + "}"
    one_line = f"        return {'await ' if not sync and kind != 'ndjson' else ''}self._transport.call({method!r}, {url_expr}, {q}, None, {kind!r})"
    if len(one_line) > 110:
        q = "{\n" + "".join(f"                {json.dumps(raw)}: {arg},\n" for raw, arg in query) + "            }"
    call = f'self._transport.{"lines" if kind == "ndjson" else "call"}("{method}", {url_expr}, {q}, {"body" if body else "None"}'
    call += ")" if kind == "ndjson" else f', "{kind}")'
    is_async = not sync and kind != "ndjson"
    head = f"    {'async ' if is_async else ''}def {name}("
    sig = head + ", ".join(args) + f") -> {ret}:"
    lines = [""]
    if len(sig) <= 120:
        lines.append(sig)
    else:
        lines.append(head)
        lines += [f"        {a}," for a in args]
        lines.append(f"    ) -> {ret}:")
    summary = first_paragraph(op.get("summary") or op.get("description")) or name
    lines.append('        """' + summary.replace('"""', "'''").rstrip(".") + ".")
    lines.append("")
    lines.append(
        f"        `{method} {path}`" + (f" (also at `{op['x-also-at']}`)" if op.get("x-also-at") else "") + "."
    )
    lines.append('        """')
    if "\n" in q:
        lines.append(
            f"        return {'await ' if is_async else ''}self._transport.{'lines' if kind == 'ndjson' else 'call'}("
        )
        lines.append(f'            "{method}",')
        lines.append(f"            {url_expr},")
        lines.append(f"            {q},")
        lines.append(f"            {'body' if body else 'None'},")
        if kind != "ndjson":
            lines.append(f'            "{kind}",')
        lines.append("        )")
    else:
        lines.append(f"        return {'await ' if is_async else ''}{call}")
    return lines


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    check = "--check" in sys.argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    text = sys.stdin.read() if args[0] == "-" else Path(args[0]).read_text()
    doc = json.loads(text)
    wanted = {ROOT / "models.py": models(doc), ROOT / "_routes.py": routes(doc)}
    stale = [p for p, t in wanted.items() if not p.exists() or p.read_text() != t]
    if check:
        for p in stale:
            print(f"{p.name} is not what /openapi.json generates: run scripts/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for p, t in wanted.items():
        p.write_text(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
