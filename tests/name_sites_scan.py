"""Finds every place in the installed SGLang where a tool-call parser name is
compared, looked up, transformed or handed on (used by
tests/test_name_parity_sites.py).

Two kinds of evidence, from the AST of every SGLang module (tests excluded):

* an expression that *is* the parser name -- a variable, attribute or
  keyword named `tool_call_parser` (or containing it), or
  `config_value("tool_call_parser")` -- used in a comparison (`==`, `!=`,
  `in`, `not in`), as a subscript or `.get()` key, as the object of a method
  call (`.startswith(...)`, ...), or passed to a call (the callee may
  compare it under another name);
* a string literal equal to a builtin parser name that a NATIVE_NAMES row
  stands for, outside SGLang's detector package (those are compared or
  mapped under other variable names, e.g. deepseek-recipe's
  ADAPTER_OUTPUT_PARSERS or the template-detection rules).

A site is keyed by file, enclosing function, kind and the normalized source
of the expression -- not by line number, so unrelated edits do not churn
the list, while any new comparison or lookup does.
"""
from __future__ import annotations

import ast
import os
from collections import Counter
from typing import Iterator, List, Optional, Set, Tuple

NAME = "tool_call_parser"
CMP_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
# the detector package defines the names; the CLI's name list holds them
LITERAL_EXEMPT_DIRS = ("srt/function_call/",)
# where SGLang's serving code lives; the rest (the frontend language,
# diffusion) never sees --tool-call-parser
SCANNED_DIRS = ("srt/", "api/")


def sglang_root() -> str:
    import importlib.util

    spec = importlib.util.find_spec("sglang")
    assert spec is not None and spec.origin
    return os.path.dirname(spec.origin)


def _is_name_expr(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id.endswith(NAME)
    if isinstance(node, ast.Attribute):
        return node.attr.endswith(NAME)
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if fname in ("config_value", "getattr", "get") and isinstance(first, ast.Constant) and first.value == NAME:
            return True
        if fname == "getattr" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == NAME:
            return True
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value == NAME
    return False


def _src(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())[:160]


class _Visitor(ast.NodeVisitor):
    def __init__(self, rel: str, literals: Set[str]) -> None:
        self.rel = rel
        self.literals = literals
        self.scope: List[str] = []
        self.sites: List[Tuple[str, str, str, str]] = []
        self.literal_ok = not any(rel.startswith(d) for d in LITERAL_EXEMPT_DIRS)

    def _add(self, kind: str, node: ast.AST) -> None:
        self.sites.append((self.rel, ".".join(self.scope) or "<module>", kind, _src(node)))

    def _scoped(self, node: ast.AST) -> None:
        self.scope.append(node.name)  # type: ignore[attr-defined]
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Compare(self, node: ast.Compare) -> None:
        operands = [node.left] + list(node.comparators)
        if any(isinstance(op, CMP_OPS) for op in node.ops) and any(_is_name_expr(o) for o in operands):
            self._add("compare", node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _is_name_expr(node.slice):
            self._add("lookup", node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and _is_name_expr(func.value):
            self._add("method", node)
        elif isinstance(func, ast.Attribute) and func.attr in ("get", "pop") and node.args and _is_name_expr(node.args[0]):
            self._add("lookup", node)
        elif any(_is_name_expr(a) for a in node.args) or any(
            _is_name_expr(k.value) or (k.arg is not None and k.arg.endswith(NAME) and not isinstance(k.value, ast.Constant))
            for k in node.keywords
        ):
            if not (isinstance(func, (ast.Name, ast.Attribute)) and _callee(func) in PASSIVE_CALLEES):
                self._add("passed", node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # the name read into a variable of another name, compared later
        if _is_name_expr(node.value) and not all(_is_name_expr(t) for t in node.targets):
            self._add("alias", node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if node.value == NAME:
            self._add("key", node)  # the config key, read under another name
        elif self.literal_ok and isinstance(node.value, str) and node.value in self.literals:
            self._add("literal", node)


def _callee(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id  # type: ignore[attr-defined]


# calls that only log or format the name
PASSIVE_CALLEES = frozenset({"info", "debug", "warning", "error", "exception", "print", "str", "repr", "format"})


def iter_modules(root: str) -> Iterator[Tuple[str, str]]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("test", "tests", "__pycache__"))
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rel.startswith(SCANNED_DIRS):
                    yield rel, path


def scan(literals: Set[str], root: Optional[str] = None) -> Counter:
    root = root or sglang_root()
    found: Counter = Counter()
    for rel, path in iter_modules(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if NAME not in text and not any(q + x + q in text for x in literals for q in "'\""):
            continue
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError:
            continue
        v = _Visitor(rel, literals)
        v.visit(tree)
        found.update(v.sites)
    return found


def format_site(site: Tuple[str, str, str, str]) -> str:
    return " | ".join(site)
