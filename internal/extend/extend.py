# Describes the top-level statements of Python sources for the extend
# strategy (internal/extend). Reads a JSON list of sources on stdin and
# writes a JSON list with, for each source, either {"error": "..."} or
# {"body": [...]}.
# Line numbers are 1-based and inclusive; "start" includes decorators.
import ast
import json
import sys


def names_of(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    out = []
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.append(n.id)
    return out


def start_of(node):
    lines = [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]
    return min(lines)


def is_docstring(node):
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def describe(node, first):
    item = {
        "kind": type(node).__name__,
        "names": names_of(node),
        "start": start_of(node),
        "end": node.end_lineno,
        "docstring": first and is_docstring(node),
    }
    if isinstance(node, ast.ClassDef):
        item["members"] = [describe(m, i == 0) for i, m in enumerate(node.body)]
    return item


def analyse(src):
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        return {"error": "line %s: %s" % (e.lineno, e.msg)}
    return {"body": [describe(n, i == 0) for i, n in enumerate(tree.body)]}


json.dump([analyse(s) for s in json.load(sys.stdin)], sys.stdout)
